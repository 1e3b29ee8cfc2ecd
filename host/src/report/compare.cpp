#include "report/exports.hpp"

#include "report/results_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kl {
namespace {

using nlohmann::json;

// `text` padded with spaces to `width` columns, on the left (numbers) or on the right (names).
std::string pad(const std::string& text, std::size_t width, bool right_align = true) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right_align ? fill + text : text + fill;
}

// printf's formatting of one number: the result is never cut, however large the number.
std::string fmt(const char* format, double v) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, format, v);
  if (n < static_cast<int>(sizeof buf)) return buf;
  std::string out(static_cast<std::size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, v);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// Each record's key. A key that repeats within one file is a row measured on several GPUs
// (--devices runs the baselines on every GPU): each copy is told apart by its GPU's ordinal,
// so two such files pair the baselines GPU by GPU, and none is lost as a duplicate.
std::vector<std::string> keys_of(const json& records) {
  std::vector<std::string> keys;
  std::map<std::string, int> count;
  for (const auto& r : records) ++count[keys.emplace_back(record_key(r))];
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (count[keys[i]] < 2) continue;
    const json& r = records[i];
    const auto g = r.find("gpu");
    keys[i] += g != r.end() && g->is_object() && g->contains("ordinal")
                   ? " on GPU " + g->at("ordinal").dump()
                   : " #" + std::to_string(i);
  }
  return keys;
}

}  // namespace

std::string results_device_name(const json& results) {
  const auto r = results.find("reproducibility");
  if (r == results.end() || !r->is_object()) return "";
  const auto d = r->find("device");
  if (d == r->end() || !d->is_object()) return "";
  const auto n = d->find("name");
  return n != d->end() && n->is_string() ? n->get<std::string>() : "";
}

namespace {

// What a pair of timed records says: the change of the median, and whether it is one.
struct verdict {
  bool comparable = false;   // a positive, finite old median and a finite new one
  double change = 0;         // (new - old) / old
  bool changed = false;      // beyond what a rerun moves
  bool by_interval = false;  // decided on both rows' intervals (else on their noise)
};

double number_or(const json& t, const char* key, double fallback) {
  const auto it = t.find(key);
  return it != t.end() && it->is_number() ? it->get<double>() : fallback;
}

// A row changed when the two intervals lie apart: each says where a rerun of its row lands, so
// apart means more than a rerun moves. Records without an interval (a sanitized row, one of
// fewer than 6 samples) fall back on the noise: a change larger than both runs' relative spread.
verdict verdict_of(const json& o, const json& n) {
  verdict v;
  const double a = o.at("median_us"), b = n.at("median_us");
  v.comparable = a > 0 && std::isfinite(a) && std::isfinite(b);
  if (!v.comparable) return v;
  v.change = (b - a) / a;
  const double a_low = number_or(o, "ci_low_us", 0), a_high = number_or(o, "ci_high_us", 0);
  const double b_low = number_or(n, "ci_low_us", 0), b_high = number_or(n, "ci_high_us", 0);
  v.by_interval = a_high > 0 && b_high > 0;
  if (v.by_interval)
    v.changed = b_low > a_high || b_high < a_low;
  else
    v.changed = std::fabs(v.change) > std::max(number_or(o, "noise", 0), number_or(n, "noise", 0));
  return v;
}

// "+-0.31%": an interval's larger half relative to its median; "-" without one.
std::string half_width(const json& t) {
  const double m = number_or(t, "median_us", 0), low = number_or(t, "ci_low_us", 0),
               high = number_or(t, "ci_high_us", 0);
  if (!(m > 0) || !(high > 0)) return "-";
  return fmt("+-%.2f%%", std::max(m - low, high - m) / m * 100);
}

// One compared row, as printed.
struct compared_row {
  std::string key, before, before_half, after, after_half, change, mark;
};

void print_text(std::ostream& os, const std::vector<compared_row>& rows,
                const std::vector<std::string>& lone, std::size_t width) {
  os << pad("configuration", width, false) << ' ' << pad("before us", 12) << ' ' << pad("", 9)
     << ' ' << pad("after us", 12) << ' ' << pad("", 9) << ' ' << pad("change", 9) << "\n";
  for (const auto& r : rows)
    os << pad(r.key, width, false) << ' ' << pad(r.before, 12) << ' ' << pad(r.before_half, 9)
       << ' ' << pad(r.after, 12) << ' ' << pad(r.after_half, 9) << ' ' << pad(r.change, 9)
       << (r.mark.empty() ? "" : "  " + r.mark) << "\n";
  for (const auto& l : lone) os << l << "\n";
}

// For a pull request's comment: the rows that changed, then how many did not.
void print_markdown(std::ostream& os, const std::vector<compared_row>& rows,
                    const std::vector<std::string>& lone) {
  std::size_t shown = 0;
  for (const auto& r : rows) {
    if (r.mark.empty()) continue;
    if (shown++ == 0)
      os << "| configuration | before us | | after us | | change | |\n"
         << "| --- | ---: | ---: | ---: | ---: | ---: | --- |\n";
    os << "| `" << r.key << "` | " << r.before << " | " << r.before_half << " | " << r.after
       << " | " << r.after_half << " | " << r.change << " | " << r.mark << " |\n";
  }
  if (shown == 0) os << "No row changed beyond its interval.\n";
  os << "\n";
  for (const auto& l : lone) os << "- `" << l << "`\n";
  if (!lone.empty()) os << "\n";
}

}  // namespace

namespace {
// How a file's rows were launched ("graph", "stream"), or "" when it has no timed row.
std::string launch_of(const json& results) {
  for (const auto& r : results.at("records"))
    if (r.at("timing").is_object()) return r.at("timing").at("launch").get<std::string>();
  return "";
}

// How many worker processes each row's placements took turns in.
int placement_workers_of(const json& results) {
  return results.at("reproducibility").at("timing").at("placement_workers").get<int>();
}
}  // namespace

compare_summary compare_results(const json& before, const json& after, std::ostream& os,
                                double threshold_pct, bool markdown) {
  // A multi-launch operation launched from the stream includes the gaps between its launches;
  // as one graph it does not: such rows differ by the launch mode, not by the code.
  const std::string old_launch = launch_of(before), new_launch = launch_of(after);
  if (!old_launch.empty() && !new_launch.empty() && old_launch != new_launch)
    os << "note: the old run launched its rows "
       << (old_launch == "graph" ? "as graphs" : "from the stream") << " and the new one "
       << (new_launch == "graph" ? "as graphs" : "from the stream")
       << " (--launch): rows of several launches differ by the gaps between them\n";
  // Measured on an H200: every row about 0.9 us slower with one worker than with four.
  const int old_workers = placement_workers_of(before), new_workers = placement_workers_of(after);
  if (old_workers != new_workers)
    os << "note: the old run timed each row's placements in " << old_workers
       << " worker process(es) and the new one in " << new_workers
       << " (--placement-workers): rows can differ by about a microsecond for that alone\n";
  // Records match when they measured the same thing: configuration_key() (variant, block,
  // dtype, op, size, shape, input and real-valued axes).
  std::map<std::string, const json*> old_by_key;
  const std::vector<std::string> old_keys = keys_of(before.at("records"));
  for (std::size_t i = 0; i < old_keys.size(); ++i)
    old_by_key[old_keys[i]] = &before.at("records")[i];
  const std::vector<std::string> new_keys = keys_of(after.at("records"));
  std::size_t width = 40;
  for (const auto& k : new_keys) width = std::max(width, k.size() + 2);

  compare_summary s;
  std::vector<compared_row> rows;
  std::vector<std::string> lone;  // rows in one file only
  for (std::size_t i = 0; i < new_keys.size(); ++i) {
    const json& r = after.at("records")[i];
    const std::string& key = new_keys[i];
    auto it = old_by_key.find(key);
    if (it == old_by_key.end()) {
      ++s.only_new;
      lone.push_back(key + "  (only in the new run: " + r.at("outcome").get<std::string>() + ")");
      continue;
    }
    const json& o = *it->second;
    old_by_key.erase(it);
    ++s.matched;
    const std::string oo = o.at("outcome"), no = r.at("outcome");
    if (oo != "passed" || no != "passed") {
      if (oo != no) ++s.outcome_changed;
      const bool lost = oo == "passed";  // passed before, not now
      if (lost) ++s.regressions;
      rows.push_back({key, oo, "", no, "", oo == no ? "" : "outcome",
                      lost       ? "!! regression"
                      : oo == no ? ""
                                 : "!"});
      continue;
    }
    const json& ot = o.at("timing");
    const json& nt = r.at("timing");
    const verdict v = verdict_of(ot, nt);
    const bool regression = v.changed && v.change * 100 > threshold_pct;
    if (!v.changed)
      ++s.within_noise;
    else if (v.change < 0)
      ++s.faster;
    else
      ++s.slower;
    if (regression) ++s.regressions;
    rows.push_back({key, fmt("%.2f", ot.at("median_us").get<double>()), half_width(ot),
                    fmt("%.2f", nt.at("median_us").get<double>()), half_width(nt),
                    v.comparable ? fmt("%+.2f%%", v.change * 100) : "n/a",
                    regression  ? "!! regression"
                    : v.changed ? (v.change < 0 ? "! faster" : "! slower")
                                : ""});
  }
  for (const auto& [key, r] : old_by_key) {
    ++s.only_old;
    lone.push_back(key + "  (only in the old run: " + r->at("outcome").get<std::string>() + ")");
  }
  if (markdown)
    print_markdown(os, rows, lone);
  else
    print_text(os, rows, lone, width);
  os << (markdown ? "**" : "") << s.matched << " matched" << (markdown ? "**" : "") << ": "
     << s.faster << " faster and " << s.slower << " slower with the intervals apart, "
     << s.within_noise << " within them, " << s.outcome_changed << " changed outcome; "
     << s.only_old << " only before, " << s.only_new << " only after\n";
  os << (markdown ? "\n**" : "") << s.regressions << " regression(s)" << (markdown ? "**" : "")
     << ": slower by more than " << fmt("%g", threshold_pct)
     << "% with the intervals apart, or passed before and not now\n";
  return s;
}

}  // namespace kl
