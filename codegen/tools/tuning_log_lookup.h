// The tuning log as the source of best configs for tune::Compiler.
#pragma once

#include <memory>

#include "codegen/compiler.h"
#include "db/tuning_log.h"

namespace tune {

/// A BestConfigLookup over `log`: among the templates that build the workload for the target,
/// the fastest successful record made with each template's current version for the target's
/// device key, the fastest of those; when there is none, the fastest record of any version
/// (the compiler re-checks that its config is still valid). nullopt when the log has nothing
/// for (workload, device key). A record whose config text does not parse is returned as an
/// error naming the record.
BestConfigLookup TuningLogLookup(std::shared_ptr<TuningLog> log);

}  // namespace tune
