#include "families/family.hpp"

#include "spec/expression.hpp"
#include "spec/family_spec.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace kl {

std::map<std::string, std::int64_t> launch_variables(const variant_descriptor& v, unsigned block,
                                                     const problem_config& c) {
  std::map<std::string, std::int64_t> vars = {
      {"BLOCK", block}, {"TSIZE", static_cast<std::int64_t>(dtype_size(c.dtype))}};
  // The params are compile-time constants: they see BLOCK, TSIZE and the params before them,
  // never the shape.
  for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
  static const char* const dim_names[] = {"M", "N", "K"};
  for (std::size_t i = 0; i < c.shape.size() && i < 3; ++i)
    vars[dim_names[i]] = static_cast<std::int64_t>(c.shape[i]);
  return vars;
}

launch_dims evaluate_dims(const std::vector<std::string>& block_dims,
                          const std::vector<std::string>& grid_dims, unsigned block,
                          const std::map<std::string, std::int64_t>& vars,
                          const std::string& what) {
  launch_dims d;
  auto fill = [&](const std::vector<std::string>& exprs, unsigned* out, const char* key,
                  const std::int64_t limits[3]) {
    for (std::size_t i = 0; i < exprs.size() && i < 3; ++i) {
      const std::int64_t x = evaluate(exprs[i], vars);
      if (x < 1 || x > limits[i])
        throw std::invalid_argument(std::string(key) + " '" + exprs[i] + "' is " +
                                    std::to_string(x) + " for " + what + " at block " +
                                    std::to_string(block) + " (allowed: 1.." +
                                    std::to_string(limits[i]) + ")");
      out[i] = static_cast<unsigned>(x);
    }
  };
  static const std::int64_t grid_limits[3] = {2147483647, 65535, 65535};
  static const std::int64_t block_limits[3] = {1024, 1024, 64};
  if (block_dims.empty())
    d.block[0] = block;
  else
    fill(block_dims, d.block, "block_dims", block_limits);
  fill(grid_dims, d.grid, "grid_dims", grid_limits);
  const std::uint64_t threads = std::uint64_t{d.block[0]} * d.block[1] * d.block[2];
  if (threads != block)
    throw std::invalid_argument("block_dims give " + std::to_string(d.block[0]) + "x" +
                                std::to_string(d.block[1]) + "x" + std::to_string(d.block[2]) +
                                " = " + std::to_string(threads) + " threads, not the block size " +
                                std::to_string(block));
  return d;
}

unsigned family::dynamic_shared_bytes(const variant_descriptor& v, unsigned block,
                                      const problem_config& c) const {
  return static_cast<unsigned>(evaluate(v.shared_bytes, launch_variables(v, block, c)));
}

void family_registry::add(std::unique_ptr<family> f) {
  const std::string n = f->name();
  families_[n] = std::move(f);
}
void family_registry::add_broken(const std::string& name, const std::string& error) {
  broken_[name] = error;
}
std::string family_registry::broken(const std::string& name) const {
  auto it = broken_.find(name);
  return it == broken_.end() ? "" : it->second;
}
const family* family_registry::find(const std::string& name) const {
  auto it = families_.find(name);
  return it == families_.end() ? nullptr : it->second.get();
}
std::vector<std::string> family_registry::names() const {
  std::vector<std::string> out;
  for (const auto& kv : families_) out.push_back(kv.first);
  return out;
}

std::string substitute_words(const std::string& text,
                             const std::map<std::string, std::string>& words) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (is_word(text[i])) {
      std::size_t j = i;
      while (j < text.size() && is_word(text[j])) ++j;
      const std::string word = text.substr(i, j - i);
      auto it = words.find(word);
      out += it == words.end() ? word : it->second;
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::size_t dtype_size(const std::string& dtype) {
  if (const std::size_t size = data_dtype_size(dtype)) return size;
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

}  // namespace kl
