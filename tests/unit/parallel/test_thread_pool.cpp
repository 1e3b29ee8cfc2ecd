// The compile thread pool: results and exceptions through futures, real concurrency, and a
// destructor that drops what has not started.
#include "parallel/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>

namespace kl {
namespace {

TEST(ThreadPool, ResultsAndExceptionsComeBackThroughFutures) {
  thread_pool pool(2);
  EXPECT_EQ(pool.size(), 2u);
  auto a = pool.submit([] { return 6 * 7; });
  auto b = pool.submit([]() -> int { throw std::runtime_error("compile thread failed"); });
  EXPECT_EQ(a.get(), 42);
  EXPECT_THROW(b.get(), std::runtime_error);
}

TEST(ThreadPool, RunsTasksAtTheSameTime) {
  thread_pool pool(2);
  std::atomic<int> running{0}, most{0};
  auto task = [&] {
    const int now = ++running;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    // Long enough for the other worker to start its task while this one runs.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    while (std::chrono::steady_clock::now() < until && most.load() < 2) std::this_thread::yield();
    --running;
  };
  auto a = pool.submit(task);
  auto b = pool.submit(task);
  a.get();
  b.get();
  EXPECT_EQ(most.load(), 2);
}

TEST(ThreadPool, AtLeastOneWorker) { EXPECT_EQ(thread_pool(0).size(), 1u); }

TEST(ThreadPool, DestructorDropsTasksNotStarted) {
  std::future<void> started_task, dropped;
  std::atomic<bool> started{false}, release{false}, ran{false};
  std::thread releaser;
  {
    thread_pool pool(1);
    started_task = pool.submit([&] {
      started = true;
      while (!release) std::this_thread::yield();
    });
    dropped = pool.submit([&] { ran = true; });
    while (!started) std::this_thread::yield();
    // The pool is destroyed while its one worker is busy; the task is let go from outside.
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      release = true;
    });
  }
  releaser.join();
  started_task.get();  // it had started, so it finished
  EXPECT_FALSE(ran);
  EXPECT_THROW(dropped.get(), std::future_error);
}

}  // namespace
}  // namespace kl
