// libFuzzer target: the readers of results files, fed bytes (tests/fuzz/results_harness.hpp
// says what is done with them and which promises are checked). scripts/fuzz.sh lets its inputs
// grow to 4 MiB, so that a value nested 100,000 deep fits in one.
#include "results_harness.hpp"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::check_results_readers(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
