// Step 2, the work-efficient scan in a block (Blelloch 1990; GPU Gems 3, chapter 39), chained
// from block to block as in step 1.
//
// A block scans a tile of 2 * BLOCK elements, two per thread (t and t + BLOCK: each load and store
// of a warp is one coalesced run), in shared memory, as a balanced tree:
//  - up-sweep: log2(2 * BLOCK) levels; at each, half as many threads as before add the sum of a
//    left subtree into its right sibling, so the last element ends up holding the tile's sum;
//  - the root is set to 0, then the down-sweep walks the tree back down: each node gives its
//    value to its left child and its value plus the left child's old sum to its right child.
// Every element then holds the sum of the elements before it in the tile (an exclusive scan), and
// adding its own value gives the inclusive one. 2 * (2 * BLOCK) additions where step 1 does
// BLOCK * log2(BLOCK), at twice as many barriers.
//
// Bank conflicts: at the deep levels of the tree the threads of a warp touch elements 2^k apart,
// all in the same bank of the 32. Every index i is stored at i + i / 32 (one spare word every 32),
// which spreads them across banks (the padding of GPU Gems 3's CONFLICT_FREE_OFFSET).
//
// The chain across blocks is step 1's (tile numbers from an atomic counter, one 64-bit status word
// a tile holding the flag and the inclusive prefix together, a relaxed atomic load and store), with
// the tile twice as long, so half as many links at the same block size. The tile's sum is known
// after the up-sweep, so thread 0 publishes the tile's prefix before the down-sweep: the next tile
// waits less.
/* kernlab
family:    scan
entry:     blelloch<BLOCK, T>
blocks:    128 256 512 1024
grid_dims: ceil_div(N, 2 * BLOCK)
summary:   work-efficient Blelloch up-/down-sweep of 2*BLOCK elements, bank-conflict padding, chained blocks
order:     2
*/

namespace bl {

constexpr unsigned long long kInclusive = 2;  // the status flag: the value is an inclusive prefix

__device__ __forceinline__ unsigned bits_of(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
template <typename T> __device__ __forceinline__ T value_of(unsigned long long word);
template <> __device__ __forceinline__ int value_of<int>(unsigned long long word) {
  return static_cast<int>(static_cast<unsigned>(word));
}
template <> __device__ __forceinline__ float value_of<float>(unsigned long long word) {
  return __uint_as_float(static_cast<unsigned>(word));
}

// Relaxed atomic 64-bit accesses at GPU scope (hillis_steele.cu says why that is enough).
__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
               : "=l"(v)
               : "l"(__cvta_generic_to_global(p))
               : "memory");
  return v;
}
__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" : : "l"(__cvta_generic_to_global(p)), "l"(v)
               : "memory");
}

// Where element i of the tile lives in shared memory: a spare word after every 32.
__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }

}  // namespace bl

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK)
    blelloch(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int TILE = 2 * BLOCK;
  __shared__ T temp[TILE + TILE / 32];
  __shared__ unsigned tile_of_block;
  __shared__ T tile_prefix;  // the sum of every tile before this one
  const int t = threadIdx.x;
  unsigned long long* const status = ws + 32;  // family.toml: word 0 counts tiles, 32 + i is tile i's

  if (t == 0) tile_of_block = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
  __syncthreads();
  const unsigned tile = tile_of_block;
  const long long first = static_cast<long long>(tile) * TILE;
  const long long ia = first + t, ib = first + t + BLOCK;
  const T xa = ia < n ? in[ia] : T(0);  // past n: 0, which changes no sum
  const T xb = ib < n ? in[ib] : T(0);
  temp[bl::padded(t)] = xa;
  temp[bl::padded(t + BLOCK)] = xb;

  // Up-sweep: at the level where `stride` elements make a subtree, d threads each add a left
  // subtree's sum (ending at a) into its right sibling's (ending at b).
  int stride = 1;
#pragma unroll
  for (int d = TILE / 2; d > 0; d /= 2) {
    __syncthreads();
    if (t < d) {
      const int a = stride * (2 * t + 1) - 1, b = stride * (2 * t + 2) - 1;
      temp[bl::padded(b)] = temp[bl::padded(a)] + temp[bl::padded(b)];
    }
    stride *= 2;
  }
  // The last level was thread 0's alone (d = 1): it reads the root it wrote, with no barrier.
  if (t == 0) {
    const T sum = temp[bl::padded(TILE - 1)];
    temp[bl::padded(TILE - 1)] = T(0);
    T before = T(0);
    if (tile > 0) {
      unsigned long long word;
      do {
        word = bl::load_status(status + (tile - 1));
      } while ((word >> 32) != bl::kInclusive);
      before = bl::value_of<T>(word);
    }
    bl::store_status(status + tile, (bl::kInclusive << 32) | bl::bits_of(before + sum));
    tile_prefix = before;
  }

  // Down-sweep: each node's value is the sum of everything before its subtree in the tile.
#pragma unroll
  for (int d = 1; d < TILE; d *= 2) {
    stride /= 2;
    __syncthreads();
    if (t < d) {
      const int a = stride * (2 * t + 1) - 1, b = stride * (2 * t + 2) - 1;
      const T left = temp[bl::padded(a)];
      temp[bl::padded(a)] = temp[bl::padded(b)];
      temp[bl::padded(b)] = temp[bl::padded(b)] + left;
    }
  }
  __syncthreads();
  const T before = tile_prefix;
  if (ia < n) out[ia] = before + (temp[bl::padded(t)] + xa);
  if (ib < n) out[ib] = before + (temp[bl::padded(t + BLOCK)] + xb);
}
