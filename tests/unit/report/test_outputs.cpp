// What a run writes while it goes and what it keeps: JSON lines per row, --json/--csv rewritten
// whole as rows finish, every sample on request, the journal's records for --resume, the T4
// export of a tune, and the options that ask for them. The GPU side (Ctrl-C in a real sweep,
// --resume with the numbers) is tests/gpu/test_gpu_outputs.cpp.
#include "cli/options.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "measure/timing.hpp"
#include "record/record_json.hpp"
#include "report/results_writer.hpp"
#include "report/tune_report.hpp"
#include "runner/journal.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <sstream>

namespace kl {
namespace {

cuda::device_info h100() {
  cuda::device_info d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-d70a3212-d042-a894-386f-5bbcfd3e8a5b";
  d.cc_major = 9;
  d.sm_count = 132;
  d.sm_clock_khz = 1980000;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.driver_version = 13000;
  return d;
}

result_record passed_row(const std::string& name, unsigned block, double median_us) {
  result_record r;
  r.variant.family = "reduce";
  r.variant.name = name;
  r.config = {"int32", "sum", "exact", 12345, {{"N", std::uint64_t{1u << 24}}}};
  r.block = block;
  r.status = outcome::passed;
  r.bytes = 4.0 * (1u << 24);
  r.roofline = "bandwidth";
  timing_stats t;
  t.samples = 3;
  t.median_ms = t.min_ms = t.max_ms = t.mean_ms = median_us / 1e3;
  r.timing = t;
  return r;
}

run_context context() {
  run_context c;
  c.command = {"kernlab", "--variant", "reduce5"};
  c.date = "2026-11-23T19:00:00Z";
  c.kernlab_version = "0.1.0";
  c.kernlab_commit = "abc1234";
  c.nvrtc_version = "13.0";
  c.seed = 12345;
  return c;
}

std::vector<nlohmann::json> json_lines(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(ResultsWriter, EachRowIsAJsonLineWithTheDeviceAndTheRunAsItFinishes) {
  test::temp_dir dir("jsonl");
  const std::string path = dir.str() + "/run.jsonl";
  results_writer w({"", "", path}, context);
  sweep_result so_far;
  so_far.device = h100();
  w.row(passed_row("reduce5", 256, 40.0), so_far);
  // On the disk at once, not at the end.
  auto lines = json_lines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["variant"]["name"], "reduce5");
  EXPECT_EQ(lines[0]["device"]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(lines[0]["device"]["uuid"], "GPU-d70a3212-d042-a894-386f-5bbcfd3e8a5b");
  EXPECT_EQ(lines[0]["run"]["kernlab_commit"], "abc1234");
  EXPECT_EQ(lines[0]["run"]["seed"], 12345);
  EXPECT_NEAR(lines[0]["timing"]["median_us"].get<double>(), 40.0, 1e-9);
  EXPECT_GT(lines[0]["percent_of_peak"].get<double>(), 0);
  w.row(passed_row("reduce5", 512, 35.0), so_far);
  w.finish(so_far);
  lines = json_lines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["block"], 512);
  // Each line is a whole record: it reads back as one.
  EXPECT_EQ(record_from_json(lines[1]).block, 512u);
}

TEST(ResultsWriter, JsonAndCsvAreRewrittenWholeWhileTheRunGoesOnThenMarkedComplete) {
  test::temp_dir dir("live");
  const std::string json_path = dir.str() + "/run.json", csv_path = dir.str() + "/run.csv";
  results_writer w({json_path, csv_path, ""}, context, /*rewrite_every_s=*/0);
  sweep_result so_far;
  so_far.device = h100();
  w.row(passed_row("reduce5", 256, 40.0), so_far);
  w.row(passed_row("reduce6", 256, 30.0), so_far);
  auto partial = nlohmann::json::parse(test::read_file(json_path));
  EXPECT_EQ(partial["complete"], false);
  ASSERT_EQ(partial["records"].size(), 2u);
  EXPECT_EQ(test::count_of(test::read_file(csv_path), "\n"), 3u);  // the header and two rows
  // Every record carries its device.
  EXPECT_EQ(partial["records"][1]["device"]["compute_capability"], "9.0");

  sweep_result final = so_far;
  final.results = {passed_row("reduce5", 256, 40.0), passed_row("reduce6", 256, 30.0),
                   passed_row("reduce7", 256, 20.0)};
  w.finish(final);
  const auto done = nlohmann::json::parse(test::read_file(json_path));
  EXPECT_EQ(done["complete"], true);
  EXPECT_FALSE(done.contains("interrupted"));
  EXPECT_EQ(done["records"].size(), 3u);
}

TEST(ResultsWriter, RewritesAreSpacedOutAndAnInterruptedRunSaysSo) {
  test::temp_dir dir("spaced");
  const std::string json_path = dir.str() + "/run.json";
  results_writer w({json_path, "", ""}, context, /*rewrite_every_s=*/3600);
  sweep_result so_far;
  so_far.device = h100();
  w.row(passed_row("reduce5", 256, 40.0), so_far);
  // Within the hour: no rewrite yet (a tune of thousands of rows does not rewrite per row).
  EXPECT_FALSE(std::filesystem::exists(json_path));
  sweep_result final = so_far;
  final.results = {passed_row("reduce5", 256, 40.0)};
  final.interrupted = true;
  w.finish(final);
  const auto j = nlohmann::json::parse(test::read_file(json_path));
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["records"].size(), 1u);
}

TEST(ResultsWriter, AJsonLinesFileThatCannotBeWrittenCostsAWarningThenAnErrorAtTheEnd) {
  test::temp_dir dir("jsonl-bad");
  const std::string json_path = dir.str() + "/run.json";
  results_writer w({json_path, "", dir.str() + "/no/such/folder/run.jsonl"}, context, 0);
  sweep_result so_far;
  so_far.device = h100();
  w.row(passed_row("reduce5", 256, 40.0), so_far);
  w.row(passed_row("reduce6", 256, 30.0), so_far);
  ASSERT_EQ(w.warnings().size(), 1u);
  EXPECT_NE(w.warnings()[0].find("no/such/folder/run.jsonl"), std::string::npos) << w.warnings()[0];
  sweep_result final = so_far;
  final.results = {passed_row("reduce5", 256, 40.0), passed_row("reduce6", 256, 30.0)};
  EXPECT_THROW(w.finish(final), io_error);
  // The other file the user asked for is written all the same.
  EXPECT_EQ(nlohmann::json::parse(test::read_file(json_path))["records"].size(), 2u);
}

TEST(Samples, EverySampleIsKeptInOrderOnRequestAndRoundTrips) {
  timing_options opt;
  opt.min_samples = 5;
  opt.min_time_s = 0;
  opt.keep_samples = true;
  sample_stream s(opt);
  const std::vector<double> ms = {0.040, 0.041, 0.039, 0.050, 0.040};
  for (double x : ms) s.add(x, 0);
  const timing_stats t = s.finish();
  EXPECT_EQ(t.samples_ms, ms);
  const timing_stats back = timing_stats_from_json(to_json(t));
  ASSERT_EQ(back.samples_ms.size(), ms.size());
  for (std::size_t i = 0; i < ms.size(); ++i) EXPECT_NEAR(back.samples_ms[i], ms[i], 1e-12);
  EXPECT_EQ(to_json(t)["samples_us"].size(), 5u);
  // Without --samples nothing is kept, and the record says nothing of them.
  opt.keep_samples = false;
  sample_stream plain(opt);
  for (double x : ms) plain.add(x, 0);
  EXPECT_TRUE(plain.finish().samples_ms.empty());
  EXPECT_FALSE(to_json(plain.finish()).contains("samples_us"));
  // The option travels to the worker with the rest of the timing options.
  opt.keep_samples = true;
  EXPECT_TRUE(timing_options_from_json(to_json(opt)).keep_samples);
}

TEST(Journal, FinishedRowsKeepTheirRecordsForResume) {
  test::temp_dir dir("journal-records");
  const std::string path = dir.str() + "/journal.log";
  const result_record r = passed_row("reduce5", 256, 40.0);
  {
    journal j(path, true);
    j.started("a");
    j.finished("a", "passed", to_json(r).dump());
    j.started("b");
    j.finished("b", "wrong_result", "");  // as a journal written before records were kept
    j.started("c");
  }
  const auto s = journal::read(path);
  ASSERT_EQ(s.done.size(), 2u);
  EXPECT_EQ(s.done.at("a").outcome, "passed");
  const result_record back = record_from_json(nlohmann::json::parse(s.done.at("a").record));
  ASSERT_TRUE(back.timing);
  EXPECT_DOUBLE_EQ(back.timing->median_ms, r.timing->median_ms);
  EXPECT_EQ(s.done.at("b").outcome, "wrong_result");
  EXPECT_EQ(s.done.at("b").record, "");
  EXPECT_EQ(s.in_flight.count("c"), 1u);

  // A record with a tab or a newline in its message is still one field of one line.
  result_record odd = r;
  odd.status = outcome::failed;
  odd.message = "line one\n\tline two";
  {
    journal j(path, true);
    j.finished("d", "failed", to_json(odd).dump());
  }
  const auto s2 = journal::read(path);
  EXPECT_EQ(record_from_json(nlohmann::json::parse(s2.done.at("d").record)).message, odd.message);
}

tune::tuning_space two_point_space() {
  tune::tuning_space s;
  s.file = "/k/reduce/tunable.cu";
  s.name = "tunable";
  s.family = "reduce";
  s.candidates = {{nullptr, 256, {{"ITEMS", 2}, {"BLOCK", 256}}},
                  {nullptr, 512, {{"ITEMS", 4}, {"BLOCK", 512}}},
                  {nullptr, 128, {{"ITEMS", 8}, {"BLOCK", 128}}},
                  {nullptr, 1024, {{"ITEMS", 8}, {"BLOCK", 1024}}}};
  return s;
}

TEST(T4Export, EveryEvaluationWithItsConfigurationTimesAndInvalidity) {
  const tune::tuning_space space = two_point_space();
  tune::tune_outcome t;
  t.space = &space;
  t.config = {"int32", "sum", "exact", 1, {{"N", std::uint64_t{1u << 20}}}};
  result_record ok = passed_row("tunable[ITEMS=2]", 256, 12.5);
  ok.compile_ms = 300;
  ok.validate_ms = 0.4;
  ok.timing->samples_ms = {0.0125, 0.0126, 0.0124};
  result_record wrong = passed_row("tunable[ITEMS=4]", 512, 0);
  wrong.status = outcome::wrong_result;
  wrong.timing.reset();
  result_record broken = wrong;
  broken.status = outcome::failed;
  broken.message = "compile error:\nkernel.cu(3): error: identifier \"x\" is undefined";
  result_record skipped = wrong;
  skipped.status = outcome::skipped;
  skipped.message = "block 1024: at most 512 threads";
  t.evaluations = {{0, tune::fidelity::full, ok, false},
                   {1, tune::fidelity::full, wrong, false},
                   {2, tune::fidelity::full, broken, false},
                   {3, tune::fidelity::full, skipped, false}};
  const nlohmann::json j = t4_results_json({t});
  EXPECT_EQ(j["schema_version"], "1.0.0");
  ASSERT_EQ(j["results"].size(), 4u);
  const auto& first = j["results"][0];
  EXPECT_EQ(first["configuration"]["ITEMS"], 2);
  EXPECT_EQ(first["configuration"]["BLOCK"], 256);
  EXPECT_EQ(first["invalidity"], "correct");
  EXPECT_EQ(first["correctness"], 1);
  EXPECT_EQ(first["objectives"], nlohmann::json::array({"time"}));
  EXPECT_EQ(first["times"]["runtimes"].size(), 3u);  // every sample, as kept
  EXPECT_DOUBLE_EQ(first["times"]["compilation_time"].get<double>(), 300);
  bool has_time = false;
  for (const auto& m : first["measurements"])
    if (m["name"] == "time") {
      has_time = true;
      EXPECT_EQ(m["unit"], "ms");
      EXPECT_NEAR(m["value"].get<double>(), 0.0125, 1e-12);
    }
  EXPECT_TRUE(has_time);
  EXPECT_EQ(j["results"][1]["invalidity"], "correctness");
  EXPECT_EQ(j["results"][1]["correctness"], 0);
  EXPECT_EQ(j["results"][2]["invalidity"], "compile");
  EXPECT_EQ(j["results"][3]["invalidity"], "constraints");
  // What T4 requires of every result, with its own words for invalidity.
  for (const auto& r : j["results"]) {
    for (const char* key : {"configuration", "times", "invalidity", "correctness"})
      EXPECT_TRUE(r.contains(key)) << key;
    const std::string why = r["invalidity"];
    EXPECT_TRUE(why == "correct" || why == "compile" || why == "runtime" || why == "correctness" ||
                why == "timeout" || why == "constraints")
        << why;
  }
}

TEST(OutputOptions, ApplyWhereTheyMeanSomething) {
  auto parse = [](std::vector<const char*> args) {
    args.insert(args.begin(), "kernlab");
    return parse_command_line(static_cast<int>(args.size()), args.data(), default_paths{});
  };
  const auto o = parse({"--config", "/dev/null", "--jsonl", "x.jsonl", "--samples"});
  EXPECT_EQ(o.jsonl_path, "x.jsonl");
  EXPECT_TRUE(o.timing.keep_samples);
  EXPECT_FALSE(parse({"--config", "/dev/null"}).timing.keep_samples);
  EXPECT_EQ(parse({"tune", "--config", "/dev/null", "--t4", "t4.json"}).t4_path, "t4.json");
  try {
    parse({"--config", "/dev/null", "--t4", "t4.json"});
    FAIL() << "--t4 on a sweep was accepted";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("--t4 does not apply"), std::string::npos) << e.what();
  }
}

TEST(Interrupt, TheFirstSignalIsAStopRequestAndChildrenIgnoreCtrlC) {
  clear_interrupt_for_test();
  EXPECT_FALSE(interrupt_requested());
  request_interrupt_for_test(SIGINT);
  EXPECT_TRUE(interrupt_requested());
  EXPECT_EQ(interrupt_signal(), SIGINT);
  clear_interrupt_for_test();
  EXPECT_FALSE(interrupt_requested());
  // A real SIGINT, delivered to this process, is caught, not fatal.
  install_interrupt_handler();
  std::raise(SIGINT);
  EXPECT_TRUE(interrupt_requested());
  clear_interrupt_for_test();
  // The second one would take the default action: the handler gave it back.
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
  // The worker's side: ignored.
  ignore_interrupts();
  std::raise(SIGINT);
  EXPECT_FALSE(interrupt_requested());
  std::signal(SIGINT, SIG_DFL);
}

}  // namespace
}  // namespace kl
