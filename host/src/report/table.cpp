#include "report/table.hpp"
#include "report/text_helpers.hpp"

#include "report/printer.hpp"
#include "report/text_table.hpp"

#include "families/family.hpp"

#include "cuda/occupancy.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

namespace kl {

using namespace text;

namespace {

// "; tied with 2 others within their intervals: a block 128, b block 256": the timed rows of
// `group` whose intervals overlap the best's, which a rerun could rank above it ("" for none).
std::string ties_text(const std::vector<result_record>& group, const result_record& best) {
  std::vector<std::string> names;
  for (const auto& r : group)
    if (&r != &best && r.timed() && intervals_overlap(*r.timing, *best.timing))
      names.push_back(r.variant.name + (r.block ? " block " + std::to_string(r.block) : ""));
  if (names.empty()) return "";
  std::string out = "; tied with " + std::to_string(names.size()) +
                    (names.size() == 1 ? " other" : " others") + " within their intervals: ";
  const std::size_t shown = std::min<std::size_t>(names.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

}  // namespace

const result_record* find_baseline(const std::vector<result_record>& group,
                                   const std::string& name) {
  for (const auto& r : group) {
    if (!r.timed()) continue;
    const bool match = name.empty()
                           ? r.variant.is_baseline
                           : (r.variant.name == name || r.variant.qualified_name() == name);
    if (match) return &r;
  }
  return nullptr;
}

const result_record* find_baseline_on(const std::vector<result_record>& group,
                                      const std::string& name, const std::string& gpu_uuid) {
  for (const auto& r : group) {
    if (!r.timed() || !r.gpu || r.gpu->uuid != gpu_uuid) continue;
    const bool match = name.empty()
                           ? r.variant.is_baseline
                           : (r.variant.name == name || r.variant.qualified_name() == name);
    if (match) return &r;
  }
  return nullptr;
}

int exit_code_for(const std::vector<result_record>& results) {
  for (const auto& r : results) {
    if (r.status != outcome::passed && r.status != outcome::skipped) return 1;
    // A sanitizer finding is a failure too, even if the result happened to be right.
    if (r.sanitizer_findings) return 1;
  }
  return 0;
}

namespace {

// A group of a compute-bound family (matmul): TFLOP/s and % of the FP32 peak replace GB/s and
// % of the bandwidth; everything else is the same table.
bool fp32_roofline(const std::vector<result_record>& group, const table_options& opt) {
  if (!opt.families) return false;
  const family* f = opt.families->find(group.front().variant.family);
  return f && f->roofline() != roofline_kind::bandwidth;
}
// The group's roofline word ("bandwidth" without the families).
std::string roofline_of(const std::vector<result_record>& group, const table_options& opt) {
  const family* f = opt.families ? opt.families->find(group.front().variant.family) : nullptr;
  return f ? roofline_word(f->roofline()) : "bandwidth";
}

// The bytes and FLOPs of a group's problem. They come from the family and the configuration,
// never from a row: a skipped or failed row (the first of a group, often) never made a problem
// and carries zeros. Without the families, the first row that has them.
struct problem_figures {
  double bytes = 0, flops = 0;
};

problem_figures figures_of(const std::vector<result_record>& group, const table_options& opt) {
  const result_record& first = group.front();
  if (const family* f = opt.families ? opt.families->find(first.variant.family) : nullptr) {
    try {
      return {f->problem_bytes(first.config), f->problem_flops(first.config)};
    } catch (const std::exception&) {
      // A configuration the family refuses has rows that say why; fall back to the rows.
    }
  }
  for (const auto& r : group)
    if (r.bytes > 0) return {r.bytes, r.flops};
  return {};
}

// What a group's rows are measured against, found once for its heading, its cells and the lines
// under its table, whatever the format they are printed in.
struct group_facts {
  const std::vector<result_record>& group;
  const cuda::device_info& device;
  const table_options& opt;
  problem_figures figures;
  double peak = 0;       ///< the DRAM bandwidth, bytes/s
  bool compute = false;  ///< TFLOP/s against a compute peak, else GB/s against the bandwidth
  /// The compute peak rows are measured against: FP32 lanes, or the tensor cores in 16 bits, in
  /// TF32 or in FP64.
  std::string roofline;
  const char* peak_name = "";
  double compute_peak = 0;  ///< FLOP/s; 0 when not known for the device
  const result_record* base = nullptr;
  /// Rows measured on several GPUs (--devices): each is compared with the baseline measured on
  /// its own GPU, and a column says which GPU measured it.
  bool many_gpus = false;
  /// --energy: some row was measured for energy, so the table has the energy columns.
  bool energy = false;

  const result_record* baseline_of(const result_record& r) const {
    if (!many_gpus) return base;
    return r.gpu ? find_baseline_on(group, opt.baseline, r.gpu->uuid) : nullptr;
  }
};

group_facts facts_of(const std::vector<result_record>& group, const cuda::device_info& device,
                     const table_options& opt) {
  const bool compute = fp32_roofline(group, opt);
  const std::string roofline = roofline_of(group, opt);
  std::set<std::string> gpus;
  for (const auto& r : group)
    if (r.gpu) gpus.insert(r.gpu->uuid);
  const bool energy = std::any_of(group.begin(), group.end(),
                                  [](const result_record& r) { return r.energy.has_value(); });
  return {group,
          device,
          opt,
          figures_of(group, opt),
          device.peak_bandwidth(),
          compute,
          roofline,
          roofline_peak_name(roofline),
          compute ? device.peak_flops_for(roofline) : 0.0,
          find_baseline(group, opt.baseline),
          gpus.size() > 1,
          energy};
}

// "reduce  int32 sum n=16777216  (64.00 MiB, above the 50.00 MiB L2; L2 flushed by a read
// before each sample)  seed 12345"
std::string heading_of(const group_facts& f) {
  const auto& c = f.group.front().config;
  const double bytes = f.figures.bytes;
  const double l2 = static_cast<double>(f.device.l2_bytes);
  std::ostringstream os;
  os << f.group.front().variant.family << "  " << c.describe() << "  (" << human_bytes(bytes)
     << ", " << (bytes > l2 ? "above" : "within") << " the " << human_bytes(l2) << " L2";
  for (const auto& r : f.group)
    if (r.timing) {
      os << (r.timing->flush == flush_mode::none   ? "; hot: L2 not flushed"
             : r.timing->flush == flush_mode::read ? "; L2 flushed by a read before each sample"
                                                   : "; L2 flushed by a write before each sample");
      break;
    }
  os << ")  seed " << c.seed;
  return os.str();
}

// A compute group's FLOPs, the peak its % is of and how that peak is made up, and its baseline;
// "" for a bandwidth group.
std::string compute_preamble(const group_facts& f) {
  if (!f.compute) return "";
  const cuda::device_info& d = f.device;
  std::ostringstream os;
  if (is_tensor_roofline(f.roofline)) {
    os << fmt("%.4g", f.figures.flops / 1e9) << " GFLOP (2 M N K); % peak is of the dense "
       << f.peak_name << " peak, ";
    if (f.compute_peak > 0)
      os << fmt("%.1f", f.compute_peak / 1e12) << " TFLOP/s (" << d.sm_count << " SMs x "
         << d.tensor_flops_per_sm_clock_for(f.roofline) << " FLOP/clock x " << d.sm_clock_khz / 1000
         << " MHz)\n";
    else
      os << "not known for " << d.arch() << "\n";
  } else {
    os << fmt("%.4g", f.figures.flops / 1e9) << " GFLOP (2 M N K); % peak is of the FP32 peak, "
       << fmt("%.1f", f.compute_peak / 1e12) << " TFLOP/s (" << d.sm_count << " SMs x "
       << d.fp32_lanes_per_sm() << " FP32 lanes x 2 x " << d.sm_clock_khz / 1000 << " MHz)\n";
  }
  if (f.base) os << "baseline " << f.base->variant.name << ": " << f.base->variant.summary << "\n";
  return os.str();
}

// The columns. interval: where a rerun's median lands (95%), its larger half relative to the
// median; spread: the standard deviation of the placements' medians relative to the median.
text_table columns_of(const group_facts& f) {
  text_table t;
  t.header = {"variant",  "block",  "status", "median us",
              "interval", "spread", "noise",  f.compute ? "TFLOP/s" : "GB/s",
              "% peak",   "regs",   "occ",    "step",
              "cumul"};
  t.right = {false, true, false, true, true, true, true, true, true, true, true, true, true};
  if (f.base) {
    t.header.push_back("x " + f.base->variant.name);
    t.right.push_back(true);
  }
  // --energy: joules per operation, average watts and work per joule, for the rows that have
  // them.
  if (f.energy) {
    for (const char* h : {"uJ/op", "W", f.compute ? "GFLOP/J" : "GB/J"}) {
      t.header.push_back(h);
      t.right.push_back(true);
    }
  }
  if (f.many_gpus) {
    t.header.push_back("gpu");
    t.right.push_back(true);
  }
  return t;
}

// The medians the speedup columns divide: "step" by the previous source variant's at the same
// block, "cumul" by the group's first source variant's (the reference).
struct speedup_bases {
  std::map<unsigned, double> reference;  ///< block -> the reference variant's median
  double reference_best = 0;             ///< its best median, for a row without a block
  std::map<unsigned, double> previous;   ///< block -> the previous passed source row's median
};

speedup_bases speedup_bases_of(const std::vector<result_record>& group) {
  std::string ref_name;
  for (const auto& r : group)
    if (r.variant.origin == origin_kind::source) {
      ref_name = r.variant.name;
      break;
    }
  speedup_bases s;
  for (const auto& r : group)
    if (r.variant.name == ref_name && r.timed()) {
      s.reference[r.block] = r.timing->median_ms;
      s.reference_best = s.reference_best == 0 ? r.timing->median_ms
                                               : std::min(s.reference_best, r.timing->median_ms);
    }
  return s;
}

// What the rows leave for the lines under the table: the best rows, and the marks to explain.
struct row_tally {
  std::vector<std::string> notes;  ///< failures in full, "[note N]" in their row
  int timed_out = 0, timed_out_ci = 0, clock_dropped = 0, partly_empty = 0, untimed = 0;
  int energy_from_samples = 0;
  const result_record* best = nullptr;
  const result_record* least_energy = nullptr;
};

// A timed row's energy cells (--energy), or dashes and the reason as its trailer.
void energy_cells(std::vector<std::string>& row, std::string& trailer, const result_record& r,
                  const group_facts& f, row_tally& tally) {
  if (!r.has_energy()) {
    for (int i = 0; i < 3; ++i) row.push_back("-");
    if (r.energy) trailer = "energy: " + r.energy->error;
    return;
  }
  const energy_stats& e = *r.energy;
  row.push_back(fmt(e.joules_per_op * 1e6 < 100 ? "%.2f" : "%.1f", e.joules_per_op * 1e6) +
                (e.method == "counter" ? "" : "~"));
  row.push_back(fmt("%.0f", e.watts));
  row.push_back(fmt("%.2f", (f.compute ? r.flops : r.bytes) / 1e9 / e.joules_per_op));
  if (e.method != "counter") ++tally.energy_from_samples;
  if (!tally.least_energy || e.joules_per_op < tally.least_energy->energy->joules_per_op)
    tally.least_energy = &r;
}

// A timed row's cells after its status: time, interval, spread, noise, throughput, resources,
// speedups, energy. Returns its trailer.
std::string timed_cells(std::vector<std::string>& row, const result_record& r, const group_facts& f,
                        speedup_bases& s, row_tally& tally) {
  std::string trailer;
  const double tm = r.timing->median_ms;
  // '*': sampling stopped at the timeout; '!': the SM clock dropped while sampling.
  const std::string flags =
      std::string(r.timing->timed_out ? "*" : "") + (r.timing->clock_dropped ? "!" : "");
  row.push_back(fmt("%.2f", tm * 1e3));
  // The flags go beside the figure the stopping rule watched.
  const bool by_ci = r.timing->rule == stop_rule::ci;
  const std::string ci = fmt("%.2f%%", r.timing->ci_half_width() * 100);
  row.push_back(r.timing->has_ci() ? "+-" + ci + (by_ci ? flags : "") : "-");
  row.push_back(r.timing->placements > 1 ? fmt("%.2f%%", r.timing->placement_spread * 100) : "-");
  row.push_back(fmt("%.1f%%", r.timing->noise * 100) + (by_ci ? "" : flags));
  if (!r.timing->note.empty()) trailer = r.timing->note;
  if (f.compute) {
    row.push_back(fmt("%.2f", r.tflops()));
    row.push_back(f.compute_peak > 0 ? fmt("%.1f", r.tflops() * 1e12 / f.compute_peak * 100) : "-");
  } else {
    row.push_back(fmt("%.1f", r.gbps()));
    row.push_back(fmt("%.1f", r.gbps() * 1e9 / f.peak * 100));
  }
  row.push_back(r.resources ? std::to_string(r.resources->registers) : "-");
  // Resident blocks per SM, then the theoretical occupancy: "1 / 50%" shows a block size (or a
  // register count) that leaves part of the SM's thread slots empty.
  row.push_back(r.occupancy ? std::to_string(r.occupancy->blocks_per_sm) + " / " +
                                  fmt("%.0f%%", r.occupancy->fraction * 100)
                            : "-");
  if (r.occupancy && r.occupancy->fraction < 1.0) ++tally.partly_empty;
  const double prev = s.previous.count(r.block) ? s.previous[r.block] : 0;
  const double ref =
      r.block && s.reference.count(r.block) ? s.reference[r.block] : s.reference_best;
  row.push_back(prev > 0 && r.variant.origin == origin_kind::source ? fmt("%.2fx", prev / tm)
                                                                    : "-");
  row.push_back(ref > 0 ? fmt("%.2fx", ref / tm) : "-");
  if (f.base) {
    const result_record* mine = f.baseline_of(r);
    row.push_back(mine ? fmt("%.2fx", mine->timing->median_ms / tm) : "-");
  }
  if (f.energy) energy_cells(row, trailer, r, f, tally);
  tally.timed_out += r.timing->timed_out && !by_ci ? 1 : 0;
  tally.timed_out_ci += r.timing->timed_out && by_ci ? 1 : 0;
  tally.clock_dropped += r.timing->clock_dropped ? 1 : 0;
  if (r.variant.origin == origin_kind::source) s.previous[r.block] = tm;
  if (!tally.best || tm < tally.best->timing->median_ms) tally.best = &r;
  return trailer;
}

// One row of the table and its trailer (a skip's reason, a failure's first line, a note).
void add_row(text_table& t, const result_record& r, const group_facts& f, speedup_bases& s,
             row_tally& tally) {
  std::vector<std::string> row = {r.variant.name, block_text(r.block), to_string(r.status)};
  std::string trailer;
  if (r.status == outcome::passed && !r.timed()) {
    // Validated under compute-sanitizer: no time, no throughput, no speedup, never the best.
    for (int i = 0; i < 6; ++i) row.push_back("-");
    row.push_back(r.resources ? std::to_string(r.resources->registers) : "-");
    row.push_back("-");
    row.push_back("-");
    row.push_back("-");
    if (f.base) row.push_back("-");
    ++tally.untimed;
  } else if (r.status == outcome::passed) {
    trailer = timed_cells(row, r, f, s, tally);
  } else {
    std::string msg = first_line(r.message);
    if (r.message.find('\n') != std::string::npos || msg.size() > 70) {
      tally.notes.push_back(r.variant.name + " block " + block_text(r.block) + ":\n" + r.message);
      msg = msg.substr(0, 60) + "... [note " + std::to_string(tally.notes.size()) + "]";
    }
    trailer = msg;
  }
  if (f.many_gpus) {
    // The energy columns may be missing on a row that failed: pad to the header first.
    while (row.size() + 1 < t.header.size()) row.push_back("-");
    row.push_back(r.gpu ? std::to_string(r.gpu->ordinal) : "-");
  }
  if (!r.sanitizer.empty()) trailer += (trailer.empty() ? "" : "; ") + r.sanitizer;
  if (r.resumed) trailer += (trailer.empty() ? "" : "; ") + std::string("(from the resumed run)");
  t.rows.push_back(std::move(row));
  t.trailers.push_back(std::move(trailer));
}

// ", 0.20x of cublas" when the row has a baseline to compare with.
std::string times_baseline(const group_facts& f, const result_record& r) {
  const result_record* b = f.baseline_of(r);
  return b ? ", " + fmt("%.2f", b->timing->median_ms / r.timing->median_ms) + "x of " +
                 b->variant.name
           : "";
}

// "best: ..." in the group's unit, its ties, and the best runtime-compiled variant when a
// library or a copy is the fastest row.
void best_line(std::ostream& os, const group_facts& f, const result_record& best) {
  const result_record* best_source = nullptr;
  for (const auto& r : f.group)
    if (r.timed() && r.variant.origin == origin_kind::source &&
        (!best_source || r.timing->median_ms < best_source->timing->median_ms))
      best_source = &r;
  os << "best: " << best.variant.name << " block " << block_text(best.block) << ", ";
  if (f.compute)
    os << fmt("%.2f", best.tflops()) << " TFLOP/s ("
       << (f.compute_peak > 0 ? fmt("%.1f", best.tflops() * 1e12 / f.compute_peak * 100) : "-")
       << "% of the " << fmt("%.1f", f.compute_peak / 1e12) << " TFLOP/s " << f.peak_name
       << " peak)";
  else
    os << fmt("%.1f", best.gbps()) << " GB/s (" << fmt("%.1f", best.gbps() * 1e9 / f.peak * 100)
       << "% of the " << fmt("%.0f", f.peak / 1e9) << " GB/s peak)";
  os << times_baseline(f, best) << ties_text(f.group, best);
  if (best_source && best_source != &best)
    os << "; best compiled here: " << best_source->variant.name << " block "
       << block_text(best_source->block) << ", "
       << (f.compute ? fmt("%.2f", best_source->tflops()) + " TFLOP/s"
                     : fmt("%.1f", best_source->gbps()) + " GB/s")
       << times_baseline(f, *best_source);
  os << "\n";
}

// The lines under the table: the best row, the least energy, what the marks in the cells mean,
// and the failures' notes in full. The same in every format.
void summary_lines(std::ostream& os, const group_facts& f, const row_tally& t) {
  if (t.best) best_line(os, f, *t.best);
  if (t.least_energy) {
    const energy_stats& e = *t.least_energy->energy;
    os << "least energy: " << t.least_energy->variant.name << " block "
       << block_text(t.least_energy->block) << ", " << fmt("%.2f", e.joules_per_op * 1e6)
       << " uJ/op at " << fmt("%.0f", e.watts) << " W (" << fmt("%.2f", e.us_per_op)
       << " us/op back to back, no L2 flush)";
    if (t.best && t.best != t.least_energy && t.best->has_energy())
      os << "; the fastest, " << t.best->variant.name << " block " << block_text(t.best->block)
         << ", takes " << fmt("%.2f", t.best->energy->joules_per_op * 1e6) << " uJ/op";
    os << "\n";
  }
  if (t.energy_from_samples > 0)
    os << "~ " << t.energy_from_samples
       << " row(s) from NVML's power samples, not its energy counter (the counter is missing or "
          "did not move; --json has the reason)\n";
  if (t.untimed > 0)
    os << t.untimed << " row(s) validated under compute-sanitizer, not timed (a sanitized run is "
       << "orders of magnitude slower)\n";
  if (t.timed_out > 0)
    os << "* " << t.timed_out
       << " row(s) stopped sampling at the timeout before the noise fell under "
       << "the limit (--timeout, --max-noise)\n";
  if (t.timed_out_ci > 0)
    os << "* " << t.timed_out_ci << " row(s) stopped at the timeout or the last placement before "
       << "their 95% interval was within the limit (--timeout, --max-placements, --max-ci)\n";
  if (t.partly_empty > 0)
    os << "occ: resident blocks per SM / theoretical occupancy (" << f.device.max_threads_per_sm
       << " threads per SM); " << t.partly_empty
       << " row(s) leave part of the SM's thread slots empty\n";
  if (t.clock_dropped > 0)
    os << "! " << t.clock_dropped
       << " row(s) saw the SM clock drop by more than 5% while sampling\n";
  for (std::size_t i = 0; i < t.notes.size(); ++i)
    os << "[note " << i + 1 << "] " << t.notes[i] << "\n";
}

}  // namespace

void print_group(std::ostream& os, const std::vector<result_record>& group,
                 const cuda::device_info& device, const table_options& opt) {
  if (group.empty()) return;
  // The table's columns, cells and the lines around them, computed once; the printer lays them
  // out as aligned text or as markdown.
  const group_facts f = facts_of(group, device, opt);
  text_table t = columns_of(f);
  speedup_bases s = speedup_bases_of(group);
  row_tally tally;
  for (const auto& r : group) add_row(t, r, f, s, tally);

  const printer& p = printer_for(opt.markdown);
  p.heading(os, heading_of(f));
  if (const std::string preamble = compute_preamble(f); !preamble.empty()) {
    os << preamble;
    p.end_paragraph(os);
  }
  p.table(os, t);
  summary_lines(os, f, tally);
}

void print_profile_table(std::ostream& os, const std::vector<result_record>& results,
                         const profile_run& run, bool markdown) {
  if (!run.requested) return;
  const printer& p = printer_for(markdown);
  p.heading(os, "profile: Nsight Compute, one more run of each passed row (" + run.tool + ")");
  text_table t;
  t.header = {"variant", "block",   "config",   "kernels", "ncu us",
              "DRAM %",  "occup %", "L2 hit %", "SM %",    "top stalls (cycles per instruction)"};
  t.right = {false, true, false, true, true, true, true, true, true, false};
  auto pct = [](const std::optional<double>& v) { return v ? fmt("%.1f", *v) : std::string("-"); };
  for (const auto& r : results) {
    if (!r.profile) continue;
    const profile_summary& p = *r.profile;
    std::string stalls;
    for (const auto& s : p.top_stalls)
      stalls += (stalls.empty() ? "" : ", ") + s.name + " " + fmt("%.1f", s.cycles);
    t.rows.push_back({r.variant.name, block_text(r.block), r.config.describe(),
                      std::to_string(p.kernels), p.kernels ? fmt("%.2f", p.duration_us) : "-",
                      pct(p.dram_pct), pct(p.occupancy_pct), pct(p.l2_hit_pct), pct(p.sm_pct),
                      stalls.empty() ? "-" : stalls});
    t.trailers.push_back(p.note);
  }
  if (!t.rows.empty()) {
    p.table(os, t);
    os << "DRAM %, SM %: throughput as % of peak; occup %: achieved occupancy (active warps / the "
          "SM's maximum); stalls: cycles a warp spent stalled for the reason per instruction it "
          "issued; each time-weighted over the row's kernels, whose time under ncu is ncu us\n";
  }
  if (!run.report.empty())
    os << "report: " << run.report << " (every kernel's full profile: open it in Nsight Compute, "
       << "or ncu --import FILE --page details)\n";
  if (!run.error.empty()) os << "profile: " << run.error << "\n";
}

}  // namespace kl
