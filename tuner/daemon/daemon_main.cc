// tune-daemon: the tuning service (daemon_cli.h says what it does and how it is run).
#include "tuner/daemon/daemon_cli.h"

int main(int argc, char** argv) { return tune::tuner::RunDaemon(argc, argv, {}); }
