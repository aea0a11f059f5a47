// The host this process runs on, as people and logs name it (see host_cpu.h for its CPU).
#pragma once

#include <string>

namespace tune {

/// The host name (gethostname); "localhost" when it cannot be read or is empty.
std::string HostName();

/// The release in the resolved file name of `library`, a shared library this process has
/// loaded under that name or path: "580.159.04" for a libcuda.so.1 that is a link to
/// libcuda.so.580.159.04. Empty when it is not loaded or its file name has no release.
std::string LoadedLibraryRelease(const std::string& library);

}  // namespace tune
