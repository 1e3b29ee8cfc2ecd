// `kernlab plot --roofline` and `--timeline`: drawn from H100 results files frozen in
// tests/data/results (reduce, matmul at four shapes, qam256), from records of the data families,
// and from a pipeline report as the pipeline writes it; their bad inputs. No GPU needed.
#include "exec/pipeline.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/svg_text.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace kl {
namespace {

using nlohmann::json;

// A results file as kernlab wrote it on the GPU, from tests/data/results (gzipped or not).
json real_file(const std::string& relative) {
  const std::string text = test::results_data(relative);
  EXPECT_FALSE(text.empty()) << test::results_data_dir() << "/" << relative;
  return json::parse(text);
}

std::string roofline_of(const json& results) {
  std::ostringstream os;
  write_roofline_svg(results, os);
  return os.str();
}

std::string timeline_of(const json& results) {
  std::ostringstream os;
  write_timeline_svg(results, os);
  return os.str();
}

// The texts of the panels' titles (wrapped lines joined by a space), in order.
std::vector<std::string> titles_of(const std::string& svg) {
  std::vector<std::string> out;
  const std::regex title("<text class=\"title\" x=\"10\" y=\"(\\d+)\"[^>]*>([^<]*)</text>");
  int last_y = -100;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), title); it != std::sregex_iterator();
       ++it) {
    const int y = std::stoi((*it)[1]);
    if (!out.empty() && y - last_y <= 17)
      out.back() += " " + (*it)[2].str();  // the next line of a wrapped title
    else
      out.push_back((*it)[2]);
    last_y = y;
  }
  return out;
}

int svg_width(const std::string& svg) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(svg, m, std::regex("<svg [^>]*width=\"(\\d+)\"")));
  return std::stoi(m[1]);
}

// Rows that have a throughput to draw: passed, with a positive value in the panel's unit.
std::size_t drawable(const json& results, const char* field) {
  std::size_t n = 0;
  for (const auto& r : results.at("records"))
    if (r.at("outcome") == "passed" && r.contains(field) && r.at(field).get<double>() > 0) ++n;
  return n;
}

// Every point sits inside its panel's plot (74 .. 74 + 520 pixels across).
void expect_points_inside(const std::string& svg) {
  const std::regex circle("<circle class=\"point\" cx=\"([-0-9.]+)\" cy=\"([-0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator();
       ++it) {
    const double cx = std::stod((*it)[1]);
    EXPECT_GE(cx, 74 - 20);
    EXPECT_LE(cx, 74 + 520 + 20);
    EXPECT_GE(std::stod((*it)[2]), 0);
  }
}

TEST(Roofline, ReduceDefaultJobOnTheH100) {
  const json results = real_file("2026-11-22-h100-final/default_job.json");
  const std::string svg = roofline_of(results);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(test::count_of(svg, "<text"), test::count_of(svg, "</text>"));
  // Two panels (int32 and float32), one point per passed row, in GB/s against the bytes moved.
  EXPECT_EQ(titles_of(svg), (std::vector<std::string>{"reduce int32 sum n=16777216",
                                                      "reduce float32 sum n=16777216"}));
  EXPECT_EQ(test::count_of(svg, "class=\"point\""), drawable(results, "gbps"));
  EXPECT_EQ(drawable(results, "gbps"), 163u);
  EXPECT_EQ(test::count_of(svg, ">GB/s</text>"), 2u);
  EXPECT_EQ(test::count_of(svg, ">TFLOP/s</text>"), 0u);
  EXPECT_NE(svg.find("bytes the problem must move"), std::string::npos);
  EXPECT_NE(svg.find(">DRAM 3352 GB/s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">L2 52.4 MB (50 MiB)</text>"), std::string::npos);
  EXPECT_NE(svg.find(">67.1 MB (64 MiB)</text>"), std::string::npos);  // 2^24 int32
  // One label per variant: its best row, with the share of the roof (2524 / 3352 GB/s).
  EXPECT_NE(svg.find(">reduce_single_pass block 1024: 2524 GB/s (75% of roof)</text>"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">cub (baseline): 2346 GB/s (70% of roof)</text>"), std::string::npos);
  expect_points_inside(svg);
}

// A file from before the sweep wrote the FP32 peak, rewritten as version 2: the converter derived
// it from the compute capability, the SMs and the clock, as the sweep computes it
// (132 x 128 x 2 x 1980 MHz).
TEST(Roofline, TheFp32PeakOfAConvertedFileIsTheSweeps) {
  const json results = real_file("2026-11-22-h100-qam256/kernels_2e28.json");
  const std::string svg = roofline_of(results);
  EXPECT_NE(svg.find("DRAM 3352 GB/s, FP32 66.9 TFLOP/s"), std::string::npos);
}

// Matmul: a panel per shape, each in TFLOP/s at the shape's own arithmetic intensity under the
// sloped DRAM roof and the flat FP32 one.
// A tensor-core family's rows (roofline "tensor") sit under the 16-bit tensor-core peak, not the
// FP32 one: on an H100 cuBLAS's 869 TFLOP/s is 81% of 132 SMs x 4096 FLOP/clock x 1980 MHz = 1071.
TEST(Roofline, TensorCoreRowsUnderTheTensorPeak) {
  json results = real_file("2026-11-23-h100-tensor-cores/tc_8192x8192x8192.json");
  // The file predates the tensor roofline: its rows say "compute" and its device has no tensor
  // peak. Make it what a sweep writes now.
  results["reproducibility"]["device"]["peak_tensor16_tflops"] = 132 * 4096 * 1980e6 / 1e12;
  for (auto& r : results["records"])
    if (r.value("roofline", std::string()) == "compute") r["roofline"] = "tensor";
  const std::string svg = roofline_of(results);
  EXPECT_NE(svg.find("16-bit tensor cores 1071 TFLOP/s"), std::string::npos) << svg.substr(0, 600);
  EXPECT_NE(svg.find(">16-bit tensor-core peak 1071 TFLOP/s<"), std::string::npos);
  EXPECT_EQ(svg.find("FP32 peak"), std::string::npos);
  EXPECT_NE(svg.find("cublas (baseline): 869 TFLOP/s (81% of roof)"), std::string::npos);
  // The bars: the same rows against the same peak.
  std::ostringstream bars;
  write_svg(results, bars);
  // The same rows as a TF32 family's: under the TF32 roof, half the 16-bit one.
  json tf32 = results;
  tf32["reproducibility"]["device"]["peak_tf32_tflops"] = 132 * 2048 * 1980e6 / 1e12;
  for (auto& r : tf32["records"])
    if (r.value("roofline", std::string()) == "tensor") r["roofline"] = "tf32";
  const std::string tf32_svg = roofline_of(tf32);
  EXPECT_NE(tf32_svg.find(">TF32 tensor-core peak 535 TFLOP/s<"), std::string::npos);
  EXPECT_NE(tf32_svg.find("TF32 tensor cores 535 TFLOP/s"), std::string::npos);
  EXPECT_EQ(tf32_svg.find("16-bit tensor"), std::string::npos);
  // And as an FP64 family's (roofline "fp64"): under the FP64 tensor-core roof, 256 FLOP per SM
  // per clock.
  json fp64 = results;
  fp64["reproducibility"]["device"]["peak_fp64_tensor_tflops"] = 132 * 256 * 1980e6 / 1e12;
  for (auto& r : fp64["records"])
    if (r.value("roofline", std::string()) == "tensor") r["roofline"] = "fp64";
  const std::string fp64_svg = roofline_of(fp64);
  EXPECT_NE(fp64_svg.find(">FP64 tensor-core peak 66.9 TFLOP/s<"), std::string::npos);
  EXPECT_NE(fp64_svg.find("FP64 tensor cores 66.9 TFLOP/s"), std::string::npos);
  EXPECT_EQ(fp64_svg.find("16-bit tensor"), std::string::npos);
  EXPECT_EQ(fp64_svg.find("TF32 tensor"), std::string::npos);
  // The bars' grid lines are at quarters of the FP64 tensor-core peak. On an H100 it equals the
  // FP32 peak (66.9), so give it another value to tell the two apart: 100, a line at 75.
  fp64["reproducibility"]["device"]["peak_fp64_tensor_tflops"] = 100.0;
  std::ostringstream fp64_bars;
  write_svg(fp64, fp64_bars);
  EXPECT_NE(fp64_bars.str().find(">75 (75%)<"), std::string::npos);
  // Grid lines at quarters of the tensor peak: 1070.5 x 3 / 4 = 803 (FP32's would be 50).
  EXPECT_NE(bars.str().find(">803 (75%)<"), std::string::npos);
}

TEST(Roofline, MatmulInTflopsAPanelPerShape) {
  json merged;
  std::size_t points = 0;
  for (const char* shape :
       {"1024x1024x1024", "4096x4096x4096", "8192x8192x8192", "4095x4097x1023"}) {
    const json one = real_file(std::string("2026-11-22-h100-matmul/record_") + shape + ".json");
    if (merged.is_null()) {
      merged = one;
      merged["records"] = json::array();
    }
    for (const auto& r : one.at("records")) merged["records"].push_back(r);
    points += drawable(one, "tflops");
  }
  const std::string svg = roofline_of(merged);
  EXPECT_EQ(titles_of(svg), (std::vector<std::string>{
                                "matmul float32 1024x1024x1024", "matmul float32 4096x4096x4096",
                                "matmul float32 8192x8192x8192", "matmul float32 4095x4097x1023"}));
  EXPECT_EQ(test::count_of(svg, "class=\"point\""), points);
  EXPECT_EQ(test::count_of(svg, ">TFLOP/s</text>"), 4u);
  EXPECT_EQ(test::count_of(svg, ">GB/s</text>"), 0u);
  // 2 n^3 / (3 n^2 x 4 bytes) = n / 6 FLOP/byte.
  EXPECT_NE(svg.find(">171 FLOP/byte</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">683 FLOP/byte</text>"), std::string::npos);
  EXPECT_NE(svg.find(">1365 FLOP/byte</text>"), std::string::npos);
  EXPECT_EQ(test::count_of(svg, ">FP32 peak 66.9 TFLOP/s</text>"), 4u);
  EXPECT_EQ(test::count_of(svg, ">DRAM 3352 GB/s</text>"), 4u);
  EXPECT_NE(svg.find("cublas (baseline): 51.7 TFLOP/s (77% of roof)"), std::string::npos);
  // The roof: from the left edge up the DRAM slope to the ridge (66.9 / 3.352 = 20 FLOP/byte),
  // then flat.
  EXPECT_EQ(test::count_of(svg, "<polyline"), 4u);
  expect_points_inside(svg);
}

TEST(Roofline, Qam256InGbps) {
  const json results = real_file("2026-11-22-h100-qam256/kernels_2e28.json");
  const std::string svg = roofline_of(results);
  EXPECT_EQ(titles_of(svg),
            (std::vector<std::string>{"qam256 float32 demap n=268435456 SNR_DB=20"}));
  EXPECT_EQ(test::count_of(svg, "class=\"point\""), 25u);
  EXPECT_NE(svg.find(">4.29 GB (4 GiB)</text>"), std::string::npos);  // 16 bytes a symbol
  EXPECT_NE(svg.find("d2d_copy (baseline): 3054 GB/s (91% of roof)"), std::string::npos);
}

// The data families: a record from each (scan, softmax as shipped: bandwidth, no FLOPs), and one
// that counts FLOPs in a bandwidth family (drawn at its intensity, still in GB/s, under the
// DRAM roof and the FP32 peak's bandwidth equivalent).
TEST(Roofline, DataFamiliesInTheirOwnUnit) {
  json results = real_file("2026-11-22-h100-final/default_job.json");
  const json reduce_row = results.at("records").at(0);
  ASSERT_EQ(reduce_row.at("outcome"), "passed");
  // A one-axis family's records of before 2026-11-23 gave its size as a shape of one value: it
  // reads as the size it is ("n=").
  auto row = [&](const std::string& family, const std::string& name, std::vector<int> shape,
                 double bytes, double flops, double median_us) {
    json r = reduce_row;
    r["variant"]["family"] = family;
    r["variant"]["name"] = name;
    r["variant"]["qualified_name"] = family + "." + name;
    r["block"] = 256;
    r["config"] = {{"dtype", "float32"}, {"op", ""},      {"size", 0},
                   {"input", "exact"},   {"seed", 12345}, {"shape", shape}};
    r["bytes"] = bytes;
    r["flops"] = flops;
    r["roofline"] = "bandwidth";
    r["timing"]["median_us"] = median_us;
    r["gbps"] = bytes / (median_us * 1e3);
    r["baseline"] = nullptr;
    return r;
  };
  results["records"] =
      json::array({row("scan", "decoupled_lookback", {1 << 26}, 8.0 * (1 << 26), 0, 200),
                   row("softmax", "online", {4096, 1000}, 2 * 4096 * 1000 * 4.0, 0, 15),
                   row("axpy", "simple", {1000003}, 12.0 * 1000003, 2.0 * 1000003, 8)});
  const std::string svg = roofline_of(results);
  EXPECT_EQ(titles_of(svg),
            (std::vector<std::string>{"scan float32 n=67108864", "softmax float32 4096x1000",
                                      "axpy float32 n=1000003"}))
      << svg;
  EXPECT_EQ(test::count_of(svg, ">GB/s</text>"), 3u);
  EXPECT_EQ(test::count_of(svg, "bytes the problem must move"), 2u);
  EXPECT_EQ(test::count_of(svg, "arithmetic intensity"), 1u);
  EXPECT_NE(svg.find(">0.167 FLOP/byte</text>"), std::string::npos);
  // 8 * 2^26 bytes in 200 us: 2684 GB/s, 80% of 3352.
  EXPECT_NE(svg.find("decoupled_lookback block 256: 2684 GB/s (80% of roof)"), std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">FP32 peak 66.9 TFLOP/s / intensity</text>"), std::string::npos);
}

// A title wider than the image is wrapped, at spaces and inside a word too long for a line;
// every character of it is there, and no line is wider than the image.
TEST(Roofline, ALongTitleIsWrappedNeverCut) {
  json results = real_file("2026-11-22-h100-qam256/kernels_2e28.json");
  const std::string family = "a family whose name goes on " + std::string(150, 'w') +
                             " and on and on " + std::string(40, 'z');
  for (auto& r : results["records"]) r["variant"]["family"] = family;
  const std::string svg = roofline_of(results);
  const auto titles = titles_of(svg);
  ASSERT_EQ(titles.size(), 1u);
  std::string joined = titles[0];
  std::string expected = family + " float32 demap n=268435456 SNR_DB=20";
  joined.erase(std::remove(joined.begin(), joined.end(), ' '), joined.end());
  expected.erase(std::remove(expected.begin(), expected.end(), ' '), expected.end());
  EXPECT_EQ(joined, expected);
  const int width = svg_width(svg);
  const std::regex line("<text class=\"title\" [^>]*font-size=\"(\\d+)\"[^>]*>([^<]*)</text>");
  int lines = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator();
       ++it, ++lines)
    EXPECT_LE(10 + svg::text_width((*it)[2], std::stoi((*it)[1])), width) << (*it)[2];
  EXPECT_GE(lines, 3);
  EXPECT_LT(width, 1300);  // wrapped, not widened
}

TEST(Roofline, NothingTimedIsAnError) {
  json results = real_file("2026-11-22-h100-qam256/kernels_2e28.json");
  for (auto& r : results["records"]) {
    r["outcome"] = "failed";
    r["timing"] = nullptr;
    r.erase("gbps");
  }
  try {
    roofline_of(results);
    FAIL() << "drew a roofline without a timed row";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no timed rows to draw"), std::string::npos);
  }
  // A file with one timed row among failures is drawn, and says what it leaves out.
  results["records"][0] = real_file("2026-11-22-h100-qam256/kernels_2e28.json")["records"][0];
  const std::string svg = roofline_of(results);
  EXPECT_EQ(test::count_of(svg, "class=\"point\""), 1u);
  EXPECT_NE(svg.find(">24 rows not drawn: failed, wrong, or not timed"), std::string::npos);
}

TEST(SvgText, WrapKeepsEveryCharacterAndUtf8Whole) {
  const std::string text = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9 ab";  // "éééééé ab"
  const auto lines = svg::wrap(text, svg::text_width("xxxxx", 10), 10);
  std::string joined;
  for (const auto& l : lines) {
    EXPECT_LE(svg::text_width(l, 10), svg::text_width("xxxxx", 10)) << l;
    // No line starts inside a two-byte character.
    ASSERT_FALSE(l.empty());
    EXPECT_NE(static_cast<unsigned char>(l[0]) & 0xC0, 0x80) << l;
    joined += l;
  }
  EXPECT_EQ(joined,
            "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
            "ab");
  EXPECT_EQ(svg::wrap("", 100, 10), std::vector<std::string>{""});
}

// A pipeline report as run_pipeline makes it, through its JSON (what --json writes), drawn.
pipeline_report two_schedules() {
  pipeline_report rep;
  rep.family = "qam256";
  rep.variant = "qam256.vec2_stream";
  rep.block = 256;
  rep.config.dtype = "float32";
  rep.config.op = "demap";
  rep.config.axes = {{"N", std::uint64_t{4096}}};
  rep.bytes_in = rep.bytes_out = 8 * 4096;
  rep.h2d_alone_ms = 0.004;
  rep.kernel_alone_ms = 0.002;
  rep.d2h_alone_ms = 0.004;
  rep.serial_ms = 0.01;
  rep.bound_ms = 0.005;
  // One stream, two chunks, one after another (6.5 us); two streams, four chunks, overlapping
  // (6 us).
  for (unsigned streams : {1u, 2u}) {
    pipeline_row row;
    row.order = "depth";
    row.streams = streams;
    row.chunks = 2 * streams;
    row.valid = true;
    for (unsigned c = 0; c < row.chunks; ++c) {
      chunk_timeline ct;
      ct.chunk = c;
      ct.stream = c % streams;
      const double start = streams == 1 ? c * 4.0 : (c / streams) * 3.0 + 0.5 * ct.stream;
      for (int s = 0; s < 3; ++s) {
        ct.begin_us[s] = start + s * 1.0;
        ct.end_us[s] = start + s * 1.0 + 0.5;
      }
      row.timeline.push_back(ct);
    }
    double end = 0;
    for (const auto& ct : row.timeline) end = std::max(end, ct.end_us[2]);
    row.wall_ms = end / 1000;
    rep.rows.push_back(row);
  }
  return rep;
}

TEST(PipelineTimeline, TheReportKeepsEveryChunksStages) {
  const pipeline_report rep = two_schedules();
  const json j = to_json(rep);
  EXPECT_EQ(j.at("rows").at(1).at("timeline").at(3), json({{"chunk", 3},
                                                           {"stream", 1},
                                                           {"h2d_us", {3.5, 4.0}},
                                                           {"kernel_us", {4.5, 5.0}},
                                                           {"d2h_us", {5.5, 6.0}}}));
  const pipeline_report back = pipeline_report_from_json(j);
  ASSERT_EQ(back.rows.size(), 2u);
  ASSERT_EQ(back.rows[1].timeline.size(), 4u);
  EXPECT_EQ(back.rows[1].timeline[3].stream, 1u);
  EXPECT_DOUBLE_EQ(back.rows[1].timeline[3].end_us[1], 5.0);
  // Every row has its timeline in version 2.
  json without = j;
  for (auto& row : without["rows"]) row.erase("timeline");
  EXPECT_THROW(pipeline_report_from_json(without), std::exception);
}

TEST(PipelineTimeline, OneLanePerStreamAndABoxPerStage) {
  json results = real_file("2026-11-22-h100-qam256/pipeline_2e27.json");
  results["pipeline"] = json::array({to_json(two_schedules())});
  const std::string svg = timeline_of(results);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(test::count_of(svg, "<text"), test::count_of(svg, "</text>"));
  // Lanes: 1 + 2; boxes: 3 stages x (2 + 4) chunks.
  EXPECT_EQ(test::count_of(svg, ">stream 0</text>"), 2u);
  EXPECT_EQ(test::count_of(svg, ">stream 1</text>"), 1u);
  EXPECT_EQ(test::count_of(svg, "class=\"stage\""), 18u);
  EXPECT_NE(svg.find("<title>chunk 3 kernel, stream 1: 4.5 to 5.0 µs (0.5 µs)</title>"),
            std::string::npos)
      << svg;
  // The faster schedule is marked; the time axis is in microseconds, one scale for both.
  const auto titles = titles_of(svg);
  ASSERT_EQ(titles.size(), 3u);
  EXPECT_NE(titles[0].find("qam256 pipeline, qam256.vec2_stream block 256, n=4096"),
            std::string::npos);
  EXPECT_EQ(titles[1].find("(fastest)"), std::string::npos) << titles[1];
  EXPECT_NE(titles[2].find("depth, 2 streams, 4 chunks: wall 0.01 ms"), std::string::npos);
  EXPECT_NE(titles[2].find("(fastest)"), std::string::npos);
  EXPECT_EQ(test::count_of(svg, " µs</text>"), 2u);
  // Every box inside the plot (84 .. 984 pixels).
  const std::regex box("class=\"stage\" x=\"([0-9.]+)\" y=\"\\d+\" width=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), box); it != std::sregex_iterator();
       ++it) {
    EXPECT_GE(std::stod((*it)[1]), 84);
    EXPECT_LE(std::stod((*it)[1]) + std::stod((*it)[2]), 984.01);
  }
}

TEST(PipelineTimeline, BadInputSaysWhatIsWrong) {
  auto message = [](const json& results) {
    try {
      timeline_of(results);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("drawn");
  };
  // A sweep's file, and a pipeline file from before the stage times.
  EXPECT_NE(message(real_file("2026-11-22-h100-final/default_job.json"))
                .find("no pipeline in this results file"),
            std::string::npos);
  EXPECT_NE(message(real_file("2026-11-22-h100-qam256/pipeline_2e27.json"))
                .find("no stage times per chunk"),
            std::string::npos);
  json results = real_file("2026-11-22-h100-qam256/pipeline_2e27.json");
  results["pipeline"] = json::array({to_json(two_schedules())});
  results["pipeline"][0]["rows"][1]["timeline"][0]["stream"] = 2;
  EXPECT_NE(message(results).find(
                "pipeline[0].rows[1].timeline[0].stream 2 is not below the 2 streams of its row"),
            std::string::npos)
      << message(results);
  results["pipeline"][0]["rows"][1]["timeline"][0]["stream"] = 0;
  results["pipeline"][0]["rows"][1]["timeline"][0]["d2h_us"] = {5, 4};
  EXPECT_NE(message(results).find("timeline[0].d2h_us is not [begin, end]"), std::string::npos)
      << message(results);
}

// Through the command: the default file names, the errors and their exit code (4, naming the
// file), and the two pictures' options together (a usage error).
TEST(PlotCommand, RooflineAndTimelineFromTheCommandLine) {
  test::temp_dir dir("plot_roofline_cli");
  const std::string reduce =
      dir.write("default_job.json", test::results_data("2026-11-22-h100-final/default_job.json"));
  auto r = test::run_kernlab("plot --roofline " + reduce + " -o " + dir.str() + "/r.svg");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(test::read_file(dir.str() + "/r.svg").find("kernlab roofline: NVIDIA H100"),
            std::string::npos);
  r = test::run_command("cd " + dir.str() + " && " + KERNLAB_BINARY +
                        " --config /dev/null plot --roofline " + reduce);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir.str() + "/roofline.svg"));

  json pipeline = real_file("2026-11-22-h100-qam256/pipeline_2e27.json");
  pipeline["pipeline"] = json::array({to_json(two_schedules())});
  const std::string pj = dir.write("pipeline.json", pipeline.dump());
  r = test::run_command("cd " + dir.str() + " && " + KERNLAB_BINARY +
                        " --config /dev/null plot --timeline " + pj);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("wrote timeline.svg (1 pipeline)"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir.str() + "/timeline.svg"));

  // Not a results file (a tuning table), a pipeline drawn as a roofline, a sweep as a timeline,
  // a compile-only run: exit 4, the file named, nothing written.
  const std::string table = dir.write(
      "matmul_space.best.json", test::results_data("2026-11-23-h100-tune/matmul_space.best.json"));
  const std::string out = dir.str() + "/x.svg";
  r = test::run_kernlab("plot --roofline " + table + " -o " + out);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(table + ": "), std::string::npos) << r.output;
  r = test::run_kernlab("plot --roofline " + pj + " -o " + out);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(pj + ": no sweep records (a --pipeline result): kernlab plot "
                               "--timeline draws it"),
            std::string::npos)
      << r.output;
  r = test::run_kernlab("plot --timeline " + reduce + " -o " + out);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(reduce + ": no pipeline in this results file"), std::string::npos)
      << r.output;
  json compiled = real_file("2026-11-22-h100-final/default_job.json");
  for (auto& rec : compiled["records"]) {
    rec["outcome"] = "skipped";
    rec["timing"] = nullptr;
  }
  const std::string cj = dir.write("compiled.json", compiled.dump());
  r = test::run_kernlab("plot --roofline " + cj + " -o " + out);
  EXPECT_EQ(r.code, 4) << r.output;
  EXPECT_NE(r.output.find(cj + ": no timed rows to draw"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = test::run_kernlab("plot --roofline --timeline " + reduce);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--roofline and --timeline draw different pictures"), std::string::npos);
  r = test::run_kernlab("--roofline --variant reduce5 --compile-only");
  EXPECT_EQ(r.code, 2) << r.output;  // a plot option elsewhere is a usage error
}

}  // namespace
}  // namespace kl
