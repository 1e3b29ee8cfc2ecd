#include "app/scaffold.hpp"

#include "app/environment.hpp"
#include "app/plan.hpp"
#include "core/errors.hpp"
#include "registry/registry.hpp"
#include "report/output_file.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <system_error>
#include <tuple>

namespace fs = std::filesystem;

namespace kl::app {

namespace {

// Replaces every "@NAME@" in `text`.
std::string fill(std::string text, const std::string& name) {
  for (std::size_t at; (at = text.find("@NAME@")) != std::string::npos;) text.replace(at, 6, name);
  return text;
}

// The skeleton family's description. The exact inputs are quarters in [-128, 128], so x * x + 1
// is exact in float32 and the comparison can be tight; 2 ulps allow for a variant computed without
// a fused multiply-add (x * x rounded, then + 1 rounded) against the float64 reference.
constexpr const char* family_toml_text =
    R"text(# @NAME@: a family of one axis, N, whose kernels compute y[i] = x[i] * x[i] + 1. It was
# written by `kernlab new family @NAME@` and runs as it is:
#   @RUN@
# Make it your problem: the math in reference.cu and simple.cu, then the buffers, axes, bytes and
# comparison below (docs/families.md lists every key; kernlab --list shows the family).
summary  = "y = x * x + 1, element by element (made by kernlab new family)"
dtypes   = ["float32", "float64"]
roofline = "bandwidth"
bytes    = "2 * N * TSIZE"          # x read once, y written once
flops    = "2 * N"                  # a multiply and an add per element

[axes]                              # --size 2^20, --size 2^20:2^28, --axis N=1000
N = { default = 16777216, min = 1, max = 2147483647 }

[[buffers]]
name   = "x"
role   = "in"
type   = "T"
count  = "N"
exact  = { kind = "grid", den = 4, min = -128, max = 128 }   # --input exact (the default)
random = { kind = "uniform", min = -10.0, max = 10.0 }       # --input random

[[buffers]]
name  = "y"
role  = "out"
type  = "T"
count = "N"

[kernel]
args      = ["x", "y", "N"]         # each variant's parameters, in order: (const T*, T*, int)
grid_dims = ["min(RESIDENT_BLOCKS, ceil_div(N, BLOCK))"]   # a variant's header may say otherwise

[reference]
file      = "reference.cu"
entry     = "@NAME@_reference<T>"
type      = "float64"               # the reference writes y in double precision
block     = 256
grid_dims = ["min(ceil_div(N, 256), 1048576)"]

[compare]
rule    = "ulp"
max_ulp = 2

[baseline]
copy = { from = "x", to = "y" }     # the speed of light of a kernel that reads x and writes y
)text";

constexpr const char* reference_text =
    R"text(// The reference of @NAME@: what every variant must compute, as plainly as possible and in
// double precision (family.toml's [reference] type = "float64"). It runs once per configuration,
// before the variants, so its speed does not matter. It takes the variants' arguments, but its
// output is double.
template <typename T>
__global__ void @NAME@_reference(const T* x, double* y, int n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const double v = static_cast<double>(x[i]);
    y[i] = v * v + 1.0;
  }
}
)text";

constexpr const char* simple_text =
    R"text(// The first variant of @NAME@: one thread per element, in a grid-stride loop over as many blocks
// as fit on the GPU at once (family.toml's grid_dims). Copy it to try an idea
// (`kernlab new variant @NAME@ IDEA`): each file is a variant, named after the file.
/* kernlab
family:  @NAME@
entry:   simple<BLOCK, T>
blocks:  128 256 512 1024
summary: one thread per element, grid-stride
order:   1
*/

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) simple(const T* x, T* y, int n) {
  const long long stride = static_cast<long long>(gridDim.x) * BLOCK;
  for (long long i = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; i < n;
       i += stride)
    y[i] = x[i] * x[i] + T(1);
}
)text";

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b);
}

// `dir`/`file`, refusing one that exists: kernlab new never writes over a file.
void write_new_file(const fs::path& path, const std::string& text) {
  std::error_code ec;
  if (fs::exists(path, ec))
    throw usage_error("kernlab new: " + path.string() +
                      " exists; kernlab new writes no file over another (pick another name)");
  fs::create_directories(path.parent_path(), ec);
  if (ec)
    throw io_error("kernlab new: cannot make the folder " + path.parent_path().string() + ": " +
                   ec.message());
  write_output_file(path.string(), text);
}

void check_name(const std::string& what, const std::string& name) {
  if (!is_identifier(name))
    throw usage_error("kernlab new " + what + ": '" + name + "' is not a name (a " + what +
                      " is named after its " + (what == "family" ? "folder" : "file") +
                      ": letters, digits and '_', not starting with a digit)");
}

int new_family(const std::string& program, const family_registry& families, const fs::path& dir,
               const std::string& name) {
  check_name("family", name);
  if (families.find(name) || !families.broken(name).empty())
    throw usage_error("kernlab new family " + name +
                      ": a family of that name exists (kernlab --list shows it); add a variant "
                      "with kernlab new variant " +
                      name + " NAME");
  if (fs::exists(dir / name))
    throw usage_error("kernlab new family " + name + ": " + (dir / name).string() +
                      " exists; kernlab new writes no file over another");
  const std::string run = program + " --kernels-dir " + dir.string() + " --family " + name;
  for (const auto& [file, text] : family_skeleton(name, run))
    write_new_file(dir / name / file, text);
  std::cout << "kernlab new: wrote " << (dir / name).string()
            << "/ (family.toml, reference.cu, simple.cu)\n"
            << "  compile it:        " << run << " --compile-only\n"
            << "  validate and time: " << run << "\n"
            << "  add a variant:     " << program << " new variant " << name
            << " IDEA --kernels-dir " << dir.string() << "\n";
  return 0;
}

// The family's kernel file a new variant starts from: `from` (a variant's or a tunable file's
// name), else its first plain file in the family's order.
const registry_entry& source_of(const registry& reg, const std::string& family,
                                const std::string& from) {
  std::vector<const registry_entry*> files;
  for (const auto& e : reg.entries())
    if (e.descriptor.family == family && e.descriptor.origin == origin_kind::source &&
        e.error.empty())
      files.push_back(&e);
  if (!from.empty()) {
    std::vector<std::string> names;
    for (const auto* e : files) {
      if (e->descriptor.name == from || e->descriptor.tunable_file == from) return *e;
      names.push_back(e->descriptor.tunable_file.empty() ? e->descriptor.name
                                                         : e->descriptor.tunable_file);
    }
    const auto near = nearest_names(from, names);
    throw usage_error("kernlab new variant --from " + from + ": no kernel file of " + family +
                      " gives it" + (near.empty() ? "" : "; did you mean '" + near[0] + "'?"));
  }
  const auto key = [](const registry_entry* e) {
    return std::make_tuple(e->descriptor.order < 0, e->descriptor.order);
  };
  const registry_entry* best = nullptr;
  for (const auto* e : files)
    if (e->descriptor.tunable_file.empty() &&
        (!best || key(e) < key(best) ||
         (key(e) == key(best) && natural_less(e->descriptor.name, best->descriptor.name))))
      best = e;
  if (!best)
    throw usage_error("kernlab new variant: family " + family +
                      " has no kernel file to start from; write one as docs/kernel_contract.md "
                      "says, or give --from with a tunable file");
  return *best;
}

int new_variant(const std::string& program, const cli_options& opt, const family_registry& families,
                const fs::path& dir, const std::string& family, const std::string& name) {
  if (!families.find(family)) {
    const auto near = nearest_names(family, families.names());
    throw usage_error(
        "kernlab new variant: unknown family '" + family + "'" +
        (near.empty() ? " (kernlab --list shows them)" : "; did you mean '" + near[0] + "'?"));
  }
  check_name("variant", name);
  const auto reg = load_registry(opt, families);
  for (const auto& e : reg->entries())
    if (e.descriptor.family == family &&
        (e.descriptor.name == name || e.descriptor.tunable_file == name))
      throw usage_error("kernlab new variant " + family + " " + name + ": " + family + "." + name +
                        " exists (" + e.descriptor.origin_path + "); pick another name");
  const registry_entry& from = source_of(*reg, family, opt.new_from);
  const std::string from_name =
      from.descriptor.tunable_file.empty() ? from.descriptor.name : from.descriptor.tunable_file;
  const fs::path path = dir / family / (name + ".cu");
  write_new_file(path, variant_from(from.source, family + "." + from_name, family, name));
  const std::string kd = program + " --kernels-dir " + dir.string();
  std::cout << "kernlab new: wrote " << path.string() << ", a copy of " << family << "."
            << from_name << " (" << from.descriptor.origin_path << ")\n"
            << "  compile it:                 " << kd << " --variant " << name
            << " --compile-only\n"
            << "  run it beside its original: " << kd << " --variant " << family << "." << name
            << "," << family << "." << from_name << "\n";
  return 0;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> family_skeleton(const std::string& name,
                                                                 const std::string& run_line) {
  std::string toml = fill(family_toml_text, name);
  toml.replace(toml.find("@RUN@"), 5, run_line);
  return {{"family.toml", toml},
          {"reference.cu", fill(reference_text, name)},
          {"simple.cu", fill(simple_text, name)}};
}

std::string variant_from(const std::string& source, const std::string& from,
                         const std::string& family, const std::string& name) {
  std::istringstream in(source);
  std::ostringstream out;
  out << "// " << name << ": written by `kernlab new variant " << family << " " << name << "` from "
      << from << ".\n"
      << "// Change the kernel to your idea, keeping the header in step with it (entry, blocks, "
         "the launch:\n// docs/kernel_contract.md).\n";
  bool in_header = false, summary_seen = false;
  for (std::string line; std::getline(in, line);) {
    const std::string t = trimmed(line);
    if (!in_header && t.rfind("/* kernlab", 0) == 0) {
      in_header = true;
    } else if (in_header && t.find("*/") != std::string::npos) {
      if (!summary_seen) out << "summary: started from " << from << "\n";
      in_header = false;
    } else if (in_header && (t.rfind("order:", 0) == 0 || t.rfind("points:", 0) == 0)) {
      continue;
    } else if (in_header && t.rfind("summary:", 0) == 0) {
      out << "summary: started from " << from << ": " << trimmed(t.substr(8)) << "\n";
      summary_seen = true;
      continue;
    }
    out << line << "\n";
  }
  return out.str();
}

int new_command(const cli_options& opt, const std::string& argv0) {
  // The printed commands call kernlab as the user did: `kernlab` from the PATH, else the path.
  const std::string program = argv0.find('/') == std::string::npos ? "kernlab" : argv0;
  const fs::path dir = opt.kernels_dir_given ? fs::path(opt.kernels_dirs.front()) : "my_kernels";
  family_registry families;
  std::vector<std::string> warnings;
  load_families(families, opt.kernels_dirs, include_dirs(opt), &warnings);
  const auto& w = opt.command;  // {new, family, NAME} or {new, variant, FAMILY, NAME}
  return w[1] == "family" ? new_family(program, families, dir, w[2])
                          : new_variant(program, opt, families, dir, w[2], w[3]);
}

}  // namespace kl::app
