#include "measure/timing.hpp"

#include "cuda/resources.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kl {

double timing_stats::ci_half_width() const {
  if (!has_ci() || median_ms <= 0) return 0;
  return std::max(median_ms - ci_low_ms, ci_high_ms - median_ms) / median_ms;
}

std::optional<std::pair<std::size_t, std::size_t>> median_ci_ranks(std::size_t n,
                                                                   double confidence) {
  if (n == 0) return std::nullopt;
  const double tail = (1.0 - confidence) / 2.0;
  const double nd = static_cast<double>(n);
  // Sum the binomial probabilities from 10 standard deviations below n/2 (the mass below is
  // under 1e-23), in logarithms: 0.5^n underflows from n = 1075 on.
  const double sd = std::sqrt(nd) / 2.0;
  const std::size_t k0 = nd / 2.0 > 10.0 * sd ? static_cast<std::size_t>(nd / 2.0 - 10.0 * sd) : 0;
  const double k0d = static_cast<double>(k0);
  double log_pmf = std::lgamma(nd + 1.0) - std::lgamma(k0d + 1.0) - std::lgamma(nd - k0d + 1.0) -
                   nd * std::log(2.0);
  double below = 0;  // P(B <= k - 1)
  std::size_t k = k0;
  for (; k <= n; ++k) {
    const double through_k = below + std::exp(log_pmf);  // P(B <= k)
    if (through_k > tail) break;
    below = through_k;
    log_pmf += std::log((nd - static_cast<double>(k)) / (static_cast<double>(k) + 1.0));
  }
  // P(B <= k - 1) <= tail < P(B <= k): l = k is the largest rank that keeps the coverage.
  if (k == 0) return std::nullopt;
  return std::make_pair(k, n + 1 - k);
}

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
  if (const auto ranks = median_ci_ranks(n)) {
    t.ci_low_ms = s[ranks->first - 1];
    t.ci_high_ms = s[ranks->second - 1];
  }
  return t;
}

namespace {
// Student's t, two-sided 95%, by degrees of freedom 1 to 30; the normal's 1.96 beyond.
double t95(std::size_t df) {
  static const double t[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  return df == 0 ? 0 : df <= 30 ? t[df - 1] : 1.96;
}

double standard_deviation(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}
}  // namespace

double rerun_half_width(const std::vector<double>& medians) {
  const std::size_t k = medians.size();
  if (k < 2) return 0;
  return t95(k - 1) * standard_deviation(medians) * std::sqrt(2.0 / static_cast<double>(k));
}

bool intervals_overlap(const timing_stats& a, const timing_stats& b) {
  const double a_low = a.has_ci() ? a.ci_low_ms : a.median_ms;
  const double a_high = a.has_ci() ? a.ci_high_ms : a.median_ms;
  const double b_low = b.has_ci() ? b.ci_low_ms : b.median_ms;
  const double b_high = b.has_ci() ? b.ci_high_ms : b.median_ms;
  return a_low <= b_high && b_low <= a_high;
}

timing_stats combine_placements(const std::vector<timing_stats>& parts, bool keep_samples,
                                double min_interval) {
  std::vector<double> pooled, medians;
  for (const auto& p : parts) {
    pooled.insert(pooled.end(), p.samples_ms.begin(), p.samples_ms.end());
    medians.push_back(p.median_ms);
  }
  timing_stats t = summarize(pooled);
  if (parts.empty()) return t;
  t.rule = parts.front().rule;
  t.flush = parts.front().flush;
  t.launch = parts.front().launch;
  t.note = parts.front().note;
  t.sm_clock_min_mhz = parts.front().sm_clock_min_mhz;
  for (const auto& p : parts) {
    t.timed_out = t.timed_out || p.timed_out;
    t.raced = t.raced || p.raced;
    t.clock_dropped = t.clock_dropped || p.clock_dropped;
    if (p.sm_clock_min_mhz > 0)
      t.sm_clock_min_mhz = t.sm_clock_min_mhz > 0 ? std::min(t.sm_clock_min_mhz, p.sm_clock_min_mhz)
                                                  : p.sm_clock_min_mhz;
    t.sm_clock_max_mhz = std::max(t.sm_clock_max_mhz, p.sm_clock_max_mhz);
    if (p.launch == launch_mode::stream) t.launch = launch_mode::stream;
    if (t.note.empty()) t.note = p.note;
  }
  t.placements = static_cast<int>(parts.size());
  t.placement_medians_ms = medians;
  if (t.median_ms > 0) t.placement_spread = standard_deviation(medians) / t.median_ms;
  // The interval is at least what a rerun moves by (the placements' spread), and at least the
  // floor; the samples' own interval stays where it is wider.
  const double half = std::max(rerun_half_width(medians), min_interval * t.median_ms);
  if (half > 0) {
    t.ci_low_ms = t.has_ci() ? std::min(t.ci_low_ms, t.median_ms - half) : t.median_ms - half;
    t.ci_high_ms = t.has_ci() ? std::max(t.ci_high_ms, t.median_ms + half) : t.median_ms + half;
  }
  if (keep_samples) t.samples_ms = std::move(pooled);
  return t;
}

bool placements_done(const timing_options& opt, const timing_stats& t, double elapsed_s) {
  if (raced_out(opt, t)) return true;
  if (t.placements < opt.placements) return elapsed_s >= opt.timeout_s;
  if (t.placements >= std::max(opt.placements, opt.max_placements)) return true;
  if (elapsed_s >= opt.timeout_s) return true;
  if (opt.rule != stop_rule::ci) return true;
  return t.has_ci() && t.ci_half_width() <= opt.max_ci;
}

bool row_timed_out(const timing_options& opt, const timing_stats& combined,
                   bool last_placement_timed_out) {
  if (combined.raced) return false;
  return last_placement_timed_out ||
         (opt.rule == stop_rule::ci && combined.placements >= opt.placements &&
          !(combined.has_ci() && combined.ci_half_width() <= opt.max_ci));
}

bool raced_out(const timing_options& opt, const timing_stats& t) {
  if (opt.race_ms <= 0) return false;
  return t.raced || (t.samples >= static_cast<std::size_t>(timing_options::race_min_samples) &&
                     t.has_ci() && t.ci_low_ms > opt.race_ms);
}

double race_bound_now(double race_ms, const live_race_bound& live) {
  const double now = live ? live->load(std::memory_order_acquire) : 0;
  if (now <= 0) return race_ms;
  return race_ms > 0 ? std::min(race_ms, now) : now;
}

timing_stats combine_row(const timing_options& opt, const std::vector<timing_stats>& parts) {
  timing_stats t = combine_placements(parts, opt.keep_samples, opt.min_interval);
  t.raced = raced_out(opt, t);
  t.timed_out = !parts.empty() && row_timed_out(opt, t, parts.back().timed_out);
  return t;
}

timing_options placement_options(const timing_options& opt) {
  timing_options each = opt;
  const int k = std::max(1, opt.placements);
  each.min_samples = std::max(1, (opt.min_samples + k - 1) / k);
  if (opt.race_ms > 0)
    each.min_samples = std::max(each.min_samples, timing_options::race_min_samples);
  each.min_time_s = opt.min_time_s / k;
  each.timeout_s = opt.timeout_s / k;
  each.keep_samples = true;
  each.placements = each.max_placements = 1;
  return each;
}

bool should_stop(const timing_options& opt, const timing_stats& t, double sampled_s,
                 double elapsed_s) {
  if (t.samples >= static_cast<std::size_t>(opt.max_samples)) return true;
  if (elapsed_s >= opt.timeout_s && t.samples >= 1) return true;
  if (t.samples < static_cast<std::size_t>(opt.min_samples) || sampled_s < opt.min_time_s)
    return false;
  if (opt.rule == stop_rule::ci) return t.has_ci() && t.ci_half_width() <= opt.max_ci;
  return t.noise <= opt.max_noise;
}

bool sample_stream::add(double ms, double elapsed_s) {
  samples_.push_back(ms);
  const std::size_t n = samples_.size();
  sampled_s_ += ms / 1e3;
  // Welford's running mean and variance: the noise after every sample at constant cost.
  const double delta = ms - mean_;
  mean_ += delta / static_cast<double>(n);
  m2_ += delta * (ms - mean_);
  running_.samples = n;
  running_.noise = n > 1 && mean_ > 0 ? std::sqrt(m2_ / static_cast<double>(n - 1)) / mean_ : 0.0;

  const bool minimum_reached =
      n >= static_cast<std::size_t>(opt_.min_samples) && sampled_s_ >= opt_.min_time_s;
  // Under a race the interval is wanted from its first samples on, whatever the rule: a row that
  // cannot beat the best so far stops as soon as that shows.
  const bool racing =
      opt_.race_ms > 0 && n >= static_cast<std::size_t>(timing_options::race_min_samples);
  if (((opt_.rule == stop_rule::ci && minimum_reached) || racing) && n >= next_check_) {
    // The interval from order statistics: three selections in a copy, O(n) each.
    if (const auto ranks = median_ci_ranks(n)) {
      scratch_ = samples_;
      auto nth = [&](std::size_t i) {
        std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(i),
                         scratch_.end());
        return scratch_[i];
      };
      const double upper_middle = nth(n / 2);
      // For an even n, the lower middle is the largest of the half that nth_element left below.
      const auto lower_half_end = scratch_.begin() + static_cast<std::ptrdiff_t>(n / 2);
      const double median =
          n % 2 ? upper_middle
                : 0.5 * (*std::max_element(scratch_.begin(), lower_half_end) + upper_middle);
      running_.median_ms = median;
      running_.ci_low_ms = nth(ranks->first - 1);
      running_.ci_high_ms = nth(ranks->second - 1);
      ++checks_;
    }
    next_check_ = n + std::max<std::size_t>(1, n / 16);
  }
  if (racing && running_.has_ci() && running_.ci_low_ms > opt_.race_ms) {
    raced_ = true;
    return true;
  }
  timing_options no_timeout = opt_;
  no_timeout.timeout_s = 1e300;
  no_timeout.max_samples = 0x7fffffff;
  rule_met_ = should_stop(no_timeout, running_, sampled_s_, elapsed_s);
  return rule_met_ || should_stop(opt_, running_, sampled_s_, elapsed_s);
}

timing_stats sample_stream::finish() const {
  timing_stats t = summarize(samples_);
  t.rule = opt_.rule;
  // Stopped without the rule met: by the timeout (or max_samples). The final statistics may
  // meet it where the last check did not; that counts as met.
  timing_options no_limits = opt_;
  no_limits.timeout_s = 1e300;
  no_limits.max_samples = 0x7fffffff;
  t.raced = raced_;
  t.timed_out = !raced_ && !rule_met_ && !should_stop(no_limits, t, sampled_s_, 0);
  if (opt_.keep_samples) t.samples_ms = samples_;
  return t;
}

timing_stats measure(const std::function<void(CUstream)>& op, CUstream stream,
                     const timing_options& opt, l2_flusher& flusher, const clock_monitor* clocks,
                     const std::function<void(CUstream)>& prepare) {
  cuda::event start, stop;
  // The SM clock at the start, every 50 ms of sampling, and at the end.
  clock_range clock;
  auto read_clock = [&] {
    if (clocks) clock.add(clocks->sm_clock_mhz());
  };
  double next_clock_read = 0.05;

  for (int i = 0; i < opt.warmup_runs; ++i) {
    if (prepare) prepare(stream);
    op(stream);
  }
  {
    cuda::wait_scope waiting;
    KL_CU(cuStreamSynchronize(stream));
  }
  // The operation as one graph launch (the graph warmed by one launch), or from the stream.
  cuda::graph graph;
  std::string note;
  if (opt.launch == launch_mode::graph) {
    graph = cuda::graph::capture(stream, op);
    if (graph.ok()) {
      if (prepare) prepare(stream);
      graph.launch(stream);
      cuda::wait_scope waiting;
      KL_CU(cuStreamSynchronize(stream));
    } else {
      note = "launched from the stream: the operation cannot be captured into a graph (" +
             graph.why() + ")";
    }
  }
  auto enqueue = [&](CUstream s) {
    if (graph.ok())
      graph.launch(s);
    else
      op(s);
  };

  sample_stream samples(opt);
  const auto began = std::chrono::steady_clock::now();
  read_clock();
  for (;;) {
    if (prepare) prepare(stream);  // outside the sample, and before the flush evicts it
    flusher.flush(stream);         // before the start event: not part of the sample
    start.record(stream);
    enqueue(stream);
    stop.record(stream);
    stop.synchronize();
    const double ms = stop.elapsed_since(start);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (elapsed >= next_clock_read) {
      read_clock();
      next_clock_read = elapsed + 0.05;
    }
    if (samples.add(ms, elapsed)) break;
  }
  read_clock();
  timing_stats stats = samples.finish();
  stats.sm_clock_min_mhz = clock.min_mhz;
  stats.sm_clock_max_mhz = clock.max_mhz;
  stats.clock_dropped = clock.dropped();
  stats.flush = flusher.mode();
  stats.launch = graph.ok() ? launch_mode::graph : launch_mode::stream;
  stats.note = note;
  return stats;
}

}  // namespace kl
