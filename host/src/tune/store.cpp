#include "tune/store.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/json_text.hpp"
#include "record/record_json.hpp"

#include <cstring>
#include <sstream>

namespace kl::tune {
namespace {

// What a store holds at most: a few KB a result, for hundreds of thousands of results.
constexpr std::uint64_t max_store_bytes = std::uint64_t{1} << 30;

}  // namespace

tuning_store::tuning_store(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  const file_read text = read_regular_file(path_.string(), max_store_bytes, symlinks::refuse);
  if (!text.ok() && text.status != read_status::absent)
    throw io_error("tuning store " + path_.string() + ": " + text.why);
  bool ends_cut = !text.bytes.empty() && text.bytes.back() != '\n';  // a write a kill cut short
  std::istringstream in(text.bytes);
  std::string line;
  std::size_t number = 0, bad = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      const auto j = parse_json(line);
      stored_result r;
      r.key = j.at("key").get<std::string>();
      r.record = record_from_json(j.at("record"));
      r.provenance = j.value("provenance", nlohmann::json::object());
      results_[r.key] = std::move(r);
    } catch (const std::exception& e) {
      if (++bad == 1)
        warnings_.push_back(path_.string() + ":" + std::to_string(number) +
                            ": not a stored result (" + e.what() + "); skipped");
    }
  }
  if (bad > 1)
    warnings_.push_back(path_.string() + ": " + std::to_string(bad) +
                        " lines in all could not be read and were skipped");
  out_ = open_appending("tuning store", path_.string(), existing::keep);
  if (ends_cut) append("\n");  // the next result starts a line of its own
}

void tuning_store::append(const std::string& text) {
  if (const int err = write_all(out_.get(), text))
    throw io_error("cannot write the tuning store " + path_.string() + ": " + std::strerror(err));
}

const stored_result* tuning_store::find(const std::string& key) const {
  auto it = results_.find(key);
  return it == results_.end() ? nullptr : &it->second;
}

void tuning_store::add(stored_result r) {
  nlohmann::json j = {{"key", r.key}, {"provenance", r.provenance}, {"record", to_json(r.record)}};
  append(json_text(j) + "\n");
  results_[r.key] = std::move(r);
}

std::size_t tuning_store::count_containing(const std::string& part) const {
  std::size_t n = 0;
  for (const auto& [key, r] : results_)
    if (key.find(part) != std::string::npos) ++n;
  return n;
}

}  // namespace kl::tune
