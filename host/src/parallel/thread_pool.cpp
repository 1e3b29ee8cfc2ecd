#include "parallel/thread_pool.hpp"

#include <algorithm>

namespace kl {

thread_pool::thread_pool(unsigned threads) {
  threads = std::max(1u, threads);
  workers_.reserve(threads);
  try {
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  } catch (...) {
    // A thread that could not start: stop the ones that did before reporting it.
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    throw;
  }
}

thread_pool::~thread_pool() {
  std::deque<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
  // `dropped` goes here, outside the lock: destroying a packaged_task sets broken_promise.
}

unsigned thread_pool::hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

void thread_pool::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();  // a packaged_task: exceptions land in its future
  }
}

}  // namespace kl
