#include "report/printer.hpp"

namespace kl {
namespace {

// Aligned columns for the terminal, a row's trailer after its cells.
class text_printer final : public printer {
 public:
  void heading(std::ostream& os, const std::string& title) const override {
    os << "\n== " << title << "\n";
  }
  void end_paragraph(std::ostream&) const override {}
  void table(std::ostream& os, const text_table& t) const override { t.write_aligned(os); }
};

// Markdown: blank lines around the tables, a row's trailer in its last cell.
class markdown_printer final : public printer {
 public:
  void heading(std::ostream& os, const std::string& title) const override {
    os << "\n### " << title << "\n\n";
  }
  void end_paragraph(std::ostream& os) const override { os << "\n"; }
  void table(std::ostream& os, const text_table& t) const override {
    t.write_markdown(os);
    os << "\n";
  }
};

}  // namespace

const printer& printer_for(bool markdown) {
  static const text_printer text;
  static const markdown_printer md;
  if (markdown) return md;
  return text;
}

}  // namespace kl
