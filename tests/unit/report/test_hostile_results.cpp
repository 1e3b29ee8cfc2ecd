// Results files from anywhere, and the outputs kernlab writes whatever strings reach them: the
// readers' bounds (nesting, size, folders), records that cannot be compared, the UTF-8 rule of
// every output, and pictures too large to draw. No GPU needed.
#include "core/json_text.hpp"
#include "core/utf8.hpp"
#include "record/record_json.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/results_writer.hpp"
#include "report/text_table.hpp"
#include "test_util.hpp"
#include "tune/store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kl {
namespace {

using nlohmann::json;

// A real results file, the fuzzers' seed: reduce and matmul rows that passed, a wrong result.
json seed_results() {
  return json::parse(
      test::read_file(test::source_dir() + "/tests/fuzz/corpus/results/passed_with_matmul.json"));
}

// The text of `j` with the string "@RAW@" replaced by `raw`, text JSON itself cannot hold.
std::string with_raw(const json& j, const std::string& raw) {
  std::string text = j.dump();
  const auto at = text.find("\"@RAW@\"");
  EXPECT_NE(at, std::string::npos);
  return text.replace(at, 7, raw);
}

std::string nested(std::size_t depth, bool arrays) {
  std::string open, close;
  for (std::size_t i = 0; i < depth; ++i) {
    open += arrays ? "[" : "{\"k\":";
    close += arrays ? "]" : "}";
  }
  return open + "1" + close;
}

// A value nested 100,000 deep where a number belongs (the record's block) crashed compare and both
// plots on the recursion of what reads it: every reader refuses it, naming the file.
TEST(ResultsRead, AValueNestedDeepIsAFileErrorNotACrash) {
  test::temp_dir dir("results_deep");
  const std::string good = dir.write("good.json", seed_results().dump());
  json results = seed_results();
  results["records"][0]["block"] = "@RAW@";
  for (const bool arrays : {true, false}) {
    const std::string deep = dir.write("deep.json", with_raw(results, nested(100000, arrays)));
    const std::string svg = " -o " + dir.str() + "/x.svg";
    for (const std::string& args :
         {"compare " + deep + " " + good, "compare " + good + " " + deep, "plot " + deep + svg,
          "plot --roofline " + deep + svg, "plot --timeline " + deep + svg}) {
      const auto r = test::run_kernlab(args);
      EXPECT_EQ(r.code, 4) << args << "\n" << r.output.substr(0, 2000);
      EXPECT_NE(r.output.find(deep + ": arrays and objects nested deeper than 64 levels"),
                std::string::npos)
          << args << "\n"
          << r.output.substr(0, 2000);
    }
  }
  // The brackets of a string are text, not nesting.
  results["records"][0]["block"] = 256;
  results["records"][0]["message"] = std::string(100000, '[');
  const std::string text = dir.write("text.json", results.dump());
  const auto r = test::run_kernlab("compare " + text + " " + good);
  EXPECT_EQ(r.code, 0) << r.output;
}

// A folder used to fail with the stream's error and exit code 1; a file of gigabytes would be read
// whole. Both are file errors naming the file.
TEST(ResultsRead, AFolderOrAFileTooLargeIsAFileErrorNamingIt) {
  test::temp_dir dir("results_not_a_file");
  const std::string good = dir.write("good.json", seed_results().dump());
  auto r = test::run_kernlab("compare " + dir.str() + " " + good);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(dir.str() + ": a folder, not a results file"), std::string::npos)
      << r.output;
  r = test::run_kernlab("plot " + dir.str() + " -o " + dir.str() + "/x.svg");
  EXPECT_EQ(r.code, 4) << r.output;
  const std::string huge = dir.write("huge.json", "");
  std::filesystem::resize_file(huge, results_max_bytes + 1);  // sparse: nothing is written
  r = test::run_kernlab("compare " + good + " " + huge);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(huge + ": larger than 256 MiB"), std::string::npos) << r.output;
}

// The tuning store reads its lines as results files are read: a line nested deep is skipped with
// the others that cannot be read.
TEST(ResultsRead, TheTuningStoreSkipsALineNestedDeep) {
  test::temp_dir dir("store_deep");
  const std::string path = dir.str() + "/tuning.jsonl";
  json line = {{"key", "a|full"}, {"record", seed_results()["records"][0]}};
  line["record"]["block"] = "@RAW@";
  std::ofstream(path) << with_raw(line, nested(100000, true)) << "\n";
  tune::tuning_store store(path);
  EXPECT_EQ(store.size(), 0u);
  ASSERT_EQ(store.warnings().size(), 1u);
  EXPECT_NE(store.warnings()[0].find("tuning.jsonl:1: not a stored result (arrays and objects "
                                     "nested deeper than 64 levels)"),
            std::string::npos)
      << store.warnings()[0];
}

TEST(JsonText, ParsingStopsAtTheDepthLimit) {
  EXPECT_NO_THROW(parse_json(nested(json_max_depth, true)));
  EXPECT_NO_THROW(parse_json(nested(json_max_depth - 1, false)));
  EXPECT_THROW(parse_json(nested(json_max_depth + 1, true)), std::runtime_error);
  EXPECT_THROW(parse_json("{\"a\": [1,"), json::parse_error);
}

// The rule of every output: valid UTF-8. Latin-1 from a compiler's message, a folder's name and a
// file's name reach them; each byte that is not UTF-8 becomes U+FFFD.
const std::string latin1 = "caf\xe9";  // "café" in Latin-1
const std::string replaced = "caf\xef\xbf\xbd";

TEST(Utf8, EveryByteThatIsNotUtf8BecomesAReplacementCharacter) {
  EXPECT_EQ(utf8_valid(latin1), replaced);
  EXPECT_EQ(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");  // é, €, an emoji: kept
  for (const std::string bad :
       {"\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc3", "\x80", "\xff"}) {
    EXPECT_FALSE(is_utf8(bad)) << json(utf8_valid(bad)).dump();
    EXPECT_TRUE(is_utf8(utf8_valid(bad)));
    EXPECT_EQ(utf8_valid(bad), [&] {
      std::string all;
      for (std::size_t i = 0; i < bad.size(); ++i) all += "\xef\xbf\xbd";
      return all;
    }());
  }
  EXPECT_EQ(json_text(json{{"m", latin1}}), "{\"m\":\"" + replaced + "\"}");
}

TEST(Utf8, AStreamKeepsASequenceCutBetweenTwoWrites) {
  std::ostringstream os;
  {
    const utf8_output guard(os);
    os << "caf\xc3" << std::flush;
    os << "\xa9, " << latin1 << ", \xe2\x82";  // the last sequence never ends
  }
  EXPECT_EQ(os.str(), "caf\xc3\xa9, " + replaced + ", \xef\xbf\xbd\xef\xbf\xbd");
  os << latin1;  // the guard is gone
  EXPECT_EQ(os.str().substr(os.str().size() - 4), latin1);
}

// A kernel whose #error is in Latin-1, in a folder whose name is, written to a --json file whose
// name is: neither --json nor --csv was written (a raw type_error, exit code 1). Now every output
// is written, in UTF-8, and so is what kernlab prints.
TEST(Utf8, Latin1InACompileErrorAFolderAndAFileNameReachesEveryOutputAsUtf8) {
  test::temp_dir dir("latin1");
  const std::string kernels = dir.str() + "/kernels_" + latin1;
  dir.write("kernels_" + latin1 + "/reduce/latin.cu",
            "/* kernlab\nfamily: reduce\nentry:  latin<BLOCK, T, OP>\nblocks: "
            "256\ntile:   BLOCK\n"
            "*/\n#error \"" +
                latin1 +
                " au lait\"\ntemplate <unsigned BLOCK, typename T, typename OP>\n"
                "__global__ void latin(const T*, T*, unsigned) {}\n");
  const std::string json_path = dir.str() + "/run_" + latin1 + ".json";
  const std::string csv_path = dir.str() + "/run.csv";
  const auto r = test::run_kernlab("--compile-only --no-cache --kernels-dir '" + kernels +
                                   "' --variant latin --block 256 --json '" + json_path +
                                   "' --csv " + csv_path);
  EXPECT_EQ(r.code, 1) << r.output;  // the file failed to compile
  EXPECT_EQ(r.output.find("type_error"), std::string::npos) << r.output;
  EXPECT_TRUE(is_utf8(r.output)) << r.output;
  EXPECT_NE(r.output.find(replaced + " au lait"), std::string::npos) << r.output;
  const std::string text = test::read_file(json_path);
  ASSERT_FALSE(text.empty()) << r.output;
  EXPECT_TRUE(is_utf8(text));
  const json results = json::parse(text);
  const json& source = results["reproducibility"]["sources"][0];
  EXPECT_NE(source["error"].get<std::string>().find(replaced + " au lait"), std::string::npos)
      << source;
  EXPECT_NE(source["path"].get<std::string>().find("kernels_" + replaced), std::string::npos);
  EXPECT_NE(results["reproducibility"]["command"].dump().find("run_" + replaced + ".json"),
            std::string::npos);
  EXPECT_TRUE(is_utf8(test::read_file(csv_path)));
}

result_record latin1_row() {
  result_record r;
  r.variant.family = "reduce";
  r.variant.name = "k_" + latin1;
  r.variant.origin_path = "/kernels_" + latin1 + "/reduce/k.cu";
  r.config = {"int32", "sum", "exact", 1, {{"N", std::uint64_t{1024}}}};
  r.block = 256;
  r.status = outcome::failed;
  r.message = "compile error:\nk.cu:7: error: #error directive: \"" + latin1 + "\"";
  return r;
}

// In a GPU sweep the writer of --json, --csv and --jsonl threw the same type_error out of the sweep
// at the first such row.
TEST(Utf8, TheResultsWriterWritesEveryFileOfARowInLatin1) {
  test::temp_dir dir("latin1_writer");
  const std::string base = dir.str() + "/run";
  run_context ctx;
  ctx.command = {"kernlab", "--json", base + "_" + latin1 + ".json"};
  results_writer w(
      {base + ".json", base + ".csv", base + ".jsonl"}, [&] { return ctx; }, 0);
  sweep_result sweep;
  sweep.results = {latin1_row()};
  EXPECT_NO_THROW(w.row(latin1_row(), sweep));
  EXPECT_NO_THROW(w.finish(sweep));
  for (const char* ext : {".json", ".csv", ".jsonl"}) {
    const std::string text = test::read_file(base + ext);
    EXPECT_TRUE(is_utf8(text)) << ext;
    EXPECT_NE(text.find(replaced), std::string::npos) << ext << "\n" << text;
  }
  EXPECT_EQ(record_from_json(json::parse(test::read_file(base + ".jsonl"))).message,
            utf8_valid(latin1_row().message));
}

TEST(Utf8, TheTuningStoreWritesARowInLatin1) {
  test::temp_dir dir("latin1_store");
  const std::string path = dir.str() + "/tuning.jsonl";
  {
    tune::tuning_store store(path);
    EXPECT_NO_THROW(store.add({"a|full", latin1_row(), {{"device", "GPU " + latin1}}}));
  }
  EXPECT_TRUE(is_utf8(test::read_file(path)));
  tune::tuning_store store(path);
  ASSERT_NE(store.find("a|full"), nullptr);
  EXPECT_EQ(store.find("a|full")->record.variant.name, "k_" + replaced);
}

// A markdown cell stays on its line (a skip reason of two lines broke the table).
TEST(Markdown, ACellOfSeveralLinesStaysOnItsRow) {
  text_table t;
  t.header = {"variant", "status"};
  t.right = {false, false};
  t.rows = {{"a", "skipped"}};
  t.trailers = {"first\nsecond | third\r"};
  std::ostringstream os;
  t.write(os, true);
  EXPECT_EQ(os.str(), "| variant | status |\n| --- | --- |\n| a | first second / third  |\n");
}

// Records compare cannot use are a file error (exit code 4) naming the file and the record, not an
// exception out of compare (exit code 1, which CI reads as a regression).
TEST(ResultsRead, ARecordCompareCannotUseIsAFileErrorNamingIt) {
  test::temp_dir dir("results_bad_record");
  const std::string good = dir.write("good.json", seed_results().dump());
  const auto expect_file_error = [&](const json& results, const std::string& message) {
    const std::string bad = dir.write("bad.json", results.dump());
    for (const std::string& args : {"compare " + good + " " + bad, "compare " + bad + " " + good,
                                    "plot " + bad + " -o " + dir.str() + "/x.svg"}) {
      const auto r = test::run_kernlab(args);
      EXPECT_EQ(r.code, 4) << args << "\n" << r.output;
      EXPECT_NE(r.output.find(bad + ": " + message), std::string::npos) << args << "\n" << r.output;
    }
  };
  json results = seed_results();
  results["records"][1]["timing"] = nullptr;  // passed, with no timing
  expect_file_error(results, "records[1] (matmul.naive): \"timing\": null in a record that passed");
  results = seed_results();
  results["records"][2]["variant"].erase("qualified_name");
  expect_file_error(results, "records[2]: [json.exception.out_of_range.403]");
  results = seed_results();
  results["records"] = {{"not", "a list"}};
  expect_file_error(results, "\"records\" is not a list");
  results = seed_results();
  results["version"] = 1e300;
  expect_file_error(results, "results format version 1e+300; this kernlab reads version 2");
}

// A --pipeline result whose rows are `row`, `count` times.
json pipeline_of(const json& row, std::size_t count) {
  json results = json::parse(test::results_data("2026-11-22-h100-qam256/pipeline_2e27.json"));
  results["pipeline"][0]["rows"] = json::array();
  for (std::size_t i = 0; i < count; ++i) results["pipeline"][0]["rows"].push_back(row);
  return results;
}

// A row of `streams` streams and `chunks` chunks, one after the other.
json pipeline_row(unsigned streams, unsigned chunks) {
  json row = {{"order", "breadth"},
              {"streams", streams},
              {"chunks", chunks},
              {"wall_ms", chunks * 3e-3},
              {"timeline", json::array()}};
  for (unsigned c = 0; c < chunks; ++c)
    row["timeline"].push_back({{"chunk", c},
                               {"stream", c % streams},
                               {"h2d_us", {3.0 * c, 3.0 * c + 1}},
                               {"kernel_us", {3.0 * c + 1, 3.0 * c + 2}},
                               {"d2h_us", {3.0 * c + 2, 3.0 * c + 3}}});
  return row;
}

// 160 KB of rows that each declare 4096 streams made a 528 MB picture (1.6 GB of memory): a row of
// more streams or chunks than --pipeline runs is refused, naming it.
TEST(PipelineTimeline, ARowOfMoreStreamsOrChunksThanAPipelineRunsIsRefused) {
  test::temp_dir dir("timeline_hostile");
  const std::string bomb = dir.write("bomb.json", pipeline_of(pipeline_row(4096, 1), 1000).dump());
  EXPECT_LT(test::read_file(bomb).size(), 200000u);
  const auto r = test::run_kernlab("plot --timeline " + bomb + " -o " + dir.str() + "/t.svg");
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(bomb + ": pipeline[0].rows[0].streams 4096 is more than the 64 streams "
                                 "a --pipeline row has"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(dir.str() + "/t.svg"));
  std::ostringstream os;
  json chunks = pipeline_of(pipeline_row(4, 8), 1);
  chunks["pipeline"][0]["rows"][0]["chunks"] = 5000;
  EXPECT_THROW(write_timeline_svg(chunks, os), std::runtime_error);
  chunks = pipeline_of(pipeline_row(4, 4097), 1);
  chunks["pipeline"][0]["rows"][0]["chunks"] = 4096;
  try {
    write_timeline_svg(chunks, os);
    ADD_FAILURE() << "drawn";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline[0].rows[0].timeline has 4097 chunks"),
              std::string::npos)
        << e.what();
  }
}

// Rows as large as --pipeline makes them (64 streams, 4096 chunks: megabytes each) are drawn until
// the picture takes 32 MiB; the rest are counted, in the picture and by the command.
TEST(PipelineTimeline, ThePictureStopsAtItsCapAndCountsTheRowsLeftOut) {
  const json results = pipeline_of(pipeline_row(64, 4096), 20);
  std::ostringstream os;
  const std::size_t not_drawn = write_timeline_svg(results, os);
  const std::string svg = os.str();
  EXPECT_GT(not_drawn, 0u);
  EXPECT_LT(not_drawn, 20u);
  EXPECT_LE(svg.size(), timeline_max_svg_bytes + (4u << 20));
  EXPECT_NE(svg.find(std::to_string(not_drawn) + " more rows are not drawn: the picture stops at "
                                                 "32 MiB"),
            std::string::npos);
  EXPECT_EQ(svg.find("</svg>\n"), svg.size() - 7);

  test::temp_dir dir("timeline_cap");
  const std::string file = dir.write("large.json", results.dump());
  const auto r = test::run_kernlab("plot --timeline " + file + " -o " + dir.str() + "/t.svg");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("(1 pipeline; " + std::to_string(not_drawn) +
                          " rows not drawn: the picture stops at 32 MiB)"),
            std::string::npos)
      << r.output;
}

// `--json f --csv f` kept the CSV alone: two outputs naming one file, however spelt, are a usage
// error naming both options. Streams and devices may take several.
TEST(OutputOptions, TwoOutputsInOneFileAreAUsageErrorNamingBoth) {
  test::temp_dir dir("same_output");
  const std::string f = dir.str() + "/run.out";
  const std::string sweep = "--compile-only --no-cache --kernels-dir " + test::kernels_dir() +
                            " --variant reduce5 --block 256 ";
  const struct {
    std::string args, message;
  } cases[] = {
      {sweep + "--json " + f + " --csv " + f, "--json " + f + " and --csv " + f + " are one file"},
      {sweep + "--json " + f + " --csv " + dir.str() + "/sub/../run.out",
       "--json " + f + " and --csv "},
      {"tune --kernels-dir " + test::kernels_dir() + " --variant reduce_unrolling --export " + f +
           " --t4 " + f,
       "--t4 " + f + " and --export " + f},
  };
  std::filesystem::create_directories(dir.str() + "/sub");
  for (const auto& c : cases) {
    const auto r = test::run_kernlab(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(f));
  }
  // A file that exists, under a symbolic and a hard link.
  const std::string real = dir.write("real.json", "{}");
  std::filesystem::create_symlink(real, dir.str() + "/soft.json");
  std::filesystem::create_hard_link(real, dir.str() + "/hard.csv");
  for (const char* other : {"/soft.json", "/hard.csv"}) {
    const auto r = test::run_kernlab(sweep + "--json " + real + " --csv " + dir.str() + other);
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("are one file"), std::string::npos) << r.output;
  }
  const auto r = test::run_kernlab(sweep + "--json /dev/null --csv /dev/null");
  EXPECT_EQ(r.code, 0) << r.output;
}

}  // namespace
}  // namespace kl
