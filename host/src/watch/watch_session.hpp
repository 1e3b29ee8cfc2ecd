// --watch: after the first sweep kernlab keeps running, and when a kernel file or one of the
// kernels' headers is saved, it recompiles, revalidates and retimes only the variants the save
// changed, printing their new rows beside the previous ones.
//
// "Changed" is decided by the compile cache's key, not by file names: a save that leaves a file
// as it was changes nothing, and a header's edit changes every file that includes it.
#pragma once

#include "cuda/resources.hpp"
#include "nvrtc/cache_key.hpp"
#include "registry/registry.hpp"
#include "report/table.hpp"
#include "runner/runner.hpp"
#include "watch/directory_watcher.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kl {

/// The kernel files as the user's options select them now. Every round makes a new one: a save
/// can add, remove or rename a variant, or break its header.
struct watch_workspace {
  /// The families `reg` was made with, when the loader makes them anew (a saved family.toml
  /// changes its family); null: the session's own.
  std::shared_ptr<const family_registry> families;
  std::unique_ptr<registry> reg;
  run_request request;  ///< its variants point into `reg`
};

/// Builds a workspace from the files on disk. Throws usage_error when the options select
/// nothing any more (the round shows the message and the watch goes on).
using workspace_loader = std::function<watch_workspace()>;

class watch_session {
 public:
  /// `first` is the sweep kernlab has just run (and printed) on `first_workspace`.
  watch_session(const family_registry& families, workspace_loader load,
                const watch_workspace& first_workspace, const sweep_result& first);
  ~watch_session();
  watch_session(const watch_session&) = delete;
  watch_session& operator=(const watch_session&) = delete;

  /// One round, after `saved` files changed: rebuilds the workspace, re-runs the selected
  /// source variants whose key changed (compile only, without a GPU or with --compile-only),
  /// and prints their rows beside the previous ones. Returns how many variants it re-ran.
  std::size_t round(const std::vector<std::string>& saved, std::ostream& out, std::ostream& err);

  /// A round for every save `watcher` reports, until the process is stopped (Ctrl-C).
  [[noreturn]] void run(directory_watcher& watcher, const std::vector<std::string>& dirs,
                        std::ostream& out, std::ostream& err);

 private:
  struct variant_state {
    std::string fingerprint;  ///< the compile key, or a hash of a file that does not compile
    std::optional<compile_snapshot> compile;
    std::vector<result_record> rows;
  };
  /// What a file's compile depends on; `reference`: e is a family's reference kernel
  /// (run_request::references).
  std::string fingerprint(const registry_entry& e, const run_request& request,
                          nvrtc::include_scanner& scanner, bool reference = false) const;
  /// "" for a built-in family; for a data family, a hash of its description and reference, so
  /// that a saved family.toml re-runs the family's variants.
  std::string family_fingerprint(const std::string& family) const;
  const family_registry& families() const { return round_families_ ? *round_families_ : families_; }
  /// Records `sweep` as the state to compare the next round with.
  void remember(const run_request& request, const sweep_result& sweep);

  const family_registry& families_;
  std::shared_ptr<const family_registry> round_families_;  // the last round's, when it made some
  workspace_loader load_;
  std::string arch_;
  bool run_rows_ = false;  ///< a GPU is here and the user did not ask for --compile-only
  std::map<std::string, variant_state> state_;  // by qualified name
  // Held between rounds so each round's runner finds the context made and pays no driver start.
  std::unique_ptr<cuda::primary_context> context_;
};

}  // namespace kl
