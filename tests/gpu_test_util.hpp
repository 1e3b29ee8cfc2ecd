// What every GPU-labelled test shares: the skip when there is no GPU, and one-sample timing
// (the GPU tests check outcomes, never speed).
#pragma once

#include "cuda/driver.hpp"
#include "measure/timing.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kl::test {

/// "" when a CUDA driver and device are there; else why not.
inline std::string no_gpu_reason() {
  try {
    cuda::driver::get();
    return "";
  } catch (const cuda::no_device_error& e) {
    return e.what();
  }
}

/// One validation run and one timed sample per row.
inline timing_options quick_timing() {
  timing_options t;
  t.warmup_runs = 0;
  t.min_samples = 1;
  t.min_time_s = 0;
  t.max_noise = 1;
  t.timeout_s = 1;
  t.flush = flush_mode::none;
  return t;
}

}  // namespace kl::test

/// Skips the test, with the reason, where there is no GPU.
#define KL_REQUIRE_GPU()                                              \
  do {                                                                \
    const std::string why = ::kl::test::no_gpu_reason();              \
    if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;         \
  } while (0)
