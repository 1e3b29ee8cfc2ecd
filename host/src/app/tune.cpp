#include "app/tune.hpp"

#include "app/environment.hpp"
#include "app/plan.hpp"
#include "core/errors.hpp"
#include "core/interrupt.hpp"
#include "cuda/driver.hpp"
#include "nvrtc/compiler.hpp"
#include "parallel/thread_pool.hpp"
#include "report/exports.hpp"
#include "report/results_json.hpp"
#include "report/results_writer.hpp"
#include "report/table.hpp"
#include "report/tune_report.hpp"
#include "runner/row_session.hpp"
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

// A point's key in the store: its configuration, seed and source (the journal's key), the device,
// the toolkit, the fidelity, and whether it was measured for energy (so that a row without energy
// figures never answers a tune that needs them). Any of them changed, the point is measured again.
std::string store_key(const registry_entry& e, unsigned block, const problem_config& c,
                      const cuda::device_info& d, tune::fidelity level, bool energy) {
  return journal_key(e, block, c) + "|device " + d.name + "|nvrtc " + nvrtc::version() +
         (level == tune::fidelity::brief ? "|brief" : "|full") + (energy ? "|energy" : "");
}

// Successive halving's first rungs: a few samples, enough to rank, not to quote.
timing_options brief_timing(timing_options t) {
  t.warmup_runs = std::min(t.warmup_runs, 1);
  t.min_samples = 5;
  t.max_samples = 5;
  t.min_time_s = 0;
  t.timeout_s = std::min(t.timeout_s, 1.0);
  return t;
}

// What a tune shows while it runs, on stderr: on a terminal one line rewritten after each row,
// otherwise one line per batch.
class progress_display {
 public:
  explicit progress_display(std::string what)
      : what_(std::move(what)), tty_(isatty(STDERR_FILENO)) {}
  void show(const tune::tune_outcome& t, std::size_t budget, std::size_t in_batch,
            const compile_summary* compiles, bool end_of_batch) {
    if (!tty_ && !end_of_batch) return;
    std::ostringstream os;
    os << "[tune " << what_ << " " << t.evaluations.size() + in_batch << "/" << budget << "]";
    if (const tune::evaluation* b = t.best()) {
      os << " best " << std::fixed << std::setprecision(2);
      if (t.goal == tune::objective::energy)
        os << b->record.energy->joules_per_op * 1e6 << " uJ/op";
      else
        os << b->record.timing->median_ms * 1e3 << " us";
      os << " (" << tune::describe(t.space->candidates[b->point]) << ")";
    }
    std::size_t failed = 0, stored = 0;
    for (const auto& e : t.evaluations) {
      if (!e.record.timed() && e.record.status != outcome::skipped) ++failed;
      if (e.from_store) ++stored;
    }
    os << " | " << failed << " failed";
    if (compiles)
      os << " | compiled " << compiles->files - compiles->hits << ", " << compiles->hits
         << " cache hits";
    os << " | " << stored << " from the store | " << std::fixed << std::setprecision(0) << t.seconds
       << " s";
    if (tty_)
      std::cerr << "\r\033[K" << os.str() << std::flush;
    else
      std::cerr << os.str() << "\n";
  }
  void clear() {
    if (tty_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  std::string what_;
  bool tty_;
};

// Where a tune's rows run: the GPU (a row_session), or a recorded tune (--replay).
struct row_source {
  const cuda::device_info* device = nullptr;
  std::size_t gpus = 1;                       ///< GPUs the rows are spread over (--devices)
  const compile_summary* compiles = nullptr;  ///< null when nothing compiles
  /// Runs the rows in order, calling back with each record as it is ready.
  std::function<void(const std::vector<row_request>&,
                     const std::function<void(std::size_t, const result_record&)>&)>
      run;
  /// run() in two halves, so that a batch proposed ahead is queued before the last one is read
  /// back: with several GPUs, a GPU done with its share of a batch goes on with the next one
  /// instead of waiting at the batch's end. Queues the rows (and their files' compiles).
  std::function<std::size_t(const std::vector<row_request>&)> submit;
  /// Reads a submitted batch back, in order, calling back with each record.
  std::function<void(std::size_t, const std::function<void(std::size_t, const result_record&)>&)>
      collect;
  /// A submitted batch the search will not use (it stopped first).
  std::function<void(std::size_t)> discard;
};

// A batch's rows: those the store does not answer, each with its store key.
struct batch_rows {
  std::vector<tune::evaluation> evaluated;  // one per proposal; store hits filled in
  std::vector<std::string> keys;            // one per proposal
  std::vector<row_request> rows;            // the proposals to run
  std::vector<std::size_t> row_of;          // rows[k] is evaluated[row_of[k]]
};

// The points of `space` a strategy proposes, until the budget, the time or the strategy ends.
// Each batch after the first is proposed ahead when the strategy can choose it without the last
// batch's times (propose_ahead), so that its files compile while the last batch is timed.
void search(tune::tune_outcome& t, tune::strategy& strategy, std::size_t budget,
            const cli_options& opt, const row_source& rows_at, tune::tuning_store* store,
            const nlohmann::json& provenance,
            const std::function<void(const result_record&)>& on_row) {
  const tune::tuning_space& s = *t.space;
  const cuda::device_info& d = *rows_at.device;
  const timing_options brief = brief_timing(opt.timing);
  // Enough rows per batch to keep every compile thread busy while the GPU times.
  // With several GPUs (--devices), at least two rows per GPU, so that none waits at a batch's end
  // while another finishes its only row.
  const std::size_t batch_size = std::max<std::size_t>(
      {4, opt.compile_jobs ? opt.compile_jobs : thread_pool::hardware_threads(), 2 * rows_at.gpus});
  progress_display progress(s.name + " " + t.config.describe());
  const auto rows_for = [&](const std::vector<tune::proposal>& batch) {
    batch_rows b;
    b.evaluated.resize(batch.size());
    b.keys.resize(batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const tune::candidate& c = s.candidates.at(batch[i].point);
      b.evaluated[i].point = batch[i].point;
      b.evaluated[i].level = batch[i].level;
      b.keys[i] =
          store_key(*c.entry, c.block, t.config, d, batch[i].level, opt.timing.energy.enabled);
      if (store && !opt.fresh)
        if (const tune::stored_result* hit = store->find(b.keys[i])) {
          b.evaluated[i].record = hit->record;
          b.evaluated[i].from_store = true;
          continue;
        }
      b.rows.push_back({c.entry, c.block, t.config,
                        batch[i].level == tune::fidelity::brief ? brief : opt.timing});
      b.row_of.push_back(i);
    }
    return b;
  };
  std::vector<tune::observation> history;
  // The next batch, proposed ahead and queued already (its files compiling; with several GPUs,
  // its rows ready for the first GPU free).
  std::vector<tune::proposal> ahead;
  batch_rows ahead_rows;
  std::optional<std::size_t> ahead_id;
  const auto t0 = clock_type::now();
  for (;;) {
    t.seconds = seconds_since(t0);
    if (t.evaluations.size() >= budget) {
      t.stopped_by = opt.budget_evaluations ? "the budget" : "the space's size";
      break;
    }
    if (opt.budget_seconds > 0 && t.seconds >= opt.budget_seconds) {
      t.stopped_by = "the time budget";
      break;
    }
    if (interrupt_requested()) {
      t.stopped_by = interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C";
      break;
    }
    std::vector<tune::proposal> batch;
    batch_rows b;
    std::size_t current = 0;  // the batch's id in rows_at
    if (!ahead.empty()) {
      batch = std::exchange(ahead, {});
      b = std::exchange(ahead_rows, {});
      current = *std::exchange(ahead_id, std::nullopt);
    } else {
      batch = strategy.propose(history, std::min(batch_size, budget - t.evaluations.size()));
      if (batch.empty()) {
        t.stopped_by = "the strategy (it proposed nothing more)";
        break;
      }
      b = rows_for(batch);
      current = rows_at.submit(b.rows);
    }
    if (const std::size_t after = t.evaluations.size() + batch.size(); after < budget) {
      ahead = strategy.propose_ahead(history, batch, std::min(batch_size, budget - after));
      if (!ahead.empty()) {
        // Its points are not this batch's, so the store cannot answer them differently by the
        // time they run: their rows are made once, now.
        ahead_rows = rows_for(ahead);
        ahead_id = rows_at.submit(ahead_rows.rows);
      }
    }
    rows_at.collect(current, [&](std::size_t k, const result_record& r) {
      // Stored as each row finishes: an interrupted tune keeps every row it measured, with the
      // GPU that measured it.
      if (store) {
        nlohmann::json where = provenance;
        if (r.gpu) {
          where["uuid"] = r.gpu->uuid;
          where["ordinal"] = r.gpu->ordinal;
        }
        store->add({b.keys[b.row_of[k]], r, where});
      }
      if (on_row) on_row(r);
      t.seconds = seconds_since(t0);
      progress.show(t, budget, k + 1, rows_at.compiles, false);
      b.evaluated[b.row_of[k]].record = r;
    });
    for (auto& e : b.evaluated) {
      // The strategies minimise whatever value they are given: the median, or the energy.
      history.push_back({e.point, e.level, tune::objective_value(e.record, t.goal)});
      t.evaluations.push_back(std::move(e));
    }
    t.seconds = seconds_since(t0);
    progress.show(t, budget, 0, rows_at.compiles, true);
  }
  if (ahead_id) rows_at.discard(*ahead_id);  // stopped by time or Ctrl-C with a batch queued
  progress.clear();
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
  // --replay answers every row from a recorded tune, with no GPU; otherwise the rows run here.
  std::unique_ptr<replay_file> replay;
  std::vector<std::vector<row_request>> replay_batches;  // --replay: submitted, not collected
  std::unique_ptr<row_session> session;
  std::unique_ptr<tune::tuning_store> store;
  row_source rows_at;
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
    rows_at.device = &session->device();
    rows_at.gpus = session->devices().size();
    rows_at.compiles = &session->compile_stats();
    rows_at.run = [&](const std::vector<row_request>& rows, const auto& done) {
      session->run(rows, done);
    };
    rows_at.submit = [&](const std::vector<row_request>& rows) { return session->submit(rows); };
    rows_at.collect = [&](std::size_t id, const auto& done) { session->collect(id, done); };
    rows_at.discard = [&](std::size_t id) { session->discard(id); };
    const auto& gpus = session->devices();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const cuda::device_info& d = gpus[i];
      std::cout << "device " << d.ordinal << ": " << d.name << " (" << d.arch() << ", "
                << d.sm_count << " SMs, driver " << d.driver_version / 1000 << "."
                << d.driver_version % 1000 / 10 << ")";
      if (i + 1 == gpus.size() && store) std::cout << "; tuning store " << store->path().string();
      std::cout << "\n";
    }
    // One model per tune: a search ranks its points by their medians, and medians of different
    // models are not comparable (a sweep prints one table per model instead).
    for (const cuda::device_info& d : gpus)
      if (d.name != gpus.front().name)
        throw usage_error(opt.devices.option + ": GPU " + std::to_string(gpus.front().ordinal) +
                          " is a " + gpus.front().name + " but GPU " + std::to_string(d.ordinal) +
                          " is a " + d.name +
                          "; a tune ranks medians of one GPU model: give the GPUs of one model");
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
      auto strategy = tune::make_strategy(opt.strategy, s.space, so);
      const auto search_started = clock_type::now();
      const row_session::time_split before = session ? session->times() : search_split;
      search(t, *strategy, t.budget, opt, rows_at, store.get(), provenance, on_row);
      searching_s += seconds_since(search_started);
      if (session) {
        search_split.running_rows_s += session->times().running_rows_s - before.running_rows_s;
        search_split.waiting_for_compiles_s +=
            session->times().waiting_for_compiles_s - before.waiting_for_compiles_s;
      }
      const auto baselines_started = clock_type::now();
      std::vector<row_request> rows;
      for (const registry_entry* b : baselines)
        for (unsigned block : blocks_for(b->descriptor, req))
          rows.push_back({b, block, config, opt.timing, rows_at.gpus > 1});
      if (!interrupt_requested())
        rows_at.run(rows, [&](std::size_t, const result_record& r) {
          on_row(r);
          t.baselines.push_back(r);
        });
      baselines_s += seconds_since(baselines_started);
      print_tune_table(std::cout, t, d, table);
      print_tune_best(std::cout, t, d);
      std::cout << std::flush;
      tunes.push_back(std::move(t));
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
      write_file(opt.json_path, [&](std::ostream& os) { os << results.dump(1) << "\n"; });
    if (!opt.csv_path.empty())
      write_file(opt.csv_path, [&](std::ostream& os) { write_csv(results, os); });
  }
  if (!opt.export_json.empty())
    write_file(opt.export_json, [&](std::ostream& os) { os << tuning.dump(1) << "\n"; });
  if (!opt.export_header.empty())
    write_file(opt.export_header, [&](std::ostream& os) { os << tuning_header(tunes, d, ctx); });
  if (!opt.t4_path.empty())
    write_file(opt.t4_path,
               [&](std::ostream& os) { os << t4_results_json(tunes).dump(1) << "\n"; });
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
