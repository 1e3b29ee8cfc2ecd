// The reduce family's reference: one block of BLOCK threads, each folding a strided share of the
// input, then a tree in shared memory in a fixed order. Float32 sums add in double (exact for
// exact-mode inputs, and far more accurate than float32 for random ones) and also sum the
// magnitudes for the random-mode bound; int32 sums wrap modulo 2^32 as the family defines them;
// min and max fold in T. The result and the magnitude are written as double.
// (kernlab/reduce.cuh is included before this file: family.toml's [kernel] includes.)
template <typename OP> struct is_sum { static constexpr bool value = false; };
template <typename T> struct is_sum<kl::sum<T>> { static constexpr bool value = true; };

template <typename T, typename OP>
__global__ void __launch_bounds__(1024)
    reduce_reference(const T* in, double* out, unsigned n, double* magnitude) {
  __shared__ double s_val[1024];
  __shared__ double s_abs[1024];
  __shared__ unsigned s_wrap[1024];
  __shared__ T s_t[1024];
  const unsigned tid = threadIdx.x;
  constexpr bool sum = is_sum<OP>::value;
  constexpr bool integral = T(1) / T(2) == T(0);
  OP op;
  double v = 0, a = 0;
  unsigned w = 0;
  T t = OP::identity();
  for (unsigned long long i = tid; i < n; i += blockDim.x) {
    const T x = in[i];
    if (sum && integral) {
      w += static_cast<unsigned>(x);
    } else if (sum) {
      v += static_cast<double>(x);
      a += fabs(static_cast<double>(x));
    } else {
      t = op(t, x);
    }
  }
  s_val[tid] = v;
  s_abs[tid] = a;
  s_wrap[tid] = w;
  s_t[tid] = t;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (tid < stride) {
      s_val[tid] += s_val[tid + stride];
      s_abs[tid] += s_abs[tid + stride];
      s_wrap[tid] += s_wrap[tid + stride];
      s_t[tid] = op(s_t[tid], s_t[tid + stride]);
    }
    __syncthreads();
  }
  if (tid == 0) {
    if (sum && integral) {
      out[0] = static_cast<double>(static_cast<int>(s_wrap[0]));
      magnitude[0] = 0;
    } else if (sum) {
      out[0] = s_val[0];
      magnitude[0] = s_abs[0];
    } else {
      out[0] = static_cast<double>(s_t[0]);
      magnitude[0] = 0;
    }
  }
}
