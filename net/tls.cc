#include "net/tls.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>

#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::net {
namespace {

// The PEM contents of `path`, given as `flag`; errors name both.
absl::StatusOr<std::string> ReadPem(std::string_view flag, const std::string& path,
                                    std::string_view what) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        StrCat(flag, " ", path, ": cannot be read (", text.status().message(), ")"));
  }
  if (text->find("-----BEGIN ") == std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat(flag, " ", path, ": is not PEM; expected ", what, " (-----BEGIN ...)"));
  }
  return *text;
}

std::string_view TrimWhitespace(std::string_view s) {
  const char* kSpace = " \t\r\n";
  size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) {
    return {};
  }
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

absl::Status CheckPair(const TlsFiles& files) {
  if (files.cert.empty() != files.key.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert and --tls-key go together: give both (a certificate and its key) or neither");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsFiles& files) {
  if (!files.enabled()) {
    return grpc::InsecureServerCredentials();
  }
  RETURN_IF_ERROR(CheckPair(files));
  if (files.cert.empty()) {
    return absl::InvalidArgumentError(
        "--tls-ca needs --tls-cert and --tls-key: the daemon serves TLS with its own certificate");
  }
  grpc::SslServerCredentialsOptions options(
      files.ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                       : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadPem("--tls-cert", files.cert, "a certificate chain"));
  ASSIGN_OR_RETURN(pair.private_key, ReadPem("--tls-key", files.key, "a private key"));
  options.pem_key_cert_pairs.push_back(std::move(pair));
  if (!files.ca.empty()) {
    ASSIGN_OR_RETURN(options.pem_root_certs, ReadPem("--tls-ca", files.ca, "CA certificates"));
  }
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsFiles& files) {
  if (!files.enabled()) {
    return grpc::InsecureChannelCredentials();
  }
  RETURN_IF_ERROR(CheckPair(files));
  if (files.ca.empty()) {
    return absl::InvalidArgumentError(
        "--tls-ca is needed with TLS: the CA certificate (PEM) that signed the daemon's "
        "certificate, which is checked before anything is sent or accepted");
  }
  grpc::SslCredentialsOptions options;
  ASSIGN_OR_RETURN(options.pem_root_certs, ReadPem("--tls-ca", files.ca, "CA certificates"));
  if (!files.cert.empty()) {
    ASSIGN_OR_RETURN(options.pem_cert_chain,
                     ReadPem("--tls-cert", files.cert, "a certificate chain"));
    ASSIGN_OR_RETURN(options.pem_private_key, ReadPem("--tls-key", files.key, "a private key"));
  }
  return grpc::SslCredentials(options);
}

void ApplyServerName(const TlsFiles& files, grpc::ChannelArguments* args) {
  if (!files.server_name.empty()) {
    args->SetSslTargetNameOverride(files.server_name);
  }
}

bool IsLoopbackAddress(std::string_view host_port) {
  std::string_view host = host_port;
  if (host.starts_with('[')) {
    size_t close = host.find(']');
    host = close == std::string_view::npos ? host.substr(1) : host.substr(1, close - 1);
  } else if (size_t colon = host.rfind(':'); colon != std::string_view::npos) {
    host = host.substr(0, colon);
  }
  if (host == "localhost") {
    return true;
  }
  // Addresses parsed, never matched by prefix: "127.example.com" is a name like any other.
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) ||
           (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);  // ::ffff:127.0.0.0/104
  }
  return false;
}

absl::StatusOr<std::string> ResolveToken(const std::string& token_file) {
  if (token_file.empty()) {
    const char* env = std::getenv("TUNE_TOKEN");
    return env == nullptr ? std::string() : std::string(TrimWhitespace(env));
  }
  absl::StatusOr<std::string> text = ReadFile(token_file);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        StrCat("--token-file ", token_file, ": cannot be read (", text.status().message(), ")"));
  }
  std::string_view first = *text;
  first = first.substr(0, first.find('\n'));
  first = TrimWhitespace(first);
  if (first.empty()) {
    return absl::InvalidArgumentError(StrCat("--token-file ", token_file,
                                             ": holds no token; expected tune_<id>_<secret> on its "
                                             "first line (tune-client token create prints one)"));
  }
  return std::string(first);
}

}  // namespace tune::net
