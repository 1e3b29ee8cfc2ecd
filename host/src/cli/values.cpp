// The values of kernlab's options: sizes (2^24, 16M), shapes, block lists, device selections,
// byte sizes and tuning budgets, each parsed with an error that names the option.
#include "cli/options.hpp"

#include "core/errors.hpp"
#include "spec/names.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>
#include <string>

namespace kl {

void parse_budget(const std::string& text, std::size_t& evaluations, double& seconds) {
  auto fail = [&] {
    throw usage_error("--budget '" + text +
                      "' is not a budget: a number of evaluations (200) or a wall time (90s, 5m, "
                      "1h)");
  };
  if (text.empty()) fail();
  const char unit = text.back();
  const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
  const std::string number = scale > 0 ? text.substr(0, text.size() - 1) : text;
  if (number.empty() ||
      !std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      number.size() > 9)
    fail();
  const long v = std::stol(number);
  if (v < 1) fail();
  evaluations = 0;
  seconds = 0;
  if (scale > 0)
    seconds = static_cast<double>(v) * scale;
  else
    evaluations = static_cast<std::size_t>(v);
}

std::uint64_t parse_size(const std::string& text) {
  auto fail = [&]() -> std::uint64_t {
    throw usage_error("--size '" + text +
                      "' is not a size (examples: 268435456, 2^28, 2^20+3, 16M)");
  };
  if (text.empty()) return fail();
  // Every number, power and multiple is at most 2^60, checked before it is formed: a product
  // that wrapped around 2^64 used to pass as a small size (found by tests/fuzz).
  constexpr std::uint64_t limit = std::uint64_t{1} << 60;
  std::size_t pos = 0;
  auto number = [&]() -> std::uint64_t {
    const std::size_t start = pos;
    std::uint64_t v = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      v = v * 10 + static_cast<std::uint64_t>(text[pos++] - '0');
      if (v > limit) fail();
    }
    if (pos == start) fail();
    return v;
  };
  std::uint64_t v = number();
  if (pos < text.size() && text[pos] == '^') {
    ++pos;
    const std::uint64_t e = number();
    if (e > 60) fail();
    std::uint64_t p = 1;
    for (std::uint64_t i = 0; i < e; ++i) {
      if (v != 0 && p > limit / v) fail();
      p *= v;
    }
    v = p;
  } else if (pos < text.size() && (text[pos] == 'K' || text[pos] == 'M' || text[pos] == 'G')) {
    const int shift = text[pos] == 'K' ? 10 : text[pos] == 'M' ? 20 : 30;
    if (v > limit >> shift) fail();
    v <<= shift;
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const char sign = text[pos++];
    const std::uint64_t d = number();
    if (sign == '-' && d > v) fail();
    v = sign == '+' ? v + d : v - d;
  }
  if (pos != text.size() || v == 0) fail();
  return v;
}

std::vector<std::uint64_t> parse_shape(const std::string& text) {
  auto fail = [&](const std::string& why) -> std::vector<std::uint64_t> {
    throw usage_error("--shape '" + text + "' is not a shape (" + why +
                      "; examples: 4096x4096x4096, 4095x4097x1023)");
  };
  constexpr std::uint64_t limit = (std::uint64_t{1} << 31) - 1;
  std::vector<std::uint64_t> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t start = pos;
    std::uint64_t v = 0;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      v = v * 10 + static_cast<std::uint64_t>(text[pos++] - '0');
      if (v > limit) return fail("a dimension is 2^31 or more");
    }
    if (pos == start)
      return fail(pos < text.size() ? "unexpected '" + std::string(1, text[pos]) + "'"
                                    : "a dimension is missing");
    if (v == 0) return fail("a dimension is 0");
    out.push_back(v);
    if (pos == text.size()) return out;
    if (text[pos] != 'x' && text[pos] != 'X')
      return fail("unexpected '" + std::string(1, text[pos]) + "'");
    ++pos;
  }
}

device_selection parse_devices(const std::string& text, const std::string& option) {
  device_selection s;
  s.option = option;
  if (option == "--devices" && text == "all") {
    s.all = true;
    return s;
  }
  const std::string expected =
      option == "--device" ? "a GPU ordinal (0, 1, ...)" : "'all' or GPU ordinals (0,2,3)";
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const bool digits = !item.empty() && item.size() <= 6 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits) throw usage_error(option + " '" + text + "': '" + item + "' is not " + expected);
    const int n = std::stoi(item);
    if (std::find(s.ordinals.begin(), s.ordinals.end(), n) != s.ordinals.end())
      throw usage_error(option + " '" + text + "': GPU " + item +
                        " is named twice (each GPU takes one worker)");
    s.ordinals.push_back(n);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (option == "--device" && s.ordinals.size() != 1)
    throw usage_error("--device '" + text + "': one GPU; --devices takes a list");
  return s;
}

std::vector<int> resolve_devices(const device_selection& s, int count) {
  if (!s.given()) return {0};
  auto how_many = [&] {
    return count == 1 ? std::string("this machine has 1 GPU (ordinal 0)")
                      : "this machine has " + std::to_string(count) + " GPUs (ordinals 0 to " +
                            std::to_string(count - 1) + ")";
  };
  if (count <= 0) throw usage_error(s.option + ": this machine has no GPU");
  if (s.all) {
    std::vector<int> every(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) every[static_cast<std::size_t>(i)] = i;
    return every;
  }
  for (int n : s.ordinals)
    if (n >= count)
      throw usage_error(s.option + " " + std::to_string(n) + ": no such GPU; " + how_many());
  return s.ordinals;
}

std::optional<long> whole_number_in(const std::string& text, long lo, long hi) {
  std::size_t used = 0;
  long v = 0;
  try {
    v = std::stol(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::vector<unsigned> parse_blocks(const std::string& text) {
  if (text == "all") return {128, 256, 512, 1024};
  std::vector<unsigned> out;
  for (const auto& item : split_list(text)) {
    const auto b = whole_number_in(item, 1, 1024);
    if (!b) throw usage_error("--block '" + item + "' is not a block size in 1..1024 (or 'all')");
    out.push_back(static_cast<unsigned>(*b));
  }
  if (out.empty()) throw usage_error("--block needs at least one block size");
  return out;
}

std::uint64_t parse_byte_size(const std::string& text, const std::string& option) {
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0 || i > 19)
    throw usage_error(option + ": '" + text + "' is not a size (e.g. 2GiB, 500M, 1000000)");
  const std::uint64_t n = std::stoull(text.substr(0, i));
  std::string unit = text.substr(i);
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  static const std::pair<const char*, int> units[] = {
      {"", 0},     {"B", 0},  {"K", 10},  {"KB", 10},  {"KiB", 10}, {"M", 20},  {"MB", 20},
      {"MiB", 20}, {"G", 30}, {"GB", 30}, {"GiB", 30}, {"T", 40},   {"TB", 40}, {"TiB", 40}};
  for (const auto& [name, shift] : units) {
    if (unit != name) continue;
    if (shift > 0 && n > (std::numeric_limits<std::uint64_t>::max() >> shift))
      throw usage_error(option + ": '" + text + "' is too large");
    return n << shift;
  }
  throw usage_error(option + ": '" + text + "': unknown unit '" + unit +
                    "' (B, K, M, G, T; KiB, MiB, GiB, TiB are the same)");
}

}  // namespace kl
