// What `kernlab tune` prints and exports: the table of the evaluated points, the tuning table
// (JSON) and a C header of the best configurations, each with its provenance.
#pragma once

#include "cuda/device.hpp"
#include "report/results_json.hpp"
#include "report/table.hpp"
#include "tune/outcome.hpp"
#include "tune/space.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace kl {

/// A file's space as a tune starts: its points, each tunable's number of values, and the points
/// left out with the reason.
void print_tuning_space(std::ostream& os, const tune::tuning_space& s);

/// Every evaluated point of one tune, fastest first: the tunables' values, status, median, the
/// median's interval, throughput and % of peak, x the best, x the library baseline; then the
/// failures with their first line. Brief evaluations (successive halving) are marked.
void print_tune_table(std::ostream& os, const tune::tune_outcome& t, const cuda::device_info& d,
                      const table_options& opt);

/// The summary line: the best point, its time and throughput, and the baseline ratio.
void print_tune_best(std::ostream& os, const tune::tune_outcome& t, const cuda::device_info& d);

/// After a range tune: per file tuned at several sizes alone, a line with the size selector's rule
/// and the leave-one-out figures that chose it (report/selector_export.hpp).
void print_selectors(std::ostream& os, const std::vector<tune::tune_outcome>& tunes);

/// The tuning table: per file and configuration, the best point with its numbers, and the
/// provenance (device, driver, toolkit, commit, date, command, strategy, budget, seed).
nlohmann::json tuning_table_json(const std::vector<tune::tune_outcome>& tunes,
                                 const cuda::device_info& d, const run_context& ctx);

/// A C/C++ header with the best configuration of each tune: a constexpr table per file (one row
/// per configuration) and, for each file's first configuration, #defines; the provenance in
/// comments.
std::string tuning_header(const std::vector<tune::tune_outcome>& tunes, const cuda::device_info& d,
                          const run_context& ctx);

/// Every evaluation of every tune in the T4 results format (schema 1.0.0, the open autotuning
/// results schema that Kernel Tuner writes with store_output_file): per point its
/// configuration (the tunables and BLOCK), the objective, the times (compile, the runtimes:
/// every sample with --samples, else the median; validation, in ms), T4's invalidity
/// ("correct", "compile", "runtime", "correctness", "timeout", "constraints") and the
/// measurements (median and its interval, throughput, the problem, the variant).
nlohmann::json t4_results_json(const std::vector<tune::tune_outcome>& tunes);

}  // namespace kl
