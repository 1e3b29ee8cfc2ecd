// kernlab tune on the GPU, through the built binary: a tunable file written here searched
// exhaustively, its exports, a rerun served by the store, a tune killed and resumed, and planted
// mistakes that cost their points only.
#include "gpu_test_util.hpp"
#include "tune_fixture.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <regex>

namespace kl {
namespace {

const char* quick = " --min-time 0 --timeout 0.2 --no-cache --size 1000003 --dtype int32";

// "N evaluated, M measured in this run" of a tune's table heading.
std::pair<int, int> evaluated_measured(const std::string& output) {
  std::smatch m;
  static const std::regex re("(\\d+) evaluated, (\\d+) measured in this run");
  if (!std::regex_search(output, m, re)) return {-1, -1};
  return {std::stoi(m[1]), std::stoi(m[2])};
}

std::size_t lines_in(const std::string& path) {
  const std::string text = test::read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(GpuTune, ExhaustiveTuneRanksEveryPointExportsTheBestAndRerunsFromTheStore) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("tune_gpu");
  test::write_tunable_reduce(dir, "tsum");
  const std::string d = dir.str();
  // One compile thread: batches of 4, each proposed ahead and queued behind the last, so the
  // 11 points run as 4 + 4 + 3 with the next batch compiling while one is timed.
  const std::string args = "tune --kernels-dir " + d + " --variant tsum --strategy exhaustive" +
                           " --store " + d + "/store.jsonl --json " + d + "/run.json --export " +
                           d + "/best.json --export-header " + d + "/best.h -j 1" + quick;
  const auto r = test::run_kernlab(args);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(evaluated_measured(r.output), std::make_pair(11, 11)) << r.output;
  EXPECT_NE(r.output.find("compile: 4 points compiled or loaded"), std::string::npos)  // 4 ITEMS
      << r.output;
  EXPECT_NE(r.output.find(" s searching (rows ran "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("best: reduce.tsum"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("x cub"), std::string::npos) << r.output;
  EXPECT_EQ(lines_in(d + "/store.jsonl"), 11u);

  // The results file: the 11 points, all passed, and CUB's row.
  const auto run = nlohmann::json::parse(test::read_file(d + "/run.json"));
  std::size_t points = 0, passed = 0, cub = 0;
  for (const auto& rec : run.at("records")) {
    const std::string name = rec.at("variant").at("name");
    if (name.rfind("tsum[", 0) == 0) {
      ++points;
      passed += rec.at("outcome") == "passed";
    }
    cub += name == "cub";
  }
  EXPECT_EQ(points, 11u);
  EXPECT_EQ(passed, 11u);
  EXPECT_EQ(cub, 1u);
  // The tuning table's best is the fastest record.
  const auto best = nlohmann::json::parse(test::read_file(d + "/best.json"));
  const auto& t = best.at("tunes").at(0);
  double fastest = 1e30;
  for (const auto& rec : run.at("records"))
    if (rec.at("variant").at("name").get<std::string>().rfind("tsum[", 0) == 0)
      fastest = std::min(fastest, rec.at("timing").at("median_us").get<double>());
  EXPECT_DOUBLE_EQ(t.at("best").at("timing").at("median_us").get<double>(), fastest);
  EXPECT_FALSE(best.at("provenance").at("device").get<std::string>().empty());
  const auto h = test::read_file(d + "/best.h");
  EXPECT_NE(h.find("#define REDUCE_TSUM_ITEMS " +
                   std::to_string(t.at("best").at("values").at("ITEMS").get<int>())),
            std::string::npos)
      << h;

  // The same tune again: every point from the store, nothing measured.
  const auto again = test::run_kernlab(args);
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_EQ(evaluated_measured(again.output), std::make_pair(11, 0)) << again.output;
  EXPECT_EQ(lines_in(d + "/store.jsonl"), 11u);
  // --fresh measures them again.
  const auto fresh = test::run_kernlab(args + " --fresh");
  ASSERT_EQ(fresh.code, 0) << fresh.output;
  EXPECT_EQ(evaluated_measured(fresh.output), std::make_pair(11, 11)) << fresh.output;
}

// Racing on the GPU: every point raced out is slower than the best by more than the margin, the
// best is timed in full, and --race off times every point in full.
TEST(GpuTune, RacedPointsLieAboveTheBestByTheMarginAndTheBestIsTimedInFull) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("tune_gpu_race");
  test::write_tunable_reduce(dir, "tsum");
  const std::string d = dir.str();
  const std::string args = "tune --kernels-dir " + d + " --variant tsum --strategy exhaustive" +
                           " --fresh --store " + d + "/store.jsonl -j 1" + quick;
  for (const std::string race : {"1", "off"}) {
    const auto r = test::run_kernlab(args + " --race " + race + " --json " + d + "/" + race +
                                     ".json --export " + d + "/" + race + ".best.json");
    ASSERT_EQ(r.code, 0) << r.output;
    const auto run = nlohmann::json::parse(test::read_file(d + "/" + race + ".json"));
    const auto best = nlohmann::json::parse(test::read_file(d + "/" + race + ".best.json"));
    const auto& t = best.at("tunes").at(0);
    const double best_us = t.at("best").at("timing").at("median_us");
    EXPECT_FALSE(t.at("best").at("timing").contains("raced")) << "the best is timed in full";
    std::size_t raced = 0;
    for (const auto& rec : run.at("records")) {
      if (rec.at("timing").is_null() || !rec.at("timing").contains("raced")) continue;
      ++raced;
      EXPECT_GT(rec.at("timing").at("median_us").get<double>(), best_us * 1.01) << rec.dump();
    }
    EXPECT_EQ(t.at("raced"), raced);
    EXPECT_GT(t.at("found_after_s").get<double>(), 0);
    EXPECT_EQ(r.output.find("(raced)") != std::string::npos, raced > 0) << r.output;
    if (race == "off") {
      EXPECT_EQ(raced, 0u);
    }
  }
}

// A range tune's header, checked on the GPU at sizes it was not tuned at: each size is tuned
// with the header's pick first, and the table gives its loss against the size's best (never
// below zero: the pick is one of the points that size's best is chosen from).
TEST(GpuTune, ARangeTunesHeaderIsCheckedAtSizesItWasNotTunedAt) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("tune_gpu_dispatch");
  test::write_tunable_reduce(dir, "tsum");
  const std::string d = dir.str();
  const std::string common = " --kernels-dir " + d +
                             " --variant tsum --dtype int32 --strategy exhaustive --min-time 0 "
                             "--timeout 0.2 --no-cache -j 1 --store " +
                             d + "/store.jsonl";
  const auto tuned =
      test::run_kernlab("tune --size 2^16,2^20,2^24 --export-header " + d + "/dispatch.h" + common);
  ASSERT_EQ(tuned.code, 0) << tuned.output;
  EXPECT_NE(tuned.output.find("size selector: "), std::string::npos) << tuned.output;
  const auto r = test::run_kernlab("check-dispatch " + d + "/dispatch.h --size 2^18,2^22" + common);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto at = r.output.find("== dispatch check: reduce_tsum_select of " + d + "/dispatch.h");
  ASSERT_NE(at, std::string::npos) << r.output;
  std::smatch m;
  const std::string rest = r.output.substr(at);
  static const std::regex summary(
      "the header's picks against each size's best: median \\+([0-9.]+)%, worst \\+([0-9.]+)% "
      "\\(2 sizes\\)");
  ASSERT_TRUE(std::regex_search(rest, m, summary)) << rest;
  EXPECT_LE(std::stod(m[1]), std::stod(m[2]));
}

TEST(GpuTune, AKilledTuneResumesWithoutMeasuringWhatItStored) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("tune_gpu_kill");
  test::write_tunable_reduce(dir, "tsum");
  const std::string d = dir.str();
  const std::string store = d + "/store.jsonl";
  // Slow rows (0.3 s of samples each), so that the kill lands in the middle; not raced, since a
  // raced point stops within milliseconds once a row has come back (on an H200 the other eight
  // were stored within the test's 50 ms poll). SIGKILL, as a lost machine: SIGTERM would let the
  // batch in flight (every point, with 16 compile threads) finish.
  const std::string args = "tune --kernels-dir " + d + " --variant tsum --strategy random" +
                           " --store " + store + " --min-time 0.3 --timeout 1 --no-cache" +
                           " --size 1000003 --dtype int32 --stop-rule stdrel --max-noise 0" +
                           " --race off";
  const auto killed = test::run_command(
      "( " + std::string(KERNLAB_BINARY) + " --config /dev/null " + args +
      " > /dev/null 2>&1 & pid=$!; for i in $(seq 600); do n=$(cat " + store +
      " 2>/dev/null | wc -l); [ \"$n\" -ge 3 ] && break; sleep 0.05; done; kill -KILL $pid; "
      "wait $pid; echo killed=$? )");
  EXPECT_NE(killed.output.find("killed="), std::string::npos) << killed.output;
  const std::size_t stored = lines_in(store);
  ASSERT_GE(stored, 3u);
  ASSERT_LT(stored, 11u) << "the tune finished before the kill";
  const auto resumed = test::run_kernlab(args + " --resume");
  ASSERT_EQ(resumed.code, 0) << resumed.output;
  EXPECT_EQ(evaluated_measured(resumed.output), std::make_pair(11, static_cast<int>(11 - stored)))
      << resumed.output;
}

TEST(GpuTune, PlantedMistakesCostTheirPointsOnly) {
  KL_REQUIRE_GPU();
  test::temp_dir dir("tune_gpu_planted");
  test::write_tunable_reduce(dir, "tbug", /*planted=*/true);
  const std::string d = dir.str();
  const auto r = test::run_kernlab("tune --kernels-dir " + d + " --variant tbug" +
                                   " --strategy exhaustive --store " + d + "/s.jsonl --json " + d +
                                   "/run.json" + quick);
  // A wrong result fails the command; the search still ran every point and found a best.
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(evaluated_measured(r.output).first, 11) << r.output;
  EXPECT_NE(r.output.find("planted: ITEMS = 4 does not compile"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("WRONG"), std::string::npos) << r.output;
  const auto best = r.output.find("best: reduce.tbug");
  ASSERT_NE(best, std::string::npos) << r.output;
  const std::string best_line = r.output.substr(best, r.output.find('\n', best) - best);
  EXPECT_TRUE(best_line.find("ITEMS=1 ") != std::string::npos ||
              best_line.find("ITEMS=2 ") != std::string::npos)
      << best_line;
  std::map<std::string, int> by_outcome;
  const auto run = nlohmann::json::parse(test::read_file(d + "/run.json"));
  for (const auto& rec : run.at("records"))
    if (rec.at("variant").at("name").get<std::string>().rfind("tbug[", 0) == 0) {
      ++by_outcome[rec.at("outcome")];
      if (rec.at("outcome") == "wrong_result") {
        EXPECT_FALSE(rec.at("expected").get<std::string>().empty()) << rec.dump();
        EXPECT_FALSE(rec.at("got").get<std::string>().empty()) << rec.dump();
      }
    }
  EXPECT_EQ(by_outcome["passed"], 6);
  EXPECT_EQ(by_outcome["failed"], 3);
  EXPECT_EQ(by_outcome["wrong_result"], 2);
}

}  // namespace
}  // namespace kl
