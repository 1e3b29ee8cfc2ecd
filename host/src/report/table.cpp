#include "report/table.hpp"
#include "report/text_helpers.hpp"

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

}  // namespace

void print_group(std::ostream& os, const std::vector<result_record>& group,
                 const cuda::device_info& device, const table_options& opt) {
  if (group.empty()) return;
  const bool compute = fp32_roofline(group, opt);
  const auto& c = group.front().config;
  const problem_figures figures = figures_of(group, opt);
  const double bytes = figures.bytes;
  const double peak = device.peak_bandwidth();
  os << "\n"
     << (opt.markdown ? "### " : "== ") << group.front().variant.family << "  " << c.describe()
     << "  (" << human_bytes(bytes) << ", "
     << (bytes > static_cast<double>(device.l2_bytes) ? "above" : "within") << " the "
     << human_bytes(static_cast<double>(device.l2_bytes)) << " L2";
  for (const auto& r : group)
    if (r.timing) {
      os << (r.timing->flush == flush_mode::none   ? "; hot: L2 not flushed"
             : r.timing->flush == flush_mode::read ? "; L2 flushed by a read before each sample"
                                                   : "; L2 flushed by a write before each sample");
      break;
    }
  os << ")  seed " << c.seed << "\n" << (opt.markdown ? "\n" : "");

  const result_record* base = find_baseline(group, opt.baseline);
  // Rows measured on several GPUs (--devices): each is compared with the baseline measured on
  // its own GPU, and a column says which GPU measured it.
  std::set<std::string> gpus;
  for (const auto& r : group)
    if (r.gpu) gpus.insert(r.gpu->uuid);
  const bool many_gpus = gpus.size() > 1;
  auto base_of = [&](const result_record& r) -> const result_record* {
    if (!many_gpus) return base;
    return r.gpu ? find_baseline_on(group, opt.baseline, r.gpu->uuid) : nullptr;
  };
  // The compute peak rows are measured against: FP32 lanes, or the tensor cores in 16 bits,
  // in TF32 or in FP64.
  const std::string roofline = roofline_of(group, opt);
  const bool tensor = is_tensor_roofline(roofline);
  const double compute_peak = compute ? device.peak_flops_for(roofline) : 0.0;
  const char* peak_name = roofline_peak_name(roofline);
  if (compute && tensor) {
    os << fmt("%.4g", figures.flops / 1e9) << " GFLOP (2 M N K); % peak is of the dense "
       << peak_name << " peak, ";
    if (compute_peak > 0)
      os << fmt("%.1f", compute_peak / 1e12) << " TFLOP/s (" << device.sm_count << " SMs x "
         << device.tensor_flops_per_sm_clock_for(roofline) << " FLOP/clock x "
         << device.sm_clock_khz / 1000 << " MHz)\n";
    else
      os << "not known for " << device.arch() << "\n";
  } else if (compute) {
    os << fmt("%.4g", figures.flops / 1e9) << " GFLOP (2 M N K); % peak is of the FP32 peak, "
       << fmt("%.1f", compute_peak / 1e12) << " TFLOP/s (" << device.sm_count << " SMs x "
       << device.fp32_lanes_per_sm() << " FP32 lanes x 2 x " << device.sm_clock_khz / 1000
       << " MHz)\n";
  }
  if (compute) {
    if (base) os << "baseline " << base->variant.name << ": " << base->variant.summary << "\n";
    os << (opt.markdown ? "\n" : "");
  }
  // The reference for the seeds' "cumulative" column: the group's first source variant.
  std::string ref_name;
  for (const auto& r : group)
    if (r.variant.origin == origin_kind::source) {
      ref_name = r.variant.name;
      break;
    }
  std::map<unsigned, double> ref_time;  // block -> reference variant's median
  double ref_best = 0;
  for (const auto& r : group)
    if (r.variant.name == ref_name && r.timed()) {
      ref_time[r.block] = r.timing->median_ms;
      ref_best = ref_best == 0 ? r.timing->median_ms : std::min(ref_best, r.timing->median_ms);
    }

  text_table t;
  // interval: where a rerun's median lands (95%), its larger half relative to the median; spread:
  // the standard deviation of the placements' medians relative to the median.
  t.header = {"variant",  "block",  "status", "median us",
              "interval", "spread", "noise",  compute ? "TFLOP/s" : "GB/s",
              "% peak",   "regs",   "occ",    "step",
              "cumul"};
  t.right = {false, true, false, true, true, true, true, true, true, true, true, true, true};
  if (base) {
    t.header.push_back("x " + base->variant.name);
    t.right.push_back(true);
  }
  // --energy: joules per operation, average watts and work per joule, for the rows that have
  // them; the columns only when some row was measured for energy.
  const bool energy = std::any_of(group.begin(), group.end(),
                                  [](const result_record& r) { return r.energy.has_value(); });
  if (energy) {
    for (const char* h : {"uJ/op", "W", compute ? "GFLOP/J" : "GB/J"}) {
      t.header.push_back(h);
      t.right.push_back(true);
    }
  }
  if (many_gpus) {
    t.header.push_back("gpu");
    t.right.push_back(true);
  }
  std::map<unsigned, double> prev_time;  // block -> the previous passed row's median
  std::vector<std::string> notes;
  int timed_out = 0, timed_out_ci = 0, clock_dropped = 0, partly_empty = 0, untimed = 0;
  int energy_from_samples = 0;
  const result_record* best = nullptr;
  const result_record* least_energy = nullptr;
  for (const auto& r : group) {
    std::vector<std::string> row = {r.variant.name, block_text(r.block), to_string(r.status)};
    std::string trailer;
    if (r.status == outcome::passed && !r.timed()) {
      // Validated under compute-sanitizer: no time, no throughput, no speedup, never the best.
      for (int i = 0; i < 6; ++i) row.push_back("-");
      row.push_back(r.resources ? std::to_string(r.resources->registers) : "-");
      row.push_back("-");
      row.push_back("-");
      row.push_back("-");
      if (base) row.push_back("-");
      ++untimed;
    } else if (r.status == outcome::passed) {
      const double tm = r.timing->median_ms;
      // '*': sampling stopped at the timeout; '!': the SM clock dropped while sampling.
      const std::string flags =
          std::string(r.timing->timed_out ? "*" : "") + (r.timing->clock_dropped ? "!" : "");
      row.push_back(fmt("%.2f", tm * 1e3));
      // The flags go beside the figure the stopping rule watched.
      const bool by_ci = r.timing->rule == stop_rule::ci;
      const std::string ci = fmt("%.2f%%", r.timing->ci_half_width() * 100);
      row.push_back(r.timing->has_ci() ? "+-" + ci + (by_ci ? flags : "") : "-");
      row.push_back(r.timing->placements > 1 ? fmt("%.2f%%", r.timing->placement_spread * 100)
                                             : "-");
      row.push_back(fmt("%.1f%%", r.timing->noise * 100) + (by_ci ? "" : flags));
      if (!r.timing->note.empty()) trailer = r.timing->note;
      if (compute) {
        row.push_back(fmt("%.2f", r.tflops()));
        row.push_back(compute_peak > 0 ? fmt("%.1f", r.tflops() * 1e12 / compute_peak * 100) : "-");
      } else {
        row.push_back(fmt("%.1f", r.gbps()));
        row.push_back(fmt("%.1f", r.gbps() * 1e9 / peak * 100));
      }
      row.push_back(r.resources ? std::to_string(r.resources->registers) : "-");
      // Resident blocks per SM, then the theoretical occupancy: "1 / 50%" shows a block size
      // (or a register count) that leaves part of the SM's thread slots empty.
      row.push_back(r.occupancy ? std::to_string(r.occupancy->blocks_per_sm) + " / " +
                                      fmt("%.0f%%", r.occupancy->fraction * 100)
                                : "-");
      if (r.occupancy && r.occupancy->fraction < 1.0) ++partly_empty;
      const double prev = prev_time.count(r.block) ? prev_time[r.block] : 0;
      const double ref = r.block && ref_time.count(r.block) ? ref_time[r.block] : ref_best;
      row.push_back(prev > 0 && r.variant.origin == origin_kind::source ? fmt("%.2fx", prev / tm)
                                                                        : "-");
      row.push_back(ref > 0 ? fmt("%.2fx", ref / tm) : "-");
      if (base) {
        const result_record* mine = base_of(r);
        row.push_back(mine ? fmt("%.2fx", mine->timing->median_ms / tm) : "-");
      }
      if (energy && r.has_energy()) {
        const energy_stats& e = *r.energy;
        row.push_back(fmt(e.joules_per_op * 1e6 < 100 ? "%.2f" : "%.1f", e.joules_per_op * 1e6) +
                      (e.method == "counter" ? "" : "~"));
        row.push_back(fmt("%.0f", e.watts));
        row.push_back(fmt("%.2f", (compute ? r.flops : r.bytes) / 1e9 / e.joules_per_op));
        if (e.method != "counter") ++energy_from_samples;
        if (!least_energy || e.joules_per_op < least_energy->energy->joules_per_op)
          least_energy = &r;
      } else if (energy) {
        for (int i = 0; i < 3; ++i) row.push_back("-");
        if (r.energy) trailer = "energy: " + r.energy->error;
      }
      timed_out += r.timing->timed_out && !by_ci ? 1 : 0;
      timed_out_ci += r.timing->timed_out && by_ci ? 1 : 0;
      clock_dropped += r.timing->clock_dropped ? 1 : 0;
      if (r.variant.origin == origin_kind::source) prev_time[r.block] = tm;
      if (!best || tm < best->timing->median_ms) best = &r;
    } else {
      std::string msg = first_line(r.message);
      if (r.message.find('\n') != std::string::npos || msg.size() > 70) {
        notes.push_back(r.variant.name + " block " + block_text(r.block) + ":\n" + r.message);
        msg = msg.substr(0, 60) + "... [note " + std::to_string(notes.size()) + "]";
      }
      trailer = msg;
    }
    if (many_gpus) {
      // The energy columns may be missing on a row that failed: pad to the header first.
      while (row.size() + 1 < t.header.size()) row.push_back("-");
      row.push_back(r.gpu ? std::to_string(r.gpu->ordinal) : "-");
    }
    if (!r.sanitizer.empty()) trailer += (trailer.empty() ? "" : "; ") + r.sanitizer;
    if (r.resumed) trailer += (trailer.empty() ? "" : "; ") + std::string("(from the resumed run)");
    t.rows.push_back(std::move(row));
    t.trailers.push_back(std::move(trailer));
  }
  t.write(os, opt.markdown);
  if (opt.markdown) os << "\n";
  // The best runtime-compiled variant, for when a library or a copy is the fastest row.
  const result_record* best_source = nullptr;
  for (const auto& r : group)
    if (r.timed() && r.variant.origin == origin_kind::source &&
        (!best_source || r.timing->median_ms < best_source->timing->median_ms))
      best_source = &r;
  if (best && compute) {
    os << "best: " << best->variant.name << " block " << block_text(best->block) << ", "
       << fmt("%.2f", best->tflops()) << " TFLOP/s ("
       << (compute_peak > 0 ? fmt("%.1f", best->tflops() * 1e12 / compute_peak * 100) : "-")
       << "% of the " << fmt("%.1f", compute_peak / 1e12) << " TFLOP/s " << peak_name << " peak)";
    if (const result_record* b = base_of(*best))
      os << ", " << fmt("%.2f", b->timing->median_ms / best->timing->median_ms) << "x of "
         << b->variant.name;
    os << ties_text(group, *best);
    if (best_source && best_source != best) {
      os << "; best compiled here: " << best_source->variant.name << " block "
         << block_text(best_source->block) << ", " << fmt("%.2f", best_source->tflops())
         << " TFLOP/s";
      if (const result_record* b = base_of(*best_source))
        os << ", " << fmt("%.2f", b->timing->median_ms / best_source->timing->median_ms) << "x of "
           << b->variant.name;
    }
    os << "\n";
  } else if (best) {
    os << "best: " << best->variant.name << " block " << block_text(best->block) << ", "
       << fmt("%.1f", best->gbps()) << " GB/s (" << fmt("%.1f", best->gbps() * 1e9 / peak * 100)
       << "% of the " << fmt("%.0f", peak / 1e9) << " GB/s peak)";
    if (const result_record* b = base_of(*best))
      os << ", " << fmt("%.2f", b->timing->median_ms / best->timing->median_ms) << "x of "
         << b->variant.name;
    os << ties_text(group, *best);
    if (best_source && best_source != best) {
      os << "; best compiled here: " << best_source->variant.name << " block "
         << block_text(best_source->block) << ", " << fmt("%.1f", best_source->gbps()) << " GB/s";
      if (const result_record* b = base_of(*best_source))
        os << ", " << fmt("%.2f", b->timing->median_ms / best_source->timing->median_ms) << "x of "
           << b->variant.name;
    }
    os << "\n";
  }
  if (least_energy) {
    const energy_stats& e = *least_energy->energy;
    os << "least energy: " << least_energy->variant.name << " block "
       << block_text(least_energy->block) << ", " << fmt("%.2f", e.joules_per_op * 1e6)
       << " uJ/op at " << fmt("%.0f", e.watts) << " W (" << fmt("%.2f", e.us_per_op)
       << " us/op back to back, no L2 flush)";
    if (best && best != least_energy && best->has_energy())
      os << "; the fastest, " << best->variant.name << " block " << block_text(best->block)
         << ", takes " << fmt("%.2f", best->energy->joules_per_op * 1e6) << " uJ/op";
    os << "\n";
  }
  if (energy_from_samples > 0)
    os << "~ " << energy_from_samples
       << " row(s) from NVML's power samples, not its energy counter (the counter is missing or "
          "did not move; --json has the reason)\n";
  if (untimed > 0)
    os << untimed << " row(s) validated under compute-sanitizer, not timed (a sanitized run is "
       << "orders of magnitude slower)\n";
  if (timed_out > 0)
    os << "* " << timed_out
       << " row(s) stopped sampling at the timeout before the noise fell under "
       << "the limit (--timeout, --max-noise)\n";
  if (timed_out_ci > 0)
    os << "* " << timed_out_ci << " row(s) stopped at the timeout or the last placement before "
       << "their 95% interval was within the limit (--timeout, --max-placements, --max-ci)\n";
  if (partly_empty > 0)
    os << "occ: resident blocks per SM / theoretical occupancy (" << device.max_threads_per_sm
       << " threads per SM); " << partly_empty
       << " row(s) leave part of the SM's thread slots empty\n";
  if (clock_dropped > 0)
    os << "! " << clock_dropped << " row(s) saw the SM clock drop by more than 5% while sampling\n";
  for (std::size_t i = 0; i < notes.size(); ++i)
    os << "[note " << i + 1 << "] " << notes[i] << "\n";
}

void print_profile_table(std::ostream& os, const std::vector<result_record>& results,
                         const profile_run& run, bool markdown) {
  if (!run.requested) return;
  os << "\n"
     << (markdown ? "### " : "== ") << "profile: Nsight Compute, one more run of each passed row ("
     << run.tool << ")\n"
     << (markdown ? "\n" : "");
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
    t.write(os, markdown);
    if (markdown) os << "\n";
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
