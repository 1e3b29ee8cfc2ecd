// Reading results files: the records of a file that `compare` and `plot` take (each record read
// by record/record_read.cpp). Apart from results_json.cpp (which writes them), so that the readers
// link without the rest of kernlab (the fuzz target tests/fuzz/fuzz_results.cpp).
#include "report/results_json.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/json_text.hpp"

#include <filesystem>
#include <stdexcept>

namespace kl {
namespace {

using nlohmann::json;

// A record's place in its file, and its name when it has one: "records[3] (reduce.reduce5)".
std::string record_name(const json& records, std::size_t i) {
  const std::string place = "records[" + std::to_string(i) + "]";
  const json& r = records[i];
  if (!r.is_object() || !r.contains("variant") || !r.at("variant").is_object()) return place;
  const json& v = r.at("variant");
  const auto name = v.find("qualified_name");
  return name != v.end() && name->is_string() ? place + " (" + name->get<std::string>() + ")"
                                              : place;
}

// What compare and plot take from a record beyond what record_from_json reads: the key that
// pairs it with a record of another file, and the timing of a record that passed.
void check_record(const json& r, const result_record& read) {
  record_key(r);
  if (read.status == outcome::passed && !read.timing)
    throw std::runtime_error("\"timing\": null in a record that passed");
}

// The file's text: a regular file of at most results_max_bytes, read without ever blocking
// (core/file_read.hpp). Errors name the file.
std::string read_text(const std::string& path) {
  file_read text = read_regular_file(path, results_max_bytes);
  if (text.ok()) return std::move(text.bytes);
  if (text.status == read_status::too_large)
    throw io_error(path + ": larger than " + std::to_string(results_max_bytes >> 20) +
                   " MiB, more than a results file kernlab reads");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw io_error(path + ": a folder, not a results file");
  throw io_error(path + ": cannot be read (" + text.why + ")");
}

}  // namespace

std::vector<result_record> records_from_results(const json& j) {
  if (!j.is_object() || !j.contains("format") || j.at("format") != "kernlab-results")
    throw std::runtime_error("not a kernlab results file (no \"format\": \"kernlab-results\")");
  const json version = j.value("version", json(0));
  // Version 1: the files of the weeks before the first release, whose fields came one by one.
  if (version == 1)
    throw std::runtime_error(
        "results format version 1, from before kernlab 0.1; scripts/results_v1_to_v2.py "
        "rewrites it as version " +
        std::to_string(results_format_version) + ", which this kernlab reads");
  if (version != results_format_version)
    throw std::runtime_error(
        "results format version " + (version.is_number() ? version.dump() : version.type_name()) +
        "; this kernlab reads version " + std::to_string(results_format_version));
  // The run's timing settings: `compare` notes where two runs differ in them.
  try {
    timing_options_from_json(j.at("reproducibility").at("timing"));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("\"reproducibility\".\"timing\": ") + e.what());
  }
  const auto records = j.find("records");
  if (records == j.end() || !records->is_array())
    throw std::runtime_error("\"records\" is not a list");
  std::vector<result_record> out;
  for (std::size_t i = 0; i < records->size(); ++i) {
    try {
      out.push_back(record_from_json(records->at(i)));
      check_record(records->at(i), out.back());
    } catch (const std::exception& e) {
      throw std::runtime_error(record_name(*records, i) + ": " + e.what());
    }
  }
  return out;
}

json read_results_file(const std::string& path) {
  const std::string text = read_text(path);
  try {
    return parse_json(text);
  } catch (const json::exception& e) {
    throw io_error(path + ": not valid JSON (" + e.what() + ")");
  } catch (const std::runtime_error& e) {
    throw io_error(path + ": " + e.what());
  }
}

}  // namespace kl
