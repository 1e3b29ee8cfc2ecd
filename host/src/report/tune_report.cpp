#include "report/tune_report.hpp"

#include "core/utf8.hpp"
#include "report/selector_export.hpp"
#include "report/text_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

namespace kl {
namespace {

// Throughput in the row's own unit (TFLOP/s or GB/s) and as a fraction of the device's peak.
std::pair<double, double> throughput(const result_record& r, const cuda::device_info& d) {
  if (r.compute_bound()) {
    const double peak = d.peak_flops_for(r.roofline);
    return {r.tflops(), peak > 0 ? r.tflops() * 1e12 / peak : 0};
  }
  return {r.gbps(), d.peak_bandwidth() > 0 ? r.gbps() * 1e9 / d.peak_bandwidth() : 0};
}

std::string unit_of(const tune::tune_outcome& t) {
  for (const auto& e : t.evaluations)
    if (!e.record.roofline.empty()) return e.record.compute_bound() ? "TFLOP/s" : "GB/s";
  return "GB/s";
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// One line that says why a point failed: a compile error's first line that names an error (the
// message's own first line is only "compile error:"), else the message's first line.
std::string why_failed(const std::string& message) {
  std::istringstream in(message);
  std::string line;
  std::getline(in, line);
  const std::string head = line;
  while (std::getline(in, line))
    if (line.find("error") != std::string::npos) return head + " " + line;
  return head;
}

std::string micros(double ms) { return fmt(ms * 1e3 < 100 ? "%.2f" : "%.1f", ms * 1e3); }

// Joules per operation in microjoules, with the precision micros() gives times.
std::string microjoules(double j) { return fmt(j * 1e6 < 100 ? "%.2f" : "%.1f", j * 1e6); }

bool any_energy(const tune::tune_outcome& t) {
  for (const auto& e : t.evaluations)
    if (e.record.energy) return true;
  return false;
}

// The library's row a point is compared with: with several GPUs (--devices), the one measured
// on the point's own GPU, so that each ratio comes from one GPU; else the first timed one.
const result_record* baseline_of(const tune::tune_outcome& t, const result_record* on = nullptr) {
  std::set<std::string> gpus;
  for (const auto& b : t.baselines)
    if (b.gpu) gpus.insert(b.gpu->uuid);
  for (const auto& b : t.baselines) {
    if (!b.timed()) continue;
    if (gpus.size() > 1 && on && (!on->gpu || !b.gpu || b.gpu->uuid != on->gpu->uuid)) continue;
    return &b;
  }
  return nullptr;
}

// Whether a tune's points were measured on more than one GPU (--devices).
bool many_gpus(const tune::tune_outcome& t) {
  std::set<std::string> gpus;
  for (const auto& e : t.evaluations)
    if (e.record.gpu) gpus.insert(e.record.gpu->uuid);
  return gpus.size() > 1;
}

// `text` as it may stand in a `//` comment of the generated header: valid UTF-8, and on its
// line. A newline would end the comment (and put the rest in the code), and a backslash at the
// end of the line, or a trigraph "??/" for one, would continue it onto the next line: a text
// with a control character, a backslash or "??" is written as a C string ("a\nb"), which ends
// in its quote.
std::string comment(const std::string& text) {
  const std::string s = utf8_valid(text);
  const bool plain =
      s.find("??") == std::string::npos && std::none_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u < 0x20 || u == 0x7F || c == '\\';
      });
  if (plain) return s;
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"' || c == '?')
      out += std::string("\\") + c;
    else if (c == '\n' || c == '\r' || c == '\t')
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
    else if (u < 0x20 || u == 0x7F)  // three octal digits: the next character is never one
      out += {'\\', static_cast<char>('0' + (u >> 6)), static_cast<char>('0' + (u >> 3 & 7)),
              static_cast<char>('0' + (u & 7))};
    else
      out += c;
  }
  return out + "\"";
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The tunes by file, in the order the files were first tuned: each file's tunes that found a
// best point (none for a file where nothing passed).
std::vector<std::pair<std::string, std::vector<const tune::tune_outcome*>>> by_file(
    const std::vector<tune::tune_outcome>& tunes) {
  std::vector<std::pair<std::string, std::vector<const tune::tune_outcome*>>> out;
  for (const auto& t : tunes) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const auto& f) { return f.first == t.space->file; });
    if (it == out.end()) it = out.insert(out.end(), {t.space->file, {}});
    if (t.best()) it->second.push_back(&t);
  }
  return out;
}

}  // namespace

void print_tune_best(std::ostream& os, const tune::tune_outcome& t, const cuda::device_info& d) {
  const tune::evaluation* best = t.best();
  const std::string what = t.space->family + "." + t.space->name + " " + t.config.describe() +
                           (t.model.empty() ? "" : " on " + t.model);
  if (!best) {
    os << "best: none of the " << t.evaluations.size() << " evaluated points of " << what
       << " passed\n";
    return;
  }
  const auto [value, peak] = throughput(best->record, d);
  const variant_descriptor& v = t.space->candidates[best->point].entry->descriptor;
  os << "best: " << what << (t.goal == tune::objective::energy ? " (least energy)" : "") << ": "
     << tune::describe(t.space->candidates[best->point])
     << (v.named_point ? " (" + v.name + ")" : "") << ", " << micros(best->record.timing->median_ms)
     << " us, " << fmt("%.1f", value) << " " << unit_of(t) << " (" << fmt("%.1f", peak * 100)
     << "% of peak)";
  if (best->record.has_energy())
    os << ", " << microjoules(best->record.energy->joules_per_op) << " uJ/op at "
       << fmt("%.0f", best->record.energy->watts) << " W";
  if (const result_record* b = baseline_of(t, &best->record))
    os << ", " << fmt("%.2f", b->timing->median_ms / best->record.timing->median_ms) << "x "
       << b->variant.name;
  if (many_gpus(t) && best->record.gpu) os << "; measured on GPU " << best->record.gpu->ordinal;
  os << "\n";
  // How soon the search got there, and where it started.
  os << "found: within 1% of the best at evaluation " << t.found_at() << " of "
     << t.evaluations.size();
  if (t.replayed_from.empty())  // a replay measures nothing: its wall time says nothing
    os << ", after " << fmt("%.1f", t.found_after_s()) << " s of " << fmt("%.1f", t.seconds)
       << " s";
  if (!t.started_from.empty()) {
    os << " (a warm start from the fastest points of ";
    for (std::size_t i = 0; i < t.started_from.size(); ++i)
      os << (i ? " and " : "") << t.started_from[i];
    os << ")";
  }
  os << "\n";
  // The points a rerun could rank above the best: full-fidelity points whose intervals overlap.
  if (t.goal == tune::objective::time) {
    std::vector<std::string> ties;
    for (const auto& e : t.evaluations)
      if (e.point != best->point && e.level == tune::fidelity::full && e.record.timed() &&
          intervals_overlap(*e.record.timing, *best->record.timing))
        ties.push_back(tune::describe(t.space->candidates[e.point]));
    std::sort(ties.begin(), ties.end());
    ties.erase(std::unique(ties.begin(), ties.end()), ties.end());
    if (!ties.empty()) {
      os << "tied with the best within the intervals: " << ties.size() << " other point(s): ";
      for (std::size_t i = 0; i < std::min<std::size_t>(ties.size(), 4); ++i)
        os << (i ? "; " : "") << ties[i];
      if (ties.size() > 4) os << "; and " << ties.size() - 4 << " more";
      os << "\n";
    }
  }
  // Under the energy objective, the fastest point too: what the energy costs in time.
  if (t.goal == tune::objective::energy) {
    tune::tune_outcome by_time = t;
    by_time.goal = tune::objective::time;
    const tune::evaluation* fastest = by_time.best();
    if (fastest && fastest->point != best->point) {
      os << "fastest: " << tune::describe(t.space->candidates[fastest->point]) << ", "
         << micros(fastest->record.timing->median_ms) << " us";
      if (fastest->record.has_energy())
        os << ", " << microjoules(fastest->record.energy->joules_per_op) << " uJ/op at "
           << fmt("%.0f", fastest->record.energy->watts) << " W";
      os << "\n";
    }
  }
}

void print_tuning_space(std::ostream& os, const tune::tuning_space& s) {
  os << s.family << "." << s.name << " (" << s.file << "): " << s.candidates.size()
     << " points over";
  for (const auto& p : s.space.parameters) os << " " << p.name << "(" << p.values.size() << ")";
  os << "\n";
  for (const auto& [why, n] : s.turned_down)
    os << "  left out: " << n << " point(s), " << why << "\n";
}

void print_tune_table(std::ostream& os, const tune::tune_outcome& t, const cuda::device_info& d,
                      const table_options& opt) {
  const auto& params = t.space->space.parameters;
  const std::string unit = unit_of(t);
  text_table tab;
  tab.header = {"rank"};
  for (const auto& p : params) tab.header.push_back(p.name);
  for (const char* h : {"status", "median us", "ci95", "noise"}) tab.header.push_back(h);
  tab.header.push_back(unit);
  tab.header.push_back("% peak");
  const bool energy = any_energy(t);
  if (energy)
    for (const char* h : {"uJ/op", "W"}) tab.header.push_back(h);
  // x best: in the objective's terms (time, or energy per operation).
  tab.header.push_back("x best");
  const result_record* base = baseline_of(t);
  if (base) tab.header.push_back("x " + base->variant.name);
  // --devices: which GPU measured each point.
  const bool gpu_column = many_gpus(t);
  if (gpu_column) tab.header.push_back("gpu");
  tab.right.assign(tab.header.size(), true);
  tab.right[1 + params.size()] = false;  // status

  // Ranked rows by the objective (fastest, or least energy per operation) first, then the timed
  // rows without a value (an energy tune's points whose energy could not be measured), then the
  // rest in the order they were evaluated.
  const auto goal_of = [&](const tune::evaluation* e) {
    return tune::objective_value(e->record, t.goal);
  };
  const auto ranked = [&](const tune::evaluation* e) {
    return goal_of(e) != std::numeric_limits<double>::infinity();
  };
  std::vector<const tune::evaluation*> order;
  for (const auto& e : t.evaluations) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
    if (ranked(a) != ranked(b)) return ranked(a);
    if (ranked(a)) return goal_of(a) < goal_of(b);
    if (a->record.timed() != b->record.timed()) return a->record.timed();
    return false;
  });
  const tune::evaluation* best = t.best();
  std::size_t rank = 0;
  std::vector<const tune::evaluation*> failures;
  for (const auto* e : order) {
    const result_record& r = e->record;
    if (!r.timed() && r.status != outcome::skipped) failures.push_back(e);
    std::vector<std::string> row = {ranked(e) ? std::to_string(++rank) : "-"};
    const auto& coords = t.space->space.points[e->point];
    for (std::size_t i = 0; i < params.size(); ++i)
      row.push_back(std::to_string(params[i].values[coords[i]]));
    std::string status = to_string(r.status);
    if (e->level == tune::fidelity::brief) status += " (brief)";
    if (e->raced()) status += " (raced)";
    if (e->from_store) status += " *";
    row.push_back(status);
    if (r.timed()) {
      const auto [value, peak] = throughput(r, d);
      row.push_back(micros(r.timing->median_ms));
      row.push_back(r.timing->has_ci() ? "+-" + fmt("%.2f", r.timing->ci_half_width() * 100) + "%"
                                       : "-");
      row.push_back(fmt("%.1f", r.timing->noise * 100) + "%");
      row.push_back(fmt("%.1f", value));
      row.push_back(fmt("%.1f", peak * 100));
      if (energy && r.has_energy()) {
        row.push_back(microjoules(r.energy->joules_per_op) +
                      (r.energy->method == "counter" ? "" : "~"));
        row.push_back(fmt("%.0f", r.energy->watts));
      } else if (energy) {
        row.push_back("-");
        row.push_back("-");
      }
      row.push_back(best && ranked(e) ? fmt("%.2f", goal_of(best) / goal_of(e)) + "x" : "-");
      if (base) {
        const result_record* mine = baseline_of(t, &r);
        row.push_back(mine ? fmt("%.2f", mine->timing->median_ms / r.timing->median_ms) + "x"
                           : "-");
      }
      if (gpu_column) row.push_back(r.gpu ? std::to_string(r.gpu->ordinal) : "-");
      tab.rows.push_back(row);
      // A point the file's `points:` names (a step of the family's sequence) says so, after the
      // row (markdown has no room after a row: its trailer takes the last cell); so does a point
      // whose energy could not be measured.
      const variant_descriptor& v = t.space->candidates[e->point].entry->descriptor;
      std::string trailer = v.named_point && !opt.markdown ? v.name : "";
      if (r.energy && !r.energy->error.empty())
        trailer += (trailer.empty() ? "" : "; ") + ("energy: " + r.energy->error);
      tab.trailers.push_back(trailer);
    } else {
      // A skip's reason beside it; a failure's in the list under the table.
      tab.rows.push_back(row);
      tab.trailers.push_back(r.status == outcome::skipped ? first_line(r.message) : "");
    }
  }
  os << "\n"
     << (opt.markdown ? "### " : "== ") << t.space->family << "." << t.space->name << "  "
     << t.config.describe() << "  (" << t.strategy
     << (t.goal == tune::objective::energy ? ", least energy per operation" : "") << ", "
     << t.evaluations.size() << " evaluated, "
     << (t.replayed_from.empty() ? std::to_string(t.measured()) + " measured in this run"
                                 : "replayed from " + t.replayed_from)
     << ", " << fmt("%.1f", t.seconds) << " s; stopped by " << t.stopped_by << ")\n";
  tab.write(os, opt.markdown);
  bool any_stored = false;
  for (const auto& e : t.evaluations) any_stored = any_stored || e.from_store;
  if (any_stored) os << "*: from the tuning store (measured by an earlier tune)\n";
  if (const std::size_t raced = t.raced())
    os << "(raced): " << raced << " of " << t.evaluations.size()
       << " points were timed only until their interval (ci95) lay wholly above the best so "
          "far's by the --race margin; their figures are as precise as that interval\n";
  for (const auto* e : failures)
    os << "  " << to_string(e->record.status) << " "
       << tune::describe(t.space->candidates[e->point]) << ": " << why_failed(e->record.message)
       << "\n";
  for (const auto& b : t.baselines)
    if (!b.timed())
      os << "  baseline " << b.variant.qualified_name() << ": " << to_string(b.status) << " "
         << first_line(b.message) << "\n";
}

void print_selectors(std::ostream& os, const std::vector<tune::tune_outcome>& tunes) {
  for (const auto& [file, mine] : by_file(tunes))
    if (const std::string line = selector_summary(mine); !line.empty()) os << line << "\n";
}

nlohmann::json tuning_table_json(const std::vector<tune::tune_outcome>& tunes,
                                 const cuda::device_info& d, const run_context& ctx) {
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& t : tunes) {
    nlohmann::json e = {{"variant", t.space->family + "." + t.space->name},
                        {"file", t.space->file},
                        {"strategy", t.strategy},
                        {"objective", tune::to_string(t.goal)},
                        {"budget", t.budget},
                        {"seed", t.seed},
                        {"evaluated", t.evaluations.size()},
                        {"measured", t.measured()},
                        {"seconds", t.seconds},
                        {"stopped_by", t.stopped_by}};
    e["config"] = to_json(t.config);
    if (!t.model.empty()) e["model"] = t.model;  // a tune over several models: one entry each
    std::size_t failed = 0;
    for (const auto& ev : t.evaluations)
      if (!ev.record.timed() && ev.record.status != outcome::skipped) ++failed;
    e["failed"] = failed;
    e["found_at"] = t.found_at();
    e["found_after_s"] = t.found_after_s();
    e["raced"] = t.raced();
    e["warm_start_from"] = t.started_from;
    if (const tune::evaluation* best = t.best()) {
      nlohmann::json values = nlohmann::json::object();
      for (const auto& [name, v] : t.space->candidates[best->point].values) values[name] = v;
      const auto [value, peak] = throughput(best->record, d);
      e["best"] = {{"variant", best->record.variant.qualified_name()},
                   {"values", values},
                   {"fidelity", best->level == tune::fidelity::full ? "full" : "brief"},
                   {"timing", to_json(*best->record.timing)},
                   {best->record.compute_bound() ? "tflops" : "gbps", value},
                   {"fraction_of_peak", peak}};
      if (best->record.energy) e["best"]["energy"] = to_json(*best->record.energy);
      if (const result_record* b = baseline_of(t, &best->record))
        e["baseline"] = {{"variant", b->variant.qualified_name()},
                         {"median_ms", b->timing->median_ms},
                         {"speedup", b->timing->median_ms / best->record.timing->median_ms}};
    } else {
      e["best"] = nullptr;
    }
    entries.push_back(std::move(e));
  }
  // Per file tuned at sizes alone, the header's selector as data: the rule, its table and cells.
  nlohmann::json selectors = nlohmann::json::array();
  for (const auto& [file, mine] : by_file(tunes))
    for (auto& sel : selector_json(file, mine)) selectors.push_back(std::move(sel));
  return {{"format", "kernlab-tuning-table"},
          {"version", 1},
          {"provenance",
           {{"device", d.name},
            {"uuid", d.uuid},
            {"arch", d.arch()},
            {"driver", d.driver_version},
            {"kernlab_version", ctx.kernlab_version},
            {"kernlab_commit", ctx.kernlab_commit},
            {"nvrtc", ctx.nvrtc_version},
            {"date", ctx.date},
            {"command", ctx.command},
            {"timing", to_json(ctx.timing)}}},
          {"tunes", entries},
          {"selectors", selectors}};
}

std::string tuning_header(const std::vector<tune::tune_outcome>& tunes, const cuda::device_info& d,
                          const run_context& ctx) {
  std::ostringstream h;
  h << "// Generated by kernlab tune: the best configuration found for each problem.\n"
    << "// kernlab " << comment(ctx.kernlab_version) << " (commit " << comment(ctx.kernlab_commit)
    << ", NVRTC " << comment(ctx.nvrtc_version) << ") on " << comment(d.name) << " ("
    << comment(d.arch()) << ", driver " << d.driver_version / 1000 << "."
    << d.driver_version % 1000 / 10 << "), " << comment(ctx.date) << "\n"
    << "// command:";
  for (const auto& a : ctx.command) h << " " << comment(a);
  h << "\n#pragma once\n";
  // The tunes of one file together: one table each.
  for (const auto& [file, mine] : by_file(tunes)) {
    if (mine.empty()) {
      h << "\n// " << comment(file) << ": no configuration passed; nothing to export\n";
      continue;
    }
    const tune::tuning_space& s = *mine.front()->space;
    const std::string id = c_identifier(s.family + "_" + s.name);
    const auto axes = named_sizes(mine.front()->config, mine.front()->axis_names);
    h << "\n// " << comment(s.family + "." + s.name) << " (" << comment(file) << "), strategy "
      << comment(mine.front()->strategy) << ", seed " << mine.front()->seed << "\n";
    for (const auto* t : mine) {
      const auto& r = t->best()->record;
      const auto [value, peak] = throughput(r, d);
      h << "//   " << comment(t->config.describe() + (t->model.empty() ? "" : " on " + t->model))
        << ": " << micros(r.timing->median_ms) << " us (median of " << r.timing->samples
        << " samples";
      if (r.timing->has_ci())
        h << ", 95% CI +-" << fmt("%.2f", r.timing->ci_half_width() * 100) << "%";
      h << ", noise " << fmt("%.1f", r.timing->noise * 100) << "%), " << fmt("%.1f", value) << " "
        << (r.compute_bound() ? "TFLOP/s" : "GB/s") << ", " << t->evaluations.size()
        << " points evaluated\n";
    }
    h << "struct " << id << "_config {\n";
    for (const auto& [name, v] : axes) h << "  long long " << c_identifier(name) << ";\n";
    for (const auto& [name, v] : s.candidates.front().values)
      h << "  int " << c_identifier(name) << ";\n";
    h << "};\ninline constexpr " << id << "_config " << id << "_configs[] = {\n";
    for (const auto* t : mine) {
      h << "    {";
      bool first = true;
      for (const auto& [name, v] : named_sizes(t->config, t->axis_names)) {
        h << (first ? "" : ", ") << v;
        first = false;
      }
      for (const auto& [name, v] : s.candidates[t->best()->point].values) h << ", " << v;
      h << "},  // " << comment(t->config.describe() + (t->model.empty() ? "" : " on " + t->model))
        << "\n";
    }
    h << "};\n";
    write_selector(h, id, mine);
    h << "// " << comment(mine.front()->config.describe()) << ":\n";
    for (const auto& [name, v] : s.candidates[mine.front()->best()->point].values)
      h << "#define " << upper(id) << "_" << c_identifier(name) << " " << v << "\n";
  }
  return h.str();
}

}  // namespace kl

namespace kl {

namespace {

// T4's word for why a configuration has no valid time ("correct" when it has one).
const char* t4_invalidity(const result_record& r) {
  switch (r.status) {
    case outcome::passed: return "correct";
    case outcome::wrong_result: return "correctness";
    case outcome::timeout: return "timeout";
    case outcome::skipped:
      return "constraints";  // the device or the file's requirements turn it down
    case outcome::failed: return r.message.rfind("compile error", 0) == 0 ? "compile" : "runtime";
    case outcome::crashed:
    case outcome::suspect: return "runtime";
  }
  return "runtime";
}

}  // namespace

nlohmann::json t4_results_json(const std::vector<tune::tune_outcome>& tunes) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& t : tunes) {
    const std::string problem = t.config.describe();
    for (const auto& e : t.evaluations) {
      const result_record& r = e.record;
      nlohmann::json configuration = nlohmann::json::object();
      for (const auto& [name, v] : t.space->candidates[e.point].values) configuration[name] = v;
      nlohmann::json runtimes = nlohmann::json::array();
      if (r.timed()) {
        if (!r.timing->samples_ms.empty())
          for (double ms : r.timing->samples_ms) runtimes.push_back(ms);
        else
          runtimes.push_back(r.timing->median_ms);  // without --samples, the median stands in
      }
      nlohmann::json measurements = {
          {{"name", "problem"}, {"value", problem}, {"unit", ""}},
          {{"name", "variant"}, {"value", r.variant.qualified_name()}, {"unit", ""}},
          {{"name", "fidelity"},
           {"value", e.level == tune::fidelity::full ? "full" : "brief"},
           {"unit", ""}},
          // When the point came back, since the search began: a time-to-quality curve.
          {{"name", "elapsed"}, {"value", e.at_s}, {"unit", "s"}}};
      if (e.raced()) measurements.push_back({{"name", "raced"}, {"value", 1}, {"unit", ""}});
      if (r.timed()) {
        measurements.push_back({{"name", "time"}, {"value", r.timing->median_ms}, {"unit", "ms"}});
        if (r.timing->has_ci()) {
          measurements.push_back(
              {{"name", "time_ci95_low"}, {"value", r.timing->ci_low_ms}, {"unit", "ms"}});
          measurements.push_back(
              {{"name", "time_ci95_high"}, {"value", r.timing->ci_high_ms}, {"unit", "ms"}});
        }
        if (r.flops > 0)
          measurements.push_back(
              {{"name", "throughput"}, {"value", r.tflops()}, {"unit", "TFLOP/s"}});
        else
          measurements.push_back({{"name", "throughput"}, {"value", r.gbps()}, {"unit", "GB/s"}});
      }
      if (!r.timed() && !r.message.empty())
        measurements.push_back({{"name", "error"}, {"value", first_line(r.message)}, {"unit", ""}});
      results.push_back({{"configuration", configuration},
                         {"objectives", {"time"}},
                         {"times",
                          {{"compilation_time", r.compile_ms},
                           {"runtimes", runtimes},
                           {"validation", r.validate_ms}}},
                         {"invalidity", t4_invalidity(r)},
                         {"correctness", r.status == outcome::wrong_result ? 0 : 1},
                         {"measurements", measurements}});
    }
  }
  return {{"schema_version", "1.0.0"},
          {"metadata", {{"timeunit", "milliseconds"}, {"producer", "kernlab tune --t4"}}},
          {"results", results}};
}

}  // namespace kl
