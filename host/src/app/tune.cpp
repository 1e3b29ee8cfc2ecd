#include "app/tune.hpp"

#include "app/environment.hpp"
#include "app/plan.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "core/json_text.hpp"
#include "cuda/driver.hpp"
#include "nvrtc/compiler.hpp"
#include "parallel/thread_pool.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/results_writer.hpp"
#include "report/table.hpp"
#include "report/tune_report.hpp"
#include "runner/row_session.hpp"
#include "runner/tune_search.hpp"
#include "spec/names.hpp"
#include "tune/outcome.hpp"
#include "tune/space.hpp"
#include "tune/store.hpp"
#include "tune/strategy.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

namespace kl::app {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// A recorded tune (kernlab tune --json, or a sweep's --json) that answers rows by their
// configuration key, as Kernel Tuner's simulation mode does: strategies compared on a measured
// space at no GPU time. A row the file does not hold fails with that reason.
class replay_file {
 public:
  explicit replay_file(const std::string& path) : path_(path) {
    const nlohmann::json j = read_results_file(path);
    try {
      for (auto& r : records_from_results(j)) {
        const std::string key = configuration_key(r.variant.qualified_name(), r.block, r.config);
        // A time that is not a positive number was never measured: it would be the best.
        if (r.timed() && !(r.timing->median_ms > 0 && std::isfinite(r.timing->median_ms)))
          throw std::runtime_error(key + ": median_us " + json_text(r.timing->median_ms * 1e3) +
                                   " is not a time (a positive number)");
        records_.emplace(key, std::move(r));
      }
      const auto& dev = j.at("reproducibility").at("device");
      if (dev.is_null()) throw std::runtime_error("it has no device: nothing was measured");
      device.name = dev.at("name").get<std::string>();
      device.uuid = dev.value("uuid", "");
      device.sm_count = dev.value("sm_count", 0);
      device.mem_clock_khz = dev.value("memory_clock_mhz", 0) * 1000;
      device.sm_clock_khz = dev.value("max_sm_clock_mhz", 0) * 1000;
      device.bus_width_bits = dev.value("bus_width_bits", 0);
      const std::string cc = dev.value("compute_capability", "0.0");
      device.cc_major = std::stoi(cc.substr(0, cc.find('.')));
      device.cc_minor = std::stoi(cc.substr(cc.find('.') + 1));
      device.max_threads_per_block = 1024;
    } catch (const std::exception& e) {
      throw io_error("--replay " + path + ": " + e.what());
    }
  }
  cuda::device_info device;
  std::size_t size() const { return records_.size(); }
  /// Whether any record has energy figures (the file was recorded with --energy).
  bool has_energy() const {
    for (const auto& [key, r] : records_)
      if (r.has_energy()) return true;
    return false;
  }
  result_record row(const row_request& r) const {
    const std::string key =
        configuration_key(r.entry->descriptor.qualified_name(), r.block, r.config);
    if (auto it = records_.find(key); it != records_.end()) return it->second;
    result_record missing;
    missing.variant = r.entry->descriptor;
    missing.config = r.config;
    missing.block = r.block;
    missing.status = outcome::skipped;
    missing.message = "not in " + path_;
    return missing;
  }

 private:
  std::string path_;
  std::map<std::string, result_record> records_;
};

// `tune --compile-only` (or --resources): every point of the spaces compiled at every block it
// takes, as a sweep's --compile-only compiles its variants, and nothing run (no GPU needed).
// Exit 1 when a point does not compile.
int compile_points(const cli_options& opt, const family_registry& families, run_request req,
                   std::vector<const registry_entry*> sources, int argc, char** argv) {
  for (const auto& [given, option] :
       {std::pair{opt.export_json, "--export"}, std::pair{opt.export_header, "--export-header"},
        std::pair{opt.t4_path, "--t4"}, std::pair{opt.jsonl_path, "--jsonl"},
        std::pair{opt.replay_path, "--replay"}})
    if (!given.empty())
      throw usage_error(std::string(option) + ": tune " +
                        (opt.resources ? "--resources" : "--compile-only") +
                        " measures no point, so there is nothing to write");
  req.variants = std::move(sources);
  runner compiles(families, req);
  install_interrupt_handler();
  const sweep_result sweep = compiles.run();
  if (sweep.interrupted) {
    std::cout << "interrupted (" << (interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << ") while compiling; nothing written (the files compiled so far are in the "
                 "compile cache)\n";
    return 128 + interrupt_signal();
  }
  if (!opt.json_path.empty() || !opt.csv_path.empty()) {
    results_writer outputs({opt.json_path, opt.csv_path, ""},
                           [&] { return context_of(opt, req, argc, argv); });
    sweep_result written = sweep;
    if (opt.resources)
      written.results = resource_records(sweep.compiles, sweep.arch, req.input_mode, req.seed);
    outputs.finish(written);
  }
  if (opt.resources) {
    print_resources(std::cout, sweep.compiles, sweep.arch, opt.markdown);
  } else {
    print_compile_table(std::cout, sweep.compiles, sweep.arch);
    print_compile_summary(std::cout, sweep.compile_stats);
  }
  if (!sweep.no_device_reason.empty())
    std::cout << "(no GPU here: " << sweep.no_device_reason << "; compiled for " << sweep.arch
              << ")\n";
  for (const auto& c : sweep.compiles)
    if (!c.error.empty()) return 1;
  return 0;
}

}  // namespace

int tune_command(const cli_options& opt, int argc, char** argv) {
  const auto started = clock_type::now();
  if (opt.kernels_dirs.empty())
    throw usage_error("no kernels folder: give --kernels-dir or set kernels-dir in the config");
  if (opt.variants == std::vector<std::string>{"all"})
    throw usage_error(
        "tune: name the kernel file to tune with --variant FILE (kernlab --list shows them)");
  const auto names = tune::strategy_names();
  if (std::find(names.begin(), names.end(), opt.strategy) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw usage_error("--strategy: unknown strategy '" + opt.strategy + "' (" + known + ")");
  }

  family_registry families;
  std::vector<std::string> family_warnings;
  load_families(families, opt.kernels_dirs, include_dirs(opt), &family_warnings);
  for (const auto& w : family_warnings) std::cerr << "kernlab: warning: " << w << "\n";
  std::unique_ptr<registry> reg = load_registry(opt, families);
  for (const auto& w : reg->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
  const auto cache = open_cache(opt);
  run_request req = make_request(opt, *reg, families, cache);

  // What is tuned: the selected kernel files. A plugin has nothing to tune; the family's library
  // runs beside the tunes as their baseline anyway.
  std::vector<const registry_entry*> sources;
  for (const registry_entry* e : req.variants) {
    if (e->descriptor.origin != origin_kind::source) {
      if (!e->descriptor.is_baseline)
        throw usage_error("tune: " + e->descriptor.qualified_name() +
                          " is a plugin; only kernel files have something to tune");
      continue;
    }
    if (!e->error.empty()) throw usage_error("tune: " + e->error);
    if (!families.find(e->descriptor.family))
      throw usage_error(
          "tune: " + e->descriptor.qualified_name() +
          ": its family's description cannot be used: " + families.broken(e->descriptor.family));
    sources.push_back(e);
  }
  if (sources.empty()) throw usage_error("tune: --variant selects no kernel file");
  // Without --block, a tune takes every block its files allow (a tile file's 64-thread points
  // too), not a sweep's 128 to 1024.
  if (!opt.blocks_explicit) {
    std::vector<unsigned> blocks;
    for (const registry_entry* e : sources)
      for (unsigned b : e->descriptor.blocks)
        if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
    std::sort(blocks.begin(), blocks.end());
    req.blocks = blocks;
  }

  std::optional<cuda::device_info> device;
  std::string no_device;
  try {
    cuda::driver::get();
    device = cuda::query_device(req.devices.front());
  } catch (const cuda::no_device_error& e) {
    no_device = e.why();
  }
  std::vector<tune::tuning_space> spaces;
  try {
    spaces = tune::make_spaces(sources, req.blocks, device ? device->max_threads_per_block : 0);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("tune: ") + e.what());
  }
  const bool compile_only = opt.compile_only || opt.resources;
  if (compile_only)
    std::cout << "kernlab " << KERNLAB_VERSION << " tune "
              << (opt.resources ? "--resources" : "--compile-only")
              << ": every point compiled, none run, NVRTC " << nvrtc::version() << "\n";
  else
    std::cout << "kernlab " << KERNLAB_VERSION << " tune: strategy " << opt.strategy << ", seed "
              << opt.seed << ", NVRTC " << nvrtc::version() << "\n";
  for (const auto& s : spaces) {
    std::cout << s.family << "." << s.name << " (" << s.file << "): " << s.candidates.size()
              << " points over";
    for (const auto& p : s.space.parameters)
      std::cout << " " << p.name << "(" << p.values.size() << ")";
    std::cout << "\n";
    for (const auto& [why, n] : s.turned_down)
      std::cout << "  left out: " << n << " point(s), " << why << "\n";
  }
  if (compile_only) return compile_points(opt, families, req, sources, argc, argv);
  // --replay answers every row from a recorded tune, with no GPU; otherwise the rows run here.
  std::unique_ptr<replay_file> replay;
  std::vector<std::vector<row_request>> replay_batches;  // --replay: submitted, not collected
  std::unique_ptr<row_session> session;
  std::unique_ptr<tune::tuning_store> store;
  row_source rows_at;                  // every GPU of the run (the library's rows)
  std::vector<std::string> models;     // the GPU models, when the run has several
  std::vector<row_source> model_rows;  // one per model: its GPUs only
  if (!opt.replay_path.empty()) {
    replay = std::make_unique<replay_file>(opt.replay_path);
    rows_at.device = &replay->device;
    rows_at.run = [&](const std::vector<row_request>& rows, const auto& done) {
      for (std::size_t k = 0; k < rows.size(); ++k) done(k, replay->row(rows[k]));
    };
    rows_at.submit = [&](const std::vector<row_request>& rows) {
      replay_batches.push_back(rows);
      return replay_batches.size() - 1;
    };
    rows_at.collect = [&](std::size_t id, const auto& done) {
      rows_at.run(std::exchange(replay_batches.at(id), {}), done);
    };
    rows_at.discard = [&](std::size_t id) { replay_batches.at(id).clear(); };
    std::cout << "replaying " << opt.replay_path << " (" << replay->size()
              << " records measured on " << replay->device.name << "): nothing runs here\n";
  } else {
    if (!device) throw cuda::no_device_error(no_device);
    std::string store_path = opt.store_path;
    if (store_path.empty() && !cache_dir(opt).empty())
      store_path = (cache_dir(opt) / "tuning.jsonl").string();
    if (store_path.empty()) {
      std::cerr << "kernlab: warning: neither XDG_CACHE_HOME nor HOME is set, so this tune keeps "
                   "no store and cannot be resumed; give --store FILE to have one\n";
    } else {
      store = std::make_unique<tune::tuning_store>(store_path);
      for (const auto& w : store->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    }
    session = std::make_unique<row_session>(families, req);
    rows_at = session_rows(*session);
    const auto& gpus = session->devices();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const cuda::device_info& d = gpus[i];
      std::cout << "device " << d.ordinal << ": " << d.name << " (" << d.arch() << ", "
                << d.sm_count << " SMs, driver " << d.driver_version / 1000 << "."
                << d.driver_version % 1000 / 10 << ")";
      if (i + 1 == gpus.size() && store) std::cout << "; tuning store " << store->path().string();
      std::cout << "\n";
    }
    // A search ranks its points by their medians, and medians of different models are not
    // comparable: over GPUs of several models, each model is searched apart on its own GPUs
    // (side by side), with its own table and best point.
    for (const cuda::device_info& g : gpus)
      if (std::find(models.begin(), models.end(), g.name) == models.end()) models.push_back(g.name);
    if (models.size() > 1) {
      for (const auto& [given, option] :
           {std::pair{opt.export_header, "--export-header"}, std::pair{opt.t4_path, "--t4"}})
        if (!given.empty())
          throw usage_error(std::string(option) + ": the GPUs are of " +
                            std::to_string(models.size()) + " models (" + gpus.front().name +
                            ", ...), and it holds one best point per problem: give GPUs of one "
                            "model");
      std::cout << models.size() << " GPU models: each is tuned apart on its own GPUs, with "
                << "its own table and best point:";
      for (const auto& m : models) {
        std::cout << " " << m << " (GPU";
        const char* sep = " ";
        for (const auto& g : gpus)
          if (g.name == m) std::cout << std::exchange(sep, ", ") << g.ordinal;
        std::cout << ")" << (&m == &models.back() ? "\n" : ";");
      }
      for (const auto& m : models) model_rows.push_back(session_rows(*session, m));
    }
    if (gpus.size() > 1)
      std::cout << gpus.size()
                << " GPUs: each batch's points are spread over them, each measured on one (the "
                   "gpu column); the library's rows run on each\n";
    if (opt.resume && store)
      std::cout << "resuming: " << store->size()
                << " stored results; the points among them are not run again\n";
  }
  const tune::objective goal =
      opt.objective == "energy" ? tune::objective::energy : tune::objective::time;
  // An energy tune needs energy figures for its points: where none can be had, it stops before
  // searching, rather than rank every point as a failure.
  if (goal == tune::objective::energy && session && !session->energy_status().empty())
    throw usage_error("--objective energy: " + session->energy_status());
  if (goal == tune::objective::energy && replay && !replay->has_energy())
    throw usage_error("--objective energy: " + opt.replay_path +
                      " has no energy figures (record it with --energy or --objective energy)");
  if (opt.timing.energy.enabled && session)
    std::cout << (session->energy_status().empty()
                      ? "energy: every point is measured for energy too (NVML)"
                      : "--energy: " + session->energy_status() +
                            "; the points have no energy figures")
              << (goal == tune::objective::energy ? "; the search minimises joules per operation"
                                                  : "")
              << "\n";
  std::cout << std::flush;
  const cuda::device_info& d = *rows_at.device;
  if (model_rows.empty()) model_rows.push_back(rows_at);  // one model (or a replay)
  search_settings settings;
  settings.timing = opt.timing;
  settings.budget_evaluations = opt.budget_evaluations;
  settings.budget_seconds = opt.budget_seconds;
  settings.compile_jobs = opt.compile_jobs;
  settings.fresh = opt.fresh;

  const run_context ctx = context_of(opt, req, argc, argv);
  const nlohmann::json provenance = {{"device", d.name},
                                     {"uuid", d.uuid},
                                     {"driver", d.driver_version},
                                     {"nvrtc", ctx.nvrtc_version},
                                     {"kernlab_commit", ctx.kernlab_commit},
                                     {"date", ctx.date}};
  table_options table;
  table.markdown = opt.markdown;
  table.families = &families;

  // --jsonl: every row (points and the library's) as a JSON line as it finishes; Ctrl-C stops
  // the search after the batch in flight and reports what was measured.
  results_writer lines({"", "", opt.jsonl_path}, [&] { return ctx; });
  sweep_result line_context;
  line_context.device = d;
  line_context.arch = d.arch();
  if (session) line_context.devices = session->devices();
  auto on_row = [&](const result_record& r) {
    if (!opt.jsonl_path.empty()) lines.row(r, line_context);
  };
  install_interrupt_handler();

  std::vector<tune::tune_outcome> tunes;
  const double start_up_s = seconds_since(started);
  double searching_s = 0, baselines_s = 0;
  row_session::time_split search_split;  // the session's times during the searches
  for (const auto& s : spaces) {
    const family& fam = *families.find(s.family);
    // The family's library (CUB, cuBLAS plugins), at every configuration the file is tuned at.
    std::vector<const registry_entry*> baselines;
    for (const auto& e : reg->entries())
      if (e.descriptor.family == s.family && e.descriptor.is_baseline && e.error.empty())
        baselines.push_back(&e);
    for (const problem_config& config : configs_for(fam, req)) {
      tune::tune_outcome t;
      t.space = &s;
      t.config = config;
      t.axis_names = fam.shape_variables();
      t.strategy = opt.strategy;
      t.goal = goal;
      t.seed = opt.seed;
      t.budget_seconds = opt.budget_seconds;
      t.replayed_from = opt.replay_path;
      // Without a budget in evaluations the space's size bounds the search (a time budget may end
      // it sooner); without any budget, 100 evaluations (exhaustive: all of them).
      const bool whole = opt.budget_seconds > 0 || opt.strategy == "exhaustive";
      t.budget = opt.budget_evaluations ? opt.budget_evaluations
                 : whole                ? s.candidates.size()
                                        : std::min<std::size_t>(100, s.candidates.size());
      if (opt.budget_evaluations == 0 && !whole && s.candidates.size() > 100)
        std::cout << "(no --budget: " << t.budget << " of the " << s.candidates.size()
                  << " points)\n";
      tune::strategy_options so;
      so.seed = opt.seed;
      so.budget = t.budget;
      // One search per GPU model (one in all but a tune over several models), side by side,
      // each with the same strategy and seed.
      std::vector<tune::tune_outcome> outcomes(model_rows.size(), t);
      std::vector<std::unique_ptr<tune::strategy>> strategies;
      std::vector<std::unique_ptr<tune_search>> searches;
      std::vector<tune_search*> going;
      for (std::size_t m = 0; m < model_rows.size(); ++m) {
        if (model_rows.size() > 1) outcomes[m].model = models[m];
        strategies.push_back(tune::make_strategy(opt.strategy, s.space, so));
        searches.push_back(std::make_unique<tune_search>(outcomes[m], *strategies[m], settings,
                                                         model_rows[m], store.get(), provenance,
                                                         on_row, outcomes[m].model));
        going.push_back(searches.back().get());
      }
      const auto search_started = clock_type::now();
      const row_session::time_split before = session ? session->times() : search_split;
      search_side_by_side(going);
      searching_s += seconds_since(search_started);
      if (session) {
        search_split.running_rows_s += session->times().running_rows_s - before.running_rows_s;
        search_split.waiting_for_compiles_s +=
            session->times().waiting_for_compiles_s - before.waiting_for_compiles_s;
      }
      // The library's rows on every GPU of each model, all queued before any is read back.
      const auto baselines_started = clock_type::now();
      if (!interrupt_requested()) {
        std::vector<std::size_t> ids;
        for (const row_source& rows_of : model_rows) {
          std::vector<row_request> rows;
          for (const registry_entry* b : baselines)
            for (unsigned block : blocks_for(b->descriptor, req))
              rows.push_back({b, block, config, opt.timing, rows_of.gpus > 1});
          ids.push_back(rows_of.submit(rows));
        }
        for (std::size_t m = 0; m < model_rows.size(); ++m)
          model_rows[m].collect(ids[m], [&](std::size_t, const result_record& r) {
            on_row(r);
            outcomes[m].baselines.push_back(r);
          });
      }
      baselines_s += seconds_since(baselines_started);
      for (std::size_t m = 0; m < model_rows.size(); ++m) {
        const cuda::device_info& model = *model_rows[m].device;
        if (model_rows.size() > 1) std::cout << "\n-- " << model.name << "\n";
        print_tune_table(std::cout, outcomes[m], model, table);
        print_tune_best(std::cout, outcomes[m], model);
        tunes.push_back(std::move(outcomes[m]));
      }
      std::cout << std::flush;
      if (interrupt_requested()) break;
    }
    if (interrupt_requested()) break;
  }
  if (session) {
    for (const auto& w : session->take_warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    const auto& c = session->compile_stats();
    std::cout << "\ncompile: " << session->compiled_files() << " points compiled or loaded, "
              << c.hits << " cache hits, " << c.misses << " misses, " << c.failed << " failed\n";
    // Where the time went, for a tune that is slower than expected: start-up (registry, device,
    // worker, launch floor), the search (rows running, or waiting for their compiles), and the
    // library's rows.
    const auto& times = search_split;
    std::cout << std::fixed << std::setprecision(1) << "time: " << start_up_s << " s to start, "
              << searching_s << " s searching (rows ran " << times.running_rows_s << " s, waited "
              << times.waiting_for_compiles_s << " s for their compiles), " << baselines_s
              << " s for the library's rows\n"
              << std::defaultfloat;
    if (const auto& gpus = session->devices(); gpus.size() > 1) {
      const auto rows = session->rows_per_device();
      const auto lost = session->lost_devices();
      std::cout << "rows per GPU:";
      for (std::size_t i = 0; i < gpus.size(); ++i)
        std::cout << (i ? ", " : " ") << "GPU " << gpus[i].ordinal << " " << rows[i];
      std::cout << "\n";
      for (std::size_t i = 0; i < gpus.size(); ++i)
        if (!lost[i].empty())
          std::cerr << "kernlab: warning: GPU " << gpus[i].ordinal << " left the tune: " << lost[i]
                    << "; the other GPUs took its points\n";
    }
    // One worker per GPU to begin with; any more were restarts.
    if (const int gpus = static_cast<int>(session->devices().size());
        session->workers_started() > gpus)
      std::cout << "(" << session->workers_started() - gpus
                << " worker restart(s): see the CRASHED and TIMEOUT rows)\n";
  }

  // Outputs: the records (full-fidelity points and baselines) like a sweep's, with the tuning
  // table beside them; the tuning table alone; the header.
  const nlohmann::json tuning = tuning_table_json(tunes, d, ctx);
  if (!opt.json_path.empty() || !opt.csv_path.empty()) {
    sweep_result sweep;
    sweep.device = d;
    sweep.arch = d.arch();
    if (session) {
      sweep.devices = session->devices();
      sweep.launch_floor = session->launch_floor();
      sweep.compile_stats = session->compile_stats();
    }
    for (const auto& t : tunes) {
      for (const auto& e : t.evaluations)
        if (e.level == tune::fidelity::full) sweep.results.push_back(e.record);
      for (const auto& b : t.baselines) sweep.results.push_back(b);
    }
    nlohmann::json results = results_to_json(sweep, ctx);
    results["tuning"] = tuning;
    if (!opt.json_path.empty())
      write_file(opt.json_path, [&](std::ostream& os) { os << json_text(results, 1) << "\n"; });
    if (!opt.csv_path.empty())
      write_file(opt.csv_path, [&](std::ostream& os) { write_csv(results, os); });
  }
  if (!opt.export_json.empty())
    write_file(opt.export_json, [&](std::ostream& os) { os << json_text(tuning, 1) << "\n"; });
  if (!opt.export_header.empty())
    write_file(opt.export_header, [&](std::ostream& os) { os << tuning_header(tunes, d, ctx); });
  if (!opt.t4_path.empty())
    write_file(opt.t4_path,
               [&](std::ostream& os) { os << json_text(t4_results_json(tunes), 1) << "\n"; });
  if (!opt.jsonl_path.empty()) {
    for (const auto& w : lines.warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    lines.finish(sweep_result{});
  }
  if (interrupt_requested()) {
    std::cout << "interrupted (" << (interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
              << "): the tables, the store and the files above hold what was measured; rerun "
                 "the same command to measure the rest (the store answers the points done)\n";
    return 128 + interrupt_signal();
  }

  int code = 0;
  for (const auto& t : tunes) {
    if (!t.best()) code = 1;
    for (const auto& e : t.evaluations)
      if (e.record.status == outcome::wrong_result || e.record.status == outcome::crashed ||
          e.record.status == outcome::timeout)
        code = 1;
  }
  return code;
}

}  // namespace kl::app
