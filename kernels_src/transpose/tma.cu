// Step 6, the tile loaded by the tensor memory accelerator (TMA, Hopper): one thread asks for
// the whole 32 x 32 tile with one instruction (cp.async.bulk.tensor), the TMA writes it into
// shared memory and signals an mbarrier with the bytes it wrote, and the block waits on the
// barrier. No thread computes an address or checks a bound on the way in: the host's tensor map
// (the header's `tensor_maps:`) knows the matrix's shape and stride, and a box that runs past
// the edge arrives with zeros there. The tile is stored with the TMA's 128-byte swizzle (16-byte
// chunk j of row r at chunk j ^ r % 8), so the column reads of the write phase spread over 8
// chunks: 4-way bank conflicts instead of tiled's 32-way, without padding (which the TMA's box
// layout cannot have).
//
// The TMA copies rows that are 16-byte aligned: COLS a multiple of 4 floats. At other shapes the
// row is skipped with that reason (kernlab checks the tensor map before the launch). Rows of
// tiles are a grid-stride loop over blockIdx.y; each pass reuses the tile and its barrier, whose
// phase parity flips each time.
/* kernlab
family:      transpose
entry:       tma<T>
blocks:      256
dtypes:      float32
block_dims:  32, 8
grid_dims:   ceil_div(COLS, 32), min(ceil_div(ROWS, 32), 65535)
tensor_maps: in[ROWS][COLS] box [32][32] swizzle 128
summary:     32 x 32 tile loaded by the TMA into 128-byte-swizzled shared memory, one mbarrier
order:       6
*/
#include <kernlab/tma_sm90.cuh>

template <typename T>
__global__ void __launch_bounds__(256) tma(const T* in, T* out, int rows, int cols,
                                           const __grid_constant__ kl_tensor_map in_map) {
  static_assert(sizeof(T) == 4, "the box is 32 elements of 4 bytes: one 128-byte swizzle row");
  __shared__ __align__(1024) T tile[32 * 32];
  __shared__ unsigned long long full;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const bool leader = tx == 0 && ty == 0;
  if (leader) {
    tma_prefetch(in_map);
    mbar_init(&full, 1);
    mbar_init_fence();
  }
  __syncthreads();
  const int col0 = blockIdx.x * 32;
  const int row_tiles = (rows + 31) / 32;
  unsigned parity = 0;
  for (int by = blockIdx.y; by < row_tiles; by += gridDim.y, parity ^= 1) {
    const int row0 = by * 32;
    if (leader) {
      fence_proxy_async();  // the last pass's reads of the tile come before the TMA's writes
      mbar_arrive_expect_tx(&full, sizeof(tile));
      tma_load_2d(tile, in_map, col0, row0, &full);
    }
    mbar_wait(&full, parity);
    // Output row col0 + c is input column col0 + c; lanes run along it (input rows row0 + tx).
    const int r = row0 + tx;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int c = ty + 8 * k;
      if (r < rows && col0 + c < cols)
        out[static_cast<long long>(col0 + c) * rows + r] = tile[swizzle128<sizeof(T)>(tx, c)];
    }
    __syncthreads();  // every thread is done with the tile before the next pass overwrites it
  }
}
