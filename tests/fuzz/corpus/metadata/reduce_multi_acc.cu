// Beyond the seeds, step 3: more independent loads in flight.
// A memory-bound kernel is limited by how many bytes each SM has requested and not yet received.
// reduce_vec4 issues two 16-byte loads per thread; here each thread issues four, into four
// independent accumulators, so no load waits for the previous one's addition: twice the bytes
// in flight per thread, a quarter as many blocks.
/* kernlab
family:  reduce
entry:   reduce_multi_acc<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    16 * BLOCK
bounds:  checked
summary: four 16-byte loads per thread into four independent accumulators
order:   22
*/
#include <kernlab/reduce.cuh>

template <typename T> struct vec4;
template <> struct vec4<int> { using type = int4; };
template <> struct vec4<float> { using type = float4; };

template <typename V, typename OP>
__device__ __forceinline__ auto combine4(const V& x, OP op) {
