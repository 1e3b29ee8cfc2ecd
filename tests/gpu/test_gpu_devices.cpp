// GPU tests (label `gpu`) for --devices on a machine with two GPUs or more (skipped, saying so,
// with fewer): a sweep spread over two GPUs gives the rows of a one-GPU sweep, each record naming
// its GPU, both GPUs used; a planted hang costs its row only, on whichever GPU took it.
#include "cuda/device.hpp"
#include "cuda/driver.hpp"
#include "gpu_test_util.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"
#include "tune_fixture.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace kl {
namespace {

// "" when there are two GPUs here; else why the test cannot run.
std::string fewer_than_two_gpus() {
  const std::string why = test::no_gpu_reason();
  if (!why.empty()) return why;
  const int n = cuda::device_count();
  return n >= 2 ? "" : "this machine has " + std::to_string(n) + " GPU";
}

#define KL_REQUIRE_TWO_GPUS()                                                \
  do {                                                                       \
    const std::string why = fewer_than_two_gpus();                           \
    if (!why.empty()) GTEST_SKIP() << "needs two GPUs (--devices): " << why; \
  } while (0)

// The shipped reduce kernels (and a kernel that spins forever, when asked) at blocks 128 to 512,
// int32 and float32, on `devices`.
sweep_result sweep_on(const std::vector<int>& devices, bool with_hang) {
  test::temp_dir dir(with_hang ? "devices_hang" : "devices_clean");
  test::write_good_kernels(dir);
  if (with_hang) dir.write("reduce/bad_spin.cu", test::planted("bad_spin", 9, test::spin_body));
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(dir.str());
  run_request r;
  r.variants = reg.select({"all"});
  r.blocks = {128, 256, 512};
  r.dtypes = {"int32", "float32"};
  r.ops = {"sum"};
  r.axes = {axis_choice::sizes({1000003})};
  r.include_dirs = {test::kernels_dir() + "/include", test::cuda_include()};
  r.timing = test::quick_timing();
  r.worker_command = {KERNLAB_BINARY, "--worker"};
  r.kernel_timeout_s = 3;
  r.devices = devices;
  return runner(fams, r).run();
}

TEST(GpuDevices, TwoGpusGiveTheRowsOfOneEachNamingItsGpu) {
  KL_REQUIRE_TWO_GPUS();
  const sweep_result one = sweep_on({0}, false);
  const sweep_result two = sweep_on({0, 1}, false);
  ASSERT_EQ(two.devices.size(), 2u);
  ASSERT_EQ(one.results.size(), two.results.size());
  std::set<int> used;
  for (std::size_t i = 0; i < one.results.size(); ++i) {
    const auto& a = one.results[i];
    const auto& b = two.results[i];
    // Request order is kept: the same row at the same place, with the same answer.
    EXPECT_EQ(a.variant.name, b.variant.name);
    EXPECT_EQ(a.block, b.block);
    EXPECT_EQ(a.config.dtype, b.config.dtype);
    EXPECT_EQ(a.status, b.status) << test::describe(b);
    EXPECT_EQ(a.check.got, b.check.got) << test::describe(b);
    ASSERT_TRUE(b.gpu.has_value()) << test::describe(b);
    EXPECT_EQ(b.gpu->uuid, two.devices.at(static_cast<std::size_t>(b.gpu->ordinal)).uuid);
    used.insert(b.gpu->ordinal);
    ASSERT_TRUE(a.gpu.has_value());
    EXPECT_EQ(a.gpu->ordinal, 0);
  }
  EXPECT_EQ(used, (std::set<int>{0, 1}));
  EXPECT_EQ(two.workers_started, 2);
}

TEST(GpuDevices, AHangOnOneGpuCostsItsRowOnly) {
  KL_REQUIRE_TWO_GPUS();
  const sweep_result r = sweep_on({0, 1}, true);
  int hung = 0, passed = 0;
  for (const auto& row : r.results) {
    if (row.status == outcome::skipped) continue;  // bad_spin takes block 256 only
    if (row.variant.name == "bad_spin") {
      EXPECT_EQ(row.status, outcome::timeout) << test::describe(row);
      ++hung;
    } else {
      EXPECT_EQ(row.status, outcome::passed) << test::describe(row);
      ++passed;
    }
  }
  EXPECT_EQ(hung, 2);  // int32 and float32, block 256
  EXPECT_GT(passed, 0);
  // Two workers, and a new one for each hang after which its GPU takes another row: 3 when
  // the second hang was that GPU's last row (as on the H100 pair, 2026-11-26), else 4.
  EXPECT_GE(r.workers_started, 3);
  EXPECT_LE(r.workers_started, 4);
}

TEST(GpuDevices, ATuneSpreadsItsPointsAndMeasuresCubOnEachGpu) {
  KL_REQUIRE_TWO_GPUS();
  test::temp_dir dir("devices_tune");
  test::write_tunable_reduce(dir, "tsum");
  const std::string d = dir.str();
  const auto r = test::run_kernlab(
      "tune --kernels-dir " + d + " --variant tsum --strategy exhaustive --devices 0,1 --store " +
      d + "/store.jsonl --json " + d + "/run.json" +
      " --min-time 0 --timeout 0.2 --no-cache --size 1000003 --dtype int32");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("2 GPUs: each batch's points are spread over them"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("rows per GPU: GPU 0 "), std::string::npos) << r.output;
  const auto run = nlohmann::json::parse(test::read_file(d + "/run.json"));
  std::set<int> point_gpus, cub_gpus;
  for (const auto& rec : run.at("records")) {
    const std::string name = rec.at("variant").at("name");
    ASSERT_FALSE(rec.at("gpu").is_null()) << name;
    const int gpu = rec.at("gpu").at("ordinal");
    if (name == "cub")
      cub_gpus.insert(gpu);
    else
      point_gpus.insert(gpu);
  }
  EXPECT_EQ(point_gpus, (std::set<int>{0, 1}));  // the points spread over both
  EXPECT_EQ(cub_gpus, (std::set<int>{0, 1}));    // the library measured on each
  EXPECT_EQ(run.at("reproducibility").at("devices").size(), 2u);
}

}  // namespace
}  // namespace kl
