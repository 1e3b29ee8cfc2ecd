// The operations a variant binds to on a problem: a runtime-compiled kernel's one launch, a
// plugin's call, the plan passes' launches, and the copy baseline.
#include "cuda/resources.hpp"
#include "families/operation.hpp"
#include "families/pass_plan.hpp"
#include "families/plugin_launch.hpp"
#include "families/problem.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

namespace kl {

namespace {

// A runtime-compiled variant: one launch with its header's (or the family's) dimensions.
class source_op final : public operation {
 public:
  source_op(problem& p, const variant_descriptor& v, const source_kernel& k)
      : problem_(p), kernel_(k), args_(p.arguments()) {
    try {
      dims_ = p.family().launch(v, k.block, p.config(), p.device().sm_count,
                                std::max(1, k.resident_blocks));
    } catch (const std::invalid_argument& e) {
      throw not_supported(e.what());  // e.g. a grid past CUDA's limits for a huge shape
    }
    scratch_ = p.make_scratch(v, k.block);
    for (const auto& b : scratch_) args_.add_pointer(b.device.get());
    for (const auto& t : v.tensor_maps) args_.add_tensor_map(p.tensor_map(t, v, k.block, scratch_));
    std::string header_args;
    if (!v.scratch.empty()) header_args += " and the header's scratch";
    if (!v.tensor_maps.empty()) header_args += " and the header's tensor_maps";
    args_.check_against(k.function, v.qualified_name(),
                        p.family().spec().path + "'s [kernel] args" + header_args);
  }
  void enqueue(CUstream stream) override {
    problem_.zero_workspaces(stream);
    problem_.restore_starts(stream, true);
    for (auto& b : scratch_) KL_CU(cuMemsetD8Async(b.device.get(), 0, b.device.bytes(), stream));
    KL_CU(cuLaunchKernel(kernel_.function, dims_.grid[0], dims_.grid[1], dims_.grid[2],
                         dims_.block[0], dims_.block[1], dims_.block[2],
                         kernel_.dynamic_shared_bytes, stream, args_.params(), nullptr));
  }
  void poison_output(CUstream stream) override { problem_.poison(stream); }
  void prepare(CUstream stream) override { problem_.restore_starts(stream, false); }
  check_result check() const override { return problem_.check(); }

 private:
  problem& problem_;
  source_kernel kernel_;
  std::vector<scratch_buffer> scratch_;
  argument_pack args_;
  launch_dims dims_;
};

// A plugin variant: the in buffers as inputs, the out buffers as outputs, the axes as sizes.
class plugin_op final : public operation {
 public:
  plugin_op(problem& p, const plugin_kernel& k) : problem_(p), launch_(k, args_of(p)) {}
  void enqueue(CUstream stream) override {
    problem_.zero_workspaces(stream);
    problem_.restore_starts(stream, true);
    launch_.run(stream);
  }
  void poison_output(CUstream stream) override { problem_.poison(stream); }
  void prepare(CUstream stream) override { problem_.restore_starts(stream, false); }
  check_result check() const override { return problem_.check(); }

 private:
  static plugin_arguments args_of(problem& p) {
    plugin_arguments a;
    a.family = p.family().name();
    a.dtype = p.config().dtype;
    a.op = p.config().op;
    for (auto& b : p.buffers()) {
      if (b.spec->role == buffer_role::in) a.inputs.push_back(b.device.as_ptr());
      if (b.spec->is_output()) a.outputs.push_back(b.device.as_ptr());
    }
    const family_spec& s = p.family().spec();
    if (!s.plugin_sizes.empty()) {
      for (const auto& e : s.plugin_sizes)
        a.sizes.push_back(static_cast<std::uint64_t>(evaluate(e, p.variables())));
    } else {
      for (const auto& axis : s.axes)
        a.sizes.push_back(static_cast<std::uint64_t>(p.variables().at(axis.name)));
    }
    return a;
  }
  problem& problem_;
  plugin_launch launch_;
};

// Plan passes: the kernel relaunched on its partial results until one value is left
// (families/pass_plan.hpp). Every pass writes into its own buffer, filled with the op's identity
// here, outside the timed region: a pass always writes the same prefix, so the padding the next
// pass reads stays intact, and the timed operation is nothing but the launches. The last pass
// writes the out buffer. A header's `workspace` is zeroed once per pass here, and the kernel
// must leave it zeroed (a kernel that does not goes wrong in its later runs, which the check
// after timing catches). Arguments: the [kernel] args, the in buffer and the out buffer replaced
// by the pass's, PASS_N its element count, then the pass's workspace.
class passes_op final : public operation {
 public:
  passes_op(problem& p, const variant_descriptor& v, const source_kernel& k)
      : problem_(p), kernel_(k) {
    const family_spec& s = p.family().spec();
    auto vars = p.variables();
    vars["BLOCK"] = k.block;
    for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
    const auto tile = static_cast<std::uint64_t>(evaluate(v.tile, vars));
    data_buffer* in = nullptr;
    for (auto& b : p.buffers()) {
      if (b.spec->role == buffer_role::in) in = &b;
      if (b.spec->role == buffer_role::out) out_ = &b;
    }
    dtype_ = in->dtype;
    const std::uint64_t n = in->count;
    try {
      passes_ = plan_passes(n, tile, v.grid, v.bounds,
                            static_cast<std::uint64_t>(std::max(1, k.resident_blocks)), v.output);
    } catch (const std::invalid_argument& e) {
      throw not_supported(e.what());
    }
    const std::size_t size = data_dtype_size(dtype_);
    CUdeviceptr first = in->device.get();
    // A tile that does not divide the shared padding gets its own padded copy of the input.
    if (passes_[0].in_len > p.padded_n()) {
      own_input_ = cuda::device_buffer(passes_[0].in_len * size);
      KL_CU(cuMemcpyDtoDAsync(own_input_.get(), in->device.get(), n * size, nullptr));
      p.fill_identity(own_input_, dtype_, n, passes_[0].in_len - n);
      first = own_input_.get();
    }
    for (std::size_t i = 0; i + 1 < passes_.size(); ++i) {
      partials_.emplace_back(passes_[i + 1].in_len * size);
      p.fill_identity(partials_.back(), dtype_, 0, passes_[i + 1].in_len);
    }
    for (std::size_t i = 0; i < passes_.size(); ++i) {
      const CUdeviceptr pass_in = i == 0 ? first : partials_[i - 1].get();
      const CUdeviceptr pass_out = i + 1 < passes_.size() ? partials_[i].get() : out_->device.get();
      auto pass_vars = p.variables();
      pass_vars["PASS_N"] = static_cast<std::int64_t>(passes_[i].n);
      argument_pack pack;
      for (const auto& a : s.args) {
        if (a.buffer.empty())
          pack.add_scalar(evaluate(a.expression, pass_vars), a.type);
        else
          pack.add_pointer(a.buffer == in->spec->name ? pass_in : pass_out);
      }
      if (!v.workspace.empty()) {
        auto with_grid = vars;
        with_grid["GRID"] = static_cast<std::int64_t>(passes_[i].grid);
        workspaces_.emplace_back(
            std::max<std::size_t>(static_cast<std::size_t>(evaluate(v.workspace, with_grid)), 4));
        KL_CU(cuMemsetD8Async(workspaces_.back().get(), 0, workspaces_.back().bytes(), nullptr));
        pack.add_pointer(workspaces_.back().get());
      }
      if (i == 0)
        pack.check_against(k.function, v.qualified_name(),
                           s.path + "'s [kernel] args" +
                               (v.workspace.empty() ? "" : " and the header's workspace"));
      packs_.push_back(std::move(pack));
    }
    cuda::synchronize_context();
  }
  void enqueue(CUstream stream) override {
    for (std::size_t i = 0; i < passes_.size(); ++i)
      KL_CU(cuLaunchKernel(kernel_.function, static_cast<unsigned>(passes_[i].grid), 1, 1,
                           kernel_.block, 1, 1, kernel_.dynamic_shared_bytes, stream,
                           packs_[i].params(), nullptr));
  }
  void poison_output(CUstream stream) override { problem_.poison(stream); }
  check_result check() const override { return problem_.check(); }

 private:
  problem& problem_;
  source_kernel kernel_;
  data_buffer* out_ = nullptr;
  std::string dtype_;
  std::vector<pass_plan> passes_;
  cuda::device_buffer own_input_;
  std::vector<cuda::device_buffer> partials_, workspaces_;
  std::vector<argument_pack> packs_;
};

// The copy baseline: cuMemcpyDtoDAsync of one buffer into another, checked byte for byte
// against the source; its poison is the complement of the source, so a byte not copied shows.
// The copy goes in pieces of at most 256 MiB: on an H200 (driver 580) one call moved 256 MiB at
// 4238 GB/s but 1 GiB at 2719 GB/s, where a float4 copy kernel held 3905 GB/s.
class copy_op final : public operation {
  static constexpr std::size_t piece = std::size_t{256} << 20;
  static void copy(CUdeviceptr to, CUdeviceptr from, std::size_t bytes, CUstream stream) {
    for (std::size_t at = 0; at < bytes; at += piece)
      KL_CU(cuMemcpyDtoDAsync(to + at, from + at, std::min(piece, bytes - at), stream));
  }

 public:
  copy_op(problem& p, const baseline_spec& b)
      : from_(p.buffer(b.copy_from)), to_(p.buffer(b.copy_to)) {
    if (from_.device.bytes() != to_.device.bytes())
      throw not_supported("the copy baseline needs " + b.copy_from + " and " + b.copy_to +
                          " of the same size (" + std::to_string(from_.device.bytes()) + " and " +
                          std::to_string(to_.device.bytes()) + " bytes here)");
    std::vector<std::uint8_t> complement(from_.device.bytes());
    for (std::size_t i = 0; i < complement.size(); ++i)
      complement[i] = static_cast<std::uint8_t>(~(i < from_.host.size() ? from_.host[i] : 0));
    poison_ = cuda::device_buffer(complement.size());
    poison_.upload(complement.data(), complement.size());
  }
  void enqueue(CUstream stream) override {
    copy(to_.device.get(), from_.device.get(), from_.host.size(), stream);
  }
  void poison_output(CUstream stream) override {
    copy(to_.device.get(), poison_.get(), poison_.bytes(), stream);
  }
  check_result check() const override {
    std::vector<std::uint8_t> got(from_.host.size());
    to_.device.download(got.data(), got.size());
    check_result r;
    const auto mismatch = std::mismatch(got.begin(), got.end(), from_.host.begin());
    r.ok = mismatch.first == got.end();
    if (r.ok) {
      r.expected = r.got = "a copy of all " + std::to_string(got.size()) + " bytes";
    } else {
      const auto at = static_cast<std::size_t>(mismatch.first - got.begin());
      r.expected = "byte " + std::to_string(at) + " = " + std::to_string(*mismatch.second);
      r.got = "byte " + std::to_string(at) + " = " + std::to_string(*mismatch.first);
    }
    return r;
  }

 private:
  data_buffer& from_;
  data_buffer& to_;
  cuda::device_buffer poison_;
};

}  // namespace

std::unique_ptr<operation> problem::bind(const variant_descriptor& v, const source_kernel& k) {
  if (family_.spec().plan == launch_plan::passes) return std::make_unique<passes_op>(*this, v, k);
  return std::make_unique<source_op>(*this, v, k);
}
std::unique_ptr<operation> problem::bind(const variant_descriptor&, const plugin_kernel& k) {
  return std::make_unique<plugin_op>(*this, k);
}
std::unique_ptr<operation> problem::bind_builtin(const variant_descriptor& v) {
  const baseline_spec& b = family_.spec().baseline;
  if (v.name != "d2d_copy" || b.copy_from.empty())
    throw not_supported(v.qualified_name() + " is not a variant of this family");
  return std::make_unique<copy_op>(*this, b);
}

}  // namespace kl
