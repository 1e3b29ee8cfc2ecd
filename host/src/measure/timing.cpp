#include "measure/timing.hpp"

#include "cuda/resources.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace kl {

timing_stats summarize(std::vector<double> s) {
  timing_stats t;
  t.samples = s.size();
  if (s.empty()) return t;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  t.median_ms = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  t.min_ms = s.front();
  t.max_ms = s.back();
  t.mean_ms = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  if (n > 1 && t.mean_ms > 0) {
    double var = 0;
    for (double x : s) var += (x - t.mean_ms) * (x - t.mean_ms);
    t.noise = std::sqrt(var / static_cast<double>(n - 1)) / t.mean_ms;
  }
  return t;
}

bool should_stop(const timing_options& opt, const timing_stats& t, double sampled_s,
                 double elapsed_s) {
  if (t.samples >= static_cast<std::size_t>(opt.max_samples)) return true;
  if (elapsed_s >= opt.timeout_s && t.samples >= 1) return true;
  return t.samples >= static_cast<std::size_t>(opt.min_samples) && sampled_s >= opt.min_time_s &&
         t.noise <= opt.max_noise;
}

timing_stats measure(const std::function<void(CUstream)>& op, CUstream stream,
                     const timing_options& opt, l2_flusher& flusher,
                     const clock_monitor* clocks) {
  cuda::event start, stop;
  // The SM clock at the start, every 50 ms of sampling, and at the end.
  clock_range clock;
  auto read_clock = [&] {
    if (clocks) clock.add(clocks->sm_clock_mhz());
  };
  double next_clock_read = 0.05;

  for (int i = 0; i < opt.warmup_runs; ++i) op(stream);
  {
    cuda::wait_scope waiting;
    KL_CU(cuStreamSynchronize(stream));
  }

  std::vector<double> samples;
  double sampled_s = 0;
  // Welford's running mean and variance: the stopping rule needs the noise after every sample,
  // and sorting all samples each time would cost quadratic time for microsecond kernels.
  double mean = 0, m2 = 0;
  timing_stats running;
  const auto began = std::chrono::steady_clock::now();
  read_clock();
  for (;;) {
    flusher.flush(stream);  // before the start event: not part of the sample
    start.record(stream);
    op(stream);
    stop.record(stream);
    stop.synchronize();
    const double ms = stop.elapsed_since(start);
    samples.push_back(ms);
    sampled_s += ms / 1e3;
    const double delta = ms - mean;
    mean += delta / static_cast<double>(samples.size());
    m2 += delta * (ms - mean);
    running.samples = samples.size();
    running.noise = samples.size() > 1 && mean > 0
                        ? std::sqrt(m2 / static_cast<double>(samples.size() - 1)) / mean
                        : 0.0;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (elapsed >= next_clock_read) {
      read_clock();
      next_clock_read = elapsed + 0.05;
    }
    if (should_stop(opt, running, sampled_s, elapsed)) {
      timing_options no_timeout = opt;
      no_timeout.timeout_s = 1e300;
      running.timed_out = !should_stop(no_timeout, running, sampled_s, elapsed);
      break;
    }
  }
  read_clock();
  timing_stats stats = summarize(std::move(samples));
  stats.timed_out = running.timed_out;
  stats.sm_clock_min_mhz = clock.min_mhz;
  stats.sm_clock_max_mhz = clock.max_mhz;
  stats.clock_dropped = clock.dropped();
  stats.flush = flusher.mode();
  return stats;
}

}  // namespace kl
