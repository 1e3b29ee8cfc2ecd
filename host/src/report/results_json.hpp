// The results file (--json): one record per (variant, configuration), and a reproducibility
// block that says where and how they were measured. The format is documented in
// docs/results_format.md; `version` changes whenever a field changes meaning or goes away.
#pragma once

#include "record/record_json.hpp"
#include "record/result.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kl {

constexpr int results_format_version = 2;

/// What the records came from, beyond the records themselves.
struct run_context {
  std::vector<std::string> command;  ///< argv
  std::string date;                  ///< ISO 8601, UTC
  std::string kernlab_version;
  std::string kernlab_commit;  ///< short git hash, "-dirty" suffix, or "unknown"
  std::string nvrtc_version;
  std::uint64_t seed = 0;
  timing_options timing;
  std::string baseline;  ///< the --baseline name, "" for the family's library
};

/// The whole file: context, device, launch floor, kernel sources (hash and options), records.
nlohmann::json results_to_json(const sweep_result& sweep, const run_context& ctx);

/// The device as the reproducibility block holds it: model, UUID, peaks, clocks, driver.
nlohmann::json device_json(const cuda::device_info& d);
/// The run as each JSON line holds it: date, kernlab's version and commit, NVRTC, seed, command.
nlohmann::json run_json(const run_context& ctx);
/// One record as the results file holds it: the row, its % of peak (and TFLOP/s), and the
/// device that measured it (model, UUID, compute capability, driver, peaks), so that a record
/// read alone (pandas.json_normalize, a JSON line) says where it was measured. The baseline
/// ratio is the file's to add: it needs the row's group.
nlohmann::json record_in_context(const result_record& r, const cuda::device_info* device);

/// The GPU that measured `r` among the sweep's (--devices), else the sweep's device; null when
/// there is none.
const cuda::device_info* device_of(const result_record& r, const sweep_result& sweep);

/// The records of a results file; throws std::runtime_error naming the problem for a file that
/// is not a kernlab results file of a version this kernlab reads.
std::vector<result_record> records_from_results(const nlohmann::json& j);

/// The largest results file kernlab reads: far above a real run's (the largest uncompressed one on
/// the results history is under 0.5 MiB), far below what would run a machine out of memory once
/// parsed.
constexpr std::uintmax_t results_max_bytes = std::uintmax_t{256} << 20;

/// Reads and parses a results file: a regular file of at most results_max_bytes, never blocking
/// (core/file_read.hpp),
/// nested at most json_max_depth deep (core/json_text.hpp). Throws io_error naming the file.
nlohmann::json read_results_file(const std::string& path);

/// A stable 64-bit content hash, printed as 16 hex digits (xxHash3).
std::string content_hash(const std::string& text);

/// "2026-11-22T03:45:13Z"
std::string utc_now_iso8601();

}  // namespace kl
