// Every expression of a data family at a configuration a command asks for, evaluated before
// anything runs, as the run will evaluate it (docs/guarantees.md): the buffers' counts and their
// bytes, bytes and flops, the arguments within their types, the plugins' sizes, the rule's terms,
// the reference's launch, and each variant header's launch, scratch, tensor maps, tile and
// workspace. An expression that overflows, divides by zero or gives a count below 1 is the
// command's usage error, naming its file:line, not a row that fails (or a worker that writes past
// a buffer whose size wrapped) later.
#include "families/family.hpp"
#include "families/pass_plan.hpp"
#include "spec/expression.hpp"

#include <cstdint>
#include <stdexcept>

namespace kl {
namespace {

using variables = std::map<std::string, std::int64_t>;

// A launch's grid sees SM_COUNT and RESIDENT_BLOCKS, which are unknown before a GPU runs it: it
// is evaluated on the smallest device and beyond the largest (1024 SMs of 32 resident blocks).
constexpr std::int64_t device_extremes[][2] = {{1, 1}, {1024, 1024 * 32}};

// Whether `v` fits an argument of `type` (int32, int64, uint32, uint64).
bool fits(std::int64_t v, const std::string& type) {
  if (type == "int32") return v >= INT32_MIN && v <= INT32_MAX;
  if (type == "uint32") return v >= 0 && v <= static_cast<std::int64_t>(UINT32_MAX);
  if (type == "uint64") return v >= 0;
  return true;
}

// The variables of `c` as a problem of `f` has them: the axes and TSIZE, and with plan passes
// PASS_N (the first pass reads every element) and PADDED_N (the input padded to `pad`).
variables problem_variables(const family& f, const problem_config& c) {
  variables vars = f.axis_variables(c);
  const family_spec& s = f.spec();
  if (s.plan != launch_plan::passes) return vars;
  vars["PASS_N"] = vars.at(s.axes.front().name);
  for (const auto& b : s.buffers) {
    if (b.role != buffer_role::in) continue;
    const std::uint64_t padded = round_up(f.element_count(b, c), s.pad);
    if (padded > static_cast<std::uint64_t>(INT64_MAX))
      throw std::invalid_argument(s.name + ": buffer " + b.name + " padded to a multiple of " +
                                  std::to_string(s.pad) + " at " + c.describe() +
                                  " does not fit in 64 bits (" + s.path + ")");
    data_bytes(padded, f.buffer_dtype(b, c));
    vars["PADDED_N"] = static_cast<std::int64_t>(padded);
  }
  return vars;
}

// A launch's block and grid dimensions at `vars`, on either extreme device (their limits are the
// row's to judge: a grid past CUDA's skips it).
void check_dims(const std::vector<std::string>& block_dims,
                const std::vector<std::string>& grid_dims, variables vars, const std::string& what,
                const std::string& block_where, const std::string& grid_where) {
  for (const auto& text : block_dims) evaluate_as(text, vars, what + "block_dims", block_where);
  for (const auto& extreme : device_extremes) {
    vars["SM_COUNT"] = extreme[0];
    vars["RESIDENT_BLOCKS"] = extreme[1];
    for (const auto& text : grid_dims) evaluate_as(text, vars, what + "grid_dims", grid_where);
  }
}

}  // namespace

void family::check_configuration(const problem_config& c) const {
  real_values(c);  // the real axes' limits
  const variables vars = problem_variables(*this, c);
  const std::string what = spec_.name + ": ";
  const std::string at = " at " + c.describe();
  const auto where = [&](int line) { return spec_.path + ":" + std::to_string(line); };
  for (const auto& b : spec_.buffers) buffer_bytes(b, c);  // each count and its bytes
  device_bytes_needed(c);                                  // and their sum
  problem_bytes(c);
  problem_flops(c);
  for (const auto& a : spec_.args) {
    if (a.expression.empty()) continue;
    const std::int64_t v = evaluate_as(
        a.expression, vars, what + "argument '" + a.expression + "'" + at, where(a.line));
    if (!fits(v, a.type))
      throw std::invalid_argument(what + "argument '" + a.expression + "' is " + std::to_string(v) +
                                  at + ", which its type " + a.type + " cannot hold (" +
                                  where(a.line) + ")");
  }
  for (const auto& e : spec_.plugin_sizes)
    evaluate_as(e, vars, what + "plugin_sizes" + at, where(spec_.kernel_line));
  const compare_spec& rule = spec_.compare_for(c.input_mode);
  if (!rule.terms.empty()) evaluate_as(rule.terms, vars, what + "terms" + at, where(rule.line));
  if (!spec_.reference.plugin_function.empty()) return;
  variables ref = vars;
  ref["BLOCK"] = spec_.reference.block;
  check_dims(spec_.reference.block_dims, spec_.reference.grid_dims, ref,
             what + "[reference]" + at + ": ", where(spec_.reference.line),
             where(spec_.reference.line));
}

void family::check_launch(const variant_descriptor& v, const std::map<std::string, int>& key_lines,
                          unsigned block, const problem_config& c) const {
  const auto where = [&](const char* key) {
    const auto it = key_lines.find(key);
    return v.origin_path + ":" + std::to_string(it == key_lines.end() ? 1 : it->second);
  };
  const std::string family_where = spec_.path + ":" + std::to_string(spec_.kernel_line);
  const std::string what =
      v.qualified_name() + " block " + std::to_string(block) + " at " + c.describe() + ": ";
  variables vars = problem_variables(*this, c);
  vars["BLOCK"] = block;
  for (const auto& [name, text] : v.params)
    vars[name] = evaluate_as(text, vars, what + "param " + name, where("params"));
  evaluate_as(v.shared_bytes, vars, what + "shared_bytes", where("shared_bytes"));
  if (spec_.plan == launch_plan::single)
    check_dims(v.block_dims.empty() ? spec_.block_dims : v.block_dims,
               v.grid_dims.empty() ? spec_.grid_dims : v.grid_dims, vars, what,
               v.block_dims.empty() ? family_where : where("block_dims"),
               v.grid_dims.empty() ? family_where : where("grid_dims"));
  for (const auto& s : v.scratch) {
    const std::int64_t n = evaluate_as(s.count, vars, what + "scratch " + s.name, where("scratch"));
    if (n < 1)
      throw std::invalid_argument(what + "scratch " + s.name + " has " + std::to_string(n) +
                                  " elements; a buffer holds at least one (" + where("scratch") +
                                  ")");
    try {
      data_bytes(static_cast<std::uint64_t>(n), s.type == "T" ? c.dtype : s.type);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(what + "scratch " + s.name + ": " + e.what() + " (" +
                                  where("scratch") + ")");
    }
  }
  for (const auto& t : v.tensor_maps) {
    for (const auto& text : t.dims)
      evaluate_as(text, vars, what + "tensor_maps " + t.buffer, where("tensor_maps"));
    for (const auto& text : t.box)
      evaluate_as(text, vars, what + "tensor_maps " + t.buffer, where("tensor_maps"));
  }
  if (spec_.plan != launch_plan::passes) return;
  const std::int64_t tile = evaluate_as(v.tile, vars, what + "tile", where("tile"));
  if (tile < 1)
    throw std::invalid_argument(what + "tile '" + v.tile + "' is " + std::to_string(tile) + " (" +
                                where("tile") + ")");
  if (v.workspace.empty()) return;
  // From one block to a block per tile of the padded input: the largest grid a pass launches.
  const std::int64_t padded = vars.at("PADDED_N");
  for (const std::int64_t grid : {std::int64_t{1}, padded / tile + (padded % tile != 0 ? 1 : 0)}) {
    vars["GRID"] = grid;
    const std::int64_t bytes =
        evaluate_as(v.workspace, vars, what + "workspace", where("workspace"));
    if (bytes < 0)
      throw std::invalid_argument(what + "workspace '" + v.workspace + "' is " +
                                  std::to_string(bytes) + " bytes at GRID " + std::to_string(grid) +
                                  " (" + where("workspace") + ")");
  }
}

}  // namespace kl
