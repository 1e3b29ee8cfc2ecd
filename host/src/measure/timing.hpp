// Timing: the one module every variant, source or plugin, is measured with.
//
// Samples are CUDA events around the whole operation. Before each cold sample the L2 cache is
// flushed (l2_flush.hpp), so inputs smaller than L2 are not measured from cache. Sampling
// stops once there are enough samples, enough time has passed and the noise (relative standard
// deviation) is low enough, or at the timeout.
#pragma once

#include "measure/clock_monitor.hpp"
#include "measure/l2_flush.hpp"

#include <cuda.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace kl {

/// The defaults are nvbench's (config/kernlab.cfg shortens them for the quick default job).
struct timing_options {
  int warmup_runs = 2;         ///< untimed launches first (module load, caches, clocks)
  int min_samples = 10;
  int max_samples = 1000000;
  double min_time_s = 0.5;     ///< total sampled kernel time before the noise rule may stop
  double max_noise = 0.005;    ///< relative standard deviation that is good enough
  double timeout_s = 15.0;     ///< wall time after which sampling stops regardless
  flush_mode flush = flush_mode::read;  ///< how L2 is made cold before each sample
};

struct timing_stats {
  std::size_t samples = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
  double noise = 0;            ///< standard deviation / mean
  bool timed_out = false;      ///< stopped by the timeout before the noise rule was met
  flush_mode flush = flush_mode::read;
  // The SM clock while sampling, when NVML can read it (0 when it cannot).
  int sm_clock_min_mhz = 0, sm_clock_max_mhz = 0;
  bool clock_dropped = false;  ///< the clock fell more than 5 % during the samples
};

/// Statistics of a set of samples (milliseconds).
timing_stats summarize(std::vector<double> samples_ms);

/// The stopping rule: true when sampling may stop. `elapsed_s` is wall time since sampling began.
bool should_stop(const timing_options& opt, const timing_stats& so_far, double sampled_s,
                 double elapsed_s);

/// Measures `op` (which enqueues the whole operation on the stream it gets), flushing L2 with
/// `flusher` before each sample.
timing_stats measure(const std::function<void(CUstream)>& op, CUstream stream,
                     const timing_options& opt, l2_flusher& flusher,
                     const clock_monitor* clocks = nullptr);

}  // namespace kl
