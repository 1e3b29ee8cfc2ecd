// CPU emulation (scripts/cpu_emulation/run_scan.sh) of the CUDA subset the scan family's kernels
// use. Unlike reduce_prelude.hpp, several blocks run at once, each with its own shared memory,
// because the scan kernels talk between blocks: a launch starts its blocks in a shuffled order,
// at most `resident` at a time (persistent kernels: all of them at once; in index order where
// g_blocks_in_order), each block's threads as OS threads (from a pool kept between blocks and
// launches, which always has a thread for every emulated one). Warp shuffles and ballots go
// through per-warp barriers. The status words' relaxed loads and stores (inline PTX in the
// kernels, replaced by gen_scan.py) are C++ relaxed atomics, and a store may be held back to
// emulate a slow or far SM:
//   status_mode 0: every store is seen at once;
//   status_mode 1: every store goes through a FIFO that commits each entry after a random delay
//                  (per-address order kept, as coherence requires);
//   status_mode 2: inclusive prefixes (flag 2) other than tile 0's are held until the launch ends,
//                  so every look-back must walk back to tile 0 through aggregates alone (valid
//                  for the look-back kernels only: a chained kernel would wait for ever).
// Dynamic shared memory (`extern __shared__`) is a per-block buffer of exactly the launch's
// size (g_dynamic_shared_bytes), 16-byte aligned and filled with 0xFF (int -1, float NaN).
// cp.async (emu_copy16, emu_commit_copies, emu_wait_copies) is deferred: at issue the source's
// src_bytes are read (AddressSanitizer checks them) and the destination's 16 bytes are poisoned
// with 0xFF; the copy lands (src_bytes copied, the rest zero-filled) only when a wait_group of the
// issuing thread completes its group, the latest the PTX rules allow. So a read of a stage
// before its wait (or before the barrier after other threads' waits) sees NaN / -1, a refill of
// a stage other threads still read is seen by them (and by ThreadSanitizer), and a thread that
// ends with copies in flight, a misaligned address, a destination outside the block's shared
// memory or src_bytes > 16 is an emulation error (g_emu_errors, counted by scan_emu.cpp).
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
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <new>
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
#define __align__(n) alignas(n)

// Errors the emulation finds itself (cp.async misuse): counted, the first few printed.
inline std::atomic<long long> g_emu_errors{0};
inline void emu_fail(const char* what, unsigned long long a = 0, unsigned long long b = 0);

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
  std::map<const unsigned char*, std::size_t> shared_extent;  // each static array: its bytes
  unsigned char* dynamic = nullptr;  // the dynamic shared memory, dynamic_bytes long
  std::size_t dynamic_bytes = 0;
};
inline thread_local block_ctx* g_ctx = nullptr;

// __shared__ X name -> auto& name = kl_shared<X>(line): the block's own, filled with garbage.
template <class X> X& kl_shared(int id) {
  std::lock_guard<std::mutex> lock(g_ctx->m);
  auto& p = g_ctx->shared[id];
  if (!p) {
    p.reset(new unsigned char[sizeof(X)]);
    std::memset(p.get(), 0xA5, sizeof(X));
    g_ctx->shared_extent[p.get()] = sizeof(X);
  }
  return *reinterpret_cast<X*>(p.get());
}

// extern __shared__ T name[] -> T* const name = (T*)kl_dynamic_shared(): the block's buffer.
inline unsigned char* kl_dynamic_shared() { return g_ctx->dynamic; }
inline std::size_t g_dynamic_shared_bytes = 0;  // the next launches' dynamic shared memory

inline void __syncthreads() { g_ctx->bar.arrive_and_wait(); }

// cp.async, deferred (see the top): each thread's open group and its committed groups.
struct async_copy {
  unsigned char* dst;
  unsigned char data[16];
};
struct async_copies {
  std::vector<async_copy> open;                // issued, not yet committed
  std::deque<std::vector<async_copy>> groups;  // committed, not yet complete, oldest first
};
inline thread_local async_copies t_copies;
inline bool in_block_shared(const unsigned char* p, std::size_t bytes) {
  block_ctx& c = *g_ctx;
  if (c.dynamic && p >= c.dynamic && p + bytes <= c.dynamic + c.dynamic_bytes) return true;
  std::lock_guard<std::mutex> lock(c.m);
  auto it = c.shared_extent.upper_bound(p);
  if (it == c.shared_extent.begin()) return false;
  --it;
  return p + bytes <= it->first + it->second;
}
inline void emu_copy16(void* dst, const void* src, unsigned src_bytes) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto da = reinterpret_cast<std::uintptr_t>(dst), sa = reinterpret_cast<std::uintptr_t>(src);
  if (src_bytes > 16) return emu_fail("cp.async: src_bytes > 16", src_bytes);
  if (da % 16 || sa % 16) return emu_fail("cp.async: a 16-byte copy not 16-byte aligned", da, sa);
  if (!in_block_shared(d, 16))
    return emu_fail("cp.async: the destination is not in the block's shared memory", da);
  async_copy c;
  c.dst = d;
  std::memcpy(c.data, src, src_bytes);  // AddressSanitizer: the source's bytes must exist
  std::memset(c.data + src_bytes, 0, 16 - src_bytes);
  std::memset(d, 0xFF, 16);  // in flight: garbage (int -1, float NaN) until the copy lands
  t_copies.open.push_back(c);
}
inline void emu_commit_copies() {
  t_copies.groups.push_back(std::move(t_copies.open));
  t_copies.open.clear();
}
inline void emu_wait_copies(int n) {  // all but the newest n committed groups land
  while (t_copies.groups.size() > static_cast<std::size_t>(n)) {
    for (const auto& c : t_copies.groups.front()) std::memcpy(c.dst, c.data, 16);
    t_copies.groups.pop_front();
  }
}
inline void emu_thread_end() {  // a thread must not end with copies in flight
  std::size_t left = t_copies.open.size();
  for (const auto& g : t_copies.groups) left += g.size();
  if (left) emu_fail("cp.async: a thread ended with copies in flight", threadIdx.x, left);
  t_copies.open.clear();
  t_copies.groups.clear();
}

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

inline std::atomic<int> g_emu_printed{0};
inline void emu_fail(const char* what, unsigned long long a, unsigned long long b) {
  ++g_emu_errors;
  if (g_emu_printed++ < 8)
    std::fprintf(stderr, "EMULATION ERROR block %u thread %u: %s (%llu, %llu)\n", blockIdx.x,
                 threadIdx.x, what, a, b);
}

// OS threads for the emulated ones, kept between blocks and launches (creating thousands of
// threads a launch was most of the run time). A task never waits for a worker: if none is idle,
// a new one starts, so every thread of every resident block runs at once, as barriers need.
struct thread_pool {
  std::mutex m;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  std::size_t idle = 0;
  std::vector<std::thread> workers;
  bool stop = false;
  void submit(std::function<void()> f) {
    std::lock_guard<std::mutex> lock(m);
    tasks.push_back(std::move(f));
    if (tasks.size() > idle)
      workers.emplace_back([this] { work(); });
    else
      cv.notify_one();
  }
  void work() {
    std::unique_lock<std::mutex> lock(m);
    while (true) {
      if (!tasks.empty()) {
        auto f = std::move(tasks.front());
        tasks.pop_front();
        lock.unlock();
        f();
        lock.lock();
        continue;
      }
      if (stop) return;
      ++idle;
      cv.wait(lock);
      --idle;
    }
  }
  ~thread_pool() {
    {
      std::lock_guard<std::mutex> lock(m);
      stop = true;
      cv.notify_all();
    }
    for (auto& w : workers) w.join();
  }
};
inline thread_pool g_pool;

inline bool g_blocks_in_order = false;  // the next launches start blocks in index order

// A launch: blocks in a shuffled order (seed; in index order if g_blocks_in_order, for a kernel
// that takes its tile from blockIdx.x and so relies on the GPU starting blocks in that order), at
// most `resident` at once, each with g_dynamic_shared_bytes of dynamic shared memory.
template <class K, class... A>
void launch(K kernel, unsigned grid, unsigned block, unsigned resident, unsigned seed, A... args) {
  gridDim = {grid, 1, 1};
  blockDim = {block, 1, 1};
  const std::size_t dynamic_bytes = g_dynamic_shared_bytes;
  std::vector<unsigned> order(grid);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937 rng(seed);
  if (!g_blocks_in_order) std::shuffle(order.begin(), order.end(), rng);
  std::counting_semaphore<1 << 20> slots(resident);
  std::latch blocks_done(grid);
  for (unsigned b : order) {
    slots.acquire();
    g_pool.submit([&, b] {
      block_ctx ctx(block);
      std::unique_ptr<unsigned char, void (*)(unsigned char*)> dynamic(
          dynamic_bytes ? static_cast<unsigned char*>(
                              ::operator new[](dynamic_bytes, std::align_val_t{16}))
                        : nullptr,
          [](unsigned char* p) { ::operator delete[](p, std::align_val_t{16}); });
      if (dynamic_bytes) std::memset(dynamic.get(), 0xFF, dynamic_bytes);
      ctx.dynamic = dynamic.get();
      ctx.dynamic_bytes = dynamic_bytes;
      std::latch threads_done(block);
      for (unsigned t = 0; t < block; ++t)
        g_pool.submit([&, t] {
          threadIdx = {t, 0, 0};
          blockIdx = {b, 0, 0};
          g_ctx = &ctx;
          kernel(args...);
          emu_thread_end();
          g_ctx = nullptr;
          threads_done.count_down();
        });
      threads_done.wait();
      slots.release();
      blocks_done.count_down();
    });
  }
  blocks_done.wait();
}
