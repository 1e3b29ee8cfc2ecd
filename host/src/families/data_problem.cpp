// A family's problem on the GPU: its buffers made from the generators, the reference computed
// once, the arguments packed for each kernel, the operations a variant binds to (a source kernel,
// a plugin, a multi-pass plan, the copy baseline), validation and relocation to another placement;
// and the pipeline problem that streams one axis through several CUDA streams.
#include "cuda/resources.hpp"
#include "cuda/staging.hpp"
#include "cuda/tensor_map.hpp"
#include "families/data_family.hpp"
#include "families/dtype_dispatch.hpp"
#include "families/half_types.hpp"
#include "families/pass_plan.hpp"
#include "families/plugin_launch.hpp"
#include "families/splitmix64.hpp"
#include "nvrtc/compiler.hpp"
#include "nvrtc/hash.hpp"
#include "parallel/chunks.hpp"
#include "plugin_host/family_plugin.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>

namespace kl {

namespace {

// The output buffers' poison before a validation run: a NaN as float32, a large number as
// float64 and as int32 no result a test family produces.
constexpr std::uint32_t poison_bits = 0x7fbadbad;

// The reference's image, compiled once per process, architecture, file text and entry.
const nvrtc::compile_result& reference_image(const nvrtc::compile_request& req) {
  static std::mutex mutex;
  static std::map<std::string, nvrtc::compile_result> images;
  const std::string key = req.arch + "|" + req.path + "|" + req.name_expressions.front() + "|" +
                          std::to_string(nvrtc::checksum64(req.source));
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = images.find(key); it != images.end()) return it->second;
  nvrtc::compile_result compiled = nvrtc::compile(req);
  if (!compiled.ok)
    throw std::runtime_error("the reference " + req.path + " does not compile:\n" +
                             compiled.error_summary());
  return images.emplace(key, std::move(compiled)).first->second;
}

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

// One buffer on the device, with the host copy of a generated input.
struct data_buffer {
  const buffer_spec* spec = nullptr;
  std::string dtype;
  std::uint64_t count = 0;
  cuda::device_buffer device;
  std::vector<std::uint8_t> host;  // inputs: what was uploaded
};

// A variant's own scratch buffer (`scratch:`): zeroed before every launch.
struct scratch_buffer {
  std::string name, dtype;
  std::uint64_t count = 0;
  cuda::device_buffer device;
};

// Packs kernel arguments: each slot holds a pointer or a scalar, and params[i] points at it;
// a tensor map (128 bytes) has a slot of its own kind.
class argument_pack {
 public:
  void add_tensor_map(const cuda::tensor_map& m) {
    maps_.push_back(m);
    order_.push_back({true, maps_.size() - 1});
    sizes_.push_back(sizeof m.bytes);
  }
  /// Throws std::runtime_error when the arguments do not fit kernel `f`'s parameters (how many,
  /// and each one's size), naming `what` packs them: a mismatched signature would have the driver
  /// read past the arguments (a crash) or the kernel read garbage. Nothing when the driver cannot
  /// say.
  void check_against(CUfunction f, const std::string& variant, const std::string& what) const {
    const std::vector<std::size_t> params = cuda::kernel_parameter_sizes(f);
    if (params.empty() && !sizes_.empty()) return;
    std::string why;
    if (params.size() != sizes_.size()) {
      why = "the kernel takes " + std::to_string(params.size()) + " parameters, " + what +
            " gives " + std::to_string(sizes_.size());
    } else {
      for (std::size_t i = 0; i < params.size() && why.empty(); ++i)
        if (params[i] != sizes_[i])
          why = "the kernel's parameter " + std::to_string(i + 1) + " is " +
                std::to_string(params[i]) + " bytes, " + what + " gives " +
                std::to_string(sizes_[i]) + " bytes there";
    }
    if (!why.empty()) throw std::runtime_error(variant + ": " + why + "; make its signature match");
  }
  void add_pointer(CUdeviceptr p) { push(&p, sizeof p); }
  void add_scalar(std::int64_t v, const std::string& type) {
    if (type == "int32") {
      const auto x = static_cast<std::int32_t>(v);
      push(&x, 4);
    } else if (type == "uint32") {
      const auto x = static_cast<std::uint32_t>(v);
      push(&x, 4);
    } else {
      push(&v, 8);
    }
  }
  /// The launch's parameter array. Built on the first call (the slots are complete by then) and
  /// reused: enqueue() runs in the timed region.
  void** params() {
    if (ptrs_.size() != order_.size()) {
      ptrs_.clear();
      for (const auto& [map, i] : order_)
        ptrs_.push_back(map ? static_cast<void*>(maps_[i].bytes) : &slots_[i]);
    }
    return ptrs_.data();
  }

 private:
  void push(const void* p, std::size_t n) {
    std::uint64_t slot = 0;
    std::memcpy(&slot, p, n);
    slots_.push_back(slot);
    order_.push_back({false, slots_.size() - 1});
    sizes_.push_back(n);
  }
  std::vector<std::uint64_t> slots_;
  std::vector<cuda::tensor_map> maps_;
  std::vector<std::pair<bool, std::size_t>> order_;  // (a tensor map?, its index)
  std::vector<std::size_t> sizes_;                   // each argument's bytes
  std::vector<void*> ptrs_;
};

class data_problem final : public problem {
 public:
  data_problem(const data_family& fam, const problem_config& c, const cuda::device_info& device)
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
    make_complements();
  }

  const problem_config& config() const override { return config_; }
  double bytes() const override { return family_.problem_bytes(config_); }
  double flops() const override { return family_.problem_flops(config_); }
  std::size_t device_bytes() const override {
    std::size_t n = 0;
    for (const auto& b : buffers_) n += b.device.bytes();
    return n;
  }

  std::unique_ptr<operation> bind(const variant_descriptor& v, const source_kernel& k) override;
  std::unique_ptr<operation> bind(const variant_descriptor& v, const plugin_kernel& k) override;

  bool relocate(std::uint64_t salt) override {
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
  std::unique_ptr<operation> bind_builtin(const variant_descriptor& v) override;

  const data_family& family() const { return family_; }
  const std::map<std::string, std::int64_t>& variables() const { return vars_; }
  /// Plan passes: the op, and the input's length with its identity padding.
  const op_spec& op() const { return *op_; }
  std::uint64_t padded_n() const { return padded_n_; }
  /// Writes `count` identities of the op from element `first` of `b` (set-up, never timed).
  void fill_identity(const cuda::device_buffer& b, const std::string& dtype, std::uint64_t first,
                     std::uint64_t count) const {
    if (count == 0) return;
    const auto host = identity_elements(*op_, dtype, count);
    KL_CU(cuMemcpyHtoD(b.get() + first * data_dtype_size(dtype), host.data(), host.size()));
  }
  const cuda::device_info& device() const { return device_; }
  const std::vector<data_buffer>& buffers() const { return buffers_; }
  /// What poison() writes into out buffer `name`, as host bytes.
  std::vector<std::uint8_t> poison_bytes(const std::string& name) const {
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
  std::vector<data_buffer>& buffers() { return buffers_; }
  data_buffer& buffer(const std::string& name) {
    for (auto& b : buffers_)
      if (b.spec->name == name) return b;
    throw std::logic_error("no buffer " + name);
  }

  // The tensor map `t` of a variant's header over its buffer, at this problem's size, for `block`
  // threads and the variant's params. Throws not_supported when the TMA cannot copy it (rows that
  // are not 16-byte aligned, say): the row is skipped with the reason.
  // `scratch` is the variant's own (a map may name one of them).
  cuda::tensor_map tensor_map(const tensor_map_spec& t, const variant_descriptor& v, unsigned block,
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
    for (const auto& text : t.box)
      r.box.push_back(static_cast<std::uint64_t>(evaluate(text, vars)));
    r.swizzle = t.swizzle;
    try {
      return cuda::encode_tensor_map(r);
    } catch (const std::invalid_argument& e) {
      throw not_supported(e.what());
    }
  }

  // The variables of a variant's launch expressions at this problem: the axes, BLOCK and the
  // params.
  std::map<std::string, std::int64_t> launch_variables(const variant_descriptor& v,
                                                       unsigned block) const {
    auto vars = vars_;
    vars["BLOCK"] = block;
    for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
    return vars;
  }

  // The variant's scratch buffers (`scratch:`) at this problem's size. Throws not_supported when
  // one does not fit in the device's free memory.
  std::vector<scratch_buffer> make_scratch(const variant_descriptor& v, unsigned block) const {
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

  // Every argument in [kernel] order; `outputs` replaces the out buffers' pointers (the
  // reference's own).
  argument_pack arguments(const std::map<std::string, CUdeviceptr>& outputs = {}) const {
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

  void poison(CUstream stream) {
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
  void zero_workspaces(CUstream stream) {
    for (auto& b : buffers_)
      if (b.spec->role == buffer_role::workspace)
        KL_CU(cuMemsetD8Async(b.device.get(), 0, b.device.bytes(), stream));
  }
  /// Puts back the start of every buffer that has one and is reset inside the timed region
  /// (`timed`), or outside it.
  void restore_starts(CUstream stream, bool timed) {
    for (auto& b : buffers_)
      if (b.spec->has_start() && b.spec->reset_timed == timed) restore_start(b, stream);
  }

  check_result check() const {
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

  // Every out buffer's bytes (on the host, by name) under the family's rule.
  check_result check(const std::map<std::string, const std::uint8_t*>& outputs) const {
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

 private:
  // The start of buffer `b` as elements of `dtype` (its own, or the reference's float64).
  static std::vector<std::uint8_t> start_in(const data_buffer& b, const std::string& dtype) {
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

  // A buffer's start: zeros, or an inout buffer's generated values.
  void restore_start(data_buffer& b, CUstream stream) const {
    if (b.spec->zero) {
      KL_CU(cuMemsetD8Async(b.device.get(), 0, b.device.bytes(), stream));
      return;
    }
    const cuda::device_buffer& start = starts_.at(b.spec->name);
    KL_CU(cuMemcpyDtoDAsync(b.device.get(), start.get(), start.bytes(), stream));
  }

  // What family_api.h's functions get: the configuration, with every axis' value.
  struct plugin_point {
    std::vector<std::string> names;
    std::vector<const char*> name_ptrs;
    std::vector<double> values;
    kl_family_point point{};
  };
  plugin_point make_point() const {
    plugin_point p;
    // Every axis in the file's order: the size axes and the real ones by their lines.
    std::vector<std::pair<int, std::pair<std::string, double>>> axes;
    for (const auto& a : family_.spec().axes)
      axes.push_back({a.line, {a.name, static_cast<double>(vars_.at(a.name))}});
    const auto reals = family_.real_values(config_);
    for (std::size_t i = 0; i < reals.size(); ++i)
      axes.push_back({family_.spec().real_axes[i].line, reals[i]});
    std::stable_sort(axes.begin(), axes.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [line, axis] : axes) {
      p.names.push_back(axis.first);
      p.values.push_back(axis.second);
    }
    for (const auto& n : p.names) p.name_ptrs.push_back(n.c_str());
    p.point.family = family_.spec().name.c_str();
    p.point.dtype = config_.dtype.c_str();
    p.point.op = config_.op.c_str();
    p.point.input_mode = config_.input_mode.c_str();
    p.point.seed = config_.seed;
    p.point.axis_names = p.name_ptrs.data();
    p.point.axis_values = p.values.data();
    p.point.num_axes = static_cast<std::uint32_t>(p.names.size());
    return p;
  }
  std::shared_ptr<const family_plugin> plugin() const {
    return open_family_plugin(family_.spec().plugin);
  }

  // A plugin generator's elements, in ranges on every core: each element depends on the point,
  // the buffer and its index only (family_api.h), so the ranges do not change the bytes.
  std::vector<std::uint8_t> generate_with_plugin(const generator_spec& g, const std::string& name,
                                                 const std::string& dtype, std::uint64_t count) {
    const kl_family_generate_fn fn = plugin()->generator(g.function);
    const plugin_point p = make_point();
    const std::size_t size = data_dtype_size(dtype);
    std::vector<std::uint8_t> out(data_bytes(count, dtype));
    constexpr std::size_t chunk_elements = 1 << 16;
    for_each_chunk(count, (count + chunk_elements - 1) / chunk_elements, [&](const chunk_range& r) {
      char error[1024] = "";
      const int status = fn(&p.point, name.c_str(), dtype.c_str(), out.data() + r.begin * size,
                            r.begin, r.end - r.begin, error, sizeof error);
      if (status != KL_FAMILY_OK)
        throw std::runtime_error(
            family_.spec().plugin + ": generator '" + g.function + "' for " + name + " failed: " +
            (error[0] ? std::string(error, strnlen(error, sizeof error)) : "(no message)"));
    });
    return out;
  }

  // The plugin's reference, on the host: every output in its own type.
  void run_plugin_reference() {
    const family_spec& s = family_.spec();
    const kl_family_reference_fn fn = plugin()->reference(s.reference.plugin_function);
    const plugin_point p = make_point();
    std::vector<kl_family_buffer> ins, outs;
    std::vector<std::string> out_names;
    for (auto& b : buffers_) {
      if (b.spec->role == buffer_role::in)
        ins.push_back({b.spec->name.c_str(), b.dtype.c_str(), b.host.data(), b.count});
      if (b.spec->is_output()) {
        // Filled with the bitwise complement of the outputs' poison: where the plugin writes
        // nothing, a variant that writes nothing either does not match it by chance. A buffer
        // with a start starts there, as the variants' does.
        auto& ref = references_[b.spec->name];
        if (b.spec->has_start()) {
          ref = start_in(b, b.dtype);
        } else {
          ref.resize(b.count * data_dtype_size(b.dtype));
          const std::uint32_t fill = ~poison_bits;
          for (std::size_t i = 0; i < ref.size(); ++i)
            ref[i] = static_cast<std::uint8_t>(fill >> (8 * (i % 4)));
        }
        outs.push_back({b.spec->name.c_str(), b.dtype.c_str(), ref.data(), b.count});
      }
    }
    char error[1024] = "";
    const int status = fn(&p.point, ins.data(), static_cast<std::uint32_t>(ins.size()), outs.data(),
                          static_cast<std::uint32_t>(outs.size()), error, sizeof error);
    if (status != KL_FAMILY_OK)
      throw std::runtime_error(
          s.plugin + ": reference '" + s.reference.plugin_function + "' failed: " +
          (error[0] ? std::string(error, strnlen(error, sizeof error)) : "(no message)"));
  }

  // An integer output whose reference is in its own type is poisoned with the reference's
  // bitwise complement: every value is a possible result there (a soft bit is any byte), so no
  // fixed pattern is sure to differ from the reference, and the complement differs in every bit.
  // A float output keeps the fixed pattern, a NaN that no rule accepts.
  void make_complements() {
    for (const auto& b : buffers_) {
      if (b.spec->role != buffer_role::out || b.spec->has_start()) continue;
      const std::size_t bytes = b.count * data_dtype_size(b.dtype);
      const auto& ref = references_.at(b.spec->name);
      const bool integral = b.dtype == "uint8" || b.dtype == "int32" || b.dtype == "int64";
      if (!integral || ref.size() != bytes) continue;  // a float64 reference: not its bytes
      std::vector<std::uint8_t> complement(b.device.bytes(), 0xff);
      for (std::size_t i = 0; i < bytes; ++i) complement[i] = static_cast<std::uint8_t>(~ref[i]);
      cuda::device_buffer d(complement.size());
      d.upload(complement.data(), complement.size());
      complements_.emplace(b.spec->name, std::move(d));
    }
  }

  void run_reference() {
    const family_spec& s = family_.spec();
    const nvrtc::compile_result& image =
        reference_image(family_.reference_request(config_.dtype, device_.arch(), config_.op));
    cuda::module mod(image.cubin);
    CUfunction f = mod.function(
        image.lowered_names.at(family_.reference_expression(config_.dtype, config_.op)));
    std::map<std::string, cuda::device_buffer> outs, mags;
    std::map<std::string, CUdeviceptr> out_ptrs;
    std::vector<CUdeviceptr> mag_ptrs;  // after the args, in out-buffer order
    for (const auto& b : buffers_) {
      if (!b.spec->is_output()) continue;
      const std::size_t size = s.reference.type == "T" ? data_dtype_size(b.dtype) : 8;
      cuda::device_buffer d(std::max<std::size_t>(b.count * size, 4));
      if (b.spec->has_start()) {  // the reference starts where the variants do
        const auto start = start_in(b, s.reference.type == "T" ? b.dtype : "float64");
        d.upload(start.data(), start.size());
      } else {
        KL_CU(cuMemsetD32Async(d.get(), poison_bits, d.bytes() / 4, nullptr));
      }
      out_ptrs[b.spec->name] = d.get();
      outs.emplace(b.spec->name, std::move(d));
      if (s.reference_magnitudes()) {
        cuda::device_buffer m(std::max<std::size_t>(b.count * 8, 8));
        // A NaN: a magnitude the reference does not write fails every element it bounds.
        KL_CU(cuMemsetD32Async(m.get(), poison_bits, m.bytes() / 4, nullptr));
        mag_ptrs.push_back(m.get());
        mags.emplace(b.spec->name, std::move(m));
      }
    }
    zero_workspaces(nullptr);
    auto vars = vars_;
    vars["BLOCK"] = s.reference.block;
    int per_sm = 0;
    KL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f,
                                                      static_cast<int>(s.reference.block), 0));
    vars["SM_COUNT"] = device_.sm_count;
    vars["RESIDENT_BLOCKS"] = std::max(1, per_sm) * device_.sm_count;
    launch_dims dims;
    try {
      dims = evaluate_dims(s.reference.block_dims, s.reference.grid_dims, s.reference.block, vars,
                           config_.describe());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error("the reference's launch (" + s.path + "): " + e.what());
    }
    argument_pack pack = arguments(out_ptrs);
    for (CUdeviceptr m : mag_ptrs) pack.add_pointer(m);
    KL_CU(cuLaunchKernel(f, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1],
                         dims.block[2], 0, nullptr, pack.params(), nullptr));
    cuda::synchronize_context();
    for (auto& [name, d] : outs) {
      const data_buffer& b = buffer(name);
      const std::size_t size = s.reference.type == "T" ? data_dtype_size(b.dtype) : 8;
      std::vector<std::uint8_t> host(b.count * size);
      d.download(host.data(), host.size());
      references_[name] = std::move(host);
    }
    for (auto& [name, m] : mags) {
      std::vector<std::uint8_t> host(buffer(name).count * 8);
      m.download(host.data(), host.size());
      magnitudes_[name] = std::move(host);
    }
  }

  const data_family& family_;
  problem_config config_;
  cuda::device_info device_;
  std::map<std::string, std::int64_t> vars_;
  const op_spec* op_ = nullptr;  // plan passes
  std::uint64_t padded_n_ = 0;
  std::vector<data_buffer> buffers_;
  std::map<std::string, std::vector<std::uint8_t>> references_;  // by out buffer
  std::map<std::string, std::vector<std::uint8_t>> magnitudes_;  // by out buffer, rule bound
  std::map<std::string, cuda::device_buffer> complements_;       // by out buffer: its poison
  std::map<std::string, cuda::device_buffer> starts_;  // by inout buffer: its generated values
  // Where check() downloads each out buffer, made at its first check.
  mutable std::map<std::string, cuda::staging_buffer> staging_;
  cuda::device_buffer spacer_;  // relocate(): ahead of the current placement
};

// A runtime-compiled variant: one launch with its header's (or the family's) dimensions.
class source_op final : public operation {
 public:
  source_op(data_problem& p, const variant_descriptor& v, const source_kernel& k)
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
  data_problem& problem_;
  source_kernel kernel_;
  std::vector<scratch_buffer> scratch_;
  argument_pack args_;
  launch_dims dims_;
};

// A plugin variant: the in buffers as inputs, the out buffers as outputs, the axes as sizes.
class plugin_op final : public operation {
 public:
  plugin_op(data_problem& p, const plugin_kernel& k) : problem_(p), launch_(k, args_of(p)) {}
  void enqueue(CUstream stream) override {
    problem_.zero_workspaces(stream);
    problem_.restore_starts(stream, true);
    launch_.run(stream);
  }
  void poison_output(CUstream stream) override { problem_.poison(stream); }
  void prepare(CUstream stream) override { problem_.restore_starts(stream, false); }
  check_result check() const override { return problem_.check(); }

 private:
  static plugin_arguments args_of(data_problem& p) {
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
  data_problem& problem_;
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
  passes_op(data_problem& p, const variant_descriptor& v, const source_kernel& k)
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
  data_problem& problem_;
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
class copy_op final : public operation {
 public:
  copy_op(data_problem& p, const baseline_spec& b)
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
    KL_CU(cuMemcpyDtoDAsync(to_.device.get(), from_.device.get(), from_.host.size(), stream));
  }
  void poison_output(CUstream stream) override {
    KL_CU(cuMemcpyDtoDAsync(to_.device.get(), poison_.get(), poison_.bytes(), stream));
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

// The pipeline's view of a data problem: chunks of the pipeline axis are slices of every buffer.
class data_pipeline_problem final : public pipeline_problem {
 public:
  data_pipeline_problem(const data_family& fam, const problem_config& c,
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

  const problem_config& config() const override { return problem_.config(); }
  std::uint64_t units() const override { return units_; }
  const std::vector<buffer>& buffers() const override { return buffers_; }

  std::unique_ptr<chunk_launch> launch(const variant_descriptor& v, const source_kernel& k,
                                       std::uint64_t first, std::uint64_t count) override {
    if (!v.tensor_maps.empty())
      throw not_supported(v.qualified_name() +
                          " takes tensor maps, which --pipeline does not encode per chunk");
    if (!v.scratch.empty())
      throw not_supported(v.qualified_name() +
                          " takes scratch buffers, which --pipeline does not make per chunk");
    // The chunk is a problem of `count` units: its own axis value, for the scalars and the grid.
    problem_config chunk = problem_.config();
    if (chunk.shape.empty())
      chunk.size = count;
    else
      chunk.shape.at(axis_index_) = count;
    const data_family& fam = problem_.family();
    auto vars = fam.axis_variables(chunk);
    auto out = std::make_unique<launch_of_chunk>();
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

  std::vector<std::uint8_t> poison(const std::string& output) const override {
    return problem_.poison_bytes(output);
  }
  check_result check(const std::map<std::string, const std::uint8_t*>& outputs) const override {
    return problem_.check(outputs);
  }

 private:
  struct launch_of_chunk final : chunk_launch {
    CUfunction function = nullptr;
    unsigned shared = 0;
    launch_dims dims;
    argument_pack args;
    void enqueue(CUstream stream) override {
      KL_CU(cuLaunchKernel(function, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0],
                           dims.block[1], dims.block[2], shared, stream, args.params(), nullptr));
    }
  };

  data_problem problem_;
  std::size_t axis_index_ = 0;
  std::uint64_t units_ = 0;
  std::vector<buffer> buffers_;
};

std::unique_ptr<operation> data_problem::bind(const variant_descriptor& v, const source_kernel& k) {
  if (family_.spec().plan == launch_plan::passes) return std::make_unique<passes_op>(*this, v, k);
  return std::make_unique<source_op>(*this, v, k);
}
std::unique_ptr<operation> data_problem::bind(const variant_descriptor&, const plugin_kernel& k) {
  return std::make_unique<plugin_op>(*this, k);
}
std::unique_ptr<operation> data_problem::bind_builtin(const variant_descriptor& v) {
  const baseline_spec& b = family_.spec().baseline;
  if (v.name != "d2d_copy" || b.copy_from.empty())
    throw not_supported(v.qualified_name() + " is not a variant of this family");
  return std::make_unique<copy_op>(*this, b);
}

}  // namespace

std::unique_ptr<problem> data_family::make_problem(const problem_config& c,
                                                   const cuda::device_info& device) const {
  return std::make_unique<data_problem>(*this, c, device);
}

std::unique_ptr<pipeline_problem> data_family::make_pipeline_problem(
    const problem_config& c, const cuda::device_info& device) const {
  if (spec_.pipeline_axis.empty())
    throw std::invalid_argument("family " + spec_.name + " has no [pipeline] (" + spec_.path + ")");
  return std::make_unique<data_pipeline_problem>(*this, c, device);
}

}  // namespace kl
