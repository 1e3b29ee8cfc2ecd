// The human-readable reports: the sweep table (a group per dtype, op and size), the compile
// table of --compile-only, and --list.
#pragma once

#include "cuda/device.hpp"
#include "families/family.hpp"
#include "nvrtc/compile_cache.hpp"
#include "record/result.hpp"
#include "registry/registry.hpp"

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kl {

struct table_options {
  std::string
      baseline;  ///< qualified or short name of the baseline variant; "" picks the family's library
  bool markdown = false;  ///< markdown tables instead of aligned columns
  /// The families, to ask each group's family which roofline it is measured against (TFLOP/s
  /// and % of the FP32 peak for matmul); null: GB/s and % of the bandwidth for every group.
  const family_registry* families = nullptr;
};

/// Prints one group of rows: status, time, GB/s, % of peak, resources, speedups, x of baseline;
/// failures are listed under the table with their whole message.
void print_group(std::ostream& os, const std::vector<result_record>& group,
                 const cuda::device_info& device, const table_options& opt);

/// --profile: one line per profiled row (kernels, DRAM %, achieved occupancy, L2 hit rate, SM %,
/// the two largest warp stalls), the report's path and what the columns mean; or, when the pass
/// fell short, why (once). Prints nothing when no profile was asked for.
void print_profile_table(std::ostream& os, const std::vector<result_record>& results,
                         const profile_run& run, bool markdown);

/// One row per kernel file: instantiations, cache hit or miss, this run's compile time,
/// resources, errors in full.
void print_compile_table(std::ostream& os, const std::vector<compile_record>& compiles,
                         const std::string& arch);

/// Registers, shared memory, spills and theoretical occupancy of every compiled instantiation,
/// from the compiler's report: no GPU needed. `limits` are the SM's (cuda/occupancy.hpp).
void print_resources(std::ostream& os, const std::vector<compile_record>& compiles,
                     const std::string& arch, bool markdown);

/// The same figures as records of a results file (--resources --json/--csv): one per compiled
/// instantiation, `skipped` ("compiled, not run") with its resources and theoretical occupancy,
/// and one `failed` record per file that did not compile. The size is 0: resources do not
/// depend on it.
std::vector<result_record> resource_records(const std::vector<compile_record>& compiles,
                                            const std::string& arch, const std::string& input_mode,
                                            std::uint64_t seed);

/// "compile: 18 files on 2 threads, 17 hits, 1 miss, 184 ms wall (cache ~/.cache/kernlab)"
void print_compile_summary(std::ostream& os, const compile_summary& summary);

/// A file's compile as --watch remembers it between rounds: by value, since every round
/// rebuilds the registry the record's entry points into.
struct compile_snapshot {
  std::string name;  ///< the qualified variant name
  std::size_t instances = 0;
  cache_use cache = cache_use::off;
  double milliseconds = 0;
  std::string registers;  ///< "12", "24-26", or "-"
  std::string error;      ///< empty when it compiled
};
compile_snapshot snapshot_of(const compile_record& c);

/// A --watch round's compile of one file, beside the one before the change (none: a new file).
struct compile_change {
  std::optional<compile_snapshot> before;
  compile_snapshot now;
};

/// A --watch round's row, beside the same configuration's row before the change.
struct row_change {
  std::optional<result_record> before;
  result_record now;
};

/// --watch: the recompiled files, with registers and status before and now, errors in full.
void print_compile_changes(std::ostream& os, const std::vector<compile_change>& changes,
                           const std::string& arch);

/// --watch: the re-run rows, each with the median before and now and the change in %.
void print_row_changes(std::ostream& os, const std::vector<row_change>& rows);

/// `kernlab cache info`: the folder, its entries (size, damaged ones, age), temporary files
/// left behind, and the hit and miss counters over every run.
void print_cache_info(std::ostream& os, const nvrtc::cache_info& info);
/// `kernlab cache prune`: what went, what is left, under which limit.
void print_prune_result(std::ostream& os, const nvrtc::prune_result& r, std::uint64_t limit,
                        const std::filesystem::path& dir);

/// Every registered variant with its origin, and every registration warning.
/// Every variant (of `family`, if given); a tunable file is one line with its number of points.
void print_list(std::ostream& os, const registry& reg, const std::string& family = "");
/// --list-names: what --variant takes, one a line (for shell completion): "all", then every
/// variant's name and every tunable file's, each once, of `family` ("" for every family).
void print_variant_names(std::ostream& os, const registry& reg, const std::string& family = "");
/// The same for a selection of `reg`'s variants (--list --variant ... / --family ...).
void print_list(std::ostream& os, const registry& reg,
                const std::vector<const registry_entry*>& entries,
                const std::map<std::string, std::size_t>& collapsed = {});
///< `collapsed`: the files whose points are listed as one line (entries holds one point each),
///< with their number of points.

/// The baseline row of a group: `name` if given, else the family's library (is_baseline) row.
/// Only a passed row can be a baseline.
const result_record* find_baseline(const std::vector<result_record>& group,
                                   const std::string& name);

/// The same, among the rows measured on the GPU with this UUID (--devices: a row's ratio uses the
/// baseline measured on its own GPU).
const result_record* find_baseline_on(const std::vector<result_record>& group,
                                      const std::string& name, const std::string& gpu_uuid);

/// Counts per outcome, and the exit code they give: 0 all passed (skips allowed), 1 otherwise.
int exit_code_for(const std::vector<result_record>& results);

}  // namespace kl
