// Step 3, no bank conflicts: step 2 with one unused column of padding in the shared tile,
// tile[TILE][TILE + 1]. A column's words are now TILE + 1 apart instead of TILE, so the 32 lanes
// reading tile[tx][ty] (word tx * 33 + ty) fall into 32 different banks: one transaction instead
// of 32. (At TILE = 16, 17 is odd as well, and the two rows of 16 lanes a warp reads stay apart.)
// The row-wise writes into the tile were conflict-free already and stay so.
// Everything else, the bounds checks and the loop over row tiles included, is step 2's.
// Measured on an H100 at 8192 x 8192 (standalone harness, not kernlab): 0.65x of a copy at 256
// threads (step 2: 0.62x), 0.56x at 1024 (0.35x). One element per thread still leaves a thread
// with one load in flight and one barrier for each element it moves: the next step's subject.
/* kernlab
family:     transpose
entry:      padded<TILE, T>
params:     TILE = sqrt(BLOCK)
blocks:     256 1024                         # 16x16 and 32x32: 128 and 512 have no square tile
block_dims: TILE, TILE
grid_dims:  ceil_div(COLS, TILE), min(ceil_div(ROWS, TILE), 65535)
summary:    + one column of padding in the tile: conflict-free column reads
order:      3
*/

template <int TILE, typename T>
__global__ void __launch_bounds__(TILE * TILE) padded(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col0 = blockIdx.x * TILE;
  const int row_tiles = (rows + TILE - 1) / TILE;
  for (int by = blockIdx.y; by < row_tiles; by += gridDim.y) {
    const int row0 = by * TILE;
    int r = row0 + ty, c = col0 + tx;
    if (r < rows && c < cols) tile[ty][tx] = in[static_cast<long long>(r) * cols + c];
    __syncthreads();
    r = row0 + tx;
    c = col0 + ty;
    if (r < rows && c < cols) out[static_cast<long long>(c) * rows + r] = tile[tx][ty];
    if (by + gridDim.y < row_tiles) __syncthreads();
  }
}
