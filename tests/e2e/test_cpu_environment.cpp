// The CPU-labelled tests (kernlab_tests) never touch a GPU, even on a machine that has one:
// CUDA_VISIBLE_DEVICES is emptied before any test runs, so the driver (in this process and in
// every kernlab the tests start) sees no device, and each test checks the no-GPU path whatever
// the machine. What needs a GPU lives in kernlab_gpu_tests (CTest label `gpu`). It is set here,
// in the binary, rather than by CTest, so running the binary by hand is just as isolated.
#include "cuda/driver.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

const bool no_visible_gpu = [] {
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  return true;
}();

TEST(CpuEnvironment, TheDriverSeesNoDevice) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  ASSERT_NE(visible, nullptr);
  EXPECT_EQ(std::string(visible), "");
  // Without a driver the library does not load; with one, cuInit finds no device. Either way the
  // driver says so with a no_device_error, which kernlab reports as "no CUDA driver/device".
  EXPECT_THROW(kl::cuda::driver::get(), kl::cuda::no_device_error);
}

}  // namespace
