// Results files and what is made from them: the JSON round trip, CSV, compare's noise rule, the
// SVG plot, and the occupancy arithmetic behind --resources. No GPU needed.
#include "core/errors.hpp"
#include "cuda/occupancy.hpp"
#include "report/exports.hpp"
#include "report/output_file.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <regex>
#include <sstream>
#include <thread>

namespace kl {
namespace {

result_record make_record(const std::string& name, unsigned block, double median_us, double noise,
                          outcome status = outcome::passed) {
  result_record r;
  r.variant.family = "reduce";
  r.variant.name = name;
  r.variant.origin_path = "kernels_src/reduce/" + name + ".cu";
  r.variant.entry = name + "<BLOCK, T, OP>";
  r.variant.blocks = {128, 256};
  r.variant.tile = "2 * BLOCK";
  r.variant.order = 3;
  r.config = {"int32", "sum", "exact", 12345, {{"N", std::uint64_t{1u << 24}}}};
  r.block = block;
  r.status = status;
  r.bytes = 4.0 * (1u << 24);
  r.compile_ms = 81.5;
  r.load_ms = 0.25;
  r.validate_ms = 3.5;
  if (status == outcome::passed) {
    timing_stats t;
    t.samples = 1234;
    t.median_ms = median_us / 1e3;
    t.min_ms = t.median_ms * 0.99;
    t.max_ms = t.median_ms * 1.2;
    t.mean_ms = t.median_ms * 1.01;
    t.noise = noise;
    t.timed_out = noise > 0.005;
    t.sm_clock_min_mhz = 1755;
    t.sm_clock_max_mhz = 1980;
    t.clock_dropped = true;
    r.timing = t;
    r.resources = nvrtc::resource_usage{26, 1024, 0, 0, 0};
    r.occupancy = occupancy_info{8, 1.0};
  } else {
    r.message = "expected 5, got 4, said \"the kernel\", on two\nlines";
    r.check.expected = "5";
    r.check.got = "4";
  }
  return r;
}

nlohmann::json results_of(std::vector<result_record> records) {
  sweep_result sweep;
  sweep.arch = "sm_90";
  cuda::device_info d;
  d.name = "Test GPU";
  d.uuid = "GPU-test";
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 50u << 20;
  sweep.device = d;
  sweep.results = std::move(records);
  run_context ctx;
  ctx.command = {"kernlab", "--json", "x.json"};
  ctx.date = "2026-11-22T03:45:13Z";
  ctx.kernlab_version = "0.1.0";
  ctx.nvrtc_version = "13.0";
  ctx.seed = 12345;
  return results_to_json(sweep, ctx);
}

TEST(ResultsJson, RoundTripKeepsEveryField) {
  auto cub = make_record("cub", 0, 100, 0.002);
  cub.variant.origin = origin_kind::plugin;
  cub.variant.is_baseline = true;
  cub.variant.blocks.clear();
  const std::vector<result_record> in = {make_record("reduce5", 256, 120.5, 0.003), cub,
                                         make_record("broken", 128, 0, 0, outcome::wrong_result)};
  const auto j = results_of(in);
  // Through text and back, as a file would go.
  const auto out = records_from_results(nlohmann::json::parse(j.dump()));
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE(in[i].variant.name);
    EXPECT_EQ(out[i].variant, in[i].variant);
    EXPECT_EQ(out[i].config.describe(), in[i].config.describe());
    EXPECT_EQ(out[i].config.seed, in[i].config.seed);
    EXPECT_EQ(out[i].block, in[i].block);
    EXPECT_EQ(out[i].status, in[i].status);
    EXPECT_EQ(out[i].message, in[i].message);
    EXPECT_EQ(out[i].check.expected, in[i].check.expected);
    EXPECT_EQ(out[i].check.got, in[i].check.got);
    EXPECT_DOUBLE_EQ(out[i].bytes, in[i].bytes);
    EXPECT_DOUBLE_EQ(out[i].compile_ms, in[i].compile_ms);
    ASSERT_EQ(out[i].timing.has_value(), in[i].timing.has_value());
    if (in[i].timing) {
      EXPECT_NEAR(out[i].timing->median_ms, in[i].timing->median_ms, 1e-12);
      EXPECT_EQ(out[i].timing->samples, in[i].timing->samples);
      EXPECT_DOUBLE_EQ(out[i].timing->noise, in[i].timing->noise);
      EXPECT_EQ(out[i].timing->timed_out, in[i].timing->timed_out);
      EXPECT_EQ(out[i].timing->clock_dropped, in[i].timing->clock_dropped);
      EXPECT_EQ(out[i].timing->sm_clock_min_mhz, 1755);
      EXPECT_EQ(out[i].resources->registers, 26);
      EXPECT_EQ(out[i].occupancy->blocks_per_sm, 8);
    }
  }
  // The derived fields: throughput, % of peak, and the ratio to the baseline in the same group.
  EXPECT_EQ(j["records"][0]["baseline"], "reduce.cub");
  EXPECT_NEAR(j["records"][0]["x_baseline"].get<double>(), 100 / 120.5, 1e-9);
  EXPECT_NEAR(j["records"][1]["x_baseline"].get<double>(), 1.0, 1e-12);
  EXPECT_TRUE(j["records"][2]["x_baseline"].is_null());
  EXPECT_NEAR(j["records"][0]["percent_of_peak"].get<double>(),
              j["records"][0]["gbps"].get<double>() / 3352.32 * 100, 1e-6);
  EXPECT_EQ(j["reproducibility"]["device"]["name"], "Test GPU");
  EXPECT_EQ(j["reproducibility"]["seed"], 12345);
  EXPECT_EQ(j["version"], results_format_version);
}

// A point of a tunable file says which file and which point it is in its descriptor, named or
// not; the fields go through a results file (and the worker's messages, which carry records the
// same way) and come back equal.
TEST(ResultsJson, APointsDescriptorRoundTrips) {
  auto named = make_record("reduce_unrolling4", 256, 50, 0.003);
  named.variant.tunable_file = "reduce_unrolling";
  named.variant.point = {{"UNROLL", 4}, {"NEG", -3}};
  named.variant.named_point = true;
  named.variant.params = {{"UNROLL", "4"}, {"NEG", "-3"}};
  named.variant.defines = {{"UNROLL", std::nullopt}, {"SCALE", -3}};
  auto unnamed = named;
  unnamed.variant.name = "reduce_unrolling[UNROLL=16;NEG=-3]";
  unnamed.variant.point = {{"UNROLL", 16}, {"NEG", -3}};
  unnamed.variant.named_point = false;
  const auto j = results_of({named, unnamed});
  const auto out = records_from_results(nlohmann::json::parse(j.dump()));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].variant, named.variant);
  EXPECT_EQ(out[1].variant, unnamed.variant);
  EXPECT_TRUE(out[0].variant.named_point);
  EXPECT_EQ(out[1].variant.point, unnamed.variant.point);
  // A plain variant's descriptor has them empty, and says so.
  const auto plain_file = results_of({make_record("reduce5", 256, 1, 0)});
  const auto& plain = plain_file["records"][0]["variant"];
  EXPECT_EQ(plain.at("tunable_file"), "");
  EXPECT_TRUE(plain.at("point").empty());
  EXPECT_EQ(plain.at("named_point"), false);
  // A malformed point is refused, naming the key.
  auto bad = j;
  bad["records"][0]["variant"]["point"] = {{"UNROLL", 2.5}};
  EXPECT_THROW(records_from_results(bad), std::runtime_error);
  bad["records"][0]["variant"]["point"] = {"UNROLL", 4};
  try {
    records_from_results(bad);
    ADD_FAILURE() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"point\""), std::string::npos) << e.what();
  }
}

// Files written before named points have none of the three fields: they read as before, the
// descriptor's fields empty.
// Version 2 has every field in every record: a reader guesses nothing. A file of version 1 (the
// weeks before the first release) is refused, naming the script that rewrites it.
TEST(ResultsJson, EveryFieldIsRequiredAndVersion1NamesItsConverter) {
  auto j = results_of({make_record("k[ITEMS=4]", 256, 50, 0.003)});
  for (const char* key : {"tunable_file", "point", "named_point"}) {
    auto without = j;
    without["records"][0]["variant"].erase(key);
    try {
      records_from_results(without);
      ADD_FAILURE() << "a record without \"" << key << "\" was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  j["version"] = 1;
  try {
    records_from_results(j);
    ADD_FAILURE() << "version 1 was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/results_v1_to_v2.py"), std::string::npos)
        << e.what();
  }
}

TEST(ResultsJson, RejectsOtherFiles) {
  EXPECT_THROW(records_from_results(nlohmann::json::parse("{\"a\": 1}")), std::runtime_error);
  auto j = results_of({make_record("reduce5", 256, 120.5, 0.003)});
  j["version"] = results_format_version + 1;
  EXPECT_THROW(records_from_results(j), std::runtime_error);
  test::temp_dir dir("json");
  EXPECT_THROW(read_results_file(dir.write("bad.json", "{not json")), std::runtime_error);
}

TEST(ResultsJson, RefusesNumbersOutOfRangeNamingTheKey) {
  // json's own conversion of 1e300 or -1 to an unsigned block is undefined behaviour.
  for (const nlohmann::json& bad : {nlohmann::json(1e300), nlohmann::json(-1),
                                    nlohmann::json(4294967296ULL), nlohmann::json(2.5)}) {
    auto j = results_of({make_record("reduce5", 256, 120.5, 0.003)});
    j["records"][0]["block"] = bad;
    try {
      records_from_results(j);
      ADD_FAILURE() << "block " << bad.dump() << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("\"block\""), std::string::npos) << e.what();
    }
  }
  auto j = results_of({make_record("reduce5", 256, 120.5, 0.003)});
  j["records"][0]["config"]["shape"] = {1024, -1024, 1024};
  EXPECT_THROW(records_from_results(j), std::runtime_error);
}

TEST(ResultsJson, ContentHashIsStable) {
  EXPECT_EQ(content_hash("kernlab"), content_hash("kernlab"));
  EXPECT_NE(content_hash("kernlab"), content_hash("kernlab "));
  EXPECT_EQ(content_hash("").size(), 16u);
}

// Splits CSV text into records of fields, honouring quotes (the reader a spreadsheet would use).
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"')
        field += '"', ++i;
      else if (c == '"')
        quoted = false;
      else
        field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(field), field.clear();
    } else if (c == '\n') {
      rows.back().push_back(field), field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  rows.pop_back();  // after the last newline
  return rows;
}

TEST(Csv, OneQuotedLinePerRecord) {
  std::ostringstream os;
  write_csv(results_of({make_record("reduce5", 256, 120.5, 0.003),
                        make_record("broken", 128, 0, 0, outcome::wrong_result)}),
            os);
  const auto rows = parse_csv(os.str());
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& r : rows) EXPECT_EQ(r.size(), rows[0].size());
  EXPECT_EQ(rows[0][0], "family");
  EXPECT_EQ(rows[1][1], "reduce5");
  EXPECT_EQ(rows[1][10], "120.5");
  EXPECT_EQ(rows[2][9], "wrong_result");
  ASSERT_EQ(rows[0][29], "message");
  EXPECT_EQ(rows[2][29], "expected 5, got 4, said \"the kernel\", on two\nlines");
  // Columns added for qam256 and occupancy come after it.
  EXPECT_EQ(rows[0][30], "real_axes");
  EXPECT_EQ(rows[0][31], "blocks_per_sm");
}

TEST(Compare, MarksOnlyChangesBeyondTheNoiseOfBothRuns) {
  const auto before =
      results_of({make_record("a", 128, 100, 0.01), make_record("b", 128, 100, 0.01),
                  make_record("c", 128, 100, 0.01), make_record("gone", 128, 10, 0.01),
                  make_record("d", 128, 100, 0.01)});
  const auto after =
      results_of({make_record("a", 128, 97, 0.01),      // -3 %: beyond 1 % and 1 %
                  make_record("b", 128, 103, 0.05),     // +3 %: within the new 5 %
                  make_record("c", 128, 100.5, 0.002),  // +0.5 %: within 1 %
                  make_record("new", 128, 10, 0.01), make_record("d", 128, 0, 0, outcome::failed)});
  std::ostringstream os;
  const auto s = compare_results(before, after, os);
  EXPECT_EQ(s.matched, 4);
  EXPECT_EQ(s.faster, 1);
  EXPECT_EQ(s.slower, 0);
  EXPECT_EQ(s.within_noise, 2);
  EXPECT_EQ(s.outcome_changed, 1);
  EXPECT_EQ(s.only_old, 1);
  EXPECT_EQ(s.only_new, 1);
  EXPECT_NE(os.str().find("! faster"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("-3.00%"), std::string::npos) << os.str();
}

TEST(Plot, OneBarPerPassedRowAndMarksForFailures) {
  auto cub = make_record("cub", 0, 100, 0.002);
  cub.variant.is_baseline = true;
  auto other_size = make_record("reduce5", 128, 2000, 0.001);
  other_size.config.axes = {{"N", std::uint64_t{1} << 28}};
  std::ostringstream os;
  write_svg(
      results_of({make_record("reduce5", 128, 120, 0.003), make_record("reduce5", 256, 110, 0.003),
                  cub, make_record("broken", 128, 0, 0, outcome::failed), other_size}),
      os);
  const std::string svg = os.str();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  // Two panels (two sizes), four passed rows as bars, one failure as a mark.
  const std::regex bar("<rect class=\"bar\" ");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(svg.begin(), svg.end(), bar), std::sregex_iterator()), 4);
  EXPECT_NE(svg.find("reduce int32 sum n=16777216"), std::string::npos);
  EXPECT_NE(svg.find("reduce int32 sum n=268435456"), std::string::npos);
  EXPECT_NE(svg.find("broken block 128: failed"), std::string::npos);
  EXPECT_NE(svg.find("theoretical peak"), std::string::npos);
  EXPECT_NE(svg.find(">cub "), std::string::npos);  // the baseline line's label
  // Every opened element is closed or self-closed (a cheap well-formedness check).
  const auto count = [&](const std::string& s) {
    std::size_t n = 0;
    for (auto p = svg.find(s); p != std::string::npos; p = svg.find(s, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<g>"), count("</g>"));
  EXPECT_EQ(count("<text"), count("</text>"));
}

// Issue: a --sanitize run printed "best: ... 0.0 GB/s" though nothing was timed: a row run under
// compute-sanitizer is validated and run once at the sanitizer's pace. It gets no time, no
// throughput, no speedup, and no best line.
TEST(Table, SanitizedRowsAreNotTimed) {
  auto sanitized = [](const std::string& name, unsigned block) {
    result_record r = make_record(name, block, 26203.9, 0.0);
    r.sanitizer = "memcheck: clean, racecheck: clean";
    return r;
  };
  cuda::device_info d;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.l2_bytes = 50u << 20;
  std::ostringstream os;
  print_group(os, {sanitized("reduce0", 128), sanitized("reduce1", 128)}, d, table_options{});
  const std::string out = os.str();
  EXPECT_EQ(out.find("best:"), std::string::npos) << out;
  EXPECT_EQ(out.find("GB/s,"), std::string::npos) << out;
  EXPECT_EQ(out.find("26203.90"), std::string::npos) << out;  // the sanitizer's pace
  EXPECT_EQ(out.find("0.0 "), std::string::npos) << out;
  EXPECT_NE(out.find("memcheck: clean, racecheck: clean"), std::string::npos) << out;
  EXPECT_NE(out.find("2 row(s) validated under compute-sanitizer, not timed"), std::string::npos)
      << out;
  // The JSON has no throughput for them either.
  const auto j = results_of({sanitized("reduce0", 128)});
  EXPECT_TRUE(j["records"][0]["percent_of_peak"].is_null()) << j.dump(1);

  // A timed row beside them is still the best.
  std::ostringstream mixed;
  print_group(mixed, {sanitized("reduce0", 128), make_record("reduce1", 128, 100.0, 0.001)}, d,
              table_options{});
  EXPECT_NE(mixed.str().find("best: reduce1 block 128"), std::string::npos) << mixed.str();
}

TEST(Occupancy, MatchesTheCalculator) {
  const auto l = limits_for("sm_90");
  // 1024 threads at 32 registers: two blocks fill the SM.
  auto e = estimate_occupancy(32, 4096, 1024, l);
  EXPECT_EQ(e.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(e.fraction, 1.0);
  // One more register: 40 per thread after rounding, one block, half the SM empty.
  e = estimate_occupancy(33, 4096, 1024, l);
  EXPECT_EQ(e.blocks_per_sm, 1);
  EXPECT_DOUBLE_EQ(e.fraction, 0.5);
  EXPECT_EQ(e.limiter, "registers");
  // 100 KiB of shared memory per block: two blocks.
  e = estimate_occupancy(16, 100 * 1024, 128, l);
  EXPECT_EQ(e.blocks_per_sm, 2);
  EXPECT_EQ(e.limiter, "shared memory");
  // Small blocks hit the 32-block limit.
  e = estimate_occupancy(16, 0, 32, l);
  EXPECT_EQ(e.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(e.fraction, 0.5);
  EXPECT_EQ(e.limiter, "blocks");
}

// Issue: --resources --arch sm_75 (or sm_120) printed sm_90's limits without a word. Each
// architecture's limits, checked against occupancy worked out by hand from the calculator's rules
// (registers per warp rounded up to 256, whole warps per sub-partition of 16 Ki registers, the
// driver's 1 KiB per block from sm_80 on, shared memory in 256- or 128-byte units).
struct occupancy_case {
  const char* arch;
  int blocks;
  double fraction;
  const char* limiter;
};

void expect_occupancy(int regs, std::size_t shared, unsigned block,
                      const std::vector<occupancy_case>& cases) {
  for (const auto& c : cases) {
    const auto e = estimate_occupancy(regs, shared, block, limits_for(c.arch));
    EXPECT_EQ(e.blocks_per_sm, c.blocks)
        << c.arch << ": " << regs << " regs, " << shared << " B, " << block;
    EXPECT_NEAR(e.fraction, c.fraction, 1e-9) << c.arch;
    EXPECT_EQ(e.limiter, c.limiter) << c.arch;
  }
}

TEST(Occupancy, EveryArchitectureHasItsOwnLimits) {
  // 32 registers and 40 KiB of static shared memory at 128 threads: the registers allow 16 blocks
  // everywhere; shared memory decides. sm_80: 164 KiB / (40 + 1) KiB = 4; sm_90: 228 / 41 = 5;
  // sm_86, sm_89, sm_120: 100 / 41 = 2; sm_75 (64 KiB, nothing reserved): 1.
  expect_occupancy(32, 40 * 1024, 128,
                   {{"sm_75", 1, 128.0 / 1024, "shared memory"},
                    {"sm_80", 4, 512.0 / 2048, "shared memory"},
                    {"sm_86", 2, 256.0 / 1536, "shared memory"},
                    {"sm_89", 2, 256.0 / 1536, "shared memory"},
                    {"sm_90", 5, 640.0 / 2048, "shared memory"},
                    {"sm_100", 5, 640.0 / 2048, "shared memory"},
                    {"sm_120", 2, 256.0 / 1536, "shared memory"}});
  // One warp per block, 16 registers, no shared memory: the block limit (16, 32 or 24 blocks)
  // before the thread limit.
  expect_occupancy(16, 0, 32,
                   {{"sm_75", 16, 0.5, "blocks"},
                    {"sm_80", 32, 0.5, "blocks"},
                    {"sm_86", 16, 512.0 / 1536, "blocks"},
                    {"sm_89", 24, 0.5, "blocks"},
                    {"sm_90", 32, 0.5, "blocks"},
                    {"sm_100", 32, 0.5, "blocks"},
                    {"sm_120", 24, 0.5, "blocks"}});
  // 1024 threads at 64 registers: 2048 registers per warp, 8 warps per sub-partition, one block.
  // That fills sm_75's 1024 threads, two thirds of a 1536-thread SM, half of a 2048-thread one.
  expect_occupancy(64, 0, 1024,
                   {{"sm_75", 1, 1.0, "threads"},
                    {"sm_80", 1, 0.5, "registers"},
                    {"sm_86", 1, 1024.0 / 1536, "threads"},
                    {"sm_89", 1, 1024.0 / 1536, "threads"},
                    {"sm_90", 1, 0.5, "registers"},
                    {"sm_100", 1, 0.5, "registers"},
                    {"sm_120", 1, 1024.0 / 1536, "threads"}});
  // 65 registers: 2304 per warp x 32 warps is more than a block's 64 Ki: it does not fit at all.
  EXPECT_EQ(estimate_occupancy(65, 0, 1024, limits_for("sm_90")).blocks_per_sm, 0);
  // More shared memory than one block may have.
  EXPECT_EQ(estimate_occupancy(16, 100 * 1024, 128, limits_for("sm_86")).blocks_per_sm, 0);
  EXPECT_EQ(estimate_occupancy(16, 100 * 1024, 128, limits_for("sm_86")).limiter, "shared memory");
}

TEST(Occupancy, UnknownArchitecturesAreRefused) {
  EXPECT_FALSE(find_limits("sm_77"));
  EXPECT_FALSE(find_limits("sm_9"));
  EXPECT_FALSE(find_limits("gfx90a"));
  EXPECT_TRUE(find_limits("sm_90a"));  // an architecture-specific target has its base's limits
  EXPECT_TRUE(find_limits("sm_121"));
  try {
    limits_for("sm_77");
    FAIL() << "sm_77 has no limits";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sm_77"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sm_120"), std::string::npos) << e.what();
  }
  for (const auto& a : known_architectures()) EXPECT_TRUE(find_limits(a)) << a;
}

// A matmul record: a shape instead of a size, TFLOP/s beside GB/s.
result_record make_matmul(const std::string& name, std::uint64_t w, double median_us) {
  result_record r = make_record(name, 256, median_us, 0.001);
  r.variant.family = "matmul";
  r.config = {"float32",
              "mm",
              "exact",
              12345,
              {{"M", std::uint64_t{w}}, {"N", std::uint64_t{w}}, {"K", std::uint64_t{w}}}};
  r.bytes = 3.0 * 4 * static_cast<double>(w * w);
  r.flops = 2.0 * static_cast<double>(w * w * w);
  return r;
}

// Outputs are written whole or not at all: one helper for --json, --csv and plot -o.
TEST(OutputFile, AFullDeviceIsAnErrorNamingTheFile) {
  try {
    write_output_file("/dev/full", "some text\n");
    FAIL() << "writing to /dev/full did not throw";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
  }
}

TEST(OutputFile, AFailedWriteLeavesThePreviousFileAndNoTemporary) {
  test::temp_dir dir("output_limit");
  const std::string path = dir.write("run.json", "the previous run\n");
  // A file size limit makes the write fail half-way, as a full disk would (root included).
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    write_output_file(path, std::string(100000, 'x'));
  } catch (const io_error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(test::read_file(path), "the previous run\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1)
      << "a temporary file was left";
  // A folder that does not exist: an error naming the file, nothing created.
  EXPECT_THROW(write_output_file(dir.str() + "/no/such/run.json", "x"), io_error);
}

TEST(OutputFile, ReplacesAFileWholeAndWritesStreamsDirectly) {
  test::temp_dir dir("output_ok");
  const std::string path = dir.write("run.csv", "an older and much longer text than the new one\n");
  write_output_file(path, "new\n");
  EXPECT_EQ(test::read_file(path), "new\n");
  // A link at the name is replaced itself: the file it names is left as it was (it was renamed
  // onto, so a link planted in a shared folder replaced a file of the user's).
  const std::string link = dir.str() + "/link.csv";
  std::filesystem::create_symlink(path, link);
  write_output_file(link, "instead of the link\n");
  EXPECT_FALSE(std::filesystem::is_symlink(link));
  EXPECT_EQ(test::read_file(link), "instead of the link\n");
  EXPECT_EQ(test::read_file(path), "new\n");
  // A device and a FIFO cannot be renamed over: they are written directly.
  EXPECT_NO_THROW(write_output_file("/dev/null", "discarded\n"));
  const std::string fifo = dir.str() + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = test::read_file(fifo); });
  write_output_file(fifo, "through the fifo\n");
  reader.join();
  EXPECT_EQ(got, "through the fifo\n");
  EXPECT_THROW(write_output_file(dir.str(), "x"), io_error);  // a folder
}

TEST(OutputFile, TheCommandExitsWithFourAndKeepsNothingHalfWritten) {
  test::temp_dir dir("output_cli");
  const std::string json = dir.str() + "/run.json";
  auto r = test::run_kernlab("--compile-only --no-plugins --kernels-dir " + test::kernels_dir() +
                             " --variant reduce5 --block 256 --json " + json + " --csv /dev/full");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("/dev/full"), std::string::npos) << r.output;
  r = test::run_kernlab("--compile-only --no-plugins --kernels-dir " + test::kernels_dir() +
                        " --variant reduce5 --block 256 --json /dev/full");
  EXPECT_EQ(r.code, 4) << r.output;
  // /dev/stdout is written to the command's own output.
  r = test::run_kernlab("--compile-only --no-plugins --kernels-dir " + test::kernels_dir() +
                        " --variant reduce5 --block 256 --json /dev/stdout");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\"format\": \"kernlab-results\""), std::string::npos) << r.output;
}

TEST(OutputFile, PlotToAFullDiskFailsAndSaysNothingWasWritten) {
  test::temp_dir dir("plot_full");
  std::ostringstream text;
  text << results_of({make_record("reduce5", 256, 120.5, 0.003)}).dump();
  const std::string json = dir.write("run.json", text.str());
  const auto r = test::run_kernlab("plot " + json + " -o /dev/full");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_EQ(r.output.find("wrote"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/dev/full"), std::string::npos) << r.output;
}

TEST(OutputFile, ARunWithoutADeviceKeepsAnEarlierJson) {
  test::temp_dir dir("output_nodevice");
  const std::string json = dir.write("run.json", "the measurements of an earlier run\n");
  // No device visible, whatever the machine has.
  const auto r =
      test::run_command("CUDA_VISIBLE_DEVICES= " + std::string(KERNLAB_BINARY) +
                        " --config /dev/null --no-plugins --kernels-dir " + test::kernels_dir() +
                        " --variant reduce5 --block 256 --json " + json);
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(json + " not written: no device"), std::string::npos) << r.output;
  EXPECT_EQ(test::read_file(json), "the measurements of an earlier run\n");
}

TEST(Compare, MatchesRowsByTheWholeConfiguration) {
  // matmul 4096^3 and 1024^3 are different rows: never compared with each other.
  const auto before =
      results_of({make_matmul("naive", 4096, 100000), make_matmul("naive", 1024, 1500)});
  const auto after = results_of({make_matmul("naive", 1024, 1520)});
  std::ostringstream os;
  const auto s = compare_results(before, after, os);
  EXPECT_EQ(s.matched, 1);
  EXPECT_EQ(s.only_old, 1);
  EXPECT_EQ(s.within_noise, 0);
  EXPECT_NE(os.str().find("1024x1024x1024"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("+1.33%"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("-98."), std::string::npos) << os.str();
  // qam256's SNR is part of the configuration as well.
  auto low = make_record("demap", 256, 10, 0.001), high = low;
  low.config.op = high.config.op = "demap";
  low.config.axes.push_back({"SNR_DB", 10.0});
  high.config.axes.push_back({"SNR_DB", 30.0});
  EXPECT_EQ(compare_results(results_of({low}), results_of({high}), os).matched, 0);
  EXPECT_NE(record_key(to_json(low)), record_key(to_json(high)));
}

// A --devices file holds each baseline once per GPU: the copies pair GPU by GPU with another such
// file, and none of them is dropped as a duplicate key.
TEST(Compare, BaselinesMeasuredOnEveryGpuPairGpuByGpu) {
  auto on = [](result_record r, int ordinal) {
    r.gpu = cuda::gpu_identity{ordinal, "GPU-" + std::to_string(ordinal), "H100", 0, 0};
    return r;
  };
  const auto row = make_record("reduce5", 256, 100, 0.001);
  const auto cub0 = on(make_record("cub", 0, 50, 0.001), 0);
  const auto cub1 = on(make_record("cub", 0, 60, 0.001), 1);
  const auto before = results_of({on(row, 0), cub0, cub1});
  auto cub1_after = cub1;
  cub1_after.timing->median_ms = 0.0606;  // +1% on GPU 1 only
  const auto after = results_of({on(row, 1), cub0, cub1_after});
  std::ostringstream os;
  const auto s = compare_results(before, after, os);
  EXPECT_EQ(s.matched, 3) << os.str();  // the row (whichever GPU took it) and cub on each GPU
  EXPECT_EQ(s.only_new + s.only_old, 0) << os.str();
  EXPECT_NE(os.str().find("on GPU 1"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("+1.00%"), std::string::npos) << os.str();
}

// compare for CI: a regression is slower beyond the threshold and the noise of both runs, or a
// row that passed before and does not now; faster rows and small changes are not regressions.
TEST(Compare, ARegressionIsSlowerBeyondTheThresholdAndTheNoiseOrALostPass) {
  const auto before =
      results_of({make_record("a", 128, 100, 0.01), make_record("b", 128, 100, 0.01),
                  make_record("c", 128, 100, 0.01), make_record("d", 128, 100, 0.01),
                  make_record("e", 128, 100, 0.08), make_record("f", 128, 0, 0, outcome::failed)});
  const auto after =
      results_of({make_record("a", 128, 106, 0.01),                    // +6 %
                  make_record("b", 128, 104, 0.01),                    // +4 %
                  make_record("c", 128, 0, 0, outcome::wrong_result),  // lost its pass
                  make_record("d", 128, 90, 0.01),                     // -10 %
                  make_record("e", 128, 107, 0.01),                    // +7 %, noise 8 %
                  make_record("f", 128, 0, 0, outcome::failed)});      // failed both times
  std::ostringstream os;
  auto s = compare_results(before, after, os, 5);
  EXPECT_EQ(s.regressions, 2) << os.str();  // a and c
  EXPECT_EQ(test::count_of(os.str(), "!! regression"), 2u) << os.str();
  EXPECT_NE(os.str().find("2 regression(s): slower by more than 5%"), std::string::npos)
      << os.str();
  std::ostringstream os3;
  s = compare_results(before, after, os3, 3);
  EXPECT_EQ(s.regressions, 3) << os3.str();  // b too
  std::ostringstream same;
  EXPECT_EQ(compare_results(before, before, same, 0).regressions, 0) << same.str();
}

// `kernlab compare` as CI runs it: exit 1 on a regression, 0 without; runs from two GPU models
// are refused (exit 2) unless --force.
TEST(Compare, TheExitCodeSaysWhetherThereIsARegression) {
  test::temp_dir dir("compare_ci");
  const std::string before =
      dir.write("before.json", results_of({make_record("a", 128, 100, 0.01)}).dump());
  const std::string slower =
      dir.write("slower.json", results_of({make_record("a", 128, 106, 0.01)}).dump());
  auto other_gpu = results_of({make_record("a", 128, 100, 0.01)});
  other_gpu["reproducibility"]["device"]["name"] = "Other GPU";
  const std::string other = dir.write("other.json", other_gpu.dump());

  auto r = test::run_kernlab("compare " + before + " " + before);
  EXPECT_EQ(r.code, 0) << r.output;
  r = test::run_kernlab("compare " + before + " " + slower);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("!! regression"), std::string::npos) << r.output;
  r = test::run_kernlab("compare --threshold 10 " + before + " " + slower);
  EXPECT_EQ(r.code, 0) << r.output;
  r = test::run_kernlab("compare " + before + " " + other);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("Test GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Other GPU"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  r = test::run_kernlab("compare --force " + before + " " + other);
  EXPECT_EQ(r.code, 0) << r.output;
  r = test::run_kernlab("--threshold 5 --variant reduce5 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;  // a compare option elsewhere is a usage error
}

// A record timed in placements: its median and its interval, +-half_pct % of it.
result_record with_interval(const std::string& name, double median_us, double half_pct) {
  result_record r = make_record(name, 128, median_us, 0.02);  // noise 2%: the old rule says nothing
  r.timing->ci_low_ms = r.timing->median_ms * (1 - half_pct / 100);
  r.timing->ci_high_ms = r.timing->median_ms * (1 + half_pct / 100);
  r.timing->placements = 4;
  return r;
}

// With intervals, a row changed when they lie apart, whatever the noise of the samples; a
// regression is such a change slower than the threshold.
TEST(Compare, RowsWithIntervalsChangeWhenTheIntervalsLieApart) {
  const auto before = results_of({with_interval("a", 100, 0.3), with_interval("b", 100, 0.3),
                                  with_interval("c", 100, 0.3), with_interval("d", 100, 1.5)});
  const auto after = results_of({with_interval("a", 101, 0.3),    // +1%: apart, under 1.5%
                                 with_interval("b", 102, 0.3),    // +2%: apart, a regression
                                 with_interval("c", 100.4, 0.3),  // +0.4%: the intervals touch
                                 with_interval("d", 102, 1.5)});  // +2%: within d's wide ones
  std::ostringstream os;
  const auto s = compare_results(before, after, os, 1.5);
  EXPECT_EQ(s.matched, 4);
  EXPECT_EQ(s.slower, 2) << os.str();
  EXPECT_EQ(s.within_noise, 2) << os.str();
  EXPECT_EQ(s.regressions, 1) << os.str();
  EXPECT_EQ(test::count_of(os.str(), "!! regression"), 1u) << os.str();
  EXPECT_EQ(test::count_of(os.str(), "! slower"), 1u) << os.str();
  EXPECT_NE(os.str().find("+-0.30%"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("with the intervals apart"), std::string::npos) << os.str();
}

TEST(Compare, MarkdownListsTheChangedRowsForAPullRequest) {
  const auto before = results_of({with_interval("a", 100, 0.3), with_interval("b", 100, 0.3)});
  const auto after = results_of({with_interval("a", 100.1, 0.3), with_interval("b", 105, 0.3)});
  std::ostringstream os;
  const auto s = compare_results(before, after, os, 1.5, true);
  EXPECT_EQ(s.regressions, 1);
  const std::string md = os.str();
  EXPECT_NE(md.find("| configuration | before us |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `reduce.b block 128"), std::string::npos) << md;
  EXPECT_EQ(md.find("reduce.a block 128"), std::string::npos) << md;  // unchanged: not listed
  EXPECT_NE(md.find("**2 matched**"), std::string::npos) << md;
  std::ostringstream none;
  compare_results(before, before, none, 1.5, true);
  EXPECT_NE(none.str().find("No row changed beyond its interval."), std::string::npos)
      << none.str();
}

TEST(Compare, RunsLaunchedDifferentlyAreNamed) {
  auto graph = with_interval("a", 100, 0.3), stream = graph;
  stream.timing->launch = launch_mode::stream;
  std::ostringstream os;
  compare_results(results_of({stream}), results_of({graph}), os);
  EXPECT_NE(os.str().find("note: the old run launched its rows from the stream"), std::string::npos)
      << os.str();
  std::ostringstream same;
  compare_results(results_of({graph}), results_of({graph}), same);
  EXPECT_EQ(same.str().find("note:"), std::string::npos) << same.str();
}

TEST(Compare, RunsWithDifferentPlacementWorkersAreNamed) {
  const auto one = results_of({with_interval("a", 100, 0.3)});
  auto four = one;
  four["reproducibility"]["timing"]["placement_workers"] = 4;
  std::ostringstream os;
  compare_results(one, four, os);
  EXPECT_NE(os.str().find("in 1 worker process(es) and the new one in 4 (--placement-workers)"),
            std::string::npos)
      << os.str();
  std::ostringstream same;
  compare_results(four, four, same);
  EXPECT_EQ(same.str().find("note:"), std::string::npos) << same.str();
}

// Nothing matched is an error, not a pass: CI would read exit 0 as "no regression".
TEST(Compare, NoMatchedRowIsAnErrorAndFoldersPairTheirFilesByName) {
  test::temp_dir dir("compare_dirs");
  const std::string a = dir.write("a.json", results_of({with_interval("a", 100, 0.3)}).dump());
  const std::string other =
      dir.write("other.json", results_of({with_interval("z", 1, 0.3)}).dump());
  auto r = test::run_kernlab("compare " + a + " " + other);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find("nothing was compared"), std::string::npos) << r.output;

  dir.write("old/sweep.json", results_of({with_interval("a", 100, 0.3)}).dump());
  dir.write("old/gone.json", results_of({with_interval("a", 100, 0.3)}).dump());
  dir.write("new/sweep.json", results_of({with_interval("a", 106, 0.3)}).dump());
  dir.write("new/fresh.json", results_of({with_interval("a", 100, 0.3)}).dump());
  r = test::run_kernlab("compare " + dir.str() + "/old " + dir.str() + "/new");
  EXPECT_EQ(r.code, 1) << r.output;  // sweep.json's row is 6% slower
  EXPECT_NE(r.output.find("== sweep.json"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gone.json  (only in the old folder)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("fresh.json  (only in the new folder)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 file(s) compared, 1 rows matched, 1 regression(s)"), std::string::npos)
      << r.output;
  r = test::run_kernlab("compare --markdown " + dir.str() + "/old " + dir.str() + "/new");
  EXPECT_NE(r.output.find("### sweep.json"), std::string::npos) << r.output;
}

TEST(Compare, AZeroMedianIsNotAPercentageAndLongNamesKeepTheirLines) {
  const std::string long_name(300, 'v');
  const auto before =
      results_of({make_record("a", 128, 0, 0.01), make_record(long_name, 128, 10, 0.01),
                  make_record(long_name + "2", 128, 10, 0.01)});
  const auto after =
      results_of({make_record("a", 128, 5, 0.01), make_record(long_name, 128, 10, 0.01),
                  make_record(long_name + "2", 128, 10, 0.01)});
  std::ostringstream os;
  const auto s = compare_results(before, after, os);
  EXPECT_EQ(s.matched, 3);
  EXPECT_EQ(os.str().find("inf"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("n/a"), std::string::npos) << os.str();
  // A header, one line per row, the two summary lines: nothing merged or cut.
  EXPECT_EQ(test::count_of(os.str(), "\n"), 6u) << os.str();
  EXPECT_EQ(test::count_of(os.str(), long_name), 2u);
  EXPECT_EQ(test::count_of(os.str(), long_name + " block 128"), 1u);
}

// Well-formed enough for an XML parser: no raw markup characters or control bytes in text.
void expect_plain_xml_text(const std::string& svg) {
  for (char c : svg)
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
        << "control byte in the SVG";
  EXPECT_EQ(test::count_of(svg, "<text"), test::count_of(svg, "</text>"));
  EXPECT_EQ(test::count_of(svg, "<title>"), test::count_of(svg, "</title>"));
}

TEST(Plot, EscapesEveryTextAndClampsHugeValues) {
  auto odd = make_record("a<b>&\"c'\x01\xff", 128, 120, 0.003);
  auto huge = make_record("huge", 256, 1e-300, 0.003);  // a gbps near 1e300
  std::ostringstream os;
  auto results = results_of({odd, huge});
  results["reproducibility"]["device"]["name"] = "GPU <&> \x02";
  write_svg(results, os);
  const std::string svg = os.str();
  expect_plain_xml_text(svg);
  EXPECT_NE(svg.find("a&lt;b&gt;&amp;&quot;c&apos;??"), std::string::npos) << svg;
  EXPECT_NE(svg.find("GPU &lt;&amp;&gt; ?"), std::string::npos);
  EXPECT_EQ(svg.find("<b>"), std::string::npos);
  // Every bar stays in the plot: no negative or overflowing height.
  const std::regex height(
      "class=\"bar\" x=\"-?\\d+\" y=\"(-?\\d+)\" width=\"\\d+\" height=\"(-?\\d+)\"");
  int bars = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), height); it != std::sregex_iterator();
       ++it) {
    ++bars;
    EXPECT_GE(std::stoi((*it)[2]), 0);
    EXPECT_LE(std::stoi((*it)[2]), 240);
    EXPECT_GE(std::stoi((*it)[1]), 0);
  }
  EXPECT_EQ(bars, 2);
}

TEST(Plot, MatmulInTflopsWithAPanelPerShape) {
  std::ostringstream os;
  auto results = results_of({make_matmul("naive", 1024, 1500), make_matmul("naive", 4096, 100000),
                             make_record("reduce5", 256, 120, 0.003)});
  results["reproducibility"]["device"]["peak_fp32_tflops"] = 60.0;
  write_svg(results, os);
  const std::string svg = os.str();
  EXPECT_NE(svg.find(">matmul float32 1024x1024x1024</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">matmul float32 4096x4096x4096</text>"), std::string::npos);
  EXPECT_NE(svg.find(">reduce int32 sum n=16777216</text>"), std::string::npos);
  EXPECT_EQ(svg.find("n=0"), std::string::npos);
  EXPECT_EQ(test::count_of(svg, ">TFLOP/s (% of peak)</text>"), 2u);
  EXPECT_EQ(test::count_of(svg, ">GB/s (% of peak)</text>"), 1u);
  // 2 * 1024^3 flops in 1.5 ms: 1.43 TFLOP/s.
  EXPECT_NE(svg.find("naive block 256: 1.4 TFLOP/s"), std::string::npos) << svg;
  // No title is cut: the image is wide enough for a long one.
  const std::string long_family(200, 'f');
  auto wide = make_record("x", 256, 10, 0.001);
  wide.variant.family = long_family;
  std::ostringstream os2;
  write_svg(results_of({wide}), os2);
  std::smatch m;
  const std::string svg2 = os2.str();
  ASSERT_TRUE(std::regex_search(svg2, m, std::regex("<svg [^>]*width=\"(\\d+)\"")));
  EXPECT_GT(std::stoi(m[1]), 112 + 200 * 7);
}

// A bandwidth-bound family that also counts its flops (a data family's axpy) is drawn in GB/s:
// the record's roofline decides, not whether it has flops.
TEST(Plot, TheRecordsRooflineDecidesTheUnit) {
  auto axpy = make_record("simple", 256, 100, 0.001);
  axpy.variant.family = "axpy";
  axpy.config = {"float32", "", "exact", 12345, {{"N", std::uint64_t{1000003}}}};
  axpy.bytes = 12.0 * 1000003;
  axpy.flops = 2.0 * 1000003;
  axpy.roofline = "bandwidth";
  auto mm = make_matmul("naive", 1024, 1500);
  mm.roofline = "compute";
  auto results = results_of({axpy, mm});
  results["reproducibility"]["device"]["peak_fp32_tflops"] = 60.0;
  EXPECT_EQ(results.at("records").at(0).at("roofline"), "bandwidth");
  std::ostringstream os;
  write_svg(results, os);
  const std::string svg = os.str();
  EXPECT_NE(svg.find(">axpy float32 n=1000003</text>"), std::string::npos) << svg;
  EXPECT_EQ(test::count_of(svg, ">TFLOP/s (% of peak)</text>"), 1u);
  EXPECT_EQ(test::count_of(svg, ">GB/s (% of peak)</text>"), 1u);
  // Read back, the record keeps it.
  EXPECT_EQ(records_from_results(results).at(0).roofline, "bandwidth");
}

TEST(Plot, APipelineResultIsAClearErrorNotABlankImage) {
  auto results = results_of({});
  results["pipeline"] = nlohmann::json::array({nlohmann::json::object()});
  std::ostringstream os;
  try {
    write_svg(results, os);
    FAIL() << "a pipeline result was drawn";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no sweep records (a --pipeline result)"),
              std::string::npos);
  }
  test::temp_dir dir("plot_pipeline");
  const std::string json = dir.write("pipeline.json", results.dump());
  const auto r = test::run_kernlab("plot " + json + " -o " + dir.str() + "/p.svg");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(json + ": no sweep records"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.str() + "/p.svg"));
}

}  // namespace
}  // namespace kl
