// Loading precompiled variants from plugin shared objects (Boost.DLL).
#pragma once

#include <kernlab/plugin_api.h>

#include <boost/dll/shared_library.hpp>

#include <memory>
#include <string>
#include <vector>

namespace kl {

/// An open plugin. The library stays loaded for as long as any of its variants is in use.
struct loaded_plugin {
  std::string path;
  boost::dll::shared_library library;
  const kl_plugin* table = nullptr;
};

/// Opens one plugin file and checks its table (entry point, ABI version, descriptors' shape).
/// Throws std::runtime_error with "<path>: <reason>" for anything that makes it unusable.
std::shared_ptr<loaded_plugin> load_plugin(const std::string& path);

/// The plugin files (*.so) in a directory, sorted; a missing directory gives none.
std::vector<std::string> list_plugin_files(const std::string& dir);

}  // namespace kl
