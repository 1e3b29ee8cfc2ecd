// Results files and what is made from them: the JSON round trip, CSV, compare's noise rule, the
// SVG plot, and the occupancy arithmetic behind --resources. No GPU needed.
#include "cuda/occupancy.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

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
  r.config = {"int32", "sum", 1u << 24, "exact", 12345, {}};
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

TEST(ResultsJson, RejectsOtherFiles) {
  EXPECT_THROW(records_from_results(nlohmann::json::parse("{\"a\": 1}")), std::runtime_error);
  auto j = results_of({make_record("reduce5", 256, 120.5, 0.003)});
  j["version"] = results_format_version + 1;
  EXPECT_THROW(records_from_results(j), std::runtime_error);
  test::temp_dir dir("json");
  EXPECT_THROW(read_results_file(dir.write("bad.json", "{not json")), std::runtime_error);
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
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
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
  EXPECT_EQ(rows[0][30], "snr_db");
  EXPECT_EQ(rows[0][31], "blocks_per_sm");
}

TEST(Compare, MarksOnlyChangesBeyondTheNoiseOfBothRuns) {
  const auto before = results_of({make_record("a", 128, 100, 0.01), make_record("b", 128, 100, 0.01),
                                  make_record("c", 128, 100, 0.01), make_record("gone", 128, 10, 0.01),
                                  make_record("d", 128, 100, 0.01)});
  const auto after = results_of({make_record("a", 128, 97, 0.01),    // -3 %: beyond 1 % and 1 %
                                 make_record("b", 128, 103, 0.05),   // +3 %: within the new 5 %
                                 make_record("c", 128, 100.5, 0.002),  // +0.5 %: within 1 %
                                 make_record("new", 128, 10, 0.01),
                                 make_record("d", 128, 0, 0, outcome::failed)});
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
  other_size.config.size = 1u << 28;
  std::ostringstream os;
  write_svg(results_of({make_record("reduce5", 128, 120, 0.003), make_record("reduce5", 256, 110, 0.003),
                        cub, make_record("broken", 128, 0, 0, outcome::failed), other_size}),
            os);
  const std::string svg = os.str();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  // Two panels (two sizes), four passed rows as bars, one failure as a mark.
  const std::regex bar("<rect class=\"bar\" ");
  EXPECT_EQ(std::distance(std::sregex_iterator(svg.begin(), svg.end(), bar), std::sregex_iterator()), 4);
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
    EXPECT_EQ(e.blocks_per_sm, c.blocks) << c.arch << ": " << regs << " regs, " << shared << " B, " << block;
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
  EXPECT_TRUE(find_limits("sm_90a"));   // an architecture-specific target has its base's limits
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

}  // namespace
}  // namespace kl
