// GPU tests of the scan family (CTest label `gpu`): every variant (every plain file, a sample of
// the tunable file's points) at every block it takes validates exactly, int32 and float32, at
// N = 1, 7, a tile - 1, a tile, a tile + 1 (of each block's tile), 1000003 and 2^24, with the
// family's exact inputs, and at a tile + 1 and 1000003 with its random ones; CUB's plugin and the
// copy baseline validate at the same kind of sizes. Through the real runner and worker, with one
// timed sample a row. Without a GPU every test here is skipped with the reason.
#include "gpu_test_util.hpp"
#include "spec/expression.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace kl {
namespace {

using test::describe;

const family& scan_family(const family_registry& fams) {
  const auto* f = fams.find("scan");
  if (!f) throw std::runtime_error("no scan family: " + fams.broken("scan"));
  return *f;
}

// The elements of one tile of `v` at `block`: N / grid at N = 2^24 (every tile is a power of two).
std::uint64_t tile_of(const family& fam, const variant_descriptor& v, unsigned block) {
  const std::uint64_t n = 1 << 24;
  problem_config c{"int32", "", "exact", 1, {{"N", std::uint64_t{n}}}};
  auto vars = fam.axis_variables(c);
  vars["BLOCK"] = block;
  for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
  vars["SM_COUNT"] = 1;
  vars["RESIDENT_BLOCKS"] = 1;
  const auto& s = fam.spec();
  const launch_dims d =
      evaluate_dims(v.block_dims.empty() ? s.block_dims : v.block_dims,
                    v.grid_dims.empty() ? s.grid_dims : v.grid_dims, block, vars, c.describe());
  return n / d.grid[0];
}

std::vector<std::vector<std::uint64_t>> shapes_of(std::vector<std::uint64_t> sizes) {
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<std::vector<std::uint64_t>> out;
  for (auto n : sizes)
    if (n >= 1) out.push_back({n});
  return out;
}

class GpuScan : public ::testing::TestWithParam<std::string> {};

// One sweep a mode at every block: the sizes around each block's tile are run at every block
// (more boundaries for each, one compile of the file).
TEST_P(GpuScan, ValidatesExactlyAtEveryBlockAndAwkwardSize) {
  KL_REQUIRE_GPU();
  test::gpu_sweep f;
  f.reg.add_source_dir(test::kernels_dir());
  const family& fam = scan_family(f.fams);
  const registry_entry* e = f.reg.find("scan." + GetParam());
  ASSERT_NE(e, nullptr) << GetParam();
  std::vector<std::uint64_t> exact = {1, 7, 1000003, 1 << 24}, random = {1000003};
  int blocks = 0;
  for (unsigned block : {128u, 256u, 512u, 1024u}) {
    if (!e->descriptor.supports_block(block)) continue;
    ++blocks;
    const std::uint64_t tile = tile_of(fam, e->descriptor, block);
    exact.insert(exact.end(), {tile - 1, tile, tile + 1});
    random.push_back(tile + 1);
  }
  ASSERT_GE(blocks, 1);
  for (const char* input : {"exact", "random"}) {
    SCOPED_TRACE(input);
    run_request r = f.request_for("scan", {GetParam()});
    r.dtypes = {"int32", "float32"};
    r.input_mode = input;
    r.axes = {axis_choice::shapes(shapes_of(input == std::string("exact") ? exact : random))};
    const auto sweep = runner(f.fams, r).run();
    ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
    ASSERT_EQ(sweep.results.size(), 4 * 2 * r.axes[0].points.size());
    int passed = 0;
    for (const auto& row : sweep.results) {
      if (!row.variant.supports_block(row.block)) {
        EXPECT_EQ(row.status, outcome::skipped) << describe(row);
        continue;
      }
      EXPECT_EQ(row.status, outcome::passed) << describe(row);
      if (row.config.shape().front() > 1) {  // one element shows its value instead
        EXPECT_NE(row.check.expected.find("match (exact)"), std::string::npos) << describe(row);
      }
      ++passed;
    }
    EXPECT_EQ(passed, blocks * 2 * static_cast<int>(r.axes[0].points.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, GpuScan,
                         ::testing::ValuesIn(test::shipped_source_variants("scan")),
                         [](const auto& info) { return test::test_name(info.param); });

// A block of exactly 48 KiB of dynamic shared memory, plus the kernel's static shared memory,
// must ask the driver for it (cuFuncSetAttribute) like a larger one: smem_lookback_tunable.cu at
// LOADS = 12 and 256 threads copies 49152 bytes a tile. Before kernlab counted the static bytes
// too, this row was skipped as "does not fit on an SM".
TEST(GpuScanSharedMemory, ATileOf48KiBBesideStaticSharedMemoryRuns) {
  KL_REQUIRE_GPU();
  test::gpu_sweep f;
  f.reg.add_source_dir(test::kernels_dir());
  run_request r = f.request_for("scan", {"smem_lookback_tunable[LOADS=12;ORDER=0]"});
  r.blocks = {256};
  r.dtypes = {"int32"};
  r.axes = {axis_choice::shapes({{1000003}})};
  const auto sweep = runner(f.fams, r).run();
  ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
  ASSERT_EQ(sweep.results.size(), 1u);
  const auto& row = sweep.results.front();
  EXPECT_EQ(row.status, outcome::passed) << describe(row);
  ASSERT_TRUE(row.resources.has_value()) << describe(row);
  EXPECT_GT(row.resources->static_shared_bytes, 0) << describe(row);
}

// The baselines: CUB's plugin (a scan, compared exactly with the reference) and the copy of the
// input into the output (checked as a copy), at sizes around CUB's tiles and large ones.
TEST(GpuScanBaselines, CubAndTheCopyValidate) {
  KL_REQUIRE_GPU();
  test::gpu_sweep f;
  f.reg.add_source_dir(test::kernels_dir());  // registers scan.d2d_copy beside the kernel files
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  ASSERT_TRUE(f.reg.warnings().empty()) << f.reg.warnings().front();
  for (const char* input : {"exact", "random"}) {
    SCOPED_TRACE(input);
    run_request r = f.request_for("scan", {"cub", "d2d_copy"});
    r.dtypes = {"int32", "float32"};
    r.input_mode = input;
    r.axes = {axis_choice::shapes(
        shapes_of({1, 7, 1023, 1024, 1025, 4095, 4096, 4097, 1000003, 1 << 24}))};
    const auto sweep = runner(f.fams, r).run();
    ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
    ASSERT_EQ(sweep.results.size(), 2 * 2 * r.axes[0].points.size());
    for (const auto& row : sweep.results) {
      EXPECT_EQ(row.status, outcome::passed) << describe(row);
      EXPECT_TRUE(row.variant.is_baseline) << describe(row);
      // Compared exactly (one element shows its value instead).
      if (row.variant.name == "cub" && row.config.shape().front() > 1) {
        EXPECT_NE(row.check.expected.find("match (exact)"), std::string::npos) << describe(row);
      }
    }
  }
}

}  // namespace
}  // namespace kl
