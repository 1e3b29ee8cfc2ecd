// The kernlab executable as a user runs it: exit codes, messages, and a broken kernel that does
// not stop the others. Runs without a GPU (kernlab_tests hides the GPU where there is one).
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>

namespace kl {
namespace {

struct run_result {
  int code = -1;
  std::string output;  // stdout and stderr together
};

run_result run_kernlab(const std::string& args) {
  const std::string cmd = std::string(KERNLAB_BINARY) + " " + args + " 2>&1";
  run_result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(Binary, HelpAndVersion) {
  auto r = run_kernlab("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("--variant"), std::string::npos);
  r = run_kernlab("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.output.find("plugin ABI"), std::string::npos);
}

// `kernlab COMMAND --help`: the command's usage and only the options that apply to it, exit 0,
// even where the command's own words are missing.
TEST(Binary, EachCommandHasItsOwnHelp) {
  const auto compare = run_kernlab("compare --help");
  EXPECT_EQ(compare.code, 0) << compare.output;
  EXPECT_EQ(compare.output.rfind("usage: kernlab compare OLD.json NEW.json", 0), 0u)
      << compare.output;
  EXPECT_NE(compare.output.find("--threshold"), std::string::npos) << compare.output;
  EXPECT_EQ(compare.output.find("--variant"), std::string::npos) << compare.output;
  EXPECT_EQ(compare.output.find("--kernels-dir"), std::string::npos) << compare.output;
  const auto plot = run_kernlab("plot --help");
  EXPECT_EQ(plot.code, 0) << plot.output;
  EXPECT_NE(plot.output.find("--roofline"), std::string::npos) << plot.output;
  EXPECT_EQ(plot.output.find("--threshold"), std::string::npos) << plot.output;
  const auto cache = run_kernlab("cache --help");
  EXPECT_EQ(cache.code, 0) << cache.output;
  EXPECT_NE(cache.output.find("cache info|clear|prune"), std::string::npos) << cache.output;
  EXPECT_NE(cache.output.find("--max-size"), std::string::npos) << cache.output;
  const auto tune = run_kernlab("tune --help");
  EXPECT_EQ(tune.code, 0) << tune.output;
  EXPECT_NE(tune.output.find("--strategy"), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find("--variant"), std::string::npos) << tune.output;
  EXPECT_EQ(tune.output.find("\n  --list "), std::string::npos) << tune.output;
  const auto unknown = run_kernlab("frob --help");
  EXPECT_EQ(unknown.code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown command 'frob'"), std::string::npos) << unknown.output;
}

// The commit is recorded at build time: a binary built from this checkout names its HEAD (with
// "-dirty" when tracked files were edited), in --version and in --json's reproducibility block.
TEST(Binary, VersionAndJsonNameTheCommitBuiltFrom) {
  const auto git = test::run_command("git -C " + test::source_dir() + " rev-parse --short HEAD");
  if (git.code != 0) GTEST_SKIP() << "the source tree is not a git checkout: " << git.output;
  const std::string head = git.output.substr(0, git.output.find_first_of(" \n"));
  ASSERT_FALSE(head.empty());

  auto r = run_kernlab("--version");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto at = r.output.find("(commit ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const auto start = at + std::string("(commit ").size();
  std::string commit = r.output.substr(start, r.output.find(',', start) - start);
  const std::string dirty = "-dirty";
  const bool is_dirty = commit.size() > dirty.size() &&
                        commit.compare(commit.size() - dirty.size(), dirty.size(), dirty) == 0;
  // A clean build beside a modified tree: this tree is not the checkout kernlab was built from
  // (a copy of the files over another clone's .git, as the GPU machine gets), so HEAD says
  // nothing about the binary.
  const auto status = test::run_command("git -C " + test::source_dir() +
                                        " status --porcelain --untracked-files=no");
  if (!is_dirty && status.code == 0 && !status.output.empty())
    GTEST_SKIP() << "kernlab was built from a clean " << commit
                 << " but this source tree has changes to tracked files: it is not the checkout "
                    "kernlab was built from";
  EXPECT_EQ(is_dirty ? commit.substr(0, commit.size() - dirty.size()) : commit, head)
      << "rebuild kernlab after committing: " << r.output;

  test::temp_dir dir("commit");
  const std::string json = dir.str() + "/run.json";
  r = run_kernlab("--compile-only --no-plugins --variant reduce5 --block 256 --json " + json);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto results = nlohmann::json::parse(test::read_file(json));
  EXPECT_EQ(results.at("reproducibility").at("kernlab_commit").get<std::string>(), commit);
}

TEST(Binary, ListShowsEveryShippedVariantWithItsOrigin) {
  const auto r = run_kernlab("--list");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* v :
       {"reduce.reduce0", "reduce.reduce5", "reduce.reduce6", "reduce.reduce_complete_unroll"})
    EXPECT_NE(r.output.find(v), std::string::npos) << v;
  EXPECT_NE(r.output.find("source "), std::string::npos);
}

TEST(Binary, CompileOnlyEverything) {
  const auto r = run_kernlab("--compile-only --variant all --block all --no-plugins");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("FAILED"), std::string::npos) << r.output;
}

TEST(Binary, UsageErrorsExitWith2AndSayWhat) {
  struct c {
    const char* args;
    const char* needle;
  };
  for (const auto& [args, needle] : std::vector<c>{
           {"--variant reduce55", "did you mean 'reduce5'"},
           {"--variant reduce5 --block 300", "--block 300: no selected variant takes it"},
           {"--variant reduce5 --block 2048", "--block '2048'"},
           {"--size 2^40", "N = 1099511627776 is outside its limits 1..2147483648"},
           {"--size big", "--size 'big' is not a size"},
           {"--dtype int64", "has no dtype 'int64'"},
           {"--op prod", "has no op 'prod'"},
           {"--family matmull", "unknown family 'matmull'"},
           {"--frobnicate", "unrecognised option '--frobnicate'"}}) {
    const auto r = run_kernlab(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
  }
}

TEST(Binary, BrokenKernelFailsAloneWithFileAndLine) {
  test::temp_dir dir("binary");
  const std::string bad = dir.write("reduce/my_idea.cu",
                                    "/* kernlab\nfamily: reduce\nentry: my_idea<BLOCK, T, OP>\n"
                                    "blocks: 256\ntile: BLOCK\n*/\n"
                                    "template <unsigned BLOCK, typename T, typename OP>\n"
                                    "__global__ void my_idea(const T* in, T* out, unsigned n) {\n"
                                    "  out[0] = in[0] oops;\n}\n");
  dir.write("reduce/badheader.cu",
            "/* kernlab\nfamily: reduce\nentry: x\nblocks: 256\nsize: 3\n*/\n");
  // The folder adds to the config's: reduce2 is the shipped one.
  const auto r = run_kernlab("--compile-only --no-plugins --kernels-dir " + dir.str() +
                             " --variant my_idea,reduce2,badheader");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(bad + ":9: error"), std::string::npos) << r.output;
  // The source line, and a caret under the column.
  EXPECT_NE(r.output.find("out[0] = in[0] oops;\n                   ^\n"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("badheader.cu:5: unknown key 'size'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reduce.reduce2"), std::string::npos) << r.output;
}

// defines: each point of a tunable file is compiled with its tunables as macros, so an #if sees
// the point's value (Kernel Tuner's kernels choose code with #if on their tunables); a constant is
// the same for every point. Only the point whose #if reaches the #error fails; the entry is a
// plain function (no template parameters).
TEST(Binary, DefinesGiveEachPointItsMacros) {
  test::temp_dir dir("defines");
  const std::string file =
      dir.write("matmul/mode_if.cu",
                "/* kernlab\nfamily: matmul\nentry: mode_if\nblocks: 128\n"
                "tune: MODE = 1, 2; TILE = 1, 4\ndefines: MODE; TILE; SCALE = 3\n"
                "block_dims: BLOCK, 1\ngrid_dims: ceil_div(N, BLOCK), M\n*/\n"
                "#if MODE == 2 && TILE == 4\n#error \"MODE is 2 and TILE 4 here\"\n#endif\n"
                "#if SCALE != 3 || !defined(MODE)\n#error \"no SCALE or MODE\"\n#endif\n"
                "__global__ void mode_if(const float* A, const float* B, float* C, int M, int N,\n"
                "                        int K) {\n"
                "  const int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;\n"
                "  if (n >= N) return;\n  float s = 0;\n"
                "  for (int k = 0; k < K; ++k) s += A[m * K + k] * B[k * N + n];\n"
                "  C[m * N + n] = s * (MODE * TILE) / (MODE * TILE);\n}\n");
  const auto r = run_kernlab(
      "tune --compile-only --no-plugins --no-cache --family matmul "
      "--kernels-dir " +
      dir.str() + " --variant mode_if");
  EXPECT_EQ(r.code, 1) << r.output;
  auto status = [&](const std::string& point) {
    const auto at = r.output.find("matmul.mode_if[" + point + "]");
    if (at == std::string::npos) return std::string("missing");
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    return line.substr(line.find_last_of(' ') + 1);
  };
  EXPECT_EQ(status("MODE=1;TILE=1"), "ok") << r.output;
  EXPECT_EQ(status("MODE=1;TILE=4"), "ok") << r.output;
  EXPECT_EQ(status("MODE=2;TILE=1"), "ok") << r.output;
  EXPECT_EQ(status("MODE=2;TILE=4"), "FAILED") << r.output;
  EXPECT_NE(r.output.find(file + ":11: error: #error directive: \"MODE is 2 and TILE 4 here\""),
            std::string::npos)
      << r.output;
}

// CUB's block primitives are on the include path, as under nvcc: CUDA 13 keeps them in the
// toolkit's include/cccl, which NVRTC does not search by itself.
TEST(Binary, CubBlockPrimitivesAreIncludable) {
  test::temp_dir dir("cub_block");
  dir.write("reduce/cub_block.cu",
            "/* kernlab\nfamily: reduce\nentry: cub_block<BLOCK, T, OP>\nblocks: 128 256\n"
            "tile: BLOCK\nbounds: checked\n*/\n#include <cub/block/block_reduce.cuh>\n"
            "template <unsigned BLOCK, typename T, typename OP>\n"
            "__global__ void cub_block(const T* in, T* out, unsigned n) {\n"
            "  using reduce = cub::BlockReduce<T, BLOCK>;\n"
            "  __shared__ typename reduce::TempStorage tmp;\n"
            "  const unsigned i = blockIdx.x * BLOCK + threadIdx.x;\n"
            "  const T v = reduce(tmp).Reduce(i < n ? in[i] : OP::identity(), OP());\n"
            "  if (threadIdx.x == 0) out[blockIdx.x] = v;\n}\n");
  const auto r = run_kernlab(
      "--compile-only --no-plugins --no-cache --block 128,256 "
      "--kernels-dir " +
      dir.str() + " --variant cub_block");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("reduce.cub_block"), std::string::npos) << r.output;
}

// --kernels-dir adds a folder to the config's: a new kernel beside the shipped ones (the README's
// `--kernels-dir my_kernels --variant my_idea,reduce5,cub` failed with "unknown variant
// 'reduce5'"). --kernels-dir-only uses the command line's folders alone. A name that two folders
// give is an error naming both files; the shipped folder named again is not a second folder.
TEST(Binary, KernelsDirAddsAFolderToTheConfigs) {
  test::temp_dir dir("add_folder");
  dir.write("reduce/my_idea.cu", test::read_file(test::kernels_dir() + "/reduce/reduce5.cu"));
  auto r = run_kernlab("--compile-only --no-plugins --block 256 --kernels-dir " + dir.str() +
                       " --variant my_idea,reduce5");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("reduce.my_idea"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reduce.reduce5"), std::string::npos) << r.output;
  r = run_kernlab("--compile-only --no-plugins --block 256 --kernels-dir " + dir.str() +
                  " --kernels-dir-only --variant my_idea,reduce5");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown variant 'reduce5'"), std::string::npos) << r.output;
  r = run_kernlab("--list --no-plugins --kernels-dir " + test::kernels_dir() + "/../kernels_src");
  EXPECT_EQ(r.code, 0) << r.output;
  // The README's command whole: `cub` is reduce's here, not also the scan's (whose table would
  // hold nothing but CUB).
  r = run_kernlab("--plan --kernels-dir " + dir.str() + " --variant my_idea,reduce5,cub");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("reduce.cub "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("scan."), std::string::npos) << r.output;

  const std::string copy =
      dir.write("reduce/reduce5.cu", test::read_file(test::kernels_dir() + "/reduce/reduce5.cu"));
  r = run_kernlab("--list --no-plugins --kernels-dir " + dir.str());
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("variant 'reduce.reduce5' is in two kernel folders: " + copy + " and " +
                          test::kernels_dir() + "/reduce/reduce5.cu"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--kernels-dir-only"), std::string::npos) << r.output;
  r = run_kernlab("--compile-only --no-plugins --block 256 --kernels-dir " + dir.str() +
                  " --kernels-dir-only --variant my_idea,reduce5");
  EXPECT_EQ(r.code, 0) << r.output;
}

// `kernlab --list` lists every family of the kernel folders, not the config's default job's.
TEST(Binary, ListShowsEveryFamily) {
  auto r = run_kernlab("--list --no-plugins");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* family : {"reduce", "matmul", "scan", "softmax", "transpose", "qam256"})
    EXPECT_NE(r.output.find(std::string("family ") + family + ":"), std::string::npos)
        << family << "\n"
        << r.output;
  r = run_kernlab("--list --no-plugins --family scan");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("family reduce:"), std::string::npos) << r.output;
  r = run_kernlab("--list-names --no-plugins");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* name : {"\nreduce5\n", "\nreduce_tunable\n", "\ntiled\n"})
    EXPECT_NE(r.output.find(name), std::string::npos) << name << r.output;
  EXPECT_EQ(r.output.find("["), std::string::npos) << "no unnamed points\n" << r.output;
}

// Standard output only: what kernlab writes there when an output is "-", stderr left out.
test::command_result run_stdout_only(const std::string& args) {
  return test::run_command("{ " + std::string(KERNLAB_BINARY) + " " + args + " 2>/dev/null; }");
}

// `--json -` (and --csv -) puts the file alone on stdout, to pipe into jq or pandas: the banner,
// the tables and the summary go to stderr.
TEST(Binary, AnOutputOnStdoutIsCleanData) {
  const std::string args = "--compile-only --no-plugins --variant reduce5 --block 256 ";
  auto r = run_stdout_only(args + "--json -");
  EXPECT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j.at("format"), "kernlab-results");
  r = run_stdout_only(args + "--csv -");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.rfind("family,variant,", 0), 0u) << r.output;
  EXPECT_EQ(test::count_of(r.output, "\n"), 1u) << r.output;  // the header: nothing was timed
  // The human lines still come, on stderr.
  r = test::run_command("{ " + std::string(KERNLAB_BINARY) + " " + args +
                        "--json - 2>&1 >/dev/null; }");
  EXPECT_NE(r.output.find("reduce.reduce5"), std::string::npos) << r.output;
  const auto two = run_kernlab(args + "--json - --csv -");
  EXPECT_EQ(two.code, 2) << two.output;
  EXPECT_NE(two.output.find("both write to standard output"), std::string::npos) << two.output;
}

// --resources --json writes a record per instantiation: registers, shared memory, spills and
// the theoretical occupancy.
TEST(Binary, ResourcesWriteRecords) {
  test::temp_dir dir("resources");
  const std::string json = dir.str() + "/r.json";
  const auto r = run_kernlab(
      "--resources --no-plugins --variant reduce5 --block 256,512 "
      "--dtype int32 --op sum --json " +
      json);
  EXPECT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(test::read_file(json));
  std::vector<unsigned> blocks;
  for (const auto& rec : j.at("records")) {
    if (rec.at("variant").at("name") != "reduce5") continue;
    blocks.push_back(rec.at("block").get<unsigned>());
    EXPECT_EQ(rec.at("outcome"), "skipped");
    EXPECT_GT(rec.at("resources").at("registers").get<int>(), 0);
    EXPECT_TRUE(rec.at("resources").contains("spill_store_bytes"));
    EXPECT_GT(rec.at("occupancy").at("fraction").get<double>(), 0);
  }
  EXPECT_EQ(blocks, (std::vector<unsigned>{256, 512})) << j.dump(1);
}

// `tune --compile-only` compiles every point of the space, with no GPU; it was accepted and then
// stopped at "no device" (exit 3).
TEST(Binary, TuneCompileOnlyCompilesEveryPoint) {
  test::temp_dir dir("tune_compile");
  dir.write("reduce/small_tunable.cu",
            "/* kernlab\nfamily: reduce\nentry: small_tunable<BLOCK, GAIN, T, OP>\n"
            "blocks: 128 256\ntile: BLOCK\ntune: GAIN = 1, 2\n*/\n"
            "#include <kernlab/reduce.cuh>\n"
            "template <unsigned BLOCK, int GAIN, typename T, typename OP>\n"
            "__global__ void small_tunable(const T* in, T* out, unsigned n) {\n"
            "  if (threadIdx.x == 0) out[blockIdx.x] = in[blockIdx.x * BLOCK] * GAIN;\n}\n");
  auto r = run_kernlab("tune --compile-only --no-plugins --kernels-dir " + dir.str() +
                       " --variant small_tunable --dtype int32 --op sum");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("small_tunable[GAIN=1]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("small_tunable[GAIN=2]"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("no CUDA driver"), std::string::npos) << r.output;
  r = run_kernlab("tune --compile-only --no-plugins --kernels-dir " + dir.str() +
                  " --variant small_tunable --export best.json");
  EXPECT_EQ(r.code, 2) << r.output;
}

// `kernlab --completion bash` is a script bash can source: it registers kernlab and completes
// options from the option table and variants from --list-names.
TEST(Binary, BashCompletion) {
  const std::string source =
      "source <(" + std::string(KERNLAB_BINARY) + " --completion bash) && complete -p kernlab";
  auto r = test::run_command("bash -c '" + source + "'");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "complete -o filenames -F _kernlab kernlab\n");
  r = test::run_command("bash -c 'source <(" + std::string(KERNLAB_BINARY) +
                        " --completion bash); COMP_WORDS=(kernlab --kernels-d); COMP_CWORD=1; "
                        "_kernlab; echo \"${COMPREPLY[*]}\"; COMP_WORDS=(" +
                        KERNLAB_BINARY +
                        " --variant reduce_t); COMP_CWORD=2; _kernlab; echo \"${COMPREPLY[*]}\"'");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("--kernels-dir --kernels-dir-only\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reduce_tunable"), std::string::npos) << r.output;
  const auto zsh = run_kernlab("--completion zsh");
  EXPECT_EQ(zsh.code, 0) << zsh.output;
  EXPECT_EQ(zsh.output.rfind("#compdef kernlab\n", 0), 0u) << zsh.output;
  EXPECT_NE(zsh.output.find("'--variant=[variants]:value:_kernlab_variants'"), std::string::npos)
      << zsh.output;
  const auto fish = run_kernlab("--completion fish");
  EXPECT_EQ(fish.code, 2) << fish.output;
}

// `kernlab --completion zsh` is a script zsh parses and that registers _kernlab for kernlab after
// compinit, as its first comment tells the user to load it.
TEST(Binary, ZshCompletionLoads) {
  if (test::run_command("command -v zsh").code != 0)
    GTEST_SKIP() << "zsh is not installed here (scripts/setup.sh installs it)";
  test::temp_dir dir("zsh_completion");
  const std::string script = dir.write("_kernlab", run_kernlab("--completion zsh").output);
  auto r = test::run_command("zsh -n " + script);
  EXPECT_EQ(r.code, 0) << r.output;
  r = test::run_command("HOME=" + dir.str() + " zsh -f -c 'autoload -Uz compinit && compinit -u " +
                        "-D && source " + script +
                        " && (( $+functions[_kernlab] && $+functions[_kernlab_variants] )) && " +
                        "print -r -- ${_comps[kernlab]}'");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output, "_kernlab\n");
  // What its variant completer runs: kernlab --list-names, one name a line.
  r = test::run_command("zsh -f -c 'compdef() { :; }; words=(" + std::string(KERNLAB_BINARY) +
                        "); source " + script +
                        "; compadd() { print -rl -- ${(P)${@[-1]}} }; _kernlab_variants' | "
                        "grep -cx reduce5");
  EXPECT_EQ(r.output, "1\n") << r.output;
}

// A user's own kernels folder, given alone: its kernels still get kernlab's family headers
// (kernlab/reduce.cuh is included into every reduce kernel). It failed with "cannot open source
// file kernlab/reduce.cuh" when --kernels-dir replaced the shipped folder.
TEST(Binary, AKernelsFolderOfTheUsersOwnGetsTheFamilyHeaders) {
  test::temp_dir dir("own_folder");
  dir.write("reduce/mine.cu", test::read_file(test::kernels_dir() + "/reduce/reduce5.cu"));
  ASSERT_FALSE(std::filesystem::exists(dir.path() / "include"));
  const auto r = run_kernlab("--compile-only --no-plugins --config /dev/null --kernels-dir " +
                             dir.str() + " --variant all --block all");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(r.output.find("cannot open source file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reduce.mine"), std::string::npos) << r.output;
}

TEST(Binary, OutputsCompareAndPlot) {
  test::temp_dir dir("outputs");
  const std::string json = dir.str() + "/run.json", csv = dir.str() + "/run.csv",
                    svg = dir.str() + "/run.svg";
  auto r = run_kernlab("--compile-only --no-plugins --variant reduce5,reduce6 --json " + json +
                       " --csv " + csv);
  EXPECT_EQ(r.code, 0) << r.output;
  const std::string text = test::read_file(json);
  EXPECT_NE(text.find("\"format\": \"kernlab-results\""), std::string::npos);
  EXPECT_NE(text.find("\"source_hash\""), std::string::npos);
  EXPECT_EQ(test::read_file(csv).rfind("family,variant,", 0), 0u);
  // Nothing timed, nothing to pair: an error (exit 4), which CI cannot mistake for a pass.
  r = run_kernlab("compare " + json + " " + json);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("0 matched"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nothing was compared"), std::string::npos) << r.output;
  // A compile-only result has nothing to draw: the image says so rather than being blank.
  r = run_kernlab("plot " + json + " -o " + svg);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(test::read_file(svg).rfind("<svg", 0), 0u);
  EXPECT_NE(test::read_file(svg).find("no measured records"), std::string::npos);
  // Files that are not results are refused with the file's name (exit code 4: a file problem).
  const std::string bogus = dir.write("bogus.json", "{\"hello\": 1}");
  r = run_kernlab("compare " + bogus + " " + json);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.output.find(bogus + ": not a kernlab results file"), std::string::npos) << r.output;
  r = run_kernlab("plot");
  EXPECT_EQ(r.code, 2);
}

TEST(Binary, MarkdownAndResources) {
  auto r = run_kernlab("--resources --markdown --no-plugins --variant reduce5 --dtype int32");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| variant | block | dtype | op | regs |"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("| reduce5 | 1024 | int32 | sum |"), std::string::npos) << r.output;
}

// A tile file's launch asks for shared memory its header computes (shared_bytes): --resources
// shows it beside the kernel's static bytes and counts both in the occupancy. 64 KiB a block of
// 256 threads leaves room for three blocks of an H100's or H200's 228 KiB.
TEST(Binary, ResourcesCountTheDynamicSharedMemory) {
  const auto r = run_kernlab(
      "--resources --markdown --no-plugins --family scan --variant smem_lookback_tunable "
      "--dtype int32 --block 256 --arch sm_90");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| regs | smem B | dyn B | stack B |"), std::string::npos) << r.output;
  const std::string row = "| smem_lookback_tunable[LOADS=16;ORDER=0] | 256 | int32 |";
  const auto at = r.output.find(row);
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_NE(line.find("| 65536 |"), std::string::npos) << line;
  EXPECT_NE(line.find("| 3 | 38% | shared memory |"), std::string::npos) << line;
}

// kernlab_tests hides every GPU (test_cpu_environment.cpp), so this runs on any machine.
TEST(Binary, NoDeviceIsSaidClearly) {
  const auto r = run_kernlab("--variant reduce5 --block 512");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("no CUDA driver/device"), std::string::npos) << r.output;
  // It still compiled what it was asked to run.
  EXPECT_NE(r.output.find("reduce.reduce5"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace kl
