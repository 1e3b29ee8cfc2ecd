// A family described as data: the entry points that read a family.toml, and what a read
// family_spec answers. The reading of its sections is spec/family_toml.hpp's.
#include "spec/family_spec.hpp"

#include "core/file_read.hpp"
#include "spec/family_toml.hpp"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;

namespace kl {
namespace {

// The most read of a family.toml.
constexpr std::uint64_t max_description_bytes = std::uint64_t{1} << 20;

const std::vector<std::string> reserved = {"BLOCK",    "TSIZE", "DTYPE", "T",   "RESIDENT_BLOCKS",
                                           "SM_COUNT", "GRID",  "sqrt",  "min", "max",
                                           "ceil_div"};

}  // namespace

const buffer_spec* family_spec::buffer(const std::string& n) const {
  for (const auto& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}

const op_spec* family_spec::op(const std::string& n) const {
  for (const auto& o : ops)
    if (o.name == n) return &o;
  return nullptr;
}

std::string cxx_type_of(const std::string& dtype) {
  if (dtype == "uint8") return "unsigned char";
  if (dtype == "int32") return "int";
  if (dtype == "int64") return "long long";
  if (dtype == "float32") return "float";
  if (dtype == "float64") return "double";
  if (dtype == "float16") return "__half";          // cuda_fp16.h
  if (dtype == "bfloat16") return "__nv_bfloat16";  // cuda_bf16.h
  return dtype;
}

bool is_reserved_name(const std::string& name) {
  return std::find(reserved.begin(), reserved.end(), name) != reserved.end() ||
         family_toml::is_dtype(name);  // a require's constants (DTYPE == float32)
}

family_spec parse_family_spec(const std::string& text, const std::string& path,
                              const std::string& dir, const std::string& name,
                              const std::vector<std::string>& plugin_dirs) {
  family_toml::reader r(path, dir);
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    r.fail(static_cast<int>(e.source().begin.line), std::string(e.description()));
  }
  family_spec s;
  s.name = name;
  s.path = path;
  s.dir = dir;
  s.text = text;
  r.only_keys(root,
              {"summary", "plugin", "dtypes", "roofline", "bytes", "flops", "axes", "require",
               "ops", "buffers", "kernel", "reference", "compare", "baseline", "pipeline"},
              "family.toml");

  family_toml::spec_reader read(r, root, s, dir);
  read.what_it_is(plugin_dirs);
  read.axes();
  read.variables_requirements_and_ops();
  read.buffers();
  read.kernel();
  read.reference();
  read.comparison();
  read.baseline();
  read.pipeline();
  return s;
}

family_spec load_family_spec(const std::string& dir, const std::vector<std::string>& plugin_dirs) {
  const std::string path = (fs::path(dir) / "family.toml").string();
  const file_read text = read_regular_file(path, max_description_bytes);
  if (!text.ok()) throw metadata_error(path, 1, "cannot be read (" + text.why + ")");
  return parse_family_spec(text.bytes, path, dir, fs::path(dir).filename().string(), plugin_dirs);
}

}  // namespace kl
