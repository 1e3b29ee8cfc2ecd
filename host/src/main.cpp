// kernlab: the command-line entry point. Everything here is wiring; the work is in the modules.
#include "cli/options.hpp"
#include "core/errors.hpp"
#include "cuda/driver.hpp"
#include "exec/qam256_pipeline.hpp"
#include "families/data_family.hpp"
#include "families/family.hpp"
#include "kernlab_commit.hpp"  // generated at build time: KERNLAB_COMMIT
#include "nvrtc/compile_cache.hpp"
#include "nvrtc/compile_process.hpp"
#include "nvrtc/compiler.hpp"
#include "registry/registry.hpp"
#include "report/exports.hpp"
#include "report/output_file.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "runner/journal.hpp"
#include "runner/runner.hpp"
#include "spec/names.hpp"
#include "watch/directory_watcher.hpp"
#include "watch/watch_session.hpp"
#include "worker/executor.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

namespace {

// This program's own path: the worker is this same binary, started with --worker.
fs::path executable_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path() / "kernlab" : exe;
}

fs::path executable_dir() { return executable_path().parent_path(); }

// An installed kernlab (bin/kernlab) finds share/kernlab and lib/kernlab/plugins beside it; a
// build-tree kernlab finds the source tree and the build's plugin folder it was built with.
kl::default_paths find_default_paths() {
  kl::default_paths d;
  const fs::path exe = executable_dir();
  const fs::path share = exe / ".." / "share" / "kernlab";
  std::error_code ec;
  if (fs::is_directory(share, ec)) {
    d.config = (share / "config" / "kernlab.cfg").lexically_normal().string();
    d.plugin_dirs.push_back(
        (exe / ".." / "lib" / "kernlab" / "plugins").lexically_normal().string());
    d.kernel_headers = (share / "kernels_src" / "include").lexically_normal().string();
  } else {
    d.config = std::string(KERNLAB_SOURCE_DIR) + "/config/kernlab.cfg";
    d.plugin_dirs.push_back(KERNLAB_BUILD_PLUGIN_DIR);
    d.kernel_headers = std::string(KERNLAB_SOURCE_DIR) + "/kernels_src/include";
  }
  return d;
}

std::string cuda_include_dir(const kl::cli_options& o) {
  if (!o.cuda_include.empty()) return o.cuda_include;
  const char* home = std::getenv("CUDA_HOME");
  return home ? std::string(home) + "/include" : KERNLAB_CUDA_INCLUDE_DIR;
}

// The kernels folders' include/ folders first (a folder may bring its own kernlab/*.cuh), then
// kernlab's own family headers, then the toolkit's.
std::vector<std::string> include_dirs(const kl::cli_options& o) {
  std::vector<std::string> dirs;
  std::error_code ec;
  auto add = [&](const fs::path& dir) {
    if (!fs::is_directory(dir, ec)) return;
    for (const auto& d : dirs)
      if (fs::equivalent(d, dir, ec)) return;
    dirs.push_back(dir.string());
  };
  for (const auto& k : o.kernels_dirs) add(fs::path(k) / "include");
  add(find_default_paths().kernel_headers);
  dirs.push_back(cuda_include_dir(o));
  return dirs;
}

// Every family: the built-in ones, then each kernels folder's that holds a family.toml. The
// worker is given the same folders and include folders, so it builds the same families.
void load_families(kl::family_registry& families, const std::vector<std::string>& kernels_dirs,
                   const std::vector<std::string>& includes, std::vector<std::string>* warnings) {
  kl::register_builtin_families(families);
  auto w = kl::add_data_families(families, kernels_dirs, includes);
  if (warnings) warnings->insert(warnings->end(), w.begin(), w.end());
}

// `kernlab --worker [--kernels-dir DIR]... [--include DIR]...`: the worker's own families.
int worker_entry(int argc, char** argv) {
  std::vector<std::string> dirs, includes;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--kernels-dir")
      dirs.push_back(argv[i + 1]);
    else if (key == "--include")
      includes.push_back(argv[i + 1]);
    else
      throw std::invalid_argument("unknown worker argument '" + key + "'");
  }
  kl::family_registry families;
  load_families(families, dirs, includes, nullptr);
  return kl::worker_main(families);
}

// An output file (--json, --csv, plot -o): made in memory, then written whole or not at all; a
// failure throws io_error naming the file (exit code 4) and leaves a previous file as it was.
template <typename Write>
void write_file(const std::string& path, Write write) {
  std::ostringstream text;
  write(text);
  kl::write_output_file(path, text.str());
}

// `kernlab compare` and `kernlab plot`: they read results files and need no GPU or kernels.
int run_command(const kl::cli_options& opt) {
  auto load = [](const std::string& path) {
    nlohmann::json j = kl::read_results_file(path);
    try {
      kl::records_from_results(j);  // checks the format and every record
    } catch (const std::exception& e) {
      throw kl::io_error(path + ": " + e.what());
    }
    return j;
  };
  if (opt.command[0] == "compare") {
    const nlohmann::json before = load(opt.command[1]), after = load(opt.command[2]);
    // Medians from two GPU models differ by design, not by regression.
    const std::string a = kl::results_device_name(before), b = kl::results_device_name(after);
    if (!a.empty() && !b.empty() && a != b && !opt.force)
      throw kl::usage_error(opt.command[1] + " was measured on " + a + " and " + opt.command[2] +
                            " on " + b + ": pass --force to compare them anyway");
    const auto s = kl::compare_results(before, after, std::cout, opt.compare_threshold_pct);
    return s.regressions > 0 ? 1 : 0;
  }
  const nlohmann::json results = load(opt.command[1]);
  const std::string out = opt.output_path.empty() ? "sweep.svg" : opt.output_path;
  std::ostringstream svg;
  try {
    kl::write_svg(results, svg);
  } catch (const std::exception& e) {
    throw kl::io_error(opt.command[1] + ": " + e.what());
  }
  kl::write_output_file(out, svg.str());
  std::cout << "wrote " << out << " (" << results.at("records").size() << " records)\n";
  return 0;
}

// The compile cache the options ask for: --cache-dir, else the default; none with --no-cache.
fs::path cache_dir(const kl::cli_options& o) {
  return o.cache_dir.empty() ? kl::nvrtc::default_cache_dir() : fs::path(o.cache_dir);
}

std::shared_ptr<const kl::nvrtc::compile_cache> open_cache(const kl::cli_options& o) {
  if (o.no_cache) return nullptr;
  const fs::path dir = cache_dir(o);
  if (dir.empty()) {
    std::cerr << "kernlab: warning: neither XDG_CACHE_HOME nor HOME is set, so there is no compile "
                 "cache; give --cache-dir to have one\n";
    return nullptr;
  }
  return std::make_shared<const kl::nvrtc::compile_cache>(
      dir, o.cache_max_bytes.value_or(kl::nvrtc::kDefaultCacheMaxBytes));
}

// `kernlab cache info`, `kernlab cache clear` and `kernlab cache prune`.
int cache_command(const kl::cli_options& o) {
  const fs::path dir = cache_dir(o);
  if (dir.empty())
    throw kl::usage_error(
        "no cache folder: neither XDG_CACHE_HOME nor HOME is set; give --cache-dir");
  const kl::nvrtc::compile_cache cache(
      dir, o.cache_max_bytes.value_or(kl::nvrtc::kDefaultCacheMaxBytes));
  try {
    if (o.command[1] == "info") {
      kl::print_cache_info(std::cout, cache.info());
    } else if (o.command[1] == "prune") {
      const std::uint64_t limit = o.prune_max_bytes.value_or(cache.max_bytes());
      kl::print_prune_result(std::cout, cache.prune(limit), limit, dir);
    } else {
      const std::uint64_t removed = cache.clear();
      std::cout << "removed " << removed << " entr" << (removed == 1 ? "y" : "ies")
                << " and the counters from " << dir.string() << "\n";
    }
  } catch (const kl::nvrtc::cache_error& e) {  // a folder or file kernlab cannot use: exit code 4
    throw kl::io_error(e.what());
  }
  return 0;
}

// Every variant the options can reach: the kernel folders' files, then the plugins.
std::unique_ptr<kl::registry> load_registry(const kl::cli_options& opt,
                                            const kl::family_registry& families) {
  auto reg = std::make_unique<kl::registry>(families);
  for (const auto& dir : opt.kernels_dirs) reg->add_source_dir(dir);
  if (!opt.no_plugins) {
    // Plugins are probed in a child process (`kernlab --probe-plugin FILE`), never loaded here;
    // the verdicts are kept beside the compile cache (none with --no-cache).
    kl::probe_options probe;
    probe.command = {executable_path().string(), "--probe-plugin"};
    probe.timeout_s = opt.kernel_timeout_s;
    if (!opt.no_cache) probe.cache_dir = cache_dir(opt);
    reg->set_probe_options(probe);
    for (const auto& dir : opt.plugin_dirs) reg->add_plugin_dir(dir);
    for (const auto& dir : kl::plugin_path_dirs(std::getenv("KERNLAB_PLUGIN_PATH")))
      reg->add_plugin_dir(dir);
  }
  return reg;
}

// The sweep the options describe, over `reg`'s variants. Throws usage_error for a selection, a
// block, a dtype, an op or a size that does not fit the variants.
kl::run_request make_request(const kl::cli_options& opt, const kl::registry& reg,
                             const kl::family_registry& families,
                             std::shared_ptr<const kl::nvrtc::compile_cache> cache) {
  kl::run_request req;
  try {
    req.variants = reg.select(opt.variants, opt.family);
  } catch (const kl::selection_error& e) {
    throw kl::usage_error(std::string("--variant: ") + e.what());
  }
  // A block size that none of the selected variants takes is a mistake, not a skip.
  for (unsigned b : opt.blocks_explicit ? opt.blocks : std::vector<unsigned>{}) {
    std::string supported;
    bool any = false;
    for (const auto* e : req.variants) {
      const auto& d = e->descriptor;
      if (d.blocks.empty() || d.supports_block(b) || !e->error.empty()) any = true;
      if (supported.empty() && !d.blocks.empty()) {
        supported = d.name + " supports ";
        for (std::size_t i = 0; i < d.blocks.size(); ++i)
          supported += (i ? "," : "") + std::to_string(d.blocks[i]);
      }
    }
    if (!any)
      throw kl::usage_error("--block " + std::to_string(b) + ": no selected variant takes it (" +
                            supported + ")");
  }
  // A dtype or an op named on the command line must belong to some selected family (the
  // defaults, int32,float32 and sum, need not: a family without them runs its own).
  auto check_names = [&](const std::vector<std::string>& names, bool named, const char* option,
                         std::vector<std::string> (kl::family::*list)() const) {
    if (!named) return;
    for (const auto& name : names) {
      bool found = false;
      std::string families_text;
      for (const auto* e : req.variants) {
        const kl::family* f = families.find(e->descriptor.family);
        if (!f) continue;  // a broken family: its rows fail with its error
        const auto has = (f->*list)();
        if (std::find(has.begin(), has.end(), name) != has.end()) found = true;
        if (families_text.find(f->name()) == std::string::npos)
          families_text += (families_text.empty() ? "" : ", ") + f->name();
      }
      if (!found && !req.variants.empty())
        throw kl::usage_error(std::string("--") + option + ": " +
                              (families_text.find(',') == std::string::npos
                                   ? "family " + families_text
                                   : "each selected family (" + families_text + ")") +
                              " has no " + option + " '" + name + "'");
    }
  };
  check_names(opt.dtypes, opt.dtypes_explicit, "dtype", &kl::family::dtypes);
  check_names(opt.ops, opt.ops_explicit, "op", &kl::family::ops);
  // --size W is W x W x ... for a family with a shape (matmul) when it is on the command line and
  // every selected variant has a shape; in a sweep that also has 1-D families the sizes are
  // theirs, and matmul takes --shape or its default shape.
  const bool sizes_for_shapes =
      opt.sizes_on_command_line &&
      std::all_of(req.variants.begin(), req.variants.end(), [&](const auto* e) {
        const kl::family* f = families.find(e->descriptor.family);
        return !f || f->shape_rank() > 0;
      });
  for (const auto* e : req.variants) {
    const kl::family* f = families.find(e->descriptor.family);
    if (!f) continue;
    if (f->shape_rank() > 0) {
      const bool sizes_apply = opt.shapes.empty() && sizes_for_shapes;
      for (auto n : sizes_apply ? opt.sizes : std::vector<std::uint64_t>{}) {
        kl::problem_config c{f->dtypes().front(), "", 0, opt.input_mode, opt.seed, {}};
        c.shape.assign(f->shape_rank(), n);  // W is W in every dimension
        try {
          f->device_bytes_needed(c);  // checks the shape
        } catch (const std::invalid_argument& ex) {
          throw kl::usage_error("--size " + std::to_string(n) + ": " + ex.what());
        }
      }
      for (const auto& s : opt.shapes) {
        kl::problem_config c{f->dtypes().front(), "", 0, opt.input_mode, opt.seed, {}};
        c.shape = s;
        if (s.size() != f->shape_rank())
          throw kl::usage_error("--shape " + c.shape_text() + ": family " + f->name() + " needs " +
                                std::to_string(f->shape_rank()) + " dimensions");
        try {
          f->device_bytes_needed(c);  // checks the shape
        } catch (const std::invalid_argument& ex) {
          throw kl::usage_error(std::string("--shape: ") + ex.what());
        }
      }
      continue;
    }
    for (auto n : opt.sizes)
      if (n > f->max_size())
        throw kl::usage_error("--size " + std::to_string(n) + ": family " + f->name() +
                              " takes at most " + std::to_string(f->max_size()) + " elements");
  }
  std::error_code ec;
  req.blocks = opt.blocks;
  req.dtypes = opt.dtypes;
  req.ops = opt.ops;
  req.sizes = opt.sizes;
  req.shapes = opt.shapes;
  req.sizes_for_shapes = sizes_for_shapes;
  req.input_mode = opt.input_mode;
  req.seed = opt.seed;
  req.fallback_arch = opt.arch;
  req.include_dirs = include_dirs(opt);
  req.toolkit_include_dirs = {cuda_include_dir(opt)};
  req.timing = opt.timing;
  req.compile_only = opt.compile_only || opt.resources;
  req.in_process = opt.in_process;
  req.worker_command = {executable_path().string(), "--worker"};
  for (const auto& dir : opt.kernels_dirs) {
    req.worker_command.push_back("--kernels-dir");
    req.worker_command.push_back(dir);
  }
  for (const auto& dir : req.include_dirs) {
    req.worker_command.push_back("--include");
    req.worker_command.push_back(dir);
  }
  req.kernel_timeout_s = opt.kernel_timeout_s;
  req.journal_path = opt.journal_path.empty() ? kl::default_journal_path() : opt.journal_path;
  req.resume = opt.resume;
  req.sanitize = opt.sanitize;
  if (!req.sanitize.empty()) {
    // Under a sanitizer a kernel runs orders of magnitude slower: validate, time once.
    req.timing.warmup_runs = 0;
    req.timing.min_samples = 1;
    req.timing.min_time_s = 0;
    req.timing.timeout_s = 1;
    req.timing.flush = kl::flush_mode::none;
    const char* home = std::getenv("CUDA_HOME");
    const fs::path candidate =
        fs::path(home ? home : "/usr/local/cuda") / "bin" / "compute-sanitizer";
    if (fs::exists(candidate, ec)) req.sanitizer = candidate.string();
  }
  req.compile_jobs = opt.compile_jobs;
  req.compile_command = {executable_path().string(), "--compile-child"};
  req.compile_timeout_s = opt.compile_timeout_s;
  req.cache = std::move(cache);
  req.want_keys = opt.watch;  // a round compares the keys of the files it compiled
  req.snr_db = opt.snr_db;
  req.dtypes_explicit = opt.dtypes_explicit;
  req.ops_explicit = opt.ops_explicit;
  return req;
}

// The reproducibility block of --json: the command, the versions, the seed and the timing.
kl::run_context context_of(const kl::cli_options& opt, const kl::run_request& req, int argc,
                           char** argv) {
  kl::run_context ctx;
  ctx.command.assign(argv, argv + argc);
  ctx.date = kl::utc_now_iso8601();
  ctx.kernlab_version = KERNLAB_VERSION;
  ctx.kernlab_commit = KERNLAB_COMMIT;
  ctx.nvrtc_version = kl::nvrtc::version();
  ctx.seed = req.seed;
  ctx.timing = req.timing;
  ctx.baseline = opt.baseline;
  return ctx;
}

// --pipeline: qam256's end-to-end measurement with one kernel file at one block size, in place
// of the sweep. The file is compiled as a sweep compiles it (cache included); the pipeline runs
// where rows run (the worker process, or in process), once per --size.
int pipeline_mode(const kl::cli_options& opt, const kl::family_registry& families,
                  const kl::run_request& req, int argc, char** argv) {
  if (opt.watch || opt.resources || !opt.sanitize.empty())
    throw kl::usage_error("--pipeline cannot be combined with --watch, --resources or --sanitize");
  if (!opt.csv_path.empty())
    throw kl::usage_error("--csv does not apply to --pipeline (--json records it)");
  std::vector<const kl::registry_entry*> chosen;
  std::string names;
  for (const auto* e : req.variants)
    if (e->descriptor.family == "qam256" && e->descriptor.origin == kl::origin_kind::source) {
      chosen.push_back(e);
      names += (names.empty() ? "" : ", ") + e->descriptor.name;
    }
  if (chosen.size() != 1)
    throw kl::usage_error(
        "--pipeline runs one qam256 kernel file; name it with --variant (e.g. --variant "
        "qam256.vec2_gridstride); the selection has " +
        (chosen.empty() ? std::string("none") : names));
  const kl::variant_descriptor& v = chosen[0]->descriptor;
  if (!opt.blocks_explicit || opt.blocks.size() != 1)
    throw kl::usage_error("--pipeline needs one block size (--block 256)");
  const unsigned block = opt.blocks[0];
  if (!v.supports_block(block))
    throw kl::usage_error("--block " + std::to_string(block) + ": " + v.name + " does not take it");
  const kl::family* fam = families.find("qam256");

  kl::run_request compile = req;
  compile.variants = chosen;
  compile.blocks = {block};
  compile.compile_only = true;
  const kl::sweep_result compiled = kl::runner(families, compile).run();
  const kl::compile_record& record = compiled.compiles.at(0);
  if (opt.compile_only) {  // what the pipeline would run, compiled; no GPU needed
    kl::print_compile_table(std::cout, compiled.compiles, compiled.arch);
    return record.error.empty() && chosen[0]->error.empty() ? 0 : 1;
  }
  if (!chosen[0]->error.empty() || !record.error.empty()) {
    std::cerr << "kernlab: " << v.qualified_name() << " does not compile:\n"
              << (chosen[0]->error.empty() ? record.error : chosen[0]->error) << "\n";
    return 1;
  }
  const std::unique_ptr<kl::row_executor> executor = kl::make_executor(families, req);
  const kl::cuda::device_info& device = executor->device();
  std::cout << "kernlab " << KERNLAB_VERSION << ": pipeline of " << v.qualified_name() << " block "
            << block << ", seed " << req.seed << ", on " << device.name << " ("
            << (req.in_process ? "in process" : "in the worker process") << ")\n";

  kl::pipeline_options popt;
  popt.streams = opt.streams;
  popt.orders = opt.issue_orders;
  popt.chunks = opt.chunks;
  popt.chunks_per_stream = opt.chunks_per_stream;
  popt.runs = opt.pipeline_runs;
  nlohmann::json reports = nlohmann::json::array();
  int code = 0;
  for (const kl::problem_config& config : kl::configs_for(*fam, compile)) {
    kl::pipeline_job job;
    job.kernel = kl::source_job(*fam, v, block, config, record);
    job.options = popt;
    const nlohmann::json result = executor->run_family_job("qam256", "pipeline", kl::to_json(job));
    const kl::pipeline_report report = kl::pipeline_report_from_json(result);
    kl::print_pipeline(std::cout, report, device, opt.markdown);
    std::cout << std::flush;
    for (const auto& row : report.rows)
      if (!row.valid) code = 1;
    reports.push_back(result);
  }
  if (!opt.json_path.empty()) {
    const kl::run_context ctx = context_of(opt, req, argc, argv);
    nlohmann::json results = kl::results_to_json(compiled, ctx);
    results["pipeline"] = reports;
    write_file(opt.json_path, [&](std::ostream& os) { os << results.dump(1) << "\n"; });
  }
  return code;
}

int run(int argc, char** argv) {
  kl::cli_options opt = kl::parse_command_line(argc, argv, find_default_paths());
  if (opt.help) {
    std::cout << kl::help_text();
    return 0;
  }
  if (opt.version) {
    std::cout << "kernlab " << KERNLAB_VERSION << " (commit " << KERNLAB_COMMIT << ", NVRTC "
              << kl::nvrtc::version() << ", plugin ABI " << KERNLAB_PLUGIN_ABI_VERSION << ")\n";
    return 0;
  }
  if (!opt.command.empty())
    return opt.command[0] == "cache" ? cache_command(opt) : run_command(opt);
  if (opt.kernels_dirs.empty())
    throw kl::usage_error("no kernels folder: give --kernels-dir or set kernels-dir in the config");

  kl::family_registry families;
  std::vector<std::string> family_warnings;
  load_families(families, opt.kernels_dirs, include_dirs(opt), &family_warnings);
  if (!opt.family.empty() && !families.broken(opt.family).empty() && !opt.list)
    throw kl::usage_error("--family " + opt.family +
                          ": its description cannot be used: " + families.broken(opt.family));
  if (!opt.family.empty() && !families.find(opt.family) && families.broken(opt.family).empty()) {
    const auto near = kl::nearest_names(opt.family, families.names());
    throw kl::usage_error("--family: unknown family '" + opt.family + "'" +
                          (near.empty() ? "" : "; did you mean '" + near[0] + "'?"));
  }

  std::unique_ptr<kl::registry> reg = load_registry(opt, families);
  if (opt.list) {
    if (opt.family.empty() && opt.variants == std::vector<std::string>{"all"}) {
      kl::print_list(std::cout, *reg);
    } else {
      try {
        kl::print_list(std::cout, *reg, reg->select(opt.variants, opt.family));
      } catch (const kl::selection_error& e) {
        throw kl::usage_error(std::string("--variant: ") + e.what());
      }
    }
    return 0;
  }
  for (const auto& w : family_warnings) std::cerr << "kernlab: warning: " << w << "\n";
  for (const auto& w : reg->warnings()) std::cerr << "kernlab: warning: " << w << "\n";

  const auto cache = open_cache(opt);
  // Watching starts before the sweep, so a file saved while it runs still makes a round.
  std::unique_ptr<kl::directory_watcher> watcher;
  if (opt.watch) watcher = std::make_unique<kl::directory_watcher>(opt.kernels_dirs);
  const kl::run_request req = make_request(opt, *reg, families, cache);
  if (opt.pipeline) return pipeline_mode(opt, families, req, argc, argv);
  if (req.journal_path.empty() && !req.compile_only)
    std::cerr << "kernlab: warning: neither XDG_CACHE_HOME nor HOME is set, so this run keeps no "
                 "journal and cannot be resumed; give --journal FILE to have one\n";

  kl::runner runner(families, req);
  kl::table_options table;
  table.baseline = opt.baseline;
  table.markdown = opt.markdown;
  table.families = &families;
  // Progress on a terminal only: a piped or redirected run stays quiet.
  const bool show_progress = isatty(STDERR_FILENO);
  if (show_progress)
    runner.on_progress(
        [](const char* phase, std::size_t done, std::size_t total, const std::string& what) {
          std::cerr << "\r\033[K[" << phase << " " << done << "/" << total << "] " << what
                    << std::flush;
        });
  auto clear_progress = [&] {
    if (show_progress) std::cerr << "\r\033[K" << std::flush;
  };
  std::cout << "kernlab " << KERNLAB_VERSION << ": " << req.variants.size() << " variant(s), seed "
            << req.seed << ", NVRTC " << kl::nvrtc::version() << "\n"
            << std::flush;

  bool announced = false;
  const kl::sweep_result sweep =
      runner.run([&](const std::vector<kl::result_record>& group, const kl::cuda::device_info& d,
                     const kl::sweep_result& so_far) {
        clear_progress();
        if (!announced) {
          announced = true;
          std::cout << "device " << d.ordinal << ": " << d.name << " (" << d.arch() << ", "
                    << d.sm_count << " SMs, " << static_cast<int>(d.peak_bandwidth() / 1e9)
                    << " GB/s theoretical, driver " << d.driver_version / 1000 << "."
                    << d.driver_version % 1000 / 10 << ")\n";
          if (so_far.launch_floor)
            std::cout << "launch floor: an empty kernel times at " << std::fixed
                      << std::setprecision(1) << so_far.launch_floor->median_ms * 1e3
                      << std::defaultfloat << " us (median, measured like every row)\n";
        }
        kl::print_group(std::cout, group, d, table);
        std::cout << std::flush;
      });
  for (const auto& w : sweep.warnings) std::cerr << "kernlab: warning: " << w << "\n";
  clear_progress();
  // --json and --csv are written whatever the mode: a compile-only file still records the
  // sources' hashes, the compile options and the compile times.
  auto write_outputs = [&] {
    if (opt.json_path.empty() && opt.csv_path.empty()) return;
    const kl::run_context ctx = context_of(opt, req, argc, argv);
    const nlohmann::json results = kl::results_to_json(sweep, ctx);
    if (!opt.json_path.empty())
      write_file(opt.json_path, [&](std::ostream& os) { os << results.dump(1) << "\n"; });
    if (!opt.csv_path.empty())
      write_file(opt.csv_path, [&](std::ostream& os) { kl::write_csv(results, os); });
  };
  if (opt.resources) {
    write_outputs();
    kl::print_resources(std::cout, sweep.compiles, sweep.arch, opt.markdown);
    for (const auto& c : sweep.compiles)
      if (!c.error.empty()) return 1;
    return 0;
  }
  if (!opt.compile_only && !sweep.device) {
    // Nothing was measured: an existing --json or --csv (an earlier run's measurements) is kept.
    for (const auto& path : {opt.json_path, opt.csv_path})
      if (!path.empty())
        std::cerr << "kernlab: " << path << " not written: no device, nothing was measured "
                  << "(--compile-only records the compile results)\n";
    kl::print_compile_table(std::cout, sweep.compiles, sweep.arch);
    kl::print_compile_summary(std::cout, sweep.compile_stats);
    throw kl::cuda::no_device_error(sweep.no_device_reason);
  }
  int code = 0;
  if (opt.compile_only) {
    kl::print_compile_table(std::cout, sweep.compiles, sweep.arch);
    kl::print_compile_summary(std::cout, sweep.compile_stats);
    if (!sweep.no_device_reason.empty())
      std::cout << "(no GPU here: " << sweep.no_device_reason << "; compiled for " << sweep.arch
                << ")\n";
    for (const auto& c : sweep.compiles)
      if (!c.error.empty()) code = 1;
  } else {
    if (sweep.compile_stats.files > 0) {
      std::cout << "\n";
      kl::print_compile_summary(std::cout, sweep.compile_stats);
    }
    code = kl::exit_code_for(sweep.results);
  }
  if (sweep.workers_started > 1)
    std::cout << "(" << sweep.workers_started - 1
              << " worker restart(s): see the CRASHED and TIMEOUT rows)\n";
  if (!sweep.clock_monitor_status.empty())
    std::cout << "(SM clocks not monitored: " << sweep.clock_monitor_status << ")\n";
  write_outputs();
  if (!watcher) return code;

  kl::watch_workspace first{std::move(reg), req};
  kl::watch_session session(
      families,
      [&] {
        kl::watch_workspace ws;
        ws.reg = load_registry(opt, families);
        ws.request = make_request(opt, *ws.reg, families, cache);
        ws.request.resume =
            false;  // a round after a save runs what changed, whatever the journal says
        return ws;
      },
      first, sweep);
  session.run(*watcher, opt.kernels_dirs, std::cout, std::cerr);
}

}  // namespace

int main(int argc, char** argv) {
  // `kernlab --worker`: the child process that runs kernels for a kernlab that started it.
  // `kernlab --probe-plugin FILE`: the child process that loads a plugin before kernlab trusts it.
  if (argc == 3 && std::string(argv[1]) == "--probe-plugin") return kl::probe_main(argv[2]);
  if (argc >= 2 && std::string(argv[1]) == "--worker") {
    try {
      return worker_entry(argc, argv);
    } catch (const std::exception& e) {
      std::cerr << "kernlab worker: " << e.what() << "\n";
      return 1;
    }
  }
  // `kernlab --compile-child`: one file's NVRTC compile for a kernlab that started it, so that
  // a compile past --compile-timeout can be killed.
  if (argc == 2 && std::string(argv[1]) == "--compile-child")
    return kl::nvrtc::compile_child_main();
  try {
    return run(argc, argv);
  } catch (const kl::usage_error& e) {
    std::cerr << "kernlab: " << e.what() << "\n(kernlab --help lists the options)\n";
    return kl::exit_code::usage;
  } catch (const kl::cuda::no_device_error& e) {
    std::cerr << "kernlab: " << e.what() << "\n"
              << "(--list and --compile-only work without a GPU)\n";
    return kl::exit_code::no_device;
  } catch (const kl::io_error& e) {
    std::cerr << "kernlab: error: " << e.what() << "\n";
    return kl::exit_code::io;
  } catch (const std::exception& e) {
    std::cerr << "kernlab: error: " << e.what() << "\n";
    return 1;
  }
}
