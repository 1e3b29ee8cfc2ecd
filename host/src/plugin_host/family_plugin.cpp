#include "plugin_host/family_plugin.hpp"

#include "plugin_host/plugin_loader.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>

namespace kl {
namespace {

// A name of the table: present and of a sane length (the table is foreign data).
std::string table_name(const char* s, const std::string& path, const std::string& what) {
  if (s == nullptr) throw std::runtime_error(path + ": " + what + " has no name");
  const std::size_t n = strnlen(s, 257);
  if (n == 0 || n > 256)
    throw std::runtime_error(path + ": " + what + "'s name is empty or longer than 256 bytes");
  return std::string(s, n);
}

// The function of that name in one of the table's lists (generators or references); throws
// naming the file and the names the list has.
template <typename Entry, typename Fn>
Fn find_named(const Entry* entries, std::uint32_t count, Fn Entry::*fn, const std::string& name,
              const std::string& path, const char* what) {
  std::string names;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (name == entries[i].name) return entries[i].*fn;
    names += (names.empty() ? "" : ", ") + std::string(entries[i].name);
  }
  throw std::runtime_error(path + " has no " + what + " '" + name + "' (it has " +
                           (names.empty() ? "none" : names) + ")");
}

}  // namespace

family_plugin::family_plugin(const std::string& path) : path_(path) {
  if (const std::string why = open_shared_library(library_, path); !why.empty())
    throw std::runtime_error(path + ": " + why);
  if (!library_.has(KERNLAB_FAMILY_ENTRY_NAME))
    throw std::runtime_error(path + ": no '" KERNLAB_FAMILY_ENTRY_NAME
                                    "' entry point; is it a kernlab family plugin "
                                    "(include/kernlab/family_api.h)?");
  auto entry = library_.get<const kl_family_plugin*()>(KERNLAB_FAMILY_ENTRY_NAME);
  const kl_family_plugin* t = entry();
  if (t == nullptr) throw std::runtime_error(path + ": its entry point returned no table");
  if (t->abi_version != KERNLAB_FAMILY_ABI_VERSION)
    throw std::runtime_error(path + ": family plugin ABI version " +
                             std::to_string(t->abi_version) + ", but this kernlab loads version " +
                             std::to_string(KERNLAB_FAMILY_ABI_VERSION) + "; rebuild the plugin");
  if ((t->num_generators > 0 && t->generators == nullptr) ||
      (t->num_references > 0 && t->references == nullptr))
    throw std::runtime_error(path + ": its table counts functions it does not give");
  for (std::uint32_t i = 0; i < t->num_generators; ++i) {
    const std::string name = table_name(t->generators[i].name, path, "a generator");
    if (t->generators[i].generate == nullptr)
      throw std::runtime_error(path + ": generator '" + name + "' has no function");
  }
  for (std::uint32_t i = 0; i < t->num_references; ++i) {
    const std::string name = table_name(t->references[i].name, path, "a reference");
    if (t->references[i].compute == nullptr)
      throw std::runtime_error(path + ": reference '" + name + "' has no function");
  }
  table_ = t;
}

kl_family_generate_fn family_plugin::generator(const std::string& name) const {
  return find_named(table_->generators, table_->num_generators, &kl_family_generator::generate,
                    name, path_, "generator");
}

kl_family_reference_fn family_plugin::reference(const std::string& name) const {
  return find_named(table_->references, table_->num_references, &kl_family_reference::compute, name,
                    path_, "reference");
}

std::shared_ptr<const family_plugin> open_family_plugin(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const family_plugin>> open;
  std::lock_guard<std::mutex> lock(mutex);
  auto& p = open[path];
  if (!p) p = std::make_shared<const family_plugin>(path);
  return p;
}

}  // namespace kl
