// Tunable kernel files the tune tests write into a kernels folder of their own (kernlab ships
// neither): a reduce with ITEMS per thread, and the same with planted mistakes.
#pragma once

#include "test_util.hpp"

#include <string>

namespace kl::test {

/// reduce/<name>.cu: each thread combines ITEMS elements a block apart, then the block's tree.
/// ITEMS = 1, 2, 4, 8 at blocks 128, 256, 512 with BLOCK * ITEMS <= 2048: 11 points. With
/// `planted`, ITEMS = 4 does not compile (a static_assert) and ITEMS = 8 drops its last element
/// (a wrong result): 3 + 3 good points are left.
inline std::string write_tunable_reduce(const temp_dir& dir, const std::string& name,
                                        bool planted = false) {
  std::string body = R"(/* kernlab
family:  reduce
entry:   NAME<BLOCK, ITEMS, T, OP>
blocks:  128 256 512
tune:    ITEMS = 1, 2, 4, 8
require: BLOCK * ITEMS <= 2048
tile:    ITEMS * BLOCK
summary: ITEMS elements per thread, then the block's tree
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, unsigned ITEMS, typename T, typename OP>
__global__ void NAME(const T* in, T* out, unsigned int n) {
  PLANTED_COMPILE
  __shared__ T s[BLOCK];
  OP op;
  const unsigned int base = blockIdx.x * BLOCK * ITEMS + threadIdx.x;
  T acc = in[base];
#pragma unroll
  for (unsigned int i = 1; i < LAST; ++i) acc = op(acc, in[base + i * BLOCK]);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned int stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) s[threadIdx.x] = op(s[threadIdx.x], s[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
)";
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (auto at = body.find(from); at != std::string::npos; at = body.find(from, at + to.size()))
      body.replace(at, from.size(), to);
  };
  replace_all("NAME", name);
  replace_all("PLANTED_COMPILE",
              planted ? "static_assert(ITEMS != 4, \"planted: ITEMS = 4 does not compile\");" : "");
  replace_all("LAST", planted ? "(ITEMS == 8 ? ITEMS - 1 : ITEMS)" : "ITEMS");
  return dir.write("reduce/" + name + ".cu", body);
}

}  // namespace kl::test
