// The command line (Boost.Program_options) and the config file it falls back on.
#pragma once

#include "measure/timing.hpp"
#include "spec/axes.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kl {

/// Bad input on the command line or in the config file: exit code 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where kernlab finds its files when nothing says otherwise.
struct default_paths {
  std::string config;                    ///< the default config file (may not exist)
  std::vector<std::string> plugin_dirs;  ///< the build's or the install's plugin folder
  /// kernlab's own headers for kernels (the families' kernlab/*.cuh): on the include path
  /// whatever --kernels-dir says, so that a user's own folder needs no copy of them.
  std::string kernel_headers;
};

/// The GPUs rows run on, as the command line gave them (--device N, --devices all|0,2,3); they
/// are checked against the machine's GPUs when rows run (resolve_devices).
struct device_selection {
  std::string option;         ///< "--device" or "--devices"; "" when neither was given
  bool all = false;           ///< --devices all
  std::vector<int> ordinals;  ///< otherwise, in the order given
  bool given() const { return !option.empty(); }
  /// More than one GPU may be asked for ("all" on a one-GPU machine is still one).
  bool many() const { return all || ordinals.size() > 1; }
};

struct cli_options {
  bool help = false, version = false, list = false, compile_only = false, no_plugins = false;
  bool plan = false;        ///< --plan: print the rows' keys, run nothing
  bool list_names = false;  ///< --list-names: --list as the names --variant takes, one a line
  std::string completion;   ///< --completion SHELL: print its completion script ("" for none)
  bool watch = false;       ///< after the sweep, re-run the variants whose files change
  bool no_cache = false;
  std::string cache_dir;  ///< "" = the default ($XDG_CACHE_HOME/kernlab, ~/.cache/kernlab)
  std::optional<std::uint64_t> cache_max_bytes;  ///< --cache-max-size; none = the default cap
  std::optional<std::uint64_t> prune_max_bytes;  ///< --max-size of `cache prune`; none = the cap
  unsigned compile_jobs = 0;                     ///< 0 = one per hardware thread
  double compile_timeout_s = 300;     ///< a file's compile that takes longer fails its rows
  std::string family;                 ///< "" = every family
  std::vector<std::string> variants;  ///< names, wildcards or "all"
  std::vector<unsigned> blocks;
  bool blocks_explicit = false;  ///< the user named blocks (not "all")
  std::vector<std::string> dtypes, ops;
  /// The axes' values: --shape (else --size; the config file's size is the one-axis families'),
  /// then each --axis by name.
  std::vector<axis_choice> axes;
  std::uint64_t seed = 0;
  std::string input_mode;
  std::vector<std::string> kernels_dirs, plugin_dirs;
  bool kernels_dir_given = false;  ///< --kernels-dir on the command line: kernels_dirs[0] is its
  std::string new_from;            ///< kernlab new variant --from VARIANT
  std::string config_path;         ///< the config file read; "" for none
  /// What the config file sets (key, value), in its order: the defaults in effect, for --help.
  std::vector<std::pair<std::string, std::string>> config_settings;
  std::string arch;
  std::string baseline;
  std::string cuda_include;
  timing_options timing;
  // Outputs.
  std::string json_path, csv_path;  ///< --json FILE, --csv FILE ("" for none)
  std::string jsonl_path;           ///< --jsonl FILE: a JSON line per row as it finishes
  std::string t4_path;              ///< tune --t4 FILE: the T4 autotuning results format
  bool markdown = false;            ///< tables as markdown
  bool resources = false;           ///< --resources: registers, shared memory, occupancy; no timing
  std::string output_path;          ///< -o FILE, for `plot`
  double compare_threshold_pct = 5;  ///< `compare`: a slower row beyond this % is a regression
  bool force = false;                ///< `compare`: runs from different GPU models too
  bool roofline = false;             ///< `plot --roofline`: the roofline, not the bars
  bool timeline = false;             ///< `plot --timeline`: a --pipeline result's streams over time
  /// --device N, --devices all|0,2,3; not given: device 0.
  device_selection devices;
  // Isolation and recovery.
  bool in_process = false;       ///< run kernels in kernlab itself (no worker process)
  double kernel_timeout_s = 10;  ///< a launch that runs longer is a hang
  /// The default under --sanitize: a kernel under compute-sanitizer runs tens of times slower,
  /// and a faulting one slower still (each bad access is recorded).
  static constexpr double sanitized_kernel_timeout_s = 120;
  std::string journal_path;  ///< "" for the default
  bool resume = false;
  std::vector<std::string> sanitize;  ///< compute-sanitizer tools
  /// --profile: after the sweep, every passed row once more under Nsight Compute.
  bool profile = false;
  std::string ncu_path;  ///< --ncu PATH: the ncu to run; "" = look for it
  // `kernlab tune`.
  std::string strategy = "bayes";      ///< --strategy: how the space is searched
  std::size_t budget_evaluations = 0;  ///< --budget N: evaluations per tune (0: none given)
  double budget_seconds = 0;           ///< --budget 90s / 5m: wall time per tune (0: none given)
  std::string store_path;              ///< --store FILE; "" = tuning.jsonl beside the cache
  bool fresh = false;                  ///< --fresh: measure again what the store holds
  std::string export_json, export_header;  ///< --export FILE.json, --export-header FILE.h
  std::string replay_path;  ///< --replay FILE: rows answered from a recorded tune, no GPU
  /// --objective: what a tune minimises, "time" (the median) or "energy" (joules per operation,
  /// which turns --energy on for every point).
  std::string objective = "time";
  /// --race: a point stops being timed once its interval lies this fraction above the best so
  /// far's (0.03: 3 %); 0 ('off'): every point is timed in full. Time objective only.
  double race_margin = 0.03;
  /// A subcommand and its arguments: {"compare", "a.json", "b.json"}, {"plot", "r.json"},
  /// {"cache", "info"}, {"cache", "clear"}, {"cache", "prune"}; empty for a sweep.
  std::vector<std::string> command;
  bool dtypes_explicit = false, ops_explicit = false;  ///< --dtype / --op given (not the defaults)
  // The pipeline.
  bool pipeline = false;  ///< --pipeline: the end-to-end host-device-host measurement
  std::vector<unsigned> streams = {1, 2, 4, 8};                  ///< --streams
  std::vector<std::string> issue_orders = {"breadth", "depth"};  ///< --issue-order
  unsigned chunks = 0;  ///< --chunks: 0 = chunks_per_stream per stream
  unsigned chunks_per_stream = 4;
  int pipeline_runs = 5;  ///< --pipeline-runs
};

/// Parses argv, then the config file (--config, or defaults.config if it exists). Command-line
/// values win over the file. Throws usage_error naming the option or file.
cli_options parse_command_line(int argc, const char* const argv[], const default_paths& defaults);

/// "268435456", "2^28", "2^20+3", "1M"/"16K" (binary) -> elements. Throws usage_error.
std::uint64_t parse_size(const std::string& text);

/// The most values one range may give: a longer one is more often a slip (`1:2^20:+1`) than a
/// plan, and each value is a configuration of every selected variant.
inline constexpr std::size_t max_range_values = 4096;

/// A comma list of sizes, each a size (parse_size) or a range FIRST:LAST[:STEP], LAST included
/// when a step lands on it: STEP is *F (each value F times the last, F >= 2) or +D (D more);
/// without one, *2. "2^20:2^28:*2,1000" -> 2^20, 2^21, ..., 2^28, 1000. Throws usage_error naming
/// `option` and the item.
std::vector<std::uint64_t> parse_sizes(const std::string& text, const std::string& option);

/// The number a text option holds, when the whole text is one finite number. --axis and
/// --compile-timeout are read as text so that their errors quote what was written; Boost would
/// take "nan" and "inf" as doubles.
std::optional<double> finite_number(const std::string& text);

/// A range of real numbers, FIRST:LAST:+D or FIRST:LAST:*F (F > 1, FIRST > 0), LAST included
/// within a rounding; nothing when `text` has no ':' (not a range). Throws usage_error naming
/// `option` for a malformed one.
std::optional<std::vector<double>> parse_real_range(const std::string& text,
                                                    const std::string& option);

/// A number of bytes: "2GiB", "2G", "500MiB", "500M", "64K", "1000000" (K, M, G, T are powers of
/// 1024, with or without "B" or "iB"). Throws usage_error naming `option` ("--max-size").
std::uint64_t parse_byte_size(const std::string& text, const std::string& option);

/// "4095x4097x1023" -> {4095, 4097, 1023}: dimensions >= 1 separated by 'x', each below 2^31.
/// Throws usage_error naming --shape.
std::vector<std::uint64_t> parse_shape(const std::string& text);

/// A --shape item whose dimensions may be ranges of plain numbers (FIRST:LAST[:STEP], as
/// parse_sizes): "1024:4096:*2x512" -> 1024x512, 2048x512, 4096x512, the first dimension
/// outermost. Throws usage_error naming --shape.
std::vector<std::vector<std::uint64_t>> parse_shapes(const std::string& text);

/// --budget: "200" (evaluations), "90s", "5m", "1h" (wall time). Throws usage_error.
void parse_budget(const std::string& text, std::size_t& evaluations, double& seconds);

/// All of `text` as a whole number in [lo, hi]; nothing when it is not one (a list item of
/// --block, --streams).
std::optional<long> whole_number_in(const std::string& text, long lo, long hi);

/// "all" -> {128, 256, 512, 1024}; "256,512" -> {256, 512}. Throws usage_error.
std::vector<unsigned> parse_blocks(const std::string& text);

/// --device "2" (option "--device": one ordinal), --devices "all" or "0,2,3" (distinct ordinals).
/// Throws usage_error naming the option.
device_selection parse_devices(const std::string& text, const std::string& option);

/// The ordinals of a selection on a machine with `count` GPUs: 0 when nothing was given, every
/// GPU for "all". Throws usage_error naming the option and how many GPUs there are when an
/// ordinal is not one of them.
std::vector<int> resolve_devices(const device_selection& s, int count);

/// The --help text: the usage, the defaults `o`'s config file sets (those in effect), then every
/// option; `appendix` (the tune strategies) comes last.
std::string help_text(const cli_options& o, const std::string& appendix = "");
/// `kernlab --completion SHELL`: a completion script for bash or zsh, made from the option table
/// (the options, the commands, the variant names through `kernlab --list-names`). Throws
/// usage_error for another shell.
std::string completion_script(const std::string& shell);

/// `kernlab COMMAND --help`: the command's usage, what it does, and the options that apply to it
/// (compare, plot, cache, tune). Throws usage_error for another word.
std::string command_help(const std::string& command);

}  // namespace kl
