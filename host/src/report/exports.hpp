// What is made from a results file: CSV, the comparison of two runs, and the SVG plot.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <ostream>
#include <string>

namespace kl {

/// One line per record, RFC 4180 quoting, a header line first.
void write_csv(const nlohmann::json& results, std::ostream& os);

struct compare_summary {
  int matched = 0, faster = 0, slower = 0, within_noise = 0, outcome_changed = 0;
  int only_old = 0, only_new = 0;
  /// Rows slower by more than the threshold with the intervals apart, and rows that passed before
  /// and do not now: what fails a CI job.
  int regressions = 0;
};

/// Prints each record of `after` beside its match in `before` (same configuration key): the two
/// medians with their intervals, and the change. A row changed ('!') when the two intervals lie
/// apart (for records without one, when the change is larger than the noise of both runs), and
/// is a regression ("!! regression") when it is also slower by more than `threshold_pct`. With
/// `markdown`, a table of the rows that changed, for a pull request's comment.
compare_summary compare_results(const nlohmann::json& before, const nlohmann::json& after,
                                std::ostream& os, double threshold_pct = 5, bool markdown = false);

/// The GPU model a results file was measured on ("NVIDIA H100 80GB HBM3"), or "" when the file
/// does not say (a compile-only run, a file from an older kernlab).
std::string results_device_name(const nlohmann::json& results);

/// Throughput per variant and block size, a panel per (dtype, op, size), with the device's peak
/// and the baseline drawn as lines. Failed and wrong rows are marked, never drawn as bars.
void write_svg(const nlohmann::json& results, std::ostream& os);

/// The roofline: each timed row at its arithmetic intensity (FLOP/byte) and throughput, under the
/// device's DRAM and FP32 roofs, a panel per family and configuration, in the family's unit
/// (TFLOP/s for a compute roofline, GB/s for a bandwidth one). A row of a family that counts no
/// FLOPs is drawn against the bytes its problem moves, with the DRAM roof and the L2 size
/// (docs/results_format.md). Throws std::runtime_error when no row has a throughput to draw.
void write_roofline_svg(const nlohmann::json& results, std::ostream& os);

/// The most a --timeline picture takes: a row past it is counted, not drawn.
constexpr std::size_t timeline_max_svg_bytes = std::size_t{32} << 20;

/// A --pipeline result's schedules: one lane per stream, each chunk's H2D, kernel and D2H as a
/// box on a time axis in microseconds, every row measured, one time scale per problem, until the
/// picture takes timeline_max_svg_bytes; a note under it counts the rows left out. Returns their
/// number. Throws std::runtime_error when the file has no pipeline, no row with stage times per
/// chunk, or a row of more streams or chunks than --pipeline runs (64, 4096).
std::size_t write_timeline_svg(const nlohmann::json& results, std::ostream& os);

}  // namespace kl
