// Step 1, the seed (the tiled-matmul article, "4.6 Boundary checks"): shared-memory tiling. A block
// computes a TILE_WIDTH x TILE_WIDTH tile of C; in each phase its threads stage one tile of A and
// one of B in shared memory, so every element loaded from global memory is used TILE_WIDTH
// times. The boundary checks make any M, N, K work: a thread whose A or B element lies outside
// the matrix loads 0.0 (which adds nothing to the inner product), and only threads with a valid
// element of C write it. TILE_WIDTH is a template parameter: the block is TILE_WIDTH^2 threads,
// so 256 threads give 16x16 and 1024 give 32x32; 128 and 512 have no square tile.
/* kernlab
family:     matmul
entry:      tiled<TILE>
params:     TILE = sqrt(BLOCK)
blocks:     256 1024
block_dims: TILE, TILE
grid_dims:  (N + TILE - 1) / TILE, (M + TILE - 1) / TILE
summary:    the seed: TILE_WIDTH^2 shared-memory tiles with boundary checks
order:      1
*/

template <int TILE_WIDTH>
__global__ void __launch_bounds__(TILE_WIDTH * TILE_WIDTH)
    tiled(const float* M_, const float* N_, float* P, int M, int N, int K) {
  __shared__ float Mds[TILE_WIDTH][TILE_WIDTH];
  __shared__ float Nds[TILE_WIDTH][TILE_WIDTH];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int Row = blockIdx.y * TILE_WIDTH + ty;
  const int Col = blockIdx.x * TILE_WIDTH + tx;
  float Pvalue = 0.0f;
  for (int ph = 0; ph < (K + TILE_WIDTH - 1) / TILE_WIDTH; ++ph) {
    // The seed's three tests: loading an M tile, loading an N tile, storing P.
    Mds[ty][tx] = Row < M && ph * TILE_WIDTH + tx < K ? M_[Row * K + ph * TILE_WIDTH + tx] : 0.0f;
    Nds[ty][tx] = ph * TILE_WIDTH + ty < K && Col < N ? N_[(ph * TILE_WIDTH + ty) * N + Col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE_WIDTH; ++k) Pvalue += Mds[ty][k] * Nds[k][tx];
    __syncthreads();
  }
  if (Row < M && Col < N) P[Row * N + Col] = Pvalue;
}
