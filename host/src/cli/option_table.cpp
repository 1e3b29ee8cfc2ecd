#include "cli/option_table.hpp"

#include "cli/options.hpp"
#include "cuda/occupancy.hpp"
#include "spec/dtypes.hpp"

#include <algorithm>

namespace po = boost::program_options;

namespace kl::cli {

po::options_description make_description() {
  // The dtypes kernlab knows, from their one table.
  std::string dtype_names;
  for (const auto& d : data_dtypes()) dtype_names += (dtype_names.empty() ? "" : ", ") + d;
  // One option per line reads as a table: clang-format leaves it alone.
  // clang-format off
  po::options_description select("Selecting what runs");
  select.add_options()
    ("variant,v", po::value<std::vector<std::string>>()->composing(),
     "variants: a name, a comma list, a wildcard (my_idea*, family.my_idea, family.*) or 'all' "
     "(every family's)")
    ("family", po::value<std::string>(),
     "only this family (kernlab --list shows them; default: every family)")
    ("problem", po::value<std::string>(), "same as --family")
    ("block,b", po::value<std::string>(), "block sizes: a comma list or 'all' (128,256,512,1024)")
    ("size,n", po::value<std::string>(),
     "problem sizes: a comma list of 268435456, 2^28, 2^20+3, 16M and ranges FIRST:LAST[:*F|:+D] "
     "(2^20:2^28:*2, 1024:8192:+1024; *2 without a step); a family with several axes: W in every "
     "axis")
    ("shape", po::value<std::string>(),
     "shapes, one value per axis of the family, e.g. 4096x1000,4095x17; a dimension may be a range "
     "(1024:4096:*2x512) (kernlab --list shows each family's axes and defaults)")
    ("axis", po::value<std::vector<std::string>>()->composing(),
     "values of an axis, NAME=v1,v2 or a range (SNR_DB=0:20:+5, K=64:1024:*2) (repeatable; "
     "kernlab --list shows a family's axes): one configuration per value, in the families that "
     "have the axis")
    ("dtype", po::value<std::string>(),
     ("element types, a comma list of " + dtype_names +
      "; each family runs the ones it has (kernlab --list shows them)").c_str())
    ("op", po::value<std::string>(),
     "operations, for the families that have them (comma list; kernlab --list shows them)")
    ("seed", po::value<std::string>(), "seed of the input generator (printed with the results)")
    ("input", po::value<std::string>(), "input values: exact (default) or random")
    ("baseline", po::value<std::string>(),
     "variant for the 'x of baseline' column (default: the family's library)");
  po::options_description where("Where things are");
  where.add_options()
    ("kernels-dir", po::value<std::vector<std::string>>()->composing(),
     "adds a folder of <family>/*.cu kernel files to the config's (repeatable)")
    ("kernels-dir-only", po::bool_switch(),
     "use the command line's --kernels-dir folders alone, without the config's")
    ("plugin-dir", po::value<std::vector<std::string>>()->composing(),
     "adds a folder of plugin .so files to the build's (repeatable; KERNLAB_PLUGIN_PATH adds "
     "more)")
    ("no-plugins", po::bool_switch(), "load no plugins")
    ("config", po::value<std::string>(), "config file (default: config/kernlab.cfg)")
    ("arch", po::value<std::string>(), "compile target when there is no GPU (default sm_90)")
    ("cuda-include", po::value<std::string>(), "the CUDA toolkit's include folder")
    ("cache-dir", po::value<std::string>(),
     "compile cache folder (default: $XDG_CACHE_HOME/kernlab or ~/.cache/kernlab)")
    ("no-cache", po::bool_switch(), "compile every file, read and write no compile cache")
    ("cache-max-size", po::value<std::string>(),
     "cap on the compile cache's entries, e.g. 2GiB (the default), 500M; the least recently used "
     "go first")
    ("max-size", po::value<std::string>(),
     "cache prune: prune down to this size, e.g. 500M (default: the cap, --cache-max-size)")
    ("from", po::value<std::string>(),
     "new variant: the variant (or tunable file) of the family to copy (default: the first of its "
     "sequence)");
  po::options_description timing("Timing");
  timing.add_options()
    ("warmup", po::value<int>(), "untimed runs before sampling (default 2)")
    ("min-samples", po::value<int>(), "fewest samples (default 10)")
    ("min-time", po::value<double>(), "least sampled kernel time in seconds (default 0.5)")
    ("max-noise", po::value<double>(),
     "stdrel rule: stop once the relative std. deviation is under this, in % (default 0.5)")
    ("stop-rule", po::value<std::string>(),
     "when sampling stops: stdrel (the noise is under --max-noise; default) or ci (the row's "
     "95% interval, what a rerun can move, is within +-(--max-ci))")
    ("max-ci", po::value<double>(),
     "ci rule: stop once the row's 95% interval is within +- this, in % (default 0.5)")
    ("min-interval", po::value<double>(),
     "the narrowest interval a row is given, +- this % of its median: what two runs move a row "
     "by that its placements do not show (default 0.3; 0: the placements' interval alone)")
    ("placements", po::value<int>(),
     "time each row in at least this many placements: the problem moved to fresh device memory "
     "between them, the interval computed from how far their medians lie apart (default 4)")
    ("max-placements", po::value<int>(),
     "ci rule: add placements up to this many while the interval is wider than --max-ci "
     "(default 12)")
    ("placement-workers", po::value<int>(),
     "worker processes on each GPU that a row's placements take turns in, so that its interval "
     "also covers what moves between processes (default 4; 1: every placement in one worker)")
    ("launch", po::value<std::string>(),
     "how a sample launches the operation: graph (captured once into a CUDA graph; default) or "
     "stream (each launch from the stream, as the code would)")
    ("timeout", po::value<double>(), "stop sampling after this many seconds (default 15)")
    ("hot", po::bool_switch(), "do not flush L2 between samples (same as --flush none)")
    ("flush", po::value<std::string>(),
     "how L2 is made cold before each sample: read (default; reads a clean buffer twice the L2), "
     "write (writes one, as nvbench does), none")
    ("samples", po::bool_switch(),
     "keep every sample of every row in --json/--jsonl (samples_us, in the order taken)")
    ("energy", po::bool_switch(),
     "after timing a row, run it back to back while NVML's energy counter is read: joules per "
     "operation and average watts (needs NVML, libnvidia-ml.so.1)")
    ("energy-time", po::value<double>(),
     "--energy: the least time each row runs back to back, in seconds (default 0.5; longer while "
     "the energy counter has moved fewer than 5 times, up to 10 s more)");
  po::options_description safety("Isolation and recovery");
  safety.add_options()
    ("kernel-timeout", po::value<double>(),
     "a launch still running after this many seconds is a hang, unless it reports a fault within "
     "as long again (5 to 30 s): its worker is stopped; also the time limit of a plugin's probe "
     "(default 10; 120 under --sanitize)")
    ("device", po::value<std::string>(),
     "run on GPU N (an ordinal, as nvidia-smi numbers them) instead of GPU 0: its workers, its "
     "context, and the architecture the kernels are compiled for")
    ("devices", po::value<std::string>(),
     "sweeps and tune: spread the rows over several GPUs of this machine, 'all' or a list "
     "(0,2,3): one worker per GPU, each row measured on one GPU, which its record names "
     "(docs/many_gpus.md)")
    ("in-process", po::bool_switch(),
     "run kernels in kernlab itself, not in a worker process (a crash then ends the sweep's GPU "
     "work)")
    ("journal", po::value<std::string>(),
     "the journal file (default: ~/.cache/kernlab/journal.log)")
    ("resume", po::bool_switch(),
     "skip the rows the journal says finished; mark the one that was running as suspect")
    ("sanitize", po::value<std::string>()->implicit_value("memcheck,racecheck"),
     "run each variant under compute-sanitizer: memcheck, racecheck (a list; validation only, no "
     "timing)");
  po::options_description outputs("Outputs");
  outputs.add_options()
    ("json", po::value<std::string>(),
     "write every record, with the reproducibility block, to FILE (docs/results_format.md)")
    ("csv", po::value<std::string>(), "write one line per record to FILE")
    ("jsonl", po::value<std::string>(),
     "write each record to FILE as one JSON line as soon as its row finishes, with the device "
     "and the run in every line (pandas.read_json(FILE, lines=True))")
    ("markdown", po::bool_switch(), "print the tables as markdown")
    ("profile", po::bool_switch(),
     "after the sweep, run each passed row once more under Nsight Compute (ncu) and show its DRAM "
     "throughput, achieved occupancy, L2 hit rate, SM throughput and top two warp stalls; the full "
     "report is kept (named in the output)")
    ("ncu", po::value<std::string>(),
     "the ncu program for --profile (default: $CUDA_HOME/bin/ncu, else /usr/local/cuda/bin/ncu, "
     "else on PATH)")
    ("output,o", po::value<std::string>(),
     "the file `kernlab plot` writes (default: sweep.svg; roofline.svg with --roofline, "
     "timeline.svg with --timeline)")
    ("roofline", po::bool_switch(),
     "plot: each timed row at its arithmetic intensity and throughput, under the device's DRAM "
     "and FP32 roofs")
    ("timeline", po::bool_switch(),
     "plot: a --pipeline result's streams over time, each chunk's H2D, kernel and D2H")
    ("threshold", po::value<double>(),
     "compare: a row whose interval lies apart from the old one's and that is slower by more "
     "than this % is a regression; any regression makes the exit code 1 (default 5)")
    ("force", po::bool_switch(), "compare: compare runs made on different GPU models");
  po::options_description actions("Actions");
  actions.add_options()
    ("help,h", po::bool_switch(), "this help")
    ("version", po::bool_switch(), "print the version")
    ("list", po::bool_switch(), "list every family and its variants with their origins, and exit")
    ("list-names", po::bool_switch(),
     "print the names --variant takes, one a line, and exit (for shell completion)")
    ("completion", po::value<std::string>(),
     "print a completion script for bash or zsh, and exit: source <(kernlab --completion bash)")
    ("plan", po::bool_switch(),
     "print the rows this command line would run, one configuration key a line (the key that "
     "compare pairs rows by), in the order they would run, and exit: nothing is compiled or run")
    ("compile-only", po::bool_switch(),
     "compile the selected variants for every block size and exit (no GPU needed)")
    ("resources", po::bool_switch(),
     "show registers, shared memory, spills and occupancy per configuration, without timing (no "
     "GPU needed)")

    ("watch", po::bool_switch(),
     "keep running: when a kernel file or header is saved, recompile, revalidate and retime the "
     "variants it changes")
    ("compile-jobs,j", po::value<int>(),
     "threads compiling kernel files while the GPU times those compiled (default: one per core)")
    ("compile-timeout", po::value<std::string>(),
     "a file whose compile takes longer than this many seconds fails its rows; the others go on "
     "(default 300)");
  po::options_description tune("kernlab tune");
  tune.add_options()
    ("strategy", po::value<std::string>(),
     "tune: how the space is searched (default bayes; the list is below)")
    ("budget", po::value<std::string>(),
     "tune: evaluations per file and configuration (200), or wall time (90s, 5m, 1h); default 100")
    ("store", po::value<std::string>(),
     "tune: the tuning store, every evaluation as a JSON line (default: tuning.jsonl in the cache "
     "folder); a point already stored for the same source, device and toolkit is not run again")
    ("fresh", po::bool_switch(), "tune: measure every point again, whatever the store holds")
    ("export", po::value<std::string>(),
     "tune: write the tuning table (the best configuration per problem, with provenance) as JSON")
    ("export-header", po::value<std::string>(),
     "tune: write the best configurations as a C/C++ header (constexpr tables and #defines)")
    ("t4", po::value<std::string>(),
     "tune: write every evaluated point in the autotuning community's T4 results format (JSON), "
     "which Kernel Tuner also writes")
    ("objective", po::value<std::string>(),
     "tune: what the search minimises: time (the median; default) or energy (joules per "
     "operation, measured with --energy for every point)")
    ("race", po::value<std::string>(),
     "tune: stop timing a point once its interval lies this many percent above the best so "
     "far's (default 3), or 'off' to time every point in full; the best is always timed in full")
    ("replay", po::value<std::string>(),
     "tune: answer every point from a recorded exhaustive tune (its --json) instead of the GPU, to "
     "compare strategies on a measured space at no GPU time");
  po::options_description qam("The host -> device -> host pipeline");
  qam.add_options()
    ("pipeline", po::bool_switch(),
     "time host -> device -> host in chunks over streams with one kernel (--variant NAME --block "
     "B) of a family with a [pipeline] (docs/families.md), instead of the sweep")
    ("streams", po::value<std::string>(), "pipeline: stream counts, a comma list (default 1,2,4,8)")
    ("issue-order", po::value<std::string>(),
     "pipeline: breadth (all copies in, all kernels, all copies out), depth (chunk by chunk), or "
     "both (default breadth,depth)")
    ("chunks", po::value<std::string>(),
     "pipeline: chunks the data is split into: a count, or 'auto' (default: 4 per stream)")
    ("pipeline-runs", po::value<int>(),
     "pipeline: timed runs per configuration, after a warm-up; the median is shown (default 5)");
  // clang-format on
  po::options_description all;
  all.add(actions).add(select).add(where).add(timing).add(safety).add(outputs).add(tune).add(qam);
  return all;
}

const char* mode_name(mode m) {
  switch (m) {
    case mode::sweep: return "a sweep";
    case mode::list: return "--list";
    case mode::plan: return "--plan";
    case mode::compile_only: return "--compile-only";
    case mode::resources: return "--resources";
    case mode::pipeline: return "--pipeline";
    case mode::compare: return "kernlab compare";
    case mode::plot: return "kernlab plot";
    case mode::cache: return "kernlab cache";
    case mode::tune: return "kernlab tune";
    case mode::scaffold: return "kernlab new";
  }
  return "?";
}

const std::vector<command_word>& command_words() {
  static const std::vector<command_word> words = {
      {"tune", mode::tune,
       "usage: kernlab tune --variant FILE [--strategy S] [--budget N|90s] [--size/--shape ...]\n"
       "Searches a tunable kernel file's space (its tune: and require: lines) and ranks the "
       "points\nit measured; docs/tuning.md tells the strategies and the store.\n"},
      {"check-dispatch", mode::tune,
       "usage: kernlab check-dispatch FILE.h --variant FILE --size SIZES [tune's options]\n"
       "Measures the size selector of a header that kernlab tune --export-header wrote: at each "
       "size\n(those not in the tune, most usefully) the file is tuned, the header's pick first, "
       "and the pick's\nloss against that size's best is printed; docs/tuning.md.\n"},
      {"compare", mode::compare,
       "usage: kernlab compare OLD.json NEW.json (or OLD_DIR NEW_DIR: their *.json paired by "
       "name)\n"
       "Pairs the rows of two results files by configuration and says which changed (their "
       "intervals apart)\nand which regressed (changed, slower by more than --threshold %, or "
       "no longer passing).\nExit 0: no regression; 1: a regression; 4: a file that cannot be "
       "read, or no row in common.\n"},
      {"plot", mode::plot,
       "usage: kernlab plot [--roofline | --timeline] RESULTS.json [-o FILE.svg]\n"
       "Draws a results file as an SVG: the roofline of a sweep, or the timeline of a "
       "--pipeline run.\n"},
      {"cache", mode::cache,
       "usage: kernlab cache info|clear|prune [--cache-dir DIR] [--max-size SIZE]\n"
       "The compile cache: what it holds, emptying it, or pruning it to a size (oldest "
       "first).\n"},
      {"new", mode::scaffold,
       "usage: kernlab new family NAME [--kernels-dir DIR]\n"
       "       kernlab new variant FAMILY NAME [--from VARIANT] [--kernels-dir DIR]\n"
       "Writes files to start from, that compile, validate and are timed unchanged: a family "
       "folder\n(family.toml, a reference and a first variant), or a variant copied from one of "
       "the family's.\nThey go into DIR (the first --kernels-dir; default my_kernels); no file "
       "is written over.\n"}};
  return words;
}

const command_word* find_command(const std::string& name) {
  for (const auto& w : command_words())
    if (name == w.name) return &w;
  return nullptr;
}

std::string command_list() {
  std::string out;
  for (const auto& w : command_words())
    out += (out.empty() ? "kernlab " : ", kernlab ") + std::string(w.name);
  return out;
}

// Which modes each option applies to; an option not listed here applies everywhere (help,
// version, config, the folders). One table, so that an option is never silently ignored: naming it
// on the command line for a mode it does not apply to is a usage error.
namespace {

const std::map<std::string, std::vector<mode>>& option_modes() {
  using m = mode;
  // --plan prints the rows of the sweep its command line describes: whatever shapes a sweep's
  // rows or how they run applies to it, so that --plan can be added to any sweep's command line.
  static const std::vector<m> selecting = {m::sweep,     m::list,     m::plan, m::compile_only,
                                           m::resources, m::pipeline, m::tune};
  static const std::vector<m> compiling = {m::sweep,     m::plan,     m::compile_only,
                                           m::resources, m::pipeline, m::tune};
  static const std::vector<m> running = {m::sweep, m::plan, m::pipeline, m::tune};
  static const std::vector<m> timing = {m::sweep, m::plan, m::tune};
  // The problem's options are checked against the selected families by a compile too, so a
  // sweep's command line stays valid with --compile-only or --resources added.
  static const std::vector<m>& problem = compiling;
  static const std::map<std::string, std::vector<m>> table = {
      {"plan", {m::plan}},
      {"variant", selecting},
      {"family", selecting},
      {"problem", selecting},
      {"block", compiling},
      {"dtype", compiling},
      {"op", compiling},
      {"size", problem},
      {"shape", problem},
      {"seed", problem},
      {"input", problem},
      {"axis", problem},
      {"baseline", timing},
      {"arch", compiling},
      {"cuda-include", compiling},
      {"compile-jobs", compiling},
      // The cache holds the plugins' probe verdicts too, which --list reads.
      {"cache-dir",
       {m::sweep, m::list, m::compile_only, m::resources, m::pipeline, m::cache, m::tune}},
      {"no-cache", selecting},
      {"warmup", timing},
      {"min-samples", timing},
      {"min-time", timing},
      {"max-noise", timing},
      {"timeout", timing},
      {"hot", timing},
      {"flush", timing},
      {"stop-rule", timing},
      {"max-ci", timing},
      {"min-interval", timing},
      {"placements", timing},
      {"max-placements", timing},
      {"placement-workers", timing},
      {"launch", timing},
      {"samples", timing},
      {"energy", timing},
      {"energy-time", timing},
      {"compile-timeout", compiling},
      {"cache-max-size", {m::sweep, m::compile_only, m::resources, m::pipeline, m::cache, m::tune}},
      {"max-size", {m::cache}},
      {"from", {m::scaffold}},
      // A launch's time limit, and a plugin probe's (whatever reads the plugins' tables).
      {"kernel-timeout", selecting},
      {"in-process", running},
      {"device", running},
      {"devices", timing},
      {"journal", {m::sweep}},
      {"resume", timing},
      {"sanitize", {m::sweep}},
      {"profile", {m::sweep}},
      {"ncu", {m::sweep}},
      {"json", {m::sweep, m::compile_only, m::resources, m::pipeline, m::tune}},
      {"csv", {m::sweep, m::compile_only, m::resources, m::tune}},
      {"jsonl", {m::sweep, m::tune}},
      {"t4", {m::tune}},
      {"markdown", {m::sweep, m::resources, m::pipeline, m::tune, m::compare}},
      {"strategy", {m::tune}},
      {"budget", {m::tune}},
      {"store", {m::tune}},
      {"fresh", {m::tune}},
      {"export", {m::tune}},
      {"export-header", {m::tune}},
      {"replay", {m::tune}},
      {"objective", {m::tune}},
      {"race", {m::tune}},
      {"output", {m::plot}},
      {"roofline", {m::plot}},
      {"timeline", {m::plot}},
      {"threshold", {m::compare}},
      {"force", {m::compare}},
      {"watch", {m::sweep, m::compile_only}},
      {"streams", {m::pipeline}},
      {"issue-order", {m::pipeline}},
      {"chunks", {m::pipeline}},
      {"pipeline-runs", {m::pipeline}}};
  return table;
}

}  // namespace

bool option_applies(const std::string& key, mode m) {
  const auto it = option_modes().find(key);
  return it == option_modes().end() ||
         std::find(it->second.begin(), it->second.end(), m) != it->second.end();
}

void check_options_apply(mode md, const std::set<std::string>& given) {
  for (const auto& key : given) {
    const auto it = option_modes().find(key);
    if (it == option_modes().end()) continue;
    if (std::find(it->second.begin(), it->second.end(), md) != it->second.end()) continue;
    std::string where;
    for (std::size_t i = 0; i < it->second.size(); ++i)
      where += std::string(i == 0                       ? ""
                           : i + 1 == it->second.size() ? " or "
                                                        : ", ") +
               mode_name(it->second[i]);
    throw usage_error("--" + key + " does not apply to " + mode_name(md) + " (only to " + where +
                      ")");
  }
}

}  // namespace kl::cli
