// --list: every family with its axes, dtypes and ops, then every variant with its blocks and
// origin.
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

void print_variant_names(std::ostream& os, const registry& reg, const std::string& family) {
  std::set<std::string> seen;
  os << "all\n";
  for (const auto& e : reg.entries()) {
    const variant_descriptor& d = e.descriptor;
    if (!family.empty() && d.family != family) continue;
    // A tunable file's unnamed points are left out (hundreds of them); its name selects them.
    for (const std::string* name : {&d.name, &d.tunable_file})
      if (!name->empty() && (name == &d.tunable_file || d.in_default_selection()) &&
          seen.insert(*name).second)
        os << *name << "\n";
  }
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
    const std::vector<axis_info> axes = f->axes();
    const auto wholes = static_cast<std::size_t>(
        std::count_if(axes.begin(), axes.end(), [](const axis_info& a) { return a.whole(); }));
    os << "axes ";
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const axis_info& a = axes[i];
      os << (i == 0      ? ""
             : a.whole() ? " x "
                         : ", ")
         << a.name << "=" << axis_text(a.default_value) << " [" << axis_text(a.min) << ".."
         << axis_text(a.max) << "]";
      if (a.whole() && i + 1 == wholes) os << (wholes == 1 ? " (--shape or --size)" : " (--shape)");
      if (!a.whole()) os << " (--axis " << a.name << "=...)";
    }
    os << "; dtypes " << joined(f->dtypes());
    if (!f->ops().empty()) os << "; ops " << joined(f->ops());
    os << "; " << f->spec().path;
    if (!f->spec().summary.empty()) os << "\n    " << f->spec().summary;
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
