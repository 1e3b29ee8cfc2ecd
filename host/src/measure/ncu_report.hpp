// Nsight Compute's numbers for a row (--profile): the raw page of a report as ncu prints it in CSV
// (`ncu --import R.ncu-rep --csv --page raw --print-nvtx-rename kernel`), read into one entry per
// profiled kernel, and the kernels of one row summed up into what the profile table shows.
#pragma once

#include <istream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// The metrics kernlab asks ncu for (`--metrics`): DRAM throughput, achieved occupancy, L2 hit
/// rate, SM throughput, the kernel's duration and every warp-stall reason.
extern const char* const ncu_metrics;

/// The NVTX range a row's profiled run is pushed in: "kl/row12". ncu profiles only the kernels
/// inside such ranges (--nvtx-include) and names each one after its range.
std::string profile_range_name(std::size_t row);

/// One warp-stall reason: cycles a warp spent stalled for it per instruction it issued.
struct stall_reason {
  std::string name;  ///< ncu's name without its prefix and suffix: "long_scoreboard"
  double cycles = 0;
};

/// One profiled kernel launch: a data line of the raw page.
struct ncu_kernel {
  std::string id;     ///< ncu's launch index ("ID")
  std::string name;   ///< "Kernel Name", with the NVTX range's prefix when renamed
  std::string range;  ///< "kl/row12": the row's range (the name's prefix, else in the NVTX stack)
  std::optional<double> duration_ns;    ///< gpu__time_duration.sum
  std::optional<double> dram_pct;       ///< dram__throughput.avg.pct_of_peak_sustained_elapsed
  std::optional<double> occupancy_pct;  ///< sm__warps_active.avg.pct_of_peak_sustained_active
  std::optional<double> l2_hit_pct;     ///< lts__t_sector_hit_rate.pct
  std::optional<double> sm_pct;         ///< sm__throughput.avg.pct_of_peak_sustained_elapsed
  /// Every stall reason the page has a number for, but "selected" (the cycle the warp issued,
  /// not a stall), in the page's order.
  std::vector<stall_reason> stalls;
};

/// Reads the raw page: the lines before the header ("ID", ...) are skipped (ncu's own ==PROF==
/// lines, the program's output), the line after it holds the units, then one line per kernel.
/// Values may be quoted, carry thousands separators ("2,048"), or be "n/a" (no value). Throws
/// std::runtime_error naming what is wrong: no header, a line that is not CSV, a time unit it does
/// not know.
std::vector<ncu_kernel> parse_ncu_raw_csv(std::istream& in);

/// A row's kernels, summed up. Each figure is the average over the kernels that have it, weighted
/// by their durations (the kernels of a row run one after another): a row of two kernels, one
/// long at 90% of DRAM bandwidth and one short at 10%, is mostly the first.
struct profile_summary {
  int kernels = 0;         ///< kernels profiled in the row's range
  double duration_us = 0;  ///< their durations under the profiler, summed
  std::optional<double> dram_pct, occupancy_pct, l2_hit_pct, sm_pct;
  std::vector<stall_reason> top_stalls;  ///< the two largest (time-weighted) reasons, largest first
  std::string range;                     ///< the NVTX range: the kernels' name prefix in the report
  std::string report;  ///< the .ncu-rep file that holds every kernel's full profile
  std::string note;    ///< why there is nothing to show ("no kernel ran in its range"), else ""
};

/// Sums up `kernels` (a row's, in launch order). Zero kernels give kernels = 0 and no figures.
profile_summary summarize_kernels(const std::vector<const ncu_kernel*>& kernels);

/// The kernels of each range ("kl/row12" -> its kernels, in launch order); kernels outside every
/// row's range are left out.
std::map<std::string, std::vector<const ncu_kernel*>> kernels_by_range(
    const std::vector<ncu_kernel>& kernels);

}  // namespace kl
