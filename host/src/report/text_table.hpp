// Tables built as cells, then written as aligned columns or as markdown; the number formats they
// share.
#pragma once

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace kl {

/// printf's format applied to one number: fmt("%.2f", x).
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Pads or cuts to a column.
inline std::string col(const std::string& s, std::size_t w, bool right = false) {
  if (s.size() >= w) return s.substr(0, w);
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

// A table built as cells, then written either as aligned columns or as markdown.
struct text_table {
  std::vector<std::string> header;
  std::vector<bool> right;  ///< right-aligned columns
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> trailers;  ///< a row's free text after its cells (skip reasons)

  /// Aligned columns under the header, a row's trailer after its cells.
  void write_aligned(std::ostream& os) const {
    std::vector<std::size_t> w(header.size());
    for (std::size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
    for (const auto& row : rows)
      for (std::size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], row[c].size());
    auto line = [&](const std::vector<std::string>& cells) {
      for (std::size_t c = 0; c < cells.size(); ++c)
        os << (c ? "  " : "") << col(cells[c], w[c], right[c]);
    };
    line(header);
    os << "\n";
    for (std::size_t r = 0; r < rows.size(); ++r) {
      line(rows[r]);
      if (!trailers[r].empty()) os << "  " << trailers[r];
      os << "\n";
    }
  }

  /// A markdown table: a row's trailer takes its last cell, each cell on one line without the
  /// column separator.
  void write_markdown(std::ostream& os) const {
    os << "|";
    for (const auto& h : header) os << " " << h << " |";
    os << "\n|";
    for (std::size_t c = 0; c < header.size(); ++c) os << (right[c] ? " ---: |" : " --- |");
    os << "\n";
    for (std::size_t r = 0; r < rows.size(); ++r) {
      os << "|";
      for (std::size_t c = 0; c < header.size(); ++c) {
        std::string cell = c < rows[r].size() ? rows[r][c] : "";
        if (c + 1 == header.size() && !trailers[r].empty()) cell = trailers[r];
        for (auto& ch : cell) {
          if (ch == '|') ch = '/';
          if (ch == '\n' || ch == '\r') ch = ' ';
        }
        os << " " << cell << " |";
      }
      os << "\n";
    }
  }

  /// Either, for a report that takes --markdown as a flag (report/printer.hpp lays out the
  /// sweep's and the profile's tables).
  void write(std::ostream& os, bool markdown) const {
    if (markdown)
      write_markdown(os);
    else
      write_aligned(os);
  }
};

}  // namespace kl
