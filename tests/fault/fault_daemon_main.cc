// tune-fault-daemon: tune-daemon with the tests' fault templates (fault_templates.h) in its
// catalog, for the tests that watch what a real daemon and real workers do with kernels and
// builds that crash, hang or answer wrong. Its builder processes are this program too, so they
// have the same templates.
#include "tests/fault/fault_templates.h"
#include "tuner/daemon/daemon_cli.h"

int main(int argc, char** argv) {
  return tune::tuner::RunDaemon(argc, argv, tune::tuner::FaultTemplates());
}
