// matmul.cublas: cublasSgemm in plain FP32, the vendor-library baseline that every matmul
// variant is compared with ("x cublas" in the table). matmul_tc.cublas: cublasGemmEx with
// bfloat16 or float16 A and B and float32 C and accumulation (CUBLAS_COMPUTE_32F), the tensor-core
// family's baseline; 16-bit inputs use the tensor cores in the default math mode.
// matmul_tf32.cublas: cublasGemmEx with float32 A, B and C and CUBLAS_COMPUTE_32F_FAST_TF32.
// matmul_f64.cublas: cublasGemmEx with float64 A, B and C and CUBLAS_COMPUTE_64F, which is DGEMM
// (on A100 and H100 it runs on the FP64 tensor cores, DMMA). Native FP64: the handle's
// CUBLAS_DEFAULT_MATH is not CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH and the compute type is not
// CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT, so cuBLAS 13's fixed-point emulation stays off.
//
// Plain FP32 means no TF32 tensor-core math: the handle's math mode is CUBLAS_DEFAULT_MATH
// (which, unlike CUBLAS_TF32_TENSOR_OP_MATH, never rounds FP32 inputs to TF32), checked after it
// is set; TF32 happens only where a call asks for it by its compute type (matmul_tf32). An
// environment with NVIDIA_TF32_OVERRIDE=0 turns that off inside cuBLAS, so matmul_tf32.cublas
// is then skipped with the reason rather than timed as something it is not.
//
// Row-major C = A * B is column-major C^T = B^T * A^T, so the call passes B first with the
// dimensions swapped and no transposes: nothing is copied.
//
// The handle is made in prepare(), outside the timed region, and kept until kernlab calls
// release() (ABI version 2) before it unloads the plugin: one handle serves every configuration
// (cuBLAS binds it to the current context, which is kernlab's primary context throughout), and
// release() destroys it while that context is still alive, not in a static destructor after it.
//
// cuBLAS itself is loaded (dlopen) by the first prepare(), not linked: loading its libraries
// takes 65 ms with a warm page cache and 0.4 s with a cold one, and kernlab loads every plugin
// at start, also for `--list` and for runs that never reach matmul.
#include <kernlab/plugin_api.h>

#include "kernlab_plugin_cuda.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <type_traits>

namespace {

using namespace kernlab::plugin;

/// The cuBLAS entry points this plugin calls, from the library loaded at first use.
struct cublas_api {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasGetMathMode) get_math_mode = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  // cublasGemmEx's C entry point (C++ sees an overload too, so the type is spelled out).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  void* library = nullptr;  // never closed: cuBLAS keeps state until the process ends
  char error[512] = "";     // why loading failed; "" when it worked
};

// $KERNLAB_CUBLAS if set (another cuBLAS to compare with), else the toolkit's cuBLAS found at
// build time (KERNLAB_CUBLAS_PATH: the GPU machine has the same /usr/local/cuda), else the
// versioned name through the plugin's run path and the loader's.
const cublas_api& cublas() {
  static cublas_api api;
  static std::once_flag once;
  std::call_once(once, [] {
    const char* chosen = std::getenv("KERNLAB_CUBLAS");
    const char* const names[] = {chosen ? chosen : KERNLAB_CUBLAS_PATH,
                                 chosen ? nullptr : KERNLAB_CUBLAS_SONAME};
    const char* why = nullptr;
    for (const char* name : names) {
      if (name == nullptr) continue;
      if ((api.library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
      why = dlerror();
    }
    if (api.library == nullptr) {
      set_error(api.error, sizeof api.error, "cannot load cuBLAS (%s%s%s): %s", names[0],
                names[1] ? ", " : "", names[1] ? names[1] : "", why ? why : "unknown error");
      return;
    }
    auto find = [](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api.library, symbol));
      if (fn == nullptr && api.error[0] == '\0')
        set_error(api.error, sizeof api.error, "cuBLAS has no %s", symbol);
    };
    find(api.create, "cublasCreate_v2");
    find(api.destroy, "cublasDestroy_v2");
    find(api.set_math_mode, "cublasSetMathMode");
    find(api.get_math_mode, "cublasGetMathMode");
    find(api.set_stream, "cublasSetStream_v2");
    find(api.sgemm, "cublasSgemm_v2");
    find(api.gemm_ex, "cublasGemmEx");
  });
  return api;
}

const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_(unknown)";
  }
}

bool cublas_ok(cublasStatus_t s, const char* what, char* error, size_t capacity) {
  if (s == CUBLAS_STATUS_SUCCESS) return true;
  set_error(error, capacity, "%s: %s", what, cublas_status_name(s));
  return false;
}

/// Owns the cuBLAS handle: made once, destroyed with the plugin.
class handle_owner {
 public:
  handle_owner(const handle_owner&) = delete;
  handle_owner& operator=(const handle_owner&) = delete;
  ~handle_owner() {
    if (handle_) cublas().destroy(handle_);  // nothing to report to from a destructor
  }
  /// Makes the handle in plain FP32 mode; returns null with the error written on failure.
  static std::unique_ptr<handle_owner> make(char* error, size_t capacity) {
    const cublas_api& api = cublas();
    if (api.error[0] != '\0') {
      set_error(error, capacity, "%s", api.error);
      return nullptr;
    }
    std::unique_ptr<handle_owner> owner(new handle_owner);
    if (!cublas_ok(api.create(&owner->handle_), "cublasCreate", error, capacity)) return nullptr;
    if (!cublas_ok(api.set_math_mode(owner->handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode",
                   error, capacity))
      return nullptr;
    cublasMath_t mode = CUBLAS_TF32_TENSOR_OP_MATH;
    if (!cublas_ok(api.get_math_mode(owner->handle_, &mode), "cublasGetMathMode", error, capacity))
      return nullptr;
    if (mode != CUBLAS_DEFAULT_MATH) {
      set_error(error, capacity, "cuBLAS math mode is %d, not CUBLAS_DEFAULT_MATH",
                static_cast<int>(mode));
      return nullptr;
    }
    return owner;
  }
  cublasHandle_t get() const { return handle_; }

 private:
  handle_owner() = default;
  cublasHandle_t handle_ = nullptr;
};

std::unique_ptr<handle_owner>& the_handle() {
  static std::unique_ptr<handle_owner> h;
  return h;
}

struct gemm_config {
  int m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  /// matmul_tc: A and B in 16 bits (CUDA_R_16BF or CUDA_R_16F), C in float32, accumulated in
  /// float32 on the tensor cores (cublasGemmEx, CUBLAS_COMPUTE_32F). matmul_tf32: float32 A, B
  /// and C in TF32 tensor-core math (CUBLAS_COMPUTE_32F_FAST_TF32). matmul_f64: float64 A, B and
  /// C (CUDA_R_64F, CUBLAS_COMPUTE_64F, double alpha and beta). matmul: cublasSgemm.
  bool tensor_cores = false;
  cudaDataType_t input_type = CUDA_R_32F;
  cudaDataType_t output_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};

int parse(const kl_launch_args* args, gemm_config* g, char* error, size_t capacity) {
  if (args == nullptr) {
    set_error(error, capacity, "launch arguments are NULL");
    return KL_STATUS_ERROR;
  }
  const bool tf32 = equals(args->family, "matmul_tf32");
  const bool f64 = equals(args->family, "matmul_f64");
  g->tensor_cores = equals(args->family, "matmul_tc") || tf32 || f64;
  if (!equals(args->family, "matmul") && !g->tensor_cores) {
    set_error(error, capacity,
              "family '%s' is not offered (only 'matmul', 'matmul_tc', 'matmul_tf32' and "
              "'matmul_f64')",
              or_null(args->family));
    return KL_STATUS_UNSUPPORTED;
  }
  if (tf32) {
    const char* override_tf32 = getenv("NVIDIA_TF32_OVERRIDE");
    if (override_tf32 != nullptr && equals(override_tf32, "0")) {
      set_error(error, capacity,
                "NVIDIA_TF32_OVERRIDE=0 in the environment turns cuBLAS's TF32 math off: this "
                "would time plain FP32");
      return KL_STATUS_UNSUPPORTED;
    }
  }
  const bool tc16 = g->tensor_cores && !tf32 && !f64;
  if (tf32 && equals(args->dtype, "float32")) {
    g->input_type = CUDA_R_32F;
    g->compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (f64 && equals(args->dtype, "float64")) {
    g->input_type = g->output_type = CUDA_R_64F;
    g->compute = CUBLAS_COMPUTE_64F;
  } else if (tc16 && equals(args->dtype, "bfloat16")) {
    g->input_type = CUDA_R_16BF;
  } else if (tc16 && equals(args->dtype, "float16")) {
    g->input_type = CUDA_R_16F;
  } else if (g->tensor_cores || !equals(args->dtype, "float32")) {
    set_error(error, capacity,
              "dtype '%s' is not offered (matmul, matmul_tf32: float32; matmul_tc: "
              "bfloat16, float16; matmul_f64: float64)",
              or_null(args->dtype));
    return KL_STATUS_UNSUPPORTED;
  }
  if (args->sizes == nullptr || args->num_sizes < 3 || args->inputs == nullptr ||
      args->num_inputs < 2 || args->outputs == nullptr || args->num_outputs < 1) {
    set_error(error, capacity, "matmul needs sizes {M, N, K}, inputs {A, B} and outputs {C}");
    return KL_STATUS_ERROR;
  }
  for (uint32_t i = 0; i < 3; ++i)
    if (args->sizes[i] < 1 || args->sizes[i] > INT32_MAX) {
      set_error(error, capacity, "matmul dimension %u is %llu; cublasSgemm takes 1..2^31-1", i,
                static_cast<unsigned long long>(args->sizes[i]));
      return KL_STATUS_UNSUPPORTED;
    }
  g->m = static_cast<int>(args->sizes[0]);
  g->n = static_cast<int>(args->sizes[1]);
  g->k = static_cast<int>(args->sizes[2]);
  g->a = args->inputs[0];
  g->b = args->inputs[1];
  g->c = args->outputs[0];
  if (g->a == nullptr || g->b == nullptr || g->c == nullptr) {
    set_error(error, capacity, "matmul needs non-NULL A, B and C");
    return KL_STATUS_ERROR;
  }
  return KL_STATUS_OK;
}

int cublas_prepare(const kl_launch_args* args, char* error, size_t capacity) {
  return guarded("cublas prepare", error, capacity, [&]() -> int {
    gemm_config g;
    if (const int status = parse(args, &g, error, capacity)) return status;
    if (!the_handle()) {
      the_handle() = handle_owner::make(error, capacity);
      if (!the_handle()) return KL_STATUS_ERROR;
    }
    return KL_STATUS_OK;
  });
}

int cublas_run(const kl_launch_args* args, char* error, size_t capacity) {
  return guarded("cublas run", error, capacity, [&]() -> int {
    gemm_config g;
    if (const int status = parse(args, &g, error, capacity)) return status;
    if (!the_handle()) {
      set_error(error, capacity, "cublas run: no handle (prepare() makes it)");
      return KL_STATUS_ERROR;
    }
    const cublasHandle_t h = the_handle()->get();
    if (!cublas_ok(cublas().set_stream(h, to_stream(args->stream)), "cublasSetStream", error,
                   capacity))
      return KL_STATUS_ERROR;
    const float alpha = 1.0f, beta = 0.0f;
    const double alpha64 = 1.0, beta64 = 0.0;  // CUBLAS_COMPUTE_64F scales in double
    const bool in_double = g.compute == CUBLAS_COMPUTE_64F;
    // Column-major C^T (n x m) = B^T (n x k) * A^T (k x m): B's rows are B^T's columns.
    if (g.tensor_cores) {
      if (!cublas_ok(cublas().gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k,
                                      in_double ? static_cast<const void*>(&alpha64) : &alpha, g.b,
                                      g.input_type, g.n, g.a, g.input_type, g.k,
                                      in_double ? static_cast<const void*>(&beta64) : &beta, g.c,
                                      g.output_type, g.n, g.compute, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmEx", error, capacity))
        return KL_STATUS_ERROR;
    } else if (!cublas_ok(cublas().sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g.n, g.m, g.k, &alpha,
                                         static_cast<const float*>(g.b), g.n,
                                         static_cast<const float*>(g.a), g.k, &beta,
                                         static_cast<float*>(g.c), g.n),
                          "cublasSgemm", error, capacity)) {
      return KL_STATUS_ERROR;
    }
    return cuda_ok(cudaGetLastError(), "cublasSgemm launch", error, capacity) ? KL_STATUS_OK
                                                                              : KL_STATUS_ERROR;
  });
}

const char* const kDtypes[] = {"float32"};
const char* const kTensorDtypes[] = {"bfloat16", "float16"};
const char* const kDoubleDtypes[] = {"float64"};

#define KERNLAB_STRINGIFY_(x) #x
#define KERNLAB_STRINGIFY(x) KERNLAB_STRINGIFY_(x)

const kl_variant_desc kVariants[] = {
    {
        /*family=*/"matmul",
        /*name=*/"cublas",
        /*summary=*/
        "cublasSgemm, plain FP32 (CUBLAS_DEFAULT_MATH: no TF32 "
        "tensor cores), the vendor-library baseline "
        "(cuBLAS " KERNLAB_STRINGIFY(CUBLAS_VER_MAJOR) "." KERNLAB_STRINGIFY(
            CUBLAS_VER_MINOR) "." KERNLAB_STRINGIFY(CUBLAS_VER_PATCH) ")",
        /*block_sizes=*/nullptr,  // cuBLAS picks its own kernels
                                  // and launch configuration
        /*num_block_sizes=*/0,
        /*dtypes=*/kDtypes,
        /*num_dtypes=*/1,
        /*ops=*/nullptr,
        /*num_ops=*/0,
        /*is_baseline=*/1,
        /*workspace_size=*/nullptr,
        /*prepare=*/cublas_prepare,
        /*run=*/cublas_run,
    },
    {
        /*family=*/"matmul_tc",
        /*name=*/"cublas",
        /*summary=*/
        "cublasGemmEx, 16-bit A and B, float32 C and accumulation "
        "(CUBLAS_COMPUTE_32F) on the tensor "
        "cores, the vendor-library baseline",
        /*block_sizes=*/nullptr,
        /*num_block_sizes=*/0,
        /*dtypes=*/kTensorDtypes,
        /*num_dtypes=*/2,
        /*ops=*/nullptr,
        /*num_ops=*/0,
        /*is_baseline=*/1,
        /*workspace_size=*/nullptr,
        /*prepare=*/cublas_prepare,
        /*run=*/cublas_run,
    },
    {
        /*family=*/"matmul_tf32",
        /*name=*/"cublas",
        /*summary=*/
        "cublasGemmEx, float32 A, B and C in TF32 tensor-core math "
        "(CUBLAS_COMPUTE_32F_FAST_TF32), the vendor-library baseline",
        /*block_sizes=*/nullptr,
        /*num_block_sizes=*/0,
        /*dtypes=*/kDtypes,
        /*num_dtypes=*/1,
        /*ops=*/nullptr,
        /*num_ops=*/0,
        /*is_baseline=*/1,
        /*workspace_size=*/nullptr,
        /*prepare=*/cublas_prepare,
        /*run=*/cublas_run,
    },
    {
        /*family=*/"matmul_f64",
        /*name=*/"cublas",
        /*summary=*/
        "cublasGemmEx, float64 A, B and C (CUBLAS_COMPUTE_64F: DGEMM, native FP64, "
        "no emulation), the vendor-library baseline",
        /*block_sizes=*/nullptr,
        /*num_block_sizes=*/0,
        /*dtypes=*/kDoubleDtypes,
        /*num_dtypes=*/1,
        /*ops=*/nullptr,
        /*num_ops=*/0,
        /*is_baseline=*/1,
        /*workspace_size=*/nullptr,
        /*prepare=*/cublas_prepare,
        /*run=*/cublas_run,
    }};

// Destroys the handle, if prepare() made one; a later prepare() would make a new one.
void cublas_release(void) { the_handle().reset(); }

const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "cublas", kVariants, 4, cublas_release};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
