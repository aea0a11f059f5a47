// The tuning log as the source of best configs for tune::Compiler.
#pragma once

#include <memory>

#include "codegen/compiler.h"
#include "db/tuning_log.h"

namespace tune {

/// A BestConfigLookup over `log`. Records compete only among the templates that build the
/// workload for the target, and "best" is looked for in this order, the first stage with a
/// record winning:
///   1. records measured with exactly the target (CPU, threads, libraries) and warm caches,
///      made with each template's current version;
///   2. the same, made with any version of those templates (the compiler re-checks that the
///      config is still valid);
///   3. fallback: records of the target's device key measured with another target (other
///      threads or libraries) or cold caches, current versions first, then any version.
/// Within each stage records timed on the device come first (CPU records, GPU records replayed
/// from a graph); GPU records timed call by call (events) answer only when the stage has no
/// other, and the note then says "FALLBACK: no record timed by graph replay".
/// The choice's `note` says which stage answered and, for a fallback, with which target the
/// record was measured, so the fallback is never silent. nullopt when no stage has a record. A
/// record whose config text does not parse is returned as an error naming the record.
BestConfigLookup TuningLogLookup(std::shared_ptr<TuningLog> log, Catalog catalog);

/// The sizes of a range with successful records on the target's device (resolved), as
/// TuningLog::RangeSizesMeasured lists them.
MeasuredSizesLookup TuningLogSizes(std::shared_ptr<TuningLog> log);

}  // namespace tune
