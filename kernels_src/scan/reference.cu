// The reference of the scan family: out[i] = in[0] + ... + in[i], in 64-bit arithmetic (int64 for
// int32, double for float32), rounded to T once at the end (family.toml: type = "T").
//
// It is meant to be obviously right, not fast: no block ever reads what another block writes,
// so nothing depends on the order blocks run in or on memory ordering between them. The grid is
// one block per SM (family.toml), and block g owns the part [lo, hi) of the array, an equal
// share of it. Block g
//   1. sums everything before its part, in[0 .. lo), itself: a strided loop, one partial sum per
//      thread, added up by thread 0 in order;
//   2. cuts its part into blockDim.x contiguous pieces, one per thread; each thread sums its
//      piece, thread 0 turns the piece sums into each piece's starting value (the sum of step 1
//      plus the pieces before it, in order), and each thread walks its piece again, adding as it
//      goes and writing every running sum.
// Step 1 reads the array's beginning again in every block: about N * SM_COUNT / 2 loads in all,
// most of them L2 hits (the blocks read the same addresses at about the same time), of the order
// of a tenth of a second at 2^30 elements, once per configuration.
//
// The sums are exact for the family's inputs (whole numbers or eighths, far below 2^53 in any
// order), so the result does not depend on how the threads split the work. int32: the int64 sum
// is cut to its low 32 bits, the value int32 arithmetic that wraps modulo 2^32 gives.
// Any N >= 1 (64-bit indices; parts and pieces may be empty).

template <typename T> struct wide;
template <> struct wide<int> { using type = long long; };
template <> struct wide<float> { using type = double; };

__device__ __forceinline__ int narrow(long long v, int*) {
  return static_cast<int>(static_cast<unsigned>(static_cast<unsigned long long>(v)));
}
__device__ __forceinline__ float narrow(double v, float*) { return static_cast<float>(v); }

template <typename T>
__global__ void scan_reference(const T* in, T* out, unsigned long long* /*ws*/, long long n) {
  using W = typename wide<T>::type;
  __shared__ W partial[1024];  // one per thread (blockDim.x <= 1024)
  __shared__ W start;
  const long long blocks = gridDim.x, g = blockIdx.x;
  const int threads = blockDim.x, t = threadIdx.x;
  const long long lo = n * g / blocks, hi = n * (g + 1) / blocks;  // n * g < 2^30 * 2^16

  // 1. The sum of everything before this block's part.
  W before = 0;
  for (long long i = t; i < lo; i += threads) before += static_cast<W>(in[i]);
  partial[t] = before;
  __syncthreads();
  if (t == 0) {
    W s = 0;
    for (int k = 0; k < threads; ++k) s += partial[k];
    start = s;
  }
  __syncthreads();  // thread 0 has read every partial[] before they are written again

  // 2. This block's part, one contiguous piece [a, b) per thread.
  const long long len = hi - lo;
  const long long a = lo + len * t / threads, b = lo + len * (t + 1) / threads;
  W own = 0;
  for (long long i = a; i < b; ++i) own += static_cast<W>(in[i]);
  partial[t] = own;
  __syncthreads();
  if (t == 0) {
    W run = start;
    for (int k = 0; k < threads; ++k) {
      const W piece = partial[k];
      partial[k] = run;  // the sum of everything before piece k
      run += piece;
    }
  }
  __syncthreads();
  W run = partial[t];
  for (long long i = a; i < b; ++i) {
    run += static_cast<W>(in[i]);
    out[i] = narrow(run, static_cast<T*>(nullptr));
  }
}
