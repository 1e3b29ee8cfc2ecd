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

// One `kernlab` sweep command, in phases: resolve() the families and the registry; then list(),
// or prepare() the request and either plan(), pipeline(), or measure() and report(), and with
// --watch, watch(). The members are what the phases share; they are declared in the order the
// phases make them, so they go in the reverse order. (runner/runner.cpp's sweep_run is the sweep
// itself, which measure() runs.)
class sweep_command_run {
 public:
  sweep_command_run(const kl::cli_options& opt, int argc, char** argv)
      : opt_(opt), argc_(argc), argv_(argv) {}
  // The results writer and the watch call back into the run: it stays where it was made.
  sweep_command_run(const sweep_command_run&) = delete;
  sweep_command_run& operator=(const sweep_command_run&) = delete;

  // 1. The families (checking --family) and the registry.
  void resolve() {
    if (opt_.kernels_dirs.empty())
      throw kl::usage_error(
          "no kernels folder: give --kernels-dir or set kernels-dir in the config");
    load_families(families_, opt_.kernels_dirs, include_dirs(opt_), &family_warnings_);
    if (!opt_.family.empty() && !families_.broken(opt_.family).empty() && !opt_.list)
      throw kl::usage_error("--family " + opt_.family +
                            ": its description cannot be used: " + families_.broken(opt_.family));
    if (!opt_.family.empty() && !families_.find(opt_.family) &&
        families_.broken(opt_.family).empty()) {
      const auto near = kl::nearest_names(opt_.family, families_.names());
      throw kl::usage_error("--family: unknown family '" + opt_.family + "'" +
                            (near.empty() ? "" : "; did you mean '" + near[0] + "'?"));
    }
    reg_ = load_registry(opt_, families_);
  }

  // --list-names: what --variant takes, one a line, for shell completion.
  int list_names() const {
    kl::print_variant_names(std::cout, *reg_, opt_.family);
    return 0;
  }

  // --list: the variants, with no warning about the files that load none.
  int list() const {
    if (opt_.variants == std::vector<std::string>{"all"}) {
      kl::print_list(std::cout, *reg_, opt_.family);
    } else {
      try {
        kl::print_list(std::cout, *reg_, reg_->select(opt_.variants, opt_.family));
      } catch (const kl::selection_error& e) {
        throw kl::usage_error(std::string("--variant: ") + e.what());
      }
    }
    return 0;
  }

  // 2. The request, with the compile cache, and the watcher of --watch.
  void prepare() {
    for (const auto& w : family_warnings_) std::cerr << "kernlab: warning: " << w << "\n";
    for (const auto& w : reg_->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    cache_ = open_cache(opt_);
    // Watching starts before the sweep, so a file saved while it runs still makes a round.
    if (opt_.watch) watcher_ = std::make_unique<kl::directory_watcher>(opt_.kernels_dirs);
    req_ = make_request(opt_, *reg_, families_, cache_);
  }

  // --plan: only the keys on standard output, so that a script can diff two plans.
  int plan() const {
    for (const auto& row : kl::plan_rows(families_, req_)) std::cout << row.key() << "\n";
    return 0;
  }

  int pipeline() { return pipeline_mode(opt_, families_, req_, argc_, argv_); }

  // 3. The sweep: each group's table printed as it finishes, the results files written as rows
  // finish (report/results_writer.hpp).
  void measure() {
    if (req_.journal_path.empty() && !req_.compile_only)
      std::cerr << "kernlab: warning: neither XDG_CACHE_HOME nor HOME is set, so this run keeps "
                   "no journal and cannot be resumed; give --journal FILE to have one\n";

    kl::runner runner(families_, req_);
    table_.baseline = opt_.baseline;
    table_.markdown = opt_.markdown;
    table_.families = &families_;
    // Progress on a terminal only: a piped or redirected run stays quiet.
    show_progress_ = isatty(STDERR_FILENO);
    if (show_progress_)
      runner.on_progress(
          [](const char* phase, std::size_t done, std::size_t total, const std::string& what) {
            std::cerr << "\r\033[K[" << phase << " " << done << "/" << total << "] " << what
                      << std::flush;
          });
    std::cout << "kernlab " << KERNLAB_VERSION << ": " << req_.variants.size()
              << " variant(s), seed " << req_.seed << ", NVRTC " << kl::nvrtc::version() << "\n"
              << std::flush;

    // Ctrl-C stops the run after the row in flight, keeping what was measured.
    outputs_ = std::make_unique<kl::results_writer>(
        kl::results_paths{opt_.json_path, opt_.csv_path, opt_.jsonl_path},
        [this] { return context_of(opt_, req_, argc_, argv_); });
    runner.on_row([this](const kl::result_record& r, const kl::sweep_result& so_far) {
      outputs_->row(r, so_far);
    });
    // Not under --watch: there Ctrl-C is how the user leaves, and it ends kernlab as it always
    // did.
    if (!opt_.watch) kl::install_interrupt_handler();

    sweep_ = runner.run([this](const std::vector<kl::result_record>& group,
                               const kl::cuda::device_info& d, const kl::sweep_result& so_far) {
      clear_progress();
      if (!announced_) announce(d, so_far);
      print_by_model(std::cout, group, d, so_far.devices, table_);
      std::cout << std::flush;
    });
  }

  // 4. The tables and the files; returns the exit code.
  int report() {
    for (const auto& w : sweep_.warnings) std::cerr << "kernlab: warning: " << w << "\n";
    for (const auto& w : outputs_->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    clear_progress();
    if (sweep_.interrupted && (opt_.compile_only || opt_.resources || !sweep_.device)) {
      // Stopped while compiling: a table of some files would pass for the whole, so nothing is
      // printed or written (an earlier --json stays); what compiled is in the compile cache.
      std::cout << "interrupted (" << (kl::interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
                << ") while compiling; nothing written (the files compiled so far are in the "
                   "compile cache)\n";
      return 128 + kl::interrupt_signal();
    }
    if (opt_.resources) return report_resources();
    if (!opt_.compile_only && !sweep_.device) report_no_device();
    const int code = opt_.compile_only ? report_compiles() : report_rows();
    // One worker per GPU to begin with; any more were restarts.
    if (const int gpus = std::max<int>(1, static_cast<int>(sweep_.devices.size()));
        sweep_.workers_started > gpus)
      std::cout << "(" << sweep_.workers_started - gpus
                << " worker restart(s): see the CRASHED and TIMEOUT rows)\n";
    if (!sweep_.clock_monitor_status.empty())
      std::cout << "(SM clocks not monitored: " << sweep_.clock_monitor_status << ")\n";
    write_outputs();
    if (sweep_.interrupted) {
      std::cout << "interrupted (" << (kl::interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
                << ") after " << sweep_.results.size() << " row(s); the results files hold them, "
                << "and --resume runs the rest\n";
      return 128 + kl::interrupt_signal();
    }
    return code;
  }

  // Whether --watch goes on to its rounds: not after Ctrl-C, nor after --resources (report()
  // returned for good then).
  bool watches() const { return watcher_ && !sweep_.interrupted && !opt_.resources; }

  // 5. --watch: a round for every save, until Ctrl-C.
  [[noreturn]] void watch() {
    kl::watch_workspace first{nullptr, std::move(reg_), req_};
    kl::watch_session session(
        families_,
        [this] {
          // Each round reads the families anew: a saved family.toml changes its family.
          auto round_families = std::make_shared<kl::family_registry>();
          std::vector<std::string> warnings;
          load_families(*round_families, opt_.kernels_dirs, include_dirs(opt_), &warnings);
          kl::watch_workspace ws;
          ws.families = round_families;
          ws.reg = load_registry(opt_, *round_families);
          ws.request = make_request(opt_, *ws.reg, *round_families, cache_);
          ws.request.resume =
              false;  // a round after a save runs what changed, whatever the journal says
          return ws;
        },
        first, sweep_);
    session.run(*watcher_, opt_.kernels_dirs, std::cout, std::cerr);
  }

 private:
  void clear_progress() const {
    if (show_progress_) std::cerr << "\r\033[K" << std::flush;
  }

  // Before the first group's table: the GPUs, the launch floor, and whether energy is measured.
  void announce(const kl::cuda::device_info& d, const kl::sweep_result& so_far) {
    announced_ = true;
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
      std::cout << "launch floor: an empty kernel times at " << std::fixed << std::setprecision(1)
                << so_far.launch_floor->median_ms * 1e3 << std::defaultfloat
                << " us (median, measured like every row)\n";
    if (req_.timing.energy.enabled)
      std::cout << (so_far.energy_status.empty()
                        ? "energy: NVML read while each row runs back to back for at least " +
                              fmt_seconds(req_.timing.energy.min_time_s) +
                              " after its samples (no L2 flush)\n"
                        : "--energy: " + so_far.energy_status +
                              "; the rows have no energy figures\n");
  }

  // --json and --csv are written whatever the mode: a compile-only file still records the
  // sources' hashes, the compile options and the compile times.
  void write_outputs() {
    if (opt_.json_path.empty() && opt_.csv_path.empty() && opt_.jsonl_path.empty()) return;
    outputs_->finish(sweep_);
  }

  // --resources: each compiled instantiation's resources, and as records in --json and --csv.
  int report_resources() {
    if (!opt_.json_path.empty() || !opt_.csv_path.empty()) {
      kl::sweep_result with_records = sweep_;
      with_records.results =
          kl::resource_records(sweep_.compiles, sweep_.arch, req_.input_mode, req_.seed);
      outputs_->finish(with_records);
    }
    kl::print_resources(std::cout, sweep_.compiles, sweep_.arch, opt_.markdown);
    for (const auto& c : sweep_.compiles)
      if (!c.error.empty()) return 1;
    return 0;
  }

  // Nothing was measured: an existing --json or --csv (an earlier run's measurements) is kept.
  [[noreturn]] void report_no_device() const {
    for (const auto& path : {opt_.json_path, opt_.csv_path})
      if (!path.empty())
        std::cerr << "kernlab: " << path << " not written: no device, nothing was measured "
                  << "(--compile-only records the compile results)\n";
    kl::print_compile_table(std::cout, sweep_.compiles, sweep_.arch);
    kl::print_compile_summary(std::cout, sweep_.compile_stats);
    throw kl::cuda::no_device_error(sweep_.no_device_reason);
  }

  // --compile-only: the compile table; 1 when a file did not compile.
  int report_compiles() const {
    kl::print_compile_table(std::cout, sweep_.compiles, sweep_.arch);
    kl::print_compile_summary(std::cout, sweep_.compile_stats);
    if (!sweep_.no_device_reason.empty())
      std::cout << "(no GPU here: " << sweep_.no_device_reason << "; compiled for " << sweep_.arch
                << ")\n";
    int code = 0;
    for (const auto& c : sweep_.compiles)
      if (!c.error.empty()) code = 1;
    return code;
  }

  // The rows measured: the profile table and the compile summary; exit_code_for the rows.
  int report_rows() const {
    kl::print_profile_table(std::cout, sweep_.results, sweep_.profile, opt_.markdown);
    if (sweep_.compile_stats.files > 0) {
      std::cout << "\n";
      kl::print_compile_summary(std::cout, sweep_.compile_stats);
    }
    return kl::exit_code_for(sweep_.results);
  }

  const kl::cli_options& opt_;
  const int argc_;
  char** const argv_;
  kl::family_registry families_;
  std::vector<std::string> family_warnings_;
  std::unique_ptr<kl::registry> reg_;
  std::shared_ptr<const kl::nvrtc::compile_cache> cache_;
  std::unique_ptr<kl::directory_watcher> watcher_;
  kl::run_request req_;
  kl::table_options table_;
  bool show_progress_ = false;
  std::unique_ptr<kl::results_writer> outputs_;
  bool announced_ = false;
  kl::sweep_result sweep_;
};

}  // namespace

int sweep_command(const kl::cli_options& opt, int argc, char** argv) {
  sweep_command_run sweep(opt, argc, argv);
  sweep.resolve();
  if (opt.list_names) return sweep.list_names();
  if (opt.list) return sweep.list();
  sweep.prepare();
  if (opt.plan) return sweep.plan();
  if (opt.pipeline) return sweep.pipeline();
  sweep.measure();
  const int code = sweep.report();
  if (!sweep.watches()) return code;
  sweep.watch();
}

}  // namespace kl::app
