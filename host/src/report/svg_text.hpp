// What the SVG pictures share (report/plot_*.cpp; internal to report/): text that any name read
// from a file can be put in, numbers, the block sizes' colours, and the width of a line of text,
// estimated, since an SVG is laid out before any font is known.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kl::svg {

/// `s` as SVG (XML 1.0) text: markup characters escaped, and what XML cannot hold (control
/// characters, bytes that are not UTF-8) replaced by '?'.
std::string esc(const std::string& s);

/// `v` through printf's `f`.
std::string num(double v, const char* f = "%.1f");

/// A block size's colour, the same in every picture and panel (colour-blind-safe Okabe-Ito
/// palette): 128, 256, 512, 1024, 0 (no block size), anything else.
std::string colour_for(unsigned block);

/// A finite, non-negative number at `key` of `j`, if there is one.
std::optional<double> number_at(const nlohmann::json& j, const char* key);

/// The width of `text` in pixels at `font_px`, generously (sans-serif averages about 0.6 em; each
/// byte counts as a character, which errs wide for text beyond ASCII).
int text_width(const std::string& text, double font_px);

/// `text` broken into lines no wider than `max_px` at `font_px`: at spaces, and inside a word
/// only when the word alone is wider (never inside a UTF-8 character). Nothing is dropped but the
/// spaces where lines break; an empty text is one empty line.
std::vector<std::string> wrap(const std::string& text, int max_px, double font_px);

/// A log axis' label of the decade 10^k: a plain number where that is short ("0.01", "1000"),
/// else "1e7"; with `bytes`, SI prefixes ("10 MB").
std::string decade_label(int k, bool bytes);

/// A throughput with the digits that matter: "1.23", "45.6", "3075".
std::string value_text(double v);

/// An arithmetic intensity in FLOP/byte: "0.25", "170".
std::string intensity_text(double x);

/// Bytes in decimal units, with binary ones beside them when those are round: "67.1 MB (64 MiB)".
std::string bytes_text(double b);

/// The panel a record belongs to: its family and configuration ("matmul float32
/// 1024x1024x1024", "reduce int32 sum n=16777216", qam256's SNR, the input mode when it is not
/// "exact").
std::string panel_title(const nlohmann::json& record);

}  // namespace kl::svg
