// Beyond the seeds, step 4: a persistent grid.
// reduce_multi_acc launches one block per 16*BLOCK elements: 4096 blocks at 2^24, scheduled in
// waves, with a ragged last wave. Here the grid is exactly what fits on the GPU at once
// (`grid: resident`: SM count x resident blocks per SM from the occupancy calculator), and each
// block strides over the input with reduce_multi_acc's four-loads-in-flight body. The second pass
// then has only a few hundred partial results to reduce.
/* kernlab
family:  reduce
entry:   reduce_persistent<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    16 * BLOCK
grid:    resident
bounds:  checked
summary: a resident grid striding over the input, four 16-byte loads in flight per thread
order:   23
*/
#include <kernlab/reduce.cuh>

template <typename T> struct vec4;
template <> struct vec4<int> { using type = int4; };
template <> struct vec4<float> { using type = float4; };

