// The matmul family without a GPU: the CPU reference (hand-checked products, the exactness of
// exact mode in any summation order), the comparison (exact and random modes, NaN), shapes on
// the command line, the 2-D launch geometry of the kernel headers, the table's TFLOP/s columns
// and the cuBLAS plugin's registration. NVRTC compiles of every matmul file are in
// test_compile.cpp (every family's files).
#include "cli/options.hpp"
#include "families/data_family.hpp"
#include "families/matmul.hpp"
#include "registry/registry.hpp"
#include "report/table.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "spec/expression.hpp"
#include "spec/metadata.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace kl {
namespace {

problem_config config(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                      const std::string& mode = "exact") {
  problem_config c{"float32", "", 0, mode, 12345, {}};
  c.shape = {m, n, k};
  return c;
}

// C = A * B in float32, summing k in the given order: what a kernel might compute.
std::vector<float> float_product(const matmul::dims& d, const matmul::inputs& in, bool reversed) {
  std::vector<float> c(d.m * d.n);
  for (std::uint64_t i = 0; i < d.m; ++i)
    for (std::uint64_t j = 0; j < d.n; ++j) {
      float s = 0;
      for (std::uint64_t q = 0; q < d.k; ++q) {
        const std::uint64_t k = reversed ? d.k - 1 - q : q;
        s = std::fma(in.a[i * d.k + k], in.b[k * d.n + j], s);
      }
      c[i * d.n + j] = s;
    }
  return c;
}

TEST(MatmulReference, HandCheckedProduct) {
  // [1 2 3; 4 5 6] * [7 8; 9 10; 11 12] = [58 64; 139 154]
  const matmul::dims d{2, 2, 3};
  const auto ref = matmul::cpu_reference(d, {1, 2, 3, 4, 5, 6}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(ref.value, (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(ref.abs_sum, (std::vector<double>{58, 64, 139, 154}));
  // Signs: the magnitudes add, the values cancel.
  const auto r2 = matmul::cpu_reference({1, 1, 2}, {1, -1}, {3, 3});
  EXPECT_EQ(r2.value, std::vector<double>{0});
  EXPECT_EQ(r2.abs_sum, std::vector<double>{6});
  // 1x1x1 and a 64x1x64 outer product.
  EXPECT_EQ(matmul::cpu_reference({1, 1, 1}, {-0.25f}, {0.75f}).value,
            std::vector<double>{-0.1875});
  std::vector<float> col(64), row(64);
  for (int i = 0; i < 64; ++i) col[i] = static_cast<float>(i), row[i] = static_cast<float>(i % 7);
  const auto outer = matmul::cpu_reference({64, 64, 1}, col, row);
  EXPECT_EQ(outer.value[5 * 64 + 9], 5.0 * 2);
}

TEST(MatmulReference, ExactModeInputsAreQuartersInMinusOneToOne) {
  const auto in = matmul::make_inputs(config(17, 19, 23));
  ASSERT_EQ(in.a.size(), 17u * 23);
  ASSERT_EQ(in.b.size(), 23u * 19);
  std::vector<int> seen(9, 0);
  for (const auto& v : {in.a, in.b})
    for (float x : v) {
      const float k = x * 4;
      ASSERT_EQ(k, std::round(k)) << x;
      ASSERT_LE(std::fabs(k), 4.0f);
      ++seen[static_cast<int>(k) + 4];
    }
  for (int k = 0; k < 9; ++k) EXPECT_GT(seen[k], 0) << "k = " << k - 4 << " never drawn";
  // The same seed gives the same inputs; another seed others.
  EXPECT_EQ(matmul::make_inputs(config(17, 19, 23)).a, in.a);
  auto other = config(17, 19, 23);
  other.seed = 1;
  EXPECT_NE(matmul::make_inputs(other).a, in.a);
}

// The exactness argument of exact mode: every product is a multiple of 1/16 with magnitude <= 1,
// so every partial sum in any order is a multiple of 1/16 below K in magnitude, exact in float32
// for K <= 2^20. Forward and backward float32 sums (with FMA) equal the double reference.
TEST(MatmulReference, ExactModeIsExactInAnySummationOrder) {
  const auto c = config(9, 11, 3000);
  const auto d = matmul::shape_of(c);
  const auto in = matmul::make_inputs(c);
  const auto ref = matmul::cpu_reference(d, in.a, in.b);
  for (bool reversed : {false, true}) {
    const auto got = float_product(d, in, reversed);
    const auto r = matmul::compare(c, ref, got);
    EXPECT_TRUE(r.ok) << r.expected << " / " << r.got << " / " << r.detail;
  }
  // Worst case: all products +1 (k = 4 everywhere) reach K exactly.
  const matmul::dims big{1, 1, 1u << 20};
  std::vector<float> ones(big.k, 1.0f);
  EXPECT_EQ(matmul::cpu_reference(big, ones, ones).value[0], static_cast<double>(1u << 20));
}

TEST(MatmulCompare, ExactModeCatchesOneMissingTermAndNaN) {
  const auto c = config(5, 7, 13);
  const auto d = matmul::shape_of(c);
  const auto in = matmul::make_inputs(c);
  const auto ref = matmul::cpu_reference(d, in.a, in.b);
  auto got = float_product(d, in, false);
  ASSERT_TRUE(matmul::compare(c, ref, got).ok);
  // Drop the last product of element (3, 4), as a kernel with an off-by-one k bound would.
  auto wrong = got;
  std::size_t at = 3 * d.n + 4;
  const float last = in.a[3 * d.k + d.k - 1] * in.b[(d.k - 1) * d.n + 4];
  if (last == 0) {  // find an element whose last product is not zero
    for (at = 0; at < got.size(); ++at)
      if (in.a[at / d.n * d.k + d.k - 1] * in.b[(d.k - 1) * d.n + at % d.n] != 0) break;
    ASSERT_LT(at, got.size());
  }
  wrong[at] -= in.a[at / d.n * d.k + d.k - 1] * in.b[(d.k - 1) * d.n + at % d.n];
  auto r = matmul::compare(c, ref, wrong);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(
      r.expected.find("C[" + std::to_string(at / d.n) + "][" + std::to_string(at % d.n) + "]"),
      std::string::npos)
      << r.expected;
  EXPECT_NE(r.detail.find("1 of 35 elements differ"), std::string::npos) << r.detail;
  auto nan = got;
  nan[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(matmul::compare(c, ref, nan).ok);
}

// The check runs in chunks on every core: with mismatches in several chunks it still counts them
// all and names the first by index, whatever chunk finishes first.
TEST(MatmulCompare, MismatchesInSeveralChunksNameTheFirst) {
  const auto c = config(64, 96, 8);
  const auto d = matmul::shape_of(c);
  const auto in = matmul::make_inputs(c);
  const auto ref = matmul::cpu_reference(d, in.a, in.b);
  auto got = float_product(d, in, false);
  ASSERT_TRUE(matmul::compare(c, ref, got).ok);
  for (const std::size_t at : {std::size_t{6000}, std::size_t{4100}, got.size() - 1})
    got[at] += 1.0f;
  const auto r = matmul::compare(c, ref, got);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.expected.find("C[42][68]"), std::string::npos) << r.expected;  // 4100 = 42 * 96 + 68
  EXPECT_NE(r.detail.find("3 of 6144 elements differ"), std::string::npos) << r.detail;
}

TEST(MatmulCompare, RandomModeToleranceAndNaN) {
  const auto c = config(31, 29, 2000, "random");
  const auto d = matmul::shape_of(c);
  const auto in = matmul::make_inputs(c);
  for (float x : in.a) ASSERT_TRUE(x >= -1.0f && x < 1.0f) << x;
  const auto ref = matmul::cpu_reference(d, in.a, in.b);
  for (bool reversed : {false, true}) {
    const auto r = matmul::compare(c, ref, float_product(d, in, reversed));
    EXPECT_TRUE(r.ok) << r.detail;
    EXPECT_NE(r.detail.find("relative Frobenius error"), std::string::npos);
  }
  auto got = float_product(d, in, false);
  auto off = got;
  off[7] += 0.01f;  // far beyond K * eps * sum|a*b| for one element
  EXPECT_FALSE(matmul::compare(c, ref, off).ok);
  auto nan = got;
  nan[100] = std::numeric_limits<float>::quiet_NaN();
  const auto r = matmul::compare(c, ref, nan);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.got.find("nan"), std::string::npos) << r.got;
  auto inf = got;
  inf[3] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(matmul::compare(c, ref, inf).ok);
  EXPECT_DOUBLE_EQ(matmul::frobenius_tolerance(1000), 1e-5);
  EXPECT_DOUBLE_EQ(matmul::frobenius_tolerance(16384), 2e-5);
}

TEST(MatmulShape, ParsingAndLimits) {
  EXPECT_EQ(parse_shape("4095x4097x1023"), (std::vector<std::uint64_t>{4095, 4097, 1023}));
  EXPECT_EQ(parse_shape("1X1X1"), (std::vector<std::uint64_t>{1, 1, 1}));
  for (const char* bad :
       {"", "x", "0x3x3", "3x3x", "3xx3", "3x3x3 ", "a", "3*3*3", "2147483648x1x1"}) {
    try {
      parse_shape(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const usage_error& e) {
      EXPECT_NE(std::string(e.what()).find("--shape"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(config(4095, 4097, 1023).describe(), "float32 4095x4097x1023");
  EXPECT_EQ(config(3, 3, 3, "random").describe(), "float32 3x3x3 (random inputs)");
  EXPECT_NO_THROW(matmul::shape_of(config(46340, 46340, 46340)));
  EXPECT_THROW(matmul::shape_of(config(46341, 46341, 1)), std::invalid_argument);  // C too big
  EXPECT_THROW(matmul::shape_of(config(1, 1, 1u << 31)), std::invalid_argument);
  EXPECT_THROW(matmul::shape_of(config(0, 1, 1)), std::invalid_argument);
  problem_config two = config(1, 1, 1);
  two.shape = {3, 3};
  EXPECT_THROW(matmul::shape_of(two), std::invalid_argument);
}

TEST(MatmulShape, SizesBecomeCubesAndShapesWin) {
  matmul_family f;
  run_request r;
  r.dtypes = {"int32", "float32"};
  r.ops = {"sum"};
  r.sizes = {1024, 17};
  auto cs = configs_for(f, r);
  ASSERT_EQ(cs.size(), 2u);  // float32 only; matmul has no ops, so --op does not multiply them
  EXPECT_EQ(cs[0].shape, (std::vector<std::uint64_t>{1024, 1024, 1024}));
  EXPECT_EQ(cs[1].describe(), "float32 17x17x17");
  r.shapes = {{4095, 4097, 1023}};
  cs = configs_for(f, r);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].shape_text(), "4095x4097x1023");
  r.shapes.clear();
  r.sizes_for_shapes = false;  // the sizes came from the config file: they are reduce's
  cs = configs_for(f, r);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].shape_text(), "4096x4096x4096");
}

TEST(MatmulShape, CommandLineErrorsNameTheOption) {
  auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                             " --family matmul --shape 4095x0x3 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--shape '4095x0x3'"), std::string::npos) << r.output;
  r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --family matmul --shape 46341x46341x2 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--shape"), std::string::npos) << r.output;
  // The family's `require` that fails, with its file:line.
  EXPECT_NE(r.output.find("does not meet 'M * N < 2147483648' ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("matmul/family.toml:"), std::string::npos) << r.output;
  r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --family matmul --shape 16x16 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("needs 3 dimensions"), std::string::npos) << r.output;
  r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --family matmul --size 50000 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--size 50000"), std::string::npos) << r.output;
  // The config file's dtypes (int32,float32) and op (sum) are reduce's: matmul takes float32.
  r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --family matmul --size 64 --compile-only");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("matmul.warptile"), std::string::npos) << r.output;
  // Named on the command line, a dtype or an op that no selected family has is an error.
  r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --family matmul --dtype int32,float32 --size 64 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--dtype: family matmul has no dtype 'int32'"), std::string::npos)
      << r.output;
  r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                        " --family matmul --op sum --size 64 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--op: family matmul has no op 'sum'"), std::string::npos) << r.output;
}

const char* tiled_header = R"(/* kernlab
family:     matmul
entry:      t<TILE, BK>
params:     TILE = sqrt(BLOCK); BK = 2 * TILE
blocks:     256 1024
block_dims: TILE, TILE
grid_dims:  (N + TILE - 1) / TILE, (M + TILE - 1) / TILE
shared_bytes: 2 * TILE * BK * TSIZE
*/
)";

TEST(MatmulGeometry, ParamsAndDimsFromTheHeader) {
  const auto h = parse_header(tiled_header, "dir/matmul/t.cu");
  const auto& d = h.descriptor;
  ASSERT_EQ(d.params.size(), 2u);
  EXPECT_EQ(d.params[0], (std::pair<std::string, std::string>{"TILE", "sqrt(BLOCK)"}));
  EXPECT_EQ(d.params[1].second, "2 * TILE");
  EXPECT_EQ(d.block_dims, (std::vector<std::string>{"TILE", "TILE"}));
  EXPECT_EQ(d.grid_dims.size(), 2u);
  matmul_family f;
  EXPECT_NO_THROW(f.check(h));
  const auto c = config(4095, 4097, 1023);
  EXPECT_EQ(f.name_expression(d, 256, c), "t<16, 32>");
  EXPECT_EQ(f.name_expression(d, 1024, c), "t<32, 64>");
  const auto g = evaluate_launch_dims(d, 256, c);
  EXPECT_EQ(g.block[0], 16u);
  EXPECT_EQ(g.block[1], 16u);
  EXPECT_EQ(g.grid[0], 257u);  // ceil(4097 / 16)
  EXPECT_EQ(g.grid[1], 256u);  // ceil(4095 / 16)
  EXPECT_EQ(g.grid[2], 1u);
  EXPECT_EQ(f.dynamic_shared_bytes(d, 1024, c), 2u * 32 * 64 * 4);
  // A grid past CUDA's limit of 65535 rows is an error that names the expression.
  try {
    evaluate_launch_dims(d, 256, config(65536 * 16 + 1, 1, 1));
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("grid_dims '(M + TILE - 1) / TILE'"), std::string::npos)
        << e.what();
  }
}

TEST(MatmulGeometry, BadHeadersNameFileAndLine) {
  struct bad {
    std::string header, message;
    int line;
  };
  const std::string head = "/* kernlab\nfamily: matmul\nentry: k<BLOCK>\n";
  for (const auto& b : std::vector<bad>{
           {head + "blocks: 256 512\nparams: TILE = sqrt(BLOCK)\nblock_dims: TILE, "
                   "TILE\ngrid_dims: 1, 1\n*/",
            "block_dims give 484 threads for BLOCK=512", 6},
           {head + "blocks: 256\nparams: BLOCK = 3\n*/", "'BLOCK' is a reserved name", 5},
           {head + "blocks: 256\nparams: TILE\n*/", "is not 'NAME = expression'", 5},
           {head + "blocks: 256\nparams: X = M\n*/", "unknown variable 'M'", 5},
           {head + "blocks: 256\nblock_dims: 16, 16\ngrid_dims: N - N, 1\n*/",
            "grid_dims 'N - N' is 0", 6},
           {head + "blocks: 256\nblock_dims: 16,,16\n*/", "block_dims has an empty dimension", 5},
           {head + "blocks: 256\nblock_dims: 1, 1, 1, 256\n*/", "more than 3 dimensions", 5},
           {head + "blocks: 256\ngrid_dims: sqrt(-1), 1\n*/", "sqrt of a negative value", 5},
       }) {
    try {
      parse_header(b.header, "m.cu");
      ADD_FAILURE() << "accepted:\n" << b.header;
    } catch (const metadata_error& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("m.cu:" + std::to_string(b.line)), std::string::npos)
          << e.what();
    }
  }
  // The family's own check: a matmul file needs both dims, and has no tile or ops.
  matmul_family f;
  EXPECT_THROW(f.check(parse_header(head + "blocks: 256\n*/", "m.cu")), metadata_error);
  EXPECT_THROW(
      f.check(parse_header(head + "blocks: 256\nblock_dims: 16, 16\ngrid_dims: 1, 1\nops: sum\n*/",
                           "m.cu")),
      metadata_error);
  EXPECT_THROW(
      f.check(parse_header(
          head + "blocks: 256\nblock_dims: 16, 16\ngrid_dims: 1, 1\ndtypes: int32\n*/", "m.cu")),
      metadata_error);
}

TEST(MatmulGeometry, SqrtIsTheIntegerSquareRoot) {
  EXPECT_EQ(evaluate("sqrt(1024)", {}), 32);
  EXPECT_EQ(evaluate("sqrt(255)", {}), 15);
  EXPECT_EQ(evaluate("sqrt(0)", {}), 0);
  EXPECT_EQ(evaluate("sqrt(BLOCK) * 2", {{"BLOCK", 256}}), 32);
  EXPECT_EQ(evaluate("sqrt(1099511627776 * 1048576)", {}), std::int64_t{1} << 30);
  EXPECT_THROW(evaluate("sqrt(4", {}), expression_error);
}

// Every shipped matmul file: its header is valid, in the family's order, and its launch
// geometry evaluates for awkward shapes at every block it lists.
TEST(MatmulGeometry, ShippedVariantsCoverTheOutput) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(test::kernels_dir());
  const auto variants = reg.select({"all"}, "matmul");
  ASSERT_EQ(variants.size(), 8u);
  std::vector<std::string> names;
  for (const auto* e : variants) {
    names.push_back(e->descriptor.name);
    EXPECT_EQ(e->error, "") << e->descriptor.name;
    for (unsigned b : e->descriptor.blocks)
      for (const auto& s :
           std::vector<std::vector<std::uint64_t>>{{1, 1, 1}, {4095, 4097, 1023}, {64, 1, 64}}) {
        const auto c = config(s[0], s[1], s[2]);
        const auto g = evaluate_launch_dims(e->descriptor, b, c);
        EXPECT_EQ(g.block[0] * g.block[1] * g.block[2], b);
      }
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"naive", "tiled", "regblock1d", "regblock2d", "vectorized",
                                      "conflict_free", "double_buffer", "warptile"}));
  EXPECT_EQ(reg.find("matmul.tiled")->descriptor.blocks, (std::vector<unsigned>{256, 1024}));
}

TEST(MatmulPlugin, CublasRegistersAsTheBaseline) {
  family_registry fams;
  test::register_shipped_families(fams);
  add_data_families(fams, {test::kernels_dir()}, {});  // scan's plugin (kernlab_cub_scan.so)
  registry reg(fams);
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  EXPECT_TRUE(reg.warnings().empty()) << reg.warnings().front();
  const auto* e = reg.find("matmul.cublas");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->descriptor.is_baseline);
  EXPECT_EQ(e->descriptor.origin, origin_kind::plugin);
  EXPECT_TRUE(e->descriptor.blocks.empty());
  EXPECT_EQ(e->descriptor.dtypes, std::vector<std::string>{"float32"});
  EXPECT_TRUE(e->descriptor.ops.empty());
  // The output says plain FP32, no TF32.
  EXPECT_NE(e->descriptor.summary.find("plain FP32"), std::string::npos) << e->descriptor.summary;
  EXPECT_NE(e->descriptor.summary.find("no TF32"), std::string::npos) << e->descriptor.summary;
  EXPECT_EQ(reg.select({"matmul.*"}).front(), e);
}

TEST(MatmulTable, TflopsAndPercentOfTheFp32Peak) {
  family_registry fams;
  test::register_shipped_families(fams);
  auto record = [](const std::string& name, double median_us, bool baseline) {
    result_record r;
    r.variant.family = "matmul";
    r.variant.name = name;
    r.variant.origin = baseline ? origin_kind::plugin : origin_kind::source;
    r.variant.is_baseline = baseline;
    r.variant.summary = baseline ? "cublasSgemm, plain FP32 (no TF32)" : "";
    r.config = config(4096, 4096, 4096);
    r.block = baseline ? 0 : 256;
    r.status = outcome::passed;
    r.flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
    r.bytes = 3 * 4.0 * 4096 * 4096;
    timing_stats t;
    t.median_ms = median_us / 1e3;
    r.timing = t;
    return r;
  };
  cuda::device_info d;
  d.name = "Test H100";
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 50u << 20;
  EXPECT_NEAR(d.peak_fp32_flops() / 1e12, 66.9, 0.1);  // 132 x 128 x 2 x 1.98 GHz
  table_options opt;
  opt.families = &fams;
  std::ostringstream os;
  // 137.4 GFLOP in 2748.8 us is 50 TFLOP/s; in 13744 us, 10.
  print_group(os, {record("tiled", 13744, false), record("cublas", 2748.8, true)}, d, opt);
  const std::string out = os.str();
  EXPECT_NE(out.find("TFLOP/s"), std::string::npos) << out;
  EXPECT_EQ(out.find("GB/s"), std::string::npos) << out;
  EXPECT_NE(out.find("10.00"), std::string::npos) << out;
  EXPECT_NE(out.find("50.00"), std::string::npos) << out;
  EXPECT_NE(out.find("x cublas"), std::string::npos) << out;
  EXPECT_NE(out.find("0.20x"), std::string::npos) << out;
  EXPECT_NE(out.find("66.9 TFLOP/s (132 SMs x 128 FP32 lanes x 2 x 1980 MHz)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("baseline cublas: cublasSgemm, plain FP32 (no TF32)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("best compiled here: tiled block 256, 10.00 TFLOP/s, 0.20x of cublas"),
            std::string::npos)
      << out;
}

// Issue: the header printed "0 B" and "0 GFLOP" when the group's first row was skipped (tiled
// at block 128): a skipped row never made a problem, so its bytes and FLOPs are zero. The
// figures come from the family and the configuration.
TEST(MatmulTable, HeaderFiguresComeFromTheProblemNotTheFirstRow) {
  family_registry fams;
  test::register_shipped_families(fams);
  result_record skipped;
  skipped.variant.family = "matmul";
  skipped.variant.name = "tiled";
  skipped.variant.origin = origin_kind::source;
  skipped.config = config(4096, 4096, 4096);
  skipped.block = 128;
  skipped.status = outcome::skipped;
  skipped.message = "block 128 has no square tile";
  result_record failed = skipped;  // a second row without figures either
  failed.variant.name = "naive";
  failed.status = outcome::failed;
  failed.message = "launch failed";
  cuda::device_info d;
  d.name = "Test H100";
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 50u << 20;
  table_options opt;
  opt.families = &fams;
  std::ostringstream os;
  print_group(os, {skipped, failed}, d, opt);
  const std::string out = os.str();
  // 3 x 4096^2 float32 = 192 MiB; 2 x 4096^3 = 137.4 GFLOP.
  EXPECT_NE(out.find("(192.00 MiB, above the 50.00 MiB L2"), std::string::npos) << out;
  EXPECT_NE(out.find("137.4 GFLOP (2 M N K)"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 0 B"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 0 GFLOP"), std::string::npos) << out;
}

}  // namespace
}  // namespace kl
