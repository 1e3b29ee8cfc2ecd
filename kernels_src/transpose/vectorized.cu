// Step 5, 16-byte accesses: each thread moves whole float4s, four elements of an input row on
// the way in and four of an output row on the way out, so a tile takes a quarter of the
// global-memory instructions of step 4. The tile grows to TILE x TILE = 64 x 64 (16 KiB of data,
// padded to 65 columns) and a thread moves TILE * TILE / 4 / BLOCK vectors of it each way (4 at
// 256 threads), all loaded before the first is stored: more bytes in flight per thread and per
// SM, which is what a copy at full bandwidth needs.
//
// Lanes: the block is 8 x (BLOCK / 8). The 8 lanes of a row of threads cover 32 consecutive
// elements (128 bytes), and a warp's 4 rows of threads take 4 consecutive rows of the tile on the
// way in and 4 consecutive columns on the way out: every warp access is four full 128-byte lines.
// The shared tile is written and read one word at a time (a padded row is not 16-byte aligned):
// with 65 words per row a lane's word is at bank (row + column) % 32, and the 8 x 4 lanes of a
// warp, 4 words apart along one index and consecutive along the other, hit 32 different banks in
// both phases.
//
// A vector access needs its address 16-byte aligned and all four elements inside the matrix.
// kernlab's buffers are 256-byte aligned, so with COLS % 4 == 0 (ROWS % 4 == 0 for the writes)
// every access is a vector one; otherwise most rows start misaligned, and a row's last vector
// may stick out of the matrix. The kernel tests each access's address and bounds, and anything
// that fails takes the edge path: the same four elements one at a time, each bounds-checked.
// Any ROWS, COLS >= 1; the row tiles are a grid-stride loop over blockIdx.y, as in steps 2 to 4.
//
// Measured on an H100 at 8192 x 8192 (standalone harness, not kernlab): 0.94x to 0.95x of a copy
// at every block size (step 4: 0.94x at 256 threads); 0.95-0.96x at 4096 x 16384 and
// 16384 x 4096. The edge path is slow: with an odd ROWS (8191 x 8192) almost every write takes
// it and the kernel falls to 0.50-0.55x, under step 4's 0.59-0.70x. (An edge path with lanes on
// consecutive elements recovered part of it, 0.63-0.67x, but cost 1-4% at 8192 x 8192; not kept.)
/* kernlab
family:     transpose
entry:      vectorized<BLOCK, TILE, T>
params:     TILE = 64
blocks:     128 256 512 1024
block_dims: 8, BLOCK / 8
grid_dims:  ceil_div(COLS, TILE), min(ceil_div(ROWS, TILE), 65535)
summary:    + float4 loads and stores (aligned fast path, checked edge path), 64 x 64 padded tile
order:      5
*/

template <typename T>
struct vec4_of;
template <>
struct vec4_of<float> {
  using type = float4;
};
template <>
struct vec4_of<int> {
  using type = int4;
};

template <int BLOCK, int TILE, typename T>
__global__ void __launch_bounds__(BLOCK) vectorized(const T* in, T* out, int rows, int cols) {
  using V = typename vec4_of<T>::type;
  static_assert(TILE % 32 == 0, "a tile row is made of 32-element segments");
  constexpr int BY = BLOCK / 8;              // rows of threads: segments moved at once
  constexpr int SEGS = TILE * (TILE / 32);   // 32-element segments in the tile
  static_assert(SEGS % BY == 0, "the block must divide the tile's segments");
  constexpr int PER = SEGS / BY;             // vectors per thread, each way
  __shared__ T tile[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int col0 = blockIdx.x * TILE;
  const int row_tiles = (rows + TILE - 1) / TILE;
  for (int by = blockIdx.y; by < row_tiles; by += gridDim.y) {
    const int row0 = by * TILE;
    // Read: segment s is tile row s % TILE, columns s / TILE * 32 .. + 31; lane tx takes 4 of them.
    V v[PER];
#pragma unroll
    for (int p = 0; p < PER; ++p) {
      const int s = ty + p * BY;
      const int row = row0 + s % TILE, col = col0 + s / TILE * 32 + tx * 4;
      v[p] = V{T(0), T(0), T(0), T(0)};
      if (row < rows) {
        const T* src = in + static_cast<long long>(row) * cols + col;
        if (col + 3 < cols && (reinterpret_cast<unsigned long long>(src) & 15) == 0) {
          v[p] = *reinterpret_cast<const V*>(src);
        } else {
          if (col < cols) v[p].x = src[0];
          if (col + 1 < cols) v[p].y = src[1];
          if (col + 2 < cols) v[p].z = src[2];
          if (col + 3 < cols) v[p].w = src[3];
        }
      }
    }
#pragma unroll
    for (int p = 0; p < PER; ++p) {
      const int s = ty + p * BY;
      const int r = s % TILE, c = s / TILE * 32 + tx * 4;
      tile[r][c] = v[p].x;  // outside the matrix: zeros nobody reads
      tile[r][c + 1] = v[p].y;
      tile[r][c + 2] = v[p].z;
      tile[r][c + 3] = v[p].w;
    }
    __syncthreads();
    // Write: segment s is tile column s % TILE (output row col0 + s % TILE), tile rows
    // s / TILE * 32 .. + 31 (output columns row0 + those); lane tx takes 4 of them.
#pragma unroll
    for (int p = 0; p < PER; ++p) {
      const int s = ty + p * BY;
      const int c = s % TILE, r = s / TILE * 32 + tx * 4;
      const int orow = col0 + c, ocol = row0 + r;
      if (orow < cols) {
        T* dst = out + static_cast<long long>(orow) * rows + ocol;
        if (ocol + 3 < rows && (reinterpret_cast<unsigned long long>(dst) & 15) == 0) {
          *reinterpret_cast<V*>(dst) =
              V{tile[r][c], tile[r + 1][c], tile[r + 2][c], tile[r + 3][c]};
        } else {
#pragma unroll
          for (int k = 0; k < 4; ++k)
            if (ocol + k < rows) dst[k] = tile[r + k][c];
        }
      }
    }
    if (by + gridDim.y < row_tiles) __syncthreads();
  }
}
