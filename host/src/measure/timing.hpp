// Timing: the one module every variant, source or plugin, is measured with.
//
// Samples are CUDA events around the whole operation. Before each cold sample the L2 cache is
// flushed (l2_flush.hpp), so inputs smaller than L2 are not measured from cache. The operation is
// captured once into a CUDA graph and each sample is one graph launch (--launch graph): launched
// kernel by kernel from the stream, a multi-launch operation moved by about 1 us from one row to
// the next and from one run to the next with the position of its commands in the driver's queue
// (docs/measuring.md). Sampling stops once there are enough samples and enough sampled time and
// the stopping rule is met, or at the timeout. Two rules: `stdrel`, nvbench's, waits for the
// relative standard deviation to fall under --max-noise; `ci` waits for the row's interval to lie
// within +-(--max-ci) of the median.
//
// A row is timed in several placements (--placements): between them the problem's buffers, the
// flush buffer and the bound operation move to fresh device memory. Each placement has its own
// samples; the row's interval is what a rerun can move, estimated from how far the placements'
// medians lie apart, so that it covers what varies between runs and not only the sampling noise.
#pragma once

#include "measure/clock_monitor.hpp"
#include "measure/energy.hpp"
#include "measure/l2_flush.hpp"

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kl {

/// When sampling may stop (besides the minimum samples and time, and the timeout).
enum class stop_rule {
  stdrel,  ///< the relative standard deviation is under max_noise (nvbench's rule)
  ci       ///< the median's 95% confidence interval is within +-max_ci of the median
};
const char* to_string(stop_rule r);  ///< "stdrel", "ci"
/// Throws std::invalid_argument for anything but "stdrel" and "ci".
stop_rule parse_stop_rule(const std::string& s);

/// How a sample launches the operation.
enum class launch_mode {
  graph,  ///< captured once into a CUDA graph; each sample is one graph launch
  stream  ///< each sample enqueues the operation's launches on the stream, one by one
};
const char* to_string(launch_mode m);  ///< "graph", "stream"
/// Throws std::invalid_argument for anything but "graph" and "stream".
launch_mode parse_launch_mode(const std::string& s);

/// The defaults are nvbench's (config/kernlab.cfg shortens them for the quick default job).
struct timing_options {
  int warmup_runs = 2;  ///< untimed launches first (module load, caches, clocks)
  int min_samples = 10;
  int max_samples = 1000000;
  double min_time_s = 0.5;   ///< total sampled kernel time before the rule may stop sampling
  double max_noise = 0.005;  ///< stdrel: relative standard deviation that is good enough
  double timeout_s = 15.0;   ///< wall time after which sampling stops regardless
  flush_mode flush = flush_mode::read;  ///< how L2 is made cold before each sample
  stop_rule rule = stop_rule::stdrel;
  double max_ci =
      0.005;  ///< ci: the interval's larger half, relative to the median, that is good enough
  bool keep_samples = false;  ///< --samples: every sample goes into the record, in order
  launch_mode launch = launch_mode::graph;
  /// The fewest placements a row is timed in; min_samples, min_time_s and timeout_s are shared
  /// out among them. The `ci` rule adds placements, up to max_placements, while the row's
  /// interval is wider than max_ci.
  int placements = 4;
  int max_placements = 12;
  /// The worker processes on each GPU a row's placements take turns in (--placement-workers,
  /// worker/spread_executor.hpp): what a process fixes once then varies between placements too.
  /// At most max_placements are started; rows in kernlab itself (--in-process) use one.
  int placement_workers = 1;
  /// The narrowest interval a row is given, relative to its median (--min-interval): two runs
  /// move a row by an offset of this order that the placements of one run do not show
  /// (docs/measuring.md). 0 turns it off.
  double min_interval = 0.003;
  /// --energy: after the samples, the operation runs back to back while NVML is read
  /// (measure/energy.hpp). Not part of the samples or of their statistics.
  energy_options energy;
  /// Racing (kernlab tune --race): a row whose interval lies wholly above this median, in ms,
  /// cannot beat the tune's best so far, and stops being timed as soon as that shows, after
  /// race_min_samples at least (an interval needs them). 0: no race, the row is timed in full.
  double race_ms = 0;
  static constexpr int race_min_samples = 6;
};

struct timing_stats {
  std::size_t samples = 0;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
  double noise = 0;  ///< standard deviation / mean
  /// The distribution-free 95% confidence interval of the median (median_ci_ranks); both 0
  /// when there are too few samples for one (fewer than 6).
  double ci_low_ms = 0, ci_high_ms = 0;
  bool timed_out = false;              ///< stopped by the timeout before the stopping rule was met
  stop_rule rule = stop_rule::stdrel;  ///< the rule sampling stopped by
  flush_mode flush = flush_mode::read;
  // The SM clock while sampling, when NVML can read it (0 when it cannot).
  int sm_clock_min_mhz = 0, sm_clock_max_mhz = 0;
  bool clock_dropped = false;  ///< the clock fell more than 5 % during the samples
  /// Every sample in the order it was taken, with --samples (timing_options::keep_samples);
  /// empty otherwise.
  std::vector<double> samples_ms;
  /// The placements the samples came from (1 when the row was timed in one), each one's median,
  /// and their spread: the standard deviation of those medians relative to the row's median
  /// (0 with one placement).
  int placements = 1;
  std::vector<double> placement_medians_ms;
  double placement_spread = 0;
  launch_mode launch = launch_mode::graph;  ///< how the samples launched the operation
  /// Raced out (timing_options::race_ms): sampling stopped once the interval lay wholly above the
  /// race's bound, before the stopping rule was met; the figures are as precise as the interval.
  bool raced = false;
  /// Why the row was timed otherwise than asked ("" when it was as asked): a graph that could not
  /// be captured, a problem too large to move for a second placement.
  std::string note;

  bool has_ci() const { return ci_high_ms > 0; }
  /// The interval's larger half relative to the median ("+-0.3%" is 0.003); 0 without one.
  double ci_half_width() const;
};

/// Statistics of a set of samples (milliseconds), with the median's confidence interval.
timing_stats summarize(std::vector<double> samples_ms);

/// How far a rerun's median can lie from this run's, from the medians of k placements (k >= 2):
/// the 95% half-width t(k-1) * s * sqrt(2 / k), where s is the medians' standard deviation and
/// sqrt(2 / k) * s that of the difference of two means of k placements. 0 for fewer than 2.
double rerun_half_width(const std::vector<double>& placement_medians_ms);

/// Whether two rows' intervals overlap: neither is faster beyond what a rerun can move. Rows
/// without an interval overlap only when their medians are equal.
bool intervals_overlap(const timing_stats& a, const timing_stats& b);

/// One row's statistics from the statistics of its placements, each with its samples kept: the
/// samples pooled (the median, noise and extremes are theirs), the placements' medians and
/// spread, and the interval: the larger of the pooled median's confidence interval and
/// median -+ rerun_half_width(), never narrower than median -+ min_interval * median. The samples
/// stay in the result with keep_samples only.
timing_stats combine_placements(const std::vector<timing_stats>& parts, bool keep_samples,
                                double min_interval = 0);

/// Whether a row timed in `combined.placements` placements needs no more: the fewest
/// (opt.placements) are done, and the `ci` rule's interval is within max_ci, or max_placements
/// are done, or `elapsed_s` (since the row's first sample) reached the timeout.
bool placements_done(const timing_options& opt, const timing_stats& combined, double elapsed_s);

/// Whether a row stopped before its rule was met: its last placement ran into the timeout, or
/// under the `ci` rule its placements' interval is still wider than max_ci. A raced row did not
/// time out: it stopped by the race.
bool row_timed_out(const timing_options& opt, const timing_stats& combined,
                   bool last_placement_timed_out);

/// Whether a row (or a placement) under a race is out: its interval, from race_min_samples at
/// least, lies wholly above opt.race_ms; or one of its placements was raced out already.
bool raced_out(const timing_options& opt, const timing_stats& t);

/// A tune's race bound as it tightens (kernlab tune --race), in ms: the search lowers it each
/// time a faster point comes back, and a row that races reads it when it starts
/// (runner/device_pool.cpp), so that a row queued before the best it must beat was known still
/// races against it. 0: no bound yet.
using live_race_bound = std::shared_ptr<const std::atomic<double>>;

/// The bound a row starting now races against: the lower of the one it was queued with
/// (`race_ms`, 0 for none) and the live one (null or 0: none).
double race_bound_now(double race_ms, const live_race_bound& live);

/// A row's statistics from its placements: combine_placements(), with the row's verdicts, whether
/// it timed out (row_timed_out) and whether it was raced out (raced_out).
timing_stats combine_row(const timing_options& opt, const std::vector<timing_stats>& parts);

/// The options each placement is timed with: the row's minimum samples, minimum time and timeout
/// shared out among opt.placements, with the samples kept (combine_placements pools them). Under
/// a race, each placement takes race_min_samples at least, so that the first can be judged.
timing_options placement_options(const timing_options& opt);

/// The 1-based ranks (lower, upper) of the order statistics that bound a distribution-free
/// confidence interval of the median of n samples: the largest l with P(B <= l - 1) <=
/// (1 - confidence) / 2 for B ~ Binomial(n, 1/2), and u = n + 1 - l, so that the interval
/// [x(l), x(u)] holds the true median with at least `confidence`. std::nullopt when n is too
/// small (fewer than 6 samples at 95%).
std::optional<std::pair<std::size_t, std::size_t>> median_ci_ranks(std::size_t n,
                                                                   double confidence = 0.95);

/// The stopping rule: true when sampling may stop. `elapsed_s` is wall time since sampling began.
/// With stop_rule::ci, `so_far` must carry the confidence interval.
bool should_stop(const timing_options& opt, const timing_stats& so_far, double sampled_s,
                 double elapsed_s);

/// The samples of one row as they arrive, and the stopping rule applied to them. measure() adds
/// them one at a time; the tests add synthetic streams. The standard deviation is kept running
/// (Welford); the median's interval needs order statistics, found with nth_element (linear time)
/// and only every n/16 samples once the minimum samples and time are reached, so that 100k samples
/// cost a few linear passes, not a sort per sample.
class sample_stream {
 public:
  explicit sample_stream(const timing_options& opt) : opt_(opt) {}
  /// Adds one sample; true when sampling may stop. `elapsed_s`: wall time since sampling began.
  bool add(double ms, double elapsed_s);
  /// The statistics of every sample, with timed_out set when the rule was not met.
  timing_stats finish() const;
  std::size_t interval_checks() const { return checks_; }  ///< how often the interval was computed

 private:
  timing_options opt_;
  std::vector<double> samples_;
  std::vector<double> scratch_;  // reordered by nth_element; samples_ keep their order
  double sampled_s_ = 0, mean_ = 0, m2_ = 0;
  timing_stats running_;
  std::size_t next_check_ = 0, checks_ = 0;
  bool rule_met_ = false;
  bool raced_ = false;
};

/// Measures `op` (which enqueues the whole operation on the stream it gets), flushing L2 with
/// `flusher` before each sample. With launch_mode::graph, `op` is captured once into a graph
/// after the warm-up and each sample launches the graph; an operation that cannot be captured is
/// launched from the stream, and the result's note says why.
/// `prepare`, when given, enqueues what must precede every run of
/// `op` outside the timed region (a start to restore: docs/families.md's `reset = "untimed"`);
/// it runs before each warm-up run and before each sample's flush.
timing_stats measure(const std::function<void(CUstream)>& op, CUstream stream,
                     const timing_options& opt, l2_flusher& flusher,
                     const clock_monitor* clocks = nullptr,
                     const std::function<void(CUstream)>& prepare = {});

}  // namespace kl
