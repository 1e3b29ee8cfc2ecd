// Step 1, the starting point: one thread per element. threadIdx.x runs along a row of the input,
// so a warp reads 32 consecutive elements (one 128-byte line: coalesced) and writes them down a
// column of the output, ROWS elements apart: each of the warp's 32 stores lands in its own 32-byte
// sector and uses 4 bytes of it. The reads move the bytes the algorithm needs; the writes move up
// to 8 times as many (the L2 merges some of the partial sectors of neighbouring blocks before they
// reach DRAM, when it can hold them long enough). Measured on an H100 at 8192 x 8192 (a
// standalone NVRTC harness with this header's launch, not kernlab): 0.15-0.16x of a
// device-to-device copy at every block size.
//
// Any ROWS, COLS >= 1: threads past the right edge return, and the rows are a grid-stride loop,
// because the grid's y is at most 65535 blocks (BLOCK / 32 rows each) and ROWS may be larger.
// Offsets are 64-bit: ROWS * COLS may pass 2^31.
/* kernlab
family:     transpose
entry:      naive<BLOCK, T>
blocks:     128 256 512 1024
block_dims: 32, BLOCK / 32
grid_dims:  ceil_div(COLS, 32), min(ceil_div(ROWS, BLOCK / 32), 65535)
summary:    one thread per element: coalesced reads, strided writes
order:      1
*/

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) naive(const T* in, T* out, int rows, int cols) {
  constexpr int BY = BLOCK / 32;  // rows per block
  const int col = blockIdx.x * 32 + threadIdx.x;
  if (col >= cols) return;
  for (int row = blockIdx.y * BY + threadIdx.y; row < rows; row += gridDim.y * BY)
    out[static_cast<long long>(col) * rows + row] = in[static_cast<long long>(row) * cols + col];
}
