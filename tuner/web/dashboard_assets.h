// The dashboard's page: the files of tuner/dashboard/, embedded into tune-daemon when it is
// built (cmake/EmbedFiles.cmake), so that an installed daemon serves them with no file beside it.
#pragma once

#include <span>
#include <string_view>

namespace tune::tuner {

struct EmbeddedFile {
  std::string_view path;  // "/index.html"
  std::string_view body;
};

/// Every file of tuner/dashboard/ (generated at build time).
std::span<const EmbeddedFile> DashboardFiles();

/// The file served at `path` ("/" is "/index.html"), or null when there is none.
const EmbeddedFile* FindDashboardFile(std::string_view path);

/// The Content-Type of a file by its extension (html, js, css, svg; else octet-stream).
std::string_view ContentTypeOf(std::string_view path);

}  // namespace tune::tuner
