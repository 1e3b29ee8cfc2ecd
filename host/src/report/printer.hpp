// The output formats of kernlab's terminal reports, after nvbench's printer_base: a report is
// headings, paragraphs of lines and tables, and each format lays them out its own way. What a
// report holds is computed once, the same in every format; only the layout is the printer's.
#pragma once

#include "report/text_table.hpp"

#include <ostream>
#include <string>

namespace kl {

class printer {
 public:
  virtual ~printer() = default;
  /// A section's title, after a blank line: "== title" as text, "### title" in markdown.
  virtual void heading(std::ostream& os, const std::string& title) const = 0;
  /// Ends a paragraph of free lines: markdown needs a blank line before what follows.
  virtual void end_paragraph(std::ostream& os) const = 0;
  /// A table and its rows' trailers: aligned columns, or a markdown table.
  virtual void table(std::ostream& os, const text_table& t) const = 0;
};

/// The printer of --markdown (tables to paste into docs), or of the terminal's aligned columns.
const printer& printer_for(bool markdown);

}  // namespace kl
