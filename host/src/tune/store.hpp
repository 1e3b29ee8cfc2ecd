// The tuning store: every evaluation a tune made, one JSON object per line, appended as each row
// finishes. A later tune (resumed after an interruption, or run again) takes a point's result
// from here instead of measuring it again, when the key matches: the configuration, the seed,
// the source's hash, the device, the toolkit and how carefully it was timed.
#pragma once

#include "core/file_write.hpp"
#include "record/result.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kl::tune {

/// One stored evaluation.
struct stored_result {
  std::string key;
  result_record record;
  nlohmann::json provenance;  ///< device, driver, toolkit, commit, date
};

class tuning_store {
 public:
  /// Opens (creating its folder) and reads the store. Lines that cannot be read (a line cut short
  /// by a kill) are skipped, each counted in warnings(); a later line with the same key wins.
  /// Throws io_error naming the file when it cannot be read (a link, a FIFO, over 1 GiB) or
  /// opened for appending (core/file_write.hpp's open_appending).
  explicit tuning_store(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }
  std::size_t size() const { return results_.size(); }
  /// The stored result for `key`, or null.
  const stored_result* find(const std::string& key) const;
  /// Appends one result and flushes it to the file, so a kill loses no finished row. A failure
  /// to write throws io_error naming the file.
  void add(stored_result r);
  /// The number of stored results whose key contains `part` (a file's source hash, say).
  std::size_t count_containing(const std::string& part) const;
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void append(const std::string& text);

  std::filesystem::path path_;
  std::map<std::string, stored_result> results_;
  unique_fd out_;
  std::vector<std::string> warnings_;
};

}  // namespace kl::tune
