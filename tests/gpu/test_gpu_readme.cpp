// GPU tests (CTest label `gpu`) of the README and the docs: the commands of every page run for
// real and print what the pages show (a table, a passed row, the best line; the README's example
// family among them), the README's example variant validates, and a GPU's
// own architecture replaces the fallback one. Their no-GPU forms are in test_readme.cpp and
// test_compile_cache.cpp. Without a GPU every test here is skipped with the reason.
#include "families/family.hpp"
#include "gpu_test_util.hpp"
#include "readme_commands.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace kl {
namespace {

bool has_word(const std::string& args, const std::string& word) {
  std::istringstream in(args);
  std::string w;
  while (in >> w)
    if (w == word) return true;
  return false;
}

// The commands that only list, compile, read results or manage the cache: no timed table.
bool prints_no_timed_table(const std::string& args) {
  for (const char* w : {"--list", "--plan", "--compile-only", "--resources", "--pipeline",
                        "compare", "plot", "cache", "new"})
    if (has_word(args, w)) return true;
  return false;
}

// A README run made short: the same variants, blocks, dtypes, ops and as many sizes (so as many
// tables), but small sizes and short sampling. `--size 2^28` becomes `--size 2^20`, a list of k
// sizes k small ones; a matmul size becomes 256 and up; `--shape` is kept. A `--pipeline` run is
// not sampled (the sweep's timing options do not apply to it): it gets fewer runs instead.
std::string shortened(const std::string& args) {
  const bool matmul = args.find("--family matmul") != std::string::npos;
  std::istringstream in(args);
  std::string out, w;
  bool sized = has_word(args, "--shape");
  while (in >> w) {
    out += " " + w;
    if (w != "--size" || !(in >> w)) continue;
    const auto k = static_cast<int>(std::count(w.begin(), w.end(), ',')) + 1;
    std::string sizes;
    for (int i = 0; i < k; ++i)
      sizes += (i ? "," : "") + (matmul ? std::to_string(256 + 128 * i)
                                        : "2^" + std::to_string(20 - 2 * (k - 1 - i)));
    out += " " + sizes;
    sized = true;
  }
  if (!sized) out += matmul ? " --size 256" : " --size 2^20";
  if (has_word(args, "--pipeline")) return out + " --pipeline-runs 2";
  // A tune (or a check of its header) without a budget: 20 points, not 100, still a ranked table.
  if ((has_word(args, "tune") || has_word(args, "check-dispatch")) && !has_word(args, "--budget") &&
      !has_word(args, "exhaustive"))
    out += " --budget 20";
  return out + " --min-time 0 --timeout 0.2";
}

bool has_line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return true;
  return false;
}

// The shortening itself needs no GPU; it is here, beside the one test that uses it.
TEST(GpuReadme, ShortenedKeepsWhatTheCommandShows) {
  EXPECT_EQ(shortened(" --variant reduce5 --block 512"),
            " --variant reduce5 --block 512 --size 2^20 --min-time 0 --timeout 0.2");
  EXPECT_EQ(
      shortened(" --variant reduce6,cub --size 2^20,2^24,2^28 --op sum,min,max"),
      " --variant reduce6,cub --size 2^16,2^18,2^20 --op sum,min,max --min-time 0 --timeout 0.2");
  EXPECT_EQ(shortened(" --family matmul --size 4096"),
            " --family matmul --size 256 --min-time 0 --timeout 0.2");
  EXPECT_EQ(
      shortened(" --family matmul --shape 4095x4097x1023 --variant warptile"),
      " --family matmul --shape 4095x4097x1023 --variant warptile --min-time 0 --timeout 0.2");
  EXPECT_EQ(shortened(" --pipeline --variant qam256.vec2_stream --block 256 --size 2^27"),
            " --pipeline --variant qam256.vec2_stream --block 256 --size 2^20 --pipeline-runs 2");
  EXPECT_EQ(shortened(" tune --variant reduce_tunable --size 2^10:2^26:*16"),
            " tune --variant reduce_tunable --size 2^20 --budget 20 --min-time 0 --timeout 0.2");
  EXPECT_EQ(shortened(" tune --variant tunable --budget 100 --size 2^24"),
            " tune --variant tunable --budget 100 --size 2^20 --min-time 0 --timeout 0.2");
}

// Replays the shell blocks of the README and of every page of docs/ for real, in a scratch copy
// of kernels_src with the files the pages tell the reader to write, short: every command exits 0,
// and each sweep prints its table with a passed row and the best line.
TEST(GpuReadme, CommandsRunAndPrintTheirTables) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("gpu_readme_cmds");
  std::filesystem::copy(test::kernels_dir(), dir.path() / "kernels_src",
                        std::filesystem::copy_options::recursive);
  test::write_doc_files(dir.str());
  const std::string config = dir.write("empty.cfg", "");
  int sweeps = 0;
  for (auto c : test::readme_commands()) {
    const bool sweep = c.is_kernlab && !prints_no_timed_table(c.text);
    if (sweep || (c.is_kernlab && has_word(c.text, "--pipeline"))) c.text = shortened(c.text);
    const auto r = test::run_command(test::readme_shell_command(c, dir.str(), config));
    if (c.is_kernlab && has_word(c.text, "compare")) {
      // Exit 1 is compare's verdict "a regression" (two short runs of microsecond rows can
      // differ by 10 %), not a failure of the command: it must say so.
      ASSERT_TRUE(r.code == 0 || r.code == 1) << c.line << "\n" << r.output;
      EXPECT_NE(r.output.find(" regression(s): "), std::string::npos) << c.line << "\n" << r.output;
      EXPECT_EQ(r.code == 1, r.output.find("\n0 regression(s): ") == std::string::npos)
          << c.line << "\n"
          << r.output;
      continue;
    }
    ASSERT_EQ(r.code, 0) << c.line << "\n" << r.output;
    if (c.is_kernlab && has_word(c.text, "--pipeline")) {
      EXPECT_NE(r.output.find("qam256 pipeline"), std::string::npos) << c.line << "\n" << r.output;
      EXPECT_NE(r.output.find("bound:"), std::string::npos) << c.line << "\n" << r.output;
    }
    if (!sweep) continue;
    ++sweeps;
    // A tune's table ranks its points; a sweep's lists its variants.
    const bool tunes = has_word(c.text, "tune") || has_word(c.text, "check-dispatch");
    EXPECT_TRUE(has_line_starting(r.output, tunes ? "rank " : "variant ")) << c.line << "\n"
                                                                           << r.output;
    EXPECT_NE(r.output.find("median us"), std::string::npos) << c.line << "\n" << r.output;
    EXPECT_NE(r.output.find(" passed "), std::string::npos) << c.line << "\n" << r.output;
    EXPECT_TRUE(has_line_starting(r.output, "best: ")) << c.line << "\n" << r.output;
  }
  EXPECT_GE(sweeps, 6);
}

// The README's example variant validates at every block, dtype and op.
TEST(GpuReadme, ExampleVariantValidates) {
  KL_REQUIRE_GPU();
  const std::string src = test::readme_example_variant();
  ASSERT_FALSE(src.empty());
  test::temp_dir dir("gpu_readme");
  dir.write("reduce/my_idea.cu", src);
  test::gpu_sweep f;
  f.reg.add_source_dir(dir.str());
  ASSERT_EQ(f.reg.entries().size(), 1u);
  ASSERT_EQ(f.reg.entries()[0].error, "");
  run_request r = f.request_for("reduce", {"my_idea"}, dir.str());
  r.include_dirs = {test::kernels_dir() + "/include", test::cuda_include()};
  r.dtypes = {"int32", "float32"};
  r.ops = {"sum", "min", "max"};
  r.axes = {axis_choice::sizes({1, 1000003})};
  const auto sweep = runner(f.fams, r).run();
  ASSERT_TRUE(sweep.device) << sweep.no_device_reason;
  ASSERT_EQ(sweep.results.size(), 4u * 2 * 3 * 2);
  for (const auto& res : sweep.results)
    EXPECT_EQ(res.status, outcome::passed) << test::describe(res);
}

// With a GPU the device's own architecture is compiled for; the fallback (--arch's default
// without a device) is unused. CachedRuns.AnOptionOrABlockListChangeMisses checks the fallback.
TEST(GpuCompile, TheDevicesArchitectureReplacesTheFallback) {
  KL_REQUIRE_GPU();
  test::gpu_sweep f;
  f.reg.add_source_dir(test::kernels_dir());
  run_request r = f.request_for("reduce", {"reduce5"});
  r.blocks = {256};
  r.dtypes = {"int32"};
  r.ops = {"sum"};
  r.axes = {axis_choice::sizes({1})};
  r.compile_only = true;
  const auto device = cuda::query_device(0);
  r.fallback_arch = device.arch() == "sm_80" ? "sm_90" : "sm_80";
  const auto sweep = runner(f.fams, r).run();
  EXPECT_EQ(sweep.arch, device.arch());
  ASSERT_EQ(sweep.compiles.size(), 1u);
  EXPECT_EQ(sweep.compiles[0].error, "");
}

}  // namespace
}  // namespace kl
