// The golden configurations: for every shipped family, each of its dtypes and ops, its default
// axes and axes given by --size, --shape and --axis (its real axes too), the configurations of the
// rows --plan prints, the errors of values a family refuses, --list's axes, and every row of the
// default job of config/kernlab.cfg; and,
// made in this process from the same command lines, each configuration's results-file "config",
// its key read back from that, and its journal key. A restructuring of the configurations must
// leave tests/data/golden_axes_*.txt as they are; a deliberate change rewrites them with
// KERNLAB_UPDATE_GOLDEN=1 and is reviewed.
#include "app/plan.hpp"
#include "cli/options.hpp"
#include "families/family.hpp"
#include "golden.hpp"
#include "record/record_json.hpp"
#include "registry/registry.hpp"
#include "runner/journal.hpp"
#include "runner/runner.hpp"
#include "shipped_families.hpp"
#include "test_util.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace kl {
namespace {

// The command lines, from each shipped family's description: its dtypes and ops, sizes or shapes
// that fit its axes, real axes by name, and values it refuses; then sweeps over several families.
std::vector<std::string> golden_commands() {
  family_registry fams;
  test::register_shipped_families(fams);
  std::vector<std::string> out;
  for (const auto& name : fams.names()) {
    const family_spec& s = fams.find(name)->spec();
    const std::string sel = "--family " + name + " --block 256";
    out.push_back("--family " + name);  // every variant and block, the default axes
    for (const auto& d : s.dtypes) {
      if (s.ops.empty()) out.push_back(sel + " --dtype " + d);
      for (const auto& o : s.ops) out.push_back(sel + " --dtype " + d + " --op " + o.name);
    }
    out.push_back(sel + " --input random --seed 7");
    const std::string too_big = std::to_string(s.axes.front().max + 1);
    if (s.axes.size() == 1) {
      out.push_back(sel + " --size 1,1000,2^20+3");
      out.push_back(sel + " --shape 17,4096");
      out.push_back(sel + " --size " + too_big);
      out.push_back(sel + " --shape 3x4");
    } else {
      std::string shape, wide;
      const std::uint64_t dims[] = {17, 33, 65, 9};
      for (std::size_t i = 0; i < s.axes.size(); ++i) {
        shape += (i ? "x" : "") + std::to_string(dims[i % 4]);
        wide += (i ? "x" : "") + (i ? std::string("1") : too_big);
      }
      out.push_back(sel + " --size 1000");
      out.push_back(sel + " --shape " + shape + "," + shape.substr(0, shape.rfind('x')) + "x1");
      out.push_back(sel + " --shape 5");
      out.push_back(sel + " --shape " + wide);
    }
    for (const auto& a : s.real_axes) {
      out.push_back(sel + " --axis " + a.name + "=0,20.5,-3.25");
      out.push_back(sel + " --size 1000,2000 --axis " + a.name + "=7,1e-3 --input random");
      out.push_back(sel + " --axis " + a.name + "=1e301");
    }
  }
  out.push_back(
      "--variant reduce5,matmul.naive,qam256.baseline,softmax.thread_per_row,scan.blelloch "
      "--block 256 --size 1000");
  out.push_back("--variant matmul.naive,softmax.thread_per_row --block 256 --size 100");
  out.push_back("--variant matmul.naive,transpose.naive --block 256 --shape 17x33");
  out.push_back("--variant reduce5 --block 256 --axis SNR_DB=1");
  // Ranges: of sizes, of a shape's dimensions, of an axis by name (whole and real).
  out.push_back("--variant reduce5,scan.blelloch --block 256 --size 2^10:2^13,1000:3000:+1000");
  out.push_back("--variant matmul.naive --block 256 --shape 16:64:*2x33x1:2:+1");
  out.push_back("--variant matmul.naive --block 256 --shape 16x16x16 --axis K=8:32");
  out.push_back("--variant qam256.baseline --block 256 --size 1000 --axis SNR_DB=-5:5:+2.5");
  out.push_back("--variant reduce5 --block 256 --size 2^13:2^10");
  out.push_back("--variant reduce5 --block 256 --size 1:2^20:+1");
  out.push_back(
      "--variant reduce5,qam256.baseline --block 256 --size 1000 --axis SNR_DB=3,4 --dtype "
      "float32");
  out.push_back("--variant reduce5 --block 256 --dtype float32 --size 0");
  // --axis names a size axis too: its values replace the shape's.
  out.push_back("--variant matmul.naive --block 256 --shape 17x33x65,5x5x5 --axis K=1,2^10");
  out.push_back("--variant reduce5,qam256.baseline --block 256 --axis N=1000,4K --dtype float32");
  out.push_back("--variant reduce5 --block 256 --axis N=2.5");
  out.push_back("--variant reduce5 --block 256 --axis N=0");
  return out;
}

// The checkout's folder, wherever it is, reads as $SRC.
std::string without_checkout(std::string text) {
  for (std::size_t at; (at = text.find(test::source_dir())) != std::string::npos;)
    text.replace(at, test::source_dir().size(), "$SRC");
  return text;
}

// What a transcript keeps of a command's standard output: all of it, the configurations of
// --plan's rows (each once, in order: the variants of a family change, its configurations must
// not), or --list's family lines (the axes).
enum class keep { all, configurations, families };

std::string kept(const std::string& output, keep what) {
  if (what == keep::all) return output;
  std::istringstream in(output);
  std::set<std::string> seen;
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (what == keep::families) {
      if (line.rfind("family ", 0) == 0) out += line + "\n";
      continue;
    }
    // "reduce.reduce5 block 256 int32 sum n=1000": the configuration after the block.
    const auto block = line.find(" block ");
    const auto config = block == std::string::npos ? block : line.find(' ', block + 7);
    const std::string c = config == std::string::npos ? line : line.substr(config + 1);
    if (seen.insert(c).second) out += c + "\n";
  }
  return out;
}

// Runs the kernlab binary; standard error joins the transcript only when the command fails, so
// that a warning does not count where the rows do.
std::string transcript_of(const std::string& prefix, const std::string& args, keep what) {
  const std::string err = (std::filesystem::temp_directory_path() /
                           ("kernlab_golden_axes_" + std::to_string(::getpid()) + ".err"))
                              .string();
  const auto r = test::run_command("{ " + std::string(KERNLAB_BINARY) + " " + prefix + args +
                                   " 2>" + err + "; }");
  std::string out = "$ kernlab " + prefix + args + "\n" + kept(r.output, what);
  if (r.code != 0) out += test::read_file(err);
  std::filesystem::remove(err);
  return without_checkout(out + "exit " + std::to_string(r.code) + "\n");
}

std::string cli_transcript() {
  const std::string kernels = "--kernels-dir " + test::kernels_dir() + " ";
  std::string out;
  for (const auto& args : golden_commands())
    out += transcript_of("--config /dev/null " + kernels + "--plan ", args, keep::configurations);
  out += transcript_of("--config /dev/null " + kernels, "--list", keep::families);
  // The default job, as `kernlab --plan` runs it: the shipped config file's sizes and types, every
  // row.
  out += transcript_of("--config " + test::source_dir() + "/config/kernlab.cfg " + kernels,
                       "--plan", keep::all);
  return out;
}

// The same command lines in this process: every configuration they make, once, with its
// results-file "config", the key a results file gives it back (compare pairs rows by it), and
// its journal key without the source's checksum (the variant's file, not the configuration).
std::string records_transcript() {
  family_registry fams;
  test::register_shipped_families(fams);
  std::string out;
  for (const auto& args : golden_commands()) {
    out += "$ " + args + "\n";
    std::vector<std::string> words = {"kernlab",       "--config",          "/dev/null",
                                      "--kernels-dir", test::kernels_dir(), "--no-plugins"};
    std::istringstream in(args);
    for (std::string w; in >> w;) words.push_back(w);
    std::vector<const char*> argv;
    for (const auto& w : words) argv.push_back(w.c_str());
    try {
      const cli_options opt = parse_command_line(static_cast<int>(argv.size()), argv.data(), {});
      const auto reg = app::load_registry(opt, fams);
      const run_request req = app::make_request(opt, *reg, fams, nullptr);
      std::set<std::string> seen;
      for (const planned_row& row : plan_rows(fams, req)) {
        if (!row.family_error.empty()) continue;
        const nlohmann::json j = to_json(row.config);
        const problem_config back = config_from_json(j);
        std::string journal = journal_key(*row.entry, row.block, row.config);
        journal = journal.substr(journal.find('|'));
        journal = journal.substr(0, journal.find("|source "));
        const std::string line = row.config.describe() + " | " + j.dump() + " | " +
                                 back.describe() + (to_json(back) == j ? "" : " (differs)") +
                                 " | " + journal;
        if (seen.insert(line).second) out += line + "\n";
      }
    } catch (const usage_error& e) {
      out += std::string("usage error: ") + e.what() + "\n";
    }
  }
  return without_checkout(out);
}

TEST(GoldenAxes, PlanListAndErrorsOfEveryShippedFamily) {
  test::expect_golden("golden_axes_cli.txt", cli_transcript(), "GoldenAxes");
}

TEST(GoldenAxes, RecordsAndJournalKeysOfEveryShippedFamily) {
  test::expect_golden("golden_axes_records.txt", records_transcript(), "GoldenAxes");
}

}  // namespace
}  // namespace kl
