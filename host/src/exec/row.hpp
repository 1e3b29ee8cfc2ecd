// One row of a sweep: a variant at one block size and one configuration, validated then timed.
// `row_job` is everything a process needs to run it (it travels to the worker as JSON);
// `row_runner` runs rows on the device it owns, in kernlab itself (--in-process) or in the worker.
#pragma once

#include "cuda/device.hpp"
#include "cuda/resources.hpp"
#include "families/family.hpp"
#include "measure/clock_monitor.hpp"
#include "measure/energy.hpp"
#include "measure/l2_flush.hpp"
#include "measure/nvml.hpp"
#include "measure/timing.hpp"
#include "plugin_host/plugin_loader.hpp"
#include "record/result.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace kl {

struct row_job {
  variant_descriptor variant;
  problem_config config;
  unsigned block = 0;
  timing_options timing;
  // Source variants: the compiled image and the instantiation's mangled name.
  std::string cubin;
  std::string lowered_name;
  std::optional<nvrtc::resource_usage> resources;
  double compile_ms = 0;
  /// --profile: the NVTX range to run the operation once in, after validating it, for Nsight
  /// Compute ("kl/row12"); the row is then not timed. "" for a row that is timed.
  std::string profile_range;
  /// The row's key in the run's journal (runner/journal.hpp), for an MPI rank that runs it to
  /// journal it in its own file; "" when the run keeps no journal.
  std::string journal_key;
  /// Move the problem and the flush buffer before validating and timing: the worker timed this
  /// row before, and this is another of its placements (worker/spread_executor.hpp).
  bool move_first = false;
  /// A tune's race bound as it tightens: where set, the row races against the lower of it, read
  /// as the row starts, and timing.race_ms (runner/device_pool.cpp). Not sent to a worker, which
  /// gets the bound read, in timing.race_ms.
  live_race_bound race_live;

  /// The row's record before it runs: what it is (variant, configuration, block) and what its
  /// compile reported. Running it fills in the rest.
  result_record record() const;
};

/// Which problem (inputs, reference) a row of `family` at `c` runs on: rows with the same key share
/// one, which a worker keeps between them (row_runner) and a spread has every worker make at once
/// (worker/spread_executor.cpp).
std::string problem_key(const std::string& family, const problem_config& c);

nlohmann::json to_json(const row_job& job);
row_job job_from_json(const nlohmann::json& j);

/// Runs rows on one device (0 unless --device/--devices says otherwise): owns the context, a
/// stream, the L2 flusher, the clock monitor, and caches of loaded modules, opened plugins and the
/// current problem (inputs and reference).
class row_runner {
 public:
  /// Throws cuda::no_device_error without a GPU.
  explicit row_runner(const family_registry& families, int ordinal = 0);
  ~row_runner();

  const cuda::device_info& device() const { return device_; }
  /// Why SM clocks are not monitored ("" when they are).
  const std::string& clock_status() const { return clocks_->why_unavailable(); }
  /// Why --energy can measure nothing here ("" when it can): NVML missing, or the device unknown
  /// to it, or neither its energy counter nor its power readable.
  const std::string& energy_status() const { return meter_->why_unavailable(); }
  /// An empty kernel timed like every row: the floor under any one-launch operation.
  timing_stats launch_floor(const timing_options& opt);
  /// Runs an empty kernel to its end. A worker does this before it says it is ready: a GPU still
  /// busy with the kernel of a worker that was stopped for a hang (it can take seconds to be
  /// cleared) then delays the start-up, which has a generous limit, and not the next row, whose
  /// launches the --kernel-timeout watchdog judges.
  void settle();

  /// Validates then times the row (or, with job.profile_range, runs it once more inside that
  /// NVTX range, untimed). Every failure becomes the record's outcome; after an error that leaves
  /// the context unusable the outcome is `crashed` and context_lost() is true.
  result_record run(const row_job& job);
  bool context_lost() const { return !context_lost_.empty(); }
  /// Makes the row's problem (its inputs and reference) ahead of the row, as run() would first;
  /// for a plugin's row, also runs its operation once, untimed, which opens the library (its
  /// handle, its kernels). Throws what that throws (the row itself then reports it).
  void prepare(const row_job& job);

 private:
  /// Binds the row's operation to the problem where its buffers are now: once before the row
  /// is validated, and again in every further placement.
  using binder = std::function<std::unique_ptr<operation>()>;

  l2_flusher& flusher_for(flush_mode mode);
  problem& problem_for(const family& f, const problem_config& c);
  /// The module of a source row's image, loaded on its first row (its load time in `r`).
  cuda::module& module_for(const row_job& job, result_record& r);
  /// A source row's binder, its resources and occupancy in `r`; empty, with `r` skipped and
  /// saying why, when the kernel cannot launch at the row's block here.
  binder bind_source(const row_job& job, const family& fam, problem& prob, result_record& r);
  /// A plugin row's binder; throws when the plugin has no such variant.
  binder bind_plugin(const row_job& job, problem& prob);
  /// job.move_first: another placement of a row this worker timed before
  /// (worker/spread_executor.hpp), so the problem and the flush buffer move first, as between
  /// the placements of one run. Returns why they stayed ("" when they moved, or need not).
  std::string move_first(const row_job& job, problem& prob);
  /// Runs `op` once on poisoned output and checks it (the result in `r`); false when it is
  /// wrong, with `r` saying so.
  bool validate(operation& op, result_record& r);
  /// --profile: `op` run once more inside the NVTX range `range`, untimed, then checked again.
  void run_profiled(operation& op, const std::string& range, result_record& r);
  /// Times a validated row in its placements, measures its energy where asked, and checks its
  /// last run's result again: the outcome in `r`. `stayed`: move_first()'s note.
  void time_row(problem& prob, std::unique_ptr<operation>& op, const binder& bind,
                const row_job& job, const std::string& stayed, result_record& r);
  /// Times `op` in its placements (measure/timing.hpp): between two, the problem and the flush
  /// buffer move and `op` is bound again with `bind`; `op` is left bound to the last placement.
  timing_stats time_in_placements(problem& prob, std::unique_ptr<operation>& op, const binder& bind,
                                  const timing_options& opt);

  const family_registry& families_;
  cuda::device_info device_;
  std::unique_ptr<cuda::primary_context> context_;
  std::unique_ptr<cuda::stream> stream_;
  std::unique_ptr<nvml_library> nvml_;  // before its readers, so that it outlives them
  std::unique_ptr<clock_monitor> clocks_;
  std::unique_ptr<nvml_power_meter> meter_;
  std::map<flush_mode, std::unique_ptr<l2_flusher>> flushers_;
  std::map<std::string, std::unique_ptr<cuda::module>> modules_;   // by image hash
  std::map<std::string, std::shared_ptr<loaded_plugin>> plugins_;  // by path
  std::unique_ptr<problem> problem_;                               // the last one used
  std::string problem_key_;
  std::string context_lost_;
  std::uint64_t placements_made_ = 0;  // varies each move's spacer
};

/// Errors after which the context can run nothing more.
bool is_sticky(CUresult rc);

}  // namespace kl
