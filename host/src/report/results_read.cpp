// Reading results files: the records of a file that `compare` and `plot` take (each record read
// by exec/record_json.cpp). Apart from results_json.cpp (which writes them), so that the readers
// link without the rest of kernlab (the fuzz target tests/fuzz/fuzz_results.cpp).
#include "report/results_json.hpp"

#include "core/errors.hpp"
#include "core/json_text.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace kl {
namespace {

using nlohmann::json;

// The file's text: a regular file or a stream (a pipe), at most results_max_bytes.
std::string read_text(const std::string& path) {
  const std::string too_large = path + ": larger than " + std::to_string(results_max_bytes >> 20) +
                                " MiB, more than a results file kernlab reads";
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status))
    throw io_error(path + ": a folder, not a results file");
  if (std::filesystem::is_regular_file(status) &&
      std::filesystem::file_size(path, ec) > results_max_bytes)
    throw io_error(too_large);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw io_error(path + ": cannot be read (" + std::strerror(errno) + ")");
  std::string text;
  try {
    char buf[1 << 16];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(in.gcount()));
      if (text.size() > results_max_bytes) throw io_error(too_large);
    }
  } catch (const std::ios_base::failure& e) {  // libstdc++'s for a read that fails
    throw io_error(path + ": cannot be read (" + e.what() + ")");
  }
  if (in.bad()) throw io_error(path + ": cannot be read");
  return text;
}

}  // namespace

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
