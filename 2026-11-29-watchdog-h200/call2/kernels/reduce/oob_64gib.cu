/* kernlab
family: reduce
entry:  oob_64gib<BLOCK, T, OP>
blocks: 128 256 512 1024
tile:   BLOCK
bounds: checked
order:  2
*/
template <unsigned BLOCK, typename T, typename OP>
__global__ void oob_64gib(const T* in, T* out, unsigned n) {

  __shared__ T s[BLOCK];
  OP op;
  const unsigned i = blockIdx.x * BLOCK + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : OP::identity();
  __syncthreads();
  for (unsigned k = BLOCK / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] = op(s[threadIdx.x], s[threadIdx.x + k]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x + (1ull << 34)] = s[0];
}
