// The family a folder's family.toml describes: its axes and buffers at a configuration, the checks
// of a header and of a configuration's expressions, name expressions and launch dimensions, the
// reference's compile request; and the registry the folders' families are added to.
#include "families/family.hpp"

#include "nvrtc/compiler.hpp"
#include "spec/dtypes.hpp"
#include "spec/expression.hpp"
#include "spec/family_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace fs = std::filesystem;

namespace kl {

family::family(family_spec spec, std::vector<std::string> include_dirs)
    : spec_(std::move(spec)), include_dirs_(std::move(include_dirs)) {}

std::vector<std::string> family::shape_variables() const {
  std::vector<std::string> out;
  for (const auto& a : spec_.axes) out.push_back(a.name);
  out.push_back("RESIDENT_BLOCKS");
  out.push_back("SM_COUNT");
  return out;
}

std::vector<axis_info> family::axes() const {
  std::vector<axis_info> out;
  const auto where = [&](int line) { return spec_.path + ":" + std::to_string(line); };
  for (const auto& a : spec_.axes)
    out.push_back({a.name, static_cast<std::uint64_t>(a.default_value),
                   static_cast<std::uint64_t>(a.min), static_cast<std::uint64_t>(a.max),
                   where(a.line)});
  for (const auto& a : spec_.real_axes)
    out.push_back({a.name, a.default_value, a.min, a.max, where(a.line)});
  return out;
}

std::vector<axis_value> family::default_axes() const {
  std::vector<axis_value> out;
  for (const auto& a : axes()) out.push_back({a.name, a.default_value});
  return out;
}

std::vector<std::pair<std::string, double>> family::real_values(const problem_config& c) const {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& a : spec_.real_axes) {
    double v = a.default_value;
    for (const auto& given : c.axes)
      if (!given.whole() && given.name == a.name) v = std::get<double>(given.value);
    if (!(v >= a.min && v <= a.max)) {
      char text[128];
      std::snprintf(text, sizeof text, " = %g is outside its limits %g..%g (", v, a.min, a.max);
      throw std::invalid_argument(spec_.name + ": " + a.name + text + spec_.path + ":" +
                                  std::to_string(a.line) + ")");
    }
    out.emplace_back(a.name, v);
  }
  return out;
}

std::map<std::string, std::int64_t> family::axis_variables(const problem_config& c) const {
  const std::vector<std::uint64_t> shape = c.shape();
  if (shape.size() != spec_.axes.size())
    throw std::invalid_argument(spec_.name + " needs " + std::to_string(spec_.axes.size()) +
                                " dimension(s), got " + std::to_string(shape.size()));
  std::map<std::string, std::int64_t> vars = {
      {"TSIZE", static_cast<std::int64_t>(data_dtype_size(c.dtype))}};
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const axis_spec& a = spec_.axes[i];
    if (shape[i] < static_cast<std::uint64_t>(a.min) ||
        shape[i] > static_cast<std::uint64_t>(a.max))
      throw std::invalid_argument(spec_.name + ": " + a.name + " = " + std::to_string(shape[i]) +
                                  " is outside its limits " + std::to_string(a.min) + ".." +
                                  std::to_string(a.max) + " (" + spec_.path + ":" +
                                  std::to_string(a.line) + ")");
    vars[a.name] = static_cast<std::int64_t>(shape[i]);
  }
  auto condition_vars = vars;  // a condition also sees DTYPE (DTYPE == float32)
  add_dtype_variables(condition_vars, c.dtype);
  for (const condition_spec& cond : spec_.requires)
    if (evaluate_as(cond.text, condition_vars, spec_.name + ": require at " + c.describe(),
                    spec_.path + ":" + std::to_string(cond.line)) == 0)
      throw std::invalid_argument(spec_.name + ": " + c.describe() + " does not meet '" +
                                  cond.text + "' (" + spec_.path + ":" + std::to_string(cond.line) +
                                  ")");
  return vars;
}

std::string family::buffer_dtype(const buffer_spec& b, const problem_config& c) const {
  return b.type == "T" ? c.dtype : b.type;
}

std::uint64_t family::element_count(const buffer_spec& b, const problem_config& c) const {
  const std::string where = spec_.path + ":" + std::to_string(b.line);
  const std::int64_t n =
      evaluate_as(b.count, axis_variables(c),
                  spec_.name + ": buffer " + b.name + "'s count at " + c.describe(), where);
  if (n < 1)
    throw std::invalid_argument(spec_.name + ": buffer " + b.name + " has " + std::to_string(n) +
                                " elements at " + c.describe() + "; a buffer holds at least one (" +
                                where + ")");
  return static_cast<std::uint64_t>(n);
}

std::uint64_t family::buffer_bytes(const buffer_spec& b, const problem_config& c) const {
  const std::uint64_t n = element_count(b, c);
  try {
    return data_bytes(n, buffer_dtype(b, c));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(spec_.name + ": buffer " + b.name + " at " + c.describe() + ": " +
                                e.what() + " (" + spec_.path + ":" + std::to_string(b.line) + ")");
  }
}

double family::problem_bytes(const problem_config& c) const {
  if (!spec_.bytes.empty())
    return static_cast<double>(evaluate_as(spec_.bytes, axis_variables(c),
                                           spec_.name + ": bytes at " + c.describe(),
                                           spec_.path + ":" + std::to_string(spec_.bytes_line)));
  double bytes = 0;  // an inout buffer is read and written
  for (const auto& b : spec_.buffers)
    if (b.role != buffer_role::workspace)
      bytes += static_cast<double>(buffer_bytes(b, c)) * (b.role == buffer_role::inout ? 2 : 1);
  return bytes;
}

double family::problem_flops(const problem_config& c) const {
  return static_cast<double>(evaluate_as(spec_.flops, axis_variables(c),
                                         spec_.name + ": flops at " + c.describe(),
                                         spec_.path + ":" + std::to_string(spec_.flops_line)));
}

std::vector<std::string> family::ops() const {
  std::vector<std::string> out;
  for (const auto& o : spec_.ops) out.push_back(o.name);
  return out;
}

void family::check(const parsed_header& h) const {
  const variant_descriptor& d = h.descriptor;
  const bool passes = spec_.plan == launch_plan::passes;
  for (const char* key : {"tile", "grid", "bounds", "output", "workspace"})
    if (!passes && h.key_lines.count(key))
      throw metadata_error(d.origin_path, h.line_of(key),
                           std::string("'") + key + "' belongs to the plan passes; " + spec_.name +
                               " launches each variant once with its grid_dims " +
                               "and block_dims (docs/families.md)");
  // And the keys of a family that launches each variant once with its [kernel] args.
  for (const char* key : {"scratch", "tensor_maps"})
    if (passes && h.key_lines.count(key))
      throw metadata_error(
          d.origin_path, h.line_of(key),
          std::string(key) + ": " + spec_.name + " launches its variants in passes; " + key +
              " belong to families that launch a variant once with its [kernel] "
              "args (in passes a variant's own memory is its header's 'workspace', zeroed "
              "once, which the kernel leaves zeroed)");
  if (passes && d.tile.empty())
    throw metadata_error(d.origin_path, h.header_line,
                         "a variant of " + spec_.name +
                             " needs 'tile: <expression>' (the elements one block consumes; "
                             "plan passes, " +
                             spec_.path + ")");
  if (passes && (!d.grid_dims.empty() || !d.block_dims.empty()))
    throw metadata_error(d.origin_path, h.line_of(d.grid_dims.empty() ? "block_dims" : "grid_dims"),
                         spec_.name + " plans its grids from 'tile' and 'grid' (plan passes)");
  for (const auto& o : d.ops)
    if (!spec_.op(o))
      throw metadata_error(d.origin_path, h.line_of("ops"),
                           spec_.name + " has no op '" + o + "'" +
                               (spec_.ops.empty() ? "" : " (" + spec_.path + ": [ops])"));
  for (const auto& t : d.dtypes)
    if (std::find(spec_.dtypes.begin(), spec_.dtypes.end(), t) == spec_.dtypes.end())
      throw metadata_error(d.origin_path, h.line_of("dtypes"),
                           spec_.name + " has no dtype '" + t + "' (" + spec_.path + ")");
  for (const auto& [name, text] : d.params)
    for (const auto& a : spec_.axes)
      if (name == a.name)
        throw metadata_error(d.origin_path, h.line_of("params"),
                             "param " + name + " has the name of one of " + spec_.name + "'s axes");
  // Every launch expression must evaluate at the axes' defaults for every block size.
  problem_config c;
  c.dtype = spec_.dtypes.front();
  c.axes = default_axes();
  // Each of `texts` at every block, at least `least`; an error names the header's line of `key`,
  // `what` is the message's start.
  const auto evaluate_at_every_block = [&](const std::vector<std::string>& texts, const char* key,
                                           const std::string& what,
                                           std::int64_t least = INT64_MIN) {
    for (unsigned b : d.blocks) {
      try {
        auto vars = axis_variables(c);
        vars["BLOCK"] = b;
        for (const auto& [name, text] : d.params) vars[name] = evaluate(text, vars);
        for (const auto& text : texts)
          if (const std::int64_t v = evaluate(text, vars); v < least)
            throw metadata_error(d.origin_path, h.line_of(key),
                                 what + "'" + text + "' is " + std::to_string(v) +
                                     " at BLOCK=" + std::to_string(b) + " (at least " +
                                     std::to_string(least) + ")");
      } catch (const expression_error& e) {
        throw metadata_error(
            d.origin_path, h.line_of(key),
            what + e.what() + " (" + key + " sees the axes, BLOCK, TSIZE and the params)");
      }
    }
  };
  evaluate_at_every_block({d.shared_bytes}, "shared_bytes", "shared_bytes: ");
  // Scratch buffers: typed, named apart from the family's buffers, sized by an expression.
  const auto is_family_buffer = [&](const std::string& name) {
    return std::any_of(spec_.buffers.begin(), spec_.buffers.end(),
                       [&](const buffer_spec& x) { return x.name == name; });
  };
  for (const auto& sc : d.scratch) {
    const int at = h.line_of("scratch");
    if (sc.type != "T" && data_dtype_size(sc.type) == 0)
      throw metadata_error(d.origin_path, at,
                           "scratch: " + sc.name + "'s type '" + sc.type +
                               "' is not T or a dtype (uint8, int32, int64, float16, bfloat16, "
                               "float32, float64)");
    if (is_family_buffer(sc.name))
      throw metadata_error(d.origin_path, at,
                           "scratch: " + sc.name + " is already a buffer of " + spec_.name + " (" +
                               spec_.path + ")");
    evaluate_at_every_block({sc.count}, "scratch", "scratch: " + sc.name + ": ", 1);
  }
  // Tensor maps: of the family's buffers or the variant's scratch.
  for (const auto& t : d.tensor_maps) {
    const int at = h.line_of("tensor_maps");
    const bool scratch = std::any_of(d.scratch.begin(), d.scratch.end(),
                                     [&](const scratch_spec& x) { return x.name == t.buffer; });
    if (!is_family_buffer(t.buffer) && !scratch) {
      std::string names;
      for (const auto& x : spec_.buffers) names += (names.empty() ? "" : ", ") + x.name;
      throw metadata_error(d.origin_path, at,
                           "tensor_maps: " + t.buffer + " is not a buffer of " + spec_.name + " (" +
                               names + ") nor of the header's scratch");
    }
    std::vector<std::string> texts = t.dims;
    texts.insert(texts.end(), t.box.begin(), t.box.end());
    evaluate_at_every_block(texts, "tensor_maps", "tensor_maps: " + t.buffer + ": ");
  }
}

std::map<std::string, std::string> family::type_words(const std::string& dtype,
                                                      const std::string& op) const {
  std::map<std::string, std::string> words = {{"T", cxx_type_of(dtype)}};
  if (const op_spec* o = spec_.op(op); o && !o->functor.empty())
    words["OP"] = substitute_words(o->functor, words);
  return words;
}

std::string family::name_expression(const variant_descriptor& v, unsigned block,
                                    const problem_config& c) const {
  std::map<std::string, std::int64_t> vars = {
      {"BLOCK", block}, {"TSIZE", static_cast<std::int64_t>(data_dtype_size(c.dtype))}};
  std::map<std::string, std::string> words = type_words(c.dtype, c.op);
  words["BLOCK"] = std::to_string(block);
  for (const auto& [name, text] : v.params) {
    vars[name] = evaluate(text, vars);  // compile-time constants: never the axes
    words[name] = std::to_string(vars[name]);
  }
  return substitute_words(v.entry, words);
}

launch_dims evaluate_dims(const std::vector<std::string>& block_dims,
                          const std::vector<std::string>& grid_dims, unsigned block,
                          const std::map<std::string, std::int64_t>& vars,
                          const std::string& what) {
  launch_dims d;
  auto fill = [&](const std::vector<std::string>& exprs, unsigned* out, const char* key,
                  const std::int64_t limits[3]) {
    for (std::size_t i = 0; i < exprs.size() && i < 3; ++i) {
      const std::int64_t x = evaluate(exprs[i], vars);
      if (x < 1 || x > limits[i])
        throw std::invalid_argument(std::string(key) + " '" + exprs[i] + "' is " +
                                    std::to_string(x) + " for " + what + " at block " +
                                    std::to_string(block) + " (allowed: 1.." +
                                    std::to_string(limits[i]) + ")");
      out[i] = static_cast<unsigned>(x);
    }
  };
  static const std::int64_t grid_limits[3] = {2147483647, 65535, 65535};
  static const std::int64_t block_limits[3] = {1024, 1024, 64};
  if (block_dims.empty())
    d.block[0] = block;
  else
    fill(block_dims, d.block, "block_dims", block_limits);
  fill(grid_dims, d.grid, "grid_dims", grid_limits);
  const std::uint64_t threads = std::uint64_t{d.block[0]} * d.block[1] * d.block[2];
  if (threads != block)
    throw std::invalid_argument("block_dims give " + std::to_string(d.block[0]) + "x" +
                                std::to_string(d.block[1]) + "x" + std::to_string(d.block[2]) +
                                " = " + std::to_string(threads) + " threads, not the block size " +
                                std::to_string(block));
  return d;
}

launch_dims family::launch(const variant_descriptor& v, unsigned block, const problem_config& c,
                           int sm_count, int resident_blocks) const {
  auto vars = axis_variables(c);
  vars["BLOCK"] = block;
  for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
  vars["SM_COUNT"] = sm_count;
  vars["RESIDENT_BLOCKS"] = resident_blocks;
  return evaluate_dims(v.block_dims.empty() ? spec_.block_dims : v.block_dims,
                       v.grid_dims.empty() ? spec_.grid_dims : v.grid_dims, block, vars,
                       c.describe());
}

unsigned family::dynamic_shared_bytes(const variant_descriptor& v, unsigned block,
                                      const problem_config& c) const {
  auto vars = axis_variables(c);
  vars["BLOCK"] = block;
  for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
  return static_cast<unsigned>(evaluate(v.shared_bytes, vars));
}

std::size_t family::device_bytes_needed(const problem_config& c) const {
  // Every term checked: a count near 2^63 must not wrap to a small total that seems to fit.
  std::uint64_t bytes = 0;
  const auto add = [&](std::uint64_t n, std::size_t size) {
    std::uint64_t term = 0;
    if (__builtin_mul_overflow(n, size, &term) || __builtin_add_overflow(bytes, term, &bytes))
      throw std::invalid_argument(spec_.name + ": the buffers of " + c.describe() +
                                  " are more bytes than 64 bits count (" + spec_.path + ")");
  };
  const std::size_t ref_size = spec_.reference.type == "float64" ? 8 : 0;
  for (const auto& b : spec_.buffers) {
    const std::uint64_t n = element_count(b, c);
    const std::string t = buffer_dtype(b, c);
    add(buffer_bytes(b, c), 1);  // an error names the buffer
    // While the problem is made, the reference kernel's own outputs (a plugin's stay on the
    // host).
    if (b.is_output() && spec_.reference.plugin_function.empty()) {
      add(n, ref_size ? ref_size : data_dtype_size(t));
      if (spec_.reference_magnitudes()) add(n, 8);
    }
    // An integer output with a reference in its own type: its poison, the reference's complement.
    if (b.role == buffer_role::out && !b.zero && (t == "uint8" || t == "int32" || t == "int64") &&
        ref_size == 0)
      add(n, data_dtype_size(t));
    // An inout buffer's start, kept apart.
    if (b.role == buffer_role::inout) add(n, data_dtype_size(t));
    // The copy baseline's poison: the complement of what it copies.
    if (b.name == spec_.baseline.copy_to) add(n, data_dtype_size(t));
    // Plan passes: the padding, and the partial results (at most half the input for tiles of
    // two elements and more).
    if (b.role == buffer_role::in && spec_.plan == launch_plan::passes)
      add(spec_.pad + n / 2, data_dtype_size(t));
  }
  return bytes;
}

std::string family::reference_expression(const std::string& dtype, const std::string& op) const {
  return substitute_words(spec_.reference.entry, type_words(dtype, op));
}

nvrtc::compile_request family::reference_request(const std::string& dtype, const std::string& arch,
                                                 const std::string& op) const {
  if (!spec_.reference.plugin_function.empty())
    throw std::logic_error(spec_.path + ": the reference is the plugin's, not a kernel");
  nvrtc::compile_request req;
  req.source = spec_.reference.source;
  req.path = spec_.reference.file;
  req.arch = arch;
  req.name_expressions = {reference_expression(dtype, op)};
  req.pre_includes = spec_.includes;
  req.include_dirs.push_back(spec_.dir);
  for (const auto& d : include_dirs_) req.include_dirs.push_back(d);
  return req;
}

std::vector<std::string> add_data_families(family_registry& registry,
                                           const std::vector<std::string>& kernels_dirs,
                                           const std::vector<std::string>& include_dirs,
                                           const std::vector<std::string>& plugin_dirs) {
  std::vector<std::string> warnings;
  for (const auto& dir : kernels_dirs) {
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    std::vector<fs::path> folders;
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
      std::error_code st;
      if (fs::is_regular_file(it->path() / "family.toml", st)) folders.push_back(it->path());
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& folder : folders) {
      const std::string name = folder.filename().string();
      const std::string path = (folder / "family.toml").string();
      // A folder of the same name in a later --kernels-dir adds variants, not a family.
      if (registry.find(name)) continue;
      if (!registry.broken(name).empty()) continue;  // the first folder's error stays
      try {
        registry.add(
            std::make_unique<family>(load_family_spec(folder.string(), plugin_dirs), include_dirs));
      } catch (const metadata_error& e) {
        registry.add_broken(name, e.what());
      }
    }
  }
  return warnings;
}

void family_registry::add(std::unique_ptr<family> f) {
  const std::string n = f->name();
  families_[n] = std::move(f);
}
void family_registry::add_broken(const std::string& name, const std::string& error) {
  broken_[name] = error;
}
std::string family_registry::broken(const std::string& name) const {
  auto it = broken_.find(name);
  return it == broken_.end() ? "" : it->second;
}
const family* family_registry::find(const std::string& name) const {
  auto it = families_.find(name);
  return it == families_.end() ? nullptr : it->second.get();
}
std::vector<std::string> family_registry::names() const {
  std::vector<std::string> out;
  for (const auto& kv : families_) out.push_back(kv.first);
  return out;
}

std::string substitute_words(const std::string& text,
                             const std::map<std::string, std::string>& words) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (is_word(text[i])) {
      std::size_t j = i;
      while (j < text.size() && is_word(text[j])) ++j;
      const std::string word = text.substr(i, j - i);
      auto it = words.find(word);
      out += it == words.end() ? word : it->second;
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::size_t dtype_size(const std::string& dtype) {
  if (const std::size_t size = data_dtype_size(dtype)) return size;
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

}  // namespace kl
