// The matmul family without a GPU: its description (kernels_src/matmul/family.toml), its exact
// inputs (exact in any summation order), the comparison of both input modes (exact, and the
// K eps sum|a b| bound), shapes on the command line and the family's limits, the 2-D launch
// geometry of the kernel headers, the table's TFLOP/s columns and the cuBLAS plugin's
// registration. NVRTC compiles of every matmul file and of the reference are in test_compile.cpp
// and test_data_family.cpp; the reference runs on the GPU in test_gpu_matmul.cpp.
#include "cli/options.hpp"
#include "families/family.hpp"
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
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

namespace kl {
namespace {

const family& matmul() {
  static family_registry fams;
  static const family* f = [] {
    test::register_shipped_families(fams);
    return fams.find("matmul");
  }();
  EXPECT_NE(f, nullptr) << fams.broken("matmul");
  return *f;
}

problem_config config(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                      const std::string& mode = "exact") {
  return {"float32", "", mode, 12345, {{"M", m}, {"N", n}, {"K", k}}};
}

struct dims {
  std::uint64_t m, n, k;
};
struct inputs {
  std::vector<float> a, b;
};

// A and B as the family generates them.
inputs make_inputs(const problem_config& c) {
  auto gen = [&](const char* name, std::uint64_t count) {
    return test::generated_values<float>(matmul(), name, "float32", count, c.seed,
                                         c.input_mode == "random");
  };
  return {gen("A", c.shape()[0] * c.shape()[2]), gen("B", c.shape()[2] * c.shape()[1])};
}

// The test's own reference: C in double (products exact, k order) and the magnitudes, as the
// reference kernel writes them.
struct reference {
  std::vector<std::uint8_t> value, magnitude;
};
reference cpu_reference(const dims& d, const inputs& in) {
  std::vector<double> v(d.m * d.n), a(d.m * d.n);
  for (std::uint64_t i = 0; i < d.m; ++i)
    for (std::uint64_t j = 0; j < d.n; ++j)
      for (std::uint64_t k = 0; k < d.k; ++k) {
        const double p = static_cast<double>(in.a[i * d.k + k]) * in.b[k * d.n + j];
        v[i * d.n + j] += p;
        a[i * d.n + j] += std::fabs(p);
      }
  reference r{std::vector<std::uint8_t>(v.size() * 8), std::vector<std::uint8_t>(a.size() * 8)};
  std::memcpy(r.value.data(), v.data(), r.value.size());
  std::memcpy(r.magnitude.data(), a.data(), r.magnitude.size());
  return r;
}

// C = A * B in float32, summing k in the given order: what a kernel might compute.
std::vector<float> float_product(const dims& d, const inputs& in, bool reversed) {
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

// The family's rule for the configuration's input mode.
check_result compare(const problem_config& c, const reference& ref, const std::vector<float>& got) {
  std::vector<std::uint8_t> bytes(got.size() * 4);
  std::memcpy(bytes.data(), got.data(), bytes.size());
  const compare_spec& rule = matmul().spec().compare_for(c.input_mode);
  return compare_buffer(rule, "C", "float32", bytes, "float64", ref.value, &ref.magnitude,
                        static_cast<double>(c.shape()[2]));
}

TEST(MatmulInputs, ExactModeInputsAreQuartersInMinusOneToOne) {
  const auto in = make_inputs(config(170, 190, 230));
  std::set<float> seen;
  for (const auto* v : {&in.a, &in.b})
    for (float x : *v) {
      ASSERT_EQ(x * 4, std::trunc(x * 4)) << x;
      ASSERT_LE(std::fabs(x), 1.0f) << x;
      seen.insert(x);
    }
  EXPECT_EQ(seen.size(), 9u);  // -1, -0.75, ..., 1
  EXPECT_EQ(make_inputs(config(170, 190, 230)).a, in.a);
  auto other = config(170, 190, 230);
  other.seed = 1;
  EXPECT_NE(make_inputs(other).a, in.a);
  EXPECT_NE(in.a, std::vector<float>(in.b.begin(), in.b.begin() + in.a.size()));  // A is not B
}

// Exact mode's promise: every order of the additions gives the exact product.
TEST(MatmulCompare, ExactModeIsExactInAnySummationOrder) {
  const auto c = config(33, 29, 1000);
  const dims d{33, 29, 1000};
  const auto in = make_inputs(c);
  const auto ref = cpu_reference(d, in);
  for (bool reversed : {false, true}) {
    const auto r = compare(c, ref, float_product(d, in, reversed));
    EXPECT_TRUE(r.ok) << r.detail;
    EXPECT_NE(r.expected.find("match (exact)"), std::string::npos) << r.expected;
  }
}

TEST(MatmulCompare, ExactModeCatchesOneMissingTermAndNaN) {
  const auto c = config(17, 19, 23);
  const dims d{17, 19, 23};
  const auto in = make_inputs(c);
  const auto ref = cpu_reference(d, in);
  auto got = float_product(d, in, false);
  // Element (5, 7) without its last term (a nonzero one).
  std::size_t k = d.k - 1;
  while (in.a[5 * d.k + k] * in.b[k * d.n + 7] == 0) --k;
  auto wrong = got;
  wrong[5 * d.n + 7] -= in.a[5 * d.k + k] * in.b[k * d.n + 7];
  auto r = compare(c, ref, wrong);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.expected.rfind("C[" + std::to_string(5 * d.n + 7) + "] = ", 0), 0u) << r.expected;
  EXPECT_NE(r.detail.find("1 of 323 elements"), std::string::npos) << r.detail;
  auto nan = got;
  nan[0] = std::nanf("");
  EXPECT_FALSE(compare(c, ref, nan).ok);
}

TEST(MatmulCompare, RandomModeBoundAndNaN) {
  const auto c = config(40, 30, 2000, "random");
  const dims d{40, 30, 2000};
  const auto in = make_inputs(c);
  const auto ref = cpu_reference(d, in);
  for (bool reversed : {false, true}) {
    const auto r = compare(c, ref, float_product(d, in, reversed));
    EXPECT_TRUE(r.ok) << r.detail;
    EXPECT_NE(r.expected.find("match (bound)"), std::string::npos) << r.expected;
  }
  // An element off by 2 K eps of its magnitude fails; so does a NaN or an infinity.
  auto got = float_product(d, in, false);
  double mag0 = 0;
  std::memcpy(&mag0, ref.magnitude.data(), 8);
  auto off = got;
  off[0] += static_cast<float>(2 * 2000 * std::ldexp(1.0, -23) * mag0);
  EXPECT_FALSE(compare(c, ref, off).ok);
  auto nan = got;
  nan[3] = std::nanf("");
  EXPECT_FALSE(compare(c, ref, nan).ok);
  auto inf = got;
  inf[4] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare(c, ref, inf).ok);
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
  // The family's limits: every matrix below 2^31 elements (its `require`), every axis >= 1.
  EXPECT_NO_THROW(matmul().axis_variables(config(46340, 46340, 46340)));
  EXPECT_NO_THROW(matmul().axis_variables(config(1, 1, (1u << 31) - 1)));  // a long inner product
  EXPECT_THROW(matmul().axis_variables(config(46341, 46341, 1)), std::invalid_argument);  // C
  EXPECT_THROW(matmul().axis_variables(config(2, 1, 1u << 30)), std::invalid_argument);   // A
  EXPECT_THROW(matmul().axis_variables(config(0, 1, 1)), std::invalid_argument);
  problem_config two = config(1, 1, 1);
  two.axes.pop_back();  // two values for three axes
  EXPECT_THROW(matmul().axis_variables(two), std::invalid_argument);
}

TEST(MatmulShape, SizesBecomeCubesAndShapesWin) {
  const family& f = matmul();
  run_request r;
  r.dtypes = {"int32", "float32"};
  r.ops = {"sum"};
  r.axes = {axis_choice::sizes({1024, 17})};
  auto cs = configs_for(f, r);
  ASSERT_EQ(cs.size(), 2u);  // float32 only; matmul has no ops, so --op does not multiply them
  EXPECT_EQ(cs[0].shape(), (std::vector<std::uint64_t>{1024, 1024, 1024}));
  EXPECT_EQ(cs[1].describe(), "float32 17x17x17");
  r.axes = {axis_choice::shapes({{4095, 4097, 1023}})};
  cs = configs_for(f, r);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].shape_text(), "4095x4097x1023");
  r.axes = {axis_choice::sizes({1024, 17})};
  r.axes[0].one_axis_families_only = true;  // --size in a sweep with reduce: they are reduce's
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
  const family& f = matmul();
  EXPECT_NO_THROW(f.check(h));
  const auto c = config(4095, 4097, 1023);
  EXPECT_EQ(f.name_expression(d, 256, c), "t<16, 32>");
  EXPECT_EQ(f.name_expression(d, 1024, c), "t<32, 64>");
  const auto g = f.launch(d, 256, c, 132, 1056);
  EXPECT_EQ(g.block[0], 16u);
  EXPECT_EQ(g.block[1], 16u);
  EXPECT_EQ(g.grid[0], 257u);  // ceil(4097 / 16)
  EXPECT_EQ(g.grid[1], 256u);  // ceil(4095 / 16)
  EXPECT_EQ(g.grid[2], 1u);
  EXPECT_EQ(f.dynamic_shared_bytes(d, 1024, c), 2u * 32 * 64 * 4);
  // A grid past CUDA's limit of 65535 rows: the family refuses such an M first (its reference
  // launches 16-row tiles), naming the condition.
  try {
    f.launch(d, 256, config(65535 * 16 + 1, 1, 1), 132, 1056);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("does not meet 'M <= 1048560'"), std::string::npos)
        << e.what();
  }
  // Past the limit at a larger tile with the same M it is the header's expression that is named.
  try {
    evaluate_dims(d.block_dims, {"(M + TILE - 1) / TILE", "70000"}, 256,
                  {{"M", 16}, {"TILE", 16}, {"N", 1}}, "x");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("grid_dims '70000' is 70000"), std::string::npos)
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
  // The family's own check: a matmul file has no tile, no ops and no int32 (without dims it gets
  // the family's default launch).
  const family& f = matmul();
  EXPECT_NO_THROW(f.check(parse_header(head + "blocks: 256\n*/", "m.cu")));
  EXPECT_THROW(f.check(parse_header(head + "blocks: 256\ntile: BLOCK\n*/", "m.cu")),
               metadata_error);
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
        const auto g = matmul().launch(e->descriptor, b, c, 132, 1056);
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
  add_data_families(
      fams, {test::kernels_dir()}, {},
      {std::string(KERNLAB_PLUGIN_DIR) + "/families"});  // scan's plugin (kernlab_cub_scan.so)
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
