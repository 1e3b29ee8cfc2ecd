// The keys of a kernel file's header (docs/kernel_contract.md), as a table: each key's name, the
// function that reads its value into the header, and how it may be given. The parser
// (spec/metadata.cpp) walks the header's lines and dispatches each key through this table; the
// checks that span keys stay there.
#pragma once

#include "spec/metadata.hpp"

#include <string>
#include <vector>

namespace kl::header_keys {

/// One `key: value` line of a header, for a key's reader: its value trimmed, and where it is.
struct key_line {
  const std::string& path;
  int line;
  const std::string& key;
  const std::string& value;

  /// Throws metadata_error naming this line.
  [[noreturn]] void fail(const std::string& why) const { throw metadata_error(path, line, why); }
};

/// Reads one key's value into `header`; throws metadata_error (key_line::fail).
using key_reader = void (*)(const key_line& k, parsed_header& header);

/// How a key may be given (key_description::flags).
enum key_flag : unsigned {
  required = 1,      ///< the header must give it (family, entry, blocks)
  repeatable = 2,    ///< may be given on several lines, each adding its items (points)
  may_be_empty = 4,  ///< "key:" alone is a value (summary)
};

/// One row of the key table, in the spirit of the CUTLASS profiler's ArgumentDescription list.
struct key_description {
  const char* name;
  key_reader read;
  unsigned flags;  ///< key_flag bits

  bool is(key_flag f) const { return (flags & f) != 0; }
};

/// Every key, in the order "known keys" lists them (and "did you mean" weighs them).
const std::vector<key_description>& keys();

/// The key named `name`, or nullptr.
const key_description* find_key(const std::string& name);

/// [A-Za-z0-9_][A-Za-z0-9_-]*: a file's stem or a named point may be a variant name.
bool is_variant_name(const std::string& s);

}  // namespace kl::header_keys
