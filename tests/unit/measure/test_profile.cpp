// --profile without a GPU: Nsight Compute's raw page read from real ncu output (tests/data/ncu/),
// the rows' summaries, the profiling pass around a stand-in ncu (a script that starts a fake
// worker, and one that fails like ncu without counter rights), the profile in the results files
// and the table, the search for ncu and its errors.
#include "measure/ncu_report.hpp"
#include "process/command.hpp"
#include "record/record_json.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "runner/profile_pass.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kl {
namespace {

// A fixture of tests/data/ncu/, kept compressed (gzip -9n): its path.
std::string fixture(const std::string& name) {
  return test::source_dir() + "/tests/data/ncu/" + name + ".gz";
}

std::vector<ncu_kernel> parse_file(const std::string& name) {
  const auto r = test::run_command("gzip -dc '" + fixture(name) + "'");
  EXPECT_EQ(r.code, 0) << fixture(name) << ": " << r.output;
  std::istringstream in(r.output);
  return parse_ncu_raw_csv(in);
}

std::vector<ncu_kernel> parse_text(const std::string& text) {
  std::istringstream in(text);
  return parse_ncu_raw_csv(in);
}

double stall(const ncu_kernel& k, const std::string& reason) {
  for (const auto& s : k.stalls)
    if (s.name == reason) return s.cycles;
  return -1;
}

// A row that passed, as the sweep leaves it for the profiling pass.
result_record passed_row(const std::string& name, unsigned block) {
  result_record r;
  r.variant.family = "reduce";
  r.variant.name = name;
  r.config = {"int32", "sum", "exact", 12345, {{"N", std::uint64_t{1u << 20}}}};
  r.block = block;
  r.status = outcome::passed;
  return r;
}

// A profiling run's own CSV (ncu --csv --page raw while the program runs): the program's output
// and ncu's ==PROF== lines come first, times are in ns with thousands separators.
TEST(NcuReport, ReadsTheRawPageOfAProfilingRun) {
  const auto k = parse_file("run_raw.csv");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].id, "0");
  EXPECT_EQ(k[1].id, "1");
  EXPECT_EQ(k[0].name, "kl_empty");
  EXPECT_EQ(k[0].range, "");                  // profiled without a row's range
  EXPECT_DOUBLE_EQ(*k[0].duration_ns, 2048);  // "2,048" ns
  EXPECT_DOUBLE_EQ(*k[1].duration_ns, 2112);
  EXPECT_DOUBLE_EQ(*k[0].dram_pct, 0.04);
  EXPECT_DOUBLE_EQ(*k[0].occupancy_pct, 1.57);
  EXPECT_DOUBLE_EQ(*k[0].l2_hit_pct, 99.59);
  EXPECT_DOUBLE_EQ(*k[0].sm_pct, 0.0);
  // 19 reasons on the page; "selected" (the issuing cycle) is not a stall.
  EXPECT_EQ(k[0].stalls.size(), 18u);
  EXPECT_EQ(stall(k[0], "selected"), -1);
  EXPECT_DOUBLE_EQ(stall(k[0], "no_instruction"), 78);
  EXPECT_DOUBLE_EQ(stall(k[1], "no_instruction"), 68);
  EXPECT_DOUBLE_EQ(stall(k[0], "long_scoreboard"), 0);
  EXPECT_TRUE(kernels_by_range(k).empty());

  // Both kernels as one row: every figure weighted by the kernels' durations.
  const profile_summary s = summarize_kernels({&k[0], &k[1]});
  EXPECT_EQ(s.kernels, 2);
  EXPECT_DOUBLE_EQ(s.duration_us, 4.16);
  EXPECT_NEAR(*s.occupancy_pct, (1.57 * 2048 + 1.56 * 2112) / 4160, 1e-12);
  EXPECT_NEAR(*s.l2_hit_pct, (99.59 * 2048 + 99.61 * 2112) / 4160, 1e-12);
  ASSERT_EQ(s.top_stalls.size(), 2u);
  EXPECT_EQ(s.top_stalls[0].name, "no_instruction");
  EXPECT_NEAR(s.top_stalls[0].cycles, (78.0 * 2048 + 68.0 * 2112) / 4160, 1e-12);
  EXPECT_EQ(s.top_stalls[1].name, "drain");
  EXPECT_DOUBLE_EQ(s.top_stalls[1].cycles, 40);
}

// The import of a report made with NVTX ranges, renamed after them (--print-nvtx-rename
// kernel): each kernel finds its row; times are in us; the page has only the metrics asked for.
TEST(NcuReport, MapsRenamedKernelsToTheirRows) {
  const auto k = parse_file("nvtx_import_raw.csv");
  ASSERT_EQ(k.size(), 4u);
  EXPECT_EQ(k[0].name, "kl/row0/k_a(float *, int)");
  EXPECT_EQ(k[0].range, "kl/row0");
  EXPECT_DOUBLE_EQ(*k[0].duration_ns, 54112);  // "54.112000" us
  EXPECT_FALSE(k[0].occupancy_pct);            // not on this page: no value, not 0
  EXPECT_TRUE(k[0].stalls.empty());
  const auto rows = kernels_by_range(k);
  ASSERT_EQ(rows.size(), 3u);
  ASSERT_EQ(rows.at("kl/row1").size(), 2u);  // two kernels in one row's range, in launch order
  EXPECT_EQ(rows.at("kl/row1")[0]->name, "kl/row1/k_a(float *, int)");
  EXPECT_EQ(rows.at("kl/row1")[1]->name, "kl/row1/k_b(float *, int)");
  const profile_summary s = summarize_kernels(rows.at("kl/row1"));
  EXPECT_EQ(s.kernels, 2);
  EXPECT_NEAR(s.duration_us, 53.088 + 52.352, 1e-9);
  EXPECT_NEAR(*s.dram_pct, (61.446295 * 53.088 + 62.333444 * 52.352) / (53.088 + 52.352), 1e-9);
  EXPECT_FALSE(s.occupancy_pct);
  EXPECT_FALSE(s.l2_hit_pct);
  EXPECT_FALSE(s.sm_pct);
  EXPECT_TRUE(s.top_stalls.empty());
}

// CUB's scan under --profile on an H200: ncu renamed its two kernels after CUB's own NVTX range
// ("cub::DeviceScan::InclusiveSum/..."), inside the row's; the row is read from the NVTX stack.
TEST(NcuReport, AKernelUnderALibrarysOwnRangeBelongsToTheRowAroundIt) {
  const auto k = parse_file("nested_range_import_raw.csv");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name.rfind("cub::DeviceScan::InclusiveSum/void ", 0), 0u) << k[0].name;
  EXPECT_NE(k[1].name.find("DeviceScanKernel"), std::string::npos) << k[1].name;
  const auto rows = kernels_by_range(k);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows.at("kl/row0").size(), 2u);
  const profile_summary s = summarize_kernels(rows.at("kl/row0"));
  EXPECT_EQ(s.kernels, 2);
  EXPECT_GT(s.duration_us, 0);
  ASSERT_TRUE(s.dram_pct);
  EXPECT_FALSE(s.top_stalls.empty());
}

// The import of a report made with ncu's sections: no DRAM column at all, "no data" values in
// other columns, times in us.
TEST(NcuReport, ReadsAnImportWithoutSomeMetrics) {
  const auto k = parse_file("sections_import_raw.csv");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_DOUBLE_EQ(*k[0].duration_ns, 2048);
  EXPECT_FALSE(k[0].dram_pct);
  EXPECT_DOUBLE_EQ(*k[0].occupancy_pct, 1.617647);
  EXPECT_DOUBLE_EQ(*k[1].l2_hit_pct, 99.734286);
  EXPECT_DOUBLE_EQ(stall(k[1], "no_instruction"), 84);
  const profile_summary s = summarize_kernels({&k[0], &k[1]});
  EXPECT_FALSE(s.dram_pct);
  EXPECT_NEAR(*s.occupancy_pct, (1.617647 + 1.5625) / 2, 1e-12);  // equal durations
  EXPECT_EQ(s.top_stalls[0].name, "no_instruction");
  EXPECT_DOUBLE_EQ(s.top_stalls[0].cycles, 80.5);
}

// The edges of the format on a page made small: a name with commas and quotes, "n/a", a line
// break inside a quoted field, and the mistakes that must be errors rather than zeros.
TEST(NcuReport, FormatEdgesAndErrors) {
  const std::string header =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\","
      "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio\"\n";
  const auto k =
      parse_text("==PROF== Connected to process 1\n" + header +
                 "\"\",\"\",\"msecond\",\"%\",\"inst\",\"inst\"\n"
                 "\"0\",\"kl/row3/f<1, \"\"x\"\">(int, float)\",\"1.5\",\"n/a\",\"2\",\"1\"\n"
                 "\"1\",\"kl/row12/g(\nint)\",\"0.5\",\"1,234.5\",\"\",\"1\"\n"
                 "==PROF== Disconnected from process 1\n");
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "kl/row3/f<1, \"x\">(int, float)");
  EXPECT_EQ(k[0].range, "kl/row3");
  EXPECT_DOUBLE_EQ(*k[0].duration_ns, 1.5e6);
  EXPECT_FALSE(k[0].dram_pct);  // n/a
  ASSERT_EQ(k[0].stalls.size(), 1u);
  EXPECT_EQ(k[0].stalls[0].name, "barrier");
  EXPECT_EQ(k[1].range, "kl/row12");
  EXPECT_DOUBLE_EQ(*k[1].dram_pct, 1234.5);
  EXPECT_TRUE(k[1].stalls.empty());
  // Only the n/a-free kernel counts for DRAM; weights are durations.
  const profile_summary s = summarize_kernels({&k[0], &k[1]});
  EXPECT_DOUBLE_EQ(*s.dram_pct, 1234.5);
  EXPECT_EQ(summarize_kernels({}).kernels, 0);
  EXPECT_FALSE(summarize_kernels({}).dram_pct);

  for (const char* name : {"kl/row/f()", "kl/rowx/f()", "kl/row12", "xkl/row1/f()", "k_a(float *)"})
    EXPECT_EQ(parse_text(header + "\"\",\"\",\"ns\",\"%\",\"inst\",\"inst\"\n\"0\",\"" + name +
                         "\",\"1\",\"1\",\"1\",\"1\"\n")[0]
                  .range,
              "")
        << name;
  EXPECT_EQ(profile_range_name(12), "kl/row12");

  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_text(text);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("==ERROR== something\n").find("no raw page"), std::string::npos);
  EXPECT_NE(error_of(header + "\"\",\"\",\"furlong\",\"%\",\"inst\",\"inst\"\n"
                              "\"0\",\"k\",\"1\",\"1\",\"1\",\"1\"\n")
                .find("'furlong'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "\"\",\"\",\"ns\",\"%\",\"inst\",\"inst\"\n\"0\",\"k\",\"1\"\n")
                .find("has 3 fields, the header 6"),
            std::string::npos);
  EXPECT_NE(error_of(header + "\"\",\"\",\"ns\",\"%\",\"inst\",\"inst\"\n\"0\",\"k\n")
                .find("inside a quoted field"),
            std::string::npos);
  EXPECT_NE(error_of("\"ID\",\"Name\"\n").find("\"Kernel Name\""), std::string::npos);
}

// --- the profile in the results files ---

result_record profiled_row() {
  result_record r = passed_row("reduce5", 256);
  profile_summary p;
  p.kernels = 2;
  p.duration_us = 105.44;
  p.dram_pct = 61.886773;
  p.occupancy_pct = 85.25;
  p.l2_hit_pct = std::nullopt;  // ncu gave none
  p.sm_pct = 40.5;
  p.top_stalls = {{"long_scoreboard", 12.5}, {"barrier", 3.25}};
  p.range = "kl/row1";
  p.report = "/cache/profiles/profile-2026-11-23-184500-42.ncu-rep";
  r.profile = p;
  return r;
}

TEST(ProfileResults, RecordsRoundTripWithTheirProfile) {
  const result_record r = profiled_row();
  const nlohmann::json j = to_json(r);
  ASSERT_TRUE(j.at("profile").is_object());
  EXPECT_TRUE(j.at("profile").at("l2_hit_pct").is_null());
  const result_record back = record_from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back.profile);
  const profile_summary& p = *back.profile;
  EXPECT_EQ(p.kernels, 2);
  EXPECT_DOUBLE_EQ(p.duration_us, 105.44);
  EXPECT_DOUBLE_EQ(*p.dram_pct, 61.886773);
  EXPECT_DOUBLE_EQ(*p.occupancy_pct, 85.25);
  EXPECT_FALSE(p.l2_hit_pct);
  EXPECT_DOUBLE_EQ(*p.sm_pct, 40.5);
  ASSERT_EQ(p.top_stalls.size(), 2u);
  EXPECT_EQ(p.top_stalls[1].name, "barrier");
  EXPECT_DOUBLE_EQ(p.top_stalls[1].cycles, 3.25);
  EXPECT_EQ(p.range, "kl/row1");
  EXPECT_EQ(p.report, r.profile->report);
  EXPECT_EQ(to_json(back), j);

  // Not profiled: null, read back as none; a record without the key is refused.
  result_record plain = passed_row("reduce6", 256);
  nlohmann::json pj = to_json(plain);
  EXPECT_TRUE(pj.at("profile").is_null());
  EXPECT_FALSE(record_from_json(pj).profile);
  pj.erase("profile");
  EXPECT_THROW(record_from_json(pj), std::exception);
  // A damaged profile is an error naming the key, not a zero.
  nlohmann::json bad = j;
  bad["profile"]["dram_pct"] = "high";
  try {
    record_from_json(bad);
    ADD_FAILURE() << "accepted a profile with a text for a number";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("dram_pct"), std::string::npos) << e.what();
  }
}

TEST(ProfileResults, JsonAndCsvCarryIt) {
  sweep_result sweep;
  sweep.arch = "sm_90";
  sweep.results = {profiled_row(), passed_row("reduce6", 256)};
  sweep.profile.requested = true;
  sweep.profile.tool = "/usr/local/cuda/bin/ncu";
  sweep.profile.report = "/cache/profiles/p.ncu-rep";
  sweep.profile.log = "/cache/profiles/p.log";
  sweep.profile.rows = 2;
  run_context ctx;
  const nlohmann::json results = results_to_json(sweep, ctx);
  EXPECT_EQ(results.at("profile").at("report"), "/cache/profiles/p.ncu-rep");
  EXPECT_EQ(results.at("profile").at("error"), "");
  EXPECT_EQ(results.at("records")[0].at("profile").at("kernels"), 2);
  EXPECT_TRUE(results.at("records")[1].at("profile").is_null());
  sweep.profile = {};
  EXPECT_FALSE(results_to_json(sweep, ctx).contains("profile")) << "only when asked for";

  std::ostringstream csv;
  write_csv(results, csv);
  std::istringstream lines(csv.str());
  std::string header, first, second;
  std::getline(lines, header);
  std::getline(lines, first);
  std::getline(lines, second);
  // The profile's columns, then the GPU's (added after them; empty here: no row names a GPU),
  // then the placements' (added after those; empty here: the rows are not timed).
  const std::string gpu = ",gpu_ordinal,gpu_uuid,gpu_name,placements,placement_spread,launch";
  const std::string columns =
      ",profile_kernels,profile_dram_pct,profile_occupancy_pct,profile_l2_hit_pct,profile_sm_pct,"
      "profile_stall1,profile_stall1_cycles,profile_stall2,profile_stall2_cycles" +
      gpu;
  EXPECT_EQ(header.substr(header.size() - columns.size()), columns);
  EXPECT_EQ(test::count_of(first, ","), test::count_of(header, ",")) << first;
  EXPECT_EQ(test::count_of(second, ","), test::count_of(header, ",")) << second;
  const std::string values = ",2,61.886773,85.25,,40.5,long_scoreboard,12.5,barrier,3.25,,,,,,";
  EXPECT_EQ(first.substr(first.size() - values.size()), values) << first;
  EXPECT_EQ(second.substr(second.size() - 15), ",,,,,,,,,,,,,,,") << second;
}

// --- ncu's command lines and the profiling pass, around a stand-in ncu ---

TEST(ProfilePass, FirstErrorOfTheLog) {
  test::temp_dir dir("ncu_log");
  const std::string log = dir.write(
      "p.log",
      "==PROF== Connected to process 42 (/build/kernlab)\n"
      "==WARNING== Note: Running with unmodified GPU clocks.\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters on the target device 0.\n"
      "==ERROR== second\n");
  EXPECT_EQ(ncu_first_error(log),
            "ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
            "Performance Counters on the target device 0.");
  EXPECT_EQ(ncu_first_error(dir.write("clean.log", "==PROF== Disconnected\n")), "");
  EXPECT_EQ(ncu_first_error(dir.str() + "/none.log"), "");
}

// ncu's command line: only the rows' ranges, the metrics, the report; a hot sweep keeps the
// caches warm between replays.
TEST(ProfilePass, CommandLines) {
  const auto cold = ncu_command("/opt/ncu", "/r/p", flush_mode::read);
  const std::string text = [&] {
    std::string s;
    for (const auto& a : cold) s += a + " ";
    return s;
  }();
  EXPECT_EQ(cold.front(), "/opt/ncu");
  EXPECT_NE(text.find("--nvtx --nvtx-include regex:kl/ "), std::string::npos) << text;
  EXPECT_NE(text.find("--export /r/p --force-overwrite "), std::string::npos) << text;
  EXPECT_NE(text.find("--cache-control all "), std::string::npos) << text;
  EXPECT_NE(text.find("--clock-control none "), std::string::npos) << text;
  EXPECT_NE(text.find(std::string("--metrics ") + ncu_metrics), std::string::npos) << text;
  const auto hot = ncu_command("/opt/ncu", "/r/p", flush_mode::none);
  const auto cache = std::find(hot.begin(), hot.end(), "--cache-control");
  ASSERT_NE(cache, hot.end());
  EXPECT_EQ(*(cache + 1), "none");
  EXPECT_EQ(ncu_import_command("ncu", "/r/p.ncu-rep"),
            (std::vector<std::string>{"ncu", "--import", "/r/p.ncu-rep", "--csv", "--page", "raw",
                                      "--print-nvtx-rename", "kernel"}));
}

std::string write_script(const test::temp_dir& dir, const std::string& name,
                         const std::string& text) {
  const std::string path = dir.write(name, text);
  ::chmod(path.c_str(), 0755);
  return path;
}

profile_target target(std::size_t index, const result_record& r) {
  profile_target t;
  t.index = index;
  t.job.variant = r.variant;
  t.job.config = r.config;
  t.job.block = r.block;
  return t;
}

// The whole pass without a GPU: a script in ncu's place makes the report file and starts a
// worker that passes every row and prints the NVTX range it was given; its import prints the real
// page of four kernels in rows 0, 1 (two kernels) and 2. Each row gets its own kernels' figures;
// a row whose range holds no kernel (a copy) says so.
TEST(ProfilePass, EachRowGetsTheKernelsOfItsRange) {
  test::temp_dir dir("profile_pass");
  const std::string ncu = write_script(dir, "bin/ncu",
                                       "#!/bin/sh\n"
                                       "if [ \"$1\" = --import ]; then gzip -dc '" +
                                           fixture("nvtx_import_raw.csv") +
                                           "'; exit 0; fi\n"
                                           "while [ $# -gt 0 ]; do\n"
                                           "  case \"$1\" in\n"
                                           "    --export) : > \"$2.ncu-rep\"; shift 2;;\n"
                                           "    --force-overwrite) shift; break;;\n"
                                           "    *) shift;;\n"
                                           "  esac\n"
                                           "done\n"
                                           "echo '==PROF== Connected to process'\n"
                                           "exec \"$@\"\n");
  run_request req;
  req.worker_command = {FAKE_WORKER, "--rows"};
  req.profiler = ncu;
  req.profile_report = dir.str() + "/profiles/p";
  sweep_result out;
  out.results = {passed_row("a", 256), passed_row("b", 256), passed_row("c", 512),
                 passed_row("copy", 0)};
  std::vector<profile_target> targets;
  for (std::size_t i = 0; i < out.results.size(); ++i) targets.push_back(target(i, out.results[i]));
  family_registry families;
  std::vector<std::string> progress;
  profile_rows(
      families, req, targets, out,
      [&](const char* phase, std::size_t done, std::size_t total, const std::string& what) {
        progress.push_back(std::string(phase) + " " + std::to_string(done) + "/" +
                           std::to_string(total) + " " + what);
      });
  EXPECT_EQ(out.profile.error, "");
  EXPECT_TRUE(out.profile.requested);
  EXPECT_EQ(out.profile.rows, 4u);
  EXPECT_EQ(out.profile.report, req.profile_report + ".ncu-rep");
  EXPECT_EQ(out.profile.log, req.profile_report + ".log");
  EXPECT_FALSE(std::filesystem::exists(req.profile_report + ".csv")) << "the import is not kept";
  ASSERT_EQ(progress.size(), 4u);
  EXPECT_EQ(progress[1], "profiling 2/4 b block 256, " + out.results[1].config.describe());
  // The worker was given each row's range, in order.
  const std::string log = test::read_file(out.profile.log);
  EXPECT_NE(log.find("==PROF== Connected"), std::string::npos) << log;
  EXPECT_NE(log.find("profile_range kl/row0\nprofile_range kl/row1\nprofile_range kl/row2\n"
                     "profile_range kl/row3\n"),
            std::string::npos)
      << log;

  for (const auto& r : out.results) ASSERT_TRUE(r.profile) << r.variant.name;
  EXPECT_EQ(out.results[0].profile->kernels, 1);
  EXPECT_DOUBLE_EQ(*out.results[0].profile->dram_pct, 61.552393);
  EXPECT_EQ(out.results[0].profile->range, "kl/row0");
  EXPECT_EQ(out.results[0].profile->report, out.profile.report);
  EXPECT_EQ(out.results[1].profile->kernels, 2);
  EXPECT_NEAR(out.results[1].profile->duration_us, 105.44, 1e-9);
  EXPECT_EQ(out.results[2].profile->kernels, 1);
  EXPECT_DOUBLE_EQ(*out.results[2].profile->dram_pct, 62.151129);
  EXPECT_EQ(out.results[3].profile->kernels, 0);
  EXPECT_FALSE(out.results[3].profile->dram_pct);
  EXPECT_NE(out.results[3].profile->note.find("no kernel ran in its range"), std::string::npos);
  for (const auto& r : out.results) EXPECT_EQ(r.status, outcome::passed);  // the sweep's own

  std::ostringstream table;
  print_profile_table(table, out.results, out.profile, false);
  const std::string t = table.str();
  EXPECT_NE(t.find("== profile: Nsight Compute"), std::string::npos) << t;
  EXPECT_NE(t.find("top stalls"), std::string::npos) << t;
  EXPECT_NE(t.find("report: " + out.profile.report), std::string::npos) << t;
  EXPECT_NE(t.find("61.9"), std::string::npos) << t;  // row b: 61.89% of DRAM, time-weighted
  EXPECT_EQ(t.find("\nprofile: "), std::string::npos) << "no error:\n" << t;
}

// ncu without the rights to read the counters, or failing at all: no report, the rows as they
// were, and the reason, once, with the log to read.
TEST(ProfilePass, NcuThatFailsLeavesTheRowsAndSaysWhy) {
  test::temp_dir dir("profile_fail");
  const std::string ncu = write_script(
      dir, "ncu",
      "#!/bin/sh\n"
      "echo '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
      "Performance Counters on the target device 0.'\n"
      "exit 1\n");
  run_request req;
  req.worker_command = {FAKE_WORKER, "--rows"};
  req.profiler = ncu;
  req.profile_report = dir.str() + "/p";
  sweep_result out;
  out.results = {passed_row("a", 256)};
  family_registry families;
  profile_rows(families, req, {target(0, out.results[0])}, out, {});
  EXPECT_EQ(out.profile.report, "");
  EXPECT_EQ(out.profile.error.rfind("ncu wrote no report: ERR_NVGPUCTRPERM - The user does not "
                                    "have permission",
                                    0),
            0u)
      << out.profile.error;
  EXPECT_NE(out.profile.error.find("see " + out.profile.log), std::string::npos);
  EXPECT_FALSE(out.results[0].profile);
  EXPECT_EQ(out.results[0].status, outcome::passed);
  std::ostringstream table;
  print_profile_table(table, out.results, out.profile, false);
  EXPECT_EQ(test::count_of(table.str(), "ERR_NVGPUCTRPERM"), 1u) << table.str();

  // Nothing passed: nothing to profile, said as much.
  sweep_result none;
  profile_rows(families, req, {}, none, {});
  EXPECT_EQ(none.profile.error, "no row passed, so none was profiled");
  // No profile asked for: no section at all.
  std::ostringstream quiet;
  print_profile_table(quiet, none.results, profile_run{}, false);
  EXPECT_EQ(quiet.str(), "");
}

// --- finding ncu ---

TEST(ProfileTool, FindsAnExecutableInTheFoldersInOrder) {
  test::temp_dir dir("find_ncu");
  write_script(dir, "a/ncu", "#!/bin/sh\n");
  dir.write("b/ncu", "not executable");
  write_script(dir, "c/ncu", "#!/bin/sh\n");
  std::filesystem::create_directories(dir.path() / "d/ncu");  // a folder of that name
  const std::string a = dir.str() + "/a", b = dir.str() + "/b", c = dir.str() + "/c",
                    d = dir.str() + "/d";
  EXPECT_EQ(worker::find_program("ncu", {b, d, c, a}), c + "/ncu");
  EXPECT_EQ(worker::find_program("ncu", {a + "/", c}), a + "/ncu");
  EXPECT_EQ(worker::find_program("ncu", {b, d, ""}), "");
  EXPECT_EQ(worker::path_folders((a + "::" + b + ":").c_str()), (std::vector<std::string>{a, b}));
  EXPECT_TRUE(worker::path_folders(nullptr).empty());
}

// Without ncu, --profile is a usage error before anything runs, naming where it looked; a --ncu
// that is not a program is one too.
TEST(ProfileTool, WithoutNcuTheRunStopsWithAClearMessage) {
  test::temp_dir dir("no_ncu");
  const std::string rows = " --profile --no-plugins --variant reduce5 --block 256 --size 2^10";
  const auto r =
      test::run_command("env CUDA_HOME=" + dir.str() + " PATH=" + dir.str() + " " + KERNLAB_BINARY +
                        " --config /dev/null --kernels-dir " + test::kernels_dir() + rows);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(
      r.output.find("kernlab: --profile needs Nsight Compute (ncu): not found in " + dir.str() +
                    "/bin ($CUDA_HOME/bin) or on PATH; install it or pass "
                    "--ncu PATH"),
      std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("reduce5  "), std::string::npos) << "nothing ran:\n" << r.output;

  const auto bad = test::run_kernlab("--kernels-dir " + test::kernels_dir() + rows + " --ncu " +
                                     dir.str() + "/nothing");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--ncu " + dir.str() + "/nothing: not an executable file"),
            std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace kl
