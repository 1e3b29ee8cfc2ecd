// GPU tests for qam256 (CTest label `gpu`): every kernel file at every block size validates byte
// for byte at awkward sizes through the real runner (kernels in a worker), the copy baseline
// validates as a copy, non-finite inputs do not fault, planted wrong kernels are caught, and the
// pipeline's output is exact for several stream counts, both issue orders and an n that does not
// split evenly. Without a GPU every test here is skipped with the reason.
#include "cuda/driver.hpp"
#include "cuda/resources.hpp"
#include "exec/pipeline.hpp"
#include "families/family.hpp"
#include "gpu_test_util.hpp"
#include "qam256_oracle.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"
#include "worker/executor.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace kl {
namespace {

namespace qam256 = kl::test::qam256;

// 1, 7 (under a warp and odd), 1000 (not a multiple of any tile), 2^20 + 1 (odd, one past a
// power of two: the vector variants' lone last symbol).
const std::vector<std::uint64_t> sizes = {1, 7, 1000, (1u << 20) + 1};

struct fixture : test::gpu_sweep {
  run_request request(const std::vector<std::string>& variants, const std::vector<std::uint64_t>& n,
                      const std::string& kernels = test::kernels_dir()) {
    run_request r = request_for("qam256", variants, kernels);
    r.dtypes = {"float32"};
    r.ops = {"demap"};
    r.axes = {axis_choice::sizes(n)};
    r.seed = 99;
    return r;
  }
};

using test::describe;

class GpuQam256 : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuQam256, ExactAtEveryBlockAndAwkwardSize) {
  KL_REQUIRE_GPU();
  fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  const auto sweep = runner(f.fams, f.request({GetParam()}, sizes)).run();
  ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
  EXPECT_EQ(sweep.results.size(), 4 * sizes.size());
  for (const auto& r : sweep.results) {
    EXPECT_EQ(r.status, outcome::passed) << describe(r);
    ASSERT_TRUE(r.occupancy.has_value()) << describe(r);
    EXPECT_GT(r.occupancy->blocks_per_sm, 0) << describe(r);
    EXPECT_EQ(r.bytes, 16.0 * static_cast<double>(r.config.shape().front()));
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, GpuQam256,
                         ::testing::ValuesIn(test::shipped_source_variants("qam256")),
                         [](const auto& info) { return test::test_name(info.param); });

// A lower SNR puts many symbols near and past the decision boundaries, where the soft bits are
// not saturated: every rounding matters there.
TEST(GpuQam256Noise, ExactAtLowSnr) {
  KL_REQUIRE_GPU();
  fixture f;
  f.reg.add_source_dir(test::kernels_dir());
  auto req = f.request({"all"}, {1000003});
  req.blocks = {256};
  req.axes.push_back(axis_choice::named("SNR_DB", {3.0}));
  const auto sweep = runner(f.fams, req).run();
  ASSERT_FALSE(sweep.results.empty());
  for (const auto& r : sweep.results) EXPECT_EQ(r.status, outcome::passed) << describe(r);
}

TEST(GpuQam256Copy, TheCopyBaselineValidatesAsACopy) {
  KL_REQUIRE_GPU();
  fixture f;
  f.reg.add_source_dir(test::kernels_dir());  // the family.toml's [baseline] comes with it
  const auto sweep = runner(f.fams, f.request({"d2d_copy"}, sizes)).run();
  ASSERT_EQ(sweep.results.size(), sizes.size());
  for (const auto& r : sweep.results) {
    EXPECT_EQ(r.status, outcome::passed) << describe(r);
    EXPECT_TRUE(r.variant.is_baseline);
    // Checked as a copy: the expected value names the input's bytes, not soft bits.
    EXPECT_EQ(r.check.expected,
              "a copy of all " + std::to_string(8 * r.config.shape().front()) + " bytes")
        << r.check.expected;
    EXPECT_EQ(r.bytes, 16.0 * static_cast<double>(r.config.shape().front()));
  }
}

// Planted bugs: a kernel that skips the last symbol (caught by the poison, whatever the soft bits
// there would be) and one that rounds half away from zero (roundf instead of rintf: caught by the
// first symbol that lands on a half). Both WRONG with the byte's index, never timed.
TEST(GpuQam256Planted, SkippedSymbolAndWrongRoundingAreCaught) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("qam_planted");
  const std::string body = R"(
__device__ unsigned long long soft(float l) {
  return static_cast<unsigned long long>(fminf(fmaxf(ROUND(128.0f - 8.0f * l), 0.0f), 255.0f));
}
__device__ unsigned long long axis(float v, int shift) {
  const float l0 = __fmul_rn(v, kl::qam256::scale), l2 = 8.0f - fabsf(l0), l4 = 4.0f - fabsf(l2),
              l6 = 2.0f - fabsf(l4);
  return soft(l0) << shift | soft(l2) << (shift + 16) | soft(l4) << (shift + 32) | soft(l6) << (shift + 48);
}
template <unsigned BLOCK>
__global__ void NAME(const float2* in, unsigned char* out, unsigned long long n) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i >= LIMIT) return;
  reinterpret_cast<unsigned long long*>(out)[i] = axis(in[i].x, 0) | axis(in[i].y, 8);
}
)";
  auto file = [&](const std::string& name, const std::string& round, const std::string& limit) {
    return "/* kernlab\nfamily: qam256\nentry: " + name + "<BLOCK>\nblocks: 256\n*/\n" +
           "#define ROUND " + round + "\n#define LIMIT " + limit + "\n#define NAME " + name + "\n" +
           body;
  };
  dir.write("qam256/skips_last.cu", file("skips_last", "rintf", "n - 1"));
  dir.write("qam256/rounds_away.cu", file("rounds_away", "roundf", "n"));
  fixture f;
  f.reg.add_source_dir(dir.str());
  // At 0 dB most soft bits are away from saturation, and about one value in 2^18 of 8 million
  // lands exactly on a half (those between 4 and 16 in magnitude are multiples of 2^-20): some
  // twenty symbols round differently.
  auto req = f.request({"skips_last", "rounds_away"}, {1000003}, dir.str());
  req.blocks = {256};
  req.axes.push_back(axis_choice::named("SNR_DB", {0.0}));
  const auto sweep = runner(f.fams, req).run();
  ASSERT_EQ(sweep.results.size(), 2u);
  for (const auto& r : sweep.results) {
    EXPECT_EQ(r.status, outcome::wrong_result) << describe(r);
    EXPECT_FALSE(r.timing.has_value());
    EXPECT_EQ(r.check.expected.rfind("soft[", 0), 0u) << r.check.expected;
    if (r.variant.name == "skips_last") {  // the last symbol's first byte, poisoned
      EXPECT_EQ(r.check.expected.rfind(
                    "soft[" + std::to_string(8 * (r.config.shape().front() - 1)) + "] = ", 0),
                0u)
          << r.check.expected;
    }
  }
}

// Kernels from the real compile path, for the tests that launch them by hand.
struct compiled_kernels {
  sweep_result sweep;
  fixture f;
  explicit compiled_kernels(unsigned block) {
    f.reg.add_source_dir(test::kernels_dir());
    auto req = f.request({"all"}, {1});
    req.blocks = {block};
    req.compile_only = true;
    sweep = runner(f.fams, req).run();
  }
};

// Non-finite and extreme inputs: the spec leaves the bytes unspecified for NaN and infinities,
// but no variant may fault. Finite inputs (zeros, denormals, huge values) must still be exact.
TEST(GpuQam256NonFinite, NoFaultAndFiniteValuesExact) {
  KL_REQUIRE_GPU();
  compiled_kernels k(256);
  ASSERT_FALSE(k.sweep.compiles.empty());
  CUdevice dev = 0;
  KL_CU(cuDeviceGet(&dev, 0));
  cuda::primary_context ctx(dev);
  const float inf = std::numeric_limits<float>::infinity(),
              nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> specials = {nan,   0.5f,   -inf, inf,  0.0f,   -0.0f, 1e-45f, -1e-40f,
                                       3e38f, -3e38f, nan,  -nan, 100.0f, inf,   7.0f,   -7.0f};
  std::vector<float> iq;
  for (int rep = 0; rep < 65; ++rep)  // 520 symbols: several warps, an even count
    for (std::size_t i = 0; i < specials.size(); ++i)
      iq.push_back(specials[(i + rep) % specials.size()]);
  iq.push_back(nan);  // and one more symbol: an odd n, the vector variants' tail
  iq.push_back(inf);
  const std::uint64_t n = iq.size() / 2;
  cuda::device_buffer in(8 * n), out(8 * n);
  in.upload(iq.data(), 8 * n);
  for (const auto& c : k.sweep.compiles) {
    SCOPED_TRACE(c.entry->descriptor.qualified_name());
    ASSERT_EQ(c.error, "");
    cuda::module mod(c.result.cubin);
    const auto& v = c.entry->descriptor;
    const auto* fam = k.f.fams.find("qam256");
    problem_config config{"float32", "demap", "exact", 1, {{"N", std::uint64_t{n}}}};
    const std::string expr = fam->name_expression(v, 256, config);
    CUfunction fn = mod.function(c.result.lowered_names.at(expr));
    const auto grid = fam->launch(v, 256, config, 132, 132).grid[0];
    CUdeviceptr pin = in.get(), pout = out.get();
    unsigned long long count = n;
    void* args[] = {&pin, &pout, &count};
    KL_CU(cuLaunchKernel(fn, static_cast<unsigned>(grid), 1, 1, 256, 1, 1, 0, nullptr, args,
                         nullptr));
    cuda::synchronize_context();  // a fault would throw here
    std::vector<std::uint8_t> got(8 * n);
    out.download(got.data(), got.size());
    for (std::uint64_t s = 0; s < n; ++s) {
      if (!std::isfinite(iq[2 * s]) || !std::isfinite(iq[2 * s + 1])) continue;
      const auto want = qam256::demap(iq[2 * s], iq[2 * s + 1]);
      EXPECT_EQ(std::memcmp(want.data(), &got[8 * s], 8), 0)
          << "symbol " << s << " I=" << iq[2 * s] << " Q=" << iq[2 * s + 1] << ": expected "
          << qam256::format_bytes(want.data()) << ", got " << qam256::format_bytes(&got[8 * s]);
    }
  }
}

const family& qam_family(const compiled_kernels& k) { return *k.f.fams.find("qam256"); }

pipeline_job job_for(const compiled_kernels& k, const std::string& name, unsigned block,
                     std::uint64_t n) {
  for (const auto& c : k.sweep.compiles) {
    if (c.entry->descriptor.name != name) continue;
    problem_config config;
    config.dtype = "float32";
    config.op = "demap";
    config.axes = {{"N", n}};
    config.seed = 5;
    pipeline_job job;
    job.kernel = source_job(*k.f.fams.find("qam256"), c.entry->descriptor, block, config, c);
    return job;
  }
  throw std::runtime_error("no compiled " + name);
}

// The pipeline in process: several stream counts (one that does not divide the chunk count),
// both orders, automatic and explicit chunk counts, an n that splits unevenly. Every
// configuration's output is checked against the reference by the pipeline itself.
TEST(GpuQam256Pipeline, OutputExactForEveryConfiguration) {
  KL_REQUIRE_GPU();
  compiled_kernels k(256);
  CUdevice dev = 0;
  KL_CU(cuDeviceGet(&dev, 0));
  cuda::primary_context ctx(dev);
  const cuda::device_info device = cuda::query_device(0);
  for (const char* variant : {"vec2_gridstride", "baseline", "vec2_unroll4"}) {
    for (unsigned chunks : {0u, 7u}) {
      SCOPED_TRACE(std::string(variant) + " chunks " + std::to_string(chunks));
      pipeline_job job = job_for(k, variant, 256, 1000003);
      job.options.streams = {1, 3, 4};
      job.options.chunks = chunks;
      job.options.runs = 2;
      const auto rep = run_pipeline(qam_family(k), job, device);
      ASSERT_EQ(rep.rows.size(), 6u);
      for (const auto& row : rep.rows) {
        EXPECT_TRUE(row.valid) << row.order << " " << row.streams << ": " << row.check;
        EXPECT_GT(row.wall_ms, 0);
        EXPECT_GT(row.chunks, 1u);
      }
      EXPECT_GT(rep.bound_ms, 0);
    }
  }
  // Fewer symbols than chunks: one chunk of 7 symbols.
  pipeline_job tiny = job_for(k, "vec2_gridstride", 256, 7);
  tiny.options.runs = 1;
  for (const auto& row : run_pipeline(qam_family(k), tiny, device).rows) {
    EXPECT_TRUE(row.valid) << row.check;
    EXPECT_EQ(row.chunks, 1u);
  }
}

// The same through the worker process (the family job the CLI uses).
TEST(GpuQam256Pipeline, RunsInTheWorker) {
  KL_REQUIRE_GPU();
  compiled_kernels k(512);
  worker_options w;
  w.command = {KERNLAB_BINARY, "--worker"};
  auto exec = make_isolated_executor(w);
  pipeline_job job = job_for(k, "branch_free", 512, (1u << 20) + 1);
  job.options.streams = {2};
  job.options.runs = 1;
  const auto rep =
      pipeline_report_from_json(exec->run_family_job("qam256", "pipeline", to_json(job)));
  ASSERT_EQ(rep.rows.size(), 2u);
  for (const auto& row : rep.rows) EXPECT_TRUE(row.valid) << row.check;
  EXPECT_THROW(exec->run_family_job("qam256", "no_such_job", nlohmann::json::object()),
               std::runtime_error);
}

// --pipeline --json records when each chunk's stages ran in the median run, on which stream, in
// stream order and inside the wall time; `kernlab plot --timeline` draws a box per stage of it.
TEST(GpuQam256Pipeline, RecordsEachChunksStagesAndTheTimelineDrawsThem) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("gpu_pipeline_timeline");
  const std::string json_path = dir.str() + "/pipeline.json";
  auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                             " --pipeline --variant qam256.vec2_gridstride --block 256 --size "
                             "1000003 --streams 1,3 --chunks 7 --pipeline-runs 3 --json " +
                             json_path);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto results = nlohmann::json::parse(test::read_file(json_path));
  const auto& rows = results.at("pipeline").at(0).at("rows");
  ASSERT_EQ(rows.size(), 4u);  // breadth and depth, 1 and 3 streams
  std::size_t boxes = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("order").get<std::string>() + " " + row.at("streams").dump());
    const unsigned streams = row.at("streams");
    const auto& timeline = row.at("timeline");
    ASSERT_EQ(timeline.size(), row.at("chunks").get<std::size_t>());
    // Per stream, the stages of its chunks in issue order never overlap: each begins after the
    // one before it on the stream ended.
    std::vector<double> stream_end(streams, 0);
    const auto order =
        issue_sequence(row.at("order").get<std::string>(), static_cast<unsigned>(timeline.size()));
    for (const auto& [stage, c] : order) {
      const auto& chunk = timeline.at(c);
      EXPECT_EQ(chunk.at("chunk"), c);
      EXPECT_EQ(chunk.at("stream"), c % streams);
      const char* key = stage == 0 ? "h2d_us" : stage == 1 ? "kernel_us" : "d2h_us";
      const double begin = chunk.at(key).at(0), end = chunk.at(key).at(1);
      EXPECT_GE(begin, stream_end[c % streams]) << "chunk " << c << " " << key;
      EXPECT_GT(end, begin) << "chunk " << c << " " << key;
      stream_end[c % streams] = end;
      ++boxes;
    }
    // The median run (the middle one of 3) ends at the median wall time.
    for (double e : stream_end) EXPECT_LE(e, row.at("wall_ms").get<double>() * 1000 + 1);
  }
  r = test::run_kernlab("plot --timeline " + json_path + " -o " + dir.str() + "/t.svg");
  ASSERT_EQ(r.code, 0) << r.output;
  const std::string svg = test::read_file(dir.str() + "/t.svg");
  EXPECT_EQ(test::count_of(svg, "class=\"stage\""), boxes);
  EXPECT_EQ(test::count_of(svg, ">stream 2</text>"), 2u);
  EXPECT_EQ(test::count_of(svg, "(fastest)"), 1u);
}

}  // namespace
}  // namespace kl
