// --watch without a GPU: the inotify watcher (saves, rename-saves, new folders, removals,
// editors' scratch files), a watch session's rounds in-process, and the kernlab binary reacting
// to a file written into a temporary kernels folder.
#include "cli/options.hpp"
#include "data_family_fixture.hpp"
#include "families/family.hpp"
#include "registry/registry.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"
#include "watch/directory_watcher.hpp"
#include "watch/watch_session.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace kl {
namespace {

std::vector<std::string> paths(std::initializer_list<fs::path> ps) {
  std::vector<std::string> out;
  for (const auto& p : ps) out.push_back(p.string());
  return out;
}

// ---------------------------------------------------------------------------------------------
// The watcher

class Watcher : public ::testing::Test {
 protected:
  Watcher() { fs::create_directories(dir.path() / "reduce"); }
  test::temp_dir dir{"watcher"};
};

TEST_F(Watcher, ReportsAFileWrittenWhileItWaits) {
  directory_watcher w({dir.str()});
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    dir.write("reduce/k.cu", "// saved");
  });
  const auto changed = w.wait(5s, 50ms);
  writer.join();
  EXPECT_EQ(changed, paths({dir.path() / "reduce" / "k.cu"}));
}

TEST_F(Watcher, ARenameSaveIsOneChangeOfTheTarget) {
  const std::string target = dir.write("reduce/k.cu", "// old");
  directory_watcher w({dir.str()});
  // What many editors do: write a temporary file, then rename it over the original.
  dir.write("reduce/k.cu.tmp123", "// new");
  fs::rename(dir.path() / "reduce" / "k.cu.tmp123", target);
  EXPECT_EQ(w.wait(5s, 50ms), std::vector<std::string>{target});
}

TEST_F(Watcher, VimStyleSaveIsSeen) {
  const std::string target = dir.write("reduce/k.cu", "// old");
  directory_watcher w({dir.str()});
  dir.write("reduce/4913", "");  // vim's probe
  fs::remove(dir.path() / "reduce" / "4913");
  fs::rename(target, target + "~");  // the backup
  dir.write("reduce/k.cu", "// new");
  fs::remove(target + "~");
  EXPECT_EQ(w.wait(5s, 50ms), std::vector<std::string>{target});
}

TEST_F(Watcher, TimesOutWhenNothingHappens) {
  directory_watcher w({dir.str()});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(w.wait(150ms, 50ms).empty());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 140ms);
}

TEST_F(Watcher, IgnoresScratchFiles) {
  directory_watcher w({dir.str()});
  dir.write("reduce/.k.cu.swp", "x");
  dir.write("reduce/k.cu~", "x");
  dir.write("reduce/.hidden", "x");
  EXPECT_TRUE(w.wait(300ms, 50ms).empty());
  EXPECT_TRUE(is_scratch_file("4913"));
  EXPECT_FALSE(is_scratch_file("reduce5.cu"));
}

TEST_F(Watcher, SeesFilesInFoldersMadeLater) {
  directory_watcher w({dir.str()});
  fs::create_directories(dir.path() / "newfamily");
  EXPECT_EQ(w.wait(5s, 50ms), paths({dir.path() / "newfamily"}));
  dir.write("newfamily/k.cu", "// in the new folder");
  EXPECT_EQ(w.wait(5s, 50ms), paths({dir.path() / "newfamily" / "k.cu"}));
}

TEST_F(Watcher, ReportsRemovals) {
  const std::string target = dir.write("reduce/k.cu", "// here");
  directory_watcher w({dir.str()});
  fs::remove(target);
  EXPECT_EQ(w.wait(5s, 50ms), std::vector<std::string>{target});
}

// Issue: --watch went deaf when the kernels folder was replaced: its watches followed the old
// folder. Editors and `git checkout` replace folders in both ways below.
TEST_F(Watcher, ARootMovedAwayAndCopiedBackIsWatchedAgain) {
  const fs::path root = dir.path() / "kernels";
  fs::create_directories(root / "reduce");
  const std::string file = dir.write("kernels/reduce/k.cu", "// one");
  directory_watcher w({root.string()});
  fs::rename(root, dir.path() / "kernels.old");
  fs::copy(dir.path() / "kernels.old", root, fs::copy_options::recursive);
  const auto replaced = w.wait(5s, 100ms);
  EXPECT_NE(std::find(replaced.begin(), replaced.end(), file), replaced.end());
  const auto notices = w.take_notices();
  ASSERT_FALSE(notices.empty());
  EXPECT_EQ(notices.back(), "kernels folder " + root.string() + " was replaced; watching it again");

  // A save in the new folder is seen; one in the old folder, under its new name, is not news.
  dir.write("kernels.old/reduce/k.cu", "// old copy edited");
  EXPECT_TRUE(w.wait(300ms, 50ms).empty());
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    dir.write("kernels/reduce/k.cu", "// two");
  });
  const auto saved = w.wait(5s, 50ms);
  writer.join();
  EXPECT_EQ(saved, std::vector<std::string>{file});
}

TEST_F(Watcher, ARootDeletedAndRecreatedIsWatchedAgain) {
  const fs::path root = dir.path() / "kernels";
  fs::create_directories(root / "reduce");
  const std::string file = dir.write("kernels/reduce/k.cu", "// one");
  directory_watcher w({root.string() + "/"});  // as a user may type it
  fs::remove_all(root);
  (void)w.wait(2s, 100ms);  // the removals
  EXPECT_NE(w.take_notices().at(0).find("was moved away or deleted"), std::string::npos);
  fs::create_directories(root / "reduce");
  dir.write("kernels/reduce/k.cu", "// back");
  (void)w.wait(5s, 100ms);
  EXPECT_FALSE(w.take_notices().empty());
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    dir.write("kernels/reduce/k.cu", "// saved after");
  });
  const auto saved = w.wait(5s, 50ms);
  writer.join();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(fs::path(saved[0]).lexically_normal(), fs::path(file).lexically_normal());
}

TEST(WatcherErrors, AMissingFolderIsAnError) {
  EXPECT_THROW(directory_watcher({"/no/such/folder/anywhere"}), watch_error);
}

// ---------------------------------------------------------------------------------------------
// A watch session's rounds, in-process (no GPU: each round compiles)

class Session : public ::testing::Test {
 protected:
  Session() {
    test::register_shipped_families(fams);
    fs::copy(test::kernels_dir() + "/include", dir.path() / "include", fs::copy_options::recursive);
    fs::create_directories(dir.path() / "reduce");
    for (const char* v : {"reduce0", "reduce2"})
      fs::copy(test::kernels_dir() + "/reduce/" + v + ".cu",
               dir.path() / "reduce" / (std::string(v) + ".cu"));
  }
  watch_workspace load() const {
    watch_workspace ws;
    ws.reg = std::make_unique<registry>(fams);
    ws.reg->add_source_dir(dir.str());
    try {
      ws.request.variants = ws.reg->select({"all"});
    } catch (const selection_error& e) {
      throw usage_error(e.what());
    }
    ws.request.blocks = {128, 256};
    ws.request.dtypes = {"int32"};
    ws.request.ops = {"sum"};
    ws.request.axes = {axis_choice::sizes({1})};
    ws.request.include_dirs = {dir.str() + "/include", test::cuda_include()};
    ws.request.toolkit_include_dirs = {test::cuda_include()};
    ws.request.compile_only = true;
    ws.request.cache = std::make_shared<const nvrtc::compile_cache>(cache.path());
    return ws;
  }
  // One round; returns how many variants it re-ran, and its output in `out`.
  std::size_t round(watch_session& s, const std::string& saved) {
    std::ostringstream o, e;
    const std::size_t n = s.round({saved}, o, e);
    out = o.str() + e.str();
    return n;
  }
  void edit(const std::string& relative, const std::string& from, const std::string& to) {
    ASSERT_TRUE(test::replace_in_file(dir.str() + "/" + relative, from, to)) << from;
  }

  family_registry fams;
  test::temp_dir dir{"session"};
  test::temp_dir cache{"session_cache"};
  std::string out;
};

TEST_F(Session, RerunsOnlyWhatASaveChanged) {
  const watch_workspace first = load();
  const sweep_result sweep = runner(fams, first.request).run();
  watch_session s(
      fams, [this] { return load(); }, first, sweep);

  // Saved without a change: nothing to do.
  EXPECT_EQ(round(s, "reduce/reduce2.cu"), 0u);
  EXPECT_NE(out.find("no selected variant changed"), std::string::npos) << out;

  // One line of one file: that file only, compiled again (a miss).
  edit("reduce/reduce2.cu", "__syncthreads();", "__syncthreads();  // edited");
  EXPECT_EQ(round(s, "reduce/reduce2.cu"), 1u);
  EXPECT_NE(out.find("reduce.reduce2"), std::string::npos) << out;
  EXPECT_EQ(out.find("reduce.reduce0"), std::string::npos) << out;
  EXPECT_NE(out.find("miss"), std::string::npos) << out;

  // The shared header: every file that includes it.
  edit("include/kernlab/reduce.cuh", "#pragma once", "#pragma once\n// edited");
  EXPECT_EQ(round(s, "include/kernlab/reduce.cuh"), 2u);

  // A compile error shows the compiler's message and the status change; the next fix recovers.
  edit("reduce/reduce2.cu", "__syncthreads();  // edited", "__syncthreads() oops;");
  EXPECT_EQ(round(s, "reduce/reduce2.cu"), 1u);
  EXPECT_NE(out.find("ok -> FAILED"), std::string::npos) << out;
  EXPECT_NE(out.find("reduce2.cu:"), std::string::npos) << out;
  EXPECT_NE(out.find("error"), std::string::npos) << out;
  edit("reduce/reduce2.cu", "__syncthreads() oops;", "__syncthreads();  // edited");
  EXPECT_EQ(round(s, "reduce/reduce2.cu"), 1u);
  EXPECT_NE(out.find("FAILED -> ok"), std::string::npos) << out;
  EXPECT_NE(out.find(" hit"), std::string::npos) << out;  // that text compiled before: a hit

  // A new file is new; a removed one is said to be gone.
  fs::copy(dir.path() / "reduce" / "reduce0.cu", dir.path() / "reduce" / "mine.cu");
  edit("reduce/mine.cu", "reduce0<BLOCK, T, OP>", "mine<BLOCK, T, OP>");
  edit("reduce/mine.cu", "void reduce0(", "void mine(");
  EXPECT_EQ(round(s, "reduce/mine.cu"), 1u);
  EXPECT_NE(out.find("reduce.mine"), std::string::npos) << out;
  EXPECT_NE(out.find("(new)"), std::string::npos) << out;
  fs::remove(dir.path() / "reduce" / "mine.cu");
  EXPECT_EQ(round(s, "reduce/mine.cu"), 0u);
  EXPECT_NE(out.find("reduce.mine: removed"), std::string::npos) << out;
}

// A saved family.toml re-runs its family's variants, and only theirs: each round reads the
// families anew, as kernlab's own loader does.
TEST(DataFamilySession, ASavedDescriptionRerunsItsFamily) {
  test::temp_dir dir("data_session");
  test::write_axpy_family(dir);
  test::temp_dir cache("data_session_cache");
  const auto load = [&] {
    auto fams = std::make_shared<family_registry>();
    test::register_shipped_families(*fams);
    add_data_families(*fams, {dir.str()}, {test::cuda_include()});
    watch_workspace ws;
    ws.families = fams;
    ws.reg = std::make_unique<registry>(*fams);
    ws.reg->add_source_dir(dir.str());
    ws.request.variants = ws.reg->select({"all"}, "axpy");
    ws.request.blocks = {256};
    ws.request.dtypes = {"float32"};
    ws.request.include_dirs = {test::cuda_include()};
    ws.request.toolkit_include_dirs = {test::cuda_include()};
    ws.request.compile_only = true;
    ws.request.cache = std::make_shared<const nvrtc::compile_cache>(cache.path());
    return ws;
  };
  const watch_workspace first = load();
  const sweep_result sweep = runner(*first.families, first.request).run();
  ASSERT_EQ(sweep.compiles.size(), 2u);
  family_registry unused;
  watch_session s(unused, load, first, sweep);
  std::ostringstream o, e;
  EXPECT_EQ(s.round({dir.str() + "/axpy/family.toml"}, o, e), 0u) << o.str() << e.str();
  ASSERT_TRUE(test::replace_in_file(dir.str() + "/axpy/family.toml", "bytes = \"3 * N * TSIZE\"",
                                    "bytes = \"4 * N * TSIZE\""));
  EXPECT_EQ(s.round({dir.str() + "/axpy/family.toml"}, o, e), 2u) << o.str() << e.str();
  EXPECT_EQ(s.round({dir.str() + "/axpy/family.toml"}, o, e), 0u) << o.str() << e.str();
  // The reference is part of the description.
  ASSERT_TRUE(test::replace_in_file(dir.str() + "/axpy/reference.cu", "y[i] =", "y[i] = 0 +"));
  EXPECT_EQ(s.round({dir.str() + "/axpy/reference.cu"}, o, e), 2u) << o.str() << e.str();
}

// ---------------------------------------------------------------------------------------------
// The binary, as a user runs it

// Starts kernlab with `args`, its stdout and stderr going to `log`; stops it when destroyed.
class child_process {
 public:
  child_process(const std::vector<std::string>& args, const std::string& log) {
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  ~child_process() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool running() const { return pid_ > 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

 private:
  pid_t pid_ = -1;
};

// Waits until `log` holds `needle` at least `times` times.
bool wait_for(const std::string& log, const std::string& needle, std::size_t times = 1,
              std::chrono::seconds limit = 60s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (test::count_of(test::read_file(log), needle) >= times) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

TEST(WatchBinary, RecompilesAFileWhenItIsWrittenAndKeepsWatchingAfterAnError) {
  test::temp_dir dir("watch_binary");
  fs::create_directories(dir.path() / "kernels");
  fs::copy(test::kernels_dir() + "/include", dir.path() / "kernels" / "include",
           fs::copy_options::recursive);
  const std::string file = dir.write("kernels/reduce/reduce2.cu",
                                     test::read_file(test::kernels_dir() + "/reduce/reduce2.cu"));
  const std::string log = dir.str() + "/log.txt";
  child_process kernlab({KERNLAB_BINARY, "--config", "/dev/null", "--watch", "--compile-only",
                         "--no-plugins", "--kernels-dir", dir.str() + "/kernels", "--cache-dir",
                         dir.str() + "/cache", "--block", "128,256", "--dtype", "int32"},
                        log);
  ASSERT_TRUE(wait_for(log, "for saved files")) << test::read_file(log);
  EXPECT_NE(test::read_file(log).find("reduce.reduce2"), std::string::npos);

  // An edit saved in place: one round, one miss for that file.
  std::string text = test::read_file(file);
  text.replace(text.find("__syncthreads();"), 16, "__syncthreads();  // edited");
  std::ofstream(file, std::ios::binary) << text;
  ASSERT_TRUE(wait_for(log, "for saved files", 2)) << test::read_file(log);
  std::string output = test::read_file(log);
  EXPECT_NE(output.find("saved: " + file), std::string::npos) << output;
  EXPECT_NE(output.find("compile: 1 file on 1 thread, 0 hits, 1 miss"), std::string::npos)
      << output;

  // A compile error: its message, and the watch goes on.
  text.replace(text.find("__syncthreads();  // edited"), 27, "__syncthreads() oops;");
  std::ofstream(file, std::ios::binary) << text;
  ASSERT_TRUE(wait_for(log, "for saved files", 3)) << test::read_file(log);
  output = test::read_file(log);
  EXPECT_NE(output.find(file + ":"), std::string::npos) << output;
  EXPECT_NE(output.find("ok -> FAILED"), std::string::npos) << output;
  EXPECT_TRUE(kernlab.running());
}

TEST(WatchBinary, AReplacedKernelsFolderIsWatchedAgain) {
  test::temp_dir dir("watch_replaced");
  const fs::path kernels = dir.path() / "kernels";
  fs::create_directories(kernels);
  fs::copy(test::kernels_dir() + "/include", kernels / "include", fs::copy_options::recursive);
  const std::string file = dir.write("kernels/reduce/reduce2.cu",
                                     test::read_file(test::kernels_dir() + "/reduce/reduce2.cu"));
  const std::string log = dir.str() + "/log.txt";
  child_process kernlab({KERNLAB_BINARY, "--config", "/dev/null", "--watch", "--compile-only",
                         "--no-plugins", "--kernels-dir", kernels.string(), "--cache-dir",
                         dir.str() + "/cache", "--block", "128", "--dtype", "int32"},
                        log);
  ASSERT_TRUE(wait_for(log, "for saved files")) << test::read_file(log);

  // What `git checkout` of another branch and back can do: the folder goes, a copy comes. The
  // copy's files are saves of their own: their round ends before the edit below, which would
  // otherwise join it (and be one name among many in its list).
  fs::rename(kernels, dir.path() / "kernels.away");
  fs::copy(dir.path() / "kernels.away", kernels, fs::copy_options::recursive);
  ASSERT_TRUE(wait_for(log, "was replaced; watching it again")) << test::read_file(log);
  EXPECT_NE(test::read_file(log).find("kernels folder " + kernels.string() + " was replaced"),
            std::string::npos);
  ASSERT_TRUE(wait_for(log, "for saved files", 2)) << test::read_file(log);
  const std::size_t rounds = test::count_of(test::read_file(log), "for saved files");

  // A later save still makes a round, with the file recompiled.
  std::string text = test::read_file(file);
  text.replace(text.find("__syncthreads();"), 16, "__syncthreads();  // edited after");
  std::ofstream(file, std::ios::binary) << text;
  ASSERT_TRUE(wait_for(log, "for saved files", rounds + 1)) << test::read_file(log);
  EXPECT_NE(test::read_file(log).find("saved: " + file), std::string::npos) << test::read_file(log);
  EXPECT_TRUE(kernlab.running());
}

}  // namespace
}  // namespace kl
