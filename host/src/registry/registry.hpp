// The registry owns every variant kernlab knows of, from kernel source files and from plugins.
// It is filled by explicit calls (add_source_dir, add_plugin_dir), never by static initialisers.
#pragma once

#include "families/family.hpp"
#include "plugin_host/plugin_loader.hpp"
#include "spec/variant.hpp"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl {

struct registry_entry {
  variant_descriptor descriptor;
  std::string source;  ///< a source variant's text
  /// Why this variant cannot be used (a bad header, "file:line: ..."); empty when it can.
  std::string error;
  /// A source variant's header: the line of each key, for errors found after it was read.
  std::map<std::string, int> key_lines;
};

/// A selection that names nothing: the message says what was asked and what is near it.
class selection_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Two kernel folders give a variant of one name: which of them runs cannot be guessed, so
/// neither is picked. The message names both files.
class duplicate_variant_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class registry {
 public:
  /// Also makes the entry of each data family's reference kernel (reference()).
  explicit registry(const family_registry& families);

  /// Discovers <dir>/<family>/*.cu. Files with a bad header become entries with an error. A
  /// variant whose name an earlier folder's file already gives throws duplicate_variant_error.
  void add_source_dir(const std::string& dir);
  /// How plugin files are probed (plugin_loader.hpp). By default they are read in this process,
  /// which only trusted callers (tests of shipped plugins) may rely on: kernlab sets a probe
  /// process.
  void set_probe_options(probe_options o) { probe_ = std::move(o); }
  /// Registers every *.so in `dir` from its probed table. A bad plugin becomes one warning naming
  /// the file and the reason; nothing else is affected. A missing folder is a warning too.
  void add_plugin_dir(const std::string& dir);
  /// Registers one plugin file (same rules as add_plugin_dir).
  void add_plugin_file(const std::string& path);

  const std::vector<registry_entry>& entries() const { return entries_; }
  /// Problems found while registering that belong to no variant (bad plugins, odd folders).
  const std::vector<std::string>& warnings() const { return warnings_; }
  const family_registry& families() const { return families_; }

  /// The entries that match any pattern, in registry order. A pattern with a '.' matches the
  /// qualified name ("reduce.reduce5", "reduce.*"), one without matches the short name
  /// ("reduce5", "reduce*"); "all" matches everything (source variants in natural name order,
  /// then plugins). A pattern that matches nothing throws selection_error with suggestions.
  std::vector<const registry_entry*> select(const std::vector<std::string>& patterns,
                                            const std::string& family_filter = "") const;
  const registry_entry* find(const std::string& qualified_name) const;
  /// A data family's reference kernel as a source entry of its own (`<family>.reference`, its
  /// file and `entry`), which --compile-only and --resources compile beside the variants; it is
  /// never listed or selected. Null for a family without one (a plugin's reference on the host).
  const registry_entry* reference(const std::string& family) const;

 private:
  void add(registry_entry e);
  /// A data family's `[baseline] copy`, as the entry <family>.d2d_copy.
  void add_builtin_baseline(const family& fam);

  const family_registry& families_;
  probe_options probe_;
  std::vector<registry_entry> entries_;
  std::vector<registry_entry> references_;  // made once, by the constructor
  std::vector<std::string> warnings_;
};

/// "reduce2" < "reduce10": digit runs compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace kl
