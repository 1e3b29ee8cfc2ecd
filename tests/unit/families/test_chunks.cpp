// for_each_chunk: the chunks' bounds depend on the count and the number of chunks only, every
// element is visited once, and an exception in a chunk reaches the caller.
#include "parallel/chunks.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace kl {
namespace {

TEST(ForEachChunk, SameBoundsWithAnyNumberOfThreadsAndEveryElementOnce) {
  for (const std::size_t count :
       {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000003}}) {
    std::vector<std::vector<std::size_t>> bounds;
    for (const unsigned threads : {1u, 3u, 16u}) {
      std::vector<std::size_t> begins(64, ~std::size_t{0});
      std::vector<std::atomic<int>> seen(count);
      for_each_chunk(
          count, 64,
          [&](const chunk_range& ch) {
            begins[ch.index] = ch.begin;
            for (std::size_t i = ch.begin; i < ch.end; ++i) ++seen[i];
          },
          threads);
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(seen[i].load(), 1) << i;
      bounds.push_back(begins);
    }
    EXPECT_EQ(bounds[0], bounds[1]) << count;
    EXPECT_EQ(bounds[0], bounds[2]) << count;
  }
}

TEST(ForEachChunk, AnExceptionReachesTheCallerTheFirstByChunk) {
  try {
    for_each_chunk(
        100, 10,
        [](const chunk_range& ch) {
          if (ch.index == 7 || ch.index == 3)
            throw std::runtime_error("chunk " + std::to_string(ch.index));
        },
        4);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk 3");
  }
}

}  // namespace
}  // namespace kl
