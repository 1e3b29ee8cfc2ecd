// The reference of the transpose family: out[c][r] = in[r][c], as plain as it can be. One thread
// per element, a 1-D grid-stride loop over the input in 64-bit indices, so that one launch
// (grid_dims in family.toml) covers any ROWS x COLS. It runs once per configuration, so its
// speed (scattered writes, a 64-bit division per element) does not matter.

template <typename T>
__global__ void transpose_reference(const T* in, T* out, int rows, int cols) {
  const long long n = static_cast<long long>(rows) * cols;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const long long r = i / cols, c = i % cols;
    out[c * rows + r] = in[i];
  }
}
