// What one (variant, configuration) came to, the record every report is made from, and what a
// whole sweep came to.
#pragma once

#include "cuda/device.hpp"
#include "families/operation.hpp"
#include "families/problem_config.hpp"
#include "measure/ncu_report.hpp"
#include "measure/timing.hpp"
#include "nvrtc/compiler.hpp"
#include "registry/registry.hpp"
#include "spec/variant.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kl {

enum class outcome {
  passed,        ///< validated, then timed
  wrong_result,  ///< ran, but the output differs from the reference
  failed,        ///< could not run: compile error, bad header, launch or plugin error
  skipped,       ///< cannot run here (unsupported block, dtype, device limit); not a failure
  crashed,       ///< the kernel (or plugin) faulted: a sticky CUDA error, or the worker died
  timeout,       ///< a launch did not finish within --kernel-timeout; the worker was killed
  suspect        ///< was running when an earlier run went down (--resume); not run again
};
/// The table's word for an outcome ("passed", "WRONG", ...).
const char* to_string(outcome);
/// The stable name in results files ("passed", "wrong_result", "failed", "skipped").
const char* outcome_name(outcome);

/// Occupancy from the function's resources and the block size.
struct occupancy_info {
  int blocks_per_sm = 0;
  double fraction = 0;  ///< resident threads / the SM's maximum
};

struct result_record {
  variant_descriptor variant;
  problem_config config;
  unsigned block = 0;  ///< 0 when the block size does not apply
  outcome status = outcome::failed;
  std::string message;  ///< the reason for a skip, the error of a failure
  check_result check;   ///< expected and got, for a wrong result
  std::optional<timing_stats> timing;
  /// --energy: the figures, or why there are none; absent when energy was not asked for or
  /// NVML cannot be used here (the run says why, once).
  std::optional<energy_stats> energy;
  std::optional<nvrtc::resource_usage> resources;
  std::optional<occupancy_info> occupancy;
  double bytes = 0, flops = 0;
  /// What the row's throughput is measured against: "bandwidth" (GB/s, DRAM peak), "compute"
  /// (TFLOP/s, FP32 peak) or "tensor" (TFLOP/s, 16-bit tensor-core peak), from its family; ""
  /// when the row never reached its problem.
  std::string roofline;
  /// Measured in FLOP/s against a compute peak (roofline "compute" or "tensor"), not in GB/s.
  bool compute_bound() const { return is_compute_roofline(roofline); }
  double compile_ms = 0, load_ms = 0, validate_ms = 0;
  /// compute-sanitizer's verdicts ("memcheck: clean, racecheck: ..."), if it ran.
  std::string sanitizer;
  bool sanitizer_findings = false;  ///< any tool reported an error or a hazard
  /// Not measured in this run: taken from the journal of the run that --resume continues.
  bool resumed = false;
  /// Nsight Compute's figures for one more run of the row (--profile); none when not profiled.
  std::optional<profile_summary> profile;
  /// The GPU that ran the row (its median is that GPU's alone); none for a row that never reached
  /// one (a skip, a compile error) or read from a file written before records named their GPU.
  std::optional<cuda::gpu_identity> gpu;

  /// A passed row whose median means something: rows run under compute-sanitizer are validated
  /// and run once, at the sanitizer's pace, so they are not timed.
  bool timed() const { return status == outcome::passed && timing && sanitizer.empty(); }
  double gbps() const {
    return timed() && timing->median_ms > 0 ? bytes / (timing->median_ms * 1e6) : 0;
  }
  double tflops() const {
    return timed() && timing->median_ms > 0 ? flops / (timing->median_ms * 1e9) : 0;
  }
  /// A timed row with energy figures.
  bool has_energy() const { return timed() && energy && energy->measured(); }
};

/// The canonical key of a measured configuration: what two records must share to be the same
/// measurement (compare matches rows by it, plot groups them, the journal builds on it):
/// "reduce.reduce5 block 256 int32 sum n=16777216", then the shape, the input mode when it is
/// not "exact", and the real-valued axes ("matmul.naive block 256 float32 mm 1024x1024x1024").
std::string configuration_key(const std::string& qualified_name, unsigned block,
                              const problem_config& c);

// What a sweep compiled and ran: the compile stage, then every row.

/// One template instantiation a file was compiled for.
struct instantiation {
  std::string name_expression;
  unsigned block = 0;
  std::string dtype, op;
  /// The header's shared_bytes at this block and dtype: the dynamic shared memory a launch asks
  /// for (--resources counts it in the occupancy beside the kernel's static bytes).
  unsigned dynamic_shared_bytes = 0;
};

/// Where a file's compiled image came from.
enum class cache_use {
  off,  ///< no cache (or nothing to compile)
  hit,  ///< loaded from the cache
  miss  ///< compiled by NVRTC (and stored, if it compiled)
};
const char* to_string(cache_use);

/// One kernel file's compilation for this sweep.
struct compile_record {
  const registry_entry* entry = nullptr;
  std::vector<instantiation> instances;
  nvrtc::compile_result result;
  std::string error;     ///< a header error or an NVRTC failure; empty when it compiled
  bool stopped = false;  ///< Ctrl-C stopped its compile (`error` says so): no verdict on the file
  cache_use cache = cache_use::off;
  /// What the file cost this run, on its compile thread: the key and lookup, and on a miss
  /// NVRTC and the store. (result.milliseconds is NVRTC's time when the image was made.)
  double milliseconds = 0;
  std::string key;  ///< the cache key in hex; "" if not compiled, or neither cached nor wanted
};

/// The compile stage of a sweep in numbers.
struct compile_summary {
  std::size_t files = 0;  ///< files compiled or looked up (not those with a header error)
  std::size_t hits = 0, misses = 0, failed = 0;
  unsigned jobs = 0;      ///< compile threads
  double wall_ms = 0;     ///< from the stage's start until its last file was ready
  std::string cache_dir;  ///< "" when the cache is off
};

/// The profiling pass of a sweep (--profile): where its report is, and why it fell short, if it
/// did. The rows' own figures are in their records.
struct profile_run {
  bool requested = false;
  std::string tool;      ///< the ncu that ran
  std::string report;    ///< the .ncu-rep file; "" when ncu wrote none
  std::string log;       ///< ncu's and the profiled worker's output
  std::string error;     ///< why rows have no profile ("" when every selected row has one)
  std::size_t rows = 0;  ///< rows selected for profiling (those that passed)
};

struct sweep_result {
  /// The first GPU rows run on (--device, the first of --devices): its architecture is the
  /// compile target.
  std::optional<cuda::device_info> device;
  /// Every GPU rows run on, the first being `device`; one entry without --devices.
  std::vector<cuda::device_info> devices;
  std::string no_device_reason;  ///< why there is no GPU here, if there is none
  std::string arch;
  /// An empty kernel, timed like every variant: the floor under any one-launch operation here.
  std::optional<timing_stats> launch_floor;
  int workers_started = 0;           ///< more than one: some kernel crashed or hung a worker
  std::string clock_monitor_status;  ///< "" when SM clocks were read, else why not
  std::string energy_status;         ///< "" when NVML can measure energy here, else why not
  /// Every source variant's compile, in request order; complete once run() returns (the rows
  /// are run while later files still compile).
  std::vector<compile_record> compiles;
  compile_summary compile_stats;
  /// Problems with the cache, each reported once (a damaged entry, a folder that cannot be
  /// written); they never fail a variant.
  std::vector<std::string> warnings;
  std::vector<result_record> results;
  /// Ctrl-C (or SIGTERM) stopped the run early: `results` holds the rows finished before it.
  bool interrupted = false;
  profile_run profile;
};

}  // namespace kl
