// Transport security for every gRPC connection of tune: TLS credentials from PEM files (the
// daemon's server side, the workers' and clients' channel side), the rule for serving beyond
// loopback, and where a client's token comes from.
//
// This module is gRPC's adapter for security: the one place that builds grpc credentials.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace tune::net {

/// The files of one end of a TLS connection (flags --tls-cert, --tls-key, --tls-ca).
struct TlsFiles {
  /// This end's certificate chain (PEM). A daemon needs it; a client presents it when given.
  std::string cert;
  /// The private key of `cert` (PEM).
  std::string key;
  /// The CA bundle (PEM) that must have signed the other end: on the daemon, every client's and
  /// worker's certificate (mutual TLS); on a client or worker, the daemon's.
  std::string ca;
  /// Client side only: the name the daemon's certificate must carry, when it differs from the
  /// host dialed (e.g. dialing an IP address).
  std::string server_name;

  bool enabled() const { return !cert.empty() || !key.empty() || !ca.empty(); }
};

/// The daemon's credentials: insecure when `files` is empty; TLS with cert and key; mutual TLS
/// (clients must present a certificate signed by `ca`) when `ca` is given too. Errors name the
/// flag, the file and the accepted form.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const TlsFiles& files);

/// A worker's or client's credentials: insecure when `files` is empty; otherwise TLS that
/// trusts only `ca` (required) and presents cert and key when given (both or neither).
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const TlsFiles& files);

/// Sets the TLS name override of `args` when `files.server_name` is set.
void ApplyServerName(const TlsFiles& files, grpc::ChannelArguments* args);

/// Whether HOST:PORT names a loopback address only: an IPv4 address of 127.0.0.0/8, [::1] (or
/// an IPv4-mapped [::ffff:127.x.y.z]) or `localhost`. Addresses are parsed: a name that merely
/// starts with "127." is no loopback address.
bool IsLoopbackAddress(std::string_view host_port);

/// A client's token: the first line of `token_file` when given, else $TUNE_TOKEN, else "".
/// A file that cannot be read or holds no token is an error naming it.
absl::StatusOr<std::string> ResolveToken(const std::string& token_file);

}  // namespace tune::net
