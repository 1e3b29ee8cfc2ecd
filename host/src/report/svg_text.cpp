#include "report/svg_text.hpp"

#include "core/utf8.hpp"
#include "record/record_json.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace kl::svg {

using nlohmann::json;

std::string esc(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '&': out += "&amp;"; continue;
      case '<': out += "&lt;"; continue;
      case '>': out += "&gt;"; continue;
      case '"': out += "&quot;"; continue;
      case '\'': out += "&apos;"; continue;
      default: break;
    }
    if (c < 0x80) {
      out += c < 0x20 && c != '\t' && c != '\n' ? '?' : static_cast<char>(c);
      continue;
    }
    // A well-formed UTF-8 sequence is copied whole (core/utf8.hpp), but for U+FFFE and U+FFFF,
    // which are not XML characters; anything else is one '?' per byte.
    const std::size_t len = utf8_length_at(s, i);
    const bool ok =
        len > 0 && !(len == 3 && c == 0xEF && static_cast<unsigned char>(s[i + 1]) == 0xBF &&
                     static_cast<unsigned char>(s[i + 2]) >= 0xBE);
    if (!ok) {
      out += '?';
      continue;
    }
    out.append(s, i, len);
    i += len - 1;
  }
  return out;
}

std::string num(double v, const char* f) {
  char buf[400];  // enough for any double in %f
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string colour_for(unsigned block) {
  switch (block) {
    case 128: return "#E69F00";
    case 256: return "#56B4E9";
    case 512: return "#009E73";
    case 1024: return "#0072B2";
    case 0: return "#999999";
    default: return "#CC79A7";
  }
}

std::optional<double> number_at(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::vector<std::string> wrap(const std::string& text, int max_px, double font_px) {
  // The most bytes a line may hold: text_width() is linear in the length.
  const auto fits = [&](std::size_t bytes) {
    return text_width(std::string(bytes, 'x'), font_px) <= max_px;
  };
  std::size_t most = 1;
  while (fits(most + 1) && most < text.size()) ++most;
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t space = text.find(' ', i);
    const std::size_t end = space == std::string::npos ? text.size() : space;
    std::string word = text.substr(i, end - i);
    i = space == std::string::npos ? text.size() : space + 1;
    if (!line.empty() && line.size() + 1 + word.size() <= most) {
      line += ' ' + word;
      continue;
    }
    if (!line.empty()) lines.push_back(line);
    line.clear();
    // A word wider than a line is split, at a character boundary (not before a UTF-8
    // continuation byte).
    while (word.size() > most) {
      std::size_t cut = most;
      while (cut > 1 && (static_cast<unsigned char>(word[cut]) & 0xC0) == 0x80) --cut;
      lines.push_back(word.substr(0, cut));
      word.erase(0, cut);
    }
    line = word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string panel_title(const json& r) {
  return r.at("variant").at("family").get<std::string>() + " " +
         config_from_json(r.at("config")).describe();
}

int text_width(const std::string& text, double font_px) {
  return static_cast<int>(static_cast<double>(text.size()) * font_px * 0.62) + 8;
}

// A decade's label: 10^k as a plain number where that is short, with SI prefixes for bytes.
std::string decade_label(int k, bool bytes) {
  if (bytes) {
    static const char* const prefix[] = {"", "k", "M", "G", "T", "P"};
    if (k >= 0 && k < 18) {
      const int step = k / 3;
      return std::to_string(k % 3 == 0 ? 1 : k % 3 == 1 ? 10 : 100) + " " + prefix[step] + "B";
    }
    return "1e" + std::to_string(k) + " B";
  }
  if (k >= -3 && k <= 5) return num(std::pow(10.0, k), "%g");
  return "1e" + std::to_string(k);
}

std::string value_text(double v) { return num(v, v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f"); }

std::string intensity_text(double x) { return num(x, x >= 100 ? "%.0f" : "%.3g"); }

// Bytes in the axis's decimal units, and in binary ones beside them when those are round (the
// L2 size, a power-of-two problem): "67.1 MB (64 MiB)".
std::string bytes_text(double b) {
  const std::string decimal = b >= 1e9   ? num(b / 1e9, "%.3g") + " GB"
                              : b >= 1e6 ? num(b / 1e6, "%.3g") + " MB"
                              : b >= 1e3 ? num(b / 1e3, "%.3g") + " kB"
                                         : num(b, "%.0f") + " B";
  for (const auto& [unit, name] : {std::pair<double, const char*>{1073741824.0, " GiB"},
                                   {1048576.0, " MiB"},
                                   {1024.0, " KiB"}})
    if (b >= unit && std::fmod(b, unit) == 0)
      return decimal + " (" + num(b / unit, "%.0f") + name + ")";
  return decimal;
}

}  // namespace kl::svg
