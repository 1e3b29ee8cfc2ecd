// Results files from anywhere: the readers' bounds (nesting, size, folders). No GPU needed.
#include "core/json_text.hpp"
#include "report/results_json.hpp"
#include "test_util.hpp"
#include "tune/store.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace kl
