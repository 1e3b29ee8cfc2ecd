// Rows run a batch at a time, for a search that decides each batch from the results of the last
// (`kernlab tune`): one worker per GPU for the whole session (--devices: the rows of a batch are
// spread over them, runner/device_pool.hpp), and every file compiled once.
#pragma once

#include "parallel/thread_pool.hpp"
#include "runner/device_pool.hpp"
#include "runner/runner.hpp"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

class compile_stage;

/// One row to run: a variant at a block and a configuration, timed with `timing`.
struct row_request {
  const registry_entry* entry = nullptr;
  unsigned block = 0;
  problem_config config;
  timing_options timing;
  /// A baseline: run once on every GPU of the session, so that each GPU's rows are compared with
  /// their own GPU's (one record per GPU, in GPU order).
  bool every_gpu = false;
  /// Only GPUs of this model (a cuda::device_info name) run the row; "" for any. A tune over
  /// GPUs of several models searches each model with its own rows.
  std::string model{};
  /// A tune's race bound as it tightens (row_job::race_live): read when the row starts.
  live_race_bound race_live{};
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

  /// The first GPU (its architecture is the compile target); devices() has them all.
  const cuda::device_info& device() const { return device_; }
  const std::vector<cuda::device_info>& devices() const;
  /// An empty kernel timed like a row, measured when the session starts.
  const std::optional<timing_stats>& launch_floor() const { return launch_floor_; }
  /// Why --energy measures nothing in the session's worker ("" when it can).
  const std::string& energy_status() const { return energy_status_; }

  /// Runs the rows and returns their records in the same order (an every_gpu row: one per GPU,
  /// side by side). The source files among them that were not compiled or queued before are
  /// queued on the session's compile threads; each row waits for its own file only, so the later
  /// files compile while the earlier rows run. With several GPUs the rows run side by side, each
  /// on the first GPU free. `on_row` is called, in order and from the calling thread, with each
  /// row's index and record.
  std::vector<result_record> run(
      const std::vector<row_request>& rows,
      const std::function<void(std::size_t, const result_record&)>& on_row = {});

  /// run() in two halves: submit() queues a batch and returns its id at once; collect() reads its
  /// records back as run() does (on_row in order, from the calling thread). With several GPUs the
  /// rows of a batch submitted before the last one is collected run as soon as GPUs are free of
  /// the last one's, so no GPU idles at a batch's end; with one GPU a row runs when collect()
  /// comes to it, as in run(). Batches are collected in the order submitted, each once.
  std::size_t submit(const std::vector<row_request>& rows);
  std::vector<result_record> collect(
      std::size_t batch, const std::function<void(std::size_t, const result_record&)>& on_row = {});
  /// A submitted batch that will not be collected: its rows not started never start (with one
  /// GPU, none has); those running finish, and their records are dropped.
  void discard(std::size_t batch);

  /// Queues the files of rows a later run() will ask for, behind those queued already, and
  /// returns at once: the next batch compiles while this one is timed. Files compiled or queued
  /// before are not queued again.
  void prefetch(const std::vector<row_request>& rows);

  /// Where the session's time went: waiting in run() for a file to finish compiling, and running
  /// rows (validation and timing, in the workers: wall time, however many GPUs ran them).
  struct time_split {
    double waiting_for_compiles_s = 0;
    double running_rows_s = 0;
  };
  const time_split& times() const { return times_; }

  /// The compile stage's numbers over every batch so far (files, hits, misses, failures).
  const compile_summary& compile_stats() const { return stats_; }
  /// The files compiled so far (queued files not yet asked for by run() are not counted).
  std::size_t compiled_files() const { return compiled_.size(); }
  int workers_started() const;
  /// The GPUs that left the session, with why ("" for each still in it), by GPU index.
  std::vector<std::string> lost_devices() const;
  /// How many rows each GPU ran, by GPU index.
  std::vector<std::size_t> rows_per_device() const;
  /// The compile cache's problems, each once; taken (cleared) by the call.
  std::vector<std::string> take_warnings();

 private:
  // A row read back by collect(): its record when decided without running, else its ticket.
  struct slot {
    std::size_t index = 0;
    std::optional<result_record> decided;
    std::optional<std::size_t> ticket;
  };
  struct batch {
    std::vector<row_request> rows;
    std::size_t placed = 0;    // rows[0, placed) are decided or queued on the pool
    std::deque<slot> pending;  // placed and not read back yet
  };
  // A row's record when it needs no GPU (a skip, a compile error), else its job.
  std::pair<result_record, std::optional<row_job>> place(const row_request& row);
  void place_next(batch& b);

  // The compile record of a source file that run() queued, waiting for it if need be.
  const compile_record& compiled(const registry_entry& e);

  const family_registry& families_;
  run_request base_;
  cuda::device_info device_;
  std::optional<timing_stats> launch_floor_;
  std::string energy_status_;
  std::unique_ptr<device_pool> pool_devices_;
  std::map<std::size_t, batch> batches_;  // submitted, not collected
  std::size_t next_batch_ = 0;
  std::map<const registry_entry*, compile_record> compiled_;
  // The compile stages with files not yet handed to run(): one per prefetch (or run) that queued
  // something, each finished (its counts added to stats_) once run() has taken all its files.
  struct queued_stage {
    std::unique_ptr<compile_stage> stage;
    std::size_t left = 0;  // files run() has not taken yet
  };
  std::vector<queued_stage> stages_;
  compile_summary stats_;
  time_split times_;
  std::vector<std::string> warnings_;
  // Last, so destroyed first: its queued tasks write into the stages above, so it drops them
  // (and waits for those running) before the stages go.
  std::unique_ptr<thread_pool> pool_;
};

}  // namespace kl
