#include "tune/space.hpp"

#include <algorithm>
#include <stdexcept>

namespace kl::tune {

std::string describe(const candidate& c) {
  std::string s;
  for (const auto& [name, v] : c.values)
    s += (s.empty() ? "" : " ") + name + "=" + std::to_string(v);
  return s;
}

std::vector<tuning_space> make_spaces(const std::vector<const registry_entry*>& entries,
                                      const std::vector<unsigned>& blocks,
                                      int max_threads_per_block) {
  std::vector<tuning_space> out;
  for (const registry_entry* e : entries) {
    const variant_descriptor& v = e->descriptor;
    if (v.origin != origin_kind::source)
      throw std::invalid_argument(v.qualified_name() + " is a " + to_string(v.origin) +
                                  " variant: only kernel files have something to tune");
    if (!e->error.empty()) throw std::invalid_argument(e->error);
    auto space = std::find_if(out.begin(), out.end(),
                              [&](const tuning_space& s) { return s.file == v.origin_path; });
    if (space == out.end()) {
      tuning_space s;
      s.file = v.origin_path;
      s.name = v.is_point() ? v.tunable_file : v.name;
      s.family = v.family;
      space = out.insert(out.end(), std::move(s));
    }
    for (unsigned b : blocks) {
      if (!v.supports_block(b)) continue;
      if (max_threads_per_block > 0 && b > static_cast<unsigned>(max_threads_per_block)) {
        ++space->turned_down["block " + std::to_string(b) + ": more threads than the device's " +
                             std::to_string(max_threads_per_block) + " per block"];
        continue;
      }
      candidate c{e, b, v.point};
      c.values.emplace_back("BLOCK", b);
      space->candidates.push_back(std::move(c));
    }
  }
  // The parameters: every name in the order first seen, each with its values in increasing
  // order; a point's coordinates index them.
  for (tuning_space& s : out) {
    auto& params = s.space.parameters;
    for (const candidate& c : s.candidates)
      for (const auto& [name, v] : c.values) {
        auto p = std::find_if(params.begin(), params.end(),
                              [&](const parameter& q) { return q.name == name; });
        if (p == params.end()) p = params.insert(params.end(), parameter{name, {}});
        if (std::find(p->values.begin(), p->values.end(), v) == p->values.end())
          p->values.push_back(v);
      }
    for (auto& p : params) std::sort(p.values.begin(), p.values.end());
    for (const candidate& c : s.candidates) {
      std::vector<std::uint32_t> coords(params.size(), 0);
      for (const auto& [name, v] : c.values) {
        const auto p = std::find_if(params.begin(), params.end(),
                                    [&](const parameter& q) { return q.name == name; });
        coords[p - params.begin()] = static_cast<std::uint32_t>(
            std::lower_bound(p->values.begin(), p->values.end(), v) - p->values.begin());
      }
      s.space.points.push_back(std::move(coords));
    }
  }
  return out;
}

}  // namespace kl::tune
