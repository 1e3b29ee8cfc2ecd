// Step 4, several elements per thread: the padded 32 x 32 tile of step 3, moved by a block of
// 32 x (BLOCK / 32) threads: 32 x 8 at 256 threads, so each thread moves 32 / (BLOCK / 32)
// elements (8, 4 or 2 at 128, 256 or 512 threads). Fewer threads per tile means fewer index
// computations and barriers per element, and the 32-wide tile keeps every warp's read and write
// a full 128-byte line whatever the block size (step 3's 16 x 16 tile at 256 threads moves
// 64-byte pieces).
// Each thread first loads all its elements into registers, then stores them into the tile: the
// loads are independent, so they are all in flight at once, and a thread waits for DRAM once per
// tile rather than once per element.
// Measured on an H100 at 8192 x 8192 (standalone harness, not kernlab): 0.93x of a copy at 128
// threads, 0.94x at 256, 0.79x at 512 (step 3: 0.65x). With ROWS not a multiple of 8 (8191 x 8192)
// the output rows start off 32-byte sectors, so a warp's write shares its first and last sectors
// with the neighbouring tiles' writes, and every step drops to 0.55-0.7x.
//
// Bounds, barriers and the loop over row tiles as in step 3.
/* kernlab
family:     transpose
entry:      multi_element<BLOCK, T>
blocks:     128 256 512
block_dims: 32, BLOCK / 32
grid_dims:  ceil_div(COLS, 32), min(ceil_div(ROWS, 32), 65535)
summary:    + 32 x 32 tile moved by 32 x BLOCK/32 threads: several elements each, loads batched
order:      4
*/

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) multi_element(const T* in, T* out, int rows, int cols) {
  constexpr int TILE = 32, BY = BLOCK / 32, PER = TILE / BY;  // PER elements per thread
  __shared__ T tile[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col0 = blockIdx.x * TILE;
  const int row_tiles = (rows + TILE - 1) / TILE;
  for (int by = blockIdx.y; by < row_tiles; by += gridDim.y) {
    const int row0 = by * TILE;
    // Read: rows row0 + ty + j * BY of the tile, column col0 + tx.
    {
      const int c = col0 + tx;
      T v[PER];
#pragma unroll
      for (int j = 0; j < PER; ++j) {
        const int r = row0 + ty + j * BY;
        v[j] = r < rows && c < cols ? in[static_cast<long long>(r) * cols + c] : T(0);
      }
#pragma unroll
      for (int j = 0; j < PER; ++j) tile[ty + j * BY][tx] = v[j];  // outside: a 0 nobody reads
    }
    __syncthreads();
    // Write: output rows col0 + ty + j * BY, column row0 + tx.
    {
      const int r = row0 + tx;
#pragma unroll
      for (int j = 0; j < PER; ++j) {
        const int c = col0 + ty + j * BY;
        if (r < rows && c < cols) out[static_cast<long long>(c) * rows + r] = tile[tx][ty + j * BY];
      }
    }
    if (by + gridDim.y < row_tiles) __syncthreads();
  }
}
