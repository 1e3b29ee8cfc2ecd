// libFuzzer target: the config file (Boost.Program_options' format, read by parse_command_line
// for --config FILE), and the --size and --block values on their own.
//
// The bytes are written to a file on tmpfs (/dev/shm, one name per process, so that -jobs and
// -fork runs do not share it) and parsed through the real entry point, as `kernlab --config
// FILE` would. The same bytes, as a string, go to parse_size and parse_blocks. usage_error is the
// only exception these may throw; anything else escapes and libFuzzer reports it. What parses
// must keep the promises checked below; parse_size's value is checked against exact arithmetic.
#include "cli/options.hpp"
#include "spec/names.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace {

[[noreturn]] void broken_promise(const std::string& what) {
  std::fprintf(stderr, "fuzz_config: %s\n", what.c_str());
  std::abort();
}

const std::string& config_path() {
  static const std::string path = [] {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/kernlab-fuzz-config-" + std::to_string(getpid()) + ".cfg";
  }();
  return path;
}

// Makes the path first, so that it is destroyed after the file is removed.
struct remove_at_exit {
  remove_at_exit() { config_path(); }
  ~remove_at_exit() { std::remove(config_path().c_str()); }
} cleanup;

// parse_size's grammar, NUMBER [^NUMBER | K | M | G] [+NUMBER | -NUMBER], in 128-bit arithmetic
// that saturates far above 2^64: the exact value of what parse_size accepted.
std::optional<unsigned __int128> exact_size(const std::string& s) {
  using u128 = unsigned __int128;
  const u128 cap = u128{1} << 100;
  std::size_t pos = 0;
  auto number = [&]() -> std::optional<u128> {
    const std::size_t start = pos;
    u128 v = 0;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
      v = v * 10 + static_cast<unsigned>(s[pos++] - '0');
      if (v > cap) v = cap;
    }
    if (pos == start) return std::nullopt;
    return v;
  };
  auto v = number();
  if (!v) return std::nullopt;
  if (pos < s.size() && s[pos] == '^') {
    ++pos;
    const auto e = number();
    if (!e) return std::nullopt;
    u128 p = 1;
    for (u128 i = 0; i < *e && p <= cap; ++i) p *= *v;
    *v = p > cap ? cap : p;
  } else if (pos < s.size() && (s[pos] == 'K' || s[pos] == 'M' || s[pos] == 'G')) {
    *v <<= s[pos] == 'K' ? 10 : s[pos] == 'M' ? 20 : 30;
    ++pos;
  }
  if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    const char sign = s[pos++];
    const auto d = number();
    if (!d || (sign == '-' && *d > *v)) return std::nullopt;
    *v = sign == '+' ? *v + *d : *v - *d;
  }
  if (pos != s.size()) return std::nullopt;
  return v;
}

void check_blocks(const std::vector<unsigned>& blocks, const char* where) {
  if (blocks.empty()) broken_promise(std::string(where) + ": no block sizes");
  for (unsigned b : blocks)
    if (b < 1 || b > 1024)
      broken_promise(std::string(where) + ": block size " + std::to_string(b) + " out of 1..1024");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  {
    std::ofstream out(config_path(), std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) broken_promise("cannot write " + config_path());
  }
  const char* argv[] = {"kernlab", "--config", config_path().c_str()};
  try {
    const kl::cli_options o = kl::parse_command_line(3, argv, kl::default_paths{});
    check_blocks(o.blocks, "config");
    for (const auto& a : o.axes) {
      if (a.points.empty()) broken_promise("config: " + a.option + " without values");
      if (a.option != "--axis")
        for (const auto& p : a.points)
          for (const auto& v : p)
            if (v == kl::axis_number{std::uint64_t{0}}) broken_promise("config: a size of 0");
    }
    const auto& t = o.timing;
    // "timing options must be positive": written so that NaN breaks the promise too.
    if (!(t.warmup_runs >= 0 && t.min_samples >= 1 && t.min_time_s >= 0 && t.max_noise >= 0 &&
          t.timeout_s > 0))
      broken_promise("config: timing options accepted that are not positive");
  } catch (const kl::usage_error&) {
  }

  try {
    const std::uint64_t n = kl::parse_size(text);
    const auto exact = exact_size(text);
    if (!exact) broken_promise("parse_size accepted '" + text + "', which is no size");
    if (n == 0 || *exact != n)
      broken_promise("parse_size('" + text + "') = " + std::to_string(n) + ", not its value");
  } catch (const kl::usage_error&) {
  }

  // A list of sizes and ranges: no value 0, and a list without ranges parse_size of each item.
  try {
    const auto sizes = kl::parse_sizes(text, "--size");
    if (std::any_of(sizes.begin(), sizes.end(), [](std::uint64_t v) { return v == 0; }))
      broken_promise("parse_sizes('" + text + "') gave a value that is no size");
    if (text.find(':') == std::string::npos) {
      std::vector<std::uint64_t> each;
      for (const auto& item : kl::split_list(text)) each.push_back(kl::parse_size(item));
      if (each != sizes) broken_promise("parse_sizes('" + text + "') is not parse_size's values");
    }
  } catch (const kl::usage_error&) {
  }
  try {
    for (const auto& shape : kl::parse_shapes(text))
      if (shape.empty() || std::any_of(shape.begin(), shape.end(), [](std::uint64_t v) {
            return v == 0 || v >= (std::uint64_t{1} << 31);
          }))
        broken_promise("parse_shapes('" + text + "') gave a dimension out of range");
  } catch (const kl::usage_error&) {
  }

  try {
    check_blocks(kl::parse_blocks(text), "parse_blocks");
  } catch (const kl::usage_error&) {
  }
  return 0;
}
