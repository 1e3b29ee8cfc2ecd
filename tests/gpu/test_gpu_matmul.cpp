// GPU tests of the matmul family (CTest label `gpu`): every variant at every block it supports
// validates on the awkward shapes through the real runner and worker, the cuBLAS plugin too,
// the GPU reference equals the CPU reference, random inputs pass their tolerance, and a planted
// off-by-one kernel is caught. Without a GPU every test here is skipped with the reason.
#include "cuda/driver.hpp"
#include "cuda/resources.hpp"
#include "families/family.hpp"
#include "gpu_test_util.hpp"
#include "nvrtc/compiler.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace kl {
namespace {

// The issue's shapes: 1, a tile's worth of nothing, primes, a large non-multiple and a thin one.
const std::vector<std::vector<std::uint64_t>> shapes = {
    {1, 1, 1}, {3, 3, 3}, {17, 17, 17}, {1000, 1000, 1000}, {4095, 4097, 1023}, {64, 1, 64}};

struct sweep_fixture : test::gpu_sweep {
  run_request request(const std::vector<std::string>& variants,
                      const std::vector<std::vector<std::uint64_t>>& s,
                      const std::string& kernels = test::kernels_dir()) {
    run_request r = request_for("matmul", variants, kernels);
    r.dtypes = {"float32"};
    r.ops = {"sum"};  // not matmul's: ignored
    r.axes = {axis_choice::shapes(s)};
    return r;
  }
};

using test::describe;

class GpuMatmul : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuMatmul, ValidatesAtEveryBlockAndAwkwardShape) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  const auto sweep = runner(f.fams, f.request({GetParam()}, shapes)).run();
  ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
  ASSERT_EQ(sweep.results.size(), 4 * shapes.size());
  int passed = 0;
  for (const auto& r : sweep.results) {
    if (r.variant.supports_block(r.block)) {
      EXPECT_EQ(r.status, outcome::passed) << describe(r);
      // Compared exactly (a 1x1x1 product shows its one value instead).
      if (r.config.shape() != std::vector<std::uint64_t>{1, 1, 1})
        EXPECT_NE(r.check.expected.find("match (exact)"), std::string::npos) << describe(r);
      else
        EXPECT_EQ(r.check.expected, r.check.got) << describe(r);
      ++passed;
    } else {
      // A block the variant cannot take is skipped with the reason, never failed.
      EXPECT_EQ(r.status, outcome::skipped) << describe(r);
      EXPECT_NE(r.message.find("supports blocks"), std::string::npos) << describe(r);
    }
  }
  // Every block the variant takes passed at every shape (a tunable point takes one or two).
  int blocks = 0;
  for (unsigned b : {128u, 256u, 512u, 1024u})
    blocks += sweep.results.front().variant.supports_block(b);
  EXPECT_GE(blocks, 1);
  EXPECT_EQ(passed, blocks * static_cast<int>(shapes.size()));
}

INSTANTIATE_TEST_SUITE_P(Shipped, GpuMatmul,
                         ::testing::ValuesIn(test::shipped_source_variants("matmul")),
                         [](const auto& info) { return test::test_name(info.param); });

TEST(GpuMatmulPlugin, CublasValidatesOnEveryShape) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  const auto sweep = runner(f.fams, f.request({"cublas"}, shapes)).run();
  ASSERT_EQ(sweep.results.size(), shapes.size());
  for (const auto& r : sweep.results) {
    EXPECT_EQ(r.status, outcome::passed) << describe(r);
    EXPECT_TRUE(r.variant.is_baseline);
  }
}

// cuBLAS is loaded at the plugin's first use: a library that cannot be loaded fails the cuBLAS
// rows with the path and the loader's reason, and nothing else.
TEST(GpuMatmulPlugin, AMissingCublasFailsItsRowsWithThePath) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  f.reg.add_source_dir(test::kernels_dir());
  const char* missing = "/nonexistent/libcublas.so.13";
  ASSERT_EQ(setenv("KERNLAB_CUBLAS", missing, 1), 0);  // the worker inherits it
  const auto sweep = runner(f.fams, f.request({"cublas", "tiled"}, {{17, 17, 17}})).run();
  unsetenv("KERNLAB_CUBLAS");
  int cublas_rows = 0, tiled_passed = 0;
  for (const auto& r : sweep.results) {
    if (r.variant.name == "cublas") {
      ++cublas_rows;
      EXPECT_EQ(r.status, outcome::failed) << describe(r);
      EXPECT_NE(r.message.find("cannot load cuBLAS"), std::string::npos) << describe(r);
      EXPECT_NE(r.message.find(missing), std::string::npos) << describe(r);
    } else if (r.status == outcome::passed) {
      ++tiled_passed;
    }
  }
  EXPECT_EQ(cublas_rows, 1);
  EXPECT_EQ(tiled_passed, 2);  // blocks 256 and 1024
}

// The family's reference kernel (kernels_src/matmul/reference.cu) is a CPU product in double,
// bit for bit: both form each product exactly in double and add in k order; the magnitudes too.
TEST(GpuMatmulReference, EqualsTheCpuReference) {
  KL_REQUIRE_GPU();
  CUdevice dev = 0;
  KL_CU(cuDeviceGet(&dev, 0));
  cuda::primary_context ctx(dev);
  const auto device = cuda::query_device(0);
  family_registry fams;
  test::register_shipped_families(fams);
  const auto* f = fams.find("matmul");
  ASSERT_NE(f, nullptr);
  const auto image = nvrtc::compile(f->reference_request("float32", device.arch()));
  ASSERT_TRUE(image.ok) << image.error_summary();
  cuda::module mod(image.cubin);
  CUfunction fn = mod.function(image.lowered_names.at(f->reference_expression("float32")));
  for (const std::string mode : {"exact", "random"})
    for (const auto& s : std::vector<std::vector<std::uint64_t>>{
             {1, 1, 1}, {17, 19, 23}, {130, 70, 300}, {64, 1, 64}, {257, 255, 1000}}) {
      const std::uint64_t m = s[0], n = s[1], k = s[2];
      SCOPED_TRACE(mode + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                   std::to_string(k));
      auto gen = [&](const char* name, std::uint64_t count) {
        const buffer_spec& b = *f->spec().buffer(name);
        return generate_buffer(mode == "random" ? *b.random : *b.exact, "float32", count, 7, name);
      };
      const auto ha = gen("A", m * k), hb = gen("B", k * n);
      cuda::device_buffer a(ha.size()), b(hb.size()), c(m * n * 8), c_abs(m * n * 8);
      a.upload(ha.data(), ha.size());
      b.upload(hb.data(), hb.size());
      CUdeviceptr pa = a.get(), pb = b.get(), pc = c.get(), pabs = c_abs.get();
      int im = static_cast<int>(m), in = static_cast<int>(n), ik = static_cast<int>(k);
      void* args[] = {&pa, &pb, &pc, &im, &in, &ik, &pabs};
      KL_CU(cuLaunchKernel(fn, static_cast<unsigned>((n + 15) / 16),
                           static_cast<unsigned>((m + 15) / 16), 1, 16, 16, 1, 0, nullptr, args,
                           nullptr));
      cuda::synchronize_context();
      std::vector<double> gpu(m * n), gpu_abs(m * n), cpu(m * n), cpu_abs(m * n);
      c.download(gpu.data(), c.bytes());
      c_abs.download(gpu_abs.data(), c_abs.bytes());
      std::vector<float> fa(m * k), fb(k * n);
      std::memcpy(fa.data(), ha.data(), ha.size());
      std::memcpy(fb.data(), hb.data(), hb.size());
      for (std::uint64_t i = 0; i < m; ++i)
        for (std::uint64_t j = 0; j < n; ++j)
          for (std::uint64_t q = 0; q < k; ++q) {
            const double p = static_cast<double>(fa[i * k + q]) * fb[q * n + j];
            cpu[i * n + j] += p;
            cpu_abs[i * n + j] += std::fabs(p);
          }
      EXPECT_EQ(gpu, cpu);
      EXPECT_EQ(gpu_abs, cpu_abs);
    }
}

TEST(GpuMatmulRandom, RandomInputsPassTheTolerance) {
  KL_REQUIRE_GPU();
  sweep_fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  f.reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  auto req = f.request({"tiled", "regblock2d", "warptile", "cublas"},
                       {{1000, 1000, 1000}, {4095, 4097, 1023}});
  req.blocks = {256};
  req.input_mode = "random";
  const auto sweep = runner(f.fams, req).run();
  ASSERT_EQ(sweep.results.size(), 8u);
  for (const auto& r : sweep.results) {
    EXPECT_EQ(r.status, outcome::passed) << describe(r);
    // The bound of family.toml's [compare.random], not exact mode's rule.
    EXPECT_NE(r.check.expected.find("elements match (bound)"), std::string::npos)
        << r.check.expected;
  }
}

// A kernel that stops one k short everywhere: wrong, with the element, expected and got named;
// the good variant in the same sweep still passes.
TEST(GpuMatmulPlanted, OffByOneKIsCaught) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("matmul_planted");
  dir.write("matmul/short_k.cu", R"(/* kernlab
family:     matmul
entry:      short_k<BLOCK>
blocks:     256
block_dims: 16, 16
grid_dims:  (N + 15) / 16, (M + 15) / 16
*/
template <int BLOCK>
__global__ void short_k(const float* A, const float* B, float* C, int M, int N, int K) {
  const int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
  if (row >= M || col >= N) return;
  float s = 0;
  for (int k = 0; k < K - 1; ++k) s += A[row * K + k] * B[k * N + col];  // planted: K - 1
  C[row * N + col] = s;
}
)");
  dir.write("matmul/naive.cu", test::read_file(test::kernels_dir() + "/matmul/naive.cu"));
  sweep_fixture f;
  f.reg.add_source_dir(dir.str());
  auto req = f.request({"all"}, {{17, 17, 17}}, dir.str());
  req.blocks = {256};
  const auto sweep = runner(f.fams, req).run();
  ASSERT_EQ(sweep.results.size(), 2u);
  for (const auto& r : sweep.results) {
    if (r.variant.name == "short_k") {
      EXPECT_EQ(r.status, outcome::wrong_result) << describe(r);
      EXPECT_NE(r.message.find("expected C["), std::string::npos) << r.message;
      EXPECT_NE(r.message.find("elements outside the rule (exact)"), std::string::npos)
          << r.message;
    } else {
      EXPECT_EQ(r.status, outcome::passed) << describe(r);
    }
  }
}

}  // namespace
}  // namespace kl
