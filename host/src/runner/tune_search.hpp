// One search of a tuning space at one problem configuration (kernlab tune): a strategy proposes
// points a batch at a time, the tuning store answers the points measured before, and the rest
// run where a row_source says (the GPUs of a row_session, or a recorded tune). Several searches
// run side by side in one thread (search_side_by_side): a tune over GPUs of several models
// searches each model apart, with that model's GPUs, since medians of different models are not
// comparable.
#pragma once

#include "measure/timing.hpp"
#include "runner/row_session.hpp"
#include "tune/outcome.hpp"
#include "tune/store.hpp"
#include "tune/strategy.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// Where a search's rows run: the GPUs of a row_session (those of one model, for a tune over
/// several), or a recorded tune (--replay).
struct row_source {
  const cuda::device_info* device = nullptr;  ///< the GPU (model) the rows run on
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

/// A row_source over a session's GPUs of one model (`model` one of session.devices()' names),
/// or over all of them (`model` ""): its rows carry the model, so only those GPUs run them.
row_source session_rows(row_session& session, const std::string& model = "");

/// How a search measures and when it stops (kernlab tune's options).
struct search_settings {
  timing_options timing;               ///< a full-fidelity point's
  std::size_t budget_evaluations = 0;  ///< --budget N (0: none given)
  double budget_seconds = 0;           ///< --budget-time (0: none)
  unsigned compile_jobs = 0;           ///< compile threads (0: the hardware's)
  bool fresh = false;                  ///< --fresh: the store answers nothing
  /// --race: a full-fidelity point stops being timed once its interval lies this fraction above
  /// the best so far's (timing_options::race_ms); 0: every point in full. Time objective only.
  double race_margin = 0;
};

/// A point's key in the store: its configuration, seed and source (the journal's key), the
/// device model, the toolkit, the fidelity, and whether it was measured for energy (so that a row
/// without energy figures never answers a tune that needs them). Any of them changed, the point
/// is measured again. A point raced out is stored under its key with "|raced" added: it answers
/// racing tunes only, since a tune that times every point in full wants its full figure.
std::string store_key(const registry_entry& e, unsigned block, const problem_config& c,
                      const cuda::device_info& d, tune::fidelity level, bool energy);

/// One search, a batch at a time: begin() proposes a batch and queues it (and the next one,
/// when the strategy can choose it without this one's times), end() reads it back into the
/// outcome. run() does both until the search stops.
class tune_search {
 public:
  using row_callback = std::function<void(const result_record&)>;
  /// `t` has its space, configuration and goal; `label` names the search in its progress line
  /// (the model, for a tune over several). The references must outlive the search.
  tune_search(tune::tune_outcome& t, tune::strategy& strategy, const search_settings& settings,
              const row_source& rows_at, tune::tuning_store* store, nlohmann::json provenance,
              row_callback on_row, const std::string& label = "");
  ~tune_search();
  tune_search(const tune_search&) = delete;
  tune_search& operator=(const tune_search&) = delete;

  /// Proposes the next batch and queues its rows; false when the search is over (the budget,
  /// the time, Ctrl-C, or the strategy stopped it: the outcome's stopped_by says which).
  bool begin();
  /// Reads the batch begin() queued back, storing each row, into the outcome.
  void end();
  /// begin() and end() until the search is over.
  void run();

 private:
  struct batch_rows;
  batch_rows rows_for(const std::vector<tune::proposal>& batch);
  double race_bound_ms() const;
  void offer(const tune::evaluation& e);
  void finish();

  tune::tune_outcome& t_;
  tune::strategy& strategy_;
  search_settings settings_;
  timing_options brief_;
  row_source rows_at_;
  tune::tuning_store* store_;
  nlohmann::json provenance_;
  row_callback on_row_;
  std::size_t batch_size_;
  class progress_display;
  std::unique_ptr<progress_display> progress_;
  std::vector<tune::observation> history_;
  std::unique_ptr<batch_rows> current_, ahead_;
  std::vector<tune::proposal> current_batch_, ahead_batch_;
  std::size_t current_id_ = 0;
  std::optional<std::size_t> ahead_id_;
  std::chrono::steady_clock::time_point t0_;
  bool over_ = false;
  // Racing: the fastest full point's median so far, over every row come back (a batch's rows
  // too, before the batch is read back whole), and the bound its interval sets, which the rows
  // queued already read as they start (null when the search does not race).
  double best_ms_ = 0;
  std::shared_ptr<std::atomic<double>> live_bound_;
};

/// Runs the searches side by side in this thread: each proposes and queues its batch, then each
/// reads its batch back, until all are over. Searches over different GPUs (a model each) keep
/// every GPU busy; a search that is over drops out.
void search_side_by_side(std::vector<tune_search*> searches);

}  // namespace kl
