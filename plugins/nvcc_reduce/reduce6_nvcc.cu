// reduce6_nvcc: kernels_src/reduce/reduce6.cu, the very file kernlab compiles with NVRTC,
// compiled here by nvcc. The traits restate its metadata header (tile: 2 * BLOCK, grid: resident,
// bounds: checked); keep them in step with the file.
#include "reduce/reduce6.cu"

#include "nvcc_reduce_variants.h"
#include "reduce_driver.cuh"

namespace kernlab::nvcc_reduce {
namespace {

struct reduce6_traits {
  static constexpr const char* name = "reduce6_nvcc";
  static constexpr grid_mode grid = grid_mode::resident;
  static constexpr bounds_mode bounds = bounds_mode::checked;
  static constexpr unsigned tile(unsigned block) { return 2 * block; }

  template <unsigned BLOCK, typename T, typename OP>
  static kernel_fn<T> kernel() {
    return reduce6<BLOCK, T, OP>;
  }
  template <unsigned BLOCK, typename T, typename OP>
  static void launch(unsigned grid, cudaStream_t stream, const T* in, T* out, unsigned n) {
    reduce6<BLOCK, T, OP><<<grid, BLOCK, 0, stream>>>(in, out, n);
  }
};

}  // namespace

int reduce6_workspace_size(const kl_launch_args* args, uint64_t* bytes, char* error,
                           size_t capacity) {
  return variant<reduce6_traits>::workspace_size(args, bytes, error, capacity);
}
int reduce6_prepare(const kl_launch_args* args, char* error, size_t capacity) {
  return variant<reduce6_traits>::prepare(args, error, capacity);
}
int reduce6_run(const kl_launch_args* args, char* error, size_t capacity) {
  return variant<reduce6_traits>::run(args, error, capacity);
}

}  // namespace kernlab::nvcc_reduce
