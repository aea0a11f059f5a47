// Reading tune-daemon's HTTP side in tests: JSON and text answers checked for their status, and
// the Prometheus text format parsed into series.
#pragma once

#include <map>
#include <string>

#include "httplib.h"
#include "nlohmann/json.hpp"

namespace tune::testing {

/// GET `path`; a failed request or a status other than `status` is a test failure (and an empty
/// object); the body must be JSON.
nlohmann::json GetJson(httplib::Client& http, const std::string& path, int status,
                       const httplib::Headers& headers = {});

/// GET `path` as text, checked for `status` the same way.
std::string GetText(httplib::Client& http, const std::string& path, int status);

/// The job `id` of a /api/jobs answer, or null.
const nlohmann::json* FindJob(const nlohmann::json& jobs, uint64_t id);

/// The samples of a Prometheus text page by series, e.g. `tune_trials_total{outcome="ok"}`
/// (the labels as written); comments left out.
std::map<std::string, double> ParseMetrics(const std::string& text);

}  // namespace tune::testing
