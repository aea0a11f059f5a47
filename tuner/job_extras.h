// Options of a job that the tuning log's jobs table does not hold; the daemon keeps them in the
// job's stored search state (see tuner/job_options.h).
#pragma once

#include <string>
#include <vector>

namespace tune::tuner {

struct JobExtras {
  std::vector<std::string> templates;  // names; empty means every template that applies
  int early_stopping = 0;              // consecutive trials without improvement; 0 = never
  std::string name;                    // free-form label
};

}  // namespace tune::tuner
