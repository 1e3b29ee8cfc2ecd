#include "app/tune.hpp"
#include "app/check_dispatch.hpp"
#include "app/tune_replay.hpp"

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
#include "report/text_table.hpp"
#include "report/tune_report.hpp"
#include "runner/row_session.hpp"
#include "runner/tune_search.hpp"
#include "spec/names.hpp"
#include "tune/outcome.hpp"
#include "tune/selector.hpp"
#include "tune/space.hpp"
#include "tune/store.hpp"
#include "tune/strategy.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace kl::app {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// One tune, in phases: resolve() the request and the kernel files it tunes, make_spaces(),
// open_rows() (a recorded tune, or the GPUs and the tuning store), check_objective(),
// start_search(), search(), then report_session(), export_files() and exit_code(). The members
// are what the phases share; they are declared in the order the phases make them, so they go in
// the reverse order.
class tune_run {
 public:
  tune_run(const cli_options& opt, int argc, char** argv)
      : started_(clock_type::now()), opt_(opt), argc_(argc), argv_(argv) {}
  // The rows' sources call back into the run: it stays where it was made.
  tune_run(const tune_run&) = delete;
  tune_run& operator=(const tune_run&) = delete;

  // 1. The request: the families, the registry, and the kernel files the variants select.
  void resolve() {
    check_options();
    std::vector<std::string> family_warnings;
    load_families(families_, opt_.kernels_dirs, include_dirs(opt_), &family_warnings);
    for (const auto& w : family_warnings) std::cerr << "kernlab: warning: " << w << "\n";
    reg_ = load_registry(opt_, families_);
    for (const auto& w : reg_->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    cache_ = open_cache(opt_);
    req_ = make_request(opt_, *reg_, families_, cache_);
    select_sources();
  }

  // 2. The tuning spaces of the files, bounded by the device's threads per block where there is
  // a device, each announced with its size and the points left out.
  void make_spaces() {
    try {
      cuda::driver::get();
      device_ = cuda::query_device(req_.devices.front());
    } catch (const cuda::no_device_error& e) {
      no_device_ = e.why();
    }
    try {
      spaces_ =
          tune::make_spaces(sources_, req_.blocks, device_ ? device_->max_threads_per_block : 0);
    } catch (const std::invalid_argument& e) {
      throw usage_error(std::string("tune: ") + e.what());
    }
    if (compiles_only())
      std::cout << "kernlab " << KERNLAB_VERSION << " tune "
                << (opt_.resources ? "--resources" : "--compile-only")
                << ": every point compiled, none run, NVRTC " << nvrtc::version() << "\n";
    else
      std::cout << "kernlab " << KERNLAB_VERSION << " tune: strategy " << opt_.strategy << ", seed "
                << opt_.seed
                << (opt_.race_margin > 0 && opt_.objective == "time"
                        ? ", racing (--race " + fmt("%g", opt_.race_margin * 100) + "%)"
                        : "")
                << ", NVRTC " << nvrtc::version() << "\n";
    for (const auto& s : spaces_) print_tuning_space(std::cout, s);
  }

  // --compile-only, --resources: the points compiled instead of searched (tune_compile.cpp).
  bool compiles_only() const { return opt_.compile_only || opt_.resources; }
  int compile_points() const {
    return compile_tune_points(opt_, families_, req_, sources_, argc_, argv_);
  }

  // 3. Where the rows run: --replay answers every row from a recorded tune, with no GPU;
  // otherwise the rows run here, on one source per GPU model.
  void open_rows() {
    if (!opt_.replay_path.empty())
      open_replay();
    else
      open_session();
  }

  // 4. An energy tune needs energy figures for its points: where none can be had, it stops
  // before searching, rather than rank every point as a failure.
  void check_objective() {
    goal_ = opt_.objective == "energy" ? tune::objective::energy : tune::objective::time;
    if (goal_ == tune::objective::energy && session_ && !session_->energy_status().empty())
      throw usage_error("--objective energy: " + session_->energy_status());
    if (goal_ == tune::objective::energy && replay_ && !replay_->has_energy())
      throw usage_error("--objective energy: " + opt_.replay_path +
                        " has no energy figures (record it with --energy or --objective energy)");
    if (opt_.timing.energy.enabled && session_)
      std::cout << (session_->energy_status().empty()
                        ? "energy: every point is measured for energy too (NVML)"
                        : "--energy: " + session_->energy_status() +
                              "; the points have no energy figures")
                << (goal_ == tune::objective::energy ? "; the search minimises joules per operation"
                                                     : "")
                << "\n";
    std::cout << std::flush;
  }

  // 5. What every search shares: its settings, the provenance the store keeps with each point,
  // the tables' options, and --jsonl.
  void start_search() {
    const cuda::device_info& d = device();
    if (model_rows_.empty()) model_rows_.push_back(rows_at_);  // one model (or a replay)
    settings_.timing = opt_.timing;
    settings_.budget_evaluations = opt_.budget_evaluations;
    settings_.budget_seconds = opt_.budget_seconds;
    settings_.compile_jobs = opt_.compile_jobs;
    settings_.fresh = opt_.fresh;
    settings_.race_margin = opt_.race_margin;

    ctx_ = context_of(opt_, req_, argc_, argv_);
    provenance_ = {{"device", d.name},
                   {"uuid", d.uuid},
                   {"driver", d.driver_version},
                   {"nvrtc", ctx_.nvrtc_version},
                   {"kernlab_commit", ctx_.kernlab_commit},
                   {"date", ctx_.date}};
    table_.markdown = opt_.markdown;
    table_.families = &families_;

    // --jsonl: every row (points and the library's) as a JSON line as it finishes; Ctrl-C stops
    // the search after the batch in flight and reports what was measured.
    lines_ = std::make_unique<results_writer>(results_paths{"", "", opt_.jsonl_path},
                                              [this] { return ctx_; });
    line_context_.device = d;
    line_context_.arch = d.arch();
    if (session_) line_context_.devices = session_->devices();
    install_interrupt_handler();
  }

  // 6. Every file's space searched at every configuration its family is tuned at, beside the
  // family's library; until Ctrl-C. kernlab check-dispatch: each search starts from the
  // header's pick at its size.
  void search() {
    if (opt_.command.size() == 2 && opt_.command[0] == "check-dispatch")
      for (const auto& s : spaces_) {
        std::vector<std::vector<std::uint64_t>> sizes;
        for (const problem_config& config : configs_for(*families_.find(s.family), req_))
          sizes.push_back(config.shape());
        picks_.emplace(&s, dispatch_picks(opt_.command[1], s, device().name, sizes));
      }
    start_up_s_ = seconds_since(started_);
    for (const auto& s : spaces_) {
      const family& fam = *families_.find(s.family);
      // The family's library (CUB, cuBLAS plugins), at every configuration the file is tuned at.
      std::vector<const registry_entry*> baselines;
      for (const auto& e : reg_->entries())
        if (e.descriptor.family == s.family && e.descriptor.is_baseline && e.error.empty())
          baselines.push_back(&e);
      // A search that starts from its neighbours tunes a range largest first, then the middle of
      // the widest gap left (tune::range_order); exhaustive ones and check-dispatch's need no
      // neighbours and keep the order given, as the tables and files of all do.
      const std::vector<problem_config> configs = configs_for(fam, req_);
      std::vector<std::size_t> order = tune::range_order(configs);
      if (!picks_.empty() || opt_.strategy == "exhaustive") std::sort(order.begin(), order.end());
      if (!std::is_sorted(order.begin(), order.end()))
        std::cout << "(range: " << configs.size() << " configurations tuned largest first, then "
                  << "each in the widest gap left, starting from the tuned ones beside it)\n";
      const std::size_t first_tune = tunes_.size();
      for (const std::size_t i : order) {
        tune_config(s, fam, baselines, configs[i]);
        if (interrupt_requested()) break;
      }
      tune::sort_as_given(tunes_, first_tune, configs);
      if (interrupt_requested()) break;
    }
  }

  // 7. What the GPUs did: the compiles, where the time went, the rows per GPU, the restarts.
  void report_session() {
    if (!session_) return;
    for (const auto& w : session_->take_warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    const auto& c = session_->compile_stats();
    std::cout << "\ncompile: " << session_->compiled_files() << " points compiled or loaded, "
              << c.hits << " cache hits, " << c.misses << " misses, " << c.failed << " failed\n";
    // Where the time went, for a tune that is slower than expected: start-up (registry, device,
    // worker, launch floor), the search (rows running, or waiting for their compiles), and the
    // library's rows.
    const auto& times = search_split_;
    std::cout << std::fixed << std::setprecision(1) << "time: " << start_up_s_ << " s to start, "
              << searching_s_ << " s searching (rows ran " << times.running_rows_s << " s, waited "
              << times.waiting_for_compiles_s << " s for their compiles), " << baselines_s_
              << " s for the library's rows\n"
              << std::defaultfloat;
    if (const auto& gpus = session_->devices(); gpus.size() > 1) {
      const auto rows = session_->rows_per_device();
      const auto lost = session_->lost_devices();
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
    if (const int gpus = static_cast<int>(session_->devices().size());
        session_->workers_started() > gpus)
      std::cout << "(" << session_->workers_started() - gpus
                << " worker restart(s): see the CRASHED and TIMEOUT rows)\n";
  }

  // After a range tune: which rule the size selector learnt, and the evidence for it.
  void report_selectors() const {
    for (const auto& [space, picks] : picks_)
      print_dispatch_check(std::cout, picks, tunes_, picked_);
    if (picks_.empty()) print_selectors(std::cout, tunes_);
  }

  // 8. Outputs: the records (full-fidelity points and baselines) like a sweep's, with the tuning
  // table beside them; the tuning table alone; the header.
  void export_files() {
    const cuda::device_info& d = device();
    const nlohmann::json tuning = tuning_table_json(tunes_, d, ctx_);
    if (!opt_.json_path.empty() || !opt_.csv_path.empty()) {
      sweep_result sweep;
      sweep.device = d;
      sweep.arch = d.arch();
      if (session_) {
        sweep.devices = session_->devices();
        sweep.launch_floor = session_->launch_floor();
        sweep.compile_stats = session_->compile_stats();
      }
      for (const auto& t : tunes_) {
        for (const auto& e : t.evaluations)
          if (e.level == tune::fidelity::full) sweep.results.push_back(e.record);
        for (const auto& b : t.baselines) sweep.results.push_back(b);
      }
      nlohmann::json results = results_to_json(sweep, ctx_);
      results["tuning"] = tuning;
      if (!opt_.json_path.empty())
        write_file(opt_.json_path, [&](std::ostream& os) { os << json_text(results, 1) << "\n"; });
      if (!opt_.csv_path.empty())
        write_file(opt_.csv_path, [&](std::ostream& os) { write_csv(results, os); });
    }
    if (!opt_.export_json.empty())
      write_file(opt_.export_json, [&](std::ostream& os) { os << json_text(tuning, 1) << "\n"; });
    if (!opt_.export_header.empty())
      write_file(opt_.export_header,
                 [&](std::ostream& os) { os << tuning_header(tunes_, d, ctx_); });
    if (!opt_.t4_path.empty())
      write_file(opt_.t4_path,
                 [&](std::ostream& os) { os << json_text(t4_results_json(tunes_), 1) << "\n"; });
    if (!opt_.jsonl_path.empty()) {
      for (const auto& w : lines_->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
      lines_->finish(sweep_result{});
    }
  }

  // 9. The exit code: after Ctrl-C, its signal's; otherwise 1 where a tune found no point that
  // passed or a point gave a wrong result or crashed.
  int exit_code() const {
    if (interrupt_requested()) {
      std::cout << "interrupted (" << (interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C")
                << "): the tables, the store and the files above hold what was measured; rerun "
                   "the same command to measure the rest (the store answers the points done)\n";
      return 128 + interrupt_signal();
    }
    int code = 0;
    for (const auto& t : tunes_) {
      if (!t.best()) code = 1;
      for (const auto& e : t.evaluations)
        if (e.record.status == outcome::wrong_result || e.record.status == outcome::crashed ||
            e.record.status == outcome::timeout)
          code = 1;
    }
    return code;
  }

 private:
  // The rows' GPU (model): the first GPU of the run, or the replayed tune's.
  const cuda::device_info& device() const { return *rows_at_.device; }

  void check_options() const {
    if (opt_.kernels_dirs.empty())
      throw usage_error("no kernels folder: give --kernels-dir or set kernels-dir in the config");
    if (opt_.variants == std::vector<std::string>{"all"})
      throw usage_error(
          "tune: name the kernel file to tune with --variant FILE (kernlab --list shows them)");
    const auto names = tune::strategy_names();
    if (std::find(names.begin(), names.end(), opt_.strategy) == names.end()) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw usage_error("--strategy: unknown strategy '" + opt_.strategy + "' (" + known + ")");
    }
  }

  // What is tuned: the selected kernel files. A plugin has nothing to tune; the family's library
  // runs beside the tunes as their baseline anyway.
  void select_sources() {
    for (const registry_entry* e : req_.variants) {
      if (e->descriptor.origin != origin_kind::source) {
        if (!e->descriptor.is_baseline)
          throw usage_error("tune: " + e->descriptor.qualified_name() +
                            " is a plugin; only kernel files have something to tune");
        continue;
      }
      if (!e->error.empty()) throw usage_error("tune: " + e->error);
      if (!families_.find(e->descriptor.family))
        throw usage_error(
            "tune: " + e->descriptor.qualified_name() +
            ": its family's description cannot be used: " + families_.broken(e->descriptor.family));
      sources_.push_back(e);
    }
    if (sources_.empty()) throw usage_error("tune: --variant selects no kernel file");
    // Without --block, a tune takes every block its files allow (a tile file's 64-thread points
    // too), not a sweep's 128 to 1024.
    if (!opt_.blocks_explicit) {
      std::vector<unsigned> blocks;
      for (const registry_entry* e : sources_)
        for (unsigned b : e->descriptor.blocks)
          if (std::find(blocks.begin(), blocks.end(), b) == blocks.end()) blocks.push_back(b);
      std::sort(blocks.begin(), blocks.end());
      req_.blocks = blocks;
    }
  }

  void open_replay() {
    replay_ = std::make_unique<replay_file>(opt_.replay_path);
    rows_at_.device = &replay_->device;
    rows_at_.run = [this](const std::vector<row_request>& rows, const auto& done) {
      for (std::size_t k = 0; k < rows.size(); ++k) done(k, replay_->row(rows[k]));
    };
    rows_at_.submit = [this](const std::vector<row_request>& rows) {
      replay_batches_.push_back(rows);
      return replay_batches_.size() - 1;
    };
    rows_at_.collect = [this](std::size_t id, const auto& done) {
      rows_at_.run(std::exchange(replay_batches_.at(id), {}), done);
    };
    rows_at_.discard = [this](std::size_t id) { replay_batches_.at(id).clear(); };
    std::cout << "replaying " << opt_.replay_path << " (" << replay_->size()
              << " records measured on " << replay_->device.name << "): nothing runs here\n";
  }

  void open_session() {
    if (!device_) throw cuda::no_device_error(no_device_);
    open_store();
    session_ = std::make_unique<row_session>(families_, req_);
    rows_at_ = session_rows(*session_);
    const auto& gpus = session_->devices();
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const cuda::device_info& d = gpus[i];
      std::cout << "device " << d.ordinal << ": " << d.name << " (" << d.arch() << ", "
                << d.sm_count << " SMs, driver " << d.driver_version / 1000 << "."
                << d.driver_version % 1000 / 10 << ")";
      if (i + 1 == gpus.size() && store_) std::cout << "; tuning store " << store_->path().string();
      std::cout << "\n";
    }
    split_models();
    if (gpus.size() > 1)
      std::cout << gpus.size()
                << " GPUs: each batch's points are spread over them, each measured on one (the "
                   "gpu column); the library's rows run on each\n";
    if (opt_.resume && store_)
      std::cout << "resuming: " << store_->size()
                << " stored results; the points among them are not run again\n";
  }

  void open_store() {
    std::string store_path = opt_.store_path;
    if (store_path.empty() && !cache_dir(opt_).empty())
      store_path = (cache_dir(opt_) / "tuning.jsonl").string();
    if (store_path.empty()) {
      std::cerr << "kernlab: warning: neither XDG_CACHE_HOME nor HOME is set, so this tune keeps "
                   "no store and cannot be resumed; give --store FILE to have one\n";
    } else {
      store_ = std::make_unique<tune::tuning_store>(store_path);
      for (const auto& w : store_->warnings()) std::cerr << "kernlab: warning: " << w << "\n";
    }
  }

  // A search ranks its points by their medians, and medians of different models are not
  // comparable: over GPUs of several models, each model is searched apart on its own GPUs (side
  // by side), with its own table and best point.
  void split_models() {
    const auto& gpus = session_->devices();
    for (const cuda::device_info& g : gpus)
      if (std::find(models_.begin(), models_.end(), g.name) == models_.end())
        models_.push_back(g.name);
    if (models_.size() < 2) return;
    for (const auto& [given, option] :
         {std::pair{opt_.export_header, "--export-header"}, std::pair{opt_.t4_path, "--t4"}})
      if (!given.empty())
        throw usage_error(std::string(option) + ": the GPUs are of " +
                          std::to_string(models_.size()) + " models (" + gpus.front().name +
                          ", ...), and it holds one best point per problem: give GPUs of one "
                          "model");
    std::cout << models_.size() << " GPU models: each is tuned apart on its own GPUs, with "
              << "its own table and best point:";
    for (const auto& m : models_) {
      std::cout << " " << m << " (GPU";
      const char* sep = " ";
      for (const auto& g : gpus)
        if (g.name == m) std::cout << std::exchange(sep, ", ") << g.ordinal;
      std::cout << ")" << (&m == &models_.back() ? "\n" : ";");
    }
    for (const auto& m : models_) model_rows_.push_back(session_rows(*session_, m));
  }

  // A tune's outcome before its search: what is searched, how, and its budget.
  tune::tune_outcome outcome_for(const tune::tuning_space& s, const family& fam,
                                 const problem_config& config) {
    tune::tune_outcome t;
    t.space = &s;
    t.config = config;
    t.axis_names = fam.shape_variables();
    t.strategy = opt_.strategy;
    t.goal = goal_;
    t.seed = opt_.seed;
    t.budget_seconds = opt_.budget_seconds;
    t.replayed_from = opt_.replay_path;
    t.sm_count = device_ ? device_->sm_count : replay_ ? replay_->device.sm_count : 0;
    auto& g = grids_[{&s, config.dtype}];  // the selector's waves rule's, for every size
    t.grids = g ? g : g = tune::point_grids(s, fam.spec().grid_dims, config.dtype, t.sm_count);
    // Without a budget in evaluations the space's size bounds the search (a time budget may end
    // it sooner); without any budget, 100 evaluations (exhaustive: all of them).
    const bool whole = opt_.budget_seconds > 0 || opt_.strategy == "exhaustive";
    t.budget = opt_.budget_evaluations ? opt_.budget_evaluations
               : whole                 ? s.candidates.size()
                                       : std::min<std::size_t>(100, s.candidates.size());
    if (opt_.budget_evaluations == 0 && !whole && s.candidates.size() > 100)
      std::cout << "(no --budget: " << t.budget << " of the " << s.candidates.size()
                << " points)\n";
    return t;
  }

  // One space at one configuration: searched on each GPU model, then the library's rows, then
  // each model's table and best point.
  void tune_config(const tune::tuning_space& s, const family& fam,
                   const std::vector<const registry_entry*>& baselines,
                   const problem_config& config) {
    const tune::tune_outcome t = outcome_for(s, fam, config);
    tune::strategy_options so{opt_.seed, t.budget};
    // One search per GPU model (one in all but a tune over several models), side by side, each
    // with the same strategy and seed.
    std::vector<tune::tune_outcome> outcomes(model_rows_.size(), t);
    std::vector<std::unique_ptr<tune::strategy>> strategies;
    std::vector<std::unique_ptr<tune_search>> searches;
    std::vector<tune_search*> going;
    const tune_search::row_callback on_row = [this](const result_record& r) { row_done(r); };
    for (std::size_t m = 0; m < model_rows_.size(); ++m) {
      if (model_rows_.size() > 1) outcomes[m].model = models_[m];
      // A size after others of the same space starts from their fastest points and knows
      // what the nearest measured (exhaustive measures every point anyway).
      if (!picks_.empty()) {
        outcomes[m].start_points = {picks_.at(&s).point_at(config.shape())};
      } else if (opt_.strategy != "exhaustive") {
        std::tie(outcomes[m].start_points, outcomes[m].started_from) =
            tune::warm_start(tunes_, outcomes[m]);
        so.prior = tune::prior_of(tunes_, outcomes[m]);
      }
      so.start_points = outcomes[m].start_points;
      strategies.push_back(tune::make_strategy(opt_.strategy, s.space, so));
      searches.push_back(std::make_unique<tune_search>(outcomes[m], *strategies[m], settings_,
                                                       model_rows_[m], store_.get(), provenance_,
                                                       on_row, outcomes[m].model));
      going.push_back(searches.back().get());
    }
    const auto search_started = clock_type::now();
    const row_session::time_split before = session_ ? session_->times() : search_split_;
    search_side_by_side(going);
    searching_s_ += seconds_since(search_started);
    if (session_) {
      search_split_.running_rows_s += session_->times().running_rows_s - before.running_rows_s;
      search_split_.waiting_for_compiles_s +=
          session_->times().waiting_for_compiles_s - before.waiting_for_compiles_s;
    }
    const auto baselines_started = clock_type::now();
    if (!interrupt_requested()) run_baselines(baselines, config, outcomes);
    baselines_s_ += seconds_since(baselines_started);
    for (std::size_t m = 0; m < model_rows_.size(); ++m) {
      const cuda::device_info& model = *model_rows_[m].device;
      if (model_rows_.size() > 1) std::cout << "\n-- " << model.name << "\n";
      print_tune_table(std::cout, outcomes[m], model, table_);
      print_tune_best(std::cout, outcomes[m], model);
      if (!picks_.empty()) picked_.push_back(outcomes[m].start_points.front());
      tunes_.push_back(std::move(outcomes[m]));
    }
    std::cout << std::flush;
  }

  // The library's rows on every GPU of each model, all queued before any is read back.
  void run_baselines(const std::vector<const registry_entry*>& baselines,
                     const problem_config& config, std::vector<tune::tune_outcome>& outcomes) {
    std::vector<std::size_t> ids;
    for (const row_source& rows_of : model_rows_) {
      std::vector<row_request> rows;
      for (const registry_entry* b : baselines)
        for (unsigned block : blocks_for(b->descriptor, req_))
          rows.push_back({b, block, config, opt_.timing, rows_of.gpus > 1});
      ids.push_back(rows_of.submit(rows));
    }
    for (std::size_t m = 0; m < model_rows_.size(); ++m)
      model_rows_[m].collect(ids[m], [&](std::size_t, const result_record& r) {
        row_done(r);
        outcomes[m].baselines.push_back(r);
      });
  }

  // Every row as it finishes, points and the library's: a line of --jsonl.
  void row_done(const result_record& r) {
    if (!opt_.jsonl_path.empty()) lines_->row(r, line_context_);
  }

  const clock_type::time_point started_;
  const cli_options& opt_;
  const int argc_;
  char** const argv_;
  family_registry families_;
  std::unique_ptr<registry> reg_;
  std::shared_ptr<const nvrtc::compile_cache> cache_;
  run_request req_;
  std::vector<const registry_entry*> sources_;
  std::optional<cuda::device_info> device_;
  using grids = std::shared_ptr<const std::vector<tune::point_grid>>;
  std::map<std::pair<const tune::tuning_space*, std::string>, grids> grids_;  // by space, dtype
  std::string no_device_;
  std::vector<tune::tuning_space> spaces_;
  std::unique_ptr<replay_file> replay_;
  std::vector<std::vector<row_request>> replay_batches_;  // --replay: submitted, not collected
  std::unique_ptr<row_session> session_;
  std::unique_ptr<tune::tuning_store> store_;
  row_source rows_at_;                  // every GPU of the run (the library's rows)
  std::vector<std::string> models_;     // the GPU models, when the run has several
  std::vector<row_source> model_rows_;  // one per model: its GPUs only
  tune::objective goal_ = tune::objective::time;
  // kernlab check-dispatch: the header's picks for each space (spaces_ does not move).
  std::map<const tune::tuning_space*, dispatch_picks> picks_;
  std::vector<std::size_t> picked_;  // ... and each tune's picked point, as tunes_
  search_settings settings_;
  run_context ctx_;
  nlohmann::json provenance_;
  table_options table_;
  std::unique_ptr<results_writer> lines_;
  sweep_result line_context_;
  std::vector<tune::tune_outcome> tunes_;
  double start_up_s_ = 0, searching_s_ = 0, baselines_s_ = 0;
  row_session::time_split search_split_;  // the session's times during the searches
};

}  // namespace

int tune_command(const cli_options& opt, int argc, char** argv) {
  tune_run tune(opt, argc, argv);
  tune.resolve();
  tune.make_spaces();
  if (tune.compiles_only()) return tune.compile_points();
  tune.open_rows();
  tune.check_objective();
  tune.start_search();
  tune.search();
  tune.report_selectors();
  tune.report_session();
  tune.export_files();
  return tune.exit_code();
}

}  // namespace kl::app
