// Beyond the seeds, step 2: 16-byte loads, with a correct tail.
// reduce_shfl reads 8 separate 4-byte values per thread; here each thread reads two 16-byte
// vectors (int4/float4): a quarter of the load instructions for the same bytes. kernlab's buffers
// are 256-byte aligned, so the vector view of the input is aligned. The input is not padded
// (`bounds: checked`): the n % 4 elements past the last whole vector are read one by one by the
// last block, so any n is correct.
/* kernlab
family:  reduce
entry:   reduce_vec4<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    8 * BLOCK
bounds:  checked
summary: reduce_shfl with 16-byte vector loads and a scalar tail
order:   21
*/
#include <kernlab/reduce.cuh>

template <typename T> struct vec4;
template <> struct vec4<int> { using type = int4; };
template <> struct vec4<float> { using type = float4; };

template <typename V, typename OP>
