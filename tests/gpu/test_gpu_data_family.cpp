// Families as data on the GPU: a family folder written by the test (kernlab does not ship it)
// runs through the built binary with no rebuild, and the shipped data families pass at awkward
// shapes.
#include "data_family_fixture.hpp"
#include "gpu_test_util.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <map>

namespace kl {
namespace {

const char* quick = " --min-time 0 --timeout 0.2 --no-cache";

// The records of a --json file, by outcome: "variant block config: outcome message".
struct run_records {
  nlohmann::json records;
  std::map<std::string, int> by_outcome;
  std::string text;
};

run_records read_records(const std::string& path) {
  run_records out;
  out.records = nlohmann::json::parse(test::read_file(path)).at("records");
  for (const auto& r : out.records) {
    const std::string outcome = r.at("outcome");
    ++out.by_outcome[outcome];
    out.text += r.at("variant").at("qualified_name").get<std::string>() + " block " +
                std::to_string(r.at("block").get<unsigned>()) + " " +
                r.at("config").at("dtype").get<std::string>() + " " +
                r.at("config").at("shape").dump() + ": " + outcome + " " +
                r.at("message").get<std::string>() + "\n";
  }
  return out;
}

TEST(GpuDataFamily, AFolderWrittenHereRunsValidatedAndTimedWithNoRebuild) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("axpy_gpu");
  test::write_axpy_family(dir, "axpy", /*wrong=*/true);
  const std::string json = dir.str() + "/run.json";
  for (const char* input : {"exact", "random"}) {
    SCOPED_TRACE(input);
    const auto r = test::run_kernlab("--kernels-dir " + dir.str() +
                                     " --family axpy --block all --dtype float32,int32"
                                     " --size 1,7,256,1000003 --input " +
                                     input + " --json " + json + quick);
    // The wrong variant fails the run; everything else passes.
    EXPECT_EQ(r.code, 1) << r.output;
    run_records got = read_records(json);
    // Per configuration (2 dtypes x 4 sizes): simple at 4 blocks, gridstride at 2 (skipped at
    // the other 2), off_by_one at 1 (skipped at 3), and d2d_copy once.
    EXPECT_EQ(got.records.size(), 13u * 8u) << got.text;
    EXPECT_EQ(got.by_outcome["passed"], 7 * 8) << got.text;
    EXPECT_EQ(got.by_outcome["wrong_result"], 8) << got.text;
    EXPECT_EQ(got.by_outcome["skipped"], 5 * 8) << got.text;
    for (const auto& rec : got.records) {
      const std::string name = rec.at("variant").at("name");
      if (name != "off_by_one" || rec.at("outcome") != "wrong_result") continue;
      // A one-axis family's configuration is a size (as reduce's always was).
      const auto n = rec.at("config").at("size").get<std::uint64_t>();
      // The first element it skips is the last one, reported with its index.
      EXPECT_EQ(rec.at("expected").get<std::string>().rfind("y[" + std::to_string(n - 1) + "]", 0),
                0u)
          << rec.dump();
    }
    EXPECT_NE(r.output.find("d2d_copy"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("WRONG"), std::string::npos) << r.output;
  }
}

// Buffers with a start: a histogram accumulated into bins that start at zero (reset inside the
// timed region) and y changed in place (inout, reset outside it) validate against the reference,
// stay right after every timed run (each starts from its start again), and a variant that leaves
// the last element out is WRONG: the bins are not poisoned, but the reference tells.
TEST(GpuDataFamily, AccumulatingAndInPlaceBuffersStartAgainAtEveryRun) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("hist_gpu");
  test::write_hist_family(dir, /*wrong=*/true);
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + dir.str() +
                                   " --family hist --block 128,256 --dtype int32,float32"
                                   " --shape 1x1,100003x256,1000003x7 --min-samples 20 --json " +
                                   json + quick);
  EXPECT_EQ(r.code, 1) << r.output;  // forgets_last
  run_records got = read_records(json);
  // 2 variants x 2 blocks x 2 dtypes x 3 shapes; forgets_last is wrong everywhere (at 1x1 it
  // writes nothing: the bin stays at zero and y at its start).
  EXPECT_EQ(got.records.size(), 24u) << got.text;
  for (const auto& rec : got.records) {
    const std::string name = rec.at("variant").at("name");
    EXPECT_EQ(rec.at("outcome"), name == "atomic" ? "passed" : "wrong_result") << got.text;
  }
  EXPECT_EQ(r.output.find("after timing"), std::string::npos) << r.output;
}

// A reference that does not compile fails every row of its family in a run, with the compiler's
// file:line (--compile-only says so before any GPU is needed: DataFamilyBinary's tests).
TEST(GpuDataFamily, AReferenceThatDoesNotCompileFailsItsFamilysRows) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("axpy_bad_reference_gpu");
  test::write_axpy_family(dir);
  std::string typo = test::axpy_reference;
  typo.replace(typo.find("x[i] + y0[i]"), 12, "x[i] + yy[i]");
  dir.write("axpy/reference.cu", typo);
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab(
      "--kernels-dir " + dir.str() +
      " --family axpy --block 256 --dtype float32 --size 1000 --json " + json + quick);
  EXPECT_EQ(r.code, 1) << r.output;
  run_records got = read_records(json);
  EXPECT_EQ(got.records.size(), 3u) << got.text;  // simple, gridstride, d2d_copy
  EXPECT_EQ(got.by_outcome["failed"], 3) << got.text;
  EXPECT_GE(test::count_of(got.text, dir.str() + "/axpy/reference.cu:4"), 3u) << got.text;
}

// A file compiled for sm_90a (`target`) runs on a GPU of compute capability 9.0 and passes; on
// any other it is skipped with the reason.
TEST(GpuDataFamily, AnSm90aFileRunsWhereItsTargetIsTheGpus) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("arch_target_gpu");
  test::write_axpy_family(dir);
  dir.write("axpy/fenced.cu", test::axpy_fenced);
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + dir.str() +
                                   " --family axpy --variant fenced --dtype float32 --block 256"
                                   " --size 1,1000003 --json " +
                                   json + quick);
  const run_records got = read_records(json);
  ASSERT_EQ(got.records.size(), 2u) << got.text;
  const std::string arch = got.records.at(0).at("device").at("compute_capability");
  for (const auto& rec : got.records) {
    EXPECT_EQ(rec.at("variant").at("target"), "sm_90a");
    if (arch == "9.0")
      EXPECT_EQ(rec.at("outcome"), "passed") << got.text;
    else
      EXPECT_NE(rec.at("message").get<std::string>().find("runs on sm_90 GPUs only"),
                std::string::npos)
          << got.text;
  }
  EXPECT_EQ(r.code, 0) << r.output;
}

// A family whose inputs and reference come from a family plugin (tests/plugins/
// affine_family.cpp) runs through the binary: its rows pass at awkward sizes, a wrong variant is
// caught, and a generator or a reference that fails fails the rows of that size with its message
// while the other sizes run.
TEST(GpuDataFamily, AFamilyPluginMakesTheInputsAndTheReference) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("affine_gpu");
  test::write_affine_family(dir);
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + dir.str() +
                                   " --family affine --block all"
                                   " --shape 1x3,13x3,17x3,257x5,1000003x8 --json " +
                                   json + quick);
  EXPECT_EQ(r.code, 1) << r.output;  // plus_two is wrong
  const run_records got = read_records(json);
  // Per shape (5): simple at 2 blocks, plus_two at 1; the other blocks are skipped.
  EXPECT_EQ(got.records.size(), 5u * 8u) << got.text;
  EXPECT_EQ(got.by_outcome.at("skipped"), 5 * 5) << got.text;
  for (const auto& rec : got.records) {
    if (rec.at("outcome") == "skipped") continue;
    SCOPED_TRACE(rec.dump());
    const std::string name = rec.at("variant").at("name");
    const auto n = rec.at("config").at("shape").at(0).get<std::uint64_t>();
    const std::string message = rec.at("message");
    if (n == 13) {
      EXPECT_EQ(rec.at("outcome"), "failed");
      EXPECT_NE(message.find("generator 'quarters' for x failed: planted failure of quarters"),
                std::string::npos);
    } else if (n == 17) {
      EXPECT_EQ(rec.at("outcome"), "failed");
      EXPECT_NE(message.find("reference 'affine' failed: planted failure of the affine reference"),
                std::string::npos);
    } else if (name == "simple") {
      EXPECT_EQ(rec.at("outcome"), "passed");
    } else {
      EXPECT_EQ(rec.at("outcome"), "wrong_result");
      EXPECT_EQ(rec.at("expected").get<std::string>().rfind("y[0]", 0), 0u);
    }
  }
}

// transpose.tma takes its tile through a tensor map the host encodes from the header's
// `tensor_maps:`: it passes wherever a row of the input is 16-byte aligned (COLS a multiple of
// 4), including edge tiles the TMA fills with zeros and more row tiles than a grid has rows
// (2100001 rows: the grid-stride loop flips the barrier's parity), and is skipped elsewhere with
// the TMA's limit as the reason.
TEST(GpuTensorMaps, TheTmaTransposePassesWhereTheTmaCanCopyAndSaysWhyNotElsewhere) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("tma_gpu");
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                                   " --family transpose --variant tma --block 256 --shape "
                                   "1x4,33x4,31x36,1025x1028,2100001x4,3x5 --json " +
                                   json + quick);
  EXPECT_EQ(r.code, 0) << r.output;
  const run_records got = read_records(json);
  int passed = 0, skipped = 0;
  for (const auto& rec : got.records) {
    if (rec.at("variant").at("name") != "tma") continue;
    if (rec.at("outcome") == "passed") ++passed;
    if (rec.at("outcome") != "skipped") continue;
    ++skipped;
    EXPECT_NE(rec.at("message").get<std::string>().find(
                  "tensor map in: a row is 20 bytes, not a multiple of 16"),
              std::string::npos)
        << rec.dump();
  }
  EXPECT_EQ(passed, 5) << got.text;
  EXPECT_EQ(skipped, 1) << got.text;
}

// A header's scratch buffers reach the kernel after the family's arguments, in order, each zeroed
// before every launch (the kernel marks what it saw, so a second launch on unzeroed scratch gives
// a wrong answer after timing); a tensor map may name one, and a map larger than its scratch is
// refused before the launch.
TEST(GpuDataFamily, ScratchIsPassedInOrderAndZeroedBeforeEveryLaunch) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("scratch_gpu");
  const std::string head =
      "/* kernlab\nfamily: transpose\nentry: K<T>\nblocks: 256\nblock_dims: 32, 8\n"
      "grid_dims: ceil_div(COLS, 32), ceil_div(ROWS, 8)\n"
      "scratch: int32 seen[ROWS * COLS]; T staged[ROWS * COLS]\n";
  const std::string body =
      "struct alignas(64) map128 { unsigned long long bytes[16]; };\n"
      "template <typename T>\n__global__ void K(const T* in, T* out, int rows, int cols, int* "
      "seen, T* staged, const __grid_constant__ map128 m) {\n"
      "  const int r = blockIdx.y * 8 + threadIdx.y, c = blockIdx.x * 32 + threadIdx.x;\n"
      "  if (r >= rows || c >= cols) return;\n"
      "  const long long i = (long long)r * cols + c;\n"
      "  staged[i] = in[i];\n"
      "  out[(long long)c * rows + r] = seen[i] == 0 ? staged[i] : staged[i] + T(1);\n"
      "  seen[i] = 1;\n}\n";
  auto kernel = [&](const std::string& name, const std::string& map) {
    std::string h = head + "tensor_maps: " + map + "\n*/\n";
    h.replace(h.find("K<T>"), 1, name);
    std::string b = body;
    b.replace(b.find("void K("), 7, "void " + name + "(");
    dir.write("transpose/" + name + ".cu", h + b);
  };
  kernel("scratch_ok", "staged[ROWS][COLS] box [8][32]");
  kernel("scratch_big_map", "staged[ROWS][COLS * 2] box [8][32]");
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() + " --kernels-dir " +
                                   dir.str() + " --family transpose --variant " +
                                   "scratch_ok,scratch_big_map --block 256 --shape 65x36,7x33 "
                                   "--json " +
                                   json + quick);
  EXPECT_EQ(r.code, 0) << r.output;
  const run_records got = read_records(json);
  std::map<std::string, std::vector<nlohmann::json>> by_name;
  for (const auto& rec : got.records) by_name[rec.at("variant").at("name")].push_back(rec);
  ASSERT_EQ(by_name["scratch_ok"].size(), 2u) << got.text;
  ASSERT_EQ(by_name["scratch_big_map"].size(), 2u) << got.text;
  for (const auto& rec : by_name["scratch_ok"]) {
    if (rec.at("config").at("shape").at(1) == 36) {
      EXPECT_EQ(rec.at("outcome"), "passed") << rec.dump();
      continue;
    }
    // 7 x 33: rows of 132 bytes, which the TMA cannot copy.
    EXPECT_EQ(rec.at("outcome"), "skipped") << rec.dump();
    EXPECT_NE(rec.at("message").get<std::string>().find("tensor map staged: a row is 132 bytes"),
              std::string::npos)
        << rec.dump();
  }
  for (const auto& rec : by_name["scratch_big_map"]) {
    EXPECT_EQ(rec.at("outcome"), "skipped") << rec.dump();
    const std::string m = rec.at("message").get<std::string>();
    EXPECT_TRUE(m.find("larger than the buffer") != std::string::npos ||
                m.find("a row is 264 bytes") != std::string::npos)
        << rec.dump();
  }
}

// A kernel whose signature does not match the family's [kernel] args (a parameter missing, or
// one of another size) fails its row with what is wrong, before the launch: the driver is not
// left to read past the arguments (a crashed worker) nor the kernel to read garbage.
TEST(GpuDataFamily, AKernelWhoseSignatureDoesNotMatchTheArgsFailsSayingWhy) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("signature_gpu");
  const std::string head =
      "/* kernlab\nfamily: transpose\nentry: K<T>\nblocks: 256\n"
      "block_dims: 32, 8\ngrid_dims: ceil_div(COLS, 32), ceil_div(ROWS, 8)\n*/\n";
  const std::string body =
      "{\n  const int r = blockIdx.y * 8 + threadIdx.y, c = blockIdx.x * 32 + threadIdx.x;\n"
      "  if (r < rows && c < cols) out[(long long)c * rows + r] = in[(long long)r * cols + "
      "c];\n}\n";
  auto kernel = [&](const std::string& name, const std::string& params, const std::string& fix) {
    std::string h = head;
    h.replace(h.find("K<T>"), 1, name);
    dir.write("transpose/" + name + ".cu", h + "template <typename T>\n__global__ void " + name +
                                               "(" + params + ")\n" + fix + body);
  };
  kernel("short_sig", "const T* in, T* out, int rows", "#define cols rows\n");
  kernel("wide_sig", "const T* in, T* out, long long rows, long long cols", "");
  kernel("good_sig", "const T* in, T* out, int rows, int cols", "");
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() + " --kernels-dir " +
                                   dir.str() + " --family transpose --variant " +
                                   "short_sig,wide_sig,good_sig --block 256 --shape 65x33 --json " +
                                   json + quick);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(r.output.find("worker restart"), std::string::npos) << r.output;  // nothing crashed
  const run_records got = read_records(json);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& rec : got.records) by_name[rec.at("variant").at("name")] = rec;
  EXPECT_EQ(by_name["good_sig"].at("outcome"), "passed") << got.text;
  EXPECT_EQ(by_name["short_sig"].at("outcome"), "failed") << got.text;
  EXPECT_NE(by_name["short_sig"].at("message").get<std::string>().find(
                "transpose.short_sig: the kernel takes 3 parameters, "),
            std::string::npos)
      << got.text;
  EXPECT_NE(by_name["short_sig"].at("message").get<std::string>().find("[kernel] args gives 4"),
            std::string::npos)
      << got.text;
  EXPECT_EQ(by_name["wide_sig"].at("outcome"), "failed") << got.text;
  EXPECT_NE(by_name["wide_sig"].at("message").get<std::string>().find(
                "the kernel's parameter 3 is 8 bytes"),
            std::string::npos)
      << got.text;
}

// Each shipped data family at shapes that catch boundary mistakes: 1, primes, a tile +- 1, long
// thin rows and columns; every row passes or is skipped with a reason, none fails.
struct shipped_case {
  std::string family, shapes, extra = "";
};
void PrintTo(const shipped_case& c, std::ostream* os) { *os << c.family << " " << c.shapes; }

class GpuShippedDataFamily : public ::testing::TestWithParam<shipped_case> {};

TEST_P(GpuShippedDataFamily, PassesAtAwkwardShapes) {
  KL_REQUIRE_GPU();
  const shipped_case& c = GetParam();
  test::temp_dir dir("shipped_gpu");
  const std::string json = dir.str() + "/run.json";
  for (const char* input : {"exact", "random"}) {
    SCOPED_TRACE(input);
    const auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() + " --family " +
                                     c.family + " --block all --shape " + c.shapes + " --input " +
                                     input + " --json " + json + quick + " " + c.extra);
    EXPECT_EQ(r.code, 0) << r.output;
    run_records got = read_records(json);
    EXPECT_GT(got.by_outcome["passed"], 0) << got.text;
    EXPECT_EQ(got.by_outcome["passed"] + got.by_outcome["skipped"],
              static_cast<int>(got.records.size()))
        << got.text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shipped, GpuShippedDataFamily,
    ::testing::Values(
        shipped_case{"transpose", "1x1,1x33,33x1,31x33,97x131,1025x1023,3x70001,31x36,1025x1028"},
        shipped_case{"softmax", "1x1,1x33,33x1,31x33,97x131,7x100003,5x8196,3000x1000"},
        shipped_case{"scan", "1,7,127,128,129,4095,4096,4097,1000003"},
        // The tensor-core tiles are 64 x 64 x 32: one short, one over, and prime. The TMA
        // steps (wgmma_tma) copy only rows that are 16-byte aligned (K and N multiples of 8)
        // and skip the other shapes, so the aligned ones check their 128 x 256 x 64 edge
        // tiles: one tile less 8 and over by 8 in M and N, K not a multiple of 64.
        shipped_case{"matmul_tc",
                     "1x1x1,17x33x65,63x65x31,97x131x257,4095x4097x1023,"
                     "8x8x8,136x264x72,120x248x56,1000x1032x520,4096x4104x1024",
                     "--dtype bfloat16,float16"},
        // The TF32 tiles are 64 x 64 x 32 too; cuBLAS's TF32 row is checked as well.
        shipped_case{"matmul_tf32", "1x1x1,17x33x65,63x65x31,97x131x257,4095x4097x1023"},
        // The FP64 tiles are 128 x 128 x 16 (and 32 wide): one short and one over in each
        // dimension, primes, and even shapes too (16-byte copies and stores; odd ones take
        // 8-byte copies). cuBLAS's DGEMM row is checked too.
        shipped_case{"matmul_f64",
                     "1x1x1,2x2x2,17x33x65,127x129x15,129x127x33,130x258x34,"
                     "97x131x257,4095x4097x1023,1024x1026x1022"}),
    [](const auto& info) { return info.param.family; });

}  // namespace
}  // namespace kl
