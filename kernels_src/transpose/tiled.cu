// Step 2, a shared-memory tile: a block of TILE x TILE threads (TILE = sqrt(BLOCK): 16 or 32)
// copies a TILE x TILE tile of the input into shared memory with coalesced reads (threadIdx.x
// along an input row), waits, then writes the tile's transpose with coalesced writes
// (threadIdx.x along an output row, that is down a column of the tile). The transpose itself
// happens in shared memory, where a strided access costs no DRAM traffic.
//
// But it is not free there either: the write phase reads tile[tx][ty], a column of the tile.
// At TILE = 32 a warp's 32 words are 32 apart, all in one of the 32 banks: the read is
// serialised into 32 transactions. At TILE = 16 a warp reads two columns of 16 words, 16 apart,
// in 4 banks: 8-way. The next step removes that.
// Measured on an H100 at 8192 x 8192 (standalone harness, not kernlab): 0.62x of a copy at 256
// threads, 0.35x at 1024, where the 32-way conflicts cost the most (naive: 0.16x).
//
// Any ROWS, COLS >= 1: each access is bounds-checked (an element outside the matrix is neither
// read nor written; the tile's slot stays unused), every thread reaches every barrier, and the
// row tiles are a grid-stride loop over blockIdx.y (at most 65535: ROWS / 16 may be larger).
/* kernlab
family:     transpose
entry:      tiled<TILE, T>
params:     TILE = sqrt(BLOCK)
blocks:     256 1024                         # 16x16 and 32x32: 128 and 512 have no square tile
block_dims: TILE, TILE
grid_dims:  ceil_div(COLS, TILE), min(ceil_div(ROWS, TILE), 65535)
summary:    TILE x TILE shared-memory tile: coalesced both ways, bank conflicts on its columns
order:      2
*/

template <int TILE, typename T>
__global__ void __launch_bounds__(TILE * TILE) tiled(const T* in, T* out, int rows, int cols) {
  __shared__ T tile[TILE][TILE];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col0 = blockIdx.x * TILE;
  const int row_tiles = (rows + TILE - 1) / TILE;
  for (int by = blockIdx.y; by < row_tiles; by += gridDim.y) {
    const int row0 = by * TILE;
    // Read: element (row0 + ty, col0 + tx) of the input into tile[ty][tx].
    int r = row0 + ty, c = col0 + tx;
    if (r < rows && c < cols) tile[ty][tx] = in[static_cast<long long>(r) * cols + c];
    __syncthreads();
    // Write: element (col0 + ty, row0 + tx) of the output, which is input (row0 + tx, col0 + ty).
    r = row0 + tx;
    c = col0 + ty;
    if (r < rows && c < cols) out[static_cast<long long>(c) * rows + r] = tile[tx][ty];
    if (by + gridDim.y < row_tiles) __syncthreads();  // the tile is reused: wait for its readers
  }
}
