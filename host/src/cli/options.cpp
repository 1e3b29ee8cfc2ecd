#include "cli/options.hpp"

#include "registry/names.hpp"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kl {
namespace {

po::options_description make_description() {
  po::options_description select("Selecting what runs");
  select.add_options()
    ("variant,v", po::value<std::vector<std::string>>()->composing(),
     "variants: a name, a comma list, a wildcard (reduce*, reduce.reduce5) or 'all'")
    ("family", po::value<std::string>(), "only this family (reduce)")
    ("problem", po::value<std::string>(), "same as --family")
    ("block,b", po::value<std::string>(), "block sizes: a comma list or 'all' (128,256,512,1024)")
    ("size,n", po::value<std::string>(), "problem sizes: a comma list of 268435456, 2^28, 2^20+3, 16M (matmul: W means W x W x W)")
    ("shape", po::value<std::string>(), "matmul shapes: a comma list of MxNxK, e.g. 4096x4096x4096,4095x4097x1023 (default 4096x4096x4096)")
    ("dtype", po::value<std::string>(), "element types: int32, float32 (comma list)")
    ("op", po::value<std::string>(), "reduce operations: sum, min, max (comma list)")
    ("seed", po::value<std::uint64_t>(), "seed of the input generator (printed with the results)")
    ("input", po::value<std::string>(), "input values: exact (default) or random")
    ("baseline", po::value<std::string>(), "variant for the 'x of baseline' column (default: the family's library)");
  po::options_description where("Where things are");
  where.add_options()
    ("kernels-dir", po::value<std::vector<std::string>>()->composing(), "folder of <family>/*.cu kernel files (repeatable)")
    ("plugin-dir", po::value<std::vector<std::string>>()->composing(), "adds a folder of plugin .so files to the build's (repeatable; KERNLAB_PLUGIN_PATH adds more)")
    ("no-plugins", po::bool_switch(), "load no plugins")
    ("config", po::value<std::string>(), "config file (default: config/kernlab.cfg)")
    ("arch", po::value<std::string>(), "compile target when there is no GPU (default sm_90)")
    ("cuda-include", po::value<std::string>(), "the CUDA toolkit's include folder")
    ("cache-dir", po::value<std::string>(), "compile cache folder (default: $XDG_CACHE_HOME/kernlab or ~/.cache/kernlab)")
    ("no-cache", po::bool_switch(), "compile every file, read and write no compile cache");
  po::options_description timing("Timing");
  timing.add_options()
    ("warmup", po::value<int>(), "untimed runs before sampling (default 2)")
    ("min-samples", po::value<int>(), "fewest samples (default 10)")
    ("min-time", po::value<double>(), "least sampled kernel time in seconds (default 0.5)")
    ("max-noise", po::value<double>(), "stop once the relative std. deviation is under this, in % (default 0.5)")
    ("timeout", po::value<double>(), "stop sampling after this many seconds (default 15)")
    ("hot", po::bool_switch(), "do not flush L2 between samples (same as --flush none)")
    ("flush", po::value<std::string>(), "how L2 is made cold before each sample: read (default; reads a clean buffer twice the L2), write (writes one, as nvbench does), none");
  po::options_description safety("Isolation and recovery");
  safety.add_options()
    ("kernel-timeout", po::value<double>(), "a launch still running after this many seconds is a hang: its worker is stopped; also the time limit of a plugin's probe (default 10)")
    ("in-process", po::bool_switch(), "run kernels in kernlab itself, not in a worker process (a crash then ends the sweep's GPU work)")
    ("journal", po::value<std::string>(), "the journal file (default: ~/.cache/kernlab/journal.log)")
    ("resume", po::bool_switch(), "skip the rows the journal says finished; mark the one that was running as suspect")
    ("sanitize", po::value<std::string>()->implicit_value("memcheck,racecheck"), "run each variant under compute-sanitizer: memcheck, racecheck (a list; validation only, no timing)");
  po::options_description outputs("Outputs");
  outputs.add_options()
    ("json", po::value<std::string>(), "write every record, with the reproducibility block, to FILE (docs/results_format.md)")
    ("csv", po::value<std::string>(), "write one line per record to FILE")
    ("markdown", po::bool_switch(), "print the tables as markdown")
    ("output,o", po::value<std::string>(), "the file `kernlab plot` writes (default: sweep.svg)");
  po::options_description actions("Actions");
  actions.add_options()
    ("help,h", po::bool_switch(), "this help")
    ("version", po::bool_switch(), "print the version")
    ("list", po::bool_switch(), "list every variant with its origin, and exit")
    ("compile-only", po::bool_switch(), "compile the selected variants for every block size and exit (no GPU needed)")
    ("resources", po::bool_switch(), "show registers, shared memory, spills and occupancy per configuration, without timing (no GPU needed)")

    ("watch", po::bool_switch(), "keep running: when a kernel file or header is saved, recompile, revalidate and retime the variants it changes")
    ("compile-jobs,j", po::value<int>(), "threads compiling kernel files while the GPU times those compiled (default: one per core)");
  po::options_description qam("qam256 and its pipeline");
  qam.add_options()
    ("snr", po::value<std::string>(), "qam256: signal-to-noise ratio of the generated symbols, in dB (default 20)")
    ("pipeline", po::bool_switch(), "qam256: time host -> device -> host in chunks over streams with one kernel (--variant NAME --block B), instead of the sweep")
    ("streams", po::value<std::string>(), "pipeline: stream counts, a comma list (default 1,2,4,8)")
    ("issue-order", po::value<std::string>(), "pipeline: breadth (all copies in, all kernels, all copies out), depth (chunk by chunk), or both (default breadth,depth)")
    ("chunks", po::value<std::string>(), "pipeline: chunks the data is split into: a count, or 'auto' (default: 4 per stream)")
    ("pipeline-runs", po::value<int>(), "pipeline: timed runs per configuration, after a warm-up; the median is shown (default 5)");
  po::options_description all;
  all.add(actions).add(select).add(where).add(timing).add(safety).add(outputs).add(qam);
  return all;
}

std::vector<std::string> split_all(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& i : items)
    for (auto& s : split_list(i)) out.push_back(s);
  return out;
}

// Relative paths in the config file are relative to the file's own folder.
void resolve_config_paths(po::parsed_options& parsed, const fs::path& config_dir) {
  for (auto& opt : parsed.options)
    if (opt.string_key == "kernels-dir" || opt.string_key == "plugin-dir" ||
        opt.string_key == "cuda-include" || opt.string_key == "cache-dir")
      for (auto& v : opt.value)
        if (fs::path(v).is_relative()) v = (config_dir / v).lexically_normal().string();
}

// Boost.Program_options makes what() by replacing each "%name%" placeholder of the message with
// its value until none is left, so a value that holds a placeholder ("seed = %value%", an unknown
// option "x%original_token%") could make what() loop for ever while the message grew (found by
// tests/fuzz). With every '%' of the values escaped first, each replacement takes '%'s out of the
// message and puts none in, so it ends; the escapes are undone in the finished message.
struct error_substitutions : po::error_with_option_name {  // reaches the protected map; never made
  static std::map<std::string, std::string>& of(po::error_with_option_name& e) {
    return e.*&error_substitutions::m_substitutions;
  }
};

std::string message(po::error& e) {
  auto* named = dynamic_cast<po::error_with_option_name*>(&e);
  if (!named) return e.what();
  // '%' -> "\1p" and '\1' -> "\1e": no '%' is left, and the change can be undone.
  for (auto& [key, value] : error_substitutions::of(*named)) {
    std::string escaped;
    for (char c : value) escaped += c == '%' ? "\1p" : c == '\1' ? "\1e" : std::string(1, c);
    value = escaped;
  }
  const std::string text = named->what();
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\1') {
      out += text[i];
      continue;
    }
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    out += next == 'e' ? '\1' : '%';  // a lone '\1' is a '%' cut short: the short option "-%"
    if (next == 'e' || next == 'p') ++i;
  }
  return out;
}

}  // namespace

std::uint64_t parse_size(const std::string& text) {
  auto fail = [&]() -> std::uint64_t {
    throw usage_error("--size '" + text + "' is not a size (examples: 268435456, 2^28, 2^20+3, 16M)");
  };
  if (text.empty()) return fail();
  // Every number, power and multiple is at most 2^60, checked before it is formed: a product
  // that wrapped around 2^64 used to pass as a small size (found by tests/fuzz).
  constexpr std::uint64_t limit = std::uint64_t{1} << 60;
  std::size_t pos = 0;
  auto number = [&]() -> std::uint64_t {
    const std::size_t start = pos;
    std::uint64_t v = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      v = v * 10 + static_cast<std::uint64_t>(text[pos++] - '0');
      if (v > limit) fail();
    }
    if (pos == start) fail();
    return v;
  };
  std::uint64_t v = number();
  if (pos < text.size() && text[pos] == '^') {
    ++pos;
    const std::uint64_t e = number();
    if (e > 60) fail();
    std::uint64_t p = 1;
    for (std::uint64_t i = 0; i < e; ++i) {
      if (v != 0 && p > limit / v) fail();
      p *= v;
    }
    v = p;
  } else if (pos < text.size() && (text[pos] == 'K' || text[pos] == 'M' || text[pos] == 'G')) {
    const int shift = text[pos] == 'K' ? 10 : text[pos] == 'M' ? 20 : 30;
    if (v > limit >> shift) fail();
    v <<= shift;
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const char sign = text[pos++];
    const std::uint64_t d = number();
    if (sign == '-' && d > v) fail();
    v = sign == '+' ? v + d : v - d;
  }
  if (pos != text.size() || v == 0) fail();
  return v;
}

std::vector<std::uint64_t> parse_shape(const std::string& text) {
  auto fail = [&](const std::string& why) -> std::vector<std::uint64_t> {
    throw usage_error("--shape '" + text + "' is not a shape (" + why +
                      "; examples: 4096x4096x4096, 4095x4097x1023)");
  };
  constexpr std::uint64_t limit = (std::uint64_t{1} << 31) - 1;
  std::vector<std::uint64_t> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t start = pos;
    std::uint64_t v = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      v = v * 10 + static_cast<std::uint64_t>(text[pos++] - '0');
      if (v > limit) return fail("a dimension is 2^31 or more");
    }
    if (pos == start)
      return fail(pos < text.size() ? "unexpected '" + std::string(1, text[pos]) + "'" : "a dimension is missing");
    if (v == 0) return fail("a dimension is 0");
    out.push_back(v);
    if (pos == text.size()) return out;
    if (text[pos] != 'x' && text[pos] != 'X') return fail("unexpected '" + std::string(1, text[pos]) + "'");
    ++pos;
  }
}

std::vector<unsigned> parse_blocks(const std::string& text) {
  if (text == "all") return {128, 256, 512, 1024};
  std::vector<unsigned> out;
  for (const auto& item : split_list(text)) {
    std::size_t used = 0;
    long b = 0;
    try {
      b = std::stol(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || b < 1 || b > 1024)
      throw usage_error("--block '" + item + "' is not a block size in 1..1024 (or 'all')");
    out.push_back(static_cast<unsigned>(b));
  }
  if (out.empty()) throw usage_error("--block needs at least one block size");
  return out;
}

std::string help_text() {
  std::ostringstream os;
  os << "kernlab: compile, validate and time CUDA kernel variants\n\n"
        "usage: kernlab [options]\n"
        "       kernlab cache info|clear [--cache-dir DIR]\n"
        "  kernlab --variant reduce5 --block 512\n"
        "  kernlab --variant 'reduce*' --size 2^28 --dtype int32,float32\n"
        "  kernlab --family matmul --shape 4096x4096x4096,4095x4097x1023\n"
        "  kernlab --list\n"
        "  kernlab --family qam256 --size 2^28\n"
        "  kernlab --pipeline --variant qam256.vec2_gridstride --block 256 --size 2^27\n"
        "  kernlab --compile-only --variant all\n"
        "  kernlab --size 2^28 --json run.json && kernlab plot run.json -o sweep.svg\n"
        "  kernlab compare before.json after.json\n"
        "  kernlab --watch --variant my_idea,reduce5\n"
        "  kernlab cache info\n\n"
        "exit codes: 0 every run passed, 1 a variant failed or was wrong, 2 usage error,\n"
        "            3 no CUDA driver/device for a run that needs one\n"
     << make_description();
  return os.str();
}

cli_options parse_command_line(int argc, const char* const argv[], const default_paths& defaults) {
  const auto desc = make_description();
  // The positional words: `kernlab compare a.json b.json`, `kernlab plot r.json -o f.svg`,
  // `kernlab cache info`. On the command line only, never in the config file.
  po::options_description with_positional = desc;
  with_positional.add_options()("command", po::value<std::vector<std::string>>(), "subcommand");
  po::positional_options_description positional;
  positional.add("command", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(with_positional).positional(positional).run(), vm);
  } catch (po::error& e) {
    throw usage_error(message(e));
  }

  // What the command line itself says, before the config file's defaults join in.
  const bool family_given = vm.count("family") || vm.count("problem");
  const bool dtype_given = vm.count("dtype") > 0, op_given = vm.count("op") > 0;
  bool qualified_variant = false;  // "qam256.vec2_gridstride" names its family itself
  if (vm.count("variant"))
    for (const auto& v : split_all(vm["variant"].as<std::vector<std::string>>()))
      if (v.find('.') != std::string::npos) qualified_variant = true;

  cli_options o;
  o.sizes_on_command_line = vm.count("size") > 0;  // before the config file adds its own
  std::string config = defaults.config;
  bool config_explicit = vm.count("config") > 0;
  if (config_explicit) config = vm["config"].as<std::string>();
  if (!config.empty()) {
    std::ifstream in(config);
    if (!in) {
      if (config_explicit) throw usage_error("--config: cannot read '" + config + "'");
    } else {
      try {
        auto parsed = po::parse_config_file(in, desc);
        resolve_config_paths(parsed, fs::absolute(config).parent_path());
        po::store(parsed, vm);  // values already on the command line are kept
      } catch (po::error& e) {
        throw usage_error(config + ": " + message(e));
      }
      o.config_path = config;
    }
  }
  po::notify(vm);

  auto str = [&](const char* key, const std::string& fallback) {
    return vm.count(key) ? vm[key].as<std::string>() : fallback;
  };
  o.help = vm["help"].as<bool>();
  o.version = vm["version"].as<bool>();
  o.list = vm["list"].as<bool>();
  o.compile_only = vm["compile-only"].as<bool>();
  o.no_plugins = vm["no-plugins"].as<bool>();
  o.family = str("family", str("problem", ""));
  if (vm.count("family") && vm.count("problem") &&
      vm["family"].as<std::string>() != vm["problem"].as<std::string>())
    throw usage_error("--family and --problem name different families");
  o.variants = vm.count("variant") ? split_all(vm["variant"].as<std::vector<std::string>>())
                                   : std::vector<std::string>{"all"};
  const std::string blocks = str("block", "all");
  o.blocks = parse_blocks(blocks);
  o.blocks_explicit = blocks != "all";
  o.dtypes = split_list(str("dtype", "int32,float32"));
  o.ops = split_list(str("op", "sum"));
  for (const auto& s : split_list(str("size", "2^24"))) o.sizes.push_back(parse_size(s));
  if (o.sizes.empty()) throw usage_error("--size needs at least one size");
  if (vm.count("shape")) {
    for (const auto& s : split_list(vm["shape"].as<std::string>())) o.shapes.push_back(parse_shape(s));
    if (o.shapes.empty()) throw usage_error("--shape needs at least one shape");
  }
  o.seed = vm.count("seed") ? vm["seed"].as<std::uint64_t>() : 12345;
  o.input_mode = str("input", "exact");
  if (o.input_mode != "exact" && o.input_mode != "random")
    throw usage_error("--input must be 'exact' or 'random', not '" + o.input_mode + "'");
  if (vm.count("kernels-dir")) o.kernels_dirs = vm["kernels-dir"].as<std::vector<std::string>>();
  // The build's (or the install's) plugin folder always counts: --plugin-dir adds folders.
  o.plugin_dirs = defaults.plugin_dirs;
  for (const auto& d : vm.count("plugin-dir") ? vm["plugin-dir"].as<std::vector<std::string>>()
                                              : std::vector<std::string>{})
    if (std::find(o.plugin_dirs.begin(), o.plugin_dirs.end(), d) == o.plugin_dirs.end())
      o.plugin_dirs.push_back(d);
  o.arch = str("arch", "sm_90");
  if (o.arch.rfind("sm_", 0) != 0)
    throw usage_error("--arch must look like sm_90, not '" + o.arch + "'");
  o.baseline = str("baseline", "");
  o.cuda_include = str("cuda-include", "");
  o.json_path = str("json", "");
  o.csv_path = str("csv", "");
  o.markdown = vm["markdown"].as<bool>();
  o.resources = vm["resources"].as<bool>();
  o.output_path = str("output", "");
  o.in_process = vm["in-process"].as<bool>();
  if (vm.count("kernel-timeout")) o.kernel_timeout_s = vm["kernel-timeout"].as<double>();
  if (o.kernel_timeout_s <= 0) throw usage_error("--kernel-timeout must be positive");
  o.journal_path = str("journal", "");
  o.resume = vm["resume"].as<bool>();
  if (vm.count("sanitize")) {
    o.sanitize = split_list(vm["sanitize"].as<std::string>());
    for (const auto& tool : o.sanitize)
      if (tool != "memcheck" && tool != "racecheck" && tool != "synccheck" && tool != "initcheck")
        throw usage_error("--sanitize: unknown tool '" + tool + "' (memcheck, racecheck, synccheck, initcheck)");
    if (o.in_process) throw usage_error("--sanitize runs kernels in sanitized workers; it cannot be --in-process");
  }
  if (vm.count("command")) o.command = vm["command"].as<std::vector<std::string>>();
  if (!o.command.empty()) {
    const std::string& c = o.command[0];
    if (c == "compare" && o.command.size() != 3)
      throw usage_error("usage: kernlab compare OLD.json NEW.json");
    else if (c == "plot" && o.command.size() != 2)
      throw usage_error("usage: kernlab plot RESULTS.json [-o sweep.svg]");
    else if (c == "cache" && o.command.size() < 2)
      throw usage_error("cache: say 'cache info' or 'cache clear'");
    else if (c == "cache" && o.command[1] != "info" && o.command[1] != "clear")
      throw usage_error("cache: unknown subcommand '" + o.command[1] + "' (say 'cache info' or 'cache clear')");
    else if (c == "cache" && o.command.size() > 2)
      throw usage_error("too many words on the command line: 'cache " + o.command[1] + "' takes no argument");
    else if (c != "compare" && c != "plot" && c != "cache")
      throw usage_error("unknown command '" + c +
                        "' (kernlab compare, kernlab plot, kernlab cache; options start with --)");
  }
  o.watch = vm["watch"].as<bool>();
  o.no_cache = vm["no-cache"].as<bool>();
  o.cache_dir = str("cache-dir", "");
  if (vm.count("cache-dir") && o.cache_dir.empty()) throw usage_error("--cache-dir needs a folder");
  if (!o.command.empty() && o.command[0] == "cache" && o.no_cache)
    throw usage_error("'cache " + o.command[1] + "' and --no-cache contradict each other");
  if (vm.count("compile-jobs")) {
    const int jobs = vm["compile-jobs"].as<int>();
    if (jobs < 1) throw usage_error("--compile-jobs must be at least 1");
    o.compile_jobs = static_cast<unsigned>(jobs);
  }

  // The config file's dtype and op are defaults (for reduce): a family without them runs its own.
  o.dtypes_explicit = dtype_given;
  o.ops_explicit = op_given;
  // Likewise its family: a qualified variant name on the command line picks the family itself.
  if (!family_given && qualified_variant) o.family.clear();
  if (vm.count("snr")) {
    // Read as text: Boost would take "nan" and "inf" as doubles, and an SNR of either makes no
    // inputs (the noise's deviation is NaN, or zero by accident of the formula).
    const std::string text = vm["snr"].as<std::string>();
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (text.empty() || used != text.size() || !std::isfinite(v) || v < -50 || v > 200)
      throw usage_error("--snr '" + text + "' is not a signal-to-noise ratio in dB (a finite number in -50..200)");
    o.snr_db = v;
  }
  o.pipeline = vm["pipeline"].as<bool>();
  if (vm.count("streams")) {
    o.streams.clear();
    for (const auto& item : split_list(vm["streams"].as<std::string>())) {
      std::size_t used = 0;
      long v = 0;
      try {
        v = std::stol(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != item.size() || v < 1 || v > 64)
        throw usage_error("--streams '" + item + "' is not a stream count in 1..64");
      o.streams.push_back(static_cast<unsigned>(v));
    }
    if (o.streams.empty()) throw usage_error("--streams needs at least one stream count");
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
  if (vm.count("pipeline-runs")) {
    o.pipeline_runs = vm["pipeline-runs"].as<int>();
    if (o.pipeline_runs < 1 || o.pipeline_runs > 1000)
      throw usage_error("--pipeline-runs must be in 1..1000");
  }
  if (!o.pipeline)
    for (const char* key : {"streams", "issue-order", "chunks", "pipeline-runs"})
      if (vm.count(key)) throw usage_error(std::string("--") + key + " applies to --pipeline only");

  auto& t = o.timing;
  if (vm.count("warmup")) t.warmup_runs = vm["warmup"].as<int>();
  if (vm.count("min-samples")) t.min_samples = vm["min-samples"].as<int>();
  if (vm.count("min-time")) t.min_time_s = vm["min-time"].as<double>();
  if (vm.count("max-noise")) t.max_noise = vm["max-noise"].as<double>() / 100.0;
  if (vm.count("timeout")) t.timeout_s = vm["timeout"].as<double>();
  try {
    t.flush = parse_flush_mode(str("flush", "read"));
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("--flush: ") + e.what());
  }
  if (vm["hot"].as<bool>()) {
    if (vm.count("flush") && t.flush != flush_mode::none)
      throw usage_error("--hot and --flush " + vm["flush"].as<std::string>() + " contradict each other");
    t.flush = flush_mode::none;
  }
  // Written so that NaN fails too: Boost reads "nan" as a double, and a NaN timeout never
  // expires (found by tests/fuzz), leaving a row to its millionth sample.
  if (t.warmup_runs < 0 || t.min_samples < 1 || !(t.min_time_s >= 0) || !(t.max_noise >= 0) ||
      !(t.timeout_s > 0))
    throw usage_error("timing options must be positive (--min-samples at least 1)");
  return o;
}

}  // namespace kl
