// The results files of a run, written while it goes, so that Ctrl-C, a lost machine or a killed
// job keeps what was measured:
// - --jsonl FILE: each record as one JSON line the moment its row is final, with the device and
//   the run in every line (pandas.read_json(FILE, lines=True) reads it whole);
// - --json FILE and --csv FILE: rewritten whole (report/output_file.hpp: never half-written)
//   every few seconds while rows finish, marked "complete": false, and once more at the end.
#pragma once

#include "record/result.hpp"
#include "report/results_json.hpp"

#include <chrono>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace kl {

struct results_paths {
  std::string json, csv, jsonl;  ///< "" for none
  bool any() const { return !json.empty() || !csv.empty() || !jsonl.empty(); }
};

class results_writer {
 public:
  /// `context` is asked for the run's context when a file is written (its timing fields are
  /// final once the run starts). `rewrite_every_s`: the least time between two rewrites of
  /// --json and --csv while the run goes on.
  results_writer(results_paths paths, std::function<run_context()> context,
                 double rewrite_every_s = 2.0);

  /// A row is final. `so_far` gives the device, the launch floor and the compile records
  /// (its `results` are not read: the writer keeps the rows it was given). Files that cannot be
  /// written leave one warning each (warnings()); the run goes on.
  void row(const result_record& r, const sweep_result& so_far);
  /// The run is over: --json and --csv written from `final` (its results are the authority),
  /// "complete" unless it was interrupted. Throws io_error naming the file that cannot be
  /// written: at the end, a file the user asked for and does not get is an error.
  void finish(const sweep_result& final);

  const std::vector<std::string>& warnings() const { return warnings_; }
  std::size_t rows() const { return rows_.size(); }

 private:
  /// `final`: the last write, which streams (`--json -`) get too.
  void rewrite(const sweep_result& sweep, bool complete, bool final);
  void warn(const std::string& what);

  results_paths paths_;
  std::function<run_context()> context_;
  double rewrite_every_s_;
  std::chrono::steady_clock::time_point last_rewrite_;
  std::vector<result_record> rows_;
  std::ofstream jsonl_;
  bool jsonl_failed_ = false, rewrite_failed_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace kl
