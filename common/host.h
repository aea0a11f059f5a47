// The host this process runs on, as people and logs name it (see host_cpu.h for its CPU).
#pragma once

#include <string>

namespace tune {

/// The host name (gethostname); "localhost" when it cannot be read or is empty.
std::string HostName();

}  // namespace tune
