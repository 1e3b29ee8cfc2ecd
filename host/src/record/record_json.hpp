// A result record, and the timing figures in it, as JSON and back (docs/results_format.md).
#pragma once

#include "measure/timing.hpp"
#include "record/result.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace kl {

nlohmann::json to_json(const result_record& r);
nlohmann::json to_json(const problem_config& c);  ///< a record's "config"
nlohmann::json to_json(const timing_stats& t);
timing_stats timing_stats_from_json(const nlohmann::json& j);
nlohmann::json to_json(const timing_options& t);
nlohmann::json to_json(const energy_stats& e);
/// Throws std::runtime_error (or nlohmann::json's exceptions) naming the key of a bad object.
energy_stats energy_stats_from_json(const nlohmann::json& j);
timing_options timing_options_from_json(const nlohmann::json& j);
/// Throws std::runtime_error (or nlohmann::json's exceptions) naming the key of a bad record.
result_record record_from_json(const nlohmann::json& j);

/// A record's "config" (a problem_config); throws std::runtime_error or nlohmann::json's
/// exceptions naming the key of a bad one.
problem_config config_from_json(const nlohmann::json& config);

/// configuration_key() of a record of a results file (its "variant", "block" and "config");
/// throws nlohmann::json's exceptions for a record without them.
std::string record_key(const nlohmann::json& record);

}  // namespace kl
