#include "tuner/web/http_server.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "httplib.h"
#include "tuner/web/dashboard_assets.h"
#include "tuner/web/http_api.h"

namespace tune::tuner {
namespace {

// A kept-alive connection holds a pool thread while idle: let it go soon.
constexpr time_t kKeepAliveSecs = 2;
constexpr time_t kReadTimeoutSecs = 5;

constexpr char kApiPaths[] =
    "/api/health, /api/jobs, /api/jobs/{id}, /api/jobs/{id}/records, /api/workers, "
    "/api/quarantine, /api/fingerprints, /metrics";

struct HostPort {
  std::string host;
  int port = 0;
};

// "127.0.0.1:8080", "[::1]:0", ":8080" (every address).
absl::StatusOr<HostPort> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  const std::optional<int64_t> port =
      colon == std::string::npos ? std::nullopt : ParseInt(listen.substr(colon + 1));
  if (!port || *port < 0 || *port > 65535) {
    return absl::UnavailableError(
        StrCat("cannot serve HTTP on '", listen,
               "': expected HOST:PORT, e.g. 127.0.0.1:8080 (port 0 picks one)"));
  }
  HostPort out{listen.substr(0, colon), static_cast<int>(*port)};
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty() || out.host == "*") {
    out.host = "0.0.0.0";
  }
  return out;
}

void Send(httplib::Response& res, const HttpReply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, reply.content_type.c_str());
  res.set_header("Cache-Control", "no-store");
  if (reply.status == 401) {
    res.set_header("WWW-Authenticate", "Bearer");
  }
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(Scheduler* scheduler, std::unique_ptr<TuningLog> records, Authorizer* authorizer,
       std::vector<std::string> warnings)
      : records_(std::move(records)),
        api_(scheduler, records_.get(), std::move(warnings)),
        authorizer_(authorizer) {}

  absl::Status Serve(const HttpServerOptions& options) {
    ASSIGN_OR_RETURN(HostPort address, ParseListen(options.listen));
    const bool tls = !options.tls_cert.empty();
    if (tls) {
      // Browsers authenticate with tokens, not client certificates: no client CA here.
      auto server =
          std::make_unique<httplib::SSLServer>(options.tls_cert.c_str(), options.tls_key.c_str());
      if (!server->is_valid()) {
        return absl::InvalidArgumentError(
            StrCat("--http ", options.listen, ": cannot serve HTTPS with --tls-cert ",
                   options.tls_cert, " and --tls-key ", options.tls_key,
                   "; accepted form: a PEM certificate chain and its PEM private key"));
      }
      server_ = std::move(server);
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    const size_t threads = static_cast<size_t>(std::max(1, options.threads));
    server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    server_->set_keep_alive_timeout(kKeepAliveSecs);
    server_->set_read_timeout(kReadTimeoutSecs, 0);
    server_->set_default_headers({{"X-Content-Type-Options", "nosniff"}});
    Route();
    port_ = address.port == 0
                ? server_->bind_to_any_port(address.host)
                : (server_->bind_to_port(address.host, address.port) ? address.port : -1);
    if (port_ <= 0) {
      return absl::UnavailableError(StrCat("cannot serve HTTP on ", options.listen,
                                           ": the address is in use or not valid (expected "
                                           "HOST:PORT, e.g. 127.0.0.1:8080; port 0 picks one)"));
    }
    thread_ = std::thread([this] {
      server_->listen_after_bind();
      listening_ended_ = true;
    });
    // httplib's stop() only takes effect once the accept loop runs: wait for it to start.
    while (!server_->is_running() && !listening_ended_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    Logger("http")->info("dashboard and JSON API on {}://{}:{}/ (metrics: /metrics)",
                         tls ? "https" : "http", address.host, port_);
    return absl::OkStatus();
  }

  int port() const { return port_; }

  void Stop() {
    if (!thread_.joinable() || server_ == nullptr) {
      return;
    }
    server_->stop();
    thread_.join();
  }

 private:
  // The page's own files hold no data: a browser loads them before it can ask for a token.
  static bool IsPageFile(const std::string& path) { return FindDashboardFile(path) != nullptr; }

  absl::Status Authorize(const httplib::Request& req) {
    if (authorizer_ == nullptr || IsPageFile(req.path)) {
      return absl::OkStatus();
    }
    return authorizer_->Check(req.get_header_value("Authorization"), Role::kRead).status();
  }

  void Route() {
    server_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      absl::Status allowed = Authorize(req);
      if (allowed.ok()) {
        return httplib::Server::HandlerResponse::Unhandled;
      }
      Send(res, ErrorReply(allowed));
      return httplib::Server::HandlerResponse::Handled;
    });
    server_->Get("/api/health", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, api_.Health());
    });
    server_->Get("/api/jobs", [this](const httplib::Request& req, httplib::Response& res) {
      Send(res, api_.Jobs(req.params));
    });
    server_->Get(R"(/api/jobs/([^/]+))",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   Send(res, api_.Job(req.matches[1].str()));
                 });
    server_->Get(R"(/api/jobs/([^/]+)/records)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   Send(res, api_.JobRecords(req.matches[1].str(), req.params));
                 });
    server_->Get("/api/workers", [this](const httplib::Request& req, httplib::Response& res) {
      Send(res, api_.Workers(req.params));
    });
    server_->Get("/api/fingerprints", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, api_.Fingerprints());
    });
    server_->Get("/api/quarantine", [this](const httplib::Request& req, httplib::Response& res) {
      Send(res, api_.Quarantine(req.params));
    });
    server_->Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      Send(res, api_.Metrics());
    });
    server_->Get(R"(/|/[a-z_]+\.(html|js|css))",
                 [](const httplib::Request& req, httplib::Response& res) {
                   const EmbeddedFile* file = FindDashboardFile(req.path);
                   if (file == nullptr) {
                     Send(res, ErrorReply(absl::NotFoundError(StrCat("no such file: ", req.path))));
                     return;
                   }
                   res.set_content(std::string(file->body), std::string(ContentTypeOf(file->path)));
                   res.set_header("Cache-Control", "no-cache");
                   res.set_header("Content-Security-Policy",
                                  "default-src 'self'; img-src 'self' data:; object-src 'none'");
                 });
    // Anything else: a JSON error naming what was asked and what there is.
    auto unknown = [](const httplib::Request& req, httplib::Response& res) {
      Send(res, ErrorReply(absl::NotFoundError(
                    StrCat("no such path: ", req.method, " ", req.path, "; paths: ", kApiPaths))));
    };
    auto read_only = [](const httplib::Request& req, httplib::Response& res) {
      HttpReply reply = ErrorReply(
          absl::UnimplementedError(StrCat(req.method, " ", req.path,
                                          ": the HTTP API is read-only (GET); submit and "
                                          "cancel jobs with tune-client or tune.v1.Tuner")));
      reply.status = 405;
      Send(res, reply);
      res.set_header("Allow", "GET, HEAD");
    };
    server_->Get(".*", unknown);
    server_->Post(".*", read_only);
    server_->Put(".*", read_only);
    server_->Patch(".*", read_only);
    server_->Delete(".*", read_only);
    server_->set_exception_handler(
        [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
          std::string what = "unknown exception";
          try {
            std::rethrow_exception(error);
          } catch (const std::exception& e) {
            what = e.what();
          } catch (...) {
          }
          Logger("http")->error("{} {} failed: {}", req.method, req.path, what);
          Send(res, ErrorReply(absl::InternalError(StrCat("daemon error: ", what))));
        });
    // Errors httplib answers itself (a malformed request, a URI too long) get a JSON body too.
    server_->set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) {
            return httplib::Server::HandlerResponse::Unhandled;
          }
          absl::Status status(absl::StatusCode::kInvalidArgument,
                              StrCat("HTTP ", res.status, " for ", req.method, " ", req.path));
          HttpReply reply = ErrorReply(status);
          res.set_content(reply.body, reply.content_type.c_str());
          return httplib::Server::HandlerResponse::Handled;
        }));
    server_->set_logger([](const httplib::Request& req, const httplib::Response& res) {
      Logger("http")->debug("{} {} {}", req.method, req.path, res.status);
    });
  }

  std::unique_ptr<TuningLog> records_;
  JsonApi api_;
  Authorizer* const authorizer_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listening_ended_{false};
  int port_ = 0;
};

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                              Scheduler* scheduler,
                                                              Authorizer* authorizer) {
  ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> records,
                   TuningLog::Open(options.db_path, TuningLog::Mode::kReadOnly));
  auto impl = std::make_unique<Impl>(scheduler, std::move(records), authorizer, options.warnings);
  RETURN_IF_ERROR(impl->Serve(options));
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

int HttpServer::port() const { return impl_->port(); }

void HttpServer::Stop() { impl_->Stop(); }

}  // namespace tune::tuner
