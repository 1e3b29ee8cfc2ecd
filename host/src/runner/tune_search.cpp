#include "runner/tune_search.hpp"

#include "core/interrupt.hpp"
#include "nvrtc/compiler.hpp"
#include "parallel/thread_pool.hpp"
#include "runner/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <utility>

namespace kl {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// Successive halving's first rungs: a few samples, enough to rank, not to quote.
timing_options brief_timing(timing_options t) {
  t.warmup_runs = std::min(t.warmup_runs, 1);
  t.min_samples = 5;
  t.max_samples = 5;
  t.min_time_s = 0;
  t.timeout_s = std::min(t.timeout_s, 1.0);
  t.placements = t.max_placements = 1;
  return t;
}

}  // namespace

std::string store_key(const registry_entry& e, unsigned block, const problem_config& c,
                      const cuda::device_info& d, tune::fidelity level, bool energy) {
  return journal_key(e, block, c) + "|device " + d.name + "|nvrtc " + nvrtc::version() +
         (level == tune::fidelity::brief ? "|brief" : "|full") + (energy ? "|energy" : "");
}

row_source session_rows(row_session& session, const std::string& model) {
  row_source out;
  out.device = &session.device();
  out.gpus = 0;
  for (const cuda::device_info& d : session.devices())
    if (model.empty() || d.name == model) {
      if (out.gpus++ == 0) out.device = &d;
    }
  out.compiles = &session.compile_stats();
  const auto tagged = [model](std::vector<row_request> rows) {
    for (auto& r : rows) r.model = model;
    return rows;
  };
  out.run = [&session, tagged](const std::vector<row_request>& rows, const auto& done) {
    session.run(tagged(rows), done);
  };
  out.submit = [&session, tagged](const std::vector<row_request>& rows) {
    return session.submit(tagged(rows));
  };
  out.collect = [&session](std::size_t id, const auto& done) { session.collect(id, done); };
  out.discard = [&session](std::size_t id) { session.discard(id); };
  return out;
}

// What a tune shows while it runs, on stderr: on a terminal one line rewritten after each row,
// otherwise one line per batch.
class tune_search::progress_display {
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

// A batch's rows: those the store does not answer, each with its store key.
struct tune_search::batch_rows {
  std::vector<tune::evaluation> evaluated;  // one per proposal; store hits filled in
  std::vector<std::string> keys;            // one per proposal
  std::vector<row_request> rows;            // the proposals to run
  std::vector<std::size_t> row_of;          // rows[k] is evaluated[row_of[k]]
};

tune_search::tune_search(tune::tune_outcome& t, tune::strategy& strategy,
                         const search_settings& settings, const row_source& rows_at,
                         tune::tuning_store* store, nlohmann::json provenance, row_callback on_row,
                         const std::string& label)
    : t_(t),
      strategy_(strategy),
      settings_(settings),
      brief_(brief_timing(settings.timing)),
      rows_at_(rows_at),
      store_(store),
      provenance_(std::move(provenance)),
      on_row_(std::move(on_row)),
      // Enough rows per batch to keep every compile thread busy while the GPU times. With
      // several GPUs (--devices), at least two rows per GPU, so that none waits at a batch's
      // end while another finishes its only row.
      batch_size_(std::max<std::size_t>(
          {4, settings.compile_jobs ? settings.compile_jobs : thread_pool::hardware_threads(),
           2 * rows_at.gpus})),
      progress_(std::make_unique<progress_display>(t.space->name + " " + t.config.describe() +
                                                   (label.empty() ? "" : " on " + label))),
      t0_(clock_type::now()) {
  if (settings_.race_margin > 0 && t_.goal == tune::objective::time) {
    live_bound_ = std::make_shared<std::atomic<double>>(0.0);
    for (const auto& e : t_.evaluations) offer(e);
  }
}

tune_search::~tune_search() = default;

tune_search::batch_rows tune_search::rows_for(const std::vector<tune::proposal>& batch) {
  const tune::tuning_space& s = *t_.space;
  batch_rows b;
  b.evaluated.resize(batch.size());
  b.keys.resize(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const tune::candidate& c = s.candidates.at(batch[i].point);
    b.evaluated[i].point = batch[i].point;
    b.evaluated[i].level = batch[i].level;
    b.keys[i] = store_key(*c.entry, c.block, t_.config, *rows_at_.device, batch[i].level,
                          settings_.timing.energy.enabled);
    if (store_ && !settings_.fresh) {
      const tune::stored_result* hit = store_->find(b.keys[i]);
      if (!hit && live_bound_) hit = store_->find(b.keys[i] + "|raced");
      if (hit) {
        b.evaluated[i].record = hit->record;
        b.evaluated[i].from_store = true;
        offer(b.evaluated[i]);
        continue;
      }
    }
    const bool full = batch[i].level == tune::fidelity::full;
    timing_options timing = full ? settings_.timing : brief_;
    row_request row{c.entry, c.block, t_.config, timing};
    if (full && live_bound_) {
      row.timing.race_ms = race_bound_ms();
      row.race_live = live_bound_;
    }
    b.rows.push_back(std::move(row));
    b.row_of.push_back(i);
  }
  return b;
}

// Racing: the median a point's interval must lie wholly above to be out, the best so far's
// interval's top plus the margin (the figures of one placement move by up to about 1.4 % from the
// row's over all placements: docs/tuning.md); 0 when there is no race (--race off, the energy
// objective) or no best yet. The best so far is the fastest point timed in full among every row
// come back, those of the batch being read back too: a row reads the bound when it starts
// (row_request::race_live), so a batch queued before its bound was known races all the same.
double tune_search::race_bound_ms() const {
  return live_bound_ ? live_bound_->load(std::memory_order_acquire) : 0;
}

// A row come back (or answered by the store): a new best so far, when it is the fastest point
// timed in full, tightens the race's bound.
void tune_search::offer(const tune::evaluation& e) {
  if (!live_bound_ || e.level != tune::fidelity::full || e.raced()) return;
  const double ms = tune::objective_value(e.record, tune::objective::time);
  if (ms == std::numeric_limits<double>::infinity() || (best_ms_ > 0 && ms >= best_ms_)) return;
  best_ms_ = ms;
  const timing_stats& b = *e.record.timing;
  live_bound_->store((b.has_ci() ? b.ci_high_ms : b.median_ms) * (1 + settings_.race_margin),
                     std::memory_order_release);
}

bool tune_search::begin() {
  if (over_) return false;
  const std::size_t budget = t_.budget;
  t_.seconds = seconds_since(t0_);
  if (t_.evaluations.size() >= budget) {
    t_.stopped_by = settings_.budget_evaluations ? "the budget" : "the space's size";
  } else if (settings_.budget_seconds > 0 && t_.seconds >= settings_.budget_seconds) {
    t_.stopped_by = "the time budget";
  } else if (interrupt_requested()) {
    t_.stopped_by = interrupt_signal() == SIGTERM ? "SIGTERM" : "Ctrl-C";
  } else if (ahead_) {
    current_batch_ = std::exchange(ahead_batch_, {});
    current_ = std::exchange(ahead_, nullptr);
    current_id_ = *std::exchange(ahead_id_, std::nullopt);
  } else {
    current_batch_ =
        strategy_.propose(history_, std::min(batch_size_, budget - t_.evaluations.size()));
    if (current_batch_.empty()) {
      t_.stopped_by = "the strategy (it proposed nothing more)";
    } else {
      current_ = std::make_unique<batch_rows>(rows_for(current_batch_));
      current_id_ = rows_at_.submit(current_->rows);
    }
  }
  if (!current_) {
    finish();
    return false;
  }
  // The next batch, proposed ahead and queued already (its files compiling; with several GPUs,
  // its rows ready for the first GPU free), when the strategy can choose it without this
  // batch's times.
  if (const std::size_t after = t_.evaluations.size() + current_batch_.size(); after < budget) {
    auto ahead =
        strategy_.propose_ahead(history_, current_batch_, std::min(batch_size_, budget - after));
    if (!ahead.empty()) {
      // Its points are not this batch's, so the store cannot answer them differently by the
      // time they run: their rows are made once, now.
      ahead_ = std::make_unique<batch_rows>(rows_for(ahead));
      ahead_batch_ = std::move(ahead);
      ahead_id_ = rows_at_.submit(ahead_->rows);
    }
  }
  return true;
}

void tune_search::end() {
  if (!current_) return;
  batch_rows& b = *current_;
  const std::size_t budget = t_.budget;
  rows_at_.collect(current_id_, [&](std::size_t k, const result_record& r) {
    // Stored as each row finishes: an interrupted tune keeps every row it measured, with the
    // GPU that measured it.
    if (store_) {
      nlohmann::json where = provenance_;
      where["device"] = rows_at_.device->name;
      if (r.gpu) {
        where["uuid"] = r.gpu->uuid;
        where["ordinal"] = r.gpu->ordinal;
      }
      const bool raced = r.timing && r.timing->raced;
      store_->add({b.keys[b.row_of[k]] + (raced ? "|raced" : ""), r, where});
    }
    if (on_row_) on_row_(r);
    t_.seconds = seconds_since(t0_);
    progress_->show(t_, budget, k + 1, rows_at_.compiles, false);
    b.evaluated[b.row_of[k]].record = r;
    b.evaluated[b.row_of[k]].at_s = t_.seconds;
    offer(b.evaluated[b.row_of[k]]);
  });
  t_.seconds = seconds_since(t0_);
  for (auto& e : b.evaluated) {
    if (e.from_store) e.at_s = t_.seconds;
    // The strategies minimise whatever value they are given: the median, or the energy.
    history_.push_back({e.point, e.level, tune::objective_value(e.record, t_.goal)});
    t_.evaluations.push_back(std::move(e));
  }
  current_.reset();
  current_batch_.clear();
  t_.seconds = seconds_since(t0_);
  progress_->show(t_, budget, 0, rows_at_.compiles, true);
}

void tune_search::finish() {
  over_ = true;
  if (ahead_id_) rows_at_.discard(*std::exchange(ahead_id_, std::nullopt));  // stopped first
  ahead_.reset();
  progress_->clear();
}

void tune_search::run() {
  while (begin()) end();
}

void search_side_by_side(std::vector<tune_search*> searches) {
  for (;;) {
    std::vector<tune_search*> going;
    for (tune_search* s : searches)
      if (s->begin()) going.push_back(s);
    if (going.empty()) return;
    for (tune_search* s : going) s->end();
    searches = going;
  }
}

}  // namespace kl
