// The tuning log's schema: an ordered list of migration steps keyed by version. A database
// records every version applied to it in the schema_version table.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "db/sqlite.h"

namespace tune {

/// The schema version this build creates and understands.
inline constexpr int kSchemaVersion = 12;

struct Migration {
  int version;            // the version the database has after this step
  std::string_view name;  // what the step does, for logs
  std::string_view sql;   // one or more statements
};

/// Every migration step, in order; versions are 1, 2, ... kSchemaVersion.
const std::vector<Migration>& Migrations();

/// The version of the database behind `db`: 0 when it is empty (no tables at all).
/// FailedPrecondition when it holds tables but no schema_version table (not a tuning log).
absl::StatusOr<int> ReadSchemaVersion(sqlite::Connection& db);

/// Brings the database up to kSchemaVersion, all steps in one transaction (nothing changes on
/// failure). A database newer than this build is FailedPrecondition naming both versions.
/// Returns the version it found before migrating.
absl::StatusOr<int> MigrateSchema(sqlite::Connection& db);

}  // namespace tune
