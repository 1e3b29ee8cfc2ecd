// What one (variant, configuration) came to: the record every report is made from.
#pragma once

#include "families/family.hpp"
#include "measure/timing.hpp"
#include "nvrtc/compiler.hpp"
#include "registry/variant.hpp"

#include <optional>
#include <string>

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
  std::optional<nvrtc::resource_usage> resources;
  std::optional<occupancy_info> occupancy;
  double bytes = 0, flops = 0;
  double compile_ms = 0, load_ms = 0, validate_ms = 0;
  std::string
      sanitizer;  ///< compute-sanitizer's verdicts ("memcheck: clean, racecheck: ..."), if run
  bool sanitizer_findings = false;  ///< any tool reported an error or a hazard

  /// A passed row whose median means something: rows run under compute-sanitizer are validated
  /// and run once, at the sanitizer's pace, so they are not timed.
  bool timed() const { return status == outcome::passed && timing && sanitizer.empty(); }
  double gbps() const {
    return timed() && timing->median_ms > 0 ? bytes / (timing->median_ms * 1e6) : 0;
  }
};

/// The canonical key of a measured configuration: what two records must share to be the same
/// measurement (compare matches rows by it, plot groups them, the journal builds on it):
/// "reduce.reduce5 block 256 int32 sum n=16777216", then the shape, the input mode when it is
/// not "exact", and qam256's SNR ("matmul.naive block 256 float32 mm 1024x1024x1024").
std::string configuration_key(const std::string& qualified_name, unsigned block,
                              const problem_config& c);

}  // namespace kl
