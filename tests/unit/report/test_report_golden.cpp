// The report's goldens: the sweep table of every group of the frozen results files
// (tests/data/results, tests/data/python) as text and as markdown, with the families and without,
// and of rows given every mark a table has (energy, several GPUs, timeouts, notes); and the three
// pictures (plot, --roofline, --timeline) of those files and of variants that reach their other
// branches. A restructuring of report/ must leave tests/data/golden_tables.txt and
// tests/data/golden_pictures.txt as they are; a deliberate change rewrites them with
// KERNLAB_UPDATE_GOLDEN=1 and is reviewed. The pictures are kept as their size and hash: the
// files themselves would be a megabyte; when one changes, this build's pictures are written to
// the temporary folder for a look.
#include "golden.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace kl {
namespace {

using nlohmann::json;

json frozen(const std::string& relative) {
  const std::string text = test::results_data(relative);
  EXPECT_FALSE(text.empty()) << test::results_data_dir() << "/" << relative;
  return json::parse(text);
}

json python_fixture(const std::string& name) {
  const auto r = test::run_command("gzip -dc '" + test::source_dir() + "/tests/data/python/" +
                                   name + ".json.gz'");
  EXPECT_EQ(r.code, 0) << r.output;
  return json::parse(r.output);
}

// The sweep files, by a short name.
std::vector<std::pair<std::string, json>> sweep_files() {
  return {{"default_job", frozen("2026-11-22-h100-final/default_job.json")},
          {"matmul 1024", frozen("2026-11-22-h100-matmul/record_1024x1024x1024.json")},
          {"matmul 4095", frozen("2026-11-22-h100-matmul/record_4095x4097x1023.json")},
          {"matmul 8192", frozen("2026-11-22-h100-matmul/record_8192x8192x8192.json")},
          {"tensor cores", frozen("2026-11-23-h100-tensor-cores/tc_8192x8192x8192.json")},
          {"qam256", frozen("2026-11-22-h100-qam256/kernels_2e28.json")},
          {"python sweep", python_fixture("sweep")},
          {"python tune", python_fixture("tune")}};
}

// A results file's records grouped as a sweep prints them: one group per family and
// configuration, in the order they first come.
std::vector<std::vector<result_record>> groups_of(const json& results) {
  std::vector<std::vector<result_record>> groups;
  std::map<std::string, std::size_t> index;
  for (auto& r : records_from_results(results)) {
    const std::string key = r.variant.family + " " + r.config.describe();
    if (!index.count(key)) {
      index[key] = groups.size();
      groups.emplace_back();
    }
    groups[index[key]].push_back(std::move(r));
  }
  return groups;
}

cuda::device_info h100() {
  cuda::device_info d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.l2_bytes = 50u << 20;
  d.sm_clock_khz = 1980000;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  return d;
}

// A device whose tensor-core peaks kernlab does not know (a Pascal part).
cuda::device_info pascal() {
  cuda::device_info d = h100();
  d.name = "Tesla P100";
  d.cc_major = 6;
  d.sm_count = 56;
  return d;
}

// The rows of a reduce group given, in turn, every mark a row of the table can carry.
std::vector<result_record> marked(std::vector<result_record> group) {
  for (std::size_t i = 0; i < group.size(); ++i) {
    result_record& r = group[i];
    r.gpu = cuda::gpu_identity{static_cast<int>(i % 2), "GPU-" + std::to_string(i % 2),
                               "NVIDIA H100 80GB HBM3", 1980000, 2619000};
    if (!r.timing) continue;
    switch (i % 9) {
      case 1: r.timing->timed_out = true; break;
      case 2:
        r.timing->rule = stop_rule::ci;
        r.timing->timed_out = true;
        r.timing->clock_dropped = true;
        break;
      case 3: r.timing->note = "the clock was locked"; break;
      case 4:
      case 5: {
        energy_stats e;
        e.method = i % 9 == 4 ? "counter" : "power samples";
        e.joules_per_op = (i % 9 == 4 ? 2e-5 : 3e-4) * (1 + 0.1 * static_cast<double>(i));
        e.watts = 350 + static_cast<double>(i);
        e.us_per_op = r.timing->median_ms * 1e3 * 0.9;
        r.energy = e;
        break;
      }
      case 6: {
        energy_stats e;
        e.error = "NVML: not supported";
        r.energy = e;
        break;
      }
      case 7:
        r.status = outcome::failed;
        r.message = "cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS\nat reduce.cu:12";
        break;
      case 8: r.sanitizer = "memcheck: clean"; break;
      default: r.resumed = true;
    }
  }
  if (group.size() > 3) {
    group[3].status = outcome::wrong_result;
    group[3].message = std::string(90, 'w') + " (a message longer than the column)";
  }
  return group;
}

// A file's groups printed with `opt`, under a line that says which file and how.
void print_file(std::ostream& out, const std::string& title, const json& results,
                const cuda::device_info& device, const table_options& opt) {
  out << "$ " << title << "\n";
  for (const auto& group : groups_of(results)) print_group(out, group, device, opt);
}

std::string tables_transcript() {
  family_registry shipped;
  test::register_shipped_families(shipped);
  std::ostringstream out;
  table_options text, markdown;
  text.families = markdown.families = &shipped;
  markdown.markdown = true;
  for (const auto& [name, results] : sweep_files()) {
    print_file(out, name, results, h100(), text);
    print_file(out, name + " markdown", results, h100(), markdown);
    // Without the families a group is in GB/s, whatever its family; another baseline; a device
    // without tensor-core peaks.
    if (name == "matmul 1024" || name == "tensor cores") {
      print_file(out, name + " no families", results, h100(), table_options{});
      table_options other = text;
      other.baseline = "naive";
      print_file(out, name + " --baseline " + other.baseline + ", Pascal", results, pascal(),
                 other);
    }
  }
  const auto reduce = groups_of(frozen("2026-11-22-h100-final/default_job.json"));
  for (const table_options& opt : {text, markdown}) {
    out << "$ marked rows" << (opt.markdown ? " markdown" : "") << "\n";
    for (std::size_t g = 0; g < reduce.size(); g += 4)
      print_group(out, marked(reduce[g]), h100(), opt);
  }
  return out.str();
}

// A results file's pipeline given stage times per chunk, as a kernlab of today records them:
// the frozen file's rows each with a timeline, and a second problem as an older file has it, with
// a wrong row and a row without stage times.
json with_timelines(json results, double scale) {
  auto timeline = [&](json& row) {
    const int streams = row.at("streams"), chunks = row.at("chunks");
    const double wall_us = row.at("wall_ms").get<double>() * 1000 * scale;
    row["wall_ms"] = wall_us / 1000;
    const double per = wall_us / (static_cast<double>(chunks) / streams + 2);
    json t = json::array();
    for (int c = 0; c < chunks; ++c) {
      const double start = (c / streams) * per + 0.37 * scale * (c % streams);
      json chunk = {{"chunk", c}, {"stream", c % streams}};
      const char* keys[3] = {"h2d_us", "kernel_us", "d2h_us"};
      for (int k = 0; k < 3; ++k) {
        const double b = start + k * per * 0.9;
        chunk[keys[k]] = {b, b + per * (k == 1 ? 0.05 : 0.8)};
      }
      t.push_back(chunk);
    }
    row["timeline"] = t;
  };
  for (auto& row : results["pipeline"][0]["rows"]) timeline(row);
  json second = results["pipeline"][0];
  // As files before 2026-11-26 have it: the bytes each way, no family.
  for (const char* k : {"bytes_in", "bytes_out", "family"}) second.erase(k);
  second["bytes_each_way"] = 2147483648.0;
  second["rows"] = {second["rows"][0], second["rows"][1], second["rows"][2]};
  second["rows"][1]["valid"] = false;
  second["rows"][2].erase("timeline");
  results["pipeline"].push_back(second);
  return results;
}

// The sweep files in one, and that file with less and less of a device.
std::vector<std::pair<std::string, json>> picture_inputs() {
  auto inputs = sweep_files();
  json every = inputs.front().second;
  for (std::size_t i = 1; i < 6; ++i)
    for (const auto& r : inputs[i].second.at("records")) every["records"].push_back(r);
  inputs.push_back({"every", every});
  json& dev = every["reproducibility"]["device"];
  dev.erase("peak_bandwidth_gbs");
  inputs.push_back({"every, no bandwidth", every});
  for (const char* k :
       {"peak_fp32_tflops", "peak_tensor16_tflops", "peak_tf32_tflops", "peak_fp64_tensor_tflops"})
    dev.erase(k);
  inputs.push_back({"every, no bandwidth, no compute peaks", every});
  dev.erase("compute_capability");
  dev.erase("l2_bytes");
  inputs.push_back({"every, no peaks", every});
  dev = nullptr;
  inputs.push_back({"every, no device", every});
  json skipped = inputs.front().second;
  json kept = json::array();
  for (const auto& r : skipped.at("records"))
    if (r.at("outcome") == "skipped") kept.push_back(r);
  skipped["records"] = kept;
  inputs.push_back({"only skipped", skipped});
  const json pipeline = frozen("2026-11-22-h100-qam256/pipeline_2e27.json");
  inputs.push_back({"pipeline", pipeline});
  inputs.push_back({"pipeline with timelines", with_timelines(pipeline, 1)});
  inputs.push_back(
      {"pipeline with timelines in microseconds", with_timelines(pipeline, 1.0 / 6000)});
  return inputs;
}

// Each picture's size and hash, a line each; the pictures themselves, by a file name, into
// `svgs`.
std::string pictures_transcript(std::map<std::string, std::string>& svgs) {
  std::ostringstream out;
  for (const auto& [name, results] : picture_inputs()) {
    for (const std::string kind : {"plot", "roofline", "timeline"}) {
      std::ostringstream svg;
      out << name << ", " << kind << ": ";
      try {
        if (kind == "plot") write_svg(results, svg);
        if (kind == "roofline") write_roofline_svg(results, svg);
        if (kind == "timeline") write_timeline_svg(results, svg);
        out << svg.str().size() << " bytes, hash " << content_hash(svg.str()) << "\n";
      } catch (const std::exception& e) {
        out << "error: " << e.what() << "\n";
      }
      std::string file = name + "." + kind + ".svg";
      for (char& c : file)
        if (c == ' ' || c == ',') c = '_';
      svgs[file] = svg.str();
    }
  }
  return out.str();
}

TEST(Table, TheGroupsOfTheFrozenResultsAreTheGoldenOnes) {
  test::expect_golden("golden_tables.txt", tables_transcript(), "Table.TheGroupsOfTheFrozen");
}

TEST(Plot, ThePicturesOfTheFrozenResultsAreTheGoldenOnes) {
  std::map<std::string, std::string> svgs;
  test::expect_golden("golden_pictures.txt", pictures_transcript(svgs),
                      "Plot.ThePicturesOfTheFrozen");
  if (!HasFailure()) return;
  // Kept, to be compared with the pictures of the commit before.
  const auto dir = std::filesystem::temp_directory_path() / "kernlab_golden_pictures";
  std::filesystem::create_directories(dir);
  for (const auto& [file, svg] : svgs) std::ofstream(dir / file, std::ios::binary) << svg;
  ADD_FAILURE() << "this build's pictures are in " << dir.string();
}

}  // namespace
}  // namespace kl
