// tune-daemon: the tuning service. Owns the job queue, the worker registry, the search and the
// builder processes, and is the only writer of the tuning log.
//
//   tune-daemon --listen 127.0.0.1:7070 --db tuning.db [--local-workers N|auto] [--log-level L]
//       [--port-file F] [--worker-binary PATH] [--build-threads N] [--build-timeout-ms MS]
//       [--artifact-store DIR] [--artifact-store-mb 2048]
//       [--heartbeat-ms 1000] [--worker-deadline-ms 5000]
//       [--tls-cert F --tls-key F [--tls-ca F]] [--insecure]
//       [--http HOST:PORT [--http-port-file F]] [--log-format text|json]
//   tune-daemon token create --db tuning.db --name NAME --role read|submit|admin|worker
//   tune-daemon token list|revoke --db tuning.db [ID]
//
// `token` manages client tokens in the log directly (the first admin token comes from here; once
// the daemon runs, `tune-client token` does the same over gRPC with an admin token).
//
// `tune-daemon --build-child` is a builder process, started by the daemon itself
// (tuner/build_child.h); it is not meant to be run by hand.
//
// "-mcpu=native" in a submitted target means the CPU of the host running tune-daemon.
//
// Exit codes: 0 after SIGINT/SIGTERM, 1 when start-up fails (the database cannot be opened, the
// address cannot be bound, the worker binary is missing), 2 for bad flags.
//
// RunDaemon is tune-daemon's main(); tune-fault-daemon (tests/fault) is the same program with the
// tests' fault templates in its catalog.
#pragma once

#include <vector>

#include "codegen/templates/template.h"

namespace tune::tuner {

/// Runs the daemon's command line (serve, `token`, or a builder process). `program_templates`
/// (which live for the program) join the catalog every part of it builds, its builder processes'
/// included: none for tune-daemon. Returns the exit code.
int RunDaemon(int argc, char** argv, const std::vector<const KernelTemplate*>& program_templates);

}  // namespace tune::tuner
