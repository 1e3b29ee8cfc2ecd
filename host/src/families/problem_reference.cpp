// A problem's reference, computed once when it is made: a kernel of the family's folder compiled
// by NVRTC and run on the problem's inputs, or the family plugin's function on the host; and the
// plugin's generators, which make inputs from the same point the reference sees.
#include "families/problem.hpp"

#include "cuda/resources.hpp"
#include "nvrtc/compiler.hpp"
#include "nvrtc/hash.hpp"
#include "parallel/chunks.hpp"
#include "plugin_host/family_plugin.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace kl {

namespace {

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

// What family_api.h's functions get: the configuration, with every axis' value.
struct plugin_point {
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  std::vector<double> values;
  kl_family_point point{};
};

plugin_point make_point(const problem& pr) {
  const kl::family& f = pr.family();
  const problem_config& c = pr.config();
  const auto& vars = pr.variables();
  plugin_point p;
  // Every axis in the file's order: the size axes and the real ones by their lines.
  std::vector<std::pair<int, std::pair<std::string, double>>> axes;
  for (const auto& a : f.spec().axes)
    axes.push_back({a.line, {a.name, static_cast<double>(vars.at(a.name))}});
  const auto reals = f.real_values(c);
  for (std::size_t i = 0; i < reals.size(); ++i)
    axes.push_back({f.spec().real_axes[i].line, reals[i]});
  std::stable_sort(axes.begin(), axes.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& [line, axis] : axes) {
    p.names.push_back(axis.first);
    p.values.push_back(axis.second);
  }
  for (const auto& n : p.names) p.name_ptrs.push_back(n.c_str());
  p.point.family = f.spec().name.c_str();
  p.point.dtype = c.dtype.c_str();
  p.point.op = c.op.c_str();
  p.point.input_mode = c.input_mode.c_str();
  p.point.seed = c.seed;
  p.point.axis_names = p.name_ptrs.data();
  p.point.axis_values = p.values.data();
  p.point.num_axes = static_cast<std::uint32_t>(p.names.size());
  return p;
}

std::shared_ptr<const family_plugin> plugin_of(const kl::family& f) {
  return open_family_plugin(f.spec().plugin);
}

}  // namespace

std::vector<std::uint8_t> problem::generate_with_plugin(const generator_spec& g,
                                                        const std::string& name,
                                                        const std::string& dtype,
                                                        std::uint64_t count) {
  const kl_family_generate_fn fn = plugin_of(family_)->generator(g.function);
  const plugin_point p = make_point(*this);
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

void problem::run_plugin_reference() {
  const family_spec& s = family_.spec();
  const kl_family_reference_fn fn = plugin_of(family_)->reference(s.reference.plugin_function);
  const plugin_point p = make_point(*this);
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

void problem::read_expected() {
  const family_spec& s = family_.spec();
  for (const auto& [name, path] : s.reference.expected) {
    const data_buffer& b = buffer(name);
    const std::string type = s.reference.type == "T" ? b.dtype : "float64";
    generator_spec file;
    file.kind = "npy";
    file.file = path;
    try {
      references_[name] = generate_buffer(file, type, b.count, config_.seed, name);
    } catch (const std::exception& e) {
      throw std::runtime_error("[reference] expected " + name + " (" + s.path + "), " +
                               std::to_string(b.count) + " elements of " + type + " at " +
                               config_.describe() + ": " + e.what());
    }
  }
}

void problem::make_complements() {
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

void problem::run_reference() {
  const family_spec& s = family_.spec();
  const nvrtc::compile_result& image =
      reference_image(family_.reference_request(config_.dtype, device_.arch(), config_.op));
  cuda::module mod(image.cubin);
  CUfunction f =
      mod.function(image.lowered_names.at(family_.reference_expression(config_.dtype, config_.op)));
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
  KL_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, static_cast<int>(s.reference.block),
                                                    0));
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

}  // namespace kl
