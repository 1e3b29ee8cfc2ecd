// Reading a family.toml (spec/family_spec.hpp), shared by the files that read its sections:
// typed access to its TOML nodes, every error naming the file and line (reader), and the
// reader of its sections in order (spec_reader), whose methods live with what they read:
//   spec/family_problem.cpp    what the family is, its axes, requirements and ops
//   spec/family_buffers.cpp    [[buffers]] and their generators
//   spec/family_kernel.cpp     [kernel] (the signature and launch) and [pipeline]
//   spec/family_reference.cpp  [reference], [compare] and [baseline]
#pragma once

#include "spec/dtypes.hpp"
#include "spec/expression.hpp"
#include "spec/family_spec.hpp"
#include "spec/metadata.hpp"
#include "spec/names.hpp"

// toml++ (libtomlplusplus-dev) is used header-only, by the files that read a family.toml alone:
// nothing to link, nothing to carry to a GPU machine.
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl::family_toml {

using kl::is_identifier;

inline bool is_dtype(const std::string& t) { return data_dtype_size(t) != 0; }

// Reads one family.toml, keeping its path for every error.
class reader {
 public:
  reader(const std::string& path, const std::string& dir) : path_(path), dir_(dir) {}

  [[noreturn]] void fail(int line, const std::string& why) const {
    throw metadata_error(path_, line, why);
  }
  static int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

  // Every key of `t` must be one of `allowed`.
  void only_keys(const toml::table& t, const std::vector<std::string>& allowed,
                 const std::string& where) const {
    for (auto&& [key, node] : t) {
      const std::string k(key.str());
      if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(line_of(node),
           "unknown key '" + k + "' in " + where + " (expected one of: " + list + ")");
    }
  }

  const toml::table& table(const toml::node& n, const std::string& what) const {
    if (!n.is_table()) fail(line_of(n), what + " must be a table");
    return *n.as_table();
  }
  std::string string(const toml::node& n, const std::string& what) const {
    if (!n.is_string()) fail(line_of(n), what + " must be a string");
    return n.as_string()->get();
  }
  // An expression: a string, or an integer written as a number.
  std::string expression(const toml::node& n, const std::string& what) const {
    if (n.is_integer()) return std::to_string(n.as_integer()->get());
    if (!n.is_string())
      fail(line_of(n), what + " must be an expression (a string such as \"ROWS * COLS\")");
    return n.as_string()->get();
  }
  std::int64_t integer(const toml::node& n, const std::string& what) const {
    if (!n.is_integer()) fail(line_of(n), what + " must be an integer");
    return n.as_integer()->get();
  }
  double number(const toml::node& n, const std::string& what) const {
    if (n.is_integer()) return static_cast<double>(n.as_integer()->get());
    if (!n.is_floating_point()) fail(line_of(n), what + " must be a number");
    return n.as_floating_point()->get();
  }
  std::vector<std::string> strings(const toml::node& n, const std::string& what) const {
    if (!n.is_array()) fail(line_of(n), what + " must be an array of strings");
    std::vector<std::string> out;
    for (const auto& e : *n.as_array()) out.push_back(string(e, what + "'s elements"));
    return out;
  }
  std::vector<std::string> expressions(const toml::node& n, const std::string& what) const {
    if (!n.is_array()) fail(line_of(n), what + " must be an array of expressions");
    std::vector<std::string> out;
    for (const auto& e : *n.as_array()) out.push_back(expression(e, what + "'s elements"));
    if (out.empty() || out.size() > 3) fail(line_of(n), what + " needs 1 to 3 dimensions");
    return out;
  }
  const std::string& dir() const { return dir_; }  ///< the family's folder

 private:
  std::string path_, dir_;

 public:
  bool has_plugin = false;  // the description names a family plugin
};

// Reads a family.toml's sections into `s`, in the order they depend on each other: what the
// family is (dtypes, roofline, plugin), its axes, the variables its expressions see with its
// requirements and ops, its buffers, its kernel's signature and launch, its reference, its
// comparison rule, its baseline and pipeline (parse_family_spec calls them in that order). Every
// error names the file and line (reader::fail).
class spec_reader {
 public:
  spec_reader(reader& r, const toml::table& root, family_spec& s, const std::string& dir)
      : r(r), root(root), s(s), dir(dir) {}

  void what_it_is(const std::vector<std::string>& plugin_dirs);
  void axes();
  void variables_requirements_and_ops();
  void buffers();
  void kernel();
  void reference();
  void comparison();
  void baseline();
  void pipeline();

 private:
  void check_plan_passes();               // kernel(): what plan passes asks of the family
  void expected(const toml::node& n);     // reference(): [reference] expected
  void read_args(const toml::table& kt);  // kernel(): [kernel] args

  // An expression must evaluate with `v`; else the error names `line`.
  void check_expr(const std::string& e, int line, const std::string& what,
                  const std::map<std::string, std::int64_t>& v) const {
    try {
      evaluate(e, v);
    } catch (const expression_error& ex) {
      r.fail(line, what + " '" + e + "': " + ex.what());
    }
  }
  // The line of a top-level key, `fallback` when it is absent.
  int line_or(const char* key, int fallback) const {
    const toml::node* n = root.get(key);
    return n ? reader::line_of(*n) : fallback;
  }

  reader& r;
  const toml::table& root;
  family_spec& s;
  const std::string& dir;  ///< the family's folder
  /// The variables every expression of the file sees, at the axes' defaults
  /// (variables_requirements_and_ops() makes them), and with the launch's own (kernel()).
  std::map<std::string, std::int64_t> vars, grid_vars;
};

}  // namespace kl::family_toml
