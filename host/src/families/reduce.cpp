#include "families/reduce.hpp"

#include "cuda/resources.hpp"
#include "families/plugin_launch.hpp"
#include "families/splitmix64.hpp"
#include "spec/expression.hpp"
#include "spec/family_spec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace kl {
namespace reduce {
namespace {

std::uint32_t float_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float bits_float(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace

std::vector<std::uint32_t> make_input(const problem_config& c) {
  std::vector<std::uint32_t> out(c.size);
  splitmix64 rng{c.seed};
  const bool is_float = c.dtype == "float32";
  const bool random = is_float && c.input_mode == "random";
  for (std::uint64_t i = 0; i < c.size; ++i) {
    const std::uint64_t r = rng.next();
    if (random) {
      // 24 random bits: uniform on a grid of 2^-23 in [-1, 1).
      out[i] = float_bits(static_cast<float>(static_cast<double>(r >> 40) * 0x1p-23 - 1.0));
    } else if (is_float) {
      // k uniform in [-127, 127], not the spec's [-128, 127]: that range has mean -1/512, so the
      // sum drifts to about -n/512 and leaves float32's exact range for multiples of 1/256
      // (|s| < 2^16) beyond n ~ 2^25. With mean zero, partial sums stay near 0.3 sqrt(n): exact
      // in every summation order up to 2^31 elements, with a margin of more than ten sigma.
      const int k = static_cast<int>((r >> 32) % 255) - 127;
      out[i] = float_bits(static_cast<float>(k) / 256.0f);
    } else {
      const int k = static_cast<int>(r >> 56) - 128;  // uniform in [-128, 127]
      out[i] = static_cast<std::uint32_t>(k);
    }
  }
  return out;
}

std::uint32_t identity_bits(const std::string& dtype, const std::string& op) {
  const bool f = dtype == "float32";
  if (op == "sum") return 0;
  if (op == "min")
    return f ? float_bits(std::numeric_limits<float>::max())
             : static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max());
  if (op == "max")
    return f ? float_bits(std::numeric_limits<float>::lowest())
             : static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::min());
  throw std::invalid_argument("unknown reduce op '" + op + "'");
}

reference compute_reference(const problem_config& c, const std::vector<std::uint32_t>& in) {
  reference ref;
  if (c.dtype == "int32") {
    if (c.op == "sum") {
      std::uint32_t s = 0;  // modulo 2^32, as defined
      for (auto v : in) s += v;
      ref.bits = s;
    } else {
      std::int32_t m = static_cast<std::int32_t>(identity_bits(c.dtype, c.op));
      for (auto v : in) {
        const auto x = static_cast<std::int32_t>(v);
        m = c.op == "min" ? std::min(m, x) : std::max(m, x);
      }
      ref.bits = static_cast<std::uint32_t>(m);
    }
    ref.value = static_cast<std::int32_t>(ref.bits);
    return ref;
  }
  if (c.op == "sum") {
    double s = 0, a = 0;
    for (auto v : in) {
      const double x = bits_float(v);
      s += x;
      a += std::fabs(x);
    }
    ref.value = s;
    ref.sum_abs = a;
    // Exact mode: s is exactly representable in float32, so this conversion is exact too.
    ref.bits = float_bits(static_cast<float>(s));
    return ref;
  }
  float m = bits_float(identity_bits(c.dtype, c.op));
  for (auto v : in) m = c.op == "min" ? std::min(m, bits_float(v)) : std::max(m, bits_float(v));
  ref.bits = float_bits(m);
  ref.value = m;
  return ref;
}

std::string format_value(const std::string& dtype, std::uint32_t bits) {
  std::ostringstream out;
  if (dtype == "int32") {
    out << static_cast<std::int32_t>(bits);
  } else {
    out.precision(9);
    out << bits_float(bits);
  }
  return out.str();
}

check_result compare(const problem_config& c, const reference& ref, std::uint32_t got) {
  check_result r;
  r.expected = format_value(c.dtype, ref.bits);
  r.got = format_value(c.dtype, got);
  // Exact mode is exact only while the sum is representable; if a (pathological) seed ever
  // leaves that range, fall back to the tolerance and say so rather than fail a correct kernel.
  const bool exact_holds = static_cast<double>(bits_float(ref.bits)) == ref.value;
  if (c.dtype == "float32" && c.op == "sum" && (c.input_mode == "random" || !exact_holds)) {
    // Each float32 addition rounds by at most eps/2 of its partial sum, and no partial exceeds the
    // sum of magnitudes. The blocked orders used by reductions keep an element's chain of
    // additions near sqrt(n) in practice; the bound below allows that plus the tree levels.
    const double eps = std::numeric_limits<float>::epsilon();
    const double n = static_cast<double>(c.size);
    const double tol = (2.0 * std::sqrt(n) + 64.0) * eps * ref.sum_abs;
    const double g = bits_float(got);
    const double err = std::fabs(g - ref.value);
    r.expected = format_value("float32", float_bits(static_cast<float>(ref.value)));
    std::ostringstream d;
    d << "abs error " << err << ", tolerance " << tol
      << (c.input_mode == "exact" ? "; the exact-mode sum is not representable at this n" : "");
    r.detail = d.str();
    r.ok = std::isfinite(g) && err <= tol;
    return r;
  }
  r.ok = got == ref.bits;
  return r;
}

}  // namespace reduce

namespace {

using namespace reduce;

// kernlab's reduce kernels index with 32-bit unsigned integers, as the seeds do.
constexpr std::uint64_t max_elements = std::uint64_t{1} << 31;

std::string cuda_type(const std::string& dtype) { return cxx_type_of(dtype); }

// Input uploaded once per problem, padded with the identity to a multiple of
// KL_REDUCE_INPUT_PADDING so that any variant whose tile divides it reads whole tiles.
class reduce_problem final : public problem {
 public:
  reduce_problem(const problem_config& c, const cuda::device_info& device)
      : config_(c), device_(device) {
    input_host_ = make_input(c);
    ref_ = compute_reference(c, input_host_);
    identity_ = identity_bits(c.dtype, c.op);
    padded_len_ = round_up(c.size, KL_REDUCE_INPUT_PADDING);
    input_ = cuda::device_buffer(padded_len_ * 4);
    input_.upload(input_host_.data(), c.size * 4);
    fill(input_, c.size, padded_len_ - c.size);
    cuda::synchronize_context();
  }

  const problem_config& config() const override { return config_; }
  double bytes() const override { return reduce_family().problem_bytes(config_); }
  double flops() const override { return 0.0; }
  std::size_t device_bytes() const override { return input_.bytes(); }

  std::unique_ptr<operation> bind(const variant_descriptor& v, const source_kernel& k) override;
  std::unique_ptr<operation> bind(const variant_descriptor& v, const plugin_kernel& k) override;

  const reference& ref() const { return ref_; }
  std::uint32_t identity() const { return identity_; }
  const cuda::device_buffer& input() const { return input_; }
  std::uint64_t padded_len() const { return padded_len_; }

  // Fills `count` elements from `first` with the identity (synchronously: set-up, never timed).
  void fill(const cuda::device_buffer& b, std::uint64_t first, std::uint64_t count) const {
    if (count == 0) return;
    KL_CU(cuMemsetD32Async(b.get() + first * 4, identity_, count, nullptr));
  }

 private:
  problem_config config_;
  cuda::device_info device_;
  std::vector<std::uint32_t> input_host_;
  reference ref_;
  std::uint32_t identity_ = 0;
  std::uint64_t padded_len_ = 0;
  cuda::device_buffer input_;
};

// The output of every variant is one element; poisoning writes a value the reference can never
// have for these inputs, so an unwritten result is always caught.
constexpr std::uint32_t poison_bits = 0x7fbadbad;  // a NaN for float32, a huge int for int32

std::uint32_t read_result(const cuda::device_buffer& out) {
  std::uint32_t v = 0;
  out.download(&v, 4);
  return v;
}

// A runtime-compiled kernel, relaunched on its partial results until one value is left. Every
// pass writes into its own buffer, pre-filled with the identity here, outside the timed region:
// a pass always writes the same prefix, so the padding that the next pass reads stays intact and
// the timed operation is nothing but the kernel launches.
class source_reduce final : public operation {
 public:
  source_reduce(reduce_problem& p, const variant_descriptor& v, const source_kernel& k)
      : problem_(p), kernel_(k) {
    // BLOCK, TSIZE and the header's params.
    const auto vars = launch_variables(v, k.block, p.config());
    const auto tile = static_cast<std::uint64_t>(evaluate(v.tile, vars));
    passes_ = plan_passes(p.config().size, tile, v.grid, v.bounds,
                          static_cast<std::uint64_t>(std::max(1, k.resident_blocks)), v.output);
    const cuda::device_buffer* in = &p.input();
    // A tile that does not divide the shared padding gets its own padded copy of the input.
    if (passes_[0].in_len > p.padded_len()) {
      own_input_ = cuda::device_buffer(passes_[0].in_len * 4);
      KL_CU(cuMemcpyDtoDAsync(own_input_.get(), p.input().get(), p.config().size * 4, nullptr));
      p.fill(own_input_, p.config().size, passes_[0].in_len - p.config().size);
      in = &own_input_;
    }
    for (std::size_t i = 0; i < passes_.size(); ++i) {
      const std::uint64_t len = i + 1 < passes_.size() ? passes_[i + 1].in_len : 1;
      buffers_.emplace_back(len * 4);
      p.fill(buffers_.back(), 0, len);
    }
    ins_.push_back(in->get());
    for (std::size_t i = 0; i + 1 < passes_.size(); ++i) ins_.push_back(buffers_[i].get());
    // Scratch for kernels that declare it (a counter for a last-block-done reduction, say):
    // zeroed once here, and the kernel must leave it zeroed. The check after timing catches a
    // kernel that does not, since its later runs then go wrong.
    if (!v.workspace.empty()) {
      for (const auto& pass : passes_) {
        auto with_grid = vars;
        with_grid["GRID"] = static_cast<std::int64_t>(pass.grid);
        const auto bytes = static_cast<std::size_t>(evaluate(v.workspace, with_grid));
        workspaces_.emplace_back(bytes);
        KL_CU(cuMemsetD8Async(workspaces_.back().get(), 0, workspaces_.back().bytes(), nullptr));
      }
    }
    cuda::synchronize_context();
  }

  void enqueue(CUstream stream) override {
    for (std::size_t i = 0; i < passes_.size(); ++i) {
      CUdeviceptr in = ins_[i];
      CUdeviceptr out = buffers_[i].get();
      unsigned n = static_cast<unsigned>(passes_[i].n);
      CUdeviceptr ws = workspaces_.empty() ? 0 : workspaces_[i].get();
      void* args[] = {&in, &out, &n, &ws};  // the 4th only for kernels that declare a workspace
      KL_CU(cuLaunchKernel(kernel_.function, static_cast<unsigned>(passes_[i].grid), 1, 1,
                           kernel_.block, 1, 1, kernel_.dynamic_shared_bytes, stream, args,
                           nullptr));
    }
  }
  void poison_output(CUstream stream) override {
    KL_CU(cuMemsetD32Async(buffers_.back().get(), poison_bits, 1, stream));
  }
  check_result check() const override {
    return compare(problem_.config(), problem_.ref(), read_result(buffers_.back()));
  }

 private:
  reduce_problem& problem_;
  source_kernel kernel_;
  std::vector<pass_plan> passes_;
  cuda::device_buffer own_input_;
  std::vector<cuda::device_buffer> buffers_;
  std::vector<cuda::device_buffer> workspaces_;
  std::vector<CUdeviceptr> ins_;
};

// A plugin variant: inputs {in}, outputs {out}, sizes {n, padded length} (plugin_api.h).
class plugin_reduce final : public operation {
 public:
  plugin_reduce(reduce_problem& p, const plugin_kernel& k)
      : problem_(p),
        out_(4),
        launch_(k, {"reduce",
                    p.config().dtype,
                    p.config().op,
                    {p.input().as_ptr()},
                    {out_.as_ptr()},
                    {p.config().size, p.padded_len()}}) {}
  void enqueue(CUstream stream) override { launch_.run(stream); }
  void poison_output(CUstream stream) override {
    KL_CU(cuMemsetD32Async(out_.get(), poison_bits, 1, stream));
  }
  check_result check() const override {
    return compare(problem_.config(), problem_.ref(), read_result(out_));
  }

 private:
  reduce_problem& problem_;
  cuda::device_buffer out_;  // before launch_, which points into it
  plugin_launch launch_;
};

std::unique_ptr<operation> reduce_problem::bind(const variant_descriptor& v,
                                                const source_kernel& k) {
  return std::make_unique<source_reduce>(*this, v, k);
}
std::unique_ptr<operation> reduce_problem::bind(const variant_descriptor&, const plugin_kernel& k) {
  return std::make_unique<plugin_reduce>(*this, k);
}

}  // namespace

void reduce_family::check(const parsed_header& h) const {
  const auto& d = h.descriptor;
  if (d.tile.empty())
    throw metadata_error(
        d.origin_path, h.header_line,
        "a reduce variant needs 'tile: <expression>' (elements one block consumes)");
  for (const auto& t : d.dtypes)
    if (t != "int32" && t != "float32")
      throw metadata_error(d.origin_path, h.line_of("dtypes"),
                           "reduce has no dtype '" + t + "' (it has int32, float32)");
  for (const auto& o : d.ops)
    if (o != "sum" && o != "min" && o != "max")
      throw metadata_error(d.origin_path, h.line_of("ops"),
                           "reduce has no op '" + o + "' (it has sum, min, max)");
}

std::string reduce_family::name_expression(const variant_descriptor& v, unsigned block,
                                           const problem_config& c) const {
  const std::string t = cuda_type(c.dtype);
  std::map<std::string, std::string> words = {
      {"BLOCK", std::to_string(block)}, {"T", t}, {"OP", "kl::" + c.op + "<" + t + ">"}};
  // The header's params are template arguments too (docs/kernel_contract.md).
  const auto vars = launch_variables(v, block, c);
  for (const auto& [name, text] : v.params) words[name] = std::to_string(vars.at(name));
  return substitute_words(v.entry, words);
}

std::uint64_t reduce_family::max_size() const { return max_elements; }

double reduce_family::problem_bytes(const problem_config& c) const {
  return static_cast<double>(c.size) * static_cast<double>(dtype_size(c.dtype));  // n reads
}

std::size_t reduce_family::device_bytes_needed(const problem_config& c) const {
  // The padded input, plus partial buffers (at most half the input for tiles of 2 and more).
  return static_cast<std::size_t>(round_up(c.size, KL_REDUCE_INPUT_PADDING) * 4 * 3 / 2);
}

std::unique_ptr<problem> reduce_family::make_problem(const problem_config& c,
                                                     const cuda::device_info& device) const {
  if (c.size == 0 || c.size > max_elements)
    throw std::invalid_argument(
        "reduce needs 1 <= n <= 2^31 (its kernels index with 32 bits); got " +
        std::to_string(c.size));
  return std::make_unique<reduce_problem>(c, device);
}

}  // namespace kl
