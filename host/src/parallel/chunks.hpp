// Work over [0, count) split into a fixed number of contiguous chunks, run on CPU threads: for the
// element-wise checks of a result against its reference, which would otherwise leave all but one
// core idle while the GPU waits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace kl {

/// The chunks' bounds depend only on `count` and `chunks`, never on the number of threads, so a
/// result combined in chunk order (a sum of doubles, the first mismatch) is the same on any
/// machine.
struct chunk_range {
  std::size_t index = 0, begin = 0, end = 0;
};

/// Runs fn(chunk_range) for each of min(chunks, count) chunks (at least one, possibly empty when
/// count is 0), on up to `threads` threads (0: the hardware's), and returns when all are done.
/// An exception thrown by fn is rethrown here, the first one by chunk index.
template <typename F>
void for_each_chunk(std::size_t count, std::size_t chunks, F&& fn, unsigned threads = 0) {
  chunks = std::max<std::size_t>(1, std::min(chunks, count));
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, chunks));
  const auto range = [&](std::size_t i) {
    return chunk_range{i, count * i / chunks, count * (i + 1) / chunks};
  };
  if (threads == 1) {
    for (std::size_t i = 0; i < chunks; ++i) fn(range(i));
    return;
  }
  std::vector<std::exception_ptr> errors(chunks);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i = t; i < chunks; i += threads) {
        try {
          fn(range(i));
        } catch (...) {
          errors[i] = std::current_exception();
        }
      }
    });
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace kl
