#include "tuner/web/dashboard_assets.h"

namespace tune::tuner {

const EmbeddedFile* FindDashboardFile(std::string_view path) {
  if (path == "/") {
    path = "/index.html";
  }
  for (const EmbeddedFile& file : DashboardFiles()) {
    if (file.path == path) {
      return &file;
    }
  }
  return nullptr;
}

std::string_view ContentTypeOf(std::string_view path) {
  if (path.ends_with(".html")) {
    return "text/html; charset=utf-8";
  }
  if (path.ends_with(".js")) {
    return "text/javascript; charset=utf-8";
  }
  if (path.ends_with(".css")) {
    return "text/css; charset=utf-8";
  }
  if (path.ends_with(".svg")) {
    return "image/svg+xml";
  }
  return "application/octet-stream";
}

}  // namespace tune::tuner
