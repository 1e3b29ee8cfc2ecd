// Plugin loading without a GPU: the shipped plugins register, every bad plugin gives one warning
// that names the file and the reason, and nothing else is affected. Plugins that do harm while
// they are loaded are probed in a child process, and kernlab itself goes on.
#include "cli/options.hpp"
#include "families/family.hpp"
#include "registry/registry.hpp"
#include "shipped_families.hpp"
#include "spec/metadata.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

namespace kl {
namespace {

class Plugins : public ::testing::Test {
 protected:
  Plugins() : reg(fams) {
    test::register_shipped_families(fams);
    add_data_families(fams, {test::kernels_dir()}, {},
                      {std::string(KERNLAB_PLUGIN_DIR) + "/families"});
  }
  const registry_entry* entry(const std::string& name) const { return reg.find("reduce." + name); }
  std::string warning_about(const std::string& file) const {
    for (const auto& w : reg.warnings())
      if (w.find(file) != std::string::npos) return w;
    return "";
  }
  family_registry fams;
  registry reg;
};

TEST_F(Plugins, ShippedPluginsRegisterBesideTheSources) {
  reg.add_source_dir(test::kernels_dir());
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  EXPECT_TRUE(reg.warnings().empty()) << reg.warnings().front();
  const auto* cub = entry("cub");
  ASSERT_NE(cub, nullptr);
  EXPECT_EQ(cub->descriptor.origin, origin_kind::plugin);
  EXPECT_NE(cub->descriptor.origin_path.find("kernlab_cub.so"), std::string::npos);
  EXPECT_TRUE(cub->descriptor.is_baseline);
  EXPECT_TRUE(cub->descriptor.blocks.empty());  // the block size does not apply
  EXPECT_TRUE(cub->descriptor.supports_dtype("int32") && cub->descriptor.supports_dtype("float32"));
  for (const char* n : {"reduce5_nvcc", "reduce6_nvcc"}) {
    const auto* e = entry(n);
    ASSERT_NE(e, nullptr) << n;
    EXPECT_EQ(e->descriptor.blocks, (std::vector<unsigned>{128, 256, 512, 1024}));
    EXPECT_FALSE(e->descriptor.is_baseline);
  }
  ASSERT_NE(entry("atomic_sum"), nullptr);  // the README's example plugin
  // Selection treats plugin variants like source variants.
  EXPECT_EQ(reg.select({"reduce5*"}).size(), 2u);
  EXPECT_EQ(reg.select({"reduce.cub"}).front(), cub);
}

// kernlab_add_plugin builds without CCCL's NVTX ranges: Nsight Compute names a kernel after its
// innermost range, so CUB's own ("cub::DeviceScan::InclusiveSum") hid the row's from --profile
// (scan.cub showed no kernels on an H200, 2026-11-28). NVTX's injection entry points are in a
// plugin only when some range is compiled in.
TEST(PluginBuild, ShippedPluginsPushNoNvtxRangesOfTheirOwn) {
  for (const char* name : {"kernlab_cub.so", "kernlab_cub_scan.so"}) {
    const std::string path = std::string(KERNLAB_PLUGIN_DIR) + "/" + name;
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << path;
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_GT(bytes.size(), 1000u) << path;
    EXPECT_EQ(bytes.find("NVTX_INJECTION64_PATH"), std::string::npos) << path;
  }
}

// The README's `--variant my_idea,reduce5,cub`: reduce's and scan's baselines are both `cub`,
// and beside names of one family the plain name means that family's (scan's rows would be a
// table of nothing but CUB). Alone, beside several families, or as a wildcard, it keeps both.
TEST_F(Plugins, AnAmbiguousPlainNameFollowsTheFamilyOfTheOthers) {
  reg.add_source_dir(test::kernels_dir());
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  const auto families = [&](const std::vector<std::string>& patterns) {
    std::vector<std::string> out;
    for (const auto* e : reg.select(patterns)) out.push_back(e->descriptor.qualified_name());
    return out;
  };
  ASSERT_NE(reg.find("scan.cub"), nullptr);
  EXPECT_EQ(families({"reduce5", "cub"}),
            (std::vector<std::string>{"reduce.reduce5", "reduce.cub"}));
  EXPECT_EQ(families({"cub", "decoupled_lookback"}),
            (std::vector<std::string>{"scan.decoupled_lookback", "scan.cub"}));
  EXPECT_EQ(families({"cub"}).size(), 2u);
  EXPECT_EQ(families({"cub", "reduce5", "decoupled_lookback"}).size(), 4u);
  const auto wild = families({"cu*", "reduce5"});  // cub twice, and every cublas
  EXPECT_NE(std::find(wild.begin(), wild.end(), "scan.cub"), wild.end());
}

TEST_F(Plugins, BadPluginsWarnOnceEachAndTheRestLoads) {
  reg.add_plugin_dir(KERNLAB_TEST_PLUGIN_DIR);
  const std::string dir = KERNLAB_TEST_PLUGIN_DIR;
  // dlerror()'s reason, not errno's ("Bad file descriptor").
  EXPECT_NE(warning_about("not_a_plugin.so")
                .find("cannot be loaded as a shared object (invalid ELF header)"),
            std::string::npos)
      << warning_about("not_a_plugin.so");
  EXPECT_NE(warning_about("kernlab_no_entry.so").find("no 'kernlab_plugin' entry point"),
            std::string::npos);
  EXPECT_NE(warning_about("kernlab_bad_abi.so")
                .find("built for plugin ABI version 3, this kernlab loads versions 1 to 2"),
            std::string::npos)
      << warning_about("kernlab_bad_abi.so");
  EXPECT_NE(warning_about("kernlab_unknown_family.so").find("unknown family 'no_such_family'"),
            std::string::npos);
  EXPECT_EQ(reg.warnings().size(), 4u);
  for (const auto& w : reg.warnings()) EXPECT_EQ(w.rfind("plugin " + dir, 0), 0u) << w;
  // The working test plugins are registered; run-time failures are the GPU tests' business.
  for (const char* n :
       {"always_fails", "planted_wrong", "throws_inside", "from_abi_v1", "with_release"})
    EXPECT_NE(entry(n), nullptr) << n;
}

TEST_F(Plugins, DuplicateNameIsRefusedWithAWarning) {
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  reg.add_plugin_file(std::string(KERNLAB_PLUGIN_DIR) + "/kernlab_cub.so");
  ASSERT_EQ(reg.warnings().size(), 1u);
  EXPECT_NE(reg.warnings()[0].find("'reduce.cub' is already taken"), std::string::npos);
}

TEST_F(Plugins, MissingFolderIsAWarning) {
  reg.add_plugin_dir("/no/such/folder");
  EXPECT_TRUE(reg.entries().empty());
  ASSERT_EQ(reg.warnings().size(), 1u);
  EXPECT_EQ(reg.warnings()[0], "/no/such/folder: plugin folder does not exist");
}

probe_options child_probe(double timeout_s = 3) {
  probe_options o;
  o.command = {KERNLAB_BINARY, "--probe-plugin"};
  o.timeout_s = timeout_s;
  return o;
}

// Each hostile plugin would end or hang kernlab if it were loaded in kernlab's own process.
TEST_F(Plugins, HostilePluginsAreRefusedByTheProbeAndTheRestLoads) {
  reg.set_probe_options(child_probe(2));
  const auto t0 = std::chrono::steady_clock::now();
  reg.add_plugin_dir(KERNLAB_HOSTILE_PLUGIN_DIR);
  reg.add_plugin_dir(KERNLAB_PLUGIN_DIR);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::map<std::string, std::vector<std::string>> expected = {
      {"kernlab_hostile_abort.so", {"killed by signal 6", "while loading it"}},
      {"kernlab_hostile_throws.so", {"killed by signal 6", "while loading it"}},
      {"kernlab_hostile_exit0.so", {"exited with code 0 while loading it", "before reporting"}},
      {"kernlab_hostile_hang.so", {"still loading it (its constructors run here) after 2 s"}},
      {"kernlab_hostile_huge_count.so",
       {"bad table: variant 0's dtype list counts 100000 entries"}},
      {"kernlab_hostile_wild_table.so", {"killed by signal 11", "while reading its table"}},
      {"kernlab_truncated.so", {}}};
  for (const auto& [file, parts] : expected) {
    const std::string w = warning_about(file);
    ASSERT_FALSE(w.empty()) << file;
    EXPECT_EQ(w.rfind("plugin " + std::string(KERNLAB_HOSTILE_PLUGIN_DIR) + "/" + file + ": ", 0),
              0u)
        << w;
    for (const auto& part : parts) EXPECT_NE(w.find(part), std::string::npos) << w;
  }
  // The truncated copy fails in dlopen, with the loader's reason or a fault: either is named.
  const std::string truncated = warning_about("kernlab_truncated.so");
  EXPECT_TRUE(truncated.find("cannot be loaded as a shared object (") != std::string::npos ||
              truncated.find("killed by signal") != std::string::npos)
      << truncated;
  EXPECT_EQ(reg.warnings().size(), expected.size());
  for (const auto& e : reg.entries())
    EXPECT_EQ(e.descriptor.name.rfind("hostile", 0), std::string::npos);
  for (const char* n : {"cub", "reduce5_nvcc", "reduce6_nvcc", "atomic_sum"})
    EXPECT_NE(entry(n), nullptr) << n;
  EXPECT_LT(seconds, 30) << "only the hanging plugin may cost its time limit";
}

TEST_F(Plugins, AFifoNamedLikeAPluginIsNeverOpened) {
  test::temp_dir dir("fifo");
  const std::string fifo = dir.str() + "/x.so";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  reg.set_probe_options(child_probe());
  reg.add_plugin_dir(dir.str());  // opening the FIFO for reading would block for ever
  ASSERT_EQ(reg.warnings().size(), 1u);
  EXPECT_EQ(reg.warnings()[0], "plugin " + fifo + ": not a regular file (a FIFO); ignored");
}

TEST(PluginProbe, VerdictsAreKeptPerFileContent) {
  test::temp_dir dir("probe_cache");
  const std::string plugin = dir.str() + "/kernlab_mine.so";
  std::filesystem::copy_file(std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_release_marker.so",
                             plugin);
  probe_options o = child_probe();
  o.cache_dir = dir.path() / "cache";
  const plugin_verdict first = probe_plugin(plugin, o);
  ASSERT_TRUE(first.ok) << first.reason;
  ASSERT_EQ(first.variants.size(), 1u);
  EXPECT_EQ(first.variants[0].name, "with_release");
  EXPECT_EQ(first.abi_version, 2u);
  // A probe that cannot run at all: the cached verdict answers for the same bytes ...
  o.command = {"/bin/false"};
  const plugin_verdict warm = probe_plugin(plugin, o);
  EXPECT_TRUE(warm.ok) << warm.reason;
  EXPECT_EQ(to_json(warm), to_json(first));
  // ... and not for other bytes, whatever the file is called.
  std::ofstream(plugin, std::ios::app) << "x";
  const plugin_verdict changed = probe_plugin(plugin, o);
  EXPECT_FALSE(changed.ok);
  EXPECT_NE(changed.reason.find("the probe process exited with code 1 while starting the probe"),
            std::string::npos)
      << changed.reason;
  // Without a cache folder nothing is kept.
  o.cache_dir.clear();
  EXPECT_FALSE(probe_plugin(std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_abi_v1.so", o).ok);
}

// A time-out may be the machine's fault: a longer limit gets a fresh probe, an equal one does not.
TEST(PluginProbe, ATimeOutIsKeptOnlyForLimitsNoLonger) {
  test::temp_dir dir("probe_timeout");
  const std::string hang = std::string(KERNLAB_HOSTILE_PLUGIN_DIR) + "/kernlab_hostile_hang.so";
  probe_options o = child_probe(1);
  o.cache_dir = dir.path();
  const plugin_verdict first = probe_plugin(hang, o);
  ASSERT_FALSE(first.ok);
  EXPECT_EQ(first.timed_out_after_s, 1);
  o.command = {"/bin/false"};  // from here on, a probe that runs says so ("exited with code 1")
  EXPECT_EQ(probe_plugin(hang, o).reason, first.reason);
  o.timeout_s = 2;
  EXPECT_NE(probe_plugin(hang, o).reason.find("exited with code 1"), std::string::npos);
}

TEST(PluginAbi, VersionOneTablesStillLoad) {
  const std::string path = std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_abi_v1.so";
  const plugin_verdict v = probe_plugin(path, child_probe());
  ASSERT_TRUE(v.ok) << v.reason;
  EXPECT_EQ(v.abi_version, 1u);
  ASSERT_EQ(v.variants.size(), 1u);
  EXPECT_EQ(v.variants[0].name, "from_abi_v1");
  auto p = load_plugin(path);
  EXPECT_EQ(p->table->abi_version, 1u);
  p.reset();  // must not read the `release` that a version-1 table does not have
}

TEST(PluginAbi, ReleaseIsCalledBeforeUnloadInEveryProcessThatLoadedIt) {
  test::temp_dir dir("release");
  const std::string marker = dir.str() + "/marker";
  ASSERT_EQ(setenv("KERNLAB_TEST_RELEASE_MARKER", marker.c_str(), 1), 0);
  const std::string path = std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_release_marker.so";
  // The probe process loads it, reads it, releases it.
  ASSERT_TRUE(probe_plugin(path, child_probe()).ok);
  EXPECT_EQ(test::read_file(marker), "released\n");
  // So does a process that runs it (the worker), when it lets go of it.
  auto p = load_plugin(path);
  EXPECT_EQ(test::read_file(marker), "released\n");
  p.reset();
  EXPECT_EQ(test::read_file(marker), "released\nreleased\n");
  unsetenv("KERNLAB_TEST_RELEASE_MARKER");
}

TEST(PluginPath, SplitsOnColonsOnly) {
  EXPECT_EQ(plugin_path_dirs("/opt/My Plugins:/a,b::rel/dir:"),
            (std::vector<std::string>{"/opt/My Plugins", "/a,b", "rel/dir"}));
  EXPECT_TRUE(plugin_path_dirs(nullptr).empty());
  EXPECT_TRUE(plugin_path_dirs("").empty());
}

TEST(PluginDirs, PluginDirAddsToTheBuildsFolder) {
  default_paths d;
  d.plugin_dirs = {"/build/plugins"};
  std::vector<const char*> args = {"kernlab", "--config",     "/dev/null",     "--plugin-dir",
                                   "/mine",   "--plugin-dir", "/build/plugins"};
  const cli_options o = parse_command_line(static_cast<int>(args.size()), args.data(), d);
  EXPECT_EQ(o.plugin_dirs, (std::vector<std::string>{"/build/plugins", "/mine"}));
  args.push_back("--no-plugins");
  EXPECT_TRUE(parse_command_line(static_cast<int>(args.size()), args.data(), d).no_plugins);
}

// The whole program: hostile plugins beside good ones change nothing but one warning each.
TEST(PluginCommands, ListAndCompileOnlyGoOnPastHostilePlugins) {
  test::temp_dir cache("hostile_cache");
  const std::string common = std::string(" --kernel-timeout 4 --cache-dir ") + cache.str() +
                             " --kernels-dir " + test::kernels_dir() + " --plugin-dir " +
                             KERNLAB_HOSTILE_PLUGIN_DIR;
  const std::vector<std::string> hostile = {
      "kernlab_hostile_abort.so", "kernlab_hostile_throws.so",     "kernlab_hostile_exit0.so",
      "kernlab_hostile_hang.so",  "kernlab_hostile_huge_count.so", "kernlab_hostile_wild_table.so",
      "kernlab_truncated.so"};
  auto check = [&](const test::command_result& r, const char* what) {
    for (const auto& f : hostile)
      EXPECT_EQ(
          test::count_of(r.output, "warning: plugin " + std::string(KERNLAB_HOSTILE_PLUGIN_DIR) +
                                       "/" + f + ": "),
          1u)
          << what << ": " << f << "\n"
          << r.output;
  };
  const auto list = test::run_kernlab("--list" + common);
  EXPECT_EQ(list.code, 0) << list.output;
  check(list, "--list");
  for (const char* n :
       {"reduce5", "cub", "reduce5_nvcc", "reduce6_nvcc", "atomic_sum", "cublas", "copy"})
    EXPECT_NE(list.output.find(n), std::string::npos) << n;
  // Warm: every verdict comes from the cache, the hanging plugin costs nothing this time.
  std::size_t verdicts = 0;
  for ([[maybe_unused]] const auto& f :
       std::filesystem::directory_iterator(cache.path() / "plugins"))
    ++verdicts;
  EXPECT_GE(verdicts, hostile.size() + 5);  // + cub, nvcc_reduce, example, copy, cublas
  const auto t0 = std::chrono::steady_clock::now();
  const auto warm = test::run_kernlab("--list" + common);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4);
  EXPECT_EQ(warm.output, list.output);
  const auto compile =
      test::run_kernlab("--compile-only --variant reduce5,cub --block 256" + common);
  EXPECT_EQ(compile.code, 0) << compile.output;
  check(compile, "--compile-only");
  // A run: without a GPU its normal end is exit code 3, with the same warnings first.
  const auto run = test::run_kernlab("--variant reduce5,cub --block 256 --size 2^20" + common);
  check(run, "a run");
  EXPECT_TRUE(run.code == 0 || run.code == 3) << run.output;
}

TEST(PluginCommands, PluginDirKeepsTheBaselines) {
  const auto r = test::run_kernlab(
      "--compile-only --no-cache --variant reduce5,cub,always_fails --block 256 "
      "--kernels-dir " +
      test::kernels_dir() + " --plugin-dir " + KERNLAB_TEST_PLUGIN_DIR);
  EXPECT_EQ(r.code, 0) << r.output;  // it was a usage error: cub had vanished
}

TEST(PluginCommands, PluginPathIsSplitOnColonsAndWarnsAboutMissingFolders) {
  test::temp_dir dir("plugin_path");
  std::filesystem::create_directories(dir.path() / "My Plugins");
  std::filesystem::create_directories(dir.path() / "Plugins");
  std::filesystem::copy_file(std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_release_marker.so",
                             dir.path() / "My Plugins" / "kernlab_release_marker.so");
  std::filesystem::copy_file(std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_abi_v1.so",
                             dir.path() / "Plugins" / "kernlab_abi_v1.so");
  const auto r = test::run_command("cd " + dir.str() + " && KERNLAB_PLUGIN_PATH='" + dir.str() +
                                   "/My Plugins:/no/such/folder' " + KERNLAB_BINARY +
                                   " --config /dev/null --no-cache --list --kernels-dir " +
                                   test::kernels_dir());
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("with_release"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("from_abi_v1"), std::string::npos) << "./Plugins was loaded:\n"
                                                             << r.output;
  EXPECT_NE(r.output.find("/no/such/folder: plugin folder does not exist"), std::string::npos)
      << r.output;
  const auto missing = test::run_kernlab("--list --no-cache --kernels-dir " + test::kernels_dir() +
                                         " --plugin-dir /no/such/dir");
  EXPECT_NE(missing.output.find("/no/such/dir: plugin folder does not exist"), std::string::npos);
}

// nvcc_reduce restates its twins' launch geometry in C++; if a kernel file's header changes,
// this test says the plugin must follow.
TEST(PluginTwins, NvccTwinsMatchTheirKernelHeaders) {
  auto header = [](const std::string& name) {
    return parse_header(test::read_file(test::kernels_dir() + "/reduce/" + name + ".cu"), name)
        .descriptor;
  };
  const auto r5 = header("reduce5");
  EXPECT_EQ(r5.tile, "2 * BLOCK");
  EXPECT_EQ(r5.grid, grid_kind::tiles);
  EXPECT_EQ(r5.bounds, bounds_kind::padded);
  const auto r6 = header("reduce6");
  EXPECT_EQ(r6.tile, "2 * BLOCK");
  EXPECT_EQ(r6.grid, grid_kind::resident);
  EXPECT_EQ(r6.bounds, bounds_kind::checked);
  // The plugin's traits for each twin say the same.
  const std::string p5 =
      test::read_file(test::source_dir() + "/plugins/nvcc_reduce/reduce5_nvcc.cu");
  EXPECT_NE(p5.find("grid = grid_mode::tiles;"), std::string::npos);
  EXPECT_NE(p5.find("bounds = bounds_mode::padded;"), std::string::npos);
  EXPECT_NE(p5.find("tile(unsigned block) { return 2 * block; }"), std::string::npos);
  const std::string p6 =
      test::read_file(test::source_dir() + "/plugins/nvcc_reduce/reduce6_nvcc.cu");
  EXPECT_NE(p6.find("grid = grid_mode::resident;"), std::string::npos);
  EXPECT_NE(p6.find("bounds = bounds_mode::checked;"), std::string::npos);
  EXPECT_NE(p6.find("tile(unsigned block) { return 2 * block; }"), std::string::npos);
}

}  // namespace
}  // namespace kl
