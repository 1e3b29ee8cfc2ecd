// kernlab tune without a GPU: the space a file's tunables make, the tuning store, the exports,
// and the command line.
#include "core/errors.hpp"
#include "core/utf8.hpp"
#include "report/tune_report.hpp"
#include "spec/metadata.hpp"
#include "test_util.hpp"
#include "tune/selector.hpp"
#include "tune/space.hpp"
#include "tune/store.hpp"
#include "tune_fixture.hpp"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>

namespace kl {
namespace {

registry_entry entry_of(const variant_descriptor& d) {
  registry_entry e;
  e.descriptor = d;
  e.source = "// source";
  return e;
}

// The points of a tunable header, as registry entries.
std::vector<registry_entry> points_of(const std::string& header, const std::string& path) {
  std::vector<registry_entry> out;
  for (const auto& p : parse_header(header, path).points) out.push_back(entry_of(p));
  return out;
}

const char* items_header =
    "/* kernlab\nfamily:  reduce\nentry:   k<BLOCK, ITEMS, U, T, OP>\nblocks:  128 256 512 "
    "1024\ntile:    ITEMS * BLOCK\ntune:    ITEMS = 4, 1, 2; U = 1, 2\nrequire: BLOCK * ITEMS <= "
    "1024; U <= ITEMS\n*/\n";

// The items header with two of its points named: one space all the same, its named points in it.
const std::string named_items_header =
    std::string(items_header)
        .replace(std::string(items_header).find("*/"), 2,
                 "points:  k_one(ITEMS=1, U=1) \"one item\"\npoints:  k_wide(U=2, ITEMS=4)\n*/");

TEST(TuneSpace, NamedPointsAreOfTheFilesSpaceWithTheirValues) {
  const auto entries = points_of(named_items_header, "reduce/k.cu");
  ASSERT_EQ(entries.size(), 5u);
  ASSERT_EQ(entries[0].descriptor.name, "k_one");
  std::vector<const registry_entry*> selected;
  for (const auto& e : entries) selected.push_back(&e);
  const auto spaces = tune::make_spaces(selected, {128, 256, 512, 1024}, 1024);
  ASSERT_EQ(spaces.size(), 1u);  // one file, whatever its points are called
  const tune::tuning_space& s = spaces[0];
  EXPECT_EQ(s.name, "k");
  EXPECT_EQ(s.candidates.size(), 14u);  // as without names
  // The values come from the descriptor, not from the name: "k_one" says none of them.
  EXPECT_EQ(s.candidates.front().entry->descriptor.name, "k_one");
  EXPECT_EQ(tune::describe(s.candidates.front()), "ITEMS=1 U=1 BLOCK=128");
  EXPECT_EQ(tune::describe(s.candidates[4]), "ITEMS=4 U=2 BLOCK=128");  // k_wide, after k_one's 4
  EXPECT_EQ(s.candidates[4].entry->descriptor.name, "k_wide");
  // A named point alone is a space of its own blocks.
  const auto one = tune::make_spaces({&entries[1]}, {128, 256, 512, 1024}, 1024);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].name, "k");
  EXPECT_EQ(one[0].candidates.size(), 2u);  // ITEMS=4: BLOCK * 4 <= 1024 at 128 and 256
}

TEST(TuneSpace, ParametersAreSortedAndEveryPointIsABlockOfAVariant) {
  const auto entries = points_of(items_header, "reduce/k.cu");
  std::vector<const registry_entry*> selected;
  for (const auto& e : entries) selected.push_back(&e);
  const auto spaces = tune::make_spaces(selected, {128, 256, 512, 1024}, 1024);
  ASSERT_EQ(spaces.size(), 1u);
  const tune::tuning_space& s = spaces[0];
  EXPECT_EQ(s.name, "k");
  EXPECT_EQ(s.family, "reduce");
  ASSERT_EQ(s.space.parameters.size(), 3u);
  EXPECT_EQ(s.space.parameters[0].name, "ITEMS");
  EXPECT_EQ(s.space.parameters[0].values, (std::vector<std::int64_t>{1, 2, 4}));  // sorted
  EXPECT_EQ(s.space.parameters[2].name, "BLOCK");
  // ITEMS=1,U=1 at 4 blocks; ITEMS=2 (U=1,2) at 3; ITEMS=4 (U=1,2) at 2: 4 + 6 + 4.
  EXPECT_EQ(s.candidates.size(), 14u);
  ASSERT_EQ(s.space.points.size(), s.candidates.size());
  for (std::size_t i = 0; i < s.candidates.size(); ++i) {
    const auto& c = s.candidates[i];
    const auto& coords = s.space.points[i];
    ASSERT_EQ(c.values.size(), 3u);
    for (std::size_t p = 0; p < 3; ++p)
      EXPECT_EQ(s.space.parameters[p].values[coords[p]], c.values[p].second) << tune::describe(c);
    EXPECT_EQ(c.values[2].second, c.block);
    EXPECT_LE(c.block * c.values[0].second, 1024) << tune::describe(c);
  }
  EXPECT_EQ(tune::describe(s.candidates.front()), "ITEMS=4 U=1 BLOCK=128");
  EXPECT_TRUE(s.turned_down.empty());
}

TEST(TuneSpace, TheDeviceLimitTurnsPointsDownWithTheReason) {
  const auto entries = points_of(items_header, "reduce/k.cu");
  std::vector<const registry_entry*> selected;
  for (const auto& e : entries) selected.push_back(&e);
  const auto spaces = tune::make_spaces(selected, {128, 256, 512, 1024}, 512);
  ASSERT_EQ(spaces.size(), 1u);
  EXPECT_EQ(spaces[0].candidates.size(), 13u);
  ASSERT_EQ(spaces[0].turned_down.size(), 1u);
  EXPECT_EQ(spaces[0].turned_down.begin()->second, 1u);
  EXPECT_NE(spaces[0].turned_down.begin()->first.find("block 1024"), std::string::npos);
  // Only the requested blocks.
  EXPECT_EQ(tune::make_spaces(selected, {256}, 1024)[0].candidates.size(), 5u);
}

TEST(TuneSpace, PluginsAndBrokenFilesHaveNothingToTune) {
  variant_descriptor plugin;
  plugin.family = "reduce";
  plugin.name = "cub";
  plugin.origin = origin_kind::plugin;
  const registry_entry p = entry_of(plugin);
  EXPECT_THROW(tune::make_spaces({&p}, {256}, 1024), std::invalid_argument);
  variant_descriptor d;
  d.family = "reduce";
  d.name = "bad";
  registry_entry broken = entry_of(d);
  broken.error = "reduce/bad.cu:3: entry: missing";
  try {
    tune::make_spaces({&broken}, {256}, 1024);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "reduce/bad.cu:3: entry: missing");
  }
}

result_record passed_record(const std::string& name, unsigned block, double ms) {
  result_record r;
  r.variant.family = "reduce";
  r.variant.name = name;
  r.config = problem_config{"int32", "sum", "exact", 7, {{"N", std::uint64_t{1000003}}}};
  r.block = block;
  r.status = outcome::passed;
  timing_stats t;
  t.samples = 40;
  t.median_ms = ms;
  t.min_ms = ms * 0.99;
  t.max_ms = ms * 1.02;
  t.mean_ms = ms;
  t.noise = 0.004;
  t.ci_low_ms = ms * 0.998;
  t.ci_high_ms = ms * 1.003;
  r.timing = t;
  r.bytes = 4e6;
  r.roofline = "bandwidth";
  return r;
}

TEST(TuningStore, ResultsSurviveAReopenAndALineCutShortIsSkipped) {
  test::temp_dir dir("tune_store");
  const std::string path = dir.str() + "/sub/tuning.jsonl";
  {
    tune::tuning_store s(path);
    EXPECT_EQ(s.size(), 0u);
    s.add({"a|full", passed_record("k[ITEMS=2]", 256, 0.5), {{"device", "X"}}});
    s.add({"b|full", passed_record("k[ITEMS=4]", 128, 0.25), {}});
    s.add({"a|full", passed_record("k[ITEMS=2]", 256, 0.4), {}});  // a later line wins
  }
  // A kill in the middle of a write leaves half a line.
  std::ofstream(path, std::ios::app) << "{\"key\": \"c|full\", \"rec";
  tune::tuning_store s(path);
  EXPECT_EQ(s.size(), 2u);
  ASSERT_EQ(s.warnings().size(), 1u);
  EXPECT_NE(s.warnings()[0].find("tuning.jsonl:4: not a stored result"), std::string::npos)
      << s.warnings()[0];
  ASSERT_NE(s.find("a|full"), nullptr);
  EXPECT_DOUBLE_EQ(s.find("a|full")->record.timing->median_ms, 0.4);
  EXPECT_EQ(s.find("b|full")->record.variant.name, "k[ITEMS=4]");
  EXPECT_EQ(s.find("b|full")->record.block, 128u);
  EXPECT_EQ(s.find("c|full"), nullptr);
  EXPECT_EQ(s.count_containing("|full"), 2u);
  // It still appends after the cut line, on a line of its own.
  s.add({"d|full", passed_record("k[ITEMS=1]", 512, 1.0), {}});
  EXPECT_EQ(tune::tuning_store(path).size(), 3u);
}

TEST(TuningStore, AnUnwritableStoreIsAnIoErrorNamingIt) {
  test::temp_dir dir("tune_store_ro");
  const std::string path = dir.write("file", "x") + "/tuning.jsonl";  // under a regular file
  try {
    tune::tuning_store s(path);
    FAIL() << "no exception";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// A finished tune, as the command makes it, over the items header's space.
struct finished_tune {
  std::vector<registry_entry> entries;
  std::vector<tune::tuning_space> spaces;
  std::vector<tune::tune_outcome> tunes;
  cuda::device_info device;
  run_context ctx;

  explicit finished_tune(const std::string& header = items_header) {
    entries = points_of(header, "reduce/k.cu");
    std::vector<const registry_entry*> selected;
    for (const auto& e : entries) selected.push_back(&e);
    spaces = tune::make_spaces(selected, {128, 256}, 1024);
    tune::tune_outcome t;
    t.space = &spaces[0];
    t.config = problem_config{"int32", "sum", "exact", 7, {{"N", std::uint64_t{1000003}}}};
    t.strategy = "exhaustive";
    t.budget = 3;
    t.seed = 7;
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& c = spaces[0].candidates[i];
      tune::evaluation e;
      e.point = i;
      e.record = passed_record(c.entry->descriptor.name, c.block, 1.0 - 0.2 * i);
      e.at_s = 1.5 * static_cast<double>(i + 1);
      t.evaluations.push_back(e);
    }
    tune::evaluation failed;
    failed.point = 3;
    failed.record.status = outcome::wrong_result;
    failed.record.message = "sum: expected 10, got 9\nmore";
    t.evaluations.push_back(failed);
    result_record cub = passed_record("cub", 0, 0.5);
    cub.variant.is_baseline = true;
    t.baselines.push_back(cub);
    t.stopped_by = "the budget";
    t.seconds = 6.5;
    tunes.push_back(t);
    device.name = "Test GPU";
    device.mem_clock_khz = 1000000;
    device.bus_width_bits = 4096;
    ctx.date = "2026-11-23T12:00:00Z";
    ctx.kernlab_version = "0.1.0";
    ctx.kernlab_commit = "abc1234";
    ctx.nvrtc_version = "13.0";
    ctx.command = {"kernlab", "tune", "--variant", "k"};
  }
};

TEST(TuneReport, TheTableRanksThePassedPointsAndListsTheFailures) {
  finished_tune f;
  std::ostringstream os;
  print_tune_table(os, f.tunes[0], f.device, {});
  print_tune_best(os, f.tunes[0], f.device);
  const std::string text = os.str();
  // The fastest (0.6 ms, the third point) ranks first, at 1.00x of the best and 0.83x of cub.
  ASSERT_NE(text.find("\n   1      4  2    128  passed      600.0"), std::string::npos) << text;
  EXPECT_NE(text.find("600.0"), std::string::npos) << text;
  EXPECT_LT(text.find("600.0"), text.find("800.0")) << text;
  EXPECT_NE(text.find("x cub"), std::string::npos) << text;
  EXPECT_NE(text.find("0.83x"), std::string::npos) << text;
  EXPECT_NE(text.find("WRONG"), std::string::npos) << text;
  EXPECT_NE(text.find("sum: expected 10, got 9"), std::string::npos) << text;
  EXPECT_EQ(text.find("more"), std::string::npos) << text;  // the first line only
  // Once, under the table, not also in the row.
  EXPECT_EQ(text.find("got 9"), text.rfind("got 9")) << text;
  EXPECT_NE(text.find("best: reduce.k"), std::string::npos) << text;
}

// A point the file's `points:` names is named after its row and in the best line.
TEST(TuneReport, ANamedPointSaysItsName) {
  finished_tune f(named_items_header);
  ASSERT_EQ(f.spaces[0].candidates[0].entry->descriptor.name, "k_one");
  std::ostringstream os;
  print_tune_table(os, f.tunes[0], f.device, {});
  print_tune_best(os, f.tunes[0], f.device);
  // k_one at 128 (1 ms) ranks third; its row ends with its name; the best (0.6 ms) has none.
  EXPECT_NE(os.str().find("\n   3      1  1    128  passed     1000.0"), std::string::npos)
      << os.str();
  EXPECT_NE(os.str().find("x  k_one\n"), std::string::npos) << os.str();
  EXPECT_EQ(os.str().find("(k_one)"), std::string::npos) << os.str();
  // Made the fastest, it is the best line's point, named.
  f.tunes[0].evaluations[0].record.timing->median_ms = 0.1;
  std::ostringstream best;
  print_tune_best(best, f.tunes[0], f.device);
  EXPECT_NE(best.str().find(": ITEMS=1 U=1 BLOCK=128 (k_one), 100.0 us"), std::string::npos)
      << best.str();
  // Markdown has no room after a row: the name stays out of its cells.
  std::ostringstream md;
  table_options markdown;
  markdown.markdown = true;
  print_tune_table(md, f.tunes[0], f.device, markdown);
  EXPECT_EQ(md.str().find("k_one"), std::string::npos) << md.str();
}

TEST(TuneReport, TheTuningTableHasTheBestPointAndItsProvenance) {
  finished_tune f;
  const auto j = tuning_table_json(f.tunes, f.device, f.ctx);
  EXPECT_EQ(j.at("format"), "kernlab-tuning-table");
  EXPECT_EQ(j.at("provenance").at("device"), "Test GPU");
  EXPECT_EQ(j.at("provenance").at("kernlab_commit"), "abc1234");
  const auto& t = j.at("tunes").at(0);
  EXPECT_EQ(t.at("variant"), "reduce.k");
  EXPECT_EQ(t.at("evaluated"), 4);
  EXPECT_EQ(t.at("failed"), 1);
  const auto& c = f.spaces[0].candidates[2];
  EXPECT_EQ(t.at("best").at("values").at("ITEMS"), c.values[0].second);
  EXPECT_EQ(t.at("best").at("values").at("BLOCK"), c.block);
  EXPECT_DOUBLE_EQ(t.at("best").at("timing").at("median_us").get<double>(), 600);
  EXPECT_NEAR(t.at("baseline").at("speedup").get<double>(), 0.5 / 0.6, 1e-12);
}

TEST(TuneReport, TheHeaderCompilesAndHoldsTheBestConfiguration) {
  finished_tune f;
  const std::string header = tuning_header(f.tunes, f.device, f.ctx);
  const auto& c = f.spaces[0].candidates[2];
  EXPECT_NE(header.find("#define REDUCE_K_ITEMS " + std::to_string(c.values[0].second)),
            std::string::npos)
      << header;
  EXPECT_NE(header.find("Test GPU"), std::string::npos) << header;
  // It is C++ a program can include: a constexpr table and the #defines, checked by the compiler.
  test::temp_dir dir("tune_header");
  const std::string h = dir.write("tuned.h", header);
  const std::string cpp =
      dir.write("use.cpp",
                "#include \"tuned.h\"\nstatic_assert(reduce_k_configs[0].n == 1000003);\n"
                "static_assert(reduce_k_configs[0].BLOCK == REDUCE_K_BLOCK);\nint main() {}\n");
  const auto r = test::run_command("c++ -std=c++17 -fsyntax-only " + cpp);
  EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
}

// A point raced out (--race) is marked in the table, counted under it and in the tuning table,
// and never the best, even where its rough median is the least.
TEST(TuneReport, RacedPointsAreMarkedCountedAndNeverTheBest) {
  finished_tune f;
  tune::tune_outcome& t = f.tunes[0];
  t.evaluations[0].record.timing->raced = true;
  t.evaluations[0].record.timing->median_ms = 0.1;  // rough, and would be the least
  ASSERT_NE(t.best(), nullptr);
  EXPECT_EQ(t.best()->point, 2u);
  EXPECT_EQ(t.raced(), 1u);
  std::ostringstream os;
  print_tune_table(os, t, f.device, {});
  EXPECT_NE(os.str().find("passed (raced)"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("(raced): 1 of 4 points were timed only until"), std::string::npos)
      << os.str();
  const auto j = tuning_table_json(f.tunes, f.device, f.ctx);
  EXPECT_EQ(j.at("tunes").at(0).at("raced"), 1);
  EXPECT_DOUBLE_EQ(j.at("tunes").at(0).at("found_after_s").get<double>(), 4.5);
  // Without it, nothing says so.
  finished_tune plain;
  std::ostringstream none;
  print_tune_table(none, plain.tunes[0], plain.device, {});
  EXPECT_EQ(none.str().find("raced"), std::string::npos) << none.str();
}

// The best line says how soon the search got within 1% of the best, and from where a warm start
// began; a size's warm start is the fastest points of the two nearest sizes tuned before it, of
// the same space and configuration otherwise.
TEST(TuneReport, AWarmStartFromTheNearestSizesAndWhenTheBestWasFound) {
  finished_tune f;
  std::ostringstream os;
  print_tune_best(os, f.tunes[0], f.device);
  EXPECT_NE(os.str().find("\nfound: within 1% of the best at evaluation 3 of 4, after 4.5 s of "
                          "6.5 s\n"),
            std::string::npos)
      << os.str();
  // A replay measured nothing: no wall time.
  tune::tune_outcome replayed = f.tunes[0];
  replayed.replayed_from = "space.json";
  std::ostringstream r;
  print_tune_best(r, replayed, f.device);
  EXPECT_NE(r.str().find("\nfound: within 1% of the best at evaluation 3 of 4\n"),
            std::string::npos)
      << r.str();
  std::vector<tune::tune_outcome> done;
  for (const unsigned shift : {10u, 20u, 26u, 14u}) {
    tune::tune_outcome t = f.tunes[0];
    t.config.axes = {{"N", std::uint64_t{1} << shift}};
    // The best point is a different one at each size: 2^10 -> 0, 2^20 -> 1, 2^26 and 2^14 -> 2.
    if (shift == 10 || shift == 20)
      t.evaluations[shift == 10 ? 0 : 1].record.timing->median_ms = 0.1;
    done.push_back(t);
  }
  tune::tune_outcome next = f.tunes[0];
  next.config.axes = {{"N", std::uint64_t{1} << 18}};
  const auto [points, from] = tune::warm_start(done, next);
  // 2^20's best (4x away), 2^14's best (16x), then 2^20's runners-up in order (2 was proposed
  // already, then 0) and 2^14's (1, already proposed).
  EXPECT_EQ(points, (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(from, (std::vector<std::string>{"int32 sum n=1048576", "int32 sum n=16384"}));
  // Bayes's prior: all the nearest size (2^20) measured that passed (point 3 failed).
  const auto prior = tune::prior_of(done, next);
  ASSERT_EQ(prior.size(), 3u);
  EXPECT_EQ(prior[1], (std::pair<std::size_t, double>{1, 0.1}));
  // With the points' grids, the prior is what the nearest size measured scaled to this size wave
  // by wave: point 1 cuts N into blocks of 2^18, 4 at 2^20 (one full wave of 4 resident blocks),
  // 1 at 2^18 (a quarter full), so its 0.1 ms there is 0.4 ms here. The warm start stays with
  // what was measured fastest.
  auto grids = std::make_shared<std::vector<tune::point_grid>>(f.spaces[0].candidates.size());
  (*grids)[1] = {{"ceil_div(N, 262144)"}, {}};
  std::vector<tune::tune_outcome> gridded = done;
  for (auto& t : gridded) {
    t.axis_names = {"N"};
    t.grids = grids;
    t.sm_count = 4;
    for (auto& e : t.evaluations) e.record.occupancy = occupancy_info{1, 0.5};
  }
  tune::tune_outcome at = next;
  at.axis_names = {"N"};
  at.grids = grids;
  at.sm_count = 4;
  const auto scaled = tune::prior_of(gridded, at);
  ASSERT_EQ(scaled.size(), 3u);
  EXPECT_EQ(scaled[0], prior[0]);  // no grid: as measured
  EXPECT_EQ(scaled[1].first, 1u);
  EXPECT_NEAR(scaled[1].second, 0.4, 1e-12);
  EXPECT_EQ(tune::warm_start(gridded, at).first, points);
  // Another dtype, another space or the same size: no warm start from it.
  next.config.dtype = "float32";
  EXPECT_TRUE(tune::warm_start(done, next).first.empty());
  EXPECT_TRUE(tune::prior_of(done, next).empty());
  // A size more than 32 times from the nearest one tuned keeps its warm start but gets no prior:
  // 2^4 is 64 times from 2^10, 2^5 32 times.
  next = f.tunes[0];
  next.config.axes = {{"N", std::uint64_t{1} << 4}};
  EXPECT_EQ(tune::warm_start(done, next).second.front(), "int32 sum n=1024");
  EXPECT_TRUE(tune::prior_of(done, next).empty());
  next.config.axes = {{"N", std::uint64_t{1} << 5}};
  EXPECT_EQ(tune::prior_of(done, next).size(), 3u);
  next = f.tunes[0];
  next.config.axes = {{"N", std::uint64_t{1} << 10}};
  EXPECT_EQ(tune::warm_start(done, next).second.front(), "int32 sum n=16384");
  next.start_points = points;
  next.started_from = from;
  std::ostringstream warm;
  print_tune_best(warm, next, f.device);
  EXPECT_NE(warm.str().find("(a warm start from the fastest points of int32 sum n=1048576 and "
                            "int32 sum "
                            "n=16384)"),
            std::string::npos)
      << warm.str();
}

// Tunes at several sizes give a selector: any size gets the measured configuration nearest in log
// scale, the first on a tie, at compile time as at run time.
TEST(RangeOrder, LargestFirstThenTheMiddleOfTheWidestGapGroupByGroup) {
  const auto cfg = [](const std::string& dtype, std::vector<std::uint64_t> shape) {
    problem_config c;
    c.dtype = dtype;
    c.op = "sum";
    for (const auto n : shape) c.axes.push_back({"", n});
    return c;
  };
  // 2^19 .. 2^28 as given (ascending): 2^28, the other end, then the middle of the widest gap
  // (2^23 and 2^24 are both 4 octaves from the nearest: the first given wins), then of those 2
  // octaves from the nearest (21, 25, 26) the first given, and so on.
  std::vector<problem_config> sizes;
  for (unsigned k = 19; k <= 28; ++k) sizes.push_back(cfg("int32", {std::uint64_t{1} << k}));
  std::vector<unsigned> octaves;
  for (const std::size_t i : tune::range_order(sizes)) octaves.push_back(19 + unsigned(i));
  EXPECT_EQ(octaves, (std::vector<unsigned>{28, 19, 23, 21, 25, 20, 22, 24, 26, 27}));
  // Each dtype is its own range, the groups in the order of their first configuration.
  const std::vector<problem_config> mixed = {cfg("int32", {1024}), cfg("float32", {4096}),
                                             cfg("int32", {4096}), cfg("float32", {1024}),
                                             cfg("int32", {2048})};
  EXPECT_EQ(tune::range_order(mixed), (std::vector<std::size_t>{2, 0, 4, 1, 3}));
  EXPECT_EQ(tune::range_order({cfg("int32", {5})}), (std::vector<std::size_t>{0}));
  // Shapes: the largest volume first, then the farthest by the product of the axes' ratios.
  const std::vector<problem_config> shapes = {
      cfg("float32", {1024, 1024, 1024}), cfg("float32", {1024, 4096, 1024}),
      cfg("float32", {4096, 4096, 4096}), cfg("float32", {2048, 2048, 2048})};
  EXPECT_EQ(tune::range_order(shapes), (std::vector<std::size_t>{2, 0, 3, 1}));
}

TEST(TuneReport, TheHeaderSelectsTheNearestMeasuredSize) {
  finished_tune f;
  // The same space tuned at 2^10, 2^20 and 2^24, its best point a different one each time.
  f.tunes[0].config.axes = {{"N", std::uint64_t{1} << 10}};
  for (const unsigned shift : {20u, 24u}) {
    tune::tune_outcome t = f.tunes[0];
    t.config.axes = {{"N", std::uint64_t{1} << shift}};
    t.evaluations[shift == 20 ? 0 : 1].record.timing->median_ms = 0.1;
    f.tunes.push_back(t);
  }
  const std::string header = tuning_header(f.tunes, f.device, f.ctx);
  const auto& c = f.spaces[0].candidates;
  test::temp_dir dir("tune_header_select");
  dir.write("tuned.h", header);
  const auto items = [&](std::size_t i) { return std::to_string(c[i].values[0].second); };
  const std::string cpp = dir.write(
      "use.cpp",
      "#include \"tuned.h\"\n"
      "static_assert(reduce_k_select(1).n == 1024);\n"
      "static_assert(reduce_k_select(1024).ITEMS == " +
          items(2) +
          ");\n"
          "static_assert(reduce_k_select(32767).n == 1024);\n"  // 32x above, 32x below: the first
          "static_assert(reduce_k_select(32769).n == 1048576);\n"
          "static_assert(reduce_k_select(1 << 20).ITEMS == " +
          items(0) +
          ");\n"
          "static_assert(reduce_k_select(4194304).n == 1048576);\n"  // 4x from each: the first
          "static_assert(reduce_k_select(4194305).n == 16777216);\n"
          "static_assert(reduce_k_select(1LL << 40).ITEMS == " +
          items(1) +
          ");\n"
          "int main(int argc, char**) { return reduce_k_select(argc).n == 1024 ? 0 : 1; }\n");
  const auto r = test::run_command("c++ -std=c++17 -Wall -Werror -o " + dir.str() + "/use " + cpp +
                                   " && " + dir.str() + "/use");
  EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
  // The same selector as data, for other languages: the rule and a row per size.
  const auto table = tuning_table_json(f.tunes, f.device, f.ctx);
  ASSERT_EQ(table.at("selectors").size(), 1u) << table.dump(1);
  const auto& sel = table.at("selectors").at(0);
  EXPECT_EQ(sel.at("rule"), "nearest_log");
  ASSERT_EQ(sel.at("table").size(), 3u);
  EXPECT_EQ(sel.at("table").at(1).at("sizes").at("n"), 1u << 20);
  EXPECT_EQ(sel.at("table").at(1).at("values").at("ITEMS"), c[0].values[0].second);
  EXPECT_EQ(table.at("tunes").at(1).at("found_at"), 1u);
  // Tunes that differ in more than their sizes get no selector, and say why.
  f.tunes[1].config.dtype = "float32";
  const std::string mixed = tuning_header(f.tunes, f.device, f.ctx);
  EXPECT_EQ(mixed.find("reduce_k_select("), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("No reduce_k_select: the table holds more than sizes"), std::string::npos)
      << mixed;
  EXPECT_TRUE(tuning_table_json(f.tunes, f.device, f.ctx).at("selectors").empty());
}

// A range tune where each size has a specialist (fastest there, 20% slower everywhere else) and
// one point is 2% from the best at every size: the nearest size's best is a poor guess between
// sizes, the point least bad at both neighbours a good one. Leave-one-out sees it, and the
// selector keeps the `between` rule, with a cell per gap.
struct specialists_tune {
  finished_tune f;
  static constexpr std::size_t generalist = 5;
  specialists_tune() {
    const tune::tune_outcome first = f.tunes[0];
    f.tunes.clear();
    for (std::size_t k = 0; k < 5; ++k) {
      tune::tune_outcome t = first;
      t.config.axes = {{"N", std::uint64_t{1} << (10 + 2 * k)}};
      t.evaluations.clear();
      for (std::size_t p = 0; p <= generalist; ++p) {
        const auto& c = f.spaces[0].candidates[p];
        tune::evaluation e;
        e.point = p;
        e.record = passed_record(c.entry->descriptor.name, c.block,
                                 p == k            ? 1.0
                                 : p == generalist ? 1.02
                                                   : 1.2);
        t.evaluations.push_back(e);
      }
      f.tunes.push_back(t);
    }
  }
  std::vector<const tune::tune_outcome*> tunes() const {
    std::vector<const tune::tune_outcome*> out;
    for (const auto& t : f.tunes) out.push_back(&t);
    return out;
  }
};

TEST(SizeSelector, BetweenMeasuredSizesThePointLeastBadAtBothNeighboursWins) {
  const specialists_tune s;
  const tune::size_selector sel = tune::fit_selector(s.tunes());
  EXPECT_EQ(sel.rule, tune::selector_rule::between);
  EXPECT_EQ(sel.check.sizes, 3u);  // the three inside the range, each left out in turn
  EXPECT_NEAR(sel.check.mean_loss_nearest, 0.2, 1e-9);
  EXPECT_NEAR(sel.check.mean_loss_between, 0.02, 1e-9);
  ASSERT_EQ(sel.cells.size(), 4u);  // one per gap
  for (const auto& c : sel.cells) {
    EXPECT_EQ(c.point, specialists_tune::generalist);
    EXPECT_NEAR(c.worst_loss, 0.02, 1e-9);
  }
  EXPECT_EQ(sel.pick({1024}), 0u);  // a measured size: its own best
  EXPECT_EQ(sel.pick({1u << 14}), 2u);
  EXPECT_EQ(sel.pick({2048}), specialists_tune::generalist);    // between 2^10 and 2^12
  EXPECT_EQ(sel.pick({100000}), specialists_tune::generalist);  // between 2^16 and 2^18
  EXPECT_EQ(sel.pick({100}), 0u);                               // outside: the nearest's best
  EXPECT_EQ(sel.pick({1u << 30}), 4u);
  // Raced out at every size (a tune with --race: 2% behind, yet the margin set lower): the point
  // still counts, at its rough figure, and the rule stays.
  specialists_tune raced;
  for (auto& t : raced.f.tunes)
    t.evaluations[specialists_tune::generalist].record.timing->raced = true;
  const tune::size_selector rough = tune::fit_selector(raced.tunes());
  EXPECT_EQ(rough.rule, tune::selector_rule::between);
  EXPECT_EQ(rough.pick({2048}), specialists_tune::generalist);
  // One point best everywhere: nothing to learn, the nearest rule stays.
  specialists_tune flat;
  for (auto& t : flat.f.tunes)
    for (auto& e : t.evaluations) e.record.timing->median_ms = e.point == 3 ? 0.5 : 1.0;
  const tune::size_selector plain = tune::fit_selector(flat.tunes());
  EXPECT_EQ(plain.rule, tune::selector_rule::nearest_log);
  EXPECT_TRUE(plain.cells.empty());
  EXPECT_EQ(plain.pick({2048}), 3u);
}

// Times that go by waves of blocks: point 0 cuts N into tiles of 1000, point 1 into tiles of 1500,
// and a wave (4 resident blocks) costs 1.0 and 1.45. At 6000 point 0 needs a second wave, point 1
// one; at 8000 point 1's second wave is a quarter empty. The nearest size's best misses both;
// scaling the nearest size's times by how full each point's last wave is finds them. Left out in
// turn, the waves rule wins, and the header computes its pick from the grids.
TEST(SizeSelector, TheWavesRuleScalesTheNearestSizesTimesByHowFullTheLastWaveIs) {
  finished_tune f;
  const tune::tune_outcome first = f.tunes[0];
  f.tunes.clear();
  auto grids = std::make_shared<std::vector<tune::point_grid>>(f.spaces[0].candidates.size());
  (*grids)[0] = {{"ceil_div(N, TILE)"}, {{"TILE", 1000}}};
  (*grids)[1] = {{"ceil_div(N, TILE)"}, {{"TILE", 1500}}};
  const auto waves = [](double n, double tile) { return std::ceil(std::ceil(n / tile) / 4); };
  for (const std::uint64_t n : {4000u, 6000u, 8000u, 12000u, 16000u}) {
    tune::tune_outcome t = first;
    t.config.axes = {{"N", n}};
    t.axis_names = {"N"};
    t.grids = grids;
    t.sm_count = 4;
    t.evaluations.clear();
    for (std::size_t p = 0; p < 2; ++p) {
      const auto& c = f.spaces[0].candidates[p];
      tune::evaluation e;
      e.point = p;
      e.record = passed_record(c.entry->descriptor.name, c.block,
                               p == 0 ? waves(n, 1000) : 1.45 * waves(n, 1500));
      e.record.occupancy = occupancy_info{1, 0.5};  // 1 block per SM, 4 SMs
      t.evaluations.push_back(e);
    }
    f.tunes.push_back(t);
  }
  std::vector<const tune::tune_outcome*> tunes;
  for (const auto& t : f.tunes) tunes.push_back(&t);
  const tune::size_selector sel = tune::fit_selector(tunes);
  EXPECT_TRUE(sel.check.waves);
  EXPECT_EQ(sel.rule, tune::selector_rule::waves);
  EXPECT_NEAR(sel.check.mean_loss_waves, 0, 1e-9);
  EXPECT_GT(sel.check.mean_loss_nearest, 0.1);
  EXPECT_NEAR(sel.waves.efficiency(1, {8000}), 0.75, 1e-12);  // 6 blocks in 2 waves of 4
  EXPECT_EQ(sel.pick({5000}), 1u);   // 6000's times: point 0's second wave is 5/8 full here
  EXPECT_EQ(sel.pick({7000}), 0u);   // 8000's
  EXPECT_EQ(sel.pick({12000}), 1u);  // measured: its own best
  // Without the grids (a family that plans its launch), no waves rule.
  for (auto& t : f.tunes) t.grids.reset();
  EXPECT_FALSE(tune::fit_selector(tunes).check.waves);
  for (auto& t : f.tunes) t.grids = grids;
  // Two sizes (4000 and 6000): neither lies between others, so each is judged from the other,
  // outside its range, and the waves rule is kept on that (a 2 x 2 grid of shapes is the same).
  const std::vector<const tune::tune_outcome*> two = {tunes[0], tunes[1]};
  const tune::size_selector pair = tune::fit_selector(two);
  EXPECT_TRUE(pair.check.outside);
  EXPECT_EQ(pair.check.sizes, 2u);
  EXPECT_EQ(pair.rule, tune::selector_rule::waves);
  EXPECT_NEAR(pair.check.mean_loss_waves, 0, 1e-9);
  EXPECT_NEAR(pair.check.mean_loss_nearest, (0.45 + 2 / 1.45 - 1) / 2, 1e-9);
  EXPECT_EQ(pair.pick({5000}), 1u);
  for (auto& t : f.tunes) t.grids.reset();
  EXPECT_EQ(tune::fit_selector(two).check.sizes, 0u);  // nothing to judge with nearest alone
  EXPECT_FALSE(tune::fit_selector(two).check.outside);
  for (auto& t : f.tunes) t.grids = grids;
  // The header picks the same at compile time.
  const std::string header = tuning_header(f.tunes, f.device, f.ctx);
  // The grid says N where the header's selector says n.
  EXPECT_NE(header.find("reduce_k_blocks(unsigned long p, long long n)"), std::string::npos)
      << header;
  EXPECT_NE(header.find("const long long N = n; const long long TILE = 1500; return "
                        "(reduce_k_ceil_div(N, TILE));"),
            std::string::npos)
      << header;
  test::temp_dir dir("tune_header_waves");
  dir.write("tuned.h", header);
  const auto& c = f.spaces[0].candidates;
  std::string checks;
  for (const auto& [at, p] : {std::pair{5000, 1}, {7000, 0}, {12000, 1}, {100000, 0}})
    for (const auto& [name, v] : c[static_cast<std::size_t>(p)].values)
      checks += "static_assert(reduce_k_select(" + std::to_string(at) + ")." + name +
                " == " + std::to_string(v) + ");\n";
  const std::string cpp =
      dir.write("use.cpp", "#include \"tuned.h\"\n" + checks + "int main() {}\n");
  const auto r = test::run_command("c++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only " + cpp);
  EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
  // And the JSON carries what the rule needs.
  const auto j = tuning_table_json(f.tunes, f.device, f.ctx).at("selectors").at(0);
  EXPECT_EQ(j.at("rule"), "waves");
  EXPECT_EQ(j.at("waves").at(0).at("grid").at(0), "ceil_div(N, TILE)");
  EXPECT_EQ(j.at("waves").at(1).at("resident"), 4);
  EXPECT_EQ(j.at("waves").at(1).at("times_us").size(), 5u);
  EXPECT_TRUE(j.at("leave_one_out").contains("waves"));
}

// A grid of shapes (M x N): leaving out one size would leave its M and its N measured elsewhere,
// so each measured value of an axis is left out as a slice, and the sizes on it are judged from
// their neighbours along that axis.
TEST(SizeSelector, OnAGridEachAxisValueIsLeftOutAsASlice) {
  specialists_tune s;
  const tune::tune_outcome first = s.f.tunes[0];
  s.f.tunes.clear();
  const std::uint64_t ms[] = {64, 256, 1024};
  for (std::size_t k = 0; k < 6; ++k) {
    tune::tune_outcome t = first;
    t.config.axes = {{"M", ms[k % 3]}, {"N", std::uint64_t{k < 3 ? 64u : 256u}}};
    t.axis_names = {"M", "N"};
    // Each size's specialist is point k % 3 (M decides), 20% slower elsewhere; point 5 is 2%
    // from the best everywhere.
    for (auto& e : t.evaluations)
      e.record.timing->median_ms = e.point == k % 3 ? 1.0 : e.point == 5 ? 1.02 : 1.2;
    s.f.tunes.push_back(t);
  }
  const tune::size_selector sel = tune::fit_selector(s.tunes());
  EXPECT_EQ(sel.check.sizes, 2u);  // M = 256 at N = 64 and at N = 256, from M = 64 and 1024
  EXPECT_NEAR(sel.check.mean_loss_nearest, 0.2, 1e-9);
  EXPECT_NEAR(sel.check.mean_loss_between, 0.02, 1e-9);
  EXPECT_EQ(sel.rule, tune::selector_rule::between);
  EXPECT_EQ(sel.pick({128, 64}), specialists_tune::generalist);  // between M = 64 and 256
  EXPECT_EQ(sel.pick({256, 256}), 1u);                           // measured
  EXPECT_EQ(sel.pick({4096, 64}), 2u);                           // outside: the nearest
  // The header compiles with two axes and picks the same.
  const std::string header = tuning_header(s.f.tunes, s.f.device, s.f.ctx);
  test::temp_dir dir("tune_header_grid");
  dir.write("tuned.h", header);
  const auto& c = s.f.spaces[0].candidates;
  std::string checks;
  for (const auto& [name, v] : c[specialists_tune::generalist].values)
    checks +=
        "static_assert(reduce_k_select(128, 100)." + name + " == " + std::to_string(v) + ");\n";
  const std::string cpp =
      dir.write("use.cpp", "#include \"tuned.h\"\n" + checks + "int main() {}\n");
  const auto r = test::run_command("c++ -std=c++17 -Wall -Werror -fsyntax-only " + cpp);
  EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
}

// A tune over GPUs of two models: a table and a selector per model, and ID_select(model, sizes)
// picking the model's by its name (a model not tuned gets the first's).
TEST(SizeSelector, SeveralGpuModelsGetASelectorEachChosenByName) {
  specialists_tune a;
  std::vector<tune::tune_outcome> both;
  for (auto t : a.f.tunes) {
    t.model = "GPU \"A\"";
    both.push_back(t);
  }
  for (auto t : a.f.tunes) {
    t.model = "GPU B";
    // On B, point 3 is the best everywhere.
    for (auto& e : t.evaluations) e.record.timing->median_ms = e.point == 3 ? 0.5 : 1.0;
    both.push_back(t);
  }
  const std::string header = tuning_header(both, a.f.device, a.f.ctx);
  EXPECT_NE(header.find("reduce_k_gpu1_select"), std::string::npos) << header;
  const auto& c = a.f.spaces[0].candidates;
  const auto is = [&](const std::string& call, std::size_t point) {
    std::string out;
    for (const auto& [name, v] : c[point].values)
      out += "static_assert(" + call + "." + name + " == " + std::to_string(v) + ");\n";
    return out;
  };
  test::temp_dir dir("tune_header_models");
  dir.write("tuned.h", header);
  const std::string cpp = dir.write(
      "use.cpp", "#include \"tuned.h\"\n" + is("reduce_k_select(\"GPU \\\"A\\\"\", 2048)", 5) +
                     is("reduce_k_select(\"GPU \\\"A\\\"\", 1024)", 0) +
                     is("reduce_k_select(\"GPU B\", 2048)", 3) +
                     is("reduce_k_select(\"GPU B\", 1024)", 3) +
                     is("reduce_k_select(\"GPU C\", 1024)", 0) + "int main() {}\n");
  const auto r = test::run_command("c++ -std=c++17 -Wall -Werror -fsyntax-only " + cpp);
  EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
  const auto sel = tuning_table_json(both, a.f.device, a.f.ctx).at("selectors");
  ASSERT_EQ(sel.size(), 2u);
  EXPECT_EQ(sel.at(0).at("model"), "GPU \"A\"");
  EXPECT_EQ(sel.at(0).at("rule"), "between");
  EXPECT_EQ(sel.at(1).at("model"), "GPU B");
  EXPECT_EQ(sel.at(1).at("rule"), "nearest_log");
  std::ostringstream os;
  print_selectors(os, both);
  EXPECT_NE(os.str().find("size selector on GPU \"A\": between"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("size selector on GPU B: nearest_log"), std::string::npos) << os.str();
}

TEST(SizeSelector, TheHeaderAndTheJsonCarryTheCells) {
  const specialists_tune s;
  const std::string header = tuning_header(s.f.tunes, s.f.device, s.f.ctx);
  const auto& c = s.f.spaces[0].candidates;
  const auto is = [&](const std::string& call, std::size_t point) {
    std::string out;
    for (const auto& [name, v] : c[point].values)
      out += "static_assert(" + call + "." + name + " == " + std::to_string(v) + ");\n";
    return out;
  };
  test::temp_dir dir("tune_header_cells");
  dir.write("tuned.h", header);
  const std::string cpp = dir.write(
      "use.cpp",
      "#include \"tuned.h\"\n" + is("reduce_k_select(1024)", 0) + is("reduce_k_select(16384)", 2) +
          is("reduce_k_select(2048)", 5) + is("reduce_k_select(100000)", 5) +
          is("reduce_k_select(100)", 0) + is("reduce_k_select(1LL << 30)", 4) +
          "static_assert(reduce_k_select(2048).n == 1024);\n"  // the cell's low corner
          "int main(int argc, char**) { return reduce_k_select(argc).n == 1024 ? 0 : 1; }\n");
  const auto r = test::run_command("c++ -std=c++17 -Wall -Werror -o " + dir.str() + "/use " + cpp +
                                   " && " + dir.str() + "/use");
  EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
  const auto sel = tuning_table_json(s.f.tunes, s.f.device, s.f.ctx).at("selectors").at(0);
  EXPECT_EQ(sel.at("rule"), "between");
  ASSERT_EQ(sel.at("cells").size(), 4u);
  EXPECT_EQ(sel.at("cells").at(0).at("low").at("n"), 1024);
  EXPECT_EQ(sel.at("cells").at(0).at("high").at("n"), 4096);
  EXPECT_EQ(sel.at("leave_one_out").at("sizes"), 3);
  std::ostringstream os;
  print_selectors(os, s.f.tunes);
  EXPECT_NE(os.str().find("size selector: between (3 measured sizes left out in turn, each from "
                          "inside the others' range: the nearest size's best lost a mean 20.00%"),
            std::string::npos)
      << os.str();
}

TEST(TuneCommand, WithoutAGpuItShowsTheSpaceAndSaysThereIsNoDevice) {
  test::temp_dir dir("tune_cli");
  test::write_tunable_reduce(dir, "tsum");
  const auto r = test::run_kernlab("tune --kernels-dir " + dir.str() +
                                   " --variant tsum --strategy random --budget 5");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("reduce.tsum"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("11 points over ITEMS(4) BLOCK(3)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no CUDA driver/device"), std::string::npos) << r.output;
}

TEST(TuneCommand, WithoutBlockItTakesEveryBlockTheFileLists) {
  test::temp_dir dir("tune_cli_blocks");
  const std::string file = test::write_tunable_reduce(dir, "tsum");
  ASSERT_TRUE(test::replace_in_file(file, "blocks:  128 256 512", "blocks:  64 128 256 512"));
  const std::string k = "tune --kernels-dir " + dir.str() + " --variant tsum";
  // 64 threads are not among a sweep's default blocks, but a tune takes the file's.
  auto r = test::run_kernlab(k);
  EXPECT_NE(r.output.find("15 points over ITEMS(4) BLOCK(4)"), std::string::npos) << r.output;
  r = test::run_kernlab(k + " --block 128,256,512");
  EXPECT_NE(r.output.find("11 points over ITEMS(4) BLOCK(3)"), std::string::npos) << r.output;
}

// The shipped reduce_unrolling: the file's name tunes every point of it, its named steps
// included; a step's name tunes that point alone.
TEST(TuneCommand, TheFilesNameTunesEveryPointAndAStepsNameOnePoint) {
  const std::string k = "tune --kernels-dir " + test::kernels_dir() + " --strategy random";
  auto r = test::run_kernlab(k + " --variant reduce_unrolling");
  EXPECT_EQ(r.code, 3) << r.output;  // no device here
  EXPECT_NE(r.output.find("reduce.reduce_unrolling (" + test::kernels_dir() +
                          "/reduce/reduce_unrolling.cu): 16 points over UNROLL(4) BLOCK(4)"),
            std::string::npos)
      << r.output;
  r = test::run_kernlab(k + " --variant reduce_unrolling4");
  EXPECT_NE(r.output.find("reduce.reduce_unrolling ("), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("4 points over UNROLL(1) BLOCK(4)"), std::string::npos) << r.output;
}

// A results file written before named points (its descriptors have no tunable_file, point or
// named_point) still replays: the shipped matmul space of 2026-11-23, its block-512 rows and the
// cuBLAS row (tests/data/results/README.md).
// The exhaustive tune of 2026-11-23, written before named points and rewritten as version 2 by
// scripts/results_v1_to_v2.py (each point's values from its name): its points replay.
TEST(TuneCommand, AResultsFileConvertedFromVersion1Replays) {
  test::temp_dir dir("tune_replay_old");
  const std::string json = dir.str() + "/matmul_space.json";
  const auto unzip =
      test::run_command("gzip -dc " + test::results_data_dir() +
                        "/2026-11-23-h100-tune/matmul_space_block512.json.gz > " + json);
  ASSERT_EQ(unzip.code, 0) << unzip.output;
  ASSERT_NE(test::read_file(json).find("\"version\": 2"), std::string::npos);
  const auto r = test::run_kernlab("tune --kernels-dir " + test::kernels_dir() +
                                   " --variant tunable --block 512 --strategy random --seed 1 "
                                   "--budget 20 --replay " +
                                   json);
  EXPECT_EQ(r.code, 0) << r.output.substr(0, 4000);
  EXPECT_NE(r.output.find("replaying " + json), std::string::npos) << r.output.substr(0, 4000);
  EXPECT_NE(r.output.find("best: matmul.tunable"), std::string::npos) << r.output.substr(0, 4000);
  EXPECT_EQ(r.output.find("not in " + json), std::string::npos) << r.output.substr(0, 4000);
}

// The energy objective ranks by joules per operation: the table, the best line (with the fastest
// point beside it when it differs) and the tuning table say so.
TEST(TuneReport, TheEnergyObjectiveRanksByJoulesPerOperation) {
  finished_tune f;
  tune::tune_outcome& t = f.tunes[0];
  t.goal = tune::objective::energy;
  // Times 1.0, 0.8, 0.6 ms; energies 20, 10, 30 uJ: the second point uses the least.
  const double uj[] = {20, 10, 30};
  for (std::size_t i = 0; i < 3; ++i) {
    energy_stats e;
    e.method = "counter";
    e.joules_per_op = uj[i] * 1e-6;
    e.watts = 250 + i;
    e.us_per_op = 500;
    t.evaluations[i].record.energy = e;
  }
  ASSERT_EQ(t.best(), &t.evaluations[1]);
  std::ostringstream os;
  print_tune_table(os, t, f.device, {});
  print_tune_best(os, t, f.device);
  const std::string text = os.str();
  EXPECT_NE(text.find("least energy per operation"), std::string::npos) << text;
  EXPECT_NE(text.find("uJ/op"), std::string::npos) << text;
  // Ranked 10, 20, 30 uJ; x best in energy's terms (10 / 30 = 0.33x for the fastest point).
  EXPECT_LT(text.find("10.00"), text.find("20.00")) << text;
  EXPECT_LT(text.find("20.00"), text.find("30.00")) << text;
  EXPECT_NE(text.find("0.33x"), std::string::npos) << text;
  EXPECT_NE(text.find("best: reduce.k int32 sum n=1000003 (least energy): "), std::string::npos)
      << text;
  EXPECT_NE(text.find("800.0 us"), std::string::npos) << text;  // the best's time
  EXPECT_NE(text.find("10.00 uJ/op at 251 W"), std::string::npos) << text;
  EXPECT_NE(text.find("fastest: "), std::string::npos) << text;
  EXPECT_NE(text.find("600.0 us, 30.00 uJ/op"), std::string::npos) << text;
  const auto j = tuning_table_json(f.tunes, f.device, f.ctx);
  EXPECT_EQ(j.at("tunes").at(0).at("objective"), "energy");
  EXPECT_DOUBLE_EQ(j.at("tunes").at(0).at("best").at("energy").at("joules_per_op").get<double>(),
                   10e-6);
  // A point whose energy could not be measured is not ranked under the energy objective.
  t.evaluations[1].record.energy->error = "the energy counter went backwards";
  EXPECT_EQ(t.best(), &t.evaluations[0]);
  std::ostringstream again;
  print_tune_table(again, t, f.device, {});
  EXPECT_NE(again.str().find("energy: the energy counter went backwards"), std::string::npos)
      << again.str();
}

// A recorded tune with energy figures replays an energy tune, no GPU needed; one without them
// is refused before the search starts.
TEST(TuneCommand, AnEnergyTuneReplaysFromARecordedSpace) {
  test::temp_dir dir("tune_energy_replay");
  const std::string file = test::write_tunable_reduce(dir, "tsum");
  sweep_result sweep;
  sweep.device = cuda::device_info{};
  sweep.device->name = "Test GPU";
  sweep.arch = "sm_90";
  for (const auto& p : parse_header(test::read_file(file), file).points) {
    const long items = p.point.at(0).second;
    for (unsigned block : {128u, 256u, 512u}) {
      if (block * items > 2048) continue;
      result_record r =
          passed_record(p.name, block, 1.0 / static_cast<double>(items) + 1e-5 * block);
      r.variant = p;
      r.config = problem_config{"int32", "sum", "exact", 12345, {{"N", std::uint64_t{1000}}}};
      energy_stats e;
      e.method = "counter";
      e.watts = 300;
      e.us_per_op = r.timing->median_ms * 1e3;
      // The fastest is ITEMS=8 at block 128; the least energy ITEMS=2 at block 256.
      e.joules_per_op = items == 2 && block == 256 ? 1e-6 : 5e-6 + 1e-7 * block;
      r.energy = e;
      sweep.results.push_back(r);
    }
  }
  ASSERT_EQ(sweep.results.size(), 11u);
  run_context ctx;
  ctx.date = "2026-11-23T12:00:00Z";
  const std::string json = dir.str() + "/space.json";
  std::ofstream(json) << results_to_json(sweep, ctx).dump();
  const std::string args = "tune --kernels-dir " + dir.str() +
                           " --variant tsum --size 1000 --dtype int32 --strategy exhaustive "
                           "--replay " +
                           json;
  const auto energy = test::run_kernlab(args + " --objective energy");
  EXPECT_EQ(energy.code, 0) << energy.output;
  EXPECT_NE(energy.output.find("best: reduce.tsum int32 sum n=1000 (least energy): ITEMS=2 "
                               "BLOCK=256"),
            std::string::npos)
      << energy.output;
  EXPECT_NE(energy.output.find("fastest: ITEMS=8 BLOCK=128"), std::string::npos) << energy.output;
  // The same space by time: the fastest is the best.
  const auto time = test::run_kernlab(args);
  EXPECT_EQ(time.code, 0) << time.output;
  EXPECT_NE(time.output.find("best: reduce.tsum int32 sum n=1000: ITEMS=8 BLOCK=128"),
            std::string::npos)
      << time.output;
  // Recorded without --energy: nothing to minimise.
  for (auto& r : sweep.results) r.energy.reset();
  std::ofstream(json) << results_to_json(sweep, ctx).dump();
  const auto none = test::run_kernlab(args + " --objective energy");
  EXPECT_EQ(none.code, 2) << none.output;
  EXPECT_NE(none.output.find("--objective energy: " + json + " has no energy figures"),
            std::string::npos)
      << none.output;
}

// kernlab check-dispatch: a header exported from a tune at two sizes, checked at two others
// against their own exhaustive best, all replayed from a recorded space where each size's best
// is another point and every step away from it costs 1%.
// A recorded exhaustive tune of tsum (test::write_tunable_reduce) at each of `sizes`, written as
// `dir`/space.json for --replay: point i (in the file's order, each block it allows) takes
// `ms(n, i)` at size n; `change` may mark a record further (a raced figure).
std::string write_tsum_space(
    const test::temp_dir& dir, const std::string& file, const std::vector<std::uint64_t>& sizes,
    const std::function<double(std::uint64_t, int)>& ms,
    const std::function<void(result_record&, std::uint64_t, int)>& change = nullptr) {
  sweep_result sweep;
  sweep.device = cuda::device_info{};
  sweep.device->name = "Test GPU";
  sweep.arch = "sm_90";
  for (const std::uint64_t n : sizes) {
    int i = 0;
    for (const auto& p : parse_header(test::read_file(file), file).points)
      for (unsigned block : {128u, 256u, 512u}) {
        if (block * p.point.at(0).second > 2048) continue;
        result_record r = passed_record(p.name, block, ms(n, i));
        if (change) change(r, n, i);
        ++i;
        r.variant = p;
        r.config = problem_config{"int32", "sum", "exact", 12345, {{"N", n}}};
        sweep.results.push_back(r);
      }
  }
  run_context ctx;
  ctx.date = "2026-11-28T12:00:00Z";
  const std::string space = dir.str() + "/space.json";
  std::ofstream(space) << results_to_json(sweep, ctx).dump();
  return space;
}

TEST(TuneCommand, ARangeIsTunedLargestFirstAndReportedInTheOrderGiven) {
  test::temp_dir dir("range_order");
  const std::string file = test::write_tunable_reduce(dir, "tsum");
  const std::string space = write_tsum_space(dir, file, {1000, 2000, 4000, 8000},
                                             [](std::uint64_t, int i) { return 1.0 + 0.01 * i; });
  const std::string out = dir.str() + "/out.json";
  const auto r = test::run_kernlab("tune --kernels-dir " + dir.str() +
                                   " --variant tsum --dtype int32 --strategy random --budget 3"
                                   " --size 1000,2000,4000,8000 --json " +
                                   out + " --replay " + space);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(range: 4 configurations tuned largest first"), std::string::npos)
      << r.output;
  // 8000, then the other end, then 2000 and 4000 (each a factor 2 from its nearest: the first
  // given), 2000 warm-started from both sides.
  std::vector<std::size_t> at;
  for (const char* n : {"n=8000  (", "n=1000  (", "n=2000  (", "n=4000  ("})
    at.push_back(r.output.find(n));
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end()) && at.back() != std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(a warm start from the fastest points of int32 sum n=1000 and int32 "
                          "sum n=8000)"),
            std::string::npos)
      << r.output;
  // The files keep the order the sizes were given in.
  const auto tunes = nlohmann::json::parse(test::read_file(out)).at("tuning").at("tunes");
  std::vector<std::uint64_t> sizes;
  for (const auto& t : tunes) sizes.push_back(t.at("config").at("size").get<std::uint64_t>());
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{1000, 2000, 4000, 8000}));
  // Exhaustive measures every point anyway: the order given.
  const auto e = test::run_kernlab("tune --kernels-dir " + dir.str() +
                                   " --variant tsum --dtype int32 --strategy exhaustive"
                                   " --size 1000,2000 --replay " +
                                   space);
  ASSERT_EQ(e.code, 0) << e.output;
  EXPECT_EQ(e.output.find("(range:"), std::string::npos) << e.output;
  EXPECT_LT(e.output.find("n=1000  ("), e.output.find("n=2000  (")) << e.output;
}

TEST(CheckDispatch, TheHeadersPickAgainstEachSizesBestReplayed) {
  test::temp_dir dir("check_dispatch");
  const std::string file = test::write_tunable_reduce(dir, "tsum");
  const std::map<std::uint64_t, int> target = {{1000, 0}, {2000, 2}, {4000, 4}, {8000, 6}};
  const std::string json = write_tsum_space(
      dir, file, {1000, 2000, 4000, 8000},
      [&](std::uint64_t n, int i) { return 1.0 + 0.01 * std::abs(i - target.at(n)); },
      // 8000's pick (4000's best) was raced out there: a rough figure, shown and marked.
      [&](result_record& r, std::uint64_t n, int i) {
        r.timing->raced = n == 8000 && i == target.at(4000);
      });
  const std::string h = dir.str() + "/dispatch.h";
  const std::string common = " --kernels-dir " + dir.str() +
                             " --variant tsum --dtype int32 --strategy exhaustive --replay " + json;
  const auto tuned = test::run_kernlab("tune --size 1000,4000 --export-header " + h + common);
  ASSERT_EQ(tuned.code, 0) << tuned.output;
  // 2000 lies as far from 1000 as from 4000: the first, 1000's best, 2 steps from 2000's; 8000
  // takes 4000's, 2 steps from its own.
  const auto r = test::run_kernlab("check-dispatch " + h + " --size 2000,8000" + common);
  ASSERT_EQ(r.code, 0) << r.output;
  const auto at = r.output.find("== dispatch check: reduce_tsum_select of " + h);
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string table = r.output.substr(at);
  EXPECT_NE(table.find("int32 sum n=2000"), std::string::npos) << table;
  EXPECT_NE(table.find("int32 sum n=8000"), std::string::npos) << table;
  EXPECT_NE(table.find("the header's picks against each size's best: median +2.00%, worst +2.00% "
                       "(2 sizes)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("+2.00%  (raced)"), std::string::npos) << table;
  EXPECT_NE(table.find("(raced): 1 of the picks were raced out in the tune replayed"),
            std::string::npos)
      << table;

  // Bad input: a header without a selector, one that does not exist, a missing header.
  const std::string plain = dir.write("plain.h", "int x;\n");
  const auto none = test::run_kernlab("check-dispatch " + plain + " --size 2000" + common);
  EXPECT_EQ(none.code, 2) << none.output;
  EXPECT_NE(none.output.find(plain + ": no reduce_tsum_select in it (kernlab tune --export-header "
                                     "writes one for a tune over sizes alone)"),
            std::string::npos)
      << none.output;
  // A header of another file: its selector is named, not taken.
  const std::string other = dir.write(
      "other.h", "constexpr const reduce_other_config& reduce_other_select(long long n) {}\n");
  const auto wrong = test::run_kernlab("check-dispatch " + other + " --size 2000" + common);
  EXPECT_EQ(wrong.code, 2) << wrong.output;
  EXPECT_NE(wrong.output.find(other + ": no reduce_tsum_select in it (it has reduce_other_select)"),
            std::string::npos)
      << wrong.output;
  const auto missing =
      test::run_kernlab("check-dispatch " + dir.str() + "/nope.h --size 2000" + common);
  EXPECT_NE(missing.code, 0) << missing.output;
  EXPECT_NE(missing.output.find(dir.str() + "/nope.h"), std::string::npos) << missing.output;
  const auto words = test::run_kernlab("check-dispatch --size 2000" + common);
  EXPECT_EQ(words.code, 2) << words.output;
  EXPECT_NE(words.output.find("usage: kernlab check-dispatch FILE.h"), std::string::npos)
      << words.output;
  // A header of a tune over several GPU models is asked for this GPU's picks (the replay's:
  // "Test GPU").
  const std::string models = dir.write(
      "models.h",
      "struct reduce_tsum_config {\n  long long n;\n  int ITEMS;\n  int BLOCK;\n};\n"
      "inline constexpr reduce_tsum_config reduce_tsum_rows[] = {{0, 1, 512}, {0, 8, 128}};\n"
      "constexpr bool reduce_tsum_same(const char* a, const char* b) {\n"
      "  while (*a && *a == *b) ++a, ++b;\n  return *a == *b;\n}\n"
      "constexpr const reduce_tsum_config& reduce_tsum_select(const char* model, long long n) {\n"
      "  return reduce_tsum_same(model, \"Test GPU\") && n > 0 ? reduce_tsum_rows[1] : "
      "reduce_tsum_rows[0];\n}\n");
  const auto by_model = test::run_kernlab("check-dispatch " + models + " --size 2000" + common);
  ASSERT_EQ(by_model.code, 0) << by_model.output;
  EXPECT_NE(by_model.output.find("int32 sum n=2000  ITEMS=8 BLOCK=128"), std::string::npos)
      << by_model.output;
  // A shape where the header takes one size.
  const auto axes = test::run_kernlab("check-dispatch " + h + " --size 2000x3" + common);
  EXPECT_NE(axes.code, 0) << axes.output;
}

TEST(TuneCommand, BadInputIsAUsageErrorNamingIt) {
  test::temp_dir dir("tune_cli_bad");
  test::write_tunable_reduce(dir, "tsum");
  const std::string k = " --kernels-dir " + dir.str();
  const struct {
    std::string args, message;
  } cases[] = {
      {"tune" + k, "name the kernel file to tune with --variant"},
      {"tune" + k + " --variant nosuch", "--variant: "},
      {"tune" + k + " --variant tsum --strategy sideways", "unknown strategy 'sideways'"},
      {"tune" + k + " --variant tsum --budget 0", "--budget '0' is not a budget"},
      {"tune" + k + " --variant tsum --budget 3d", "--budget '3d' is not a budget"},
      {"tune" + k + " --variant tsum --block 1024", "--block 1024: no selected variant takes it"},
      {"tune" + k + " --variant tsum extra", "'tune' takes options only"},
      {"tune" + k + " --variant tsum --objective joules", "--objective must be time or energy"},
      {"--variant tsum --strategy random" + k, "--strategy does not apply to a sweep"},
      {"--variant tsum --export x.json" + k, "--export does not apply to a sweep"},
      {"compare a.json b.json --budget 5", "--budget does not apply to kernlab compare"},
  };
  for (const auto& c : cases) {
    const auto r = test::run_kernlab(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
}

// The device's name of a replayed file went into a `//` comment as it was: a newline in it put the
// rest into the code. Every text of the header's comments stays in its comment.
TEST(TuneReport, NoTextOfTheHeadersCommentsReachesItsCode) {
  finished_tune f;
  f.device.name = "Test GPU\n#error injected from the device's name";
  // Three arguments: a backslash at the end, a Latin-1 byte and a trigraph (its "\?" keeps this
  // source free of one), a carriage return.
  f.ctx.command = {"kernlab", "tune", "--json", "x\\", "\xe9?\?/", "a\rb"};
  f.ctx.date = "2026-11-23\\";
  const std::string header = tuning_header(f.tunes, f.device, f.ctx);
  EXPECT_NE(header.find("on \"Test GPU\\n#error injected from the device's name\" ("),
            std::string::npos)
      << header;
  EXPECT_NE(header.find(" \"x\\\\\" \"\xef\xbf\xbd\\?\\?/\" \"a\\rb\"\n"), std::string::npos)
      << header;
  test::temp_dir dir("tune_header_hostile");
  dir.write("tuned.h", header);
  const std::string cpp = dir.write("use.cpp",
                                    "#include \"tuned.h\"\nstatic_assert(reduce_k_configs[0].n == "
                                    "1000003);\n");
  for (const char* trigraphs : {"", " -trigraphs -Wno-trigraphs"}) {
    const auto r = test::run_command(std::string("c++ -std=c++17 -fsyntax-only -Werror") +
                                     trigraphs + " " + cpp);
    EXPECT_EQ(r.code, 0) << r.output << "\n" << header;
  }
}

// A recorded tune of the tunable reduce in `dir` (every point at n = 1000, int32): each point's
// median is 1 ms, and a little more at a larger block.
sweep_result recorded_tsum_space(const test::temp_dir& dir) {
  const std::string file = test::write_tunable_reduce(dir, "tsum");
  sweep_result sweep;
  sweep.device = cuda::device_info{};
  sweep.device->name = "Test GPU";
  for (const auto& p : parse_header(test::read_file(file), file).points)
    for (unsigned block : {128u, 256u, 512u}) {
      if (block * p.point.at(0).second > 2048) continue;
      result_record r = passed_record(p.name, block, 1.0 + 1e-3 * block);
      r.variant = p;
      r.config = problem_config{"int32", "sum", "exact", 12345, {{"N", std::uint64_t{1000}}}};
      sweep.results.push_back(r);
    }
  return sweep;
}

// A recorded point whose median is 0 or negative was never measured, yet it was the best of a
// replay: such a record is a file error naming it, and no time that is not positive is a best.
TEST(TuneCommand, AReplayedMedianThatIsNotATimeIsAFileError) {
  test::temp_dir dir("tune_replay_zero");
  sweep_result sweep = recorded_tsum_space(dir);
  const std::string json = dir.str() + "/space.json";
  const std::string args = "tune --kernels-dir " + dir.str() +
                           " --variant tsum --size 1000 --dtype int32 --strategy exhaustive "
                           "--replay " +
                           json;
  for (const double median_ms : {0.0, -0.005}) {
    sweep.results[3].timing->median_ms = median_ms;
    std::ofstream(json) << results_to_json(sweep, run_context{}).dump();
    const auto r = test::run_kernlab(args);
    EXPECT_EQ(r.code, 4) << r.output;
    EXPECT_NE(r.output.find("--replay " + json + ": " +
                            configuration_key(sweep.results[3].variant.qualified_name(),
                                              sweep.results[3].block, sweep.results[3].config) +
                            ": median_us "),
              std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("is not a time (a positive number)"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("best:"), std::string::npos) << r.output;
  }
  // Read from anywhere else (the tuning store), such a point is never the best.
  finished_tune f;
  f.tunes[0].evaluations[0].record.timing->median_ms = 0;
  ASSERT_NE(f.tunes[0].best(), nullptr);
  EXPECT_NE(f.tunes[0].best()->point, 0u);
  EXPECT_GT(f.tunes[0].best()->record.timing->median_ms, 0);
}

// A replay file named in Latin-1 reaches every output of a tune (the command line in each, the
// reason of a point the file does not hold): a raw type_error wrote none of them. Each is UTF-8.
TEST(TuneCommand, ALatin1FileNameReachesEveryExportAsUtf8) {
  test::temp_dir dir("tune_latin1");
  sweep_result sweep = recorded_tsum_space(dir);
  sweep.results.pop_back();  // a point the file does not hold: "not in FILE"
  const std::string json = dir.str() + "/space_\xe9.json";
  std::ofstream(json) << results_to_json(sweep, run_context{}).dump();
  const std::string out = dir.str() + "/out";
  const auto r = test::run_kernlab(
      "tune --kernels-dir " + dir.str() +
      " --variant tsum --size 1000 --dtype int32 --strategy exhaustive --replay '" + json +
      "' --json " + out + ".json --csv " + out + ".csv --export " + out + ".best.json --t4 " + out +
      ".t4.json --export-header " + out + ".h");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(is_utf8(r.output)) << r.output;
  for (const char* ext : {".json", ".csv", ".best.json", ".t4.json", ".h"}) {
    const std::string text = test::read_file(out + ext);
    EXPECT_FALSE(text.empty()) << ext;
    EXPECT_TRUE(is_utf8(text)) << ext;
    EXPECT_NE(text.find("space_\xef\xbf\xbd.json"), std::string::npos) << ext;
  }
}

}  // namespace
}  // namespace kl
