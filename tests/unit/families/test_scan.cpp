// The scan family (kernels_src/scan/, a family described as data) without a GPU: its description
// loads as documented, `--list` shows its axis, variants and both baselines, every point of its
// tunable file compiles at every block with NVRTC (the plain files are compiled by
// DataFamilyCompile.EveryShippedDataFamilyAndItsReference, which takes every data family's
// folder), every launch fits the workspace's status words, its inputs keep float32 sums exact
// as family.toml argues, and the CUB plugin registers as its baseline. The kernels run in
// test_gpu_scan.cpp (and on the CPU in scripts/cpu_emulation/run_scan.sh).
#include "families/family.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "spec/expression.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace kl {
namespace {

struct scan_fixture {
  family_registry fams;
  registry reg{fams};
  const family* scan = nullptr;
  std::vector<std::string> includes = {test::kernels_dir() + "/include", test::cuda_include()};
  scan_fixture() {
    test::register_shipped_families(fams);
    EXPECT_TRUE(add_data_families(fams, {test::kernels_dir()}, includes,
                                  {std::string(KERNLAB_PLUGIN_DIR) + "/families"})
                    .empty());
    scan = fams.find("scan");
    reg.add_source_dir(test::kernels_dir());
  }
};

TEST(ScanFamily, LoadsAsDescribed) {
  scan_fixture f;
  ASSERT_NE(f.scan, nullptr) << f.fams.broken("scan");
  const family_spec& s = f.scan->spec();
  EXPECT_EQ(s.dtypes, (std::vector<std::string>{"int32", "float32"}));
  ASSERT_EQ(s.axes.size(), 1u);
  EXPECT_EQ(s.axes[0].name, "N");
  EXPECT_EQ(s.axes[0].default_value, 1 << 24);
  EXPECT_EQ(s.axes[0].min, 1);
  EXPECT_GE(s.axes[0].max, std::int64_t{1} << 30);  // 2^28 and beyond
  ASSERT_EQ(s.buffers.size(), 3u);
  const buffer_spec* in = s.buffer("in");
  ASSERT_NE(in, nullptr);
  ASSERT_TRUE(in->exact && in->random);
  EXPECT_EQ(in->exact->kind, "grid");
  EXPECT_EQ(in->random->kind, "grid");  // exact by design in both modes: the rule is `exact`
  EXPECT_EQ(s.buffer("out")->role, buffer_role::out);
  EXPECT_EQ(s.buffer("ws")->role, buffer_role::workspace);
  EXPECT_EQ(s.compare.rule, "exact");
  EXPECT_EQ(s.reference.type, "T");
  EXPECT_EQ(s.baseline.copy_from, "in");
  EXPECT_EQ(s.baseline.copy_to, "out");
  // Read once, written once; the workspace is not counted.
  for (const char* dtype : {"int32", "float32"}) {
    problem_config c{dtype, "", "exact", 1, {{"N", std::uint64_t{1000003}}}};
    EXPECT_EQ(f.scan->problem_bytes(c), 2.0 * 4 * 1000003) << dtype;
  }
}

// The binary lists the family with its axis, its four plain variants, the tunable file as one
// line, and both baselines: the copy and CUB's plugin.
TEST(ScanFamily, ListsItsAxisVariantsAndBaselines) {
  const auto list =
      test::run_kernlab("--kernels-dir " + test::kernels_dir() + " --family scan --list");
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_NE(list.output.find("family scan: axes N=16777216 [1..1073741824]"), std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("dtypes int32, float32"), std::string::npos) << list.output;
  for (const char* v :
       {"scan.hillis_steele  ", "scan.blelloch  ", "scan.decoupled_lookback  ",
        "scan.lookback_tunable  ", "scan.smem_lookback  ", "scan.d2d_copy  ", "scan.cub  "})
    EXPECT_NE(list.output.find(v), std::string::npos) << v << "\n" << list.output;
  EXPECT_NE(list.output.find("42 points: kernlab tune --variant lookback_tunable"),
            std::string::npos)
      << list.output;
  EXPECT_NE(list.output.find("kernlab_cub_scan.so  (baseline)"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("warning"), std::string::npos) << list.output;
  // In the family's order: the chained scans, then the look-backs.
  EXPECT_LT(list.output.find("scan.hillis_steele"), list.output.find("scan.blelloch"));
  EXPECT_LT(list.output.find("scan.blelloch"), list.output.find("scan.decoupled_lookback"));
  EXPECT_LT(list.output.find("scan.lookback_tunable"), list.output.find("scan.smem_lookback"));
}

// Every scan variant, every tunable point included, at every block it takes: the grid (one tile
// a block) never has more tiles than the workspace has status words (family.toml: one per 128
// elements, after 32 words), and covers N at 128 elements a tile or more.
TEST(ScanFamily, EveryLaunchFitsTheWorkspace) {
  scan_fixture f;
  ASSERT_NE(f.scan, nullptr);
  const family_spec& s = f.scan->spec();
  int checked = 0;
  for (const auto& e : f.reg.entries()) {
    const variant_descriptor& v = e.descriptor;
    if (v.family != "scan" || v.origin != origin_kind::source) continue;
    ASSERT_EQ(e.error, "") << v.qualified_name();
    for (unsigned block : v.blocks)
      for (std::int64_t n : {std::int64_t{1}, std::int64_t{127}, std::int64_t{128},
                             std::int64_t{129}, std::int64_t{4097}, std::int64_t{1000003},
                             (std::int64_t{1} << 24) + 1, s.axes[0].max}) {
        SCOPED_TRACE(v.qualified_name() + " block " + std::to_string(block) + " N " +
                     std::to_string(n));
        problem_config c{"int32", "", "exact", 1, {{"N", static_cast<std::uint64_t>(n)}}};
        auto vars = f.scan->axis_variables(c);
        vars["BLOCK"] = block;
        for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
        vars["SM_COUNT"] = 132;
        vars["RESIDENT_BLOCKS"] = 132 * 8;
        const launch_dims d = evaluate_dims(v.block_dims.empty() ? s.block_dims : v.block_dims,
                                            v.grid_dims.empty() ? s.grid_dims : v.grid_dims, block,
                                            vars, c.describe());
        const std::int64_t tiles = std::int64_t{d.grid[0]} * d.grid[1] * d.grid[2];
        const std::int64_t words = evaluate(s.buffer("ws")->count, vars);
        EXPECT_LE(32 + tiles, words);
        EXPECT_GE(tiles, 1);
        ++checked;
      }
  }
  EXPECT_GT(checked, 8 * 4 * 4);  // 4 plain files at 4 blocks, 42 points at 1 to 4 blocks
}

// DataFamilyCompile compiles the plain files; `--variant all` leaves the points of a tunable file
// out, so they are compiled here: every point of both tunable files at every block it allows, both
// dtypes, without a spill (lookback_tunable.cu gives ptxas 64 registers a thread at every block
// size; smem_lookback_tunable.cu keeps its tile in shared memory and needs 32).
TEST(ScanFamily, EveryTunablePointCompilesWithoutSpilling) {
  scan_fixture f;
  ASSERT_NE(f.scan, nullptr);
  for (const auto& [file, points] : {std::pair<std::string, std::size_t>{"lookback_tunable", 42},
                                     {"smem_lookback_tunable", 10}}) {
    SCOPED_TRACE(file);
    run_request r;
    r.variants = f.reg.select({file}, "scan");
    ASSERT_EQ(r.variants.size(), points);
    r.blocks = {128, 256, 512, 1024};
    r.dtypes = {"int32", "float32"};
    r.include_dirs = f.includes;
    r.compile_only = true;
    const auto sweep = runner(f.fams, r).run();
    ASSERT_EQ(sweep.compiles.size(), points);
    std::size_t instances = 0;
    for (const auto& c : sweep.compiles) {
      SCOPED_TRACE(c.entry->descriptor.qualified_name());
      EXPECT_EQ(c.entry->error, "");
      EXPECT_EQ(c.error, "");
      EXPECT_EQ(c.result.lowered_names.size(), c.entry->descriptor.blocks.size() * 2);
      instances += c.result.lowered_names.size();
      for (const auto& kv : c.result.resources) {
        EXPECT_EQ(kv.second.spill_store_bytes, 0) << kv.first;
        EXPECT_EQ(kv.second.stack_frame_bytes, 0) << kv.first;
      }
    }
    EXPECT_GE(instances, points * 2 * 2);
  }
}

// family.toml's argument for the `exact` rule, checked on the inputs kernlab makes at the default
// N: every prefix sum stays far below where float32 stops being exact (2^23 for whole numbers,
// 2^20 for eighths: a run of elements is a difference of two prefix sums), and float32 scans in
// two different orders (element by element; tiles of 4096 summed first, then the tiles' prefixes
// added) both give the 64-bit scan exactly.
TEST(ScanFamily, TheInputsKeepFloatSumsExact) {
  scan_fixture f;
  ASSERT_NE(f.scan, nullptr);
  const std::uint64_t n = 1 << 24;
  for (const bool random : {false, true}) {
    SCOPED_TRACE(random ? "random" : "exact");
    for (const std::uint64_t seed : {12345u, 1u}) {
      const auto x = test::generated_values<float>(*f.scan, "in", "float32", n, seed, random);
      const double unit = random ? 0.125 : 1.0;  // every value is a whole number of these
      const double bound = random ? 1 << 20 : 1 << 23;
      double p = 0, largest = 0;
      float sequential = 0;
      std::size_t wrong = 0, off_grid = 0;
      std::vector<float> tile_sum((n + 4095) / 4096, 0.0f);
      for (std::uint64_t i = 0; i < n; ++i) {
        off_grid += std::fmod(x[i], unit) != 0.0;
        p += x[i];
        sequential += x[i];
        tile_sum[i / 4096] += x[i];
        wrong += static_cast<double>(sequential) != p;
        largest = std::max(largest, std::fabs(p));
      }
      EXPECT_EQ(off_grid, 0u);
      EXPECT_EQ(wrong, 0u);
      EXPECT_LT(largest * 8, bound) << "the walk came within 8x of the limit";
      // Tiles first: each tile's prefix is the sum of the tile sums before it.
      float before = 0, local = 0;
      p = 0;
      wrong = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        if (i % 4096 == 0) {
          if (i) before += tile_sum[i / 4096 - 1];
          local = 0;
        }
        local += x[i];
        p += x[i];
        wrong += static_cast<double>(before + local) != p;
      }
      EXPECT_EQ(wrong, 0u);
    }
  }
}

// kernlab_cub_scan.so registers scan.cub: a baseline, both dtypes, no block size, no operation.
TEST(ScanPlugin, CubRegistersAsTheScanBaseline) {
  scan_fixture f;
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  EXPECT_TRUE(f.reg.warnings().empty()) << f.reg.warnings().front();
  const registry_entry* e = f.reg.find("scan.cub");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->descriptor.origin, origin_kind::plugin);
  EXPECT_NE(e->descriptor.origin_path.find("kernlab_cub_scan.so"), std::string::npos);
  EXPECT_TRUE(e->descriptor.is_baseline);
  EXPECT_TRUE(e->descriptor.blocks.empty());
  EXPECT_EQ(e->descriptor.dtypes, (std::vector<std::string>{"int32", "float32"}));
  EXPECT_TRUE(e->descriptor.ops.empty());
  EXPECT_NE(e->descriptor.summary.find("cub::DeviceScan::InclusiveSum"), std::string::npos);
  // reduce.cub is another plugin's, untouched.
  ASSERT_NE(f.reg.find("reduce.cub"), nullptr);
  EXPECT_NE(f.reg.find("reduce.cub")->descriptor.origin_path.find("kernlab_cub.so"),
            std::string::npos);
}

}  // namespace
}  // namespace kl
