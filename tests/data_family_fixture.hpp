// A family that kernlab does not ship, written by the tests into a temporary kernels folder: a
// family.toml, a reference kernel and variants, and nothing else (docs/families.md).
#pragma once

#include "test_util.hpp"

#include <filesystem>
#include <string>

namespace kl::test {

inline const char* axpy_family_toml = R"kl(# y = 3 x + y0, for the tests
summary = "y = 3 * x + y0, any N"
dtypes = ["float32", "int32"]
bytes = "3 * N * TSIZE"
flops = "2 * N"

[axes]
N = { default = 1000003, min = 1, max = 1073741824 }

[[buffers]]
name = "x"
role = "in"
type = "T"
count = "N"
exact = { kind = "grid", den = 4, min = -100, max = 100 }
random = { kind = "uniform", min = -1.0, max = 1.0 }

[[buffers]]
name = "y0"
role = "in"
type = "T"
count = "N"
init = { kind = "iota", start = -5, step = 1 }

[[buffers]]
name = "y"
role = "out"
type = "T"
count = "N"

[kernel]
args = ["x", "y0", "y", "N"]
grid_dims = ["ceil_div(N, BLOCK)"]

[reference]
file = "reference.cu"
entry = "axpy_reference<T>"
type = "T"

[compare]
rule = "exact"

[baseline]
copy = { from = "x", to = "y" }
)kl";

inline const char* axpy_reference = R"kl(template <typename T>
__global__ void axpy_reference(const T* x, const T* y0, T* y, int n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(3) * x[i] + y0[i];
}
)kl";

inline const char* axpy_simple = R"kl(/* kernlab
family:  axpy
entry:   simple<T>
blocks:  128 256 512 1024
summary: one thread per element
order:   1
*/
template <typename T>
__global__ void simple(const T* x, const T* y0, T* y, int n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(3) * x[i] + y0[i];
}
)kl";

inline const char* axpy_gridstride = R"kl(/* kernlab
family:    axpy
entry:     gridstride<T>
blocks:    256 512
grid_dims: min(RESIDENT_BLOCKS, ceil_div(N, BLOCK))
summary:   as many blocks as fit at once, each looping over the array
order:     2
*/
template <typename T>
__global__ void gridstride(const T* x, const T* y0, T* y, int n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = T(3) * x[i] + y0[i];
}
)kl";

// Forgets the last element whenever N is not a multiple of the block.
inline const char* axpy_off_by_one = R"kl(/* kernlab
family:  axpy
entry:   off_by_one<T>
blocks:  256
summary: drops the last element
order:   3
*/
template <typename T>
__global__ void off_by_one(const T* x, const T* y0, T* y, int n) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n - 1) y[i] = T(3) * x[i] + y0[i];
}
)kl";

// Needs sm_90a: wgmma.fence exists only in the architecture-specific target, so the header's
// `target` is what makes it compile (and run only on compute capability 9.0).
inline const char* axpy_fenced = R"kl(/* kernlab
family:  axpy
entry:   fenced<T>
blocks:  256
target:  sm_90a
summary: one thread per element, after a wgmma.fence (sm_90a only)
order:   4
*/
template <typename T>
__global__ void fenced(const T* x, const T* y0, T* y, int n) {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(3) * x[i] + y0[i];
}
)kl";

/// Writes the axpy family into `<dir>/<folder>/`; with `wrong`, also a variant that is wrong.
inline void write_axpy_family(const temp_dir& dir, const std::string& folder = "axpy",
                              bool wrong = false) {
  dir.write(folder + "/family.toml", axpy_family_toml);
  dir.write(folder + "/reference.cu", axpy_reference);
  dir.write(folder + "/simple.cu", axpy_simple);
  dir.write(folder + "/gridstride.cu", axpy_gridstride);
  if (wrong) dir.write(folder + "/off_by_one.cu", axpy_off_by_one);
}

/// Buffers with a start (docs/families.md): a histogram of x, accumulated into bins that start at
/// zero (reset inside the timed region), and y doubled plus one in place (an inout buffer, reset
/// outside it). The reference computes in double, from the same starts.
inline const char* hist_family_toml =
    R"kl(# bins[x % BINS] += 1 and y = 2 y + 1 in place, for the tests
summary = "a histogram of x, and y = 2 y + 1 in place"
dtypes  = ["int32", "float32"]

[axes]
N    = { default = 100003, min = 1, max = 1073741824 }
BINS = { default = 256, min = 1, max = 65536 }

[[buffers]]
name  = "x"
role  = "in"
type  = "int32"
count = "N"
init  = { kind = "grid", min = 0, max = 65535 }

[[buffers]]
name  = "bins"
role  = "out"
type  = "int32"
count = "BINS"
init  = "zero"

[[buffers]]
name  = "y"
role  = "inout"
type  = "T"
count = "N"
init  = { kind = "iota", start = -7, step = 3 }
reset = "untimed"

[kernel]
args      = ["x", "bins", "y", "N", "BINS"]
grid_dims = ["ceil_div(N, BLOCK)"]

[reference]
file  = "reference.cu"
entry = "hist_reference<T>"

[compare]
rule = "exact"
)kl";

inline const char* hist_reference = R"kl(template <typename T>
__global__ void hist_reference(const int* x, double* bins, double* y, int n, int nbins) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&bins[x[i] % nbins], 1.0);
  y[i] = 2 * y[i] + 1;
}
)kl";

/// The variant that gets it right; `last` is how many elements it leaves out at the end (a
/// variant that forgets one leaves a bin one short and y's last element at its start).
inline std::string hist_variant(const std::string& name, int left_out) {
  return "/* kernlab\nfamily:  hist\nentry:   " + name +
         "<T>\nblocks:  128 256\nsummary: atomicAdd per element\n*/\n"
         "template <typename T>\n__global__ void " +
         name +
         "(const int* x, int* bins, T* y, int n, int nbins) {\n"
         "  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
         "  if (i >= n - " +
         std::to_string(left_out) +
         ") return;\n"
         "  atomicAdd(&bins[x[i] % nbins], 1);\n"
         "  y[i] = T(2) * y[i] + T(1);\n"
         "}\n";
}

/// Writes the hist family into `<dir>/hist/`: `atomic` and, with `wrong`, `forgets_last`.
inline void write_hist_family(const temp_dir& dir, bool wrong = false) {
  dir.write("hist/family.toml", hist_family_toml);
  dir.write("hist/reference.cu", hist_reference);
  dir.write("hist/atomic.cu", hist_variant("atomic", 0));
  if (wrong) dir.write("hist/forgets_last.cu", hist_variant("forgets_last", 1));
}

/// A family whose inputs and reference come from a family plugin (include/kernlab/family_api.h):
/// tests/plugins/affine_family.cpp, y = SCALE * x + 1.
inline const char* affine_family_toml = R"kl(# inputs and reference from a family plugin
summary = "y = SCALE * x + 1"
plugin  = "kernlab_affine_family.so"
dtypes  = ["float32"]
bytes   = "2 * N * TSIZE"

[axes]
N     = { default = 1000003, min = 1, max = 1073741824 }
SCALE = { default = 3, min = 1, max = 8 }

[[buffers]]
name   = "x"
role   = "in"
type   = "T"
count  = "N"
exact  = { kind = "plugin", function = "quarters" }
random = { kind = "plugin", function = "quarters" }

[[buffers]]
name  = "y"
role  = "out"
type  = "T"
count = "N"

[kernel]
args      = ["x", "y", "N", "SCALE"]
grid_dims = ["ceil_div(N, BLOCK)"]

[reference]
plugin = "affine"

[compare]
rule = "exact"
)kl";

inline const char* affine_simple = R"kl(/* kernlab
family:  affine
entry:   simple<T>
blocks:  128 256
summary: one thread per element
*/
template <typename T>
__global__ void simple(const T* x, T* y, int n, int scale) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(scale) * x[i] + T(1);
}
)kl";

// Adds 2 instead of 1: every element wrong.
inline const char* affine_wrong = R"kl(/* kernlab
family:  affine
entry:   plus_two<T>
blocks:  256
summary: adds 2
*/
template <typename T>
__global__ void plus_two(const T* x, T* y, int n, int scale) {
  const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(scale) * x[i] + T(2);
}
)kl";

/// The test family plugin's file (built by tests/plugins).
inline std::string affine_plugin_file() {
  return std::string(KERNLAB_TEST_PLUGIN_DIR) + "/families/kernlab_affine_family.so";
}

/// Writes the affine family into `<dir>/affine/`, with its plugin copied beside the
/// family.toml unless `with_plugin` is false.
inline void write_affine_family(const temp_dir& dir, bool with_plugin = true) {
  dir.write("affine/family.toml", affine_family_toml);
  dir.write("affine/simple.cu", affine_simple);
  dir.write("affine/plus_two.cu", affine_wrong);
  if (with_plugin)
    std::filesystem::copy_file(affine_plugin_file(), dir.str() + "/affine/kernlab_affine_family.so",
                               std::filesystem::copy_options::overwrite_existing);
}

}  // namespace kl::test
