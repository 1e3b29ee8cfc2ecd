// Name matching for variant selection: CUTLASS-style wildcards and "did you mean" suggestions.
#pragma once

#include <string>
#include <vector>

namespace kl {

/// Shell-style match: '*' any run of characters, '?' one character. Case-sensitive.
bool wildcard_match(const std::string& pattern, const std::string& text);

/// Levenshtein distance.
std::size_t edit_distance(const std::string& a, const std::string& b);

/// Up to `limit` candidates closest to `name`, closest first, none farther than about half its
/// length.
std::vector<std::string> nearest_names(const std::string& name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

/// A C identifier: a letter or '_', then letters, digits and '_' (a variant's or family's name,
/// an axis, a buffer).
bool is_identifier(const std::string& s);

/// Splits "a, b,c" on commas and spaces, dropping empty items.
std::vector<std::string> split_list(const std::string& text);

}  // namespace kl
