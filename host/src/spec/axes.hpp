// The values of a family's axes, as the command line gives them and a configuration holds them:
// a whole number for a size axis (N; M, N, K), a real number for a real-valued one (SNR_DB).
// The kinds of value are this file's: a new kind is an alternative of axis_number, with its text
// and conversion in axes.cpp and its `type` word in family_spec.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kl {

/// An axis' value: a whole number (a size axis) or a real one (`type = "real"` in family.toml).
using axis_number = std::variant<std::uint64_t, double>;

/// How a key writes a value: "16777216"; a real one as %g ("20", "0.001").
std::string axis_text(const axis_number& v);

/// `v` as a value of the kind of `kind` (an axis' default): a whole number for a real axis is
/// that real number; nothing when it is not one (2.5, or -1, for a size axis).
std::optional<axis_number> as_kind_of(const axis_number& v, const axis_number& kind);

/// Whether `a` < `b`, both of the kind of `a` (`b` converted as as_kind_of does); false when `b`
/// cannot be one.
bool axis_less(const axis_number& a, const axis_number& b);

/// Values the command line gives to axes (--size, --shape, --axis NAME=...), before a family reads
/// them: each is a factor of the product of a family's configurations (configs_for), a later one
/// setting again an axis an earlier one set.
struct axis_choice {
  std::string option;  ///< how it was given, for errors: "--size", "--shape" or "--axis"
  std::string name;    ///< the axis of --axis; "" for a family's whole axes, in order
  /// The points: for a named axis one value each; for the whole axes one value each (--shape
  /// MxNxK), or a single value that fills every one of them (--size W: W x W x W).
  std::vector<std::vector<axis_number>> points;
  /// Only a family of one whole axis takes it: --size in a sweep that also has such families (the
  /// families of several axes take their default shape).
  bool one_axis_families_only = false;

  /// --size W1,W2: the whole axes, each point W in every one of them.
  static axis_choice sizes(const std::vector<std::uint64_t>& values);
  /// --shape MxNxK,...: the whole axes in order.
  static axis_choice shapes(const std::vector<std::vector<std::uint64_t>>& values);
  /// --axis NAME=v1,v2.
  static axis_choice named(const std::string& name, const std::vector<axis_number>& values);
};

}  // namespace kl
