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
#include <optional>
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

std::optional<double> finite_number(const std::string& text) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

// A range's text, FIRST:LAST[:STEP], in its parts. Everything after the second ':' is the step
// (a third ':' makes a step that is not one).
struct range_parts {
  std::string first, last;
  std::optional<std::string> step;  ///< none without a second ':'
};
range_parts split_range(const std::string& item) {
  const std::size_t c1 = item.find(':');
  const std::size_t c2 = item.find(':', c1 + 1);
  if (c2 == std::string::npos) return {item.substr(0, c1), item.substr(c1 + 1), std::nullopt};
  return {item.substr(0, c1), item.substr(c1 + 1, c2 - c1 - 1), item.substr(c2 + 1)};
}

// One range FIRST:LAST[:STEP] of whole numbers, each end read by `end_value`; *2 without a step.
// The next value is formed only when it stays at most LAST, so no step can wrap around 2^64.
template <class EndValue>
std::vector<std::uint64_t> whole_range(const std::string& item, const std::string& option,
                                       EndValue end_value) {
  const auto fail = [&](const std::string& why) -> std::vector<std::uint64_t> {
    throw usage_error(option + " '" + item + "' is not a range (" + why +
                      "; examples: 2^20:2^28:*2, 1024:8192:+1024)");
  };
  const range_parts parts = split_range(item);
  const std::uint64_t first = end_value(parts.first);
  const std::uint64_t last = end_value(parts.last);
  const std::string step = parts.step.value_or("*2");
  if (step.size() < 2 || step.size() > 10 || (step[0] != '*' && step[0] != '+') ||
      step.find_first_not_of("0123456789", 1) != std::string::npos)
    return fail("the step '" + step + "' is not *F or +D");
  const std::uint64_t by = std::stoull(step.substr(1));
  const bool times = step[0] == '*';
  if (times && by < 2) return fail("a factor below 2 never reaches the last value");
  if (!times && by < 1) return fail("a step of +0 never reaches the last value");
  if (first > last) return fail("its first value is above its last");
  std::vector<std::uint64_t> out;
  for (std::uint64_t v = first;;) {
    out.push_back(v);
    if (out.size() > max_range_values)
      return fail("more than " + std::to_string(max_range_values) + " values");
    if (times ? v > last / by : last - v < by) return out;
    v = times ? v * by : v + by;
  }
}

// A size as `option` names it (--axis K, --size).
std::uint64_t size_for(const std::string& text, const std::string& option) {
  try {
    return parse_size(text);
  } catch (const usage_error&) {
    if (option == "--size") throw;
    throw usage_error(option + ": '" + text +
                      "' is not a size (examples: 268435456, 2^28, 2^20+3, 16M)");
  }
}

}  // namespace

std::vector<std::uint64_t> parse_sizes(const std::string& text, const std::string& option) {
  std::vector<std::uint64_t> out;
  for (const auto& item : split_list(text)) {
    if (item.find(':') == std::string::npos) {
      out.push_back(size_for(item, option));
      continue;
    }
    const auto range =
        whole_range(item, option, [&](const std::string& end) { return size_for(end, option); });
    out.insert(out.end(), range.begin(), range.end());
  }
  return out;
}

std::vector<std::vector<std::uint64_t>> parse_shapes(const std::string& text) {
  if (text.find(':') == std::string::npos) return {parse_shape(text)};
  // Each dimension's values, then their product (the first dimension outermost).
  std::vector<std::vector<std::uint64_t>> dims;
  std::size_t start = 0;
  for (;;) {
    const std::size_t x = text.find_first_of("xX", start);
    const std::string dim = text.substr(start, x == std::string::npos ? x : x - start);
    const auto one = [&](const std::string& t) { return parse_shape(t).at(0); };
    if (dim.find(':') == std::string::npos)
      dims.push_back({one(dim)});
    else
      dims.push_back(whole_range(dim, "--shape", [&](const std::string& end) {
        const auto v = parse_shape(end);  // one plain dimension: "a:bxc" is split before this
        if (v.size() != 1) throw usage_error("--shape '" + text + "' is not a shape");
        return v[0];
      }));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  std::vector<std::vector<std::uint64_t>> out{{}};
  for (const auto& values : dims) {
    std::vector<std::vector<std::uint64_t>> next;
    for (const auto& head : out)
      for (auto v : values) {
        next.push_back(head);
        next.back().push_back(v);
        if (next.size() > max_range_values)
          throw usage_error("--shape '" + text + "' gives more than " +
                            std::to_string(max_range_values) + " shapes");
      }
    out = std::move(next);
  }
  return out;
}

std::optional<std::vector<double>> parse_real_range(const std::string& text,
                                                    const std::string& option) {
  if (text.find(':') == std::string::npos) return std::nullopt;
  const auto fail = [&](const std::string& why) -> std::vector<double> {
    throw usage_error(option + " '" + text + "' is not a range (" + why +
                      "; examples: 0:20:+2.5, 1e-3:1:*10)");
  };
  const range_parts parts = split_range(text);
  if (!parts.step) return fail("a range of reals needs a step, +D or *F");
  const auto real = [&](const std::string& t) {
    const auto v = finite_number(t);
    if (!v) fail("'" + t + "' is not a finite number");
    return *v;
  };
  const double first = real(parts.first);
  const double last = real(parts.last);
  const std::string& step = *parts.step;
  if (step.size() < 2 || (step[0] != '*' && step[0] != '+'))
    return fail("the step '" + step + "' is not *F or +D");
  const double by = real(step.substr(1));
  if (first > last) return fail("its first value is above its last");
  // LAST counts as reached within a millionth of the step, so 0:1:+0.1 ends at 1.
  std::vector<double> out;
  if (step[0] == '+') {
    if (!(by > 0)) return fail("a step must be above 0");
    const double n = std::floor((last - first) / by + 1e-6);
    if (n >= static_cast<double>(max_range_values))
      return fail("more than " + std::to_string(max_range_values) + " values");
    for (double i = 0; i <= n; ++i) out.push_back(first + i * by);
  } else {
    if (!(by > 1)) return fail("a factor must be above 1");
    if (!(first > 0)) return fail("a range by a factor starts above 0");
    for (double v = first; v <= last * (1 + 1e-9); v *= by) {
      out.push_back(v);
      if (out.size() > max_range_values)
        return fail("more than " + std::to_string(max_range_values) + " values");
    }
  }
  return out;
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
