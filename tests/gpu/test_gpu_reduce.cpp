// GPU tests (CTest label `gpu`): every reduce variant, at every block size, validates at awkward
// sizes through the real runner; planted failures are caught and never take the sweep down.
// Without a GPU every test here is skipped with the reason.
#include "cuda/driver.hpp"
#include "families/family.hpp"
#include "gpu_test_util.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace kl {
namespace {

// The awkward sizes: 1, 2, a non-multiple, one past a power of two, a large power, a prime.
const std::vector<std::uint64_t> sizes = {1, 2, 1000, (1u << 20) + 3, 1u << 24, 1000003};

// Validation needs one timed sample at most; the runner always times what validates.
struct sweep_fixture : test::gpu_sweep {
  run_request request(const std::vector<std::string>& variants,
                      const std::vector<std::string>& dtypes, const std::vector<std::string>& ops,
                      const std::vector<std::uint64_t>& n,
                      const std::string& kernels = test::kernels_dir()) {
    run_request r =
        request_for("reduce", variants, kernels);  // the other families have tests of their own
    r.dtypes = dtypes;
    r.ops = ops;
    r.axes = {axis_choice::sizes(n)};
    return r;
  }
};

using test::describe;

// One test per shipped source variant and dtype: all blocks x all awkward sizes must pass.
class GpuReduce : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(GpuReduce, ValidatesAtEveryBlockAndAwkwardSize) {
  KL_REQUIRE_GPU();
  const auto& [variant, dtype] = GetParam();
  sweep_fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  const auto sweep = runner(f.fams, f.request({variant}, {dtype}, {"sum"}, sizes)).run();
  ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
  EXPECT_EQ(sweep.results.size(), 4 * sizes.size());
  for (const auto& r : sweep.results) {
    if (!r.variant.supports_block(r.block)) {
      // A tunable point runs at the blocks its requirements allow: the others are skipped.
      EXPECT_EQ(r.status, outcome::skipped) << describe(r);
      EXPECT_NE(r.message.find("supports blocks"), std::string::npos) << describe(r);
      continue;
    }
    EXPECT_EQ(r.status, outcome::passed) << describe(r);
    // Every timed source row reports its resources and occupancy.
    ASSERT_TRUE(r.resources.has_value()) << describe(r);
    EXPECT_GT(r.resources->registers, 0) << describe(r);
    ASSERT_TRUE(r.occupancy.has_value()) << describe(r);
    EXPECT_GT(r.occupancy->blocks_per_sm, 0) << describe(r);
  }
}

std::vector<std::tuple<std::string, std::string>> shipped_variants() {
  std::vector<std::tuple<std::string, std::string>> out;
  for (const auto& name : test::shipped_source_variants("reduce"))
    for (const char* d : {"int32", "float32"}) out.emplace_back(name, d);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Shipped, GpuReduce, ::testing::ValuesIn(shipped_variants()),
                         [](const auto& info) {
                           return test::test_name(std::get<0>(info.param)) + "_" +
                                  std::get<1>(info.param);
                         });

// min and max use other identities for the padding: a padded variant that reads padding as 0
// would get min(positive inputs) wrong.
TEST(GpuReduceOps, MinAndMaxWithIdentityPadding) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  const auto sweep =
      runner(f.fams, f.request({"all"}, {"int32", "float32"}, {"min", "max"}, {1, 1000, 1000003}))
          .run();
  ASSERT_FALSE(sweep.results.empty());
  for (const auto& r : sweep.results) EXPECT_EQ(r.status, outcome::passed) << describe(r);
}

TEST(GpuReduceOps, RandomFloatInputsWithinTolerance) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  auto req = f.request({"reduce0", "reduce6", "reduce_complete_unroll"}, {"float32"}, {"sum"},
                       {1000003, 1u << 24});
  req.input_mode = "random";
  const auto sweep = runner(f.fams, req).run();
  ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
  // 3 variants x 4 blocks x 2 sizes: an empty sweep must not pass for lack of rows.
  ASSERT_EQ(sweep.results.size(), 3u * 4 * 2);
  for (const auto& r : sweep.results) EXPECT_EQ(r.status, outcome::passed) << describe(r);
}

// A planted wrong kernel (drops the last element), a kernel that does not compile and a good one
// in one sweep: the wrong one is WRONG with expected and got, the broken one FAILED with
// file:line, and the good one passes with the same result as alone.
TEST(GpuReducePlanted, WrongAndBrokenVariantsAreCaughtAndTheRestRuns) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("planted");
  dir.write("reduce/drops_last.cu", R"(/* kernlab
family: reduce
entry:  drops_last<BLOCK, T, OP>
blocks: 128 256 512 1024
tile:   BLOCK
bounds: checked
*/
#include <kernlab/reduce.cuh>
// Planted bug: the last element of every pass is never read.
template <unsigned BLOCK, typename T, typename OP>
__global__ void drops_last(const T* in, T* out, unsigned n) {
  __shared__ T s[BLOCK];
  OP op;
  const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
  s[threadIdx.x] = i + 1 < n ? in[i] : OP::identity();
  __syncthreads();
  for (unsigned k = BLOCK / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] = op(s[threadIdx.x], s[threadIdx.x + k]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
)");
  const std::string broken = dir.write("reduce/does_not_compile.cu", R"(/* kernlab
family: reduce
entry:  does_not_compile<BLOCK, T, OP>
blocks: 256
tile:   BLOCK
*/
template <unsigned BLOCK, typename T, typename OP>
__global__ void does_not_compile(const T* in, T* out, unsigned n) { out[0] = in[0] +; }
)");
  dir.write("reduce/reduce5.cu", test::read_file(test::kernels_dir() + "/reduce/reduce5.cu"));
  sweep_fixture f;
  f.reg.add_source_dir(dir.str());
  auto req = f.request({"all"}, {"int32"}, {"sum"}, {1000, 1000003}, dir.str());
  req.blocks = {256};
  const auto sweep = runner(f.fams, req).run();
  ASSERT_EQ(sweep.results.size(), 6u);
  int wrong = 0, failed = 0, passed = 0;
  for (const auto& r : sweep.results) {
    if (r.variant.name == "drops_last") {
      EXPECT_EQ(r.status, outcome::wrong_result) << describe(r);
      EXPECT_NE(r.check.expected, r.check.got);
      EXPECT_NE(r.message.find("expected " + r.check.expected + ", got " + r.check.got),
                std::string::npos);
      EXPECT_FALSE(r.timing.has_value()) << "a wrong result must never be timed";
      ++wrong;
    } else if (r.variant.name == "does_not_compile") {
      EXPECT_EQ(r.status, outcome::failed);
      EXPECT_NE(r.message.find(broken + ":8: error"), std::string::npos) << r.message;
      ++failed;
    } else {
      EXPECT_EQ(r.status, outcome::passed) << describe(r);
      EXPECT_TRUE(r.timing.has_value());
      ++passed;
    }
  }
  EXPECT_EQ(wrong, 2);
  EXPECT_EQ(failed, 2);
  EXPECT_EQ(passed, 2);
}

// Skips are decided before running: an unsupported block, dtype or op is skipped with a reason.
TEST(GpuReducePlanted, UnsupportedConfigurationsAreSkippedWithAReason) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("skips");
  dir.write("reduce/only256.cu", R"(/* kernlab
family: reduce
entry:  only256<BLOCK, T, OP>
blocks: 256
tile:   BLOCK
dtypes: int32
ops:    sum
*/
#include <kernlab/reduce.cuh>
template <unsigned BLOCK, typename T, typename OP>
__global__ void only256(const T* in, T* out, unsigned n) {
  __shared__ T s[BLOCK];
  OP op;
  s[threadIdx.x] = in[blockIdx.x * BLOCK + threadIdx.x];
  __syncthreads();
  for (unsigned k = BLOCK / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] = op(s[threadIdx.x], s[threadIdx.x + k]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
)");
  sweep_fixture f;
  f.reg.add_source_dir(dir.str());
  auto req = f.request({"all"}, {"int32", "float32"}, {"sum"}, {4097}, dir.str());
  const auto sweep = runner(f.fams, req).run();
  ASSERT_EQ(sweep.results.size(), 8u);
  for (const auto& r : sweep.results) {
    if (r.config.dtype == "float32") {
      EXPECT_EQ(r.status, outcome::skipped);
      EXPECT_EQ(r.message, "supports dtypes int32 only");
    } else if (r.block != 256) {
      EXPECT_EQ(r.status, outcome::skipped);
      EXPECT_EQ(r.message, "supports blocks 256 only");
    } else {
      EXPECT_EQ(r.status, outcome::passed) << describe(r);
    }
  }
}

// A param in the entry and in the tile (issue: params were matmul's only): each block consumes
// ITEMS * BLOCK elements, so a launch planned with the literal tile instead would leave most of the
// input unread and fail validation.
TEST(GpuReduceParams, TileFromAParamValidates) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("params");
  dir.write("reduce/per_thread.cu", R"(/* kernlab
family:  reduce
entry:   per_thread<BLOCK, ITEMS, T, OP>
blocks:  128 256 512 1024
params:  ITEMS = 4096 / BLOCK
tile:    ITEMS * BLOCK
*/
#include <kernlab/reduce.cuh>
template <unsigned BLOCK, unsigned ITEMS, typename T, typename OP>
__global__ void per_thread(const T* in, T* out, unsigned int n) {
  __shared__ T partial[BLOCK];
  OP op;
  const unsigned base = blockIdx.x * (ITEMS * BLOCK) + threadIdx.x;
  T acc = in[base];  // the input is padded with OP's identity to whole tiles
  for (unsigned i = 1; i < ITEMS; ++i) acc = op(acc, in[base + i * BLOCK]);
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
)");
  sweep_fixture f;
  f.reg.add_source_dir(dir.str());
  auto req =
      f.request({"all"}, {"int32", "float32"}, {"sum", "max"}, {1, 4097, 1000003}, dir.str());
  const auto sweep = runner(f.fams, req).run();
  ASSERT_EQ(sweep.results.size(), 4u * 2 * 2 * 3);
  for (const auto& r : sweep.results) EXPECT_EQ(r.status, outcome::passed) << describe(r);
}

// The shipped plugin variants validate like source variants, in the same runner.
TEST(GpuPlugins, ShippedPluginVariantsValidate) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  ASSERT_TRUE(f.reg.warnings().empty()) << f.reg.warnings().front();
  const auto sweep = runner(f.fams, f.request({"cub", "reduce5_nvcc", "reduce6_nvcc", "atomic_sum"},
                                              {"int32", "float32"}, {"sum", "min", "max"}, sizes))
                         .run();
  int passed = 0;
  for (const auto& r : sweep.results) {
    if (r.variant.name == "atomic_sum" &&
        (r.config.dtype != "int32" || r.config.op != "sum" || r.block != 256)) {
      EXPECT_EQ(r.status, outcome::skipped) << describe(r);
      continue;
    }
    EXPECT_EQ(r.status, outcome::passed) << describe(r);
    ++passed;
  }
  // cub: 2 dtypes x 3 ops x 6 sizes; each nvcc twin: x 4 blocks; atomic_sum: 6 sizes.
  EXPECT_EQ(passed, 36 + 2 * 144 + 6);
}

// Plugins that fail at run time, or give a wrong answer, get their own outcome; good variants in
// the same sweep pass with the same results.
TEST(GpuPlugins, FailingPluginsStayInTheirRows) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  f.reg.add_plugin_dir(KERNLAB_TEST_PLUGIN_DIR);
  auto req = f.request({"always_fails", "planted_wrong", "throws_inside", "reduce5", "cub"},
                       {"int32"}, {"sum"}, {1000003});
  req.blocks = {256};
  const auto sweep = runner(f.fams, req).run();
  std::map<std::string, const result_record*> by_name;
  for (const auto& r : sweep.results) by_name[r.variant.name] = &r;
  ASSERT_EQ(by_name.size(), 5u);
  EXPECT_EQ(by_name["always_fails"]->status, outcome::failed);
  EXPECT_NE(by_name["always_fails"]->message.find("planted failure from run_error plugin"),
            std::string::npos)
      << by_name["always_fails"]->message;
  EXPECT_EQ(by_name["throws_inside"]->status, outcome::failed);
  EXPECT_NE(by_name["throws_inside"]->message.find("planted exception"), std::string::npos)
      << by_name["throws_inside"]->message;
  EXPECT_EQ(by_name["planted_wrong"]->status, outcome::wrong_result)
      << by_name["planted_wrong"]->message;
  EXPECT_EQ(by_name["planted_wrong"]->check.got, "out[0] = 16843009");  // 0x01010101
  EXPECT_EQ(by_name["reduce5"]->status, outcome::passed) << by_name["reduce5"]->message;
  EXPECT_EQ(by_name["cub"]->status, outcome::passed) << by_name["cub"]->message;
  EXPECT_EQ(by_name["reduce5"]->check.got, by_name["cub"]->check.got);
}

}  // namespace
}  // namespace kl
