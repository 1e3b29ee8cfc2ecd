// Plugins on a GPU, through the whole program: hostile plugins beside good ones change a run by
// one warning each, and a version-2 plugin's `release` is called in the worker before it exits.
#include "gpu_test_util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace kl {
namespace {

TEST(GpuPlugins, ARunGoesOnPastHostilePlugins) {
  const std::string why = test::no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  test::temp_dir cache("gpu_hostile");
  // --kernel-timeout is the hanging plugin's probe limit, and also the watchdog of cub's first
  // launch, which starts the plugin's own CUDA runtime: under ctest -j4 on the H100s that took
  // past 2 s (2026-11-26), so 5.
  const auto r = test::run_kernlab(
      "--variant reduce5,cub,reduce5_nvcc --block 256 --size 2^20 --dtype int32 --min-time 0 "
      "--timeout 1 --kernel-timeout 5 --cache-dir " +
      cache.str() + " --kernels-dir " + test::kernels_dir() + " --plugin-dir " +
      KERNLAB_HOSTILE_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* f :
       {"kernlab_hostile_abort.so", "kernlab_hostile_throws.so", "kernlab_hostile_exit0.so",
        "kernlab_hostile_hang.so", "kernlab_hostile_huge_count.so", "kernlab_hostile_wild_table.so",
        "kernlab_truncated.so"})
    EXPECT_EQ(test::count_of(
                  r.output, std::string("warning: plugin ") + KERNLAB_HOSTILE_PLUGIN_DIR + "/" + f),
              1u)
        << f << "\n"
        << r.output;
  // Every good row ran and passed: reduce5 and reduce5_nvcc at 256, and cub.
  EXPECT_GE(test::count_of(r.output, " passed "), 3u) << r.output;
  for (const char* bad : {"FAILED", "CRASHED", "TIMEOUT", "WRONG"})
    EXPECT_EQ(r.output.find(bad), std::string::npos) << bad << "\n" << r.output;
}

TEST(GpuPlugins, TheWorkerReleasesAVersionTwoPluginBeforeItExits) {
  const std::string why = test::no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "needs a GPU: " << why;
  test::temp_dir dir("gpu_release");
  const std::string marker = dir.str() + "/marker";
  // --no-cache: the probe loads (and releases) it once, then each of the row's two placement
  // workers, which both open it (run it once, untimed) before the row's first placement.
  const auto r =
      test::run_command("KERNLAB_TEST_RELEASE_MARKER=" + marker + " " + KERNLAB_BINARY +
                        " --config /dev/null --no-cache --variant with_release "
                        "--placement-workers 2 --size 2^20 --dtype int32 --kernels-dir " +
                        test::kernels_dir() + " --plugin-dir " + KERNLAB_TEST_PLUGIN_DIR);
  EXPECT_EQ(r.code, 1) << r.output;  // its run always fails, by design
  EXPECT_NE(r.output.find("release_marker: run is not meant to be timed"), std::string::npos)
      << r.output;
  EXPECT_EQ(test::read_file(marker), "released\nreleased\nreleased\n") << r.output;
}

}  // namespace
}  // namespace kl
