// The statistics and the stopping rule, with synthetic samples (no GPU).
#include "measure/timing.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kl
