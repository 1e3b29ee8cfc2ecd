#pragma once
// JSON as kernlab reads and writes it. Read: a text from anywhere (a results file, a line of the
// tuning store) is parsed with its nesting bounded, since what is done with the value afterwards
// (copying it, printing it in a message) recurses once per level, and a value nested 100,000
// deep would overflow the stack. Written: valid UTF-8 (core/utf8.hpp), whatever bytes its
// strings hold, where nlohmann's own dump() throws.
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace kl {

/// The deepest nesting of arrays and objects kernlab reads: a results file's is 8 at most.
inline constexpr int json_max_depth = 64;

/// `text` parsed. Throws std::runtime_error for a value nested deeper than json_max_depth, and
/// nlohmann::json::parse_error for a text that is not JSON.
nlohmann::json parse_json(std::string_view text);

/// `j` as text (`indent` as nlohmann's dump(): -1 for one line), every string valid UTF-8: a
/// byte that is not part of a well-formed UTF-8 sequence is written as U+FFFD.
std::string json_text(const nlohmann::json& j, int indent = -1);

}  // namespace kl
