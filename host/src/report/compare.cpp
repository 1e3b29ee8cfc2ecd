#include "report/exports.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace kl {
namespace {

using nlohmann::json;

// Records match when they measured the same thing.
std::string key_of(const json& r) {
  const auto& c = r.at("config");
  return r.at("variant").at("qualified_name").get<std::string>() + " block " +
         std::to_string(r.at("block").get<unsigned>()) + " " + c.at("dtype").get<std::string>() +
         " " + c.at("op").get<std::string>() + " n=" + std::to_string(c.at("size").get<std::uint64_t>()) +
         (c.at("input") == "exact" ? "" : " " + c.at("input").get<std::string>());
}

}  // namespace

compare_summary compare_results(const json& before, const json& after, std::ostream& os) {
  std::map<std::string, const json*> old_by_key;
  for (const auto& r : before.at("records")) old_by_key[key_of(r)] = &r;
  std::size_t width = 40;
  for (const auto& r : after.at("records")) width = std::max(width, key_of(r).size() + 2);

  compare_summary s;
  char head[256];
  std::snprintf(head, sizeof head, "%-*s %12s %12s %9s %8s %8s\n", static_cast<int>(width),
                "configuration", "before us", "after us", "change", "noise", "noise");
  os << head;
  for (const auto& r : after.at("records")) {
    const std::string key = key_of(r);
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
    char line[512];
    if (oo != "passed" || no != "passed") {
      if (oo != no) ++s.outcome_changed;
      std::snprintf(line, sizeof line, "%-*s %12s %12s %9s  %s\n", static_cast<int>(width), key.c_str(),
                    oo.c_str(), no.c_str(), oo == no ? "" : "outcome", oo == no ? "" : "!");
      os << line;
      continue;
    }
    const double a = o.at("timing").at("median_us"), b = r.at("timing").at("median_us");
    const double na = o.at("timing").at("noise"), nb = r.at("timing").at("noise");
    const double change = (b - a) / a;
    // Significant only when the change exceeds the spread of both runs' samples.
    const bool significant = std::fabs(change) > std::max(na, nb);
    if (!significant) ++s.within_noise;
    else if (change < 0) ++s.faster;
    else ++s.slower;
    std::snprintf(line, sizeof line, "%-*s %12.2f %12.2f %+8.2f%% %7.2f%% %7.2f%%  %s\n",
                  static_cast<int>(width), key.c_str(), a, b, change * 100, na * 100, nb * 100,
                  significant ? (change < 0 ? "! faster" : "! slower") : "");
    os << line;
  }
  for (const auto& [key, r] : old_by_key) {
    ++s.only_old;
    os << key << "  (only in the old run: " << r->at("outcome").get<std::string>() << ")\n";
  }
  os << s.matched << " matched: " << s.faster << " faster and " << s.slower
     << " slower beyond the noise of both runs, " << s.within_noise << " within it, "
     << s.outcome_changed << " changed outcome; " << s.only_old << " only before, " << s.only_new
     << " only after\n";
  return s;
}

}  // namespace kl
