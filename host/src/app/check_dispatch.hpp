// kernlab check-dispatch FILE.h: an exported header's size selector (ID_select) measured against
// each size's own tuned best, at sizes of the user's choosing (those not in the tune, most
// usefully). Each size is tuned as `kernlab tune` would, the header's pick first, so that both
// are timed in the same search; the table after the tunes gives the loss per size.
#pragma once

#include "tune/outcome.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace kl::app {

/// What an exported header's ID_select picks at each of some sizes: its parameters by name.
class dispatch_picks {
 public:
  /// Compiles a program around `header` with the host's C++ compiler ($CXX, else c++) that
  /// prints `space`'s ID_select configuration (ID: its family and name, as --export-header
  /// writes them) at each of `sizes`, runs it, and reads what it printed. Throws usage_error
  /// naming the header for one without that selector (naming those it has), one that does not
  /// compile (with the compiler's first lines), or a selector over another number of axes. A
  /// header of a tune over several GPU models is asked for `model`'s picks (the GPU the check
  /// runs on).
  dispatch_picks(const std::string& header, const tune::tuning_space& space,
                 const std::string& model, const std::vector<std::vector<std::uint64_t>>& sizes);

  /// The point of the space the header picks at `sizes` (one of those given). Throws
  /// usage_error naming the values where the space has no such point (the file changed since).
  std::size_t point_at(const std::vector<std::uint64_t>& sizes) const;
  const tune::tuning_space& space() const { return *space_; }
  const std::string& header() const { return header_; }
  const std::string& function() const { return function_; }  ///< e.g. "reduce_k_select"

 private:
  std::string header_, function_;
  const tune::tuning_space* space_;
  std::map<std::vector<std::uint64_t>, std::vector<std::pair<std::string, std::int64_t>>> picks_;
};

/// The check's table for the picks' space: per tune of that space (a size), the header's pick
/// and its median, the size's best and its median, and the pick's loss against that best; then
/// the median and worst loss. `picked` holds each tune's picked point (in the order of `tunes`).
void print_dispatch_check(std::ostream& os, const dispatch_picks& picks,
                          const std::vector<tune::tune_outcome>& tunes,
                          const std::vector<std::size_t>& picked);

}  // namespace kl::app
