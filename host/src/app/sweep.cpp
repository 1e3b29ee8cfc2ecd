#include "app/sweep.hpp"

#include "app/environment.hpp"
#include "app/pipeline_mode.hpp"
#include "app/plan.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "cuda/driver.hpp"
#include "nvrtc/compiler.hpp"
#include "registry/registry.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/results_writer.hpp"
#include "report/table.hpp"
#include "runner/runner.hpp"
#include "spec/names.hpp"
#include "watch/directory_watcher.hpp"
#include "watch/watch_session.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

namespace kl::app {
namespace {

std::string fmt_seconds(double s) {
  std::ostringstream os;
  os << s << " s";
  return os.str();
}

// A group's table, or with --devices over GPUs of different models, one table per model (each
// with that model's peaks): medians of different models are never ranked together. Rows that
// reached no GPU (a skip, a compile error) go in the first model's table.
void print_by_model(std::ostream& os, const std::vector<kl::result_record>& group,
                    const kl::cuda::device_info& first,
                    const std::vector<kl::cuda::device_info>& devices,
                    const kl::table_options& table) {
  std::vector<std::string> models;
  for (const auto& g : devices)
    if (std::find(models.begin(), models.end(), g.name) == models.end()) models.push_back(g.name);
  if (models.size() < 2) {
    kl::print_group(os, group, first, table);
    return;
  }
  for (const auto& model : models) {
    std::vector<kl::result_record> mine;
    for (const auto& r : group)
      if (r.gpu ? r.gpu->name == model : model == models.front()) mine.push_back(r);
    if (mine.empty()) continue;
    const auto d = std::find_if(devices.begin(), devices.end(),
                                [&](const kl::cuda::device_info& g) { return g.name == model; });
    os << "\n-- " << model << " (";
    std::string sep;
    for (const auto& g : devices)
      if (g.name == model) {
        os << sep << "GPU " << g.ordinal;
        sep = ", ";
      }
    os << ")";
    kl::print_group(os, mine, *d, table);
  }
}

}  // namespace

int sweep_command(const kl::cli_options& opt, int argc, char** argv) {
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
  if (opt.list_names) {
    // What --variant takes, one a line, for shell completion: every variant's name and every
    // tunable file's (which selects its points), each once, and "all".
    std::set<std::string> seen;
    std::cout << "all\n";
    for (const auto& e : reg->entries()) {
      const kl::variant_descriptor& d = e.descriptor;
      if (!opt.family.empty() && d.family != opt.family) continue;
      for (const std::string* name : {&d.name, &d.tunable_file})
        if (!name->empty() && (name == &d.tunable_file || d.in_default_selection()) &&
            seen.insert(*name).second)
          std::cout << *name << "\n";
    }
    return 0;
  }
  if (opt.list) {
    if (opt.variants == std::vector<std::string>{"all"}) {
      kl::print_list(std::cout, *reg, opt.family);
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
  if (opt.plan) {
    // Only the keys on standard output, so that a script can diff two plans.
    for (const auto& row : kl::plan_rows(families, req)) std::cout << row.key() << "\n";
    return 0;
  }
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

  // Results files are written as rows finish (report/results_writer.hpp), and Ctrl-C stops the
  // run after the row in flight, keeping what was measured.
  kl::results_writer outputs({opt.json_path, opt.csv_path, opt.jsonl_path},
                             [&] { return context_of(opt, req, argc, argv); });
  runner.on_row(
      [&](const kl::result_record& r, const kl::sweep_result& so_far) { outputs.row(r, so_far); });
  // Not under --watch: there Ctrl-C is how the user leaves, and it ends kernlab as it always did.
  if (!opt.watch) kl::install_interrupt_handler();

  bool announced = false;
  const kl::sweep_result sweep =
      runner.run([&](const std::vector<kl::result_record>& group, const kl::cuda::device_info& d,
                     const kl::sweep_result& so_far) {
        clear_progress();
        if (!announced) {
          announced = true;
          for (const auto& g :
               so_far.devices.size() > 1 ? so_far.devices : std::vector<kl::cuda::device_info>{d})
            std::cout << "device " << g.ordinal << ": " << g.name << " (" << g.arch() << ", "
                      << g.sm_count << " SMs, " << static_cast<int>(g.peak_bandwidth() / 1e9)
                      << " GB/s theoretical, driver " << g.driver_version / 1000 << "."
                      << g.driver_version % 1000 / 10 << ")\n";
          if (so_far.devices.size() > 1)
            std::cout << so_far.devices.size()
                      << " GPUs: each row is measured on one of them (the gpu column), and "
                         "compared with the baseline measured on the same GPU\n";
          if (so_far.launch_floor)
            std::cout << "launch floor: an empty kernel times at " << std::fixed
                      << std::setprecision(1) << so_far.launch_floor->median_ms * 1e3
                      << std::defaultfloat << " us (median, measured like every row)\n";
          if (req.timing.energy.enabled)
            std::cout << (so_far.energy_status.empty()
                              ? "energy: NVML read while each row runs back to back for at least " +
                                    fmt_seconds(req.timing.energy.min_time_s) +
                                    " after its samples (no L2 flush)\n"
                              : "--energy: " + so_far.energy_status +
                                    "; the rows have no energy figures\n");
        }
        print_by_model(std::cout, group, d, so_far.devices, table);
        std::cout << std::flush;
      });
  for (const auto& w : sweep.warnings) std::cerr << "kernlab: warning: " << w << "\n";
  for (const auto& w : outputs.warnings()) std::cerr << "kernlab: warning: " << w << "\n";
  clear_progress();
  if (sweep.interrupted && (opt.compile_only || opt.resources || !sweep.device)) {
    // Stopped while compiling: a table of some files would pass for the whole, so nothing is
    // printed or written (an earlier --json stays); what compiled is in the compile cache.
    std::cout << "interrupted (" << (kl::interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << ") while compiling; nothing written (the files compiled so far are in the "
                 "compile cache)\n";
    return 128 + kl::interrupt_signal();
  }
  // --json and --csv are written whatever the mode: a compile-only file still records the
  // sources' hashes, the compile options and the compile times.
  auto write_outputs = [&] {
    if (opt.json_path.empty() && opt.csv_path.empty() && opt.jsonl_path.empty()) return;
    outputs.finish(sweep);
  };
  if (opt.resources) {
    // The records of --json and --csv: each compiled instantiation's resources.
    if (!opt.json_path.empty() || !opt.csv_path.empty()) {
      kl::sweep_result with_records = sweep;
      with_records.results =
          kl::resource_records(sweep.compiles, sweep.arch, req.input_mode, req.seed);
      outputs.finish(with_records);
    }
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
    kl::print_profile_table(std::cout, sweep.results, sweep.profile, opt.markdown);
    if (sweep.compile_stats.files > 0) {
      std::cout << "\n";
      kl::print_compile_summary(std::cout, sweep.compile_stats);
    }
    code = kl::exit_code_for(sweep.results);
  }
  // One worker per GPU to begin with; any more were restarts.
  if (const int gpus = std::max<int>(1, static_cast<int>(sweep.devices.size()));
      sweep.workers_started > gpus)
    std::cout << "(" << sweep.workers_started - gpus
              << " worker restart(s): see the CRASHED and TIMEOUT rows)\n";
  if (!sweep.clock_monitor_status.empty())
    std::cout << "(SM clocks not monitored: " << sweep.clock_monitor_status << ")\n";
  write_outputs();
  if (sweep.interrupted) {
    std::cout << "interrupted (" << (kl::interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << ") after " << sweep.results.size() << " row(s); the results files hold them, "
              << "and --resume runs the rest\n";
    return 128 + kl::interrupt_signal();
  }
  if (!watcher) return code;

  kl::watch_workspace first{nullptr, std::move(reg), req};
  kl::watch_session session(
      families,
      [&] {
        // Each round reads the families anew: a saved family.toml changes its family.
        auto round_families = std::make_shared<kl::family_registry>();
        std::vector<std::string> warnings;
        load_families(*round_families, opt.kernels_dirs, include_dirs(opt), &warnings);
        kl::watch_workspace ws;
        ws.families = round_families;
        ws.reg = load_registry(opt, *round_families);
        ws.request = make_request(opt, *ws.reg, *round_families, cache);
        ws.request.resume =
            false;  // a round after a save runs what changed, whatever the journal says
        return ws;
      },
      first, sweep);
  session.run(*watcher, opt.kernels_dirs, std::cout, std::cerr);
}

}  // namespace kl::app
