#include "tune/store.hpp"

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "exec/record_json.hpp"

namespace kl::tune {

tuning_store::tuning_store(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path(), ec);
  bool ends_cut = false;  // the last line has no newline: a write that a kill cut short
  {
    std::ifstream in(path_, std::ios::binary);
    std::string line;
    std::size_t number = 0, bad = 0;
    while (std::getline(in, line)) {
      ++number;
      ends_cut = in.eof() && !line.empty();
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
  }
  out_.open(path_, std::ios::app);
  if (!out_) throw io_error("cannot open the tuning store " + path_.string() + " for writing");
  if (ends_cut) out_ << "\n" << std::flush;  // the next result starts a line of its own
}

const stored_result* tuning_store::find(const std::string& key) const {
  auto it = results_.find(key);
  return it == results_.end() ? nullptr : &it->second;
}

void tuning_store::add(stored_result r) {
  nlohmann::json j = {{"key", r.key}, {"provenance", r.provenance}, {"record", to_json(r.record)}};
  out_ << json_text(j) << "\n" << std::flush;
  if (!out_) throw io_error("cannot write the tuning store " + path_.string());
  results_[r.key] = std::move(r);
}

std::size_t tuning_store::count_containing(const std::string& part) const {
  std::size_t n = 0;
  for (const auto& [key, r] : results_)
    if (key.find(part) != std::string::npos) ++n;
  return n;
}

}  // namespace kl::tune
