#include "families/family.hpp"

#include "families/qam256.hpp"
#include "families/reduce.hpp"
#include "registry/expression.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace kl {

std::string problem_config::describe() const {
  return dtype + " " + op + " n=" + std::to_string(size) +
         (input_mode == "exact" ? "" : " (" + input_mode + " inputs)") + snr_text();
}

// qam256 is the only family with an SNR; its op is "demap". The text is part of the key under
// which a worker keeps its last problem, so two SNRs never share inputs.
std::string problem_config::snr_text() const {
  if (op != "demap") return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " snr=%g dB", snr_db);
  return buf;
}

nlohmann::json family::run_job(const std::string& name, const nlohmann::json&,
                               const cuda::device_info&) const {
  throw std::invalid_argument("family " + this->name() + " has no job '" + name + "'");
}

unsigned family::dynamic_shared_bytes(const variant_descriptor& v, unsigned block,
                                      const problem_config& c) const {
  return static_cast<unsigned>(evaluate(
      v.shared_bytes, {{"BLOCK", block}, {"TSIZE", static_cast<std::int64_t>(dtype_size(c.dtype))}}));
}

void family_registry::add(std::unique_ptr<family> f) {
  const std::string n = f->name();
  families_[n] = std::move(f);
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

void register_builtin_families(family_registry& registry) {
  registry.add(std::make_unique<reduce_family>());
  registry.add(std::make_unique<qam256_family>());
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
  if (dtype == "int32" || dtype == "float32") return 4;
  throw std::invalid_argument("unknown dtype '" + dtype + "'");
}

}  // namespace kl
