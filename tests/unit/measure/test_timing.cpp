// The statistics and the stopping rule, with synthetic samples (no GPU).
#include "measure/timing.hpp"
#include "record/record_json.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

namespace kl {
namespace {

TEST(Timing, Summarize) {
  const auto s = summarize({3, 1, 2, 10});
  EXPECT_EQ(s.samples, 4u);
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.min_ms, 1);
  EXPECT_DOUBLE_EQ(s.max_ms, 10);
  EXPECT_DOUBLE_EQ(s.mean_ms, 4);
  EXPECT_NEAR(s.noise, 4.0825 / 4, 1e-4);  // sample standard deviation / mean
  EXPECT_DOUBLE_EQ(summarize({5}).median_ms, 5);
  EXPECT_EQ(summarize({5}).noise, 0);
  EXPECT_EQ(summarize({}).samples, 0u);
}

TEST(Timing, DefaultsAreNvbenchs) {
  const timing_options o;
  EXPECT_EQ(o.min_samples, 10);
  EXPECT_DOUBLE_EQ(o.min_time_s, 0.5);
  EXPECT_DOUBLE_EQ(o.max_noise, 0.005);
  EXPECT_DOUBLE_EQ(o.timeout_s, 15.0);
  EXPECT_EQ(o.flush, flush_mode::read);
  // Not nvbench's: each sample one graph launch, each row in several placements.
  EXPECT_EQ(o.launch, launch_mode::graph);
  EXPECT_EQ(o.placements, 4);
  EXPECT_EQ(o.max_placements, 12);
}

TEST(Timing, ClockRange) {
  clock_range c;
  EXPECT_FALSE(c.dropped());
  c.add(1980);
  c.add(0);  // an unreadable clock is ignored
  c.add(1900);
  EXPECT_FALSE(c.dropped());  // 4 % down
  c.add(1800);
  EXPECT_TRUE(c.dropped());  // 9 % down
  EXPECT_EQ(c.min_mhz, 1800);
  EXPECT_EQ(c.max_mhz, 1980);
}

TEST(Timing, StoppingRule) {
  timing_options o;
  o.min_samples = 10;
  o.min_time_s = 0.5;
  o.max_noise = 0.005;
  o.timeout_s = 15;
  timing_stats t;
  t.samples = 9;
  t.noise = 0.001;
  EXPECT_FALSE(should_stop(o, t, 1.0, 1.0));  // too few samples
  t.samples = 10;
  EXPECT_TRUE(should_stop(o, t, 1.0, 1.0));
  EXPECT_FALSE(should_stop(o, t, 0.4, 1.0));  // too little sampled time
  t.noise = 0.01;
  EXPECT_FALSE(should_stop(o, t, 1.0, 1.0));  // too noisy
  EXPECT_TRUE(should_stop(o, t, 1.0, 15.0));  // but the timeout ends it
  t.samples = static_cast<std::size_t>(o.max_samples);
  EXPECT_TRUE(should_stop(o, t, 0.0, 0.0));
}

// The ranks of the median's 95% confidence interval, against exact binomial sums (Python's
// math.comb): the largest l with P(B <= l - 1) <= 0.025, B ~ Binomial(n, 1/2), and n + 1 - l.
TEST(MedianInterval, RanksFromTheBinomial) {
  using ranks = std::pair<std::size_t, std::size_t>;
  EXPECT_FALSE(median_ci_ranks(0));
  EXPECT_FALSE(median_ci_ranks(5));  // P(B = 0) = 1/32 > 0.025: no interval holds 95%
  EXPECT_EQ(median_ci_ranks(6), ranks(1, 6));
  EXPECT_EQ(median_ci_ranks(10), ranks(2, 9));
  EXPECT_EQ(median_ci_ranks(11), ranks(2, 10));
  EXPECT_EQ(median_ci_ranks(20), ranks(6, 15));
  EXPECT_EQ(median_ci_ranks(100), ranks(40, 61));
  EXPECT_EQ(median_ci_ranks(1000), ranks(469, 532));
  EXPECT_EQ(median_ci_ranks(10000), ranks(4902, 5099));
  // Far past where 0.5^n underflows, the normal approximation n/2 -+ 1.96 sqrt(n) / 2 agrees.
  const auto big = median_ci_ranks(1000000);
  ASSERT_TRUE(big);
  EXPECT_NEAR(static_cast<double>(big->first), 500000 - 980, 2);
  EXPECT_EQ(big->second, 1000001 - big->first);
}

TEST(MedianInterval, SummarizeGivesTheOrderStatistics) {
  std::vector<double> s;
  for (int i = 100; i >= 1; --i) s.push_back(i);  // 1 .. 100, in reverse
  const auto t = summarize(s);
  EXPECT_DOUBLE_EQ(t.median_ms, 50.5);
  EXPECT_DOUBLE_EQ(t.ci_low_ms, 40);   // x(40)
  EXPECT_DOUBLE_EQ(t.ci_high_ms, 61);  // x(61)
  EXPECT_NEAR(t.ci_half_width(), 10.5 / 50.5, 1e-12);
  EXPECT_FALSE(summarize({1, 2, 3, 4, 5}).has_ci());
  EXPECT_EQ(summarize({1, 2, 3, 4, 5}).ci_half_width(), 0);
}

TEST(MedianInterval, StopRuleNames) {
  EXPECT_EQ(parse_stop_rule("ci"), stop_rule::ci);
  EXPECT_EQ(parse_stop_rule("stdrel"), stop_rule::stdrel);
  EXPECT_THROW(parse_stop_rule("median"), std::invalid_argument);
  EXPECT_STREQ(to_string(stop_rule::ci), "ci");
  EXPECT_EQ(timing_options{}.rule, stop_rule::stdrel);  // nvbench's rule unless asked
}

// A microsecond kernel's samples: mostly 10 us with 1% jitter, and a long tail (one sample in 20
// is 2x to 5x slower: a preempted launch, a clock change). The standard deviation stays near 30%
// for ever; the median is precise after a few hundred samples.
std::vector<double> long_tailed(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, 0.01);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) {
    double ms = 0.010 * (1.0 + jitter(rng));
    if (u(rng) < 0.05) ms *= 2.0 + 3.0 * u(rng);
    out.push_back(ms);
  }
  return out;
}

// Feeds a stream sample by sample, 20 us of wall time each (n / 50000 s: exact at the timeouts
// below); returns the samples taken.
std::size_t samples_until_stop(sample_stream& s, const std::vector<double>& stream) {
  std::size_t n = 0;
  for (double ms : stream) {
    ++n;
    if (s.add(ms, static_cast<double>(n) / 50000.0)) return n;
  }
  return n;
}

TEST(StoppingRule, CiStopsWhereStdrelRunsToTheTimeout) {
  timing_options o;
  o.min_samples = 10;
  o.min_time_s = 0.001;  // 100 samples of 10 us
  o.timeout_s = 1.0;     // 50000 samples of 20 us wall
  o.max_noise = 0.005;
  o.max_ci = 0.005;
  const auto stream = long_tailed(60000, 1);

  o.rule = stop_rule::stdrel;
  sample_stream by_noise(o);
  EXPECT_EQ(samples_until_stop(by_noise, stream), 50000u);  // the timeout
  const timing_stats noisy = by_noise.finish();
  EXPECT_TRUE(noisy.timed_out);
  EXPECT_GT(noisy.noise, 0.1);

  o.rule = stop_rule::ci;
  sample_stream by_ci(o);
  const std::size_t n = samples_until_stop(by_ci, stream);
  double sampled_ms = 0;
  for (std::size_t i = 0; i < n; ++i) sampled_ms += stream[i];
  EXPECT_GE(sampled_ms, 1.0);  // not before the minimum time
  EXPECT_LT(n, 2000u);         // long before the timeout
  const timing_stats t = by_ci.finish();
  EXPECT_FALSE(t.timed_out);
  EXPECT_EQ(t.rule, stop_rule::ci);
  EXPECT_LE(t.ci_half_width(), 0.005);
  EXPECT_NEAR(t.median_ms, 0.010, 0.0001);
  EXPECT_LE(t.ci_low_ms, t.median_ms);
  EXPECT_GE(t.ci_high_ms, t.median_ms);
}

TEST(StoppingRule, CiWaitsForTheMinimumAndTimesOutOnABimodalStream) {
  timing_options o;
  o.rule = stop_rule::ci;
  o.min_samples = 50;
  o.min_time_s = 0;
  o.timeout_s = 0.2;  // 10000 samples of 20 us
  o.max_ci = 0.005;
  // Constant samples: the interval is empty at once, but not before min_samples.
  sample_stream constant(o);
  EXPECT_EQ(samples_until_stop(constant, std::vector<double>(1000, 0.01)), 50u);
  EXPECT_FALSE(constant.finish().timed_out);
  // Two equal modes 20% apart: the median jumps between them and its interval never narrows.
  std::vector<double> bimodal;
  for (int i = 0; i < 20000; ++i) bimodal.push_back(i % 2 ? 0.010 : 0.012);
  sample_stream split(o);
  EXPECT_EQ(samples_until_stop(split, bimodal), 10000u);
  const timing_stats t = split.finish();
  EXPECT_TRUE(t.timed_out);
  EXPECT_GT(t.ci_half_width(), 0.05);
}

TEST(StoppingRule, TheIntervalIsComputedRarely) {
  // 100k samples that never meet the rule: the interval is recomputed every n/16 samples, about
  // 16 ln(100k / 10) ~ 150 times, not 100k times.
  timing_options o;
  o.rule = stop_rule::ci;
  o.min_time_s = 0;
  o.max_ci = 1e-9;
  o.timeout_s = 1e9;
  o.max_samples = 100000;
  sample_stream s(o);
  std::vector<double> stream;
  // Spread evenly over 10 .. 11 us (the golden ratio's multiples, modulo 1): no two alike, so
  // the interval never closes to nothing.
  for (int i = 0; i < 100000; ++i) {
    const double x = 0.6180339887498949 * i;
    stream.push_back(0.010 + 0.001 * (x - std::floor(x)));
  }
  EXPECT_EQ(samples_until_stop(s, stream), 100000u);
  EXPECT_LT(s.interval_checks(), 250u);
  EXPECT_GT(s.interval_checks(), 100u);
  EXPECT_TRUE(s.finish().timed_out);
}

TEST(StoppingRule, CiRuleNeedsTheInterval) {
  timing_options o;
  o.rule = stop_rule::ci;
  o.min_samples = 10;
  o.min_time_s = 0.5;
  o.max_ci = 0.005;
  timing_stats t;
  t.samples = 100;
  t.median_ms = 1.0;
  EXPECT_FALSE(should_stop(o, t, 1.0, 1.0));  // no interval yet
  t.ci_low_ms = 0.997;
  t.ci_high_ms = 1.004;
  EXPECT_TRUE(should_stop(o, t, 1.0, 1.0));   // +-0.4%
  EXPECT_FALSE(should_stop(o, t, 0.4, 1.0));  // too little sampled time
  t.ci_high_ms = 1.006;
  EXPECT_FALSE(should_stop(o, t, 1.0, 1.0));  // +0.6%
  t.noise = 0.0001;
  EXPECT_FALSE(should_stop(o, t, 1.0, 1.0));  // the noise does not count under ci
}

// A placement's statistics: `n` samples around `median` (ms), kept, as measure() returns them.
timing_stats placement(double median, int n = 101, double spread = 0.001) {
  std::vector<double> s;
  for (int i = 0; i < n; ++i) s.push_back(median + spread * (i - n / 2) / n);
  timing_stats t = summarize(s);
  t.samples_ms = s;
  return t;
}

TEST(Placements, TheRerunIntervalIsStudentsTOverThePlacementsMedians) {
  EXPECT_EQ(rerun_half_width({}), 0);
  EXPECT_EQ(rerun_half_width({1.0}), 0);
  // Medians 1, 2, 3: s = 1, k = 3, t(2) = 4.303: 4.303 * 1 * sqrt(2/3).
  EXPECT_NEAR(rerun_half_width({1, 2, 3}), 4.303 * std::sqrt(2.0 / 3), 1e-9);
  // Equal medians: nothing moves between placements.
  EXPECT_EQ(rerun_half_width({2, 2, 2, 2}), 0);
  // Past 30 degrees of freedom, the normal's 1.96.
  std::vector<double> many(40);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = i % 2 ? 1.0 : 3.0;
  const double s = std::sqrt(40.0 / 39.0);
  EXPECT_NEAR(rerun_half_width(many), 1.96 * s * std::sqrt(2.0 / 40), 1e-9);
}

TEST(Placements, CombinedRowsPoolTheSamplesAndWidenTheIntervalToTheSpread) {
  const timing_stats row = combine_placements(
      {placement(1.00), placement(1.02), placement(0.99), placement(1.01)}, false);
  EXPECT_EQ(row.placements, 4);
  EXPECT_EQ(row.samples, 404u);
  ASSERT_EQ(row.placement_medians_ms.size(), 4u);
  EXPECT_NEAR(row.placement_medians_ms[1], 1.02, 1e-12);
  EXPECT_TRUE(row.samples_ms.empty());  // kept only when asked
  // The samples' own interval is a few microseconds wide; the placements' spread sets it.
  const double half = rerun_half_width({1.00, 1.02, 0.99, 1.01});
  EXPECT_NEAR(row.ci_high_ms - row.median_ms, half, 1e-9);
  EXPECT_NEAR(row.median_ms - row.ci_low_ms, half, 1e-9);
  EXPECT_NEAR(row.placement_spread, 0.0129099 / row.median_ms, 1e-6);
  EXPECT_EQ(combine_placements({placement(1.0)}, true).samples_ms.size(), 101u);
  // One placement keeps the samples' own interval and has no spread.
  const timing_stats one = combine_placements({placement(1.0)}, false);
  EXPECT_EQ(one.placements, 1);
  EXPECT_EQ(one.placement_spread, 0);
  EXPECT_TRUE(one.has_ci());
  EXPECT_LT(one.ci_half_width(), 0.001);
}

TEST(Placements, NoIntervalIsNarrowerThanTheFloor) {
  // Four placements that agree to the sample: their own interval is a few parts in a thousand
  // of a microsecond wide; the floor (0.3% of the median) is what a rerun is given.
  const std::vector<timing_stats> parts = {placement(1.0), placement(1.0), placement(1.0),
                                           placement(1.0)};
  const timing_stats bare = combine_placements(parts, false);
  EXPECT_LT(bare.ci_half_width(), 0.001);
  const timing_stats floored = combine_placements(parts, false, 0.003);
  EXPECT_NEAR(floored.ci_high_ms - floored.median_ms, 0.003 * floored.median_ms, 1e-12);
  EXPECT_NEAR(floored.median_ms - floored.ci_low_ms, 0.003 * floored.median_ms, 1e-12);
  // A wider interval of the placements' own is kept as it is.
  const std::vector<timing_stats> apart = {placement(1.00), placement(1.02), placement(0.99),
                                           placement(1.01)};
  const timing_stats wide = combine_placements(apart, false, 0.003);
  EXPECT_NEAR(wide.ci_high_ms - wide.median_ms, rerun_half_width({1.00, 1.02, 0.99, 1.01}), 1e-9);
  // One placement, and a floor of 0: the samples' interval alone.
  EXPECT_NEAR(combine_placements({placement(1.0)}, false, 0.01).ci_half_width(), 0.01, 1e-9);
  EXPECT_EQ(combine_placements(parts, false, 0).ci_half_width(), bare.ci_half_width());
}

TEST(Placements, TheFloorIsKeptInTheResultsTimingOptions) {
  timing_options t;
  t.min_interval = 0.004;
  EXPECT_DOUBLE_EQ(timing_options_from_json(to_json(t)).min_interval, 0.004);
  nlohmann::json without = to_json(t);
  without.erase("min_interval");
  EXPECT_THROW(timing_options_from_json(without), std::exception) << "every field is in version 2";
}

TEST(Racing, ARacedRowSaysSoInItsRecordAndOthersKeepTheirBytes) {
  timing_stats t = placement(1.0);
  EXPECT_FALSE(to_json(t).contains("raced")) << "a row that did not race writes what it always did";
  EXPECT_FALSE(timing_stats_from_json(to_json(t)).raced);
  t.raced = true;
  EXPECT_EQ(to_json(t).at("raced"), true);
  EXPECT_TRUE(timing_stats_from_json(to_json(t)).raced);
  timing_options o;
  EXPECT_FALSE(to_json(o).contains("race_us")) << "a run's timing options keep their bytes";
  o.race_ms = 0.25;
  EXPECT_DOUBLE_EQ(timing_options_from_json(to_json(o)).race_ms, 0.25);
}

TEST(Placements, AStreamLaunchOrANoteInAnyPlacementIsTheRows) {
  timing_stats a = placement(1.0), b = placement(1.0);
  b.launch = launch_mode::stream;
  b.note = "launched from the stream: why";
  b.timed_out = true;
  const timing_stats row = combine_placements({a, b}, false);
  EXPECT_EQ(row.launch, launch_mode::stream);
  EXPECT_EQ(row.note, "launched from the stream: why");
  EXPECT_TRUE(row.timed_out);
}

TEST(Placements, TheCiRuleAddsPlacementsWhileTheIntervalIsWide) {
  timing_options o;
  o.rule = stop_rule::ci;
  o.max_ci = 0.005;
  o.placements = 4;
  o.max_placements = 6;
  o.timeout_s = 10;
  std::vector<timing_stats> parts = {placement(1.00), placement(1.00), placement(1.00)};
  EXPECT_FALSE(placements_done(o, combine_placements(parts, false), 0.1));  // 3 of the fewest 4
  parts.push_back(placement(1.00));
  EXPECT_TRUE(placements_done(o, combine_placements(parts, false), 0.1));  // agreeing: done
  parts.back() = placement(1.05);  // one placement 5% away: the interval is too wide
  EXPECT_FALSE(placements_done(o, combine_placements(parts, false), 0.1));
  EXPECT_TRUE(placements_done(o, combine_placements(parts, false), 10.0));  // the row's timeout
  parts.push_back(placement(1.00));
  parts.push_back(placement(1.00));
  EXPECT_TRUE(placements_done(o, combine_placements(parts, false), 0.1));  // max_placements
  // stdrel judges the samples within each placement, not the placements: the fewest are enough.
  o.rule = stop_rule::stdrel;
  parts.resize(4);
  EXPECT_TRUE(placements_done(o, combine_placements(parts, false), 0.1));
}

TEST(Placements, EachPlacementGetsItsShareOfTheRowsBudget) {
  timing_options o;
  o.min_samples = 10;
  o.min_time_s = 0.05;
  o.timeout_s = 1;
  o.placements = 4;
  const timing_options each = placement_options(o);
  EXPECT_EQ(each.min_samples, 3);  // rounded up
  EXPECT_DOUBLE_EQ(each.min_time_s, 0.0125);
  EXPECT_DOUBLE_EQ(each.timeout_s, 0.25);
  EXPECT_TRUE(each.keep_samples);
  EXPECT_EQ(each.placements, 1);
}

TEST(Placements, OverlappingIntervalsAreTies) {
  timing_stats a = placement(1.00), b = placement(1.00);
  a.ci_low_ms = 0.99, a.ci_high_ms = 1.01;
  b.median_ms = 1.015, b.ci_low_ms = 1.005, b.ci_high_ms = 1.025;
  EXPECT_TRUE(intervals_overlap(a, b));
  EXPECT_TRUE(intervals_overlap(b, a));
  b.median_ms = 1.03, b.ci_low_ms = 1.02, b.ci_high_ms = 1.04;
  EXPECT_FALSE(intervals_overlap(a, b));
  timing_stats c;  // no interval: equal medians only
  c.median_ms = 1.0;
  timing_stats d = c;
  EXPECT_TRUE(intervals_overlap(c, d));
  d.median_ms = 1.0001;
  EXPECT_FALSE(intervals_overlap(c, d));
}

// Racing (kernlab tune --race): a row whose interval lies wholly above the bound stops as soon as
// that shows, from race_min_samples on; a row that may still beat the bound is timed in full.
TEST(Racing, ASlowRowStopsAtTheFirstIntervalAboveTheBound) {
  timing_options o;
  o.rule = stop_rule::ci;
  o.min_samples = 10;
  o.min_time_s = 0.05;  // 25 samples of 2 ms
  o.timeout_s = 10;
  o.max_ci = 0.005;
  std::vector<double> slow;
  for (int i = 0; i < 1000; ++i) slow.push_back(2.0 + 0.01 * (i % 7));  // 2.00 .. 2.06 ms

  o.race_ms = 1.5;  // the best so far's bound: every sample lies above it
  sample_stream raced(o);
  EXPECT_EQ(samples_until_stop(raced, slow),
            static_cast<std::size_t>(timing_options::race_min_samples));  // before the minimum
  const timing_stats r = raced.finish();
  EXPECT_TRUE(r.raced);
  EXPECT_FALSE(r.timed_out);  // stopped by the race, not by the timeout
  EXPECT_GT(r.median_ms, 1.5);

  o.race_ms = 2.03;  // within the samples' spread: the row could still be the best
  sample_stream close(o);
  EXPECT_GE(samples_until_stop(close, slow), 25u);  // the minimum time, as without a race
  EXPECT_FALSE(close.finish().raced);

  o.race_ms = 0;  // no race: the stopping rule alone
  sample_stream plain(o);
  EXPECT_GE(samples_until_stop(plain, slow), 25u);
  EXPECT_FALSE(plain.finish().raced);
}

TEST(Racing, AStdrelRowRacesToo) {
  timing_options o;
  o.rule = stop_rule::stdrel;
  o.min_samples = 10;
  o.min_time_s = 1;
  o.race_ms = 1.0;
  sample_stream s(o);
  std::size_t n = 0;
  while (!s.add(3.0, 0.001 * static_cast<double>(++n))) ASSERT_LT(n, 100u);
  EXPECT_EQ(n, static_cast<std::size_t>(timing_options::race_min_samples));
  EXPECT_TRUE(s.finish().raced);
}

TEST(Racing, ARowStopsAfterThePlacementThatShowsIt) {
  timing_options o;
  o.rule = stop_rule::ci;
  o.placements = 4;
  o.max_placements = 4;
  o.timeout_s = 10;
  o.min_interval = 0.003;
  o.race_ms = 1.02;
  // One placement 5% above the bound: out, after it alone.
  std::vector<timing_stats> parts = {placement(1.07)};
  EXPECT_TRUE(placements_done(o, combine_placements(parts, false, o.min_interval), 0.1));
  timing_stats row = combine_row(o, parts);
  EXPECT_TRUE(row.raced);
  EXPECT_FALSE(row.timed_out);
  EXPECT_EQ(row.placements, 1);
  // Its interval reaches below the bound: all four placements, as without a race.
  parts = {placement(1.021, 101, 0.01)};
  EXPECT_FALSE(placements_done(o, combine_placements(parts, false, o.min_interval), 0.1));
  EXPECT_FALSE(combine_row(o, parts).raced);
  // Too few samples for an interval of its own: never raced on the floor's width alone.
  parts = {placement(1.07, 4)};
  EXPECT_FALSE(placements_done(o, combine_placements(parts, false, o.min_interval), 0.1));
  // A placement raced out in its own sampling makes the row raced out.
  parts = {placement(1.07, 6)};
  parts.back().raced = true;
  EXPECT_TRUE(combine_row(o, parts).raced);
  // No race: the same placement is one of four.
  o.race_ms = 0;
  parts = {placement(1.07)};
  EXPECT_FALSE(placements_done(o, combine_placements(parts, false, o.min_interval), 0.1));
  EXPECT_FALSE(combine_row(o, parts).raced);
}

TEST(Racing, EachPlacementTakesEnoughSamplesForAnInterval) {
  timing_options o;
  o.min_samples = 10;
  o.placements = 4;
  EXPECT_EQ(placement_options(o).min_samples, 3);
  o.race_ms = 1;
  EXPECT_EQ(placement_options(o).min_samples, timing_options::race_min_samples);
}

TEST(LaunchMode, Names) {
  EXPECT_EQ(parse_launch_mode("graph"), launch_mode::graph);
  EXPECT_EQ(parse_launch_mode("stream"), launch_mode::stream);
  EXPECT_STREQ(to_string(launch_mode::graph), "graph");
  EXPECT_THROW(parse_launch_mode("graphs"), std::invalid_argument);
}

}  // namespace
}  // namespace kl
