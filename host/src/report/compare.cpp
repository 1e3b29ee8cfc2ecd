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

compare_summary compare_results(const json& before, const json& after, std::ostream& os,
                                double threshold_pct) {
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
  os << pad("configuration", width, false) << ' ' << pad("before us", 12) << ' '
     << pad("after us", 12) << ' ' << pad("change", 9) << ' ' << pad("noise", 8) << ' '
     << pad("noise", 8) << "\n";
  for (std::size_t i = 0; i < new_keys.size(); ++i) {
    const json& r = after.at("records")[i];
    const std::string& key = new_keys[i];
    auto it = old_by_key.find(key);
    if (it == old_by_key.end()) {
      ++s.only_new;
      os << key << "  (only in the new run: " << r.at("outcome").get<std::string>() << ")\n";
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
      os << pad(key, width, false) << ' ' << pad(oo, 12) << ' ' << pad(no, 12) << ' '
         << pad(oo == no ? "" : "outcome", 9) << "  "
         << (lost       ? "!! regression"
             : oo == no ? ""
                        : "!")
         << "\n";
      continue;
    }
    const double a = o.at("timing").at("median_us"), b = r.at("timing").at("median_us");
    const double na = o.at("timing").at("noise"), nb = r.at("timing").at("noise");
    // A change is a ratio to the old median: without a positive, finite one there is none.
    const bool comparable = a > 0 && std::isfinite(a) && std::isfinite(b);
    const double change = comparable ? (b - a) / a : 0;
    // Significant only when the change exceeds the spread of both runs' samples.
    const bool significant = comparable && std::fabs(change) > std::max(na, nb);
    const bool regression = significant && change * 100 > threshold_pct;
    if (!significant)
      ++s.within_noise;
    else if (change < 0)
      ++s.faster;
    else
      ++s.slower;
    if (regression) ++s.regressions;
    os << pad(key, width, false) << ' ' << pad(fmt("%.2f", a), 12) << ' ' << pad(fmt("%.2f", b), 12)
       << ' ' << pad(comparable ? fmt("%+.2f%%", change * 100) : "n/a", 9) << ' '
       << pad(fmt("%.2f%%", na * 100), 8) << ' ' << pad(fmt("%.2f%%", nb * 100), 8) << "  "
       << (regression    ? "!! regression"
           : significant ? (change < 0 ? "! faster" : "! slower")
                         : "")
       << "\n";
  }
  for (const auto& [key, r] : old_by_key) {
    ++s.only_old;
    os << key << "  (only in the old run: " << r->at("outcome").get<std::string>() << ")\n";
  }
  os << s.matched << " matched: " << s.faster << " faster and " << s.slower
     << " slower beyond the noise of both runs, " << s.within_noise << " within it, "
     << s.outcome_changed << " changed outcome; " << s.only_old << " only before, " << s.only_new
     << " only after\n";
  os << s.regressions << " regression(s): slower by more than " << fmt("%g", threshold_pct)
     << "% and the noise of both runs, or passed before and not now\n";
  return s;
}

}  // namespace kl
