// The worker protocol and process handling, with a fake worker that exits, crashes, hangs or
// writes garbage on purpose; and the journal that --resume reads. No GPU needed.
#include "core/errors.hpp"
#include "cuda/driver.hpp"
#include "exec/row.hpp"
#include "process/protocol.hpp"
#include "process/worker_process.hpp"
#include "registry/registry.hpp"
#include "runner/journal.hpp"
#include "runner/runner.hpp"
#include "test_util.hpp"
#include "worker/executor.hpp"
#include "worker/spread_executor.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace kl {
namespace {

using namespace worker;

message job(const std::string& action) {
  return {message_type::job, {{"action", action}, {"id", 42}}};
}

struct fake : ::testing::Test {
  worker_process w{{FAKE_WORKER}};
  void SetUp() override {
    const auto ready = w.receive(5000);
    ASSERT_TRUE(ready.has_value());
    ASSERT_EQ(ready->type, message_type::ready);
  }
};

TEST_F(fake, RoundTrip) {
  w.send(job("echo"));
  const auto r = w.receive(5000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, message_type::result);
  EXPECT_EQ(r->payload["id"], 42);
}

TEST_F(fake, BinaryPayloadsTravelIntact) {
  std::vector<std::uint8_t> image(3 << 20);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i * 7);
  message m = job("echo");
  m.payload["cubin"] = nlohmann::json::binary(image);
  w.send(m);
  const auto r = w.receive(5000);
  ASSERT_TRUE(r.has_value());
  const std::vector<std::uint8_t>& back = r->payload["cubin"].get_binary();
  EXPECT_TRUE(back == image);
}

TEST_F(fake, HeartbeatsThenResult) {
  w.send(job("heartbeats"));
  int beats = 0;
  for (;;) {
    const auto r = w.receive(5000);
    ASSERT_TRUE(r.has_value());
    if (r->type == message_type::heartbeat) {
      ++beats;
      continue;
    }
    EXPECT_EQ(r->type, message_type::result);
    break;
  }
  EXPECT_EQ(beats, 3);
}

TEST_F(fake, StdoutNeverReachesTheProtocol) {
  w.send(job("print"));
  const auto r = w.receive(5000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->type, message_type::result);
}

TEST_F(fake, ExitIsSeenAndDescribed) {
  w.send(job("exit"));
  EXPECT_THROW(w.receive(5000), protocol_error);
  EXPECT_EQ(w.wait_for_exit(), "exited with code 7");
}

TEST_F(fake, CrashIsSeenAndDescribed) {
  w.send(job("segv"));
  EXPECT_THROW(w.receive(5000), protocol_error);
  EXPECT_EQ(w.wait_for_exit(), "killed by signal 11 (Segmentation fault)");
}

TEST_F(fake, HangTimesOutAndIsKilled) {
  w.send(job("hang"));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(w.receive(300).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(250));
  EXPECT_EQ(w.stop(), "killed by signal 9 (Killed)");
}

TEST_F(fake, GarbageIsAProtocolError) {
  w.send(job("garbage"));
  EXPECT_THROW(w.receive(5000), protocol_error);
}

// A row's job travels to the worker as MessagePack: a point's descriptor (which file, which
// point, named or not) arrives whole, as the worker's record of it will say.
TEST(Worker, APointsDescriptorCrossesTheProtocolWhole) {
  row_job job;
  job.variant.family = "reduce";
  job.variant.name = "reduce_unrolling4";
  job.variant.origin_path = "kernels_src/reduce/reduce_unrolling.cu";
  job.variant.entry = "reduce_unrolling<BLOCK, UNROLL, T, OP>";
  job.variant.blocks = {128, 256};
  job.variant.tile = "UNROLL * BLOCK";
  job.variant.params = {{"UNROLL", "4"}};
  job.variant.tunable_file = "reduce_unrolling";
  job.variant.point = {{"UNROLL", 4}};
  job.variant.named_point = true;
  // A worker launches the kernel with its tensor maps: without them its parameters fall short.
  job.variant.tensor_maps = {{"in", {"N / 64", "64"}, {"1", "BLOCK / 4"}, 64}};
  job.variant.scratch = {{"T", "staged", "N + 8"}, {"int32", "arrivals", "1"}};
  job.config = {"float32", "sum", "exact", 7, {{"N", std::uint64_t{1u << 20}}}};
  job.block = 256;
  job.cubin = std::string("\0\1cubin", 7);
  job.lowered_name = "_Z16reduce_unrollingILj256ELj4EfN2kl3sumIfEEEvPKT1_PS3_j";
  const row_job back =
      job_from_json(nlohmann::json::from_msgpack(nlohmann::json::to_msgpack(to_json(job))));
  EXPECT_EQ(back.variant, job.variant);
  EXPECT_EQ(back.cubin, job.cubin);
  EXPECT_EQ(back.block, 256u);
}

// A problem new to a spread is made in every worker at once, before its row's first placement:
// four workers that take 300 ms each to make it are done in about 0.3 s, not 1.2 s one after
// another as the placements reach them. A row of the same problem makes nothing; one of another
// seed makes it anew. A plugin's first row on a problem has every worker run it once (opening
// the library) the same way.
TEST(Worker, ASpreadsWorkersMakeANewProblemSideBySide) {
  test::temp_dir dir("prepare");
  std::vector<std::unique_ptr<row_executor>> members;
  for (int i = 0; i < 4; ++i) {
    worker_options o;
    o.command = {FAKE_WORKER, "--rows", "0", "300"};
    o.log_path = dir.str() + "/worker" + std::to_string(i) + ".log";
    members.push_back(make_isolated_executor(o));
  }
  auto spread = make_spread_executor(std::move(members), nullptr);
  row_job job;
  job.variant.family = "reduce";
  job.variant.name = "reduce5";
  job.config = {"int32", "sum", "exact", 1, {{"N", std::uint64_t{1000}}}};
  job.block = 256;
  job.timing.placements = job.timing.max_placements = 4;
  const auto seconds = [&](const row_job& j) {
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(spread->run(j).status, outcome::passed);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double first = seconds(job);
  EXPECT_GE(first, 0.28) << "the row waits for its problem";
  EXPECT_LT(first, 0.9) << "one worker after another";
  EXPECT_LT(seconds(job), 0.25) << "made already";
  job.config.seed = 2;
  EXPECT_GE(seconds(job), 0.28) << "another problem";
  row_job library = job;  // a plugin's first row on the problem: every worker opens it at once
  library.variant.name = "cublas";
  library.variant.origin = origin_kind::plugin;
  library.variant.origin_path = "/plugins/libkl_cublas.so";
  EXPECT_GE(seconds(library), 0.28) << "a library's first row";
  EXPECT_LT(seconds(library), 0.25) << "opened already";
  spread.reset();
  for (int i = 0; i < 4; ++i) {
    const std::string log = test::read_file(dir.str() + "/worker" + std::to_string(i) + ".log");
    EXPECT_NE(log.find("prepare reduce5 seed 1\n"), std::string::npos) << log;
    EXPECT_EQ(log.find("prepare reduce5 seed 1\n"), log.rfind("prepare reduce5 seed 1\n")) << log;
    EXPECT_NE(log.find("prepare reduce5 seed 2\n"), std::string::npos) << log;
    EXPECT_NE(log.find("prepare cublas seed 2\n"), std::string::npos) << log;
    EXPECT_EQ(log.find("prepare cublas seed 2\n"), log.rfind("prepare cublas seed 2\n")) << log;
  }
}

// A GPU's placement workers exit side by side: the spread asks each to exit before it waits for
// any, so four workers that take 400 ms each to tear down are gone in well under the 1.6 s they
// would take one after another.
TEST(Worker, ASpreadsWorkersExitSideBySide) {
  worker_options o;
  o.command = {FAKE_WORKER, "--rows", "400"};
  std::vector<std::unique_ptr<row_executor>> members;
  for (int i = 0; i < 4; ++i) members.push_back(make_isolated_executor(o));
  auto spread = make_spread_executor(std::move(members), nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  spread.reset();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(s, 0.35) << "it waits for its workers";
  EXPECT_LT(s, 1.2) << "one after another";
}

// The watchdog's verdict on a launch past --kernel-timeout (0.5 s here), with a fake worker that
// waits 1.5 s "on the GPU": a fault it reports within the grace (2 s) after the time-out is the
// row's crash, with the CUDA error (a far out-of-bounds write once read TIMEOUT on an H200, its
// fault reported after the watchdog's 3 s); an answer then is still a hang, and the worker is
// kept; a launch that reports nothing by the grace's end is a hang, and the worker is stopped.
TEST(Worker, AFaultReportedAfterTheTimeOutIsACrashNotAHang) {
  worker_options o;
  o.command = {FAKE_WORKER, "--rows"};
  o.kernel_timeout_s = 0.5;
  o.fault_grace_s = 2;
  const auto executor = make_isolated_executor(o);
  const auto run = [&](const std::string& name) {
    row_job job;
    job.variant.family = "reduce";
    job.variant.name = name;
    job.config = {"int32", "sum", "exact", 1, {{"N", std::uint64_t{1000}}}};
    job.block = 256;
    return executor->run(job);
  };
  const result_record fault = run("late_fault");
  EXPECT_EQ(fault.status, outcome::crashed) << fault.message;
  EXPECT_NE(fault.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << fault.message;
  // How late it came: the worker's 1.5 s wait, as its heartbeats (every 0.1 s) last told it.
  EXPECT_NE(fault.message.find("(reported after about 1."), std::string::npos) << fault.message;
  EXPECT_NE(fault.message.find(" s on the GPU, past the 0.5 s --kernel-timeout)"),
            std::string::npos)
      << fault.message;
  EXPECT_EQ(executor->workers_started(), 1);

  const result_record finish = run("late_finish");  // in a fresh worker: the last one exited
  EXPECT_EQ(finish.status, outcome::timeout) << finish.message;
  EXPECT_NE(finish.message.find("a launch did not finish within 0.5 s (--kernel-timeout)"),
            std::string::npos)
      << finish.message;
  EXPECT_EQ(run("quick").status, outcome::passed);  // the worker that finished late goes on
  EXPECT_EQ(executor->workers_started(), 2);

  const auto t0 = std::chrono::steady_clock::now();
  const result_record hang = run("hang");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(hang.status, outcome::timeout) << hang.message;
  EXPECT_NE(hang.message.find("did not finish within 0.5 s (--kernel-timeout) nor report a fault "
                              "in the 2 s after; the worker was stopped"),
            std::string::npos)
      << hang.message;
  EXPECT_GE(seconds, 2.4);  // the time-out and the grace
  EXPECT_LT(seconds, 6.0);
  EXPECT_EQ(run("quick").status, outcome::passed);  // in a fresh worker
  EXPECT_EQ(executor->workers_started(), 3);
}

// The grace after --kernel-timeout: as long again, within 10 s and 30 s. An H200's driver took
// more than 8 s to report a far out-of-bounds write under a 3 s time-out.
TEST(Worker, TheFaultGraceIsTheTimeOutWithinTenAndThirtySeconds) {
  EXPECT_EQ(fault_grace_for(0.5), 10.0);
  EXPECT_EQ(fault_grace_for(3), 10.0);
  EXPECT_EQ(fault_grace_for(20), 20.0);
  EXPECT_EQ(fault_grace_for(120), 30.0);
  EXPECT_EQ(worker_options{}.fault_grace_s, fault_grace_for(worker_options{}.kernel_timeout_s));
}

TEST(Worker, MissingProgramIsAClearError) {
  EXPECT_THROW(worker_process({"/no/such/kernlab-worker"}), std::runtime_error);
}

TEST(Sanitizer, VerdictsFromTheLog) {
  test::temp_dir dir("sanitizer");
  const auto clean = dir.write("m.log",
                               "stuff the kernel printed\n========= COMPUTE-SANITIZER\n"
                               "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_EQ(sanitizer_verdict("memcheck", clean), "memcheck: clean");
  const auto race_clean =
      dir.write("r.log",
                "========= COMPUTE-SANITIZER\n"
                "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n");
  EXPECT_EQ(sanitizer_verdict("racecheck", race_clean), "racecheck: clean");
  const auto bad = dir.write(
      "b.log",
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at bad_oob<256, int, kl::sum<int>>(const int *, int *, unsigned int)+0x1f0\n"
      "========= ERROR SUMMARY: 1 error\n");
  const std::string v = sanitizer_verdict("memcheck", bad);
  EXPECT_EQ(v.rfind("memcheck: 1 error (first: Invalid __global__ write of size 4 bytes)", 0), 0u)
      << v;
  EXPECT_NE(v.find(bad), std::string::npos);
  const auto hazard =
      dir.write("h.log",
                "========= Error: Race reported between Write access at x\n"
                "========= RACECHECK SUMMARY: 96 hazards displayed (96 errors, 0 warnings)\n");
  EXPECT_NE(sanitizer_verdict("racecheck", hazard).find("96 hazards"), std::string::npos);
  EXPECT_EQ(sanitizer_verdict("memcheck", dir.str() + "/none.log").rfind("memcheck: no summary", 0),
            0u);
}

// Issue: an out-of-bounds kernel's verdict read "memcheck: ERROR SUMMARY: 378 errors were not
// printed. Use --print-limit...": the print-limit note repeats the summary's prefix and came
// last. The logs below have compute-sanitizer's own summary formats.
TEST(Sanitizer, PrintLimitNoteIsNotTheCount) {
  std::istringstream log(
      "========= COMPUTE-SANITIZER\n"
      "========= Invalid __global__ write of size 4 bytes\n"
      "=========     at bad_oob<256, int, kl::sum<int>>(const int *, int *, unsigned int)+0x1f0\n"
      "=========     by thread (255,0,0) in block (390,0,0)\n"
      "=========     Address 0x7f1c4a061a00 is out of bounds\n"
      "=========\n"
      "========= ERROR SUMMARY: 478 errors\n"
      "========= ERROR SUMMARY: 378 errors were not printed. Use --print-limit option to adjust "
      "the number of printed errors\n");
  const sanitizer_summary s = parse_sanitizer_log(log);
  EXPECT_EQ(s.errors, 478);
  EXPECT_EQ(s.not_printed, 378);
  EXPECT_EQ(s.first, "Invalid __global__ write of size 4 bytes");

  test::temp_dir dir("sanitizer_limit");
  const auto path = dir.write("m.log", log.str());
  const std::string v = sanitizer_verdict("memcheck", path);
  EXPECT_EQ(v,
            "memcheck: 478 errors (378 not printed; first: Invalid __global__ write of size 4 "
            "bytes) [" +
                path + "]");
}

TEST(Sanitizer, SummaryFormats) {
  auto parse = [](const std::string& text) {
    std::istringstream in(text);
    return parse_sanitizer_log(in);
  };
  EXPECT_EQ(parse("========= ERROR SUMMARY: 1 error\n").errors, 1);
  EXPECT_EQ(parse("========= ERROR SUMMARY: 0 errors\n").errors, 0);
  EXPECT_EQ(parse("========= ERROR SUMMARY: 2 errors   \n").errors, 2);           // trailing blanks
  EXPECT_EQ(parse("========= ERROR SUMMARY: 7 errors\r\n").errors, 7);            // CRLF
  EXPECT_EQ(parse("========= ERROR SUMMARY: 3 errors (and more)\n").errors, -1);  // not the format
  // The note alone is not a total.
  const auto note =
      parse("========= ERROR SUMMARY: 159 errors were not printed. Use --print-limit\n");
  EXPECT_EQ(note.errors, -1);
  EXPECT_EQ(note.not_printed, 159);
  // A program's own output that looks like a summary does not count: no sanitizer prefix.
  EXPECT_EQ(parse("ERROR SUMMARY: 5 errors\n").errors, -1);
  // racecheck's summary, then its error summary.
  const auto race = parse(
      "========= Error: Race reported between Write access at reduce0<256>+0x2b0\n"
      "=========     and Read access at reduce0<256>+0x2f0 [4080 hazards]\n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n"
      "========= ERROR SUMMARY: 1 error\n");
  EXPECT_EQ(race.hazards, 1);
  EXPECT_EQ(race.hazard_errors, 1);
  EXPECT_EQ(race.hazard_warnings, 0);
  EXPECT_EQ(race.errors, 1);
  EXPECT_EQ(race.first, "Error: Race reported between Write access at reduce0<256>+0x2b0");
}

// Issue: error notes showed kernlab's own source ("... at /build/host/src/cuda/resources.cpp:70"),
// which means nothing to a user: a CUDA error names the call and the error; kernlab's location
// only with KERNLAB_DEBUG=1.
TEST(CudaError, NamesTheCallNotKernlabsSource) {
  ::unsetenv("KERNLAB_DEBUG");
  const cuda::cuda_error plain(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&ptr_, bytes)",
                               "/work/host/src/cuda/resources.cpp", 70);
  const std::string what = plain.what();
  EXPECT_EQ(what.rfind("cuMemAlloc failed: ", 0), 0u) << what;
  // The error's name with a driver, its number without one (this machine may have neither).
  EXPECT_TRUE(what.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos ||
              what.find("CUDA error 2") != std::string::npos)
      << what;
  EXPECT_EQ(what.find("resources.cpp"), std::string::npos) << what;
  EXPECT_EQ(what.find("&ptr_"), std::string::npos) << what;
  EXPECT_EQ(plain.code(), CUDA_ERROR_OUT_OF_MEMORY);

  ::setenv("KERNLAB_DEBUG", "1", 1);
  const std::string debug = cuda::cuda_error(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(&ptr_, bytes)",
                                             "/work/host/src/cuda/resources.cpp", 70)
                                .what();
  ::unsetenv("KERNLAB_DEBUG");
  EXPECT_NE(debug.find("cuMemAlloc(&ptr_, bytes) at /work/host/src/cuda/resources.cpp:70"),
            std::string::npos)
      << debug;
}

TEST(Journal, ResumeSeesDoneAndInFlight) {
  test::temp_dir dir("journal");
  const std::string path = dir.str() + "/sub/journal.log";
  {
    journal j(path, true);
    j.started("a");
    j.finished("a", "passed", "");
    j.started("b");
    j.finished("b", "wrong_result", "");
    j.started("c");  // the machine went down here
  }
  auto s = journal::read(path);
  EXPECT_EQ(s.done.size(), 2u);
  EXPECT_EQ(s.done["b"].outcome, "wrong_result");
  EXPECT_EQ(s.in_flight, std::set<std::string>{"c"});
  {
    journal j(path, false);  // --resume appends
    j.started("d");
    j.finished("d", "passed", "");
  }
  s = journal::read(path);
  EXPECT_EQ(s.done.size(), 3u);
  EXPECT_EQ(s.in_flight.count("c"), 1u);
  // A torn last line (a write cut short) is ignored.
  dir.write("sub/journal.log", test::read_file(path) + "sta");
  EXPECT_EQ(journal::read(path).done.size(), 3u);
  { journal fresh(path, true); }
  EXPECT_TRUE(journal::read(path).done.empty());
  EXPECT_TRUE(journal::read(dir.str() + "/absent.log").done.empty());
}

// MPI: rank 0 lost mid-run. Its journal saw rows start on other ranks; their own files
// (PATH.rank<N>) say which finished, with their records.
TEST(Journal, ResumeTakesTheRowsOtherRanksFinishedFromTheirFiles) {
  test::temp_dir dir("journal_ranks");
  const std::string path = dir.str() + "/journal.log";
  {
    journal zero(path, true);
    for (const char* k : {"a", "b", "c", "d"}) zero.started(k);
    zero.finished("a", "passed", "{\"rank\":0}");  // rank 0's own row
    journal one(journal::rank_path(path, 1), true);
    one.started("b");
    one.finished("b", "passed", "{\"rank\":1}");
    journal two(journal::rank_path(path, 2), true);
    two.started("c");                      // rank 2 was running c when the job ended
    journal other(path + ".rankx", true);  // not a rank's file
    other.started("d");
    other.finished("d", "passed", "");
  }
  EXPECT_EQ(journal::rank_path(path, 12), path + ".rank12");
  auto s = journal::read_with_ranks(path);
  EXPECT_EQ(s.done.size(), 2u);
  EXPECT_EQ(s.done["b"].record, "{\"rank\":1}");
  EXPECT_EQ(s.in_flight, (std::set<std::string>{"c", "d"}));
  // A fresh run removes the ranks' files (they are the run before's), nothing else.
  journal::remove_ranks(path);
  EXPECT_FALSE(std::filesystem::exists(journal::rank_path(path, 1)));
  EXPECT_FALSE(std::filesystem::exists(journal::rank_path(path, 2)));
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::exists(path + ".rankx"));
  EXPECT_EQ(journal::read_with_ranks(path).done.size(), 1u);
}

TEST(Journal, AFailedAppendIsOneWarningNotTheEndOfTheRun) {
  journal j("/dev/full", false);  // opens like any file; every append fails: a full disk
  EXPECT_NO_THROW(j.started("a"));
  const std::string why = j.failure();
  EXPECT_NE(why.find("journal /dev/full: No space left"), std::string::npos) << why;
  EXPECT_NE(why.find("--resume cannot resume"), std::string::npos) << why;
  EXPECT_NO_THROW(j.finished("a", "passed", ""));  // closed: nothing more happens
  EXPECT_EQ(j.failure(), why);
}

TEST(Journal, NeverFollowsALinkNorEmptiesAnotherUsersFile) {
  test::temp_dir dir("journal_safe");
  const std::string victim = dir.write("victim.txt", "someone's data\n");
  const std::string link = dir.str() + "/journal.log";
  std::filesystem::create_symlink(victim, link);
  EXPECT_THROW(journal(link, true), io_error);
  EXPECT_EQ(test::read_file(victim), "someone's data\n");
  // A file of another user (only root can make one here) is neither emptied nor written.
  const std::string other = dir.write("other.log", "start\tx\n");
  if (::getuid() != 0 || ::chown(other.c_str(), 65534, 65534) != 0)
    GTEST_SKIP() << "cannot give a file to another user here (not root)";
  EXPECT_THROW(journal(other, true), io_error);
  EXPECT_EQ(test::read_file(other), "start\tx\n");
}

TEST(Journal, NoHomeMeansNoDefaultJournalInASharedFolder) {
  const char* home = std::getenv("HOME");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved_home = home ? home : "", saved_xdg = xdg ? xdg : "";
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(default_journal_path(), "");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(default_journal_path(), "/home/someone/.cache/kernlab/journal.log");
  if (home)
    ::setenv("HOME", saved_home.c_str(), 1);
  else
    ::unsetenv("HOME");
  if (xdg) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

TEST(Journal, TheKeyChangesWithTheSourceAndTheWholeConfiguration) {
  registry_entry a;
  a.descriptor.family = "matmul";
  a.descriptor.name = "naive";
  a.source = "__global__ void naive() {}";
  registry_entry edited = a;
  edited.source += "\n// faster now";
  const auto cube = [](std::uint64_t w) {
    return problem_config{"float32", "mm", "exact", 1, {{"M", w}, {"N", w}, {"K", w}}};
  };
  const problem_config big = cube(4096), small = cube(1024);
  EXPECT_EQ(journal_key(a, 256, big), journal_key(a, 256, big));
  EXPECT_NE(journal_key(a, 256, big), journal_key(edited, 256, big));
  EXPECT_NE(journal_key(a, 256, big), journal_key(a, 256, small));
  EXPECT_NE(journal_key(a, 256, big), journal_key(a, 128, big));
  // A plugin: the bytes of its library file.
  test::temp_dir dir("journal_plugin");
  registry_entry plugin;
  plugin.descriptor.family = "reduce";
  plugin.descriptor.name = "p";
  plugin.descriptor.origin_path = dir.write("p.so", "version 1");
  const std::string before = journal_key(plugin, 0, big);
  dir.write("p.so", "version 2");
  EXPECT_NE(journal_key(plugin, 0, big), before);
}

}  // namespace
}  // namespace kl
