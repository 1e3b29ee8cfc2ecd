// The end-to-end pipeline of a family with a [pipeline] (docs/families.md; qam256's in
// docs/qam256.md): pinned host inputs -> H2D -> kernel -> D2H -> pinned host outputs, the
// pipeline axis cut into chunks over S streams, issued breadth first (all H2D, then all kernels,
// then all D2H) or depth first (each chunk's three stages in turn). It runs as a family job
// (exec/family_jobs.hpp) where rows run: in the worker process, or in process.
#pragma once

#include "cuda/device.hpp"
#include "exec/row.hpp"
#include "families/family.hpp"
#include "spec/variant.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace kl {

struct pipeline_options {
  std::vector<unsigned> streams = {1, 2, 4, 8};
  std::vector<std::string> orders = {"breadth", "depth"};
  /// Chunks of a configuration: this many, or (0) chunks_per_stream x its streams.
  unsigned chunks = 0;
  unsigned chunks_per_stream = 4;
  int runs = 5;  ///< timed runs per configuration (after one warm-up); the median is reported
};

/// Everything the pipeline needs, as it travels to the worker.
struct pipeline_job {
  row_job kernel;  ///< a source variant's instantiation, as a row would run it
  pipeline_options options;
};

/// When one chunk's stages ran, in the median run of its configuration: microseconds from the
/// run's start event. Each stage spans the event recorded on its stream just before it and the one
/// just after it, so a begin is when the stream reached the stage; a copy that then waited for a
/// copy engine busy with another stream's copy has that wait inside its span.
struct chunk_timeline {
  unsigned chunk = 0, stream = 0;
  double begin_us[3] = {0, 0, 0};  ///< H2D, kernel, D2H
  double end_us[3] = {0, 0, 0};
};

/// One configuration (streams x order), from its median run.
struct pipeline_row {
  unsigned streams = 0;
  std::string order;
  unsigned chunks = 0;
  std::uint64_t chunk_units = 0;  ///< of the pipeline axis: every chunk but the last (the rest)
  double wall_ms = 0;             ///< median over the runs, first issue to last completion
  double wall_min_ms = 0, wall_max_ms = 0;
  // Each stage's span in the median run: from the first chunk's start of the stage to the last
  // chunk's end of it (what that stage occupied of the wall time, overlaps included).
  double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0;
  double h2d_gbs = 0, d2h_gbs = 0;  ///< bytes each way / the stage's span
  double overlap = 0;  ///< the stages' times alone, summed, / wall (above 1: they overlapped)
  double speedup = 0;  ///< the one-stream wall time of the same order / this wall time
  double x_bound = 0;  ///< wall / the bound (1.0 would be the two-way copy's own time)
  bool valid = false;  ///< the output after the last run was byte-exact
  std::string check;   ///< the mismatch, when not valid
  /// Every chunk's stages in the median run, in chunk order (empty in older files): what
  /// `kernlab plot --timeline` draws.
  std::vector<chunk_timeline> timeline;
};

struct pipeline_report {
  std::string family;
  std::string variant;  ///< qualified name
  unsigned block = 0;
  problem_config config;
  double bytes_in = 0, bytes_out = 0;  ///< copied host to device, and back
  int resident_blocks = 0;  ///< SM count x resident blocks per SM of the kernel at this block
  // Each stage alone on one stream over the whole data (median of the runs).
  double h2d_alone_ms = 0, kernel_alone_ms = 0, d2h_alone_ms = 0;
  double serial_ms = 0;  ///< the three alone, summed: the stages one after another
  /// The bound: the H2D and D2H copies of the whole data issued at once on two streams, no kernel.
  double bound_ms = 0;
  std::vector<pipeline_row> rows;
};

/// Runs every configuration of the job on the current context's device. Validates the outputs
/// of each configuration, brought back to the host, against the family's reference and rule.
pipeline_report run_pipeline(const family& fam, const pipeline_job& job,
                             const cuda::device_info& device);

/// The chunk size in units of the pipeline axis for n units in `chunks` chunks: ceil(n / chunks)
/// rounded up to a multiple of `align` units (the pipeline makes it 256 bytes of every buffer, so
/// that every chunk starts 256-byte aligned as the kernel contract promises). The last chunk
/// holds the rest; there may be fewer chunks than asked.
std::uint64_t chunk_units(std::uint64_t n, unsigned chunks, std::uint64_t align);

/// The order of operations of one configuration, for the tests: (stage, chunk) pairs, stage 0
/// H2D, 1 kernel, 2 D2H; chunk c goes to stream c % streams.
std::vector<std::pair<int, unsigned>> issue_sequence(const std::string& order, unsigned chunks);

nlohmann::json to_json(const pipeline_options& o);
pipeline_options pipeline_options_from_json(const nlohmann::json& j);
nlohmann::json to_json(const pipeline_job& job);
pipeline_job pipeline_job_from_json(const nlohmann::json& j);
nlohmann::json to_json(const pipeline_report& r);
pipeline_report pipeline_report_from_json(const nlohmann::json& j);

/// The pipeline's table: the stages alone and the bound, then one row per configuration, then
/// breadth and depth side by side per stream count.
void print_pipeline(std::ostream& os, const pipeline_report& r, const cuda::device_info& device,
                    bool markdown);

}  // namespace kl
