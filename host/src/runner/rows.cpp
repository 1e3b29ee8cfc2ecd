// The rows a request makes: its configurations, each variant's block sizes, what is decided
// before compiling, each row's job and journal key, and the plan (--plan) in the runner's order.
#include "runner/runner.hpp"

#include "core/file_read.hpp"
#include "nvrtc/hash.hpp"
#include "plugin_host/plugin_loader.hpp"

#include <algorithm>
#include <set>
#include <string>

namespace kl {
namespace {

std::string join(const std::vector<unsigned>& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}
std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

std::string journal_key(const registry_entry& e, unsigned block, const problem_config& c) {
  std::string code = e.source;
  if (code.empty())  // a plugin: the library file's bytes (none when they cannot be read)
    code = read_regular_file(e.descriptor.origin_path, max_plugin_file_bytes).bytes;
  return configuration_key(e.descriptor.qualified_name(), block, c) + "|seed " +
         std::to_string(c.seed) + "|source " + std::to_string(nvrtc::checksum64(code));
}

row_job source_job(const family& f, const variant_descriptor& v, unsigned block,
                   const problem_config& c, const compile_record& compiled) {
  row_job job;
  job.variant = v;
  job.config = c;
  job.block = block;
  const std::string expr = f.name_expression(v, block, c);
  job.cubin = compiled.result.cubin;
  job.lowered_name = compiled.result.lowered_names.at(expr);
  if (auto it = compiled.result.resources.find(expr); it != compiled.result.resources.end())
    job.resources = it->second;
  job.compile_ms = compiled.milliseconds;
  return job;
}

bool is_baseline_row(const variant_descriptor& v, const std::string& baseline) {
  return baseline.empty() ? v.is_baseline : v.name == baseline || v.qualified_name() == baseline;
}

std::vector<problem_config> configs_for(const family& f, const run_request& r) {
  std::vector<problem_config> out;
  const auto dtypes = f.dtypes();
  const auto ops = f.ops();
  // The requested names the family has; none, and not asked for by name: the family's first.
  auto pick = [](const std::vector<std::string>& asked, const std::vector<std::string>& has,
                 bool named) {
    std::vector<std::string> out;
    for (const auto& a : asked)
      if (std::find(has.begin(), has.end(), a) != has.end()) out.push_back(a);
    if (out.empty() && !named && !has.empty()) out.push_back(has.front());
    return out;
  };
  // A family without operations (matmul) gets one configuration per dtype and point, op "".
  const std::vector<std::string> op_list =
      ops.empty() ? std::vector<std::string>{""} : pick(r.ops, ops, r.ops_explicit);
  // The axes' points: the product of the choices that reach the family, the whole axes' choice
  // (--shape, --size) first, then each named axis in the family's order; the rest at defaults.
  const std::vector<axis_info> axes = f.axes();
  std::vector<std::size_t> wholes;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].whole()) wholes.push_back(i);
  std::vector<std::vector<axis_value>> points = {f.default_axes()};
  // Each point times each of `values`, which set the axes `at` (one value fills each of them).
  const auto times = [&](const std::vector<std::size_t>& at,
                         const std::vector<std::vector<axis_number>>& values) {
    std::vector<std::vector<axis_value>> next;
    for (const auto& p : points)
      for (const auto& v : values) {
        next.push_back(p);
        for (std::size_t k = 0; k < at.size(); ++k) {
          auto& a = next.back()[at[k]];
          a.value = as_kind_of(v.at(v.size() == 1 ? 0 : k), a.value).value();
        }
      }
    points = std::move(next);
  };
  for (const axis_choice& c : r.axes)
    if (c.name.empty() && (!c.one_axis_families_only || wholes.size() == 1))
      times(wholes, c.points);
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (const axis_choice& c : r.axes)
      if (c.name == axes[i].name) times({i}, c.points);
  for (const auto& d : pick(r.dtypes, dtypes, r.dtypes_explicit))
    for (const auto& o : op_list)
      for (const auto& p : points) out.push_back({d, o, r.input_mode, r.seed, p});
  return out;
}

std::optional<std::pair<outcome, std::string>> decide_before_compile(
    const registry_entry& e, unsigned block, const problem_config& config,
    const cuda::device_info& device) {
  const variant_descriptor& v = e.descriptor;
  if (!e.error.empty()) return std::make_pair(outcome::failed, e.error);
  if (!v.supports_dtype(config.dtype))
    return std::make_pair(outcome::skipped, "supports dtypes " + join(v.dtypes) + " only");
  if (!v.supports_op(config.op))
    return std::make_pair(outcome::skipped, "supports ops " + join(v.ops) + " only");
  if (block != 0 && !v.supports_block(block))
    return std::make_pair(outcome::skipped, "supports blocks " + join(v.blocks) + " only");
  if (const std::string unmet = v.unmet_requirement(block, config.dtype); !unmet.empty())
    return std::make_pair(outcome::skipped, "its require '" + unmet + "' does not hold for " +
                                                config.dtype + " at block " +
                                                std::to_string(block));
  if (!v.target.empty() && v.target != device.arch() + "a")
    return std::make_pair(outcome::skipped, "compiled for " + v.target +
                                                " (its 'target'), which runs on " +
                                                v.target.substr(0, v.target.size() - 1) +
                                                " GPUs only; this GPU is " + device.arch());
  if (block > static_cast<unsigned>(device.max_threads_per_block))
    return std::make_pair(outcome::skipped, device.name + " allows at most " +
                                                std::to_string(device.max_threads_per_block) +
                                                " threads per block");
  return std::nullopt;
}

std::vector<unsigned> blocks_for(const variant_descriptor& v, const run_request& r) {
  if (v.blocks.empty()) return {0};
  if (!r.blocks_all) return r.blocks;
  std::set<unsigned> all(r.blocks.begin(), r.blocks.end());
  all.insert(v.blocks.begin(), v.blocks.end());
  return {all.begin(), all.end()};
}

std::string planned_row::key() const {
  if (!family_error.empty())
    return entry->descriptor.qualified_name() + " (its family cannot be used: " + family_error +
           ")";
  return configuration_key(entry->descriptor.qualified_name(), block, config);
}

std::vector<planned_row> plan_rows(const family_registry& families, const run_request& request) {
  std::vector<std::string> family_order;
  for (const registry_entry* e : request.variants)
    if (std::find(family_order.begin(), family_order.end(), e->descriptor.family) ==
        family_order.end())
      family_order.push_back(e->descriptor.family);
  std::vector<planned_row> rows;
  for (const auto& name : family_order) {
    const family* fam = families.find(name);
    for (const problem_config& config :
         fam ? configs_for(*fam, request) : std::vector<problem_config>{problem_config{}}) {
      for (const registry_entry* e : request.variants) {
        if (e->descriptor.family != name) continue;
        if (!fam) {
          rows.push_back({e, 0, {}, e->error.empty() ? "unknown family '" + name + "'" : e->error});
          continue;
        }
        for (unsigned block : blocks_for(e->descriptor, request))
          rows.push_back({e, block, config, ""});
      }
    }
  }
  return rows;
}

}  // namespace kl
