// The matmul_f64 family without a GPU (issue 19, float64 as an element type): its description
// (kernels_src/matmul_f64/family.toml) and its FP64 tensor-core roofline, its exact inputs (exact
// in double in any summation order, and beyond float32's precision so that a kernel computing in
// float32 fails), the random-mode bound against a reference that rounds in double too, the
// kernels' launch geometry, the cuBLAS plugin's DGEMM row, the "fp64" roofline word and its peak
// in the table and the results file. NVRTC compiles of every file at every block and of the
// reference are in test_data_family.cpp; the GPU runs are test_gpu_data_family.cpp's.
#include "cuda/device.hpp"
#include "families/family.hpp"
#include "registry/registry.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

namespace kl {
namespace {

const family_registry& shipped() {
  static family_registry fams;
  static const bool once = [] {
    test::register_shipped_families(fams);
    return true;
  }();
  (void)once;
  return fams;
}

const family& f64() {
  static const family* f = shipped().find("matmul_f64");
  EXPECT_NE(f, nullptr) << shipped().broken("matmul_f64");
  return *f;
}

problem_config config(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                      const std::string& mode = "exact") {
  return {"float64", "", mode, 12345, {{"M", m}, {"N", n}, {"K", k}}};
}

struct dims {
  std::uint64_t m, n, k;
};
struct inputs {
  std::vector<double> a, b;
};

inputs make_inputs(const problem_config& c) {
  auto gen = [&](const char* name, std::uint64_t count) {
    return test::generated_values<double>(f64(), name, "float64", count, c.seed,
                                          c.input_mode == "random");
  };
  return {gen("A", c.shape()[0] * c.shape()[2]), gen("B", c.shape()[2] * c.shape()[1])};
}

// What reference.cu writes: C by one FMA a term in k order, and the magnitudes.
struct reference {
  std::vector<std::uint8_t> value, magnitude;
};
reference cpu_reference(const dims& d, const inputs& in) {
  std::vector<double> v(d.m * d.n), a(d.m * d.n);
  for (std::uint64_t i = 0; i < d.m; ++i)
    for (std::uint64_t j = 0; j < d.n; ++j)
      for (std::uint64_t k = 0; k < d.k; ++k) {
        const double x = in.a[i * d.k + k], y = in.b[k * d.n + j];
        v[i * d.n + j] = std::fma(x, y, v[i * d.n + j]);
        a[i * d.n + j] = std::fma(std::fabs(x), std::fabs(y), a[i * d.n + j]);
      }
  reference r{std::vector<std::uint8_t>(v.size() * 8), std::vector<std::uint8_t>(a.size() * 8)};
  std::memcpy(r.value.data(), v.data(), r.value.size());
  std::memcpy(r.magnitude.data(), a.data(), r.magnitude.size());
  return r;
}

// What a kernel might compute: in double, k reversed and without FMA (another rounding of every
// term than the reference's), or in float32 throughout (a kernel that lost the precision).
enum class arithmetic { double_reversed, float32 };
std::vector<double> product(const dims& d, const inputs& in, arithmetic how) {
  std::vector<double> c(d.m * d.n);
  for (std::uint64_t i = 0; i < d.m; ++i)
    for (std::uint64_t j = 0; j < d.n; ++j) {
      double s = 0;
      float sf = 0;
      for (std::uint64_t q = 0; q < d.k; ++q) {
        if (how == arithmetic::double_reversed) {
          const std::uint64_t k = d.k - 1 - q;
          const double p = in.a[i * d.k + k] * in.b[k * d.n + j];
          s += p;
        } else {
          sf = std::fma(static_cast<float>(in.a[i * d.k + q]),
                        static_cast<float>(in.b[q * d.n + j]), sf);
        }
      }
      c[i * d.n + j] = how == arithmetic::float32 ? sf : s;
    }
  return c;
}

check_result compare(const problem_config& c, const reference& ref,
                     const std::vector<double>& got) {
  std::vector<std::uint8_t> bytes(got.size() * 8);
  std::memcpy(bytes.data(), got.data(), bytes.size());
  const compare_spec& rule = f64().spec().compare_for(c.input_mode);
  const double terms = rule.rule == "bound" ? 2.0 * static_cast<double>(c.shape()[2]) : 0.0;
  return compare_buffer(rule, "C", "float64", bytes, "float64", ref.value, &ref.magnitude, terms);
}

TEST(MatmulF64Family, DescriptionRooflineAndLimits) {
  const family& f = f64();
  EXPECT_EQ(f.dtypes(), std::vector<std::string>{"float64"});
  EXPECT_EQ(f.spec().roofline, "fp64");
  EXPECT_EQ(f.roofline(), roofline_kind::fp64_tensor_compute);
  EXPECT_EQ(f.spec().compare_for("exact").rule, "exact");
  EXPECT_EQ(f.spec().compare_for("random").rule, "bound");
  EXPECT_EQ(f.spec().compare_for("random").terms, "2 * K");
  EXPECT_TRUE(f.spec().reference_magnitudes());
  EXPECT_EQ(f.spec().reference.entry, "matmul_f64_reference<16>");
  // 2 M N K FLOPs, 8 bytes an element of A, B and C.
  const auto c = config(4095, 4097, 1023);
  EXPECT_DOUBLE_EQ(f.problem_flops(c), 2.0 * 4095 * 4097 * 1023);
  EXPECT_DOUBLE_EQ(f.problem_bytes(c), 8.0 * (4095.0 * 1023 + 1023.0 * 4097 + 4095.0 * 4097));
  // Exact sums need K <= 2^27; the 32-bit indices need every matrix below 2^31 elements.
  EXPECT_NO_THROW(f.axis_variables(config(1, 1, 1u << 27)));
  EXPECT_THROW(f.axis_variables(config(1, 1, (1u << 27) + 1)), std::invalid_argument);
  EXPECT_THROW(f.axis_variables(config(46341, 46341, 1)), std::invalid_argument);
}

// Exact inputs are quarters in [-2048, 2048]: exact in double, but not all of their products
// are exact in float32, and not all of them are TF32 values (11 significant bits).
TEST(MatmulF64Inputs, ExactInputsAreQuartersBeyondFloat32) {
  const auto in = make_inputs(config(70, 90, 130));
  std::set<double> seen;
  int wide = 0;  // inputs with more than 11 significant bits
  for (const auto* v : {&in.a, &in.b})
    for (double x : *v) {
      ASSERT_EQ(x * 4, std::trunc(x * 4)) << x;
      ASSERT_LE(std::fabs(x), 2048.0) << x;
      seen.insert(x);
      std::int64_t q = std::llabs(static_cast<std::int64_t>(x * 4));
      while (q > 0 && q % 2 == 0) q /= 2;
      wide += q >= 2048;
    }
  EXPECT_GT(seen.size(), 8000u);
  EXPECT_GT(wide, 1000);
  int inexact = 0;  // products float32 rounds
  for (std::size_t i = 0; i < 1000; ++i) {
    const double p = in.a[i] * in.b[i];
    inexact += static_cast<double>(static_cast<float>(in.a[i]) * static_cast<float>(in.b[i])) != p;
  }
  EXPECT_GT(inexact, 100);
  EXPECT_EQ(make_inputs(config(70, 90, 130)).a, in.a);
}

// Exact mode: any order and rounding of the terms in double gives the reference's values; a
// float32 computation of the same product does not, even at one term.
TEST(MatmulF64Compare, ExactInAnyOrderAndNotInFloat32) {
  const auto c = config(33, 29, 1000);
  const dims d{33, 29, 1000};
  const auto in = make_inputs(c);
  const auto ref = cpu_reference(d, in);
  auto r = compare(c, ref, product(d, in, arithmetic::double_reversed));
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_NE(r.expected.find("match (exact)"), std::string::npos) << r.expected;
  r = compare(c, ref, product(d, in, arithmetic::float32));
  EXPECT_FALSE(r.ok);
  const auto c1 = config(8, 8, 1);
  const dims d1{8, 8, 1};
  const auto in1 = make_inputs(c1);
  EXPECT_FALSE(compare(c1, cpu_reference(d1, in1), product(d1, in1, arithmetic::float32)).ok);
}

// Random mode: a double computation rounded differently from the reference passes the 2 K eps
// bound; a float32 one fails it, as do NaN and an element off by 4 K eps of its magnitude.
TEST(MatmulF64Compare, RandomModeBoundAllowsTheReferencesRounding) {
  const auto c = config(40, 30, 2000, "random");
  const dims d{40, 30, 2000};
  const auto in = make_inputs(c);
  const auto ref = cpu_reference(d, in);
  const auto got = product(d, in, arithmetic::double_reversed);
  auto r = compare(c, ref, got);
  EXPECT_TRUE(r.ok) << r.detail;
  EXPECT_NE(r.expected.find("match (bound)"), std::string::npos) << r.expected;
  // The orders differ: the results are not all equal, so the bound is doing work.
  EXPECT_NE(std::memcmp(got.data(), ref.value.data(), ref.value.size()), 0);
  EXPECT_FALSE(compare(c, ref, product(d, in, arithmetic::float32)).ok);
  double mag0 = 0;
  std::memcpy(&mag0, ref.magnitude.data(), 8);
  auto off = got;
  off[0] += 4 * 2000 * std::ldexp(1.0, -52) * mag0;
  EXPECT_FALSE(compare(c, ref, off).ok);
  auto nan = got;
  nan[3] = std::nan("");
  EXPECT_FALSE(compare(c, ref, nan).ok);
}

// The shipped kernels: their order, blocks, and a launch that covers C at awkward shapes.
TEST(MatmulF64Geometry, ShippedVariantsCoverTheOutput) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_source_dir(test::kernels_dir());
  const auto variants = reg.select({"all"}, "matmul_f64");
  std::vector<std::string> names;
  for (const auto* e : variants) {
    names.push_back(e->descriptor.name);
    EXPECT_EQ(e->error, "") << e->descriptor.name;
    EXPECT_EQ(e->descriptor.blocks, std::vector<unsigned>{256}) << e->descriptor.name;
    for (const auto& s : std::vector<std::vector<std::uint64_t>>{
             {1, 1, 1}, {127, 129, 17}, {4095, 4097, 1023}, {8192, 8192, 4096}}) {
      const auto c = config(s[0], s[1], s[2]);
      const auto g = f64().launch(e->descriptor, 256, c, 132, 132);
      EXPECT_EQ(g.block[0] * g.block[1] * g.block[2], 256u);
      EXPECT_EQ(g.grid[0], (s[1] + 127) / 128);  // 128 x 128 tiles of C
      EXPECT_EQ(g.grid[1], (s[0] + 127) / 128);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"simt_regblock", "dmma_multistage", "dmma_16816"}));
  // The DMMA steps' named points: 3 slices of A (128 x 36) and B (32 x 132) doubles, the same
  // tiles for m8n8k4 and m16n8k16; the second is Hopper's only (sm_90a).
  for (const char* name : {"matmul_f64.dmma_multistage", "matmul_f64.dmma_16816"}) {
    const auto* e = reg.find(name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(f64().dynamic_shared_bytes(e->descriptor, 256, config(64, 64, 64)),
              3u * (128 * 36 + 32 * 132) * 8)
        << name;
  }
  EXPECT_EQ(f64().name_expression(reg.find("matmul_f64.dmma_multistage")->descriptor, 256,
                                  config(64, 64, 64)),
            "dmma<256, 3, 32>");
  EXPECT_EQ(
      f64().name_expression(reg.find("matmul_f64.dmma_16816")->descriptor, 256, config(64, 64, 64)),
      "dmma_sm90<256, 3, 32>");
  EXPECT_EQ(reg.find("matmul_f64.dmma_multistage")->descriptor.target, "");
  EXPECT_EQ(reg.find("matmul_f64.dmma_16816")->descriptor.target, "sm_90a");
  // Every point of the tunable files fits the 227 KiB of shared memory an H100 block may have.
  for (const char* file : {"dmma_tune", "dmma_sm90_tune"}) {
    const auto points = reg.select({file}, "matmul_f64");
    EXPECT_EQ(points.size(), 5u) << file;
    for (const auto* p : points)
      EXPECT_LE(f64().dynamic_shared_bytes(p->descriptor, 256, config(64, 64, 64)), 232448u)
          << p->descriptor.name;
  }
}

TEST(MatmulF64Plugin, CublasDgemmIsTheBaseline) {
  family_registry fams;
  test::register_shipped_families(fams);
  registry reg(fams);
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  const auto* e = reg.find("matmul_f64.cublas");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->descriptor.is_baseline);
  EXPECT_EQ(e->descriptor.origin, origin_kind::plugin);
  EXPECT_EQ(e->descriptor.dtypes, std::vector<std::string>{"float64"});
  EXPECT_NE(e->descriptor.summary.find("CUBLAS_COMPUTE_64F"), std::string::npos)
      << e->descriptor.summary;
  EXPECT_NE(e->descriptor.summary.find("no emulation"), std::string::npos) << e->descriptor.summary;
  // The other families' cuBLAS rows are still there.
  for (const char* name : {"matmul.cublas", "matmul_tc.cublas", "matmul_tf32.cublas"})
    EXPECT_NE(reg.find(name), nullptr) << name;
}

cuda::device_info h100() {
  cuda::device_info d;
  d.name = "Test H100";
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 50u << 20;
  return d;
}

// The FP64 tensor-core peak: 256 FLOP per SM per clock on H100 and H200 (67 TFLOP/s on an SXM
// part), 128 on A100 (19.5), unknown elsewhere rather than wrong.
TEST(RooflineFp64, TheFp64TensorCorePeak) {
  cuda::device_info d = h100();
  EXPECT_EQ(d.fp64_tensor_flops_per_sm_clock(), 256);
  EXPECT_NEAR(d.peak_fp64_tensor_flops() / 1e12, 66.9, 0.1);  // 132 x 256 x 1.98 GHz
  EXPECT_EQ(d.peak_flops_for("fp64"), d.peak_fp64_tensor_flops());
  EXPECT_EQ(d.tensor_flops_per_sm_clock_for("fp64"), 256);
  EXPECT_EQ(d.tensor_flops_per_sm_clock_for("tf32"), 2048);
  EXPECT_EQ(d.tensor_flops_per_sm_clock_for("tensor"), 4096);
  EXPECT_EQ(d.tensor_flops_per_sm_clock_for("compute"), 0);
  // Half the FP32 peak: FP32 lanes are 2 FLOP x 128 a clock, the FP64 tensor cores 256.
  EXPECT_NEAR(d.peak_fp64_tensor_flops(), d.peak_fp32_flops(), 1.0);
  cuda::device_info a100 = d;
  a100.cc_major = 8;
  a100.sm_count = 108;
  a100.sm_clock_khz = 1410000;
  EXPECT_NEAR(a100.peak_fp64_tensor_flops() / 1e12, 19.5, 0.1);
  cuda::device_info ada = d;
  ada.cc_major = 8;
  ada.cc_minor = 9;
  EXPECT_EQ(ada.peak_fp64_tensor_flops(), 0.0);
  EXPECT_EQ(ada.peak_flops_for("fp64"), 0.0);
  // The word and its kind, both ways, and what the peak is called.
  EXPECT_STREQ(roofline_word(roofline_kind::fp64_tensor_compute), "fp64");
  EXPECT_EQ(roofline_of_word("fp64"), roofline_kind::fp64_tensor_compute);
  EXPECT_STREQ(roofline_peak_name("fp64"), "FP64 tensor-core");
  EXPECT_TRUE(is_compute_roofline("fp64"));
  EXPECT_TRUE(is_tensor_roofline("fp64"));
  EXPECT_FALSE(is_tensor_roofline("compute"));
}

result_record f64_record(const std::string& name, double median_us, bool baseline) {
  result_record r;
  r.variant.family = "matmul_f64";
  r.variant.name = name;
  r.variant.origin = baseline ? origin_kind::plugin : origin_kind::source;
  r.variant.is_baseline = baseline;
  r.variant.summary = baseline ? "cublasGemmEx, float64 (CUBLAS_COMPUTE_64F)" : "";
  r.config = config(4096, 4096, 4096);
  r.block = baseline ? 0 : 256;
  r.status = outcome::passed;
  r.roofline = "fp64";
  r.flops = 2.0 * 4096.0 * 4096.0 * 4096.0;
  r.bytes = 3 * 8.0 * 4096 * 4096;
  timing_stats t;
  t.median_ms = median_us / 1e3;
  r.timing = t;
  return r;
}

// The table measures a matmul_f64 row against the FP64 tensor-core peak and says so; the
// results file gives the peak and each row's share of it.
TEST(RooflineFp64, TableAndResultsFileUseTheFp64TensorPeak) {
  table_options opt;
  opt.families = &shipped();
  std::ostringstream os;
  // 137.4 GFLOP in 2748.8 us is 50 TFLOP/s, 74.7% of 66.9; in 6872 us, 20 (29.9%).
  print_group(os, {f64_record("dmma_multistage", 6872, false), f64_record("cublas", 2748.8, true)},
              h100(), opt);
  const std::string out = os.str();
  EXPECT_NE(out.find("% peak is of the dense FP64 tensor-core peak, 66.9 TFLOP/s (132 SMs x 256 "
                     "FLOP/clock x 1980 MHz)"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("74.7"), std::string::npos) << out;
  EXPECT_NE(out.find("29.9"), std::string::npos) << out;
  EXPECT_NE(out.find("0.40x"), std::string::npos) << out;
  EXPECT_NE(out.find("TFLOP/s FP64 tensor-core peak"), std::string::npos) << out;
  EXPECT_EQ(out.find("FP32"), std::string::npos) << out;

  const cuda::device_info d = h100();
  const auto device = device_json(d);
  EXPECT_NEAR(device.at("peak_fp64_tensor_tflops").get<double>(), 66.9, 0.1);
  const auto j = record_in_context(f64_record("cublas", 2748.8, true), &d);
  EXPECT_EQ(j.at("roofline"), "fp64");
  EXPECT_NEAR(j.at("tflops").get<double>(), 50.0, 0.01);
  EXPECT_NEAR(j.at("percent_of_fp64_tensor_peak").get<double>(), 74.7, 0.1);
  EXPECT_FALSE(j.contains("percent_of_tf32_peak"));
  EXPECT_NEAR(j.at("device").at("peak_fp64_tensor_tflops").get<double>(), 66.9, 0.1);
  // An architecture without a figure: null, not a wrong percentage.
  cuda::device_info ada = d;
  ada.cc_major = 8;
  ada.cc_minor = 9;
  EXPECT_TRUE(record_in_context(f64_record("cublas", 2748.8, true), &ada)
                  .at("percent_of_fp64_tensor_peak")
                  .is_null());
}

}  // namespace
}  // namespace kl
