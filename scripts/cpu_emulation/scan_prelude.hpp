// CPU emulation (scripts/cpu_emulation/run_scan.sh) of the CUDA subset the scan family's kernels
// use. Unlike reduce_prelude.hpp, several blocks run at once, each with its own shared memory,
// because the scan kernels talk between blocks: a launch starts its blocks in a shuffled order,
// at most `resident` at a time, each block's threads as OS threads. Warp shuffles and ballots go
// through per-warp barriers. The status words' relaxed loads and stores (inline PTX in the
// kernels, replaced by gen_scan.py) are C++ relaxed atomics, and a store may be held back to
// emulate a slow or far SM:
//   status_mode 0: every store is seen at once;
//   status_mode 1: every store goes through a FIFO that commits each entry after a random delay
//                  (per-address order kept, as coherence requires);
//   status_mode 2: inclusive prefixes (flag 2) other than tile 0's are held until the launch ends,
//                  so every look-back must walk back to tile 0 through aggregates alone (valid
//                  for the look-back kernels only: a chained kernel would wait for ever).
#pragma once
#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <semaphore>
#include <thread>
#include <vector>

struct dim3e { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3e threadIdx, blockIdx;
inline dim3e gridDim, blockDim;
struct alignas(8) int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__

// One block's barrier, warp exchange slots and shared memory.
struct block_ctx {
  explicit block_ctx(unsigned threads) : bar(threads), slots(threads / 32) {
    for (unsigned w = 0; w < threads / 32; ++w) warp_bars.emplace_back(new std::barrier<>(32));
  }
  std::barrier<> bar;
  std::vector<std::unique_ptr<std::barrier<>>> warp_bars;
  std::vector<std::array<std::atomic<uint64_t>, 32>> slots;
  std::mutex m;
  std::map<int, std::unique_ptr<unsigned char[]>> shared;
};
inline thread_local block_ctx* g_ctx = nullptr;

// __shared__ X name -> auto& name = kl_shared<X>(line): the block's own, filled with garbage.
template <class X> X& kl_shared(int id) {
  std::lock_guard<std::mutex> lock(g_ctx->m);
  auto& p = g_ctx->shared[id];
  if (!p) {
    p.reset(new unsigned char[sizeof(X)]);
    std::memset(p.get(), 0xA5, sizeof(X));
  }
  return *reinterpret_cast<X*>(p.get());
}

inline void __syncthreads() { g_ctx->bar.arrive_and_wait(); }

template <class T> uint64_t bits64(T v) {
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T> T from64(uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}
// Every lane of the warp publishes v and reads lane src(lane)'s.
template <class T, class F> T warp_exchange(T v, F src) {
  const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
  g_ctx->slots[w][l].store(bits64(v), std::memory_order_relaxed);
  g_ctx->warp_bars[w]->arrive_and_wait();
  const T r = from64<T>(g_ctx->slots[w][src(l)].load(std::memory_order_relaxed));
  g_ctx->warp_bars[w]->arrive_and_wait();
  return r;
}
template <class T> T __shfl_sync(unsigned, T v, int src) {
  return warp_exchange(v, [=](unsigned) { return static_cast<unsigned>(src) % 32; });
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d) {
  return warp_exchange(v, [=](unsigned l) { return l >= d ? l - d : l; });
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m) {
  return warp_exchange(v, [=](unsigned l) { return (l ^ static_cast<unsigned>(m)) % 32; });
}
inline unsigned __ballot_sync(unsigned, int pred) {
  const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
  g_ctx->slots[w][l].store(pred ? 1 : 0, std::memory_order_relaxed);
  g_ctx->warp_bars[w]->arrive_and_wait();
  unsigned mask = 0;
  for (unsigned src = 0; src < 32; ++src)
    mask |= static_cast<unsigned>(g_ctx->slots[w][src].load(std::memory_order_relaxed)) << src;
  g_ctx->warp_bars[w]->arrive_and_wait();
  return mask;
}
inline int __ffs(int x) { return __builtin_ffs(x); }

inline unsigned atomicAdd(unsigned* p, unsigned v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
inline unsigned __float_as_uint(float f) { return from64<unsigned>(bits64(f)); }
inline float __uint_as_float(unsigned u) { return from64<float>(bits64(u)); }
template <class V> V __ldcs(const V* p) { return *p; }
template <class V> void __stcs(V* p, const V& v) { *p = v; }

// The status words.
struct status_emulation {
  int mode = 0;
  const unsigned long long* tile0 = nullptr;  // tile 0's word: never held in mode 2
  std::mutex m;
  std::condition_variable cv;
  struct entry {
    unsigned long long* p;
    unsigned long long v;
    std::chrono::steady_clock::time_point due;
  };
  std::deque<entry> fifo;  // mode 1
  std::vector<entry> held;  // mode 2
  bool stop = false;
  std::thread committer;
  std::mt19937 rng{1};

  void start(int m_, const unsigned long long* t0) {
    mode = m_;
    tile0 = t0;
    stop = false;
    if (mode == 1) committer = std::thread([this] { run(); });
  }
  void run() {
    std::unique_lock<std::mutex> lock(m);
    while (true) {
      if (fifo.empty()) {
        if (stop) return;
        cv.wait(lock);
        continue;
      }
      const auto due = fifo.front().due;
      if (std::chrono::steady_clock::now() < due) {
        cv.wait_until(lock, due);
        continue;
      }
      const entry e = fifo.front();
      fifo.pop_front();
      __atomic_store_n(e.p, e.v, __ATOMIC_RELAXED);
    }
  }
  void store(unsigned long long* p, unsigned long long v) {
    if (mode == 1) {
      std::lock_guard<std::mutex> lock(m);
      const auto delay = std::chrono::microseconds(rng() % 400);
      auto due = std::chrono::steady_clock::now() + delay;
      if (!fifo.empty()) due = std::max(due, fifo.back().due);  // FIFO: per-address order kept
      fifo.push_back({p, v, due});
      cv.notify_all();
      return;
    }
    if (mode == 2 && (v >> 32) == 2 && p != tile0) {
      std::lock_guard<std::mutex> lock(m);
      held.push_back({p, v, {}});
      return;
    }
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
  }
  unsigned long long load(const unsigned long long* p) {
    std::this_thread::yield();  // a polling loop leaves the CPU to the threads it waits for
    return __atomic_load_n(p, __ATOMIC_RELAXED);
  }
  void finish() {  // after every block is done
    if (mode == 1) {
      {
        std::lock_guard<std::mutex> lock(m);
        stop = true;
        cv.notify_all();
      }
      committer.join();
    }
    for (const auto& e : held) __atomic_store_n(e.p, e.v, __ATOMIC_RELAXED);
    held.clear();
    mode = 0;
  }
};
inline status_emulation g_status;
inline unsigned long long emu_load_status(const unsigned long long* p) { return g_status.load(p); }
inline void emu_store_status(unsigned long long* p, unsigned long long v) { g_status.store(p, v); }

// A launch: blocks in a shuffled order (seed), at most `resident` at once.
template <class K, class... A>
void launch(K kernel, unsigned grid, unsigned block, unsigned resident, unsigned seed, A... args) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  std::vector<unsigned> order(grid);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::counting_semaphore<1 << 20> slots(resident);
  std::vector<std::thread> runners;
  for (unsigned b : order) {
    slots.acquire();
    runners.emplace_back([&, b] {
      block_ctx ctx(block);
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < block; ++t)
        threads.emplace_back([&, t] {
          threadIdx = {t, 0, 0};
          blockIdx = {b, 0, 0};
          g_ctx = &ctx;
          kernel(args...);
        });
      for (auto& th : threads) th.join();
      slots.release();
    });
  }
  for (auto& r : runners) r.join();
}
