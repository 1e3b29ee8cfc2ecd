// Ctrl-C in a real sweep keeps what was measured, and --resume reports those rows with their
// numbers: the binary started in a process group of its own, as a shell starts a job, and the
// signal sent to the whole group, as a terminal's Ctrl-C is (so the worker gets it too).
#include "gpu_test_util.hpp"
#include "record/record_json.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

namespace kl {
namespace {

std::size_t line_count(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  std::string line;
  while (std::getline(in, line)) n += line.empty() ? 0 : 1;
  return n;
}

// Starts `args` in a new process group, its output into `log`; returns the pid.
pid_t start_job(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (!out || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(126);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: whichever runs first
  return pid;
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(GpuOutputs, CtrlCKeepsTheMeasuredRowsAndResumeReportsThemWithTheirNumbers) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("ctrl-c");
  const std::string journal = dir.str() + "/journal.log", jsonl = dir.str() + "/run.jsonl",
                    json = dir.str() + "/run.json", log = dir.str() + "/out.log";
  const std::vector<std::string> args = {KERNLAB_BINARY,
                                         "--config",
                                         "/dev/null",
                                         "--kernels-dir",
                                         test::kernels_dir(),
                                         "--no-plugins",
                                         "--variant",
                                         "reduce*",
                                         "--block",
                                         "all",
                                         "--dtype",
                                         "int32",
                                         "--size",
                                         "2^20",
                                         "--stop-rule",
                                         "ci",
                                         "--min-time",
                                         "0.02",
                                         "--timeout",
                                         "0.3",
                                         "--journal",
                                         journal,
                                         "--jsonl",
                                         jsonl,
                                         "--json",
                                         json};
  const pid_t pid = start_job(args, log);
  // Some rows finished, many to go: Ctrl-C.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (line_count(jsonl) < 6 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(line_count(jsonl), 6u) << test::read_file(log);
  ASSERT_EQ(kill(-pid, SIGINT), 0);
  EXPECT_EQ(wait_exit_code(pid), 128 + SIGINT) << test::read_file(log);
  const std::string out = test::read_file(log);
  EXPECT_NE(out.find("interrupted (Ctrl-C) after"), std::string::npos) << out;

  const auto first = nlohmann::json::parse(test::read_file(json));
  EXPECT_EQ(first["complete"], false);
  EXPECT_EQ(first["interrupted"], true);
  const std::size_t measured = first["records"].size();
  // Every row that finished is in both files; the one in flight finished too (the worker
  // ignores Ctrl-C), so nothing is lost and nothing is reported as a crash.
  EXPECT_EQ(line_count(jsonl), measured);
  std::map<std::string, double> median_of;
  for (const auto& r : first["records"]) {
    EXPECT_NE(r["outcome"], "crashed") << r.dump();
    if (r["outcome"] == "passed") median_of[record_key(r)] = r["timing"]["median_us"];
  }
  ASSERT_FALSE(median_of.empty());

  // --resume: the rest is measured, and the first run's rows come back with their numbers.
  std::vector<std::string> resume = args;
  resume.push_back("--resume");
  const pid_t again = start_job(resume, log + ".2");
  EXPECT_EQ(wait_exit_code(again), 0) << test::read_file(log + ".2");
  const auto second = nlohmann::json::parse(test::read_file(json));
  EXPECT_EQ(second["complete"], true);
  EXPECT_GT(second["records"].size(), measured);
  std::size_t resumed = 0;
  for (const auto& r : second["records"]) {
    EXPECT_NE(r["outcome"], "suspect") << r.dump();
    if (!r.value("resumed", false)) continue;
    ++resumed;
    if (r["outcome"] != "passed") continue;
    const auto it = median_of.find(record_key(r));
    ASSERT_NE(it, median_of.end()) << record_key(r);
    EXPECT_DOUBLE_EQ(r["timing"]["median_us"].get<double>(), it->second);
  }
  EXPECT_EQ(resumed, measured);
  EXPECT_NE(test::read_file(log + ".2").find("(from the resumed run)"), std::string::npos);
}

TEST(GpuOutputs, SamplesAreKeptInTheRecordsOnRequest) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("samples");
  const std::string json = dir.str() + "/run.json";
  const auto r = test::run_kernlab("--kernels-dir " + test::kernels_dir() +
                                   " --no-plugins --variant reduce5 --block 256 --dtype int32 "
                                   "--size 2^20 --stop-rule ci --min-time 0.01 --timeout 0.5 "
                                   "--samples --json " +
                                   json);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto j = nlohmann::json::parse(test::read_file(json));
  ASSERT_EQ(j["records"].size(), 1u);
  const auto& t = j["records"][0]["timing"];
  ASSERT_TRUE(t.contains("samples_us"));
  EXPECT_EQ(t["samples_us"].size(), t["samples"].get<std::size_t>());
  double lo = 1e300, hi = 0;
  for (const auto& s : t["samples_us"]) {
    lo = std::min(lo, s.get<double>());
    hi = std::max(hi, s.get<double>());
  }
  EXPECT_DOUBLE_EQ(lo, t["min_us"].get<double>());
  EXPECT_DOUBLE_EQ(hi, t["max_us"].get<double>());
}

}  // namespace
}  // namespace kl
