// A family's problem on the GPU: its buffers made from the generators (a plugin's generator and
// the reference are problem_reference.cpp's), the arguments packed for each kernel, poison,
// starts and workspaces around a run, the check of the outputs, and relocation to another
// placement.
#include "families/problem.hpp"

#include "cuda/resources.hpp"
#include "cuda/tensor_map.hpp"
#include "families/dtype_dispatch.hpp"
#include "families/pass_plan.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kl {

namespace {

// The TMA's name for an element type.
CUtensorMapDataType tensor_map_type(const std::string& dtype) {
  if (dtype == "uint8") return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  if (dtype == "int32") return CU_TENSOR_MAP_DATA_TYPE_INT32;
  if (dtype == "int64") return CU_TENSOR_MAP_DATA_TYPE_INT64;
  if (dtype == "float16") return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  if (dtype == "bfloat16") return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  if (dtype == "float64") return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

}  // namespace

problem::problem(const kl::family& fam, const problem_config& c, const cuda::device_info& device)
    : family_(fam), config_(c), device_(device), vars_(fam.axis_variables(c)) {
  const family_spec& s = fam.spec();
  fam.real_values(c);  // checks the real axes' limits
  const bool passes = s.plan == launch_plan::passes;
  if (passes) {
    op_ = s.op(c.op);
    if (!op_) throw std::invalid_argument(s.name + " has no op '" + c.op + "'");
  }
  for (const auto& b : s.buffers) {
    data_buffer buf;
    buf.spec = &b;
    buf.dtype = fam.buffer_dtype(b, c);
    buf.count = fam.element_count(b, c);
    // Plan passes: the input padded with the op's identity to a multiple of `pad`, so that
    // kernels whose tile divides it read whole tiles (plugins get the length as PADDED_N).
    const std::uint64_t elements =
        passes && b.role == buffer_role::in ? round_up(buf.count, s.pad) : buf.count;
    const std::size_t bytes = std::max<std::size_t>(data_bytes(elements, buf.dtype), 4);
    buf.device = cuda::device_buffer(bytes);
    if (b.is_input()) {
      const generator_spec& g = c.input_mode == "random" ? *b.random : *b.exact;
      buf.host = g.kind == "plugin" ? generate_with_plugin(g, b.name, buf.dtype, buf.count)
                                    : generate_buffer(g, buf.dtype, buf.count, c.seed, b.name);
      buf.device.upload(buf.host.data(), buf.host.size());
      if (b.role == buffer_role::inout) {  // what every launch starts from, kept apart
        starts_.emplace(b.name, cuda::device_buffer(bytes));
        starts_.at(b.name).upload(buf.host.data(), buf.host.size());
      }
      if (passes) {
        padded_n_ = elements;
        fill_identity(buf.device, buf.dtype, buf.count, elements - buf.count);
      }
    }
    buffers_.push_back(std::move(buf));
  }
  if (passes) {
    vars_["PASS_N"] = vars_.at(s.axes.front().name);
    vars_["PADDED_N"] = static_cast<std::int64_t>(padded_n_);
  }
  cuda::synchronize_context();
  if (s.reference.plugin_function.empty())
    run_reference();
  else
    run_plugin_reference();
  read_expected();
  make_complements();
}

bool problem::relocate(std::uint64_t salt) {
  std::size_t need = 0;
  for (const auto& b : buffers_) need += b.device.bytes();
  for (const auto& [name, c] : complements_) need += c.bytes();
  for (const auto& [name, c] : starts_) need += c.bytes();
  const std::size_t spacer = (1 + salt % 512) * 65536;  // 64 KiB to 32 MiB
  if (cuda::free_device_memory() < need + spacer + (std::size_t{256} << 20)) return false;
  // A spacer of another size first, then the copies while the old buffers are still held: the
  // copies land elsewhere each time, not back where the last ones were.
  cuda::device_buffer next_spacer(spacer);
  auto copy_of = [](const cuda::device_buffer& b) {
    cuda::device_buffer fresh(b.bytes());
    KL_CU(cuMemcpyDtoDAsync(fresh.get(), b.get(), b.bytes(), nullptr));
    return fresh;
  };
  std::vector<cuda::device_buffer> moved;
  for (const auto& b : buffers_) moved.push_back(copy_of(b.device));
  std::map<std::string, cuda::device_buffer> complements, starts;
  for (const auto& [name, c] : complements_) complements.emplace(name, copy_of(c));
  for (const auto& [name, c] : starts_) starts.emplace(name, copy_of(c));
  cuda::synchronize_context();
  for (std::size_t i = 0; i < buffers_.size(); ++i) buffers_[i].device = std::move(moved[i]);
  complements_ = std::move(complements);
  starts_ = std::move(starts);
  spacer_ = std::move(next_spacer);
  return true;
}

void problem::fill_identity(const cuda::device_buffer& b, const std::string& dtype,
                            std::uint64_t first, std::uint64_t count) const {
  if (count == 0) return;
  const auto host = identity_elements(*op_, dtype, count);
  KL_CU(cuMemcpyHtoD(b.get() + first * data_dtype_size(dtype), host.data(), host.size()));
}

std::vector<std::uint8_t> problem::poison_bytes(const std::string& name) const {
  for (const auto& b : buffers_) {
    if (b.spec->name != name) continue;
    std::vector<std::uint8_t> out(b.device.bytes());
    if (complements_.count(name)) {
      const auto& ref = references_.at(name);
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<std::uint8_t>(i < ref.size() ? ~ref[i] : 0xff);
    } else {
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<std::uint8_t>(poison_bits >> (8 * (i % 4)));
    }
    return out;
  }
  throw std::logic_error("no buffer " + name);
}

data_buffer& problem::buffer(const std::string& name) {
  for (auto& b : buffers_)
    if (b.spec->name == name) return b;
  throw std::logic_error("no buffer " + name);
}

cuda::tensor_map problem::tensor_map(const tensor_map_spec& t, const variant_descriptor& v,
                                     unsigned block,
                                     const std::vector<scratch_buffer>& scratch) const {
  const auto vars = launch_variables(v, block);
  cuda::tensor_map_request r;
  r.name = t.buffer;
  const auto found = [&](CUdeviceptr address, const std::string& dtype, std::size_t bytes) {
    r.address = address;
    r.element_bytes = data_dtype_size(dtype);
    r.type = tensor_map_type(dtype);
    r.buffer_bytes = bytes;
  };
  for (const auto& b : buffers_)
    if (b.spec->name == t.buffer)
      found(b.device.get(), b.dtype, b.count * data_dtype_size(b.dtype));
  for (const auto& b : scratch)
    if (b.name == t.buffer) found(b.device.get(), b.dtype, b.count * data_dtype_size(b.dtype));
  for (const auto& text : t.dims)
    r.dims.push_back(static_cast<std::uint64_t>(evaluate(text, vars)));
  for (const auto& text : t.box) r.box.push_back(static_cast<std::uint64_t>(evaluate(text, vars)));
  r.swizzle = t.swizzle;
  try {
    return cuda::encode_tensor_map(r);
  } catch (const std::invalid_argument& e) {
    throw not_supported(e.what());
  }
}

std::map<std::string, std::int64_t> problem::launch_variables(const variant_descriptor& v,
                                                              unsigned block) const {
  auto vars = vars_;
  vars["BLOCK"] = block;
  for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
  return vars;
}

std::vector<scratch_buffer> problem::make_scratch(const variant_descriptor& v,
                                                  unsigned block) const {
  const auto vars = launch_variables(v, block);
  std::vector<scratch_buffer> out;
  for (const auto& s : v.scratch) {
    scratch_buffer b;
    b.name = s.name;
    b.dtype = s.type == "T" ? config_.dtype : s.type;
    const std::int64_t n = evaluate(s.count, vars);
    if (n < 1)
      throw not_supported("scratch " + s.name + " has " + std::to_string(n) + " elements at " +
                          config_.describe());
    b.count = static_cast<std::uint64_t>(n);
    const std::size_t bytes = std::max<std::size_t>(data_bytes(b.count, b.dtype), 4);
    std::size_t free_bytes = 0, total = 0;
    KL_CU(cuMemGetInfo(&free_bytes, &total));
    if (bytes > free_bytes)
      throw not_supported("scratch " + s.name + " needs " + std::to_string(bytes) +
                          " bytes, more than the device has free (" + std::to_string(free_bytes) +
                          ")");
    b.device = cuda::device_buffer(bytes);
    out.push_back(std::move(b));
  }
  return out;
}

argument_pack problem::arguments(const std::map<std::string, CUdeviceptr>& outputs) const {
  argument_pack pack;
  for (const auto& a : family_.spec().args) {
    if (!a.buffer.empty()) {
      auto it = outputs.find(a.buffer);
      CUdeviceptr p = 0;
      for (const auto& b : buffers_)
        if (b.spec->name == a.buffer) p = b.device.get();
      pack.add_pointer(it == outputs.end() ? p : it->second);
    } else {
      pack.add_scalar(evaluate(a.expression, vars_), a.type);
    }
  }
  return pack;
}

void problem::poison(CUstream stream) {
  for (auto& b : buffers_) {
    if (!b.spec->is_output()) continue;
    if (b.spec->has_start()) {  // its start is part of the answer: restored, never poisoned
      restore_start(b, stream);
      continue;
    }
    if (auto c = complements_.find(b.spec->name); c != complements_.end()) {
      KL_CU(cuMemcpyDtoDAsync(b.device.get(), c->second.get(), c->second.bytes(), stream));
      continue;
    }
    const std::size_t words = b.device.bytes() / 4;
    KL_CU(cuMemsetD32Async(b.device.get(), poison_bits, words, stream));
    for (std::size_t i = 4 * words; i < b.device.bytes(); ++i)  // a tail of 1 to 3 bytes
      KL_CU(cuMemsetD8Async(b.device.get() + i,
                            static_cast<unsigned char>(poison_bits >> (8 * (i % 4))), 1, stream));
  }
}

void problem::zero_workspaces(CUstream stream) {
  for (auto& b : buffers_)
    if (b.spec->role == buffer_role::workspace)
      KL_CU(cuMemsetD8Async(b.device.get(), 0, b.device.bytes(), stream));
}

void problem::restore_starts(CUstream stream, bool timed) {
  for (auto& b : buffers_)
    if (b.spec->has_start() && b.spec->reset_timed == timed) restore_start(b, stream);
}

check_result problem::check() const {
  std::map<std::string, const std::uint8_t*> outputs;
  for (const auto& b : buffers_) {
    if (!b.spec->is_output()) continue;
    // Into page-locked memory kept for the problem's rows (cuda/staging.hpp): a download at
    // the link's speed, and no fresh allocation for every check.
    const std::size_t bytes = b.count * data_dtype_size(b.dtype);
    std::uint8_t* got = staging_[b.spec->name].get(bytes);
    b.device.download(got, bytes);
    outputs[b.spec->name] = got;
  }
  return check(outputs);
}

check_result problem::check(const std::map<std::string, const std::uint8_t*>& outputs) const {
  check_result all;
  all.ok = true;
  for (const auto& b : buffers_) {
    if (!b.spec->is_output()) continue;
    const std::size_t bytes = b.count * data_dtype_size(b.dtype);
    const std::uint8_t* got = outputs.at(b.spec->name);
    const std::string ref_dtype = family_.spec().reference.type == "T" ? b.dtype : "float64";
    const compare_spec& rule = family_.spec().compare_for(config_.input_mode);
    auto mag = magnitudes_.find(b.spec->name);
    const double terms =
        rule.terms.empty() ? 0.0 : static_cast<double>(evaluate(rule.terms, vars_));
    check_result r = compare_buffer(rule, b.spec->name, b.dtype, got, bytes, ref_dtype,
                                    references_.at(b.spec->name),
                                    mag == magnitudes_.end() ? nullptr : &mag->second, terms);
    if (!r.ok) return r;
    all.expected += (all.expected.empty() ? "" : "; ") + r.expected;
  }
  all.got = all.expected;
  return all;
}

std::vector<std::uint8_t> problem::start_in(const data_buffer& b, const std::string& dtype) {
  if (b.spec->zero) return std::vector<std::uint8_t>(data_bytes(b.count, dtype));
  if (dtype == b.dtype) return b.host;
  std::vector<std::uint8_t> out(data_bytes(b.count, "float64"));
  with_dtype(b.dtype, [&](auto t) {
    using T = decltype(t);
    const auto* from = reinterpret_cast<const T*>(b.host.data());
    for (std::uint64_t i = 0; i < b.count; ++i) {
      const double v = static_cast<double>(from[i]);
      std::memcpy(out.data() + 8 * i, &v, 8);
    }
  });
  return out;
}

void problem::restore_start(data_buffer& b, CUstream stream) const {
  if (b.spec->zero) {
    KL_CU(cuMemsetD8Async(b.device.get(), 0, b.device.bytes(), stream));
    return;
  }
  const cuda::device_buffer& start = starts_.at(b.spec->name);
  KL_CU(cuMemcpyDtoDAsync(b.device.get(), start.get(), start.bytes(), stream));
}

std::unique_ptr<problem> family::make_problem(const problem_config& c,
                                              const cuda::device_info& device) const {
  return std::make_unique<problem>(*this, c, device);
}

}  // namespace kl
