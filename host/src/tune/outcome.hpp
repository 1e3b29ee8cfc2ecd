// What one tune came to: a file's space searched at one problem configuration.
#pragma once

#include "exec/result.hpp"
#include "tune/space.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace kl::tune {

/// One evaluation: a point, how carefully it was timed, and its row.
struct evaluation {
  std::size_t point = 0;
  fidelity level = fidelity::full;
  result_record record;
  bool from_store = false;  ///< taken from the tuning store, not measured in this run
};

struct tune_outcome {
  const tuning_space* space = nullptr;
  problem_config config;
  std::vector<std::string> axis_names;  ///< the family's names of the shape's axes (M, N, K)
  std::string strategy;
  std::size_t budget = 0;
  double budget_seconds = 0;  ///< 0: none
  std::uint64_t seed = 0;
  std::vector<evaluation> evaluations;   ///< in the order they were made
  std::vector<result_record> baselines;  ///< the family's library, at the same configuration
  double seconds = 0;                    ///< the search's wall time
  std::string stopped_by;                ///< "the budget", "the time budget", "the strategy (...)"
  std::string replayed_from;             ///< --replay: the recorded tune that answered every row

  /// The fastest passed evaluation at full fidelity (brief ones only when no full one passed:
  /// their medians are rougher); null when nothing passed.
  const evaluation* best() const {
    const evaluation* out = nullptr;
    for (int pass = 0; pass < 2 && !out; ++pass)
      for (const auto& e : evaluations) {
        if (!e.record.timed() || (pass == 0 && e.level != fidelity::full)) continue;
        if (!out || e.record.timing->median_ms < out->record.timing->median_ms) out = &e;
      }
    return out;
  }
  std::size_t measured() const {
    std::size_t n = 0;
    for (const auto& e : evaluations) n += e.from_store ? 0 : 1;
    return n;
  }
};

}  // namespace kl::tune
