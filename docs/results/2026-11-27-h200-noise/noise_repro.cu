// A standalone reproduction of the between-run movement of kernlab's rows (issue 31), with one
// experiment per hypothesis. No kernlab code: the CUDA runtime, a reduce kernel shaped like
// reduce_complete_unroll (block 128, 8 tiles per block, then a second pass) and kernlab's way of
// taking a sample (flush L2, event, operation, event, wait).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -cudart static -o noise_repro noise_repro.cu -ldl
//   ./noise_repro --n 16777216 --buffers 4 --rounds 6 --row-ms 50 --exp read2,write1,none,batch
//
// Each experiment measures `rounds` x `buffers` rows. A row is what kernlab times for one
// (variant, block): samples for --row-ms, then the median and its 95% interval. The buffers hold
// the same data at different places in device memory, and rows go round-robin over them, so a
// difference that follows the buffer is placement and one that follows the round is time. The
// SM and memory clocks, power and temperature are read through NVML after every row. Run the
// program several times to see what moves between processes.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#define CK(call)                                                                          \
  do {                                                                                    \
    const cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,           \
                   cudaGetErrorString(e_));                                               \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

namespace {

// ---- NVML, loaded at run time (no header in the toolkit) ----
struct nvml {
  using init_t = int (*)();
  using by_index_t = int (*)(unsigned, void**);
  using clock_t_ = int (*)(void*, int, unsigned*);
  using power_t = int (*)(void*, unsigned*);
  using temp_t = int (*)(void*, int, unsigned*);
  void* dev = nullptr;
  clock_t_ clock = nullptr;
  power_t power = nullptr;
  temp_t temp = nullptr;
  nvml() {
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h) return;
    auto init = reinterpret_cast<init_t>(dlsym(h, "nvmlInit_v2"));
    auto by_index = reinterpret_cast<by_index_t>(dlsym(h, "nvmlDeviceGetHandleByIndex_v2"));
    clock = reinterpret_cast<clock_t_>(dlsym(h, "nvmlDeviceGetClockInfo"));
    power = reinterpret_cast<power_t>(dlsym(h, "nvmlDeviceGetPowerUsage"));
    temp = reinterpret_cast<temp_t>(dlsym(h, "nvmlDeviceGetTemperature"));
    if (!init || !by_index || init() != 0 || by_index(0, &dev) != 0) dev = nullptr;
  }
  unsigned sm_mhz() const { return read_clock(1); }
  unsigned mem_mhz() const { return read_clock(2); }
  unsigned read_clock(int which) const {
    unsigned v = 0;
    if (dev && clock) clock(dev, which, &v);
    return v;
  }
  double watts() const {
    unsigned mw = 0;
    if (dev && power) power(dev, &mw);
    return mw / 1000.0;
  }
  unsigned celsius() const {
    unsigned c = 0;
    if (dev && temp) temp(dev, 0, &c);
    return c;
  }
};

// ---- the kernels ----
template <unsigned BLOCK>
__global__ void reduce_tiles(const int* in, int* out, unsigned n) {
  __shared__ int s[BLOCK];
  const unsigned tid = threadIdx.x;
  const unsigned base = blockIdx.x * (BLOCK * 8) + tid;
  int v = 0;
#pragma unroll
  for (int k = 0; k < 8; ++k) v += in[base + k * BLOCK];  // padded: every tile is readable
  s[tid] = v;
  __syncthreads();
  for (unsigned h = BLOCK / 2; h > 0; h >>= 1) {
    if (tid < h) s[tid] += s[tid + h];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce_rest(const int* in, int* out, unsigned n) {
  __shared__ int s[1024];
  int v = 0;
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) v += in[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = s[0];
}

// A grid-stride reduce with 16-byte loads, one atomic per block.
__global__ void reduce_stride(const int4* in, int* out, unsigned n4) {
  int v = 0;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
    const int4 x = in[i];
    v += x.x + x.y + x.z + x.w;
  }
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

__global__ void touch_pages(const int* p, size_t ints, int* sink) {
  const size_t i = (blockIdx.x * 1ull * blockDim.x + threadIdx.x) * 16384;  // 64 KiB apart
  if (i < ints && p[i] == 0x13572468) *sink = 1;
}

__global__ void wait_for_host(volatile int* go) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (*go == 0 && t - t0 < 1000000000ull);  // 1 s at most, never a hang
}

__global__ void read_flush(const int4* p, unsigned long long n, int* sink) {
  int acc = 0;
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += 1ull * gridDim.x * blockDim.x) {
    const int4 v = p[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x13572468) *sink = acc;
}

// An experiment is a '+' list of features over kernlab's method (read2: read twice the L2):
//   read1 read2 read4 write1 none   the flush (a read of 1, 2 or 4 times the L2; nvbench's
//                                   cudaMemsetAsync over the L2; none)
//   batch      16 samples enqueued before waiting
//   warm       after the flush, one load per 64 KiB of every buffer the operation uses (the TLB
//              warm, L2 still cold: 1024 lines of 64 MiB)
//   partials   the partial-results buffer freed and allocated again for every row, as kernlab's
//              operation does when it is bound
//   spread     partials, with a spacer of a random size allocated first
//   load       16 host threads spinning while the rows are timed (kernlab's compile threads)
//   block      the sample is enqueued behind a kernel that waits for the host's go (nvbench's
//              blocking kernel): no host delay can fall between the events
struct features {
  size_t flush_l2s = 2;
  bool write = false, warm = false, partials = false, spread = false, load = false,
       block = false;
  int batch = 1;
};

struct options {
  unsigned n = 1u << 24;
  int buffers = 4, rounds = 6;
  double row_ms = 50;
  std::string exps = "read2,write1,none,batch";
  std::string kernel = "tiles";  // tiles | stride
  int min_samples = 10;
};

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The 95% interval of the median from order statistics (normal approximation of the binomial).
double ci_half(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  if (n < 6) return 0;
  const double med = median_of(v);
  const long lo = std::max(0L, static_cast<long>(std::floor(n / 2 - 0.98 * std::sqrt(n))) - 1);
  const long hi =
      std::min(static_cast<long>(n) - 1, static_cast<long>(std::ceil(n / 2 + 0.98 * std::sqrt(n))));
  return std::max(med - v[lo], v[hi] - med) / med;
}

struct row {
  int buffer = 0, round = 0;
  double median_us = 0, ci = 0;
  size_t samples = 0;
  unsigned sm = 0, mem = 0, celsius = 0;
  double watts = 0;
};

struct lab {
  options opt;
  nvml smi;
  cudaStream_t stream{};
  int sms = 0;
  size_t l2 = 0;
  std::vector<int*> inputs;
  int* partial = nullptr;
  int* result = nullptr;
  int* sink = nullptr;
  int4* flush_buf = nullptr;
  size_t flush_bytes = 0;
  int flush_grid = 0;
  int expected = 0;
  size_t partial_bytes = 0;
  void* spacer = nullptr;
  int* go_host = nullptr;
  int* go_dev = nullptr;
  unsigned seed = 1;

  void init() {
    cudaDeviceProp p{};
    CK(cudaGetDeviceProperties(&p, 0));
    sms = p.multiProcessorCount;
    l2 = p.l2CacheSize;
    std::printf("device %s, %d SMs, L2 %.1f MiB\n", p.name, sms, l2 / 1048576.0);
    CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const size_t padded = (opt.n + 8191u) / 8192u * 8192u;
    std::vector<int> host(padded, 0);
    std::uint64_t x = 12345;
    for (unsigned i = 0; i < opt.n; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      host[i] = static_cast<int>((x >> 33) % 255) - 127;
      expected += host[i];
    }
    // The buffers are allocated one after another, with a 3 MiB spacer between them, so that
    // each starts at another place relative to the 2 MiB pages and to the others.
    for (int b = 0; b < opt.buffers; ++b) {
      int* p = nullptr;
      CK(cudaMalloc(&p, padded * sizeof(int)));
      CK(cudaMemcpy(p, host.data(), padded * sizeof(int), cudaMemcpyHostToDevice));
      inputs.push_back(p);
      void* spacer = nullptr;
      CK(cudaMalloc(&spacer, (3u << 20) + 4096u * b));
    }
    partial_bytes = padded / 8 * sizeof(int);
    CK(cudaMalloc(&partial, partial_bytes));
    CK(cudaHostAlloc(&go_host, sizeof(int), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&go_dev, go_host, 0));
    CK(cudaMalloc(&result, sizeof(int)));
    CK(cudaMalloc(&sink, sizeof(int)));
  }

  void set_flush(size_t bytes) {
    if (flush_buf) CK(cudaFree(flush_buf));
    flush_buf = nullptr;
    flush_bytes = bytes;
    if (!bytes) return;
    CK(cudaMalloc(&flush_buf, bytes));
    CK(cudaMemset(flush_buf, 1, bytes));
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_flush, 256, 0));
    flush_grid = per_sm * sms;
  }

  void replace_partials(bool spread) {
    CK(cudaFree(partial));
    if (spacer) CK(cudaFree(spacer));
    spacer = nullptr;
    if (spread) {
      seed = seed * 1103515245u + 12345u;
      CK(cudaMalloc(&spacer, 4096u * (1 + (seed >> 8) % 2048)));  // 4 KiB to 8 MiB
    }
    CK(cudaMalloc(&partial, partial_bytes));
  }

  void warm(const int* in) {
    const size_t ints = opt.n, pints = partial_bytes / 4;
    touch_pages<<<(ints / 16384 + 255) / 256, 256, 0, stream>>>(in, ints, sink);
    touch_pages<<<(pints / 16384 + 255) / 256, 256, 0, stream>>>(partial, pints, sink);
    CK(cudaGetLastError());
  }

  void flush(bool write) {
    if (!flush_bytes) return;
    if (write) {
      CK(cudaMemsetAsync(flush_buf, 0, flush_bytes, stream));
    } else {
      read_flush<<<flush_grid, 256, 0, stream>>>(flush_buf, flush_bytes / 16, sink);
      CK(cudaGetLastError());
    }
  }

  void op(const int* in) {
    if (opt.kernel == "stride") {
      CK(cudaMemsetAsync(result, 0, sizeof(int), stream));
      reduce_stride<<<sms * 8, 256, 0, stream>>>(reinterpret_cast<const int4*>(in), result,
                                                 opt.n / 4);
    } else {
      const unsigned blocks = (opt.n + 1023) / 1024;
      reduce_tiles<128><<<blocks, 128, 0, stream>>>(in, partial, opt.n);
      reduce_rest<<<1, 1024, 0, stream>>>(partial, result, blocks);
    }
    CK(cudaGetLastError());
  }

  void validate(const int* in) {
    op(in);
    int got = 0;
    CK(cudaMemcpyAsync(&got, result, sizeof got, cudaMemcpyDeviceToHost, stream));
    CK(cudaStreamSynchronize(stream));
    if (got != expected) {
      std::fprintf(stderr, "wrong result: expected %d, got %d\n", expected, got);
      std::exit(1);
    }
  }

  // One row: samples for opt.row_ms of kernel time. batch > 1 enqueues that many samples before
  // waiting (no idle gap for the host's round trip between them).
  row measure(const int* in, const features& f) {
    const bool write_flush = f.write;
    const int batch = f.batch;
    if (f.partials || f.spread) replace_partials(f.spread);
    std::vector<cudaEvent_t> ev(2 * batch);
    for (auto& e : ev) CK(cudaEventCreate(&e));
    std::vector<double> s;
    double total = 0;
    for (int i = 0; i < 2; ++i) op(in);  // warm-up, as kernlab's two
    while (total < opt.row_ms || s.size() < static_cast<size_t>(opt.min_samples)) {
      if (f.block) {
        *reinterpret_cast<volatile int*>(go_host) = 0;
        wait_for_host<<<1, 1, 0, stream>>>(go_dev);
        CK(cudaGetLastError());
      }
      for (int k = 0; k < batch; ++k) {
        flush(write_flush);
        if (f.warm) warm(in);
        CK(cudaEventRecord(ev[2 * k], stream));
        op(in);
        CK(cudaEventRecord(ev[2 * k + 1], stream));
      }
      if (f.block) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        *reinterpret_cast<volatile int*>(go_host) = 1;
      }
      CK(cudaEventSynchronize(ev[2 * batch - 1]));
      for (int k = 0; k < batch; ++k) {
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
        s.push_back(ms * 1e3);
        total += ms;
      }
    }
    for (auto& e : ev) CK(cudaEventDestroy(e));
    row r;
    r.median_us = median_of(s);
    r.ci = ci_half(s);
    r.samples = s.size();
    r.sm = smi.sm_mhz();
    r.mem = smi.mem_mhz();
    r.watts = smi.watts();
    r.celsius = smi.celsius();
    return r;
  }
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string t; std::getline(in, t, ',');)
    if (!t.empty()) out.push_back(t);
  return out;
}

void summarize(const char* name, const std::vector<row>& rows, int buffers, int rounds) {
  std::vector<double> m;
  for (const auto& r : rows) m.push_back(r.median_us);
  const double mid = median_of(m);
  const auto [lo, hi] = std::minmax_element(m.begin(), m.end());
  double ci = 0;
  for (const auto& r : rows) ci += r.ci;
  ci /= rows.size();
  auto spread_of_means = [&](bool by_buffer) {
    const int k = by_buffer ? buffers : rounds;
    std::vector<double> mean(k, 0);
    std::vector<int> cnt(k, 0);
    for (const auto& r : rows) {
      const int i = by_buffer ? r.buffer : r.round;
      mean[i] += r.median_us;
      ++cnt[i];
    }
    for (int i = 0; i < k; ++i) mean[i] /= cnt[i];
    const auto [a, b] = std::minmax_element(mean.begin(), mean.end());
    return (*b - *a) / mid;
  };
  std::printf(
      "SUMMARY %-20s median %.3f us  rows spread %.2f%%  by-buffer spread %.2f%%  by-round "
      "spread %.2f%%  mean ci95 +-%.2f%%\n",
      name, mid, 100 * (*hi - *lo) / mid, 100 * spread_of_means(true),
      100 * spread_of_means(false), 100 * ci);
}

}  // namespace

int main(int argc, char** argv) {
  options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--n") opt.n = static_cast<unsigned>(std::stoul(v));
    else if (k == "--buffers") opt.buffers = std::stoi(v);
    else if (k == "--rounds") opt.rounds = std::stoi(v);
    else if (k == "--row-ms") opt.row_ms = std::stod(v);
    else if (k == "--exp") opt.exps = v;
    else if (k == "--kernel") opt.kernel = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  lab L;
  L.opt = opt;
  L.init();
  for (auto* in : L.inputs) L.validate(in);
  std::printf("n %u (%.1f MiB), kernel %s, %d buffers x %d rounds, %.0f ms a row\n", opt.n,
              opt.n * 4.0 / 1048576, opt.kernel.c_str(), opt.buffers, opt.rounds, opt.row_ms);
  for (const auto& exp : split(opt.exps)) {
    features f;
    std::stringstream parts(exp);
    for (std::string t; std::getline(parts, t, '+');) {
      if (t == "read1") f.flush_l2s = 1;
      else if (t == "read2") f.flush_l2s = 2;
      else if (t == "read4") f.flush_l2s = 4;
      else if (t == "write1") f.write = true, f.flush_l2s = 1;
      else if (t == "none") f.flush_l2s = 0;
      else if (t == "batch") f.batch = 16;
      else if (t == "warm") f.warm = true;
      else if (t == "partials") f.partials = true;
      else if (t == "spread") f.spread = true;
      else if (t == "load") f.load = true;
      else if (t == "block") f.block = true;
      else {
        std::fprintf(stderr, "unknown feature %s\n", t.c_str());
        return 2;
      }
    }
    L.set_flush(f.flush_l2s * L.l2);
    std::atomic<bool> stop{false};
    std::vector<std::thread> spinners;
    if (f.load)
      for (int t = 0; t < 16; ++t)
        spinners.emplace_back([&stop] {
          volatile unsigned long long x = 0;
          while (!stop.load(std::memory_order_relaxed)) x = x + 1;
        });
    std::vector<row> rows;
    for (int r = 0; r < opt.rounds; ++r)
      for (int b = 0; b < opt.buffers; ++b) {
        row x = L.measure(L.inputs[b], f);
        x.buffer = b;
        x.round = r;
        std::printf("ROW %-14s round %d buffer %d  %.3f us +-%.2f%% (%zu samples)  sm %u mem %u MHz "
                    "%.0f W %u C\n",
                    exp.c_str(), r, b, x.median_us, 100 * x.ci, x.samples, x.sm, x.mem, x.watts,
                    x.celsius);
        rows.push_back(x);
      }
    stop = true;
    for (auto& t : spinners) t.join();
    summarize(exp.c_str(), rows, opt.buffers, opt.rounds);
    for (auto* in : L.inputs) L.validate(in);
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
