// A family plugin (include/kernlab/family_api.h): the shared object a family.toml names for the
// generators and the reference its data cannot say. Loaded only where problems are made (the
// worker, or kernlab with --in-process), once per process and file.
#pragma once

#include <kernlab/family_api.h>

#include <boost/dll/shared_library.hpp>

#include <memory>
#include <string>

namespace kl {

class family_plugin {
 public:
  /// Opens the file and checks its table: the entry point, the ABI version, every name and
  /// function present. Throws std::runtime_error "<path>: <reason>".
  explicit family_plugin(const std::string& path);
  family_plugin(const family_plugin&) = delete;
  family_plugin& operator=(const family_plugin&) = delete;

  const std::string& path() const { return path_; }
  /// The generator or reference of that name; throws std::runtime_error naming the file and
  /// the names it has.
  kl_family_generate_fn generator(const std::string& name) const;
  kl_family_reference_fn reference(const std::string& name) const;

 private:
  std::string path_;
  boost::dll::shared_library library_;
  const kl_family_plugin* table_ = nullptr;
};

/// The plugin at `path`, loaded at its first use in this process and kept loaded until the
/// process ends (its functions may be called from several threads at once).
std::shared_ptr<const family_plugin> open_family_plugin(const std::string& path);

}  // namespace kl
