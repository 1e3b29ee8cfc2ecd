// Files kernlab reads that it did not write in this run, and the files it creates (issue 32,
// part B): whatever is at a path (a FIFO, a device, a link, a sparse 1 TiB file), a read never
// blocks and never runs out of memory, and a file kernlab creates is never someone else's.
#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "kernlab/plugin_api.h"
#include "nvrtc/compile_cache.hpp"
#include "nvrtc/hash.hpp"
#include "plugin_host/plugin_loader.hpp"
#include "process/worker_process.hpp"
#include "runner/journal.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"
#include "tune/store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace kl {
namespace {

// ---------------------------------------------------------------------------------------------
// The bounded reader

TEST(BoundedRead, ARegularFileIsReadWhole) {
  test::temp_dir dir("bounded_read");
  const std::string path = dir.write("a.txt", "hello");
  const file_read r = read_regular_file(path, 5);
  ASSERT_TRUE(r.ok()) << r.why;
  EXPECT_EQ(r.bytes, "hello");
  EXPECT_EQ(read_regular_file(dir.write("empty", ""), 5).bytes, "");
}

TEST(BoundedRead, WhatIsNotARegularFileIsRefusedWithoutBlocking) {
  test::temp_dir dir("bounded_read_kinds");
  const std::string fifo = dir.str() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // no writer: a blocking open would wait for ever
  const file_read f = read_regular_file(fifo, 1 << 20);
  EXPECT_EQ(f.status, read_status::not_regular);
  EXPECT_EQ(f.why, "a FIFO, not a regular file");
  EXPECT_EQ(read_regular_file(dir.str(), 1 << 20).why, "a folder, not a regular file");
  EXPECT_EQ(read_regular_file("/dev/zero", 1 << 20).why, "a character device, not a regular file");
  EXPECT_EQ(read_regular_file(dir.str() + "/none", 1).status, read_status::absent);
  EXPECT_EQ(read_regular_file(dir.str() + "/none/x", 1).status, read_status::absent);
}

TEST(BoundedRead, ALinkIsFollowedOnlyWhenAllowed) {
  test::temp_dir dir("bounded_read_links");
  dir.write("target", "text");
  fs::create_symlink(dir.path() / "target", dir.path() / "link");
  fs::create_symlink("/dev/zero", dir.path() / "zero");
  const std::string link = dir.str() + "/link";
  EXPECT_EQ(read_regular_file(link, 100).bytes, "text");
  const file_read refused = read_regular_file(link, 100, symlinks::refuse);
  EXPECT_EQ(refused.status, read_status::not_regular);
  EXPECT_EQ(refused.why, "a symbolic link, not a regular file");
  // A link to /dev/zero is a device either way, never read until memory runs out.
  EXPECT_EQ(read_regular_file(dir.str() + "/zero", 100).status, read_status::not_regular);
}

TEST(BoundedRead, AFileOverTheBoundIsRefusedUnread) {
  test::temp_dir dir("bounded_read_size");
  const std::string sparse = dir.str() + "/sparse";
  std::ofstream(sparse).close();
  ASSERT_EQ(::truncate(sparse.c_str(), off_t{1} << 40), 0);  // 1 TiB, no block allocated
  const file_read r = read_regular_file(sparse, 16 << 20);
  EXPECT_EQ(r.status, read_status::too_large);
  EXPECT_EQ(r.why, "1099511627776 bytes, over the 16 MiB limit");
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_EQ(read_regular_file(dir.write("six", "123456"), 5).status, read_status::too_large);
  // /proc's files say 0 bytes and grow as they are read: the bound holds while reading too.
  const file_read proc = read_regular_file("/proc/self/maps", 16);
  EXPECT_EQ(proc.status, read_status::too_large);
  EXPECT_EQ(proc.why, "over the 16 bytes limit (it grew while read)");
}

TEST(BoundedRead, TheThrowingFormNamesTheFile) {
  test::temp_dir dir("bounded_read_throw");
  try {
    read_regular_file_or_throw(dir.str(), 10);
    FAIL() << "no error";
  } catch (const io_error& e) {
    EXPECT_EQ(std::string(e.what()), dir.str() + ": a folder, not a regular file");
  }
  EXPECT_EQ(byte_count_text(1u << 20), "1 MiB");
  EXPECT_EQ(byte_count_text(std::uint64_t{3} << 30), "3 GiB");
  EXPECT_EQ(byte_count_text(1000), "1000 bytes");
}

// ---------------------------------------------------------------------------------------------
// Files kernlab creates

TEST(CreatedFiles, ATemporaryFileIsNewUnguessableAndBesideItsTarget) {
  test::temp_dir dir("created_beside");
  const std::string target = dir.str() + "/out.json";
  created_file a = create_file_beside(target, ".out.json.kernlab-");
  created_file b = create_file_beside(target, ".out.json.kernlab-");
  EXPECT_NE(a.path, b.path);
  EXPECT_EQ(fs::path(a.path).parent_path(), dir.path());
  EXPECT_EQ(fs::path(a.path).filename().string().rfind(".out.json.kernlab-", 0), 0u);
  EXPECT_EQ(fs::path(a.path).filename().string().size(),
            std::string(".out.json.kernlab-").size() + 12);
  // replace_file replaces a link at the name, never the file it points at.
  const std::string victim = dir.write("victim", "precious\n");
  fs::create_symlink(victim, target);
  replace_file(target, "new\n");
  EXPECT_FALSE(fs::is_symlink(target));
  EXPECT_EQ(test::read_file(target), "new\n");
  EXPECT_EQ(test::read_file(victim), "precious\n");
}

// ---------------------------------------------------------------------------------------------
// The compile cache's folder

// kernlab on one small file through `cache`, ended by `timeout` if it hangs (exit 124).
test::command_result compile_through(const std::string& cache, const std::string& before = "") {
  return test::run_command(before + "timeout -s KILL 60 " + KERNLAB_BINARY +
                           " --config /dev/null --compile-only --no-plugins --kernels-dir " +
                           test::kernels_dir() + " --cache-dir " + cache +
                           " --variant reduce5 --block 128 --dtype int32");
}

// A FIFO in place of counters.json hung every cached run while it held counters.lock, and with
// it every other kernlab on that cache and `cache info`.
TEST(HostileCache, AFifoAsTheCountersHangsNothing) {
  test::temp_dir dir("hostile_counters_fifo");
  fs::create_directories(dir.path() / "cache");
  ASSERT_EQ(::mkfifo((dir.str() + "/cache/counters.json").c_str(), 0600), 0);
  const auto run = compile_through(dir.str() + "/cache");
  EXPECT_EQ(run.code, 0) << run.output;
  // The counters start again from this run, in a regular file that replaced the FIFO.
  EXPECT_TRUE(fs::is_regular_file(dir.path() / "cache" / "counters.json"));
  fs::remove(dir.path() / "cache" / "counters.json");
  ASSERT_EQ(::mkfifo((dir.str() + "/cache/counters.json").c_str(), 0600), 0);
  const auto info =
      test::run_command("timeout -s KILL 60 " + std::string(KERNLAB_BINARY) +
                        " --config /dev/null cache info --cache-dir " + dir.str() + "/cache");
  EXPECT_EQ(info.code, 0) << info.output;
}

// A link to /dev/zero in place of counters.json was read until memory ran out.
TEST(HostileCache, ALinkToDevZeroAsTheCountersIsNotRead) {
  test::temp_dir dir("hostile_counters_zero");
  fs::create_directories(dir.path() / "cache" / "entries");
  fs::create_symlink("/dev/zero", dir.path() / "cache" / "counters.json");
  // 2 GiB of address space: reading /dev/zero whole would fail in seconds, not take the machine.
  const auto info =
      test::run_command("ulimit -v 2097152; timeout -s KILL 60 " + std::string(KERNLAB_BINARY) +
                        " --config /dev/null cache info --cache-dir " + dir.str() + "/cache");
  EXPECT_EQ(info.code, 0) << info.output;
  EXPECT_NE(info.output.find("entries"), std::string::npos) << info.output;
}

nvrtc::compile_result some_result() {
  nvrtc::compile_result r;
  r.ok = true;
  r.cubin = std::string(100, 'c');
  r.lowered_names["k<128>"] = "_Z1kILi128EEvv";
  return r;
}

// A sparse 1 TiB file at an entry's name failed its row with bad_alloc on every run, and was
// never rebuilt. It is damaged: a miss, reported, and replaced by the next store.
TEST(HostileCache, ASparseHugeEntryIsADamagedMissThatAStoreReplaces) {
  test::temp_dir dir("hostile_sparse_entry");
  const nvrtc::compile_cache cache(dir.path());
  nvrtc::digest128 key;
  key.high = 7;
  key.low = 9;
  cache.store(key, some_result());
  ASSERT_EQ(::truncate(cache.entry_path(key).c_str(), off_t{1} << 40), 0);
  const nvrtc::cache_lookup l = cache.lookup(key);
  EXPECT_EQ(l.status, nvrtc::lookup_status::corrupt);
  EXPECT_EQ(l.problem,
            cache.entry_path(key).string() + ": 1099511627776 bytes, over the 256 MiB limit");
  cache.store(key, some_result());
  EXPECT_EQ(cache.lookup(key).status, nvrtc::lookup_status::hit);
  // An entry too large to be read back is not stored at all.
  nvrtc::compile_result huge = some_result();
  huge.cubin.assign(nvrtc::kMaxEntryBytes, 'c');
  key.low = 10;
  EXPECT_THROW(cache.store(key, huge), nvrtc::cache_error);
  EXPECT_FALSE(fs::exists(fs::symlink_status(cache.entry_path(key))));
}

// A link at an entry's name is no entry, whatever it points at: a miss, never followed, and the
// store replaces the link itself, leaving its target as it was.
TEST(HostileCache, ALinkAtAnEntrysNameIsAMissAndTheStoreReplacesTheLink) {
  test::temp_dir dir("hostile_entry_link");
  const nvrtc::compile_cache cache(dir.path() / "cache");
  nvrtc::digest128 key;
  key.high = 1;
  key.low = 2;
  const std::string good = nvrtc::encode_entry(key, some_result());
  const std::string target = dir.write("elsewhere.klc", good);
  fs::create_directories(cache.entry_path(key).parent_path());
  fs::create_symlink(target, cache.entry_path(key));
  EXPECT_EQ(cache.lookup(key).status, nvrtc::lookup_status::miss);
  cache.store(key, some_result());
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(cache.entry_path(key))));
  EXPECT_EQ(test::read_file(target), good);
  EXPECT_EQ(cache.lookup(key).status, nvrtc::lookup_status::hit);
}

// ---------------------------------------------------------------------------------------------
// Plugin verdicts

// A copy of a test plugin in its own folder, and where its verdict is kept in `cache`.
struct plugin_copy {
  std::string folder, path, verdict;
};
plugin_copy copy_plugin(const test::temp_dir& dir, const std::string& cache) {
  plugin_copy p;
  p.folder = dir.str() + "/plugins";
  p.path = p.folder + "/kernlab_mine.so";
  fs::create_directories(p.folder);
  fs::copy_file(std::string(KERNLAB_TEST_PLUGIN_DIR) + "/kernlab_release_marker.so", p.path);
  p.verdict = cache + "/plugins/" + nvrtc::hash128(test::read_file(p.path)).hex() + "-abi" +
              std::to_string(KERNLAB_PLUGIN_ABI_VERSION) + ".json";
  fs::create_directories(fs::path(p.verdict).parent_path());
  return p;
}

// A FIFO in place of a plugin's verdict hung --list.
TEST(HostilePlugins, AFifoAsAVerdictIsProbedAgain) {
  test::temp_dir dir("hostile_verdict_fifo");
  const plugin_copy p = copy_plugin(dir, dir.str() + "/cache");
  ASSERT_EQ(::mkfifo(p.verdict.c_str(), 0600), 0);
  const auto r =
      test::run_command("timeout -s KILL 60 " + std::string(KERNLAB_BINARY) +
                        " --config /dev/null --list --kernels-dir " + test::kernels_dir() +
                        " --cache-dir " + dir.str() + "/cache --plugin-dir " + p.folder);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("with_release"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(p.verdict)));  // rewritten
}

// The verdict's temporary file had a predictable name (the verdict's, ".tmp" and the pid) and
// was opened through a link: a link planted there had its target overwritten.
TEST(HostilePlugins, AVerdictIsNeverWrittenThroughALinkAtAGuessableName) {
  test::temp_dir dir("hostile_verdict_link");
  const plugin_copy p = copy_plugin(dir, dir.str() + "/cache");
  const std::string victim = dir.write("victim.txt", "precious\n");
  fs::create_symlink(victim, p.verdict + ".tmp" + std::to_string(::getpid()));
  probe_options o;
  o.command = {KERNLAB_BINARY, "--probe-plugin"};
  o.timeout_s = 30;
  o.cache_dir = dir.path() / "cache";
  ASSERT_TRUE(probe_plugin(p.path, o).ok);
  EXPECT_EQ(test::read_file(victim), "precious\n");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(p.verdict)));
  // A link at the verdict's own name is no verdict: the plugin is probed, and the link replaced.
  fs::remove(p.verdict);
  fs::create_symlink(victim, p.verdict);
  o.command = {"/bin/false"};  // a probe that runs says so
  EXPECT_FALSE(probe_plugin(p.path, o).ok);
  EXPECT_EQ(test::read_file(victim), "precious\n");
}

// ---------------------------------------------------------------------------------------------
// Headers

// A FIFO where a kernel includes a header cost the whole --compile-timeout, naming nothing: the
// file fails at once, naming it.
TEST(HostileFiles, AFifoAsAHeaderFailsItsFileAtOnceNamingIt) {
  test::temp_dir dir("hostile_header");
  std::string source = test::read_file(test::kernels_dir() + "/reduce/reduce5.cu");
  const std::string include = "#include <kernlab/reduce.cuh>";
  ASSERT_NE(source.find(include), std::string::npos);
  source.replace(source.find(include), include.size(), include + "\n#include \"fifo.cuh\"");
  dir.write("kernels/reduce/with_fifo.cu", source);
  const std::string fifo = dir.str() + "/kernels/reduce/fifo.cuh";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto r = test::run_kernlab(
      "--compile-only --no-plugins --kernels-dir " + dir.str() + "/kernels --kernels-dir " +
      test::kernels_dir() + " --cache-dir " + dir.str() +
      "/cache --variant with_fifo --block 128 --dtype int32 --compile-timeout 60");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 30s);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(fifo + ": a FIFO, not a regular file, so no header"), std::string::npos)
      << r.output;
}

// ---------------------------------------------------------------------------------------------
// Other files kernlab reads and appends to

// Runs `open` (which opens the FIFO at `fifo`) and returns what it threw ("" for nothing). One
// that waits for a writer or a reader fails the test after 10 s, and is let go by opening the
// FIFO's ends for a moment, as often as it takes.
std::string error_of_opening(const std::string& fifo, const std::function<void()>& open) {
  auto done = std::async(std::launch::async, [&]() -> std::string {
    try {
      open();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  });
  if (done.wait_for(10s) == std::future_status::timeout) {
    ADD_FAILURE() << "opening " << fifo << " waited for the FIFO's other end";
    while (done.wait_for(100ms) == std::future_status::timeout) {
      const unique_fd read_end(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK));
      const unique_fd write_end(::open(fifo.c_str(), O_WRONLY | O_NONBLOCK));
      std::this_thread::sleep_for(50ms);
    }
  }
  return done.get();
}

// A FIFO as the journal hung the sweep before its first row (opening it to append), and
// --resume (reading it).
TEST(HostileFiles, AFifoAsTheJournalIsAnErrorNamingIt) {
  test::temp_dir dir("hostile_journal");
  const std::string fifo = dir.str() + "/journal.log";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of_opening(fifo, [&] { journal j(fifo, true); }),
            "journal " + fifo + ": a FIFO that no process reads; not written");
  EXPECT_EQ(error_of_opening(fifo, [&] { journal::read(fifo); }),
            "journal " + fifo + ": a FIFO, not a regular file; cannot be resumed");
}

TEST(HostileFiles, AFifoAsTheTuningStoreIsAnErrorNamingIt) {
  test::temp_dir dir("hostile_store");
  const std::string fifo = dir.str() + "/tuning.jsonl";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of_opening(fifo, [&] { tune::tuning_store store(fifo); }),
            "tuning store " + fifo + ": a FIFO, not a regular file");
  // A link is not followed to append to the file it names.
  const std::string victim = dir.write("victim", "precious\n");
  fs::create_symlink(victim, dir.path() / "link.jsonl");
  EXPECT_THROW(tune::tuning_store(dir.str() + "/link.jsonl"), io_error);
  EXPECT_EQ(test::read_file(victim), "precious\n");
}

// `compare` on a FIFO waited for a writer for ever.
TEST(HostileFiles, AFifoGivenAsAResultsFileIsAnErrorNamingIt) {
  test::temp_dir dir("hostile_results");
  const std::string fifo = dir.str() + "/run.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto r = test::run_command("timeout -s KILL 60 " + std::string(KERNLAB_BINARY) +
                                   " --config /dev/null compare " + fifo + " " + fifo);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(fifo + ": cannot be read (a FIFO, not a regular file)"),
            std::string::npos)
      << r.output;
}

// ---------------------------------------------------------------------------------------------
// Logs

// A log was opened with O_TRUNC through a link: the file the link named was emptied.
TEST(CreatedFiles, ALogIsNeverOpenedThroughALink) {
  test::temp_dir dir("created_log");
  const std::string victim = dir.write("victim", "precious\n");
  const std::string log = dir.str() + "/memcheck.log";
  fs::create_symlink(victim, log);
  try {
    worker::worker_process child({"/bin/true"}, log);
    FAIL() << "started with its log through a link";
  } catch (const io_error& e) {
    EXPECT_EQ(std::string(e.what()), "log " + log + ": a symbolic link; not written through");
  }
  EXPECT_EQ(test::read_file(victim), "precious\n");
  // A log of our own is emptied and written; /dev/null is written as it is.
  const std::string own = dir.write("own.log", "the run before\n");
  {
    worker::worker_process child({"/bin/sh", "-c", "echo this run"}, own);
    child.wait_for_exit();
  }
  EXPECT_EQ(test::read_file(own), "this run\n");
  worker::worker_process quiet({"/bin/true"}, "/dev/null");
  EXPECT_EQ(quiet.wait_for_exit(), "exited with code 0");
}

// Without HOME, --sanitize's logs went to fixed names in the system's temp folder
// (/tmp/kernlab-memcheck-reduce5.log), where anyone may have put a link first.
TEST(CreatedFiles, SanitizerLogsWithoutAJournalGoToAPrivateFolder) {
  std::string folder;
  const std::string a = sanitizer_log_path("", folder, "memcheck", "reduce5");
  ASSERT_FALSE(folder.empty());
  EXPECT_EQ(a, folder + "/memcheck-reduce5.log");
  EXPECT_EQ(sanitizer_log_path("", folder, "racecheck", "reduce5"),
            folder + "/racecheck-reduce5.log");
  struct stat st {};
  ASSERT_EQ(::lstat(folder.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string other;
  sanitizer_log_path("", other, "memcheck", "reduce5");
  EXPECT_NE(other, folder);  // each run its own
  fs::remove_all(folder);
  fs::remove_all(other);
  std::string unused;
  EXPECT_EQ(sanitizer_log_path("/j/journal.log", unused, "memcheck", "reduce5"),
            "/j/journal.log.memcheck.reduce5.log");
  EXPECT_TRUE(unused.empty());
}

// ---------------------------------------------------------------------------------------------
// Ctrl-C and SIGTERM while compiling, and children that outlive kernlab

// kernlab started in the background with `args`, its output in `log`; killed (SIGKILL) and
// reaped if it still runs when the object goes, so no test leaves one behind.
class background_kernlab {
 public:
  background_kernlab(const std::vector<std::string>& args, const std::string& log) : log_(log) {
    std::vector<std::string> argv = {KERNLAB_BINARY, "--config", "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      std::vector<char*> raw;
      for (auto& a : argv) raw.push_back(a.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
  }
  ~background_kernlab() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  std::string output() const { return test::read_file(log_); }
  /// Its exit code (128 + the signal that ended it), or -1 while it still runs after `limit`.
  int wait_for_exit(std::chrono::seconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// The processes whose parent is `parent` and whose command line holds `mode`.
std::vector<pid_t> children_of(pid_t parent, const std::string& mode) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = test::read_file(e.path().string() + "/stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    // After "(comm)": the state, then the parent's pid.
    if (std::stol(stat.substr(close + 4)) != parent) continue;
    std::string cmdline = test::read_file(e.path().string() + "/cmdline");
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    if (cmdline.find(mode) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// Waits up to `limit` for a child of `parent` running `mode` to appear.
std::vector<pid_t> wait_for_children(pid_t parent, const std::string& mode,
                                     std::chrono::seconds limit = 60s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  std::vector<pid_t> found;
  while ((found = children_of(parent, mode)).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);
  return found;
}

// Whether process `pid` has ended (gone, or a zombie no one has reaped yet).
bool ended(pid_t pid) {
  const std::string stat = test::read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto close = stat.rfind(')');
  return close == std::string::npos || stat.substr(close + 2, 1) == "Z";
}

// Waits up to `limit` for every one of `pids` to end; those still running are killed (they
// would outlive the test) and the answer is false.
bool all_end(const std::vector<pid_t>& pids, std::chrono::seconds limit = 10s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  auto running = [&] {
    for (pid_t p : pids)
      if (!ended(p)) return true;
    return false;
  };
  while (running() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(20ms);
  if (!running()) return true;
  for (pid_t p : pids) ::kill(p, SIGKILL);
  return false;
}

// A kernels folder with a file whose compile takes minutes.
std::string slow_kernels(const test::temp_dir& dir) {
  dir.write("kernels/reduce/slow.cu", test::slow_compiling_kernel("slow"));
  return dir.str() + "/kernels";
}

std::vector<std::string> slow_compile_args(const std::string& kernels) {
  return {"--no-plugins",      "--no-cache",
          "--kernels-dir",     kernels,
          "--kernels-dir",     test::kernels_dir(),
          "--variant",         "slow",
          "--block",           "128",
          "--dtype",           "int32",
          "--compile-timeout", "300"};
}

// The first SIGTERM during --compile-only was ignored until every file had compiled (minutes
// here), and then kernlab exited 0.
TEST(HostileSignals, SigtermStopsCompileOnlyAtOnceKillingItsCompiles) {
  test::temp_dir dir("hostile_sigterm");
  std::vector<std::string> args = slow_compile_args(slow_kernels(dir));
  args.insert(args.begin(), "--compile-only");
  background_kernlab k(args, dir.str() + "/out.log");
  const std::vector<pid_t> compiles = wait_for_children(k.pid(), "--compile-child");
  ASSERT_FALSE(compiles.empty()) << k.output();
  ASSERT_EQ(::kill(k.pid(), SIGTERM), 0);
  EXPECT_EQ(k.wait_for_exit(20s), 128 + SIGTERM) << k.output();
  EXPECT_NE(k.output().find("interrupted (SIGTERM) while compiling; nothing written"),
            std::string::npos)
      << k.output();
  EXPECT_TRUE(all_end(compiles)) << "the compile child outlived kernlab";
}

TEST(HostileSignals, CtrlCStopsResourcesTheSameWay) {
  test::temp_dir dir("hostile_sigint");
  std::vector<std::string> args = slow_compile_args(slow_kernels(dir));
  args.insert(args.begin(), "--resources");
  background_kernlab k(args, dir.str() + "/out.log");
  const std::vector<pid_t> compiles = wait_for_children(k.pid(), "--compile-child");
  ASSERT_FALSE(compiles.empty()) << k.output();
  ASSERT_EQ(::kill(k.pid(), SIGINT), 0);
  EXPECT_EQ(k.wait_for_exit(20s), 128 + SIGINT) << k.output();
  EXPECT_NE(k.output().find("interrupted (Ctrl-C) while compiling"), std::string::npos)
      << k.output();
  EXPECT_TRUE(all_end(compiles)) << "the compile child outlived kernlab";
}

// A compile child went on for minutes after kernlab was killed.
TEST(HostileSignals, ACompileChildDiesWithAKilledKernlab) {
  test::temp_dir dir("hostile_kill_compile");
  std::vector<std::string> args = slow_compile_args(slow_kernels(dir));
  args.insert(args.begin(), "--compile-only");
  background_kernlab k(args, dir.str() + "/out.log");
  const std::vector<pid_t> compiles = wait_for_children(k.pid(), "--compile-child");
  ASSERT_FALSE(compiles.empty()) << k.output();
  ASSERT_EQ(::kill(k.pid(), SIGKILL), 0);
  EXPECT_EQ(k.wait_for_exit(10s), 128 + SIGKILL);
  EXPECT_TRUE(all_end(compiles)) << "the compile child outlived kernlab";
}

// A probe child whose plugin never returns from its constructor stayed after kernlab was killed.
TEST(HostileSignals, AProbeChildDiesWithAKilledKernlab) {
  test::temp_dir dir("hostile_kill_probe");
  fs::create_directories(dir.path() / "plugins");
  fs::copy_file(std::string(KERNLAB_HOSTILE_PLUGIN_DIR) + "/kernlab_hostile_hang.so",
                dir.path() / "plugins" / "kernlab_hostile_hang.so");
  background_kernlab k(
      {"--list", "--kernels-dir", test::kernels_dir(), "--cache-dir", dir.str() + "/cache",
       "--plugin-dir", dir.str() + "/plugins", "--kernel-timeout", "120"},
      dir.str() + "/out.log");
  const std::vector<pid_t> probes = wait_for_children(k.pid(), "kernlab_hostile_hang.so");
  ASSERT_FALSE(probes.empty()) << k.output();
  ASSERT_EQ(::kill(k.pid(), SIGKILL), 0);
  EXPECT_EQ(k.wait_for_exit(10s), 128 + SIGKILL);
  EXPECT_TRUE(all_end(probes)) << "the probe outlived kernlab";
}

}  // namespace
}  // namespace kl
