#include "plugins/plugin_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace kl {

std::shared_ptr<loaded_plugin> load_plugin(const std::string& path) {
  auto p = std::make_shared<loaded_plugin>();
  p->path = path;
  boost::dll::fs::error_code ec;
  // RTLD_LOCAL keeps each plugin's symbols (its own CUDA runtime copy, say) to itself.
  p->library.load(path, ec, boost::dll::load_mode::rtld_local | boost::dll::load_mode::rtld_now);
  if (ec) throw std::runtime_error(path + ": cannot be loaded as a shared object (" + ec.message() + ")");
  if (!p->library.has(KERNLAB_PLUGIN_ENTRY_NAME))
    throw std::runtime_error(path + ": no '" KERNLAB_PLUGIN_ENTRY_NAME
                                    "' entry point; is it a kernlab plugin?");
  auto entry = p->library.get<const kl_plugin*()>(KERNLAB_PLUGIN_ENTRY_NAME);
  const kl_plugin* table = entry();
  if (table == nullptr) throw std::runtime_error(path + ": its entry point returned no table");
  if (table->abi_version != KERNLAB_PLUGIN_ABI_VERSION)
    throw std::runtime_error(path + ": built for plugin ABI version " +
                             std::to_string(table->abi_version) + ", this kernlab needs version " +
                             std::to_string(KERNLAB_PLUGIN_ABI_VERSION) + "; rebuild the plugin");
  if (table->num_variants > 0 && table->variants == nullptr)
    throw std::runtime_error(path + ": its table lists variants but gives none");
  p->table = table;
  return p;
}

std::vector<std::string> list_plugin_files(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".so") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace kl
