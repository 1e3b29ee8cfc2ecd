#include "spec/variant.hpp"

#include "spec/dtypes.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <map>

namespace kl {
namespace {
template <typename T>
bool contains_or_empty(const std::vector<T>& list, const T& value) {
  return list.empty() || std::find(list.begin(), list.end(), value) != list.end();
}
}  // namespace

std::string variant_descriptor::unmet_requirement(unsigned block, const std::string& dtype) const {
  std::map<std::string, std::int64_t> vars = {{"BLOCK", block}};
  add_dtype_variables(vars, dtype);
  for (const auto& [name, v] : point) vars[name] = v;
  for (const auto& cond : requires)
    if (evaluate(cond, vars) == 0) return cond;  // checked at every dtype when the file was read
  return "";
}

bool variant_descriptor::supports_block(unsigned block) const {
  return blocks.empty() ? block == 0 : std::count(blocks.begin(), blocks.end(), block) > 0;
}
bool variant_descriptor::supports_dtype(const std::string& d) const {
  return contains_or_empty(dtypes, d);
}
bool variant_descriptor::supports_op(const std::string& o) const {
  return contains_or_empty(ops, o);
}
std::string variant_descriptor::origin_text() const {
  return std::string(to_string(origin)) + " " + origin_path;
}

const char* to_string(origin_kind o) {
  switch (o) {
    case origin_kind::source: return "source";
    case origin_kind::plugin: return "plugin";
    case origin_kind::builtin: return "builtin";
  }
  return "?";
}
const char* to_string(grid_kind g) { return g == grid_kind::tiles ? "tiles" : "resident"; }
const char* to_string(bounds_kind b) { return b == bounds_kind::padded ? "padded" : "checked"; }
const char* to_string(output_kind o) {
  return o == output_kind::per_block ? "per_block" : "single";
}

std::ostream& operator<<(std::ostream& os, const variant_descriptor& v) {
  os << v.qualified_name() << " [" << v.origin_text() << "]";
  if (!v.entry.empty()) os << " entry=" << v.entry;
  os << " blocks=";
  if (v.blocks.empty()) os << "n/a";
  for (std::size_t i = 0; i < v.blocks.size(); ++i) os << (i ? "," : "") << v.blocks[i];
  if (!v.tile.empty()) os << " tile=" << v.tile;
  os << " grid=" << to_string(v.grid) << " bounds=" << to_string(v.bounds)
     << " output=" << to_string(v.output);
  if (!v.workspace.empty()) os << " workspace=" << v.workspace;
  for (const auto& [name, text] : v.params) os << " " << name << "=" << text;
  auto dims = [&](const char* key, const std::vector<std::string>& d) {
    if (d.empty()) return;
    os << " " << key << "=";
    for (std::size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  };
  dims("block_dims", v.block_dims);
  dims("grid_dims", v.grid_dims);
  return os;
}

bool operator==(const variant_descriptor& a, const variant_descriptor& b) {
  return a.family == b.family && a.name == b.name && a.origin == b.origin &&
         a.origin_path == b.origin_path && a.entry == b.entry && a.blocks == b.blocks &&
         a.tile == b.tile && a.grid == b.grid && a.bounds == b.bounds &&
         a.shared_bytes == b.shared_bytes && a.target == b.target && a.output == b.output &&
         a.workspace == b.workspace && a.dtypes == b.dtypes && a.ops == b.ops &&
         a.summary == b.summary && a.order == b.order && a.is_baseline == b.is_baseline &&
         a.params == b.params && a.block_dims == b.block_dims && a.tunables == b.tunables &&
         a.requires == b.requires && a.grid_dims == b.grid_dims &&
         a.tunable_file == b.tunable_file && a.point == b.point && a.named_point == b.named_point &&
         a.tensor_maps == b.tensor_maps && a.scratch == b.scratch && a.defines == b.defines;
}

}  // namespace kl
