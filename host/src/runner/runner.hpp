// The sweep: for every selected variant and configuration, decide whether it can run, compile,
// load, validate and time it, and record the outcome. One variant's failure never stops the rest.
#pragma once

#include "cuda/device.hpp"
#include "exec/row.hpp"
#include "measure/timing.hpp"
#include "nvrtc/compile_cache.hpp"
#include "record/result.hpp"
#include "registry/registry.hpp"
#include "runner/device_pool.hpp"
#include "worker/executor.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

struct run_request {
  std::vector<const registry_entry*> variants;
  /// With compile_only: the reference kernels of the selected data families
  /// (registry::reference), compiled beside the variants for the dtypes and ops asked for, so
  /// that a reference that does not compile fails the command, not the rows on a GPU later.
  std::vector<const registry_entry*> references;
  std::vector<unsigned> blocks;  ///< requested block sizes
  /// --block all: besides `blocks`, every block size a variant lists outside them (a warp-
  /// specialised kernel's 384), so that the default selection runs every variant somewhere.
  bool blocks_all = false;
  std::vector<std::string> dtypes;
  std::vector<std::string> ops;
  /// The axes' values (--size, --shape, --axis NAME=...): each family takes those that reach its
  /// axes, the product of them (configs_for); an axis none gives is at its default.
  std::vector<axis_choice> axes;
  std::string input_mode = "exact";
  std::uint64_t seed = 0;
  std::string fallback_arch = "sm_90";  ///< compile target when there is no device
  std::vector<std::string> include_dirs;
  /// Include folders whose headers the cache key names but does not read (the CUDA toolkit's):
  /// the NVRTC version covers them. Also in include_dirs.
  std::vector<std::string> toolkit_include_dirs;
  timing_options timing;
  bool compile_only = false;
  /// The GPUs rows run on (--device N, --devices all|0,2,3), one worker each; the first is the
  /// one the compile target comes from (app/plan.cpp checks that they share an architecture).
  std::vector<int> devices = {0};
  /// --baseline: the variant the rows are compared with ("" for the family's library). With
  /// several GPUs its rows run on each of them, so that every ratio comes from one GPU.
  std::string baseline;
  /// Makes GPU N's executor instead of make_executor, for the tests: with it set, the GPUs are
  /// those the executors say they are (no driver is asked), and kernels compile for
  /// fallback_arch.
  std::function<std::unique_ptr<row_executor>(int ordinal)> executor_factory;
  /// Lanes after this process's GPUs, each making its executor when the rows' pool starts: under
  /// mpirun or srun, rank 0's one lane per GPU of the other ranks (mpi/world.hpp). Their rows are
  /// scheduled, retried and read back like those of `devices`.
  std::vector<device_pool::lane_factory> remote_lanes;
  // Isolation: rows run in a worker process unless in_process is set.
  bool in_process = false;
  std::vector<std::string> worker_command;  ///< {"/path/kernlab", "--worker"}
  double kernel_timeout_s = 10;
  // The journal, and whether this run resumes the one it describes.
  std::string journal_path;  ///< "" for none
  bool resume = false;
  /// compute-sanitizer tools to run each variant under ("memcheck", "racecheck"); empty: none.
  std::vector<std::string> sanitize;
  std::string sanitizer = "compute-sanitizer";  ///< the program
  /// --profile: Nsight Compute's ncu, which after the sweep runs every passed row once more in a
  /// worker of its own (runner/profile_pass.hpp); "" for no profiling pass.
  std::string profiler;
  /// Where the profiling pass writes: this + ".ncu-rep" (the report), + ".log" (ncu's output).
  std::string profile_report;
  unsigned compile_jobs = 0;  ///< CPU threads compiling kernel files; 0: one per hardware thread
  /// Each file's NVRTC compile runs in a child started as this ({"/path/kernlab",
  /// "--compile-child"}), killed after compile_timeout_s. Empty: in this process, untimed.
  std::vector<std::string> compile_command;
  double compile_timeout_s = 300;
  /// Compiled images from earlier runs; null compiles every file.
  std::shared_ptr<const nvrtc::compile_cache> cache;
  /// Make each file's cache key (scanning its headers) even without a cache: --watch compares
  /// them. Otherwise a run without a cache scans no header at all.
  bool want_keys = false;
  /// Whether the dtypes and ops were asked for (--dtype, --op) or are the defaults. A family
  /// that has none of the default ones (qam256 has float32 and "demap", not "sum") runs its own
  /// first dtype and op then, so that `--variant all` covers every family.
  bool dtypes_explicit = false, ops_explicit = false;
};

/// Called with each finished group of rows (one dtype, op and size), so long sweeps print as
/// they go.
using group_callback = std::function<void(const std::vector<result_record>&,
                                          const cuda::device_info&, const sweep_result&)>;

/// Called with each row as soon as it is final (with --sanitize, once its variant's verdicts are
/// in), and the sweep so far (device, launch floor; its `results` hold the earlier groups only).
using row_callback = std::function<void(const result_record&, const sweep_result&)>;

/// Progress: a phase ("compiling", "running"), how far, and what is being done.
using progress_callback = std::function<void(const char* phase, std::size_t done, std::size_t total,
                                             const std::string& what)>;

class runner {
 public:
  runner(const family_registry& families, run_request request)
      : families_(families), request_(std::move(request)) {}

  /// Called from the thread that called run(): each file as its compile is collected, each row
  /// as it starts.
  void on_progress(progress_callback cb) { progress_ = std::move(cb); }
  /// Called from the thread that called run(), with each finished row (results files written as
  /// rows finish).
  void on_row(row_callback cb) { row_ = std::move(cb); }

  /// Compiles every source variant on a pool of threads, through the cache, while the rows of
  /// the files already compiled are validated and timed (in request order); with compile_only,
  /// or without a device (sweep_result says why), it stops after compiling. After an interrupt
  /// (core/interrupt.hpp) no further row starts and the compiles under way stop (their children
  /// killed): the rows finished so far are returned, marked interrupted; a compile-only run cut
  /// short returns no compiles.
  sweep_result run(const group_callback& on_group = {});

 private:
  const family_registry& families_;
  run_request request_;
  progress_callback progress_;
  row_callback row_;
};

/// The configurations of a family that a request asks for: dtype x op x each axis choice that
/// reaches it (request.axes), made here and nowhere else.
std::vector<problem_config> configs_for(const family& f, const run_request& r);

/// The block sizes a variant's rows take under a request ({0} for a variant without a block).
std::vector<unsigned> blocks_for(const variant_descriptor& v, const run_request& r);

/// A row a request makes, in the order runner::run runs them: family by family (in the order
/// their first variants were selected), then configuration, variant and block. A variant whose
/// family cannot be used is one row without a configuration (`family_error` says why).
struct planned_row {
  const registry_entry* entry = nullptr;
  unsigned block = 0;
  problem_config config;
  std::string family_error;  ///< "" for a row that can run
  /// configuration_key() of a row that can run; the variant and the error otherwise.
  std::string key() const;
};
std::vector<planned_row> plan_rows(const family_registry& families, const run_request& request);

/// The worker's job for one row of a source variant: its instantiation for `block` and `c` in
/// the file's compiled image, with the compiler's resource report.
row_job source_job(const family& f, const variant_descriptor& v, unsigned block,
                   const problem_config& c, const compile_record& compiled);

/// Where `request` runs kernels: a worker process (the command prefixed by `prefix`, such as a
/// sanitizer, its output in `log`), or kernlab itself when request.in_process is set; on GPU
/// `ordinal` (-1: the request's first).
std::unique_ptr<row_executor> make_executor(const family_registry& families,
                                            const run_request& request,
                                            const std::vector<std::string>& prefix = {},
                                            const std::string& log = "", int ordinal = -1);

/// The pool's lanes for `request`: one per GPU of `request.devices` (request.executor_factory's
/// executors when it is set, else make_executor's; with timing.placement_workers > 1, that many
/// spread over by each row's placements), then request.remote_lanes.
std::vector<device_pool::lane_factory> lanes_for(const family_registry& families,
                                                 const run_request& request);

/// Whether a variant's rows are the baseline the others are compared with (the family's library,
/// or the one --baseline names): with several GPUs they run on each.
bool is_baseline_row(const variant_descriptor& v, const std::string& baseline);

/// Where --sanitize's log of `tool` for `variant` goes: beside the journal
/// ("<journal>.memcheck.reduce5.log"), or without one in `folder`, a private folder (mode 0700)
/// made in the system's temp folder on the first call and kept in `folder` for the next ones;
/// never a fixed name in a folder everyone may write (a link planted there was followed). Throws
/// io_error when the folder cannot be made.
std::string sanitizer_log_path(const std::string& journal_path, std::string& folder,
                               const std::string& tool, const std::string& variant);

/// What compute-sanitizer's log says at its end. Every count is -1 when its line is missing.
struct sanitizer_summary {
  long errors = -1;       ///< "ERROR SUMMARY: 478 errors": the total, printed or not
  long not_printed = -1;  ///< "ERROR SUMMARY: 378 errors were not printed. Use --print-limit ..."
  long hazards = -1;      ///< racecheck: "RACECHECK SUMMARY: 96 hazards displayed (...)"
  long hazard_errors = -1, hazard_warnings = -1;  ///< the "(96 errors, 0 warnings)" of that line
  std::string first;  ///< the first finding ("Invalid __global__ write of size 4 bytes")
};
/// Parses a log; lines without the "========= " prefix (the program's own output) are ignored.
sanitizer_summary parse_sanitizer_log(std::istream& log);

/// compute-sanitizer's verdict from one worker's log: "memcheck: clean", or the error count with
/// the first finding and the log's path ("memcheck: 478 errors (378 not printed; first: ...)").
std::string sanitizer_verdict(const std::string& tool, const std::string& log_path);

/// A row's key in the journal: its configuration_key(), the seed, and the hash of the code behind
/// the variant (its source text, or its plugin file), so that --resume runs an edited kernel's
/// rows again instead of skipping them.
std::string journal_key(const registry_entry& e, unsigned block, const problem_config& c);

/// What a row comes to without compiling or running anything, when that is already decided: a
/// variant that cannot be used fails; a dtype, op or block it does not take, or a block past the
/// device's limit, is a skip with the reason. std::nullopt: the row must be compiled and run.
std::optional<std::pair<outcome, std::string>> decide_before_compile(
    const registry_entry& e, unsigned block, const problem_config& config,
    const cuda::device_info& device);

/// The blocks a variant gets rows for: the requested ones (with --block all, and those the
/// variant lists besides them), or 0 for "does not apply".
std::vector<unsigned> blocks_for(const variant_descriptor& v, const run_request& r);

}  // namespace kl
