#include "report/table.hpp"

#include "report/text_table.hpp"

#include "families/data_family.hpp"

#include "cuda/occupancy.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

namespace kl {
namespace {

std::string block_text(unsigned b) { return b == 0 ? "-" : std::to_string(b); }

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

std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// The width of the name column: the longest name, at least `floor`.
template <typename Range, typename Name>
std::size_t name_width(const Range& rows, Name name, std::size_t floor = 24) {
  std::size_t w = floor;
  for (const auto& r : rows) w = std::max(w, name(r).size() + 2);
  return w;
}

// "12", or "24-26" when the instantiations differ; "-" without a resource report.
std::string register_range(const nvrtc::compile_result& r) {
  int rmin = 1 << 30, rmax = 0;
  for (const auto& kv : r.resources) {
    rmin = std::min(rmin, kv.second.registers);
    rmax = std::max(rmax, kv.second.registers);
  }
  if (rmax == 0) return "-";
  return rmin == rmax ? std::to_string(rmax) : std::to_string(rmin) + "-" + std::to_string(rmax);
}

std::string local_time(std::time_t t) {
  char buf[32];
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// Milliseconds with a decimal where it matters: a cache hit takes a fraction of one.
std::string milliseconds(double ms) { return fmt(ms < 10 ? "%.1f" : "%.0f", ms); }

std::string human_bytes(double b) {
  if (b >= 1073741824.0) return fmt("%.2f GiB", b / 1073741824.0);
  if (b >= 1048576.0) return fmt("%.2f MiB", b / 1048576.0);
  if (b >= 1024.0) return fmt("%.1f KiB", b / 1024.0);
  return fmt("%.0f B", b);
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

void print_compile_table(std::ostream& os, const std::vector<compile_record>& compiles,
                         const std::string& arch) {
  os << "compiled for " << arch << "\n";
  const std::size_t nw = name_width(
      compiles, [](const compile_record& c) { return c.entry->descriptor.qualified_name(); });
  os << col("variant", nw) << col("instances", 10, true) << col("cache", 7, true)
     << col("compile ms", 12, true) << col("regs", 9, true) << col("spill B", 9, true)
     << "  status\n";
  std::vector<std::string> errors;
  for (const auto& c : compiles) {
    long spill = 0;
    for (const auto& kv : c.result.resources)
      spill = std::max(spill, kv.second.spill_store_bytes + kv.second.spill_load_bytes);
    const std::string regs = register_range(c.result);
    const bool ok = c.error.empty();
    os << col(c.entry->descriptor.qualified_name(), nw)
       << col(std::to_string(c.result.lowered_names.size()), 10, true)
       << col(to_string(c.cache), 7, true) << col(milliseconds(c.milliseconds), 12, true)
       << col(regs, 9, true) << col(regs != "-" ? std::to_string(spill) : "-", 9, true) << "  "
       << (ok ? "ok" : "FAILED") << "\n";
    if (!ok) errors.push_back(c.error);
  }
  for (const auto& e : errors) os << "\n" << e << (e.empty() || e.back() == '\n' ? "" : "\n");
}

void print_resources(std::ostream& os, const std::vector<compile_record>& compiles,
                     const std::string& arch, bool markdown) {
  // A device newer than kernlab's table gets its resources without an occupancy, never another
  // architecture's.
  const std::optional<sm_limits> limits = find_limits(arch);
  if (limits)
    os << "resources for " << arch
       << " (from ptxas; occupancy is theoretical: " << limits->max_threads << " threads, "
       << limits->max_blocks << " blocks, " << limits->registers << " registers, "
       << limits->shared_bytes / 1024 << " KiB of shared memory per SM)\n";
  else
    os << "resources for " << arch << " (from ptxas; no occupancy: kernlab has no SM limits for "
       << arch << ")\n";
  text_table t;
  t.header = {"variant", "block",   "dtype",     "op",        "regs",      "smem B",
              "stack B", "spill B", "blocks/SM", "occupancy", "limited by"};
  t.right = {false, true, false, false, true, true, true, true, true, true, false};
  std::vector<std::string> errors;
  for (const auto& c : compiles) {
    if (!c.error.empty()) {
      errors.push_back(c.error);
      continue;
    }
    for (const auto& inst : c.instances) {
      auto it = c.result.resources.find(inst.name_expression);
      if (it == c.result.resources.end()) continue;
      const auto& r = it->second;
      const auto occ =
          limits ? estimate_occupancy(r.registers, static_cast<std::size_t>(r.static_shared_bytes),
                                      inst.block, *limits)
                 : occupancy_estimate{};
      const std::string& target = c.entry->descriptor.target;
      t.rows.push_back({c.entry->descriptor.name + (target.empty() ? "" : " (" + target + ")"),
                        std::to_string(inst.block), inst.dtype, inst.op,
                        std::to_string(r.registers), std::to_string(r.static_shared_bytes),
                        std::to_string(r.stack_frame_bytes),
                        std::to_string(r.spill_store_bytes + r.spill_load_bytes),
                        limits ? std::to_string(occ.blocks_per_sm) : "-",
                        limits ? fmt("%.0f%%", occ.fraction * 100) : "-",
                        limits && occ.fraction < 1.0 ? occ.limiter : ""});
      t.trailers.emplace_back();
    }
  }
  t.write(os, markdown);
  for (const auto& e : errors) os << "\n" << e << (e.empty() || e.back() == '\n' ? "" : "\n");
}

void print_compile_summary(std::ostream& os, const compile_summary& s) {
  auto count = [](std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
  };
  if (s.files == 0 && s.failed == 0) {
    os << "compile: no kernel file to compile\n";
    return;
  }
  os << "compile: " << count(s.files, "file", "files") << " on "
     << count(s.jobs, "thread", "threads") << ", ";
  if (s.cache_dir.empty())
    os << "cache off";
  else
    os << count(s.hits, "hit", "hits") << ", " << count(s.misses, "miss", "misses");
  if (s.failed) os << ", " << s.failed << " failed";
  os << ", " << milliseconds(s.wall_ms) << " ms wall";
  if (!s.cache_dir.empty()) os << " (cache " << s.cache_dir << ")";
  os << "\n";
}

compile_snapshot snapshot_of(const compile_record& c) {
  compile_snapshot s;
  s.name = c.entry->descriptor.qualified_name();
  s.instances = c.result.lowered_names.size();
  s.cache = c.cache;
  s.milliseconds = c.milliseconds;
  s.registers = register_range(c.result);
  s.error = c.error;
  return s;
}

void print_compile_changes(std::ostream& os, const std::vector<compile_change>& changes,
                           const std::string& arch) {
  if (changes.empty()) return;
  // "12" when nothing changed, "12 -> 14" when it did; "(new)" for a file the last round lacked.
  auto change = [](const std::optional<std::string>& was, const std::string& now) {
    if (!was) return now + " (new)";
    return *was == now ? now : *was + " -> " + now;
  };
  auto status = [](const compile_snapshot& s) {
    return std::string(s.error.empty() ? "ok" : "FAILED");
  };
  os << "compiled for " << arch << "\n";
  const std::size_t nw = name_width(changes, [](const compile_change& c) { return c.now.name; });
  os << col("variant", nw) << col("instances", 10, true) << col("cache", 7, true)
     << col("compile ms", 12, true) << col("regs", 14, true) << "  status\n";
  std::vector<std::string> errors;
  for (const auto& c : changes) {
    const auto& was = c.before;
    os << col(c.now.name, nw) << col(std::to_string(c.now.instances), 10, true)
       << col(to_string(c.now.cache), 7, true) << col(milliseconds(c.now.milliseconds), 12, true)
       << col(change(was ? std::optional<std::string>(was->registers) : std::nullopt,
                     c.now.registers),
              14, true)
       << "  "
       << change(was ? std::optional<std::string>(status(*was)) : std::nullopt, status(c.now))
       << "\n";
    if (!c.now.error.empty()) errors.push_back(c.now.error);
  }
  for (const auto& e : errors) os << "\n" << e << (e.empty() || e.back() == '\n' ? "" : "\n");
}

void print_row_changes(std::ostream& os, const std::vector<row_change>& rows) {
  if (rows.empty()) return;
  const std::size_t nw = name_width(rows, [](const row_change& r) { return r.now.variant.name; });
  std::size_t cw = 10;
  for (const auto& r : rows) cw = std::max(cw, r.now.config.describe().size() + 2);
  os << col("variant", nw) << col("block", 6, true) << "  " << col("config", cw)
     << col("was us", 10, true) << col("now us", 10, true) << col("change", 9, true)
     << "  status\n";
  std::vector<std::string> notes;
  for (const auto& r : rows) {
    const result_record* was = r.before ? &*r.before : nullptr;
    const bool was_timed = was && was->timed();
    const bool now_timed = r.now.timed();
    std::string status = to_string(r.now.status);
    if (!was)
      status += " (new)";
    else if (was->status != r.now.status)
      status = std::string(to_string(was->status)) + " -> " + status;
    os << col(r.now.variant.name, nw) << col(block_text(r.now.block), 6, true) << "  "
       << col(r.now.config.describe(), cw)
       << col(was_timed ? fmt("%.2f", was->timing->median_ms * 1e3) : "-", 10, true)
       << col(now_timed ? fmt("%.2f", r.now.timing->median_ms * 1e3) : "-", 10, true)
       << col(was_timed && now_timed
                  ? fmt("%+.1f%%", (r.now.timing->median_ms / was->timing->median_ms - 1) * 100)
                  : "-",
              9, true)
       << "  " << status << "\n";
    if (!now_timed && !r.now.message.empty())
      notes.push_back(r.now.variant.name + " block " + block_text(r.now.block) + ": " +
                      r.now.message);
  }
  for (const auto& n : notes) os << n << (n.back() == '\n' ? "" : "\n");
}

void print_cache_info(std::ostream& os, const nvrtc::cache_info& info) {
  os << "compile cache: " << info.dir.string() << "\n";
  if (!info.exists) {
    os << "  empty (the folder does not exist yet)\n";
    return;
  }
  os << "  entries:    " << info.entries << " (" << human_bytes(static_cast<double>(info.bytes))
     << " of the " << human_bytes(static_cast<double>(info.max_bytes))
     << " cap; the least recently used go first)";
  if (info.damaged) os << ", " << info.damaged << " damaged (rebuilt when next needed)";
  os << "\n";
  if (info.not_files)
    os << "  not files:  " << info.not_files
       << " folder(s), FIFO(s) or device(s) at an entry's name: skipped unread, replaced when "
          "next stored ('kernlab cache prune' removes them)\n";
  if (info.entries > info.damaged)
    os << "  saves:      " << fmt("%.1f", info.compile_ms / 1e3)
       << " s of NVRTC time when every entry is used once\n";
  if (info.entries)
    os << "  written:    " << local_time(info.oldest) << " .. " << local_time(info.newest) << "\n";
  if (info.temporary_files)
    os << "  temporary:  " << info.temporary_files
       << " file(s) left by an interrupted write ('kernlab cache clear' removes them)\n";
  const auto& c = info.counters;
  const std::uint64_t lookups = c.hits + c.misses;
  os << "  counters:   " << c.runs << " run(s), " << c.hits << " hit(s), " << c.misses
     << " miss(es)";
  if (lookups)
    os << " (" << fmt("%.0f", 100.0 * static_cast<double>(c.hits) / static_cast<double>(lookups))
       << "% hits)";
  os << ", " << c.stores << " store(s), " << c.corrupt << " damaged entry(ies) rebuilt\n";
}

void print_prune_result(std::ostream& os, const nvrtc::prune_result& r, std::uint64_t limit,
                        const std::filesystem::path& dir) {
  os << "removed " << r.removed << " entr" << (r.removed == 1 ? "y" : "ies") << " ("
     << human_bytes(static_cast<double>(r.removed_bytes)) << "), kept " << r.kept << " ("
     << human_bytes(static_cast<double>(r.kept_bytes)) << ", at most "
     << human_bytes(static_cast<double>(limit)) << ") in " << dir.string() << "\n";
}

void print_list(std::ostream& os, const registry& reg, const std::string& family) {
  // A tunable file is one line here, with its number of points: hundreds of them would bury
  // the rest (--list --variant FILE lists them). Its named points are variants of the sequence,
  // each with a line of its own.
  std::vector<const registry_entry*> all;
  std::map<std::string, std::size_t> points;  // by file
  for (const auto& e : reg.entries()) {
    const variant_descriptor& d = e.descriptor;
    if (!family.empty() && d.family != family) continue;
    // Of the unnamed points, the file's first point stands for the file (the collapsed line).
    if (!d.is_point() || points[d.origin_path]++ == 0 || d.named_point) all.push_back(&e);
  }
  print_list(os, reg, all, points);
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

// One line per family of the listed entries: its axes with their defaults (and a data family's
// limits and description file), its dtypes and its ops.
void print_families(std::ostream& os, const registry& reg,
                    const std::vector<const registry_entry*>& entries) {
  std::vector<std::string> names;
  for (const auto* e : entries)
    if (std::find(names.begin(), names.end(), e->descriptor.family) == names.end())
      names.push_back(e->descriptor.family);
  for (const auto& name : names) {
    const family* f = reg.families().find(name);
    if (!f) {
      const std::string broken = reg.families().broken(name);
      if (!broken.empty()) os << "family " << name << ": ERROR " << broken << "\n";
      continue;
    }
    os << "family " << name << ": ";
    if (f->shape_rank() == 0) {
      os << "size N (--size)";
    } else {
      const auto vars = f->shape_variables();
      const auto defaults = f->default_shape();
      const auto* data = dynamic_cast<const data_family*>(f);
      os << "axes ";
      for (std::size_t i = 0; i < f->shape_rank(); ++i) {
        os << (i ? " x " : "") << vars.at(i) << "=" << defaults.at(i);
        if (data) os << " [" << data->spec().axes[i].min << ".." << data->spec().axes[i].max << "]";
      }
      os << " (--shape";
      if (f->shape_rank() == 1) os << " or --size";
      os << ")";
    }
    for (const real_axis& a : f->real_axes())
      os << ", " << a.name << "=" << a.default_value << " [" << a.min << ".." << a.max
         << "] (--axis " << a.name << "=...)";
    os << "; dtypes " << joined(f->dtypes());
    if (!f->ops().empty()) os << "; ops " << joined(f->ops());
    if (const auto* data = dynamic_cast<const data_family*>(f)) {
      os << "; " << data->spec().path;
      if (!data->spec().summary.empty()) os << "\n    " << data->spec().summary;
    }
    os << "\n";
  }
}

}  // namespace

void print_list(std::ostream& os, const registry& reg,
                const std::vector<const registry_entry*>& entries,
                const std::map<std::string, std::size_t>& collapsed) {
  print_families(os, reg, entries);
  // A collapsed file's first point is listed as the file; a named point under its own name.
  const auto collapsed_file = [&](const variant_descriptor& d) {
    return d.is_point() && collapsed.count(d.origin_path) > 0;
  };
  const std::size_t nw = name_width(entries, [&](const registry_entry* e) {
    const variant_descriptor& d = e->descriptor;
    // A collapsed file has a line of its own, whose name may be longer than its points'.
    const std::string file = d.family + "." + d.tunable_file;
    return collapsed_file(d) && file.size() > d.qualified_name().size() ? file : d.qualified_name();
  });
  auto blocks_of = [](const variant_descriptor& d) {
    std::string blocks;
    for (auto b : d.blocks) blocks += (blocks.empty() ? "" : ",") + std::to_string(b);
    return blocks.empty() ? std::string("n/a") : blocks;
  };
  std::size_t bw = 20;
  for (const auto* e : entries) bw = std::max(bw, blocks_of(e->descriptor).size() + 2);
  os << col("variant", nw) << col("blocks", bw) << "origin\n";
  std::set<std::string> files_shown;
  for (const auto* e : entries) {
    const auto& d = e->descriptor;
    if (collapsed_file(d)) {
      // The file's line, before its first listed point (named points come first).
      if (files_shown.insert(d.origin_path).second)
        os << col(d.family + "." + d.tunable_file, nw) << col("tunable", bw) << d.origin_text()
           << "\n    " << collapsed.at(d.origin_path) << " points: kernlab tune --variant "
           << d.tunable_file << " searches them; --list --variant " << d.tunable_file
           << " lists them\n";
      if (!d.named_point) continue;
    }
    std::string point;  // a named point's values: its name does not say them
    for (const auto& [name, v] : d.named_point ? d.point : decltype(d.point){})
      point += (point.empty() ? " (" : ", ") + name + "=" + std::to_string(v);
    os << col(d.qualified_name(), nw) << col(blocks_of(d), bw) << d.origin_text()
       << (point.empty() ? "" : point + ")") << (d.is_baseline ? "  (baseline)" : "") << "\n";
    if (!e->error.empty())
      os << "    ERROR " << e->error << "\n";
    else if (!d.summary.empty())
      os << "    " << d.summary << "\n";
  }
  for (const auto& w : reg.warnings()) os << "warning: " << w << "\n";
}

}  // namespace kl
