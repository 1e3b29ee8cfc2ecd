// Rows run a batch at a time, for a search that decides each batch from the results of the last
// (`kernlab tune`): one worker and one device for the whole session, and every file compiled once.
#pragma once

#include "runner/runner.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// One row to run: a variant at a block and a configuration, timed with `timing`.
struct row_request {
  const registry_entry* entry = nullptr;
  unsigned block = 0;
  problem_config config;
  timing_options timing;
};

class row_session {
 public:
  /// `base` says how to compile and run (worker, cache, include folders, kernel timeout), and,
  /// with its blocks and configurations, what each file is compiled for: every instantiation a
  /// later batch may ask of a file is in its one program, so a file compiles once and a point
  /// revisited at another block compiles nothing. Its variants and timing are not used. Throws
  /// cuda::no_device_error when there is no GPU here.
  row_session(const family_registry& families, run_request base);
  ~row_session();
  row_session(const row_session&) = delete;
  row_session& operator=(const row_session&) = delete;

  const cuda::device_info& device() const { return device_; }
  /// An empty kernel timed like a row, measured when the session starts.
  const std::optional<timing_stats>& launch_floor() const { return launch_floor_; }

  /// Runs the rows in order and returns their records in the same order. The source files among
  /// them that were not compiled before are compiled first, on the pool of compile threads, while
  /// the earlier rows run. `on_row` is called after each row with its index and record.
  std::vector<result_record> run(
      const std::vector<row_request>& rows,
      const std::function<void(std::size_t, const result_record&)>& on_row = {});

  /// The compile stage's numbers over every batch so far (files, hits, misses, failures).
  const compile_summary& compile_stats() const { return stats_; }
  /// The files compiled so far.
  std::size_t compiled_files() const { return compiled_.size(); }
  int workers_started() const;
  /// The compile cache's problems, each once; taken (cleared) by the call.
  std::vector<std::string> take_warnings();

 private:
  const family_registry& families_;
  run_request base_;
  cuda::device_info device_;
  std::optional<timing_stats> launch_floor_;
  std::unique_ptr<row_executor> executor_;
  std::map<const registry_entry*, compile_record> compiled_;
  compile_summary stats_;
  std::vector<std::string> warnings_;
};

}  // namespace kl
