// `kernlab --pipeline`'s view of a problem: chunks of the pipeline axis are slices of every
// buffer, each chunk one launch of the variant over its slice.
#include "families/pipeline.hpp"

#include "spec/expression.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace kl {

void chunk_launch::enqueue(CUstream stream) {
  KL_CU(cuLaunchKernel(function, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0],
                       dims.block[1], dims.block[2], shared, stream, args.params(), nullptr));
}

pipeline_problem::pipeline_problem(const kl::family& fam, const problem_config& c,
                                   const cuda::device_info& device)
    : problem_(fam, c, device) {
  const family_spec& s = fam.spec();
  for (std::size_t i = 0; i < s.axes.size(); ++i)
    if (s.axes[i].name == s.pipeline_axis) axis_index_ = i;
  units_ = static_cast<std::uint64_t>(problem_.variables().at(s.pipeline_axis));
  for (const auto& b : problem_.buffers()) {
    if (b.spec->role == buffer_role::workspace) continue;
    buffer x;
    x.name = b.spec->name;
    x.input = b.spec->role == buffer_role::in;
    x.bytes_per_unit = b.count / units_ * data_dtype_size(b.dtype);
    x.device = b.device.get();
    x.host = x.input ? b.host.data() : nullptr;
    buffers_.push_back(x);
  }
}

std::unique_ptr<chunk_launch> pipeline_problem::launch(const variant_descriptor& v,
                                                       const source_kernel& k, std::uint64_t first,
                                                       std::uint64_t count) {
  if (!v.tensor_maps.empty())
    throw not_supported(v.qualified_name() +
                        " takes tensor maps, which --pipeline does not encode per chunk");
  if (!v.scratch.empty())
    throw not_supported(v.qualified_name() +
                        " takes scratch buffers, which --pipeline does not make per chunk");
  // The chunk is a problem of `count` units: its own axis value, for the scalars and the grid.
  problem_config chunk = problem_.config();
  chunk.axes.at(axis_index_).value = count;  // the whole axes come first, in the spec's order
  const kl::family& fam = problem_.family();
  auto vars = fam.axis_variables(chunk);
  auto out = std::make_unique<chunk_launch>();
  out->function = k.function;
  out->shared = k.dynamic_shared_bytes;
  try {
    out->dims =
        fam.launch(v, k.block, chunk, problem_.device().sm_count, std::max(1, k.resident_blocks));
  } catch (const std::invalid_argument& e) {
    throw not_supported(e.what());
  }
  for (const auto& a : fam.spec().args) {
    if (a.buffer.empty()) {
      out->args.add_scalar(evaluate(a.expression, vars), a.type);
      continue;
    }
    for (const auto& b : buffers_)
      if (b.name == a.buffer) out->args.add_pointer(b.device + first * b.bytes_per_unit);
  }
  if (first == 0)
    out->args.check_against(k.function, v.qualified_name(), fam.spec().path + "'s [kernel] args");
  return out;
}

std::unique_ptr<pipeline_problem> family::make_pipeline_problem(
    const problem_config& c, const cuda::device_info& device) const {
  if (spec_.pipeline_axis.empty())
    throw std::invalid_argument("family " + spec_.name + " has no [pipeline] (" + spec_.path + ")");
  return std::make_unique<pipeline_problem>(*this, c, device);
}

}  // namespace kl
