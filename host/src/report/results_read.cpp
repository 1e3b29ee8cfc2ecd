// Reading results files: the records of a file that `compare` and `plot` take (each record read
// by exec/record_json.cpp). Apart from results_json.cpp (which writes them), so that the readers
// link without the rest of kernlab (the fuzz target tests/fuzz/fuzz_results.cpp).
#include "report/results_json.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"

#include <stdexcept>

namespace kl {
namespace {

// A results file holds every sample of every row at most (--samples): far below this.
constexpr std::uint64_t max_results_bytes = std::uint64_t{1} << 30;

}  // namespace

using nlohmann::json;
std::vector<result_record> records_from_results(const json& j) {
  if (!j.is_object() || j.value("format", "") != "kernlab-results")
    throw std::runtime_error("not a kernlab results file (no \"format\": \"kernlab-results\")");
  const int version = j.value("version", 0);
  if (version != results_format_version)
    throw std::runtime_error("results format version " + std::to_string(version) +
                             "; this kernlab reads version " +
                             std::to_string(results_format_version));
  std::vector<result_record> out;
  for (const auto& r : j.at("records")) out.push_back(record_from_json(r));
  return out;
}

json read_results_file(const std::string& path) {
  const file_read text = read_regular_file(path, max_results_bytes);
  if (!text.ok()) throw io_error(path + ": cannot be read (" + text.why + ")");
  try {
    return json::parse(text.bytes);
  } catch (const json::exception& e) {
    throw io_error(path + ": not valid JSON (" + e.what() + ")");
  }
}

}  // namespace kl
