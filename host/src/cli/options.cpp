#include "cli/options.hpp"
#include "cli/command_line.hpp"
#include "cli/option_table.hpp"
#include "cuda/occupancy.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "spec/names.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kl {

using cli::check_options_apply;
using cli::make_description;
using cli::mode;
using cli::read_command_line;
using cli::read_config_file;
using cli::read_options;

namespace {

// A list option's items, which must name something: an empty list (`--variant "$V"` with V
// unset) would select nothing, and the run would measure nothing and exit 0.
template <typename T>
std::vector<T> at_least_one(std::vector<T> items, const std::string& option,
                            const std::string& what) {
  if (items.empty()) throw usage_error(option + " needs at least one " + what);
  return items;
}

std::vector<std::string> split_all(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& i : items)
    for (auto& s : split_list(i)) out.push_back(s);
  return out;
}

// A number option's value, checked once for every option: finite and within [lo, hi] (or (lo, hi]
// when lo itself is not allowed). Boost reads "nan", "inf" and "1e300" as doubles; each passed a
// plain `> 0` test and then overflowed a conversion (--kernel-timeout 1e300 killed every row as a
// hang after 0.1 s).
template <typename T>
T bounded(const po::variables_map& vm, const char* key, T fallback, T lo, T hi, const char* unit,
          bool lo_allowed = true, bool infinity_allowed = false) {
  if (!vm.count(key)) return fallback;
  const T v = vm[key].as<T>();
  if (infinity_allowed && std::isinf(static_cast<double>(v)) && v > 0) return v;
  const bool ok =
      std::isfinite(static_cast<double>(v)) && (lo_allowed ? v >= lo : v > lo) && v <= hi;
  if (!ok) {
    std::ostringstream os;
    os << "--" << key << " " << v << ": must be " << unit << " in " << (lo_allowed ? "[" : "(")
       << lo << ", " << hi << "]";
    throw usage_error(os.str());
  }
  return v;
}

// Whether two outputs would be written to one file: the same path once links, "." and ".."
// are resolved, or, for files that exist, one file under two names (a hard link). A stream or
// a device ("-", /dev/null) may take several.
bool same_output_file(const std::string& a, const std::string& b) {
  // Standard output takes one output: `--json - --csv -` would be neither JSON nor CSV.
  const auto standard = [](const std::string& p) { return p == "-" || p == "/dev/stdout"; };
  if (standard(a) && standard(b)) return true;
  if (a == "-" || b == "-") return false;
  std::error_code ea, eb;
  const fs::file_status sa = fs::status(a, ea), sb = fs::status(b, eb);
  if ((fs::exists(sa) && !fs::is_regular_file(sa)) || (fs::exists(sb) && !fs::is_regular_file(sb)))
    return false;
  if (fs::exists(sa) && fs::exists(sb)) return fs::equivalent(a, b, ea);
  const auto resolved = [](const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::absolute(path, ec).lexically_normal() : p;
  };
  return resolved(a) == resolved(b);
}

// Each output option names a file of its own: two outputs in one file leave only the last one
// written (--json f --csv f kept the CSV alone).
void check_distinct_outputs(const cli_options& o) {
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--json", &o.json_path},     {"--csv", &o.csv_path},
      {"--jsonl", &o.jsonl_path},   {"--t4", &o.t4_path},
      {"--export", &o.export_json}, {"--export-header", &o.export_header},
      {"-o", &o.output_path},       {"--journal", &o.journal_path},
      {"--store", &o.store_path}};
  for (std::size_t i = 0; i < std::size(outputs); ++i)
    for (std::size_t k = i + 1; k < std::size(outputs); ++k) {
      const auto& [a, path_a] = outputs[i];
      const auto& [b, path_b] = outputs[k];
      if (!path_a->empty() && !path_b->empty() && same_output_file(*path_a, *path_b))
        throw usage_error(std::string(a) + " " + *path_a + " and " + b + " " + *path_b +
                          (*path_a == "-" || *path_a == "/dev/stdout"
                               ? " both write to standard output"
                               : " are one file") +
                          ": give each output a file of its own");
    }
}

// Whether two spellings of a folder are one folder: the same folder on disk, or, where either
// does not exist, the same path once made absolute.
bool same_folder(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::absolute(a, ec).lexically_normal() == fs::absolute(b, ec).lexically_normal();
}

// The steps of parse_command_line, in the order it takes them: an option's checks may read what an
// earlier step set (the profile checks read --watch), and the first error found is the one shown.

std::string str(const po::variables_map& vm, const char* key, const std::string& fallback) {
  return vm.count(key) ? vm[key].as<std::string>() : fallback;
}

// --seed: digits only, because Boost would read "-1" as 2^64 - 1 for an unsigned option.
std::uint64_t read_seed(const std::string& text) {
  const bool digits =
      !text.empty() && text.size() <= 20 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  errno = 0;
  const unsigned long long v = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw usage_error("--seed '" + text + "' is not a seed (a whole number in 0..2^64-1)");
  return v;
}

// What runs: the switches, the family and variants, the sizes and types, the kernels' folders and
// the architecture.
void read_selection(const po::variables_map& vm, const default_paths& defaults, bool size_given,
                    cli_options& o) {
  o.help = vm["help"].as<bool>();
  o.version = vm["version"].as<bool>();
  o.list_names = vm["list-names"].as<bool>();
  o.list = vm["list"].as<bool>() || o.list_names;  // the same listing, as names alone
  o.completion = str(vm, "completion", "");
  o.plan = vm["plan"].as<bool>();
  o.compile_only = vm["compile-only"].as<bool>();
  o.no_plugins = vm["no-plugins"].as<bool>();
  o.family = str(vm, "family", str(vm, "problem", ""));
  if (vm.count("family") && vm.count("problem") &&
      vm["family"].as<std::string>() != vm["problem"].as<std::string>())
    throw usage_error("--family and --problem name different families");
  o.variants = vm.count("variant")
                   ? at_least_one(split_all(vm["variant"].as<std::vector<std::string>>()),
                                  "--variant", "variant (or 'all')")
                   : std::vector<std::string>{"all"};
  const std::string blocks = str(vm, "block", "all");
  o.blocks = parse_blocks(blocks);
  o.blocks_explicit = blocks != "all";
  o.dtypes = at_least_one(split_list(str(vm, "dtype", "int32,float32")), "--dtype", "dtype");
  o.ops = at_least_one(split_list(str(vm, "op", "sum")), "--op", "operation");
  const auto sizes = at_least_one(parse_sizes(str(vm, "size", "2^24"), "--size"), "--size", "size");
  if (vm.count("shape")) {
    std::vector<std::vector<std::uint64_t>> shapes;
    for (const auto& s : split_list(vm["shape"].as<std::string>()))
      for (auto& shape : parse_shapes(s)) shapes.push_back(std::move(shape));
    o.axes.push_back(axis_choice::shapes(at_least_one(std::move(shapes), "--shape", "shape")));
  } else if (size_given) {
    o.axes.push_back(axis_choice::sizes(sizes));
  } else if (vm.count("size")) {
    // The config file's size is the one-axis families' (a family of several axes keeps its
    // default shape: W x W x W of a reduce size would be a matmul of 2^72 multiply-adds).
    auto from_file = axis_choice::sizes(sizes);
    from_file.option = "size (config file)";
    from_file.one_axis_families_only = true;
    o.axes.push_back(std::move(from_file));
  }
  o.seed = 12345;
  if (vm.count("seed")) o.seed = read_seed(vm["seed"].as<std::string>());
  o.input_mode = str(vm, "input", "exact");
  if (o.input_mode != "exact" && o.input_mode != "random")
    throw usage_error("--input must be 'exact' or 'random', not '" + o.input_mode + "'");
  // The command line's folders, then the config file's (cli/command_line.cpp), each folder once:
  // the shipped folder named again on the command line (`--kernels-dir kernels_src`) would clash
  // with itself, variant by variant.
  if (vm.count("kernels-dir"))
    for (const auto& dir : vm["kernels-dir"].as<std::vector<std::string>>())
      if (std::none_of(o.kernels_dirs.begin(), o.kernels_dirs.end(),
                       [&](const std::string& d) { return same_folder(d, dir); }))
        o.kernels_dirs.push_back(dir);
  if (vm["kernels-dir-only"].as<bool>() && o.kernels_dirs.empty())
    throw usage_error(
        "--kernels-dir-only leaves the config's kernel folders out: give --kernels-dir DIR");
  // The build's (or the install's) plugin folder always counts: --plugin-dir adds folders.
  o.plugin_dirs = defaults.plugin_dirs;
  for (const auto& d : vm.count("plugin-dir") ? vm["plugin-dir"].as<std::vector<std::string>>()
                                              : std::vector<std::string>{})
    if (std::find(o.plugin_dirs.begin(), o.plugin_dirs.end(), d) == o.plugin_dirs.end())
      o.plugin_dirs.push_back(d);
  o.arch = str(vm, "arch", "sm_90");
  if (o.arch.rfind("sm_", 0) != 0)
    throw usage_error("--arch must look like sm_90, not '" + o.arch + "'");
  if (!find_limits(o.arch)) {
    // An architecture without occupancy data would get another one's limits without a word.
    std::string known;
    for (const auto& a : known_architectures()) known += (known.empty() ? "" : ", ") + a;
    throw usage_error("--arch " + o.arch + " is not an architecture kernlab knows (" + known + ")");
  }
}

// Where results go: the baseline, the output files and the pictures.
void read_outputs(const po::variables_map& vm, cli_options& o) {
  o.baseline = str(vm, "baseline", "");
  o.cuda_include = str(vm, "cuda-include", "");
  o.json_path = str(vm, "json", "");
  o.csv_path = str(vm, "csv", "");
  o.jsonl_path = str(vm, "jsonl", "");
  o.t4_path = str(vm, "t4", "");
  o.markdown = vm["markdown"].as<bool>();
  o.resources = vm["resources"].as<bool>();
  o.output_path = str(vm, "output", "");
  o.compare_threshold_pct =
      bounded(vm, "threshold", o.compare_threshold_pct, 0.0, 1000.0, "a percentage");
  o.force = vm["force"].as<bool>();
  o.roofline = vm["roofline"].as<bool>();
  o.timeline = vm["timeline"].as<bool>();
  if (o.roofline && o.timeline)
    throw usage_error("--roofline and --timeline draw different pictures: give one");
}

// Where and how rows run: in kernlab or in workers, on which GPUs, under which sanitizers.
void read_execution(const po::variables_map& vm, cli_options& o) {
  o.in_process = vm["in-process"].as<bool>();
  if (vm.count("device") && vm.count("devices"))
    throw usage_error("--device and --devices both say where rows run: give one");
  if (vm.count("device")) o.devices = parse_devices(vm["device"].as<std::string>(), "--device");
  if (vm.count("devices")) o.devices = parse_devices(vm["devices"].as<std::string>(), "--devices");
  if (o.in_process && o.devices.many())
    throw usage_error(o.devices.option +
                      ": --in-process runs rows in kernlab itself, on one GPU; leave it out to "
                      "have a worker per GPU");
  o.kernel_timeout_s =
      bounded(vm, "kernel-timeout", o.kernel_timeout_s, 0.0, 86400.0, "seconds", false);
  o.journal_path = str(vm, "journal", "");
  o.resume = vm["resume"].as<bool>();
  if (vm.count("sanitize")) {
    o.sanitize = split_list(vm["sanitize"].as<std::string>());
    if (!vm.count("kernel-timeout")) o.kernel_timeout_s = cli_options::sanitized_kernel_timeout_s;
    for (const auto& tool : o.sanitize)
      if (tool != "memcheck" && tool != "racecheck" && tool != "synccheck" && tool != "initcheck")
        throw usage_error("--sanitize: unknown tool '" + tool +
                          "' (memcheck, racecheck, synccheck, initcheck)");
    if (o.in_process)
      throw usage_error("--sanitize runs kernels in sanitized workers; it cannot be --in-process");
  }
}

// The positional words: a command and the words it takes.
void read_command_words(const po::variables_map& vm, cli_options& o) {
  if (vm.count("command")) o.command = vm["command"].as<std::vector<std::string>>();
  // `kernlab compare --help`: the command's own help, whatever words its line lacks.
  if (o.command.empty() || o.help) return;
  const std::string& c = o.command[0];
  if (c == "compare" && o.command.size() != 3)
    throw usage_error("usage: kernlab compare OLD.json NEW.json (or OLD_DIR NEW_DIR)");
  else if (c == "plot" && o.command.size() != 2)
    throw usage_error("usage: kernlab plot [--roofline | --timeline] RESULTS.json [-o FILE.svg]");
  else if (c == "cache" && o.command.size() < 2)
    throw usage_error("cache: say 'cache info', 'cache clear' or 'cache prune'");
  else if (c == "cache" && o.command[1] != "info" && o.command[1] != "clear" &&
           o.command[1] != "prune")
    throw usage_error("cache: unknown subcommand '" + o.command[1] +
                      "' (say 'cache info', 'cache clear' or 'cache prune')");
  else if (c == "cache" && o.command.size() > 2)
    throw usage_error("too many words on the command line: 'cache " + o.command[1] +
                      "' takes no argument");
  else if (c == "new" && !((o.command.size() == 3 && o.command[1] == "family") ||
                           (o.command.size() == 4 && o.command[1] == "variant")))
    throw usage_error(
        "usage: kernlab new family NAME, or kernlab new variant FAMILY NAME [--from "
        "VARIANT] (each with --kernels-dir DIR; default my_kernels)");
  else if (c == "check-dispatch" && o.command.size() != 2)
    throw usage_error(
        "usage: kernlab check-dispatch FILE.h --variant FILE --size ... (the header that kernlab "
        "tune --export-header wrote, and the sizes to check it at)");
  else if (c == "tune" && o.command.size() > 1)
    throw usage_error("too many words on the command line: 'tune' takes options only (" +
                      o.command[1] + "?); name the kernel with --variant");
  else if (!cli::find_command(c))
    throw usage_error("unknown command '" + c + "' (" + cli::command_list() +
                      "; options start with --)");
  o.new_from = str(vm, "from", "");
  if (c == "new" && o.command[1] == "family" && vm.count("from"))
    throw usage_error("--from is for kernlab new variant: a new family starts from its skeleton");
}

// --watch, the compile cache and the compiler's threads and time-out.
void read_cache_and_compile(const po::variables_map& vm, cli_options& o) {
  o.watch = vm["watch"].as<bool>();
  o.no_cache = vm["no-cache"].as<bool>();
  o.cache_dir = str(vm, "cache-dir", "");
  if (vm.count("cache-dir") && o.cache_dir.empty()) throw usage_error("--cache-dir needs a folder");
  if (o.command.size() > 1 && o.command[0] == "cache" && o.no_cache)
    throw usage_error("'cache " + o.command[1] + "' and --no-cache contradict each other");
  const auto byte_size = [&](const char* name) {
    return parse_byte_size(vm[name].as<std::string>(), std::string("--") + name);
  };
  if (vm.count("cache-max-size")) o.cache_max_bytes = byte_size("cache-max-size");
  if (vm.count("max-size")) {
    if (o.command.size() < 2 || o.command[0] != "cache" || o.command[1] != "prune")
      throw usage_error(
          "--max-size is for 'kernlab cache prune'; the cap every run keeps is "
          "--cache-max-size (cache-max-size in the config file)");
    o.prune_max_bytes = byte_size("max-size");
  }
  o.compile_jobs = static_cast<unsigned>(bounded(vm, "compile-jobs", 0, 1, 1024, "a thread count"));
  if (vm.count("compile-timeout")) {
    const std::string text = vm["compile-timeout"].as<std::string>();
    const auto v = finite_number(text);
    if (!v || *v <= 0 || *v > 86400)
      throw usage_error("--compile-timeout '" + text +
                        "' is not a time in seconds (a finite number above 0, at most 86400)");
    o.compile_timeout_s = *v;
  }
}

// --axis NAME=VALUES, each name once, each value a size (2^20, 16M: a whole number) or another
// finite number (a real one); the choices by name, as their errors have always come.
void read_axes(const po::variables_map& vm, cli_options& o) {
  if (!vm.count("axis")) return;
  std::map<std::string, std::vector<axis_number>> given;
  for (const auto& text : vm["axis"].as<std::vector<std::string>>()) {
    const auto eq = text.find('=');
    const std::string name = text.substr(0, eq == std::string::npos ? 0 : eq);
    if (eq == std::string::npos || name.empty() ||
        !std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        }))
      throw usage_error("--axis '" + text + "' is not NAME=VALUES (e.g. --axis SNR_DB=10,20)");
    if (given.count(name)) throw usage_error("--axis " + name + " is given twice");
    auto& values = given[name];
    for (const auto& v : split_list(text.substr(eq + 1))) {
      if (v.find(':') != std::string::npos) {
        // A range of sizes, else of reals; the error is the reals' when the text has a real's
        // marks (a point, an exponent, a sign in front), else the sizes'.
        try {
          for (auto w : parse_sizes(v, "--axis " + name)) values.push_back(w);
          continue;
        } catch (const usage_error& as_sizes) {
          try {
            const auto reals = parse_real_range(v, "--axis " + name);
            values.insert(values.end(), reals->begin(), reals->end());
            continue;
          } catch (const usage_error&) {
            if (v.find_first_of(".eE") == std::string::npos && v.front() != '-') throw as_sizes;
            throw;
          }
        }
      }
      try {
        values.push_back(parse_size(v));
        continue;
      } catch (const usage_error&) {  // not a size: a real number, if it is one
      }
      // Read as text so the error quotes what was written; Boost would take nan and inf.
      const auto x = finite_number(v);
      if (!x) throw usage_error("--axis " + name + ": '" + v + "' is not a finite number");
      values.push_back(*x);
    }
    if (values.empty()) throw usage_error("--axis " + name + " needs at least one value");
  }
  for (const auto& [name, values] : given) o.axes.push_back(axis_choice::named(name, values));
}

// kernlab tune's search: its strategy, budget, store, exports and objective.
void read_tune(const po::variables_map& vm, cli_options& o) {
  if (vm.count("strategy")) o.strategy = vm["strategy"].as<std::string>();
  if (vm.count("budget"))
    parse_budget(vm["budget"].as<std::string>(), o.budget_evaluations, o.budget_seconds);
  o.store_path = str(vm, "store", "");
  o.fresh = vm["fresh"].as<bool>();
  o.export_json = str(vm, "export", "");
  o.export_header = str(vm, "export-header", "");
  o.replay_path = str(vm, "replay", "");
  o.objective = str(vm, "objective", "time");
  if (o.objective != "time" && o.objective != "energy")
    throw usage_error("--objective must be time or energy, not '" + o.objective + "'");
  if (vm.count("race")) {
    const std::string race = vm["race"].as<std::string>();
    const auto pct = finite_number(race);
    if (race != "off" && !(pct && *pct > 0 && *pct <= 100))
      throw usage_error("--race " + race + ": must be a percentage in (0, 100] or 'off'");
    o.race_margin = race == "off" ? 0 : *pct / 100;
  }
}

// --pipeline's streams, issue orders, chunks and runs.
void read_pipeline(const po::variables_map& vm, cli_options& o) {
  o.pipeline = vm["pipeline"].as<bool>();
  if (vm.count("streams")) {
    o.streams.clear();
    for (const auto& item : split_list(vm["streams"].as<std::string>())) {
      const auto v = whole_number_in(item, 1, 64);
      if (!v) throw usage_error("--streams '" + item + "' is not a stream count in 1..64");
      o.streams.push_back(static_cast<unsigned>(*v));
    }
    o.streams = at_least_one(std::move(o.streams), "--streams", "stream count");
  }
  if (vm.count("issue-order")) {
    o.issue_orders = split_list(vm["issue-order"].as<std::string>());
    if (o.issue_orders.empty()) throw usage_error("--issue-order needs breadth, depth or both");
    for (const auto& order : o.issue_orders)
      if (order != "breadth" && order != "depth")
        throw usage_error("--issue-order must be breadth or depth (or both), not '" + order + "'");
  }
  if (vm.count("chunks")) {
    const std::string text = vm["chunks"].as<std::string>();
    if (text != "auto") {
      std::size_t used = 0;
      long v = 0;
      try {
        v = std::stol(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != text.size() || v < 1 || v > 4096)
        throw usage_error("--chunks '" + text + "' is not a chunk count in 1..4096 (or 'auto')");
      o.chunks = static_cast<unsigned>(v);
    }
  }
  o.pipeline_runs = bounded(vm, "pipeline-runs", o.pipeline_runs, 1, 1000, "a run count");
}

// How each row is timed: samples, stop rule, placements, launches and cache flushes.
void read_timing(const po::variables_map& vm, timing_options& t) {
  t.warmup_runs = bounded(vm, "warmup", t.warmup_runs, 0, 100000, "a run count");
  t.min_samples = bounded(vm, "min-samples", t.min_samples, 1, 100000000, "a sample count");
  t.min_time_s = bounded(vm, "min-time", t.min_time_s, 0.0, 86400.0, "seconds");
  if (vm.count("max-noise"))
    t.max_noise = bounded(vm, "max-noise", 0.0, 0.0, 100.0, "a percentage") / 100.0;
  // `--timeout inf` stays "no time-out": sampling then ends on the other rules alone.
  t.timeout_s = bounded(vm, "timeout", t.timeout_s, 0.0, 86400.0, "seconds (or inf)", false, true);
  t.keep_samples = vm.count("samples") && vm["samples"].as<bool>();
  if (vm.count("max-ci"))
    t.max_ci = bounded(vm, "max-ci", 0.0, 0.0, 100.0, "a percentage", false) / 100.0;
  if (vm.count("min-interval"))
    t.min_interval = bounded(vm, "min-interval", 0.0, 0.0, 100.0, "a percentage") / 100.0;
  if (vm.count("stop-rule")) {
    try {
      t.rule = parse_stop_rule(vm["stop-rule"].as<std::string>());
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("--stop-rule: ") + e.what());
    }
  }
  // Under the ci rule a row stops once its interval is within --max-ci; with a floor wider than
  // that, no row ever would.
  if (t.rule == stop_rule::ci && t.min_interval > t.max_ci) {
    std::ostringstream why;
    why << "--max-ci " << 100 * t.max_ci << " is narrower than --min-interval "
        << 100 * t.min_interval << " (in %): no row's interval can be narrower than --min-interval";
    throw usage_error(why.str());
  }
  t.placements = bounded(vm, "placements", t.placements, 1, 1000, "a placement count");
  t.max_placements = bounded(vm, "max-placements", std::max(t.max_placements, t.placements),
                             t.placements, 1000, "a placement count, at least --placements");
  t.placement_workers =
      bounded(vm, "placement-workers", 4, 1, 64, "a count of worker processes per GPU");
  try {
    t.launch = parse_launch_mode(str(vm, "launch", "graph"));
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("--launch: ") + e.what());
  }
  try {
    t.flush = parse_flush_mode(str(vm, "flush", "read"));
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("--flush: ") + e.what());
  }
  if (vm["hot"].as<bool>()) {
    if (vm.count("flush") && t.flush != flush_mode::none)
      throw usage_error("--hot and --flush " + vm["flush"].as<std::string>() +
                        " contradict each other");
    t.flush = flush_mode::none;
  }
}

// --energy and --profile, and what they cannot be combined with.
void read_energy_and_profile(const po::variables_map& vm, const std::set<std::string>& given,
                             cli_options& o) {
  auto& t = o.timing;
  t.energy.enabled = vm["energy"].as<bool>() || o.objective == "energy";
  t.energy.min_time_s =
      bounded(vm, "energy-time", t.energy.min_time_s, 0.0, 3600.0, "seconds", false);
  if (given.count("energy-time") && !t.energy.enabled)
    throw usage_error("--energy-time applies to --energy (or --objective energy); give --energy");
  if (t.energy.enabled && !o.sanitize.empty())
    throw usage_error(
        std::string(vm["energy"].as<bool>() ? "--energy" : "--objective energy") +
        " and --sanitize contradict each other: rows under a sanitizer are not timed");
  o.profile = vm["profile"].as<bool>();
  o.ncu_path = str(vm, "ncu", "");
  if (vm.count("ncu") && o.ncu_path.empty()) throw usage_error("--ncu needs the path of ncu");
  if (!o.ncu_path.empty() && !o.profile)
    throw usage_error("--ncu names the Nsight Compute program for --profile; give --profile too");
  if (o.profile && o.in_process)
    throw usage_error(
        "--profile runs the rows again in a worker under ncu; it cannot be "
        "--in-process");
  if (o.profile && !o.sanitize.empty())
    throw usage_error(
        "--profile and --sanitize cannot be combined: sanitized rows are not timed "
        "and ncu does not run under compute-sanitizer; run them one after the other");
  if (o.profile && o.watch)
    throw usage_error("--profile profiles one sweep; it does not apply to --watch's rounds");
}

// Which command this is.
mode command_mode(const cli_options& o) {
  // An unknown word gets this far only with --help, whose command_help names it.
  const cli::command_word* word = o.command.empty() ? nullptr : cli::find_command(o.command[0]);
  return !o.command.empty() ? (word ? word->runs : mode::cache)
         : o.list           ? mode::list
         : o.plan           ? mode::plan
         : o.pipeline       ? mode::pipeline
         : o.resources      ? mode::resources
         : o.compile_only   ? mode::compile_only
                            : mode::sweep;
}

}  // namespace

cli_options parse_command_line(int argc, const char* const argv[], const default_paths& defaults) {
  const auto desc = make_description();
  read_options r;
  read_command_line(argc, argv, desc, r);
  const po::variables_map& vm = r.vm;

  // What the command line itself says, before the config file's defaults join in.
  const bool dtype_given = vm.count("dtype") > 0, op_given = vm.count("op") > 0;

  const bool size_given = vm.count("size") > 0;  // before the config file adds its own
  cli_options o;
  const std::string config = read_config_file(defaults.config, desc, r);
  if (!config.empty()) o.config_path = config;
  o.config_settings = r.config_settings;
  po::notify(r.vm);

  read_selection(vm, defaults, size_given, o);
  o.kernels_dir_given = r.given.count("kernels-dir") > 0;
  read_outputs(vm, o);
  read_execution(vm, o);
  read_command_words(vm, o);
  read_cache_and_compile(vm, o);
  // The config file's dtype and op are defaults (for reduce): a family without them runs its own.
  o.dtypes_explicit = dtype_given;
  o.ops_explicit = op_given;
  read_axes(vm, o);
  read_tune(vm, o);
  read_pipeline(vm, o);
  read_timing(vm, o.timing);
  read_energy_and_profile(vm, r.given, o);

  // Whether every option named on the command line applies to the command.
  check_options_apply(command_mode(o), r.given);
  check_distinct_outputs(o);
  return o;
}

}  // namespace kl
