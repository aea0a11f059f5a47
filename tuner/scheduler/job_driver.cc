#include "tuner/scheduler/job_driver.h"

namespace tune::tuner {

// Here, where JobDriver is complete.
JobRuntime::JobRuntime() = default;
JobRuntime::~JobRuntime() = default;

}  // namespace tune::tuner
