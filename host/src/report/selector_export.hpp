// The size selector of a range tune in the exported files (tune/selector.hpp fits it): the
// header's `ID_select(sizes...)` and the tuning table's "selectors".
#pragma once

#include "tune/outcome.hpp"
#include "tune/selector.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kl {

/// A C identifier from a name: "my-kernel" -> "my_kernel".
std::string c_identifier(const std::string& s);

/// `s` as a C string literal: quotes, backslashes, '?' (trigraphs) and control characters escaped.
std::string c_string(const std::string& s);

/// The problem's axes as (name, value): the shape's dimensions by the family's names, or n.
std::vector<std::pair<std::string, std::uint64_t>> named_sizes(
    const problem_config& c, const std::vector<std::string>& names);

/// Whether the tunes differ in their sizes alone (one dtype, op, input, real axes and GPU model):
/// then a size picks one of them.
bool sizes_alone_differ(const std::vector<const tune::tune_outcome*>& tunes);

/// `ID_select(sizes...)` for one file's tunes (ID_configs[] written before it): a measured size's
/// own row; with the `between` rule, the cell's configuration for a size between measured ones
/// (ID_cells[]); else the measured row nearest in log scale. For tunes over several GPU models,
/// a table and a selector per model (ID_gpuK_configs[], ID_gpuK_select) and
/// `ID_select(model, sizes...)`, which picks the model's by its name. A comment instead where the
/// tunes differ in more than their sizes and models.
void write_selector(std::ostream& h, const std::string& id,
                    const std::vector<const tune::tune_outcome*>& mine);

/// The same selectors as data, one per GPU model ("model" given when there are several): the
/// rule, the table of measured sizes and their values, the cells, and the leave-one-out figures
/// that chose the rule. None where the tunes differ in more than their sizes and models.
std::vector<nlohmann::json> selector_json(const std::string& file,
                                          const std::vector<const tune::tune_outcome*>& mine);

/// For the tune's output after a range tune: a line per GPU model, the rule kept and why ("" for
/// tunes of one size).
std::string selector_summary(const std::vector<const tune::tune_outcome*>& mine);

}  // namespace kl
