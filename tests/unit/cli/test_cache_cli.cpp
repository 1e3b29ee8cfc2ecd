// The compile cache as a user meets it in the kernlab binary: the cache column and summary,
// --no-cache, `kernlab cache info` and `kernlab cache clear`, the new options' errors, and two
// processes racing to store the same entry.
#include "cli/options.hpp"
#include "nvrtc/compile_cache.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace fs = std::filesystem;

namespace kl {
namespace {

std::string compile_args(const std::string& cache_dir,
                         const std::string& kernels = test::kernels_dir()) {
  return "--compile-only --no-plugins --kernels-dir " + kernels + " --cache-dir " + cache_dir +
         " --variant reduce2,reduce5 --block 128,256 --dtype int32";
}

// Three files: reduce2, reduce5 and the family's reference (which --compile-only compiles too).
TEST(CacheCli, MissThenHitWithTheSummary) {
  test::temp_dir dir("cache_cli");
  auto r = test::run_kernlab(compile_args(dir.str()));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(" cache "), std::string::npos) << r.output;  // the column
  EXPECT_EQ(test::count_of(r.output, " miss "), 3u) << r.output;
  EXPECT_NE(r.output.find("compile: 3 files on 2 threads, 0 hits, 3 misses"), std::string::npos)
      << r.output;
  r = test::run_kernlab(compile_args(dir.str()) + " --compile-jobs 1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(test::count_of(r.output, " hit "), 3u) << r.output;
  EXPECT_NE(r.output.find("compile: 3 files on 1 thread, 3 hits, 0 misses"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("(cache " + dir.str() + ")"), std::string::npos) << r.output;
}

TEST(CacheCli, NoCacheWritesNothing) {
  test::temp_dir dir("cache_cli");
  const auto r = test::run_kernlab(compile_args(dir.str() + "/c") + " --no-cache");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cache off"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path() / "c"));
}

TEST(CacheCli, DefaultFolderIsUnderXdgCacheHome) {
  test::temp_dir dir("cache_cli");
  const auto r =
      test::run_command("XDG_CACHE_HOME=" + dir.str() + " " + KERNLAB_BINARY +
                        " --config /dev/null --compile-only --no-plugins --kernels-dir " +
                        test::kernels_dir() + " --variant reduce2 --block 128 --dtype int32");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::is_directory(dir.path() / "kernlab" / "entries")) << r.output;
}

TEST(CacheCli, InfoAndClear) {
  test::temp_dir dir("cache_cli");
  auto r = test::run_kernlab("cache info --cache-dir " + dir.str() + "/none");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("does not exist yet"), std::string::npos) << r.output;

  ASSERT_EQ(test::run_kernlab(compile_args(dir.str())).code, 0);
  ASSERT_EQ(test::run_kernlab(compile_args(dir.str())).code, 0);
  r = test::run_kernlab("cache info --cache-dir " + dir.str());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("entries:    3 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 run(s), 3 hit(s), 3 miss(es) (50% hits)"), std::string::npos)
      << r.output;

  r = test::run_kernlab("cache clear --cache-dir " + dir.str());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("removed 3 entries"), std::string::npos) << r.output;
  r = test::run_kernlab("cache info --cache-dir " + dir.str());
  EXPECT_NE(r.output.find("entries:    0 "), std::string::npos) << r.output;
  r = test::run_kernlab(compile_args(dir.str()));
  EXPECT_EQ(test::count_of(r.output, " miss "), 3u) << r.output;
}

TEST(CacheCli, SizesParse) {
  EXPECT_EQ(parse_byte_size("1000000", "--max-size"), 1000000u);
  EXPECT_EQ(parse_byte_size("0", "--max-size"), 0u);
  EXPECT_EQ(parse_byte_size("2GiB", "--max-size"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_size("2G", "--max-size"), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_byte_size("500 MB", "--max-size"), std::uint64_t{500} << 20);
  EXPECT_EQ(parse_byte_size("64K", "--max-size"), std::uint64_t{64} << 10);
  EXPECT_EQ(parse_byte_size("1TiB", "--max-size"), std::uint64_t{1} << 40);
  for (const char* bad : {"", "G", "2X", "-1", "1.5G", "99999999999999999999", "20000000000T"}) {
    try {
      parse_byte_size(bad, "--max-size");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const usage_error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--max-size: '" + std::string(bad) + "'", 0), 0u)
          << e.what();
    }
  }
}

TEST(CacheCli, PruneAndTheCap) {
  test::temp_dir dir("cache_cli");
  ASSERT_EQ(test::run_kernlab(compile_args(dir.str())).code, 0);
  auto r = test::run_kernlab("cache info --cache-dir " + dir.str());
  EXPECT_NE(r.output.find("of the 2.00 GiB cap"), std::string::npos) << r.output;
  r = test::run_kernlab("cache info --cache-max-size 500M --cache-dir " + dir.str());
  EXPECT_NE(r.output.find("of the 500.00 MiB cap"), std::string::npos) << r.output;

  r = test::run_kernlab("cache prune --cache-dir " + dir.str());  // under the default cap
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("removed 0 entries (0 B), kept 3 "), std::string::npos) << r.output;
  r = test::run_kernlab("cache prune --max-size 0 --cache-dir " + dir.str());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("removed 3 entries"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kept 0 (0 B, at most 0 B)"), std::string::npos) << r.output;

  // The cap from the config file: a run that stores prunes down to it (1 KiB holds no entry).
  dir.write("small.cfg", "cache-max-size = 1KiB\n");
  r = test::run_command(std::string(KERNLAB_BINARY) + " --config " + dir.str() + "/small.cfg " +
                        compile_args(dir.str()));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(test::count_of(r.output, " miss "), 3u) << r.output;
  r = test::run_command(std::string(KERNLAB_BINARY) + " --config " + dir.str() +
                        "/small.cfg cache info --cache-dir " + dir.str());
  EXPECT_NE(r.output.find("entries:    0 (0 B of the 1.0 KiB cap"), std::string::npos) << r.output;
}

TEST(CacheCli, UsageErrors) {
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"cache", "say 'cache info', 'cache clear' or 'cache prune'"},
           {"cache sweep", "unknown subcommand 'sweep'"},
           {"cahce info", "unknown command 'cahce'"},
           {"cache info extra", "too many words"},
           {"cache info --no-cache", "contradict"},
           {"cache prune --max-size 5X", "--max-size: '5X': unknown unit 'X'"},
           {"cache info --max-size 1G", "--max-size is for 'kernlab cache prune'"},
           {"--compile-only --max-size 1G", "--max-size is for 'kernlab cache prune'"},
           {"cache info --cache-max-size lots", "--cache-max-size: 'lots' is not a size"},
           {"--compile-jobs 0", "--compile-jobs 0: must be a thread count in [1, 1024]"},
           {"--compile-jobs=-2", "--compile-jobs -2: must be"}}) {
    const auto r = test::run_kernlab(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(needle), std::string::npos) << args << "\n" << r.output;
  }
}

// Two kernlab processes start at once on one cache folder and one key: both compile (both miss)
// and both store; the renames must leave one whole entry, and a third run must hit it.
TEST(CacheCli, TwoProcessesRacingOnOneKey) {
  test::temp_dir dir("cache_race");
  for (int round = 0; round < 3; ++round) {
    const std::string cache = dir.str() + "/cache" + std::to_string(round);
    const std::string args = compile_args(cache);
    std::vector<pid_t> pids;
    for (int i = 0; i < 2; ++i) {
      const std::string log = dir.str() + "/log" + std::to_string(round) + "_" + std::to_string(i);
      const pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) {
        const std::string cmd =
            std::string(KERNLAB_BINARY) + " --config /dev/null " + args + " >" + log + " 2>&1";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      pids.push_back(pid);
    }
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      waitpid(pids[i], &status, 0);
      const std::string log =
          test::read_file(dir.str() + "/log" + std::to_string(round) + "_" + std::to_string(i));
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
      EXPECT_EQ(log.find("warning"), std::string::npos) << log;
    }
    // Every entry is whole, no temporary file is left, and a third run hits all three files.
    std::size_t entries = 0;
    for (const auto& e : fs::directory_iterator(fs::path(cache) / "entries")) {
      EXPECT_EQ(e.path().extension(), ".klc") << e.path();
      const std::string hex = e.path().stem().string();
      const nvrtc::digest128 key{std::stoull(hex.substr(0, 16), nullptr, 16),
                                 std::stoull(hex.substr(16), nullptr, 16)};
      const auto found = nvrtc::compile_cache(cache).lookup(key);
      EXPECT_EQ(found.status, nvrtc::lookup_status::hit) << found.problem;
      ++entries;
    }
    EXPECT_EQ(entries, 3u);
    const auto third = test::run_kernlab(args);
    EXPECT_NE(third.output.find("3 hits, 0 misses"), std::string::npos) << third.output;
    const auto info = nvrtc::compile_cache(cache).info();
    EXPECT_EQ(info.counters.runs, 3u);  // the counters' lock kept every run's counts
    EXPECT_EQ(info.counters.hits + info.counters.misses, 9u);
  }
}

}  // namespace
}  // namespace kl
