// --profile: after the sweep, one more run of every row that passed, in a worker started under
// Nsight Compute (ncu), and ncu's figures beside each row. One ncu session profiles every row: the
// worker runs each row's operation once inside an NVTX range named for the row ("kl/row12"), ncu
// profiles only the kernels inside such ranges (a plugin's several kernels included) and names
// each kernel after its range, which is how the report's kernels find their rows again.
#pragma once

#include "exec/row.hpp"
#include "measure/timing.hpp"
#include "runner/runner.hpp"

#include <string>
#include <vector>

namespace kl {

/// A launch under ncu takes as long as its metrics' replays: the watchdog's floor for the pass.
constexpr double profiled_kernel_timeout_s = 120;

/// ncu's command line in front of the worker's: counters with the clocks left alone, caches
/// flushed before each replay unless the sweep is hot (`flush`), only the kernels inside the
/// rows' ranges, the metrics of ncu_metrics, the report written to `report_base`.ncu-rep.
std::vector<std::string> ncu_command(const std::string& ncu, const std::string& report_base,
                                     flush_mode flush);

/// The command that prints a report's raw page as CSV, each kernel named after its range.
std::vector<std::string> ncu_import_command(const std::string& ncu, const std::string& report);

/// A row to profile: its index in sweep_result::results and the job that ran it.
struct profile_target {
  std::size_t index = 0;
  row_job job;
};

/// The profiling pass over `targets`: fills out.profile and each profiled row's profile. Every
/// failure (no counters, ncu failing, a worker lost) is said once in out.profile.error; the
/// sweep's own results never change.
void profile_rows(const family_registry& families, const run_request& request,
                  std::vector<profile_target> targets, sweep_result& out,
                  const progress_callback& progress);

/// The first line of an ncu log that says what went wrong ("ERR_NVGPUCTRPERM - The user does not
/// have permission ..."), without ncu's "==ERROR== " prefix; "" when there is none.
std::string ncu_first_error(const std::string& log_path);

}  // namespace kl
