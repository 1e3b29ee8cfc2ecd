// A fixed pool of CPU threads for work that runs beside the GPU: NVRTC compiles, which are
// independent programs and so compile concurrently.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace kl {

class thread_pool {
 public:
  /// Starts `threads` workers (at least one).
  explicit thread_pool(unsigned threads);
  /// Drops the tasks that have not started (their futures report broken_promise) and waits for
  /// those that have: a compile cannot be interrupted.
  ~thread_pool();
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;

  /// Queues `task`; tasks start in the order they were submitted. The future carries its result
  /// or its exception.
  template <typename F>
  std::future<std::invoke_result_t<F>> submit(F task) {
    using result_t = std::invoke_result_t<F>;
    // std::function needs a copyable callable; a packaged_task is move-only.
    auto job = std::make_shared<std::packaged_task<result_t()>>(std::move(task));
    std::future<result_t> done = job->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back([job] { (*job)(); });
    }
    wake_.notify_one();
    return done;
  }

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  /// The hardware threads of this machine (at least 1).
  static unsigned hardware_threads();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace kl
