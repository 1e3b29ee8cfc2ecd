#include "cli/command_line.hpp"
#include "cli/options.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kl::cli {

namespace {

// Relative paths in the config file are relative to the file's own folder.
void resolve_config_paths(po::parsed_options& parsed, const fs::path& config_dir) {
  for (auto& opt : parsed.options)
    if (opt.string_key == "kernels-dir" || opt.string_key == "plugin-dir" ||
        opt.string_key == "cuda-include" || opt.string_key == "cache-dir")
      for (auto& v : opt.value)
        if (fs::path(v).is_relative()) v = (config_dir / v).lexically_normal().string();
}

// Boost.Program_options makes what() by replacing each "%name%" placeholder of the message with
// its value until none is left, so a value that holds a placeholder ("seed = %value%", an unknown
// option "x%original_token%") could make what() loop for ever while the message grew (found by
// tests/fuzz). With every '%' of the values escaped first, each replacement takes '%'s out of the
// message and puts none in, so it ends; the escapes are undone in the finished message.
struct error_substitutions : po::error_with_option_name {  // reaches the protected map; never made
  static std::map<std::string, std::string>& of(po::error_with_option_name& e) {
    return e.*&error_substitutions::m_substitutions;
  }
};

std::string message(po::error& e) {
  auto* named = dynamic_cast<po::error_with_option_name*>(&e);
  if (!named) return e.what();
  // '%' -> "\1p" and '\1' -> "\1e": no '%' is left, and the change can be undone.
  for (auto& [key, value] : error_substitutions::of(*named)) {
    std::string escaped;
    for (char c : value) escaped += c == '%' ? "\1p" : c == '\1' ? "\1e" : std::string(1, c);
    value = escaped;
  }
  const std::string text = named->what();
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\1') {
      out += text[i];
      continue;
    }
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    out += next == 'e' ? '\1' : '%';  // a lone '\1' is a '%' cut short: the short option "-%"
    if (next == 'e' || next == 'p') ++i;
  }
  return out;
}

// Settings that the command line can name in more than one way, or that exclude each other: a
// value for any option of a group on the command line replaces the config file's values for the
// whole group (the file's `family = reduce` must not contradict `--problem matmul`, nor its
// `flush = read` a `--hot`).
const std::vector<std::vector<std::string>>& option_groups() {
  static const std::vector<std::vector<std::string>> groups = {{"family", "problem"},
                                                               {"hot", "flush"}};
  return groups;
}

// The config file's options that the command line overrides: those it names, every option of a
// group it names one of, and the file's family when the command line picks variants itself
// (`--variant all` means every family's, `--variant tiled` finds matmul's) or lists them (`--list`
// is every family's; `--list --family F` one's). The kernel folders are the exception: the
// command line's --kernels-dir adds to the file's (`--kernels-dir my_kernels --variant
// my_idea,reduce5` compares a new kernel with the shipped ones), unless it says
// --kernels-dir-only.
bool overridden(const std::string& key, const std::set<std::string>& given) {
  if (key == "kernels-dir") return given.count("kernels-dir-only") > 0;
  if (given.count(key)) return true;
  for (const auto& group : option_groups())
    if (std::find(group.begin(), group.end(), key) != group.end())
      for (const auto& other : group)
        if (given.count(other)) return true;
  return (key == "family" || key == "problem") &&
         (given.count("variant") > 0 || given.count("list") > 0 || given.count("list-names") > 0);
}

// The config file's text. It must be a regular file of at most 1 MiB: a folder used to be
// ignored without a word and `--config /dev/zero` read until memory ran out.
std::string read_config(const std::string& path) {
  std::error_code ec;
  if (fs::canonical(path, ec) == "/dev/null") return "";  // `--config /dev/null`: no settings
  file_read text = read_regular_file(path, 1u << 20);
  if (!text.ok()) throw kl::io_error("--config " + path + ": " + text.why);
  return std::move(text.bytes);
}

}  // namespace

void read_command_line(int argc, const char* const argv[], const po::options_description& desc,
                       read_options& r) {
  // The positional words: `kernlab compare a.json b.json`, `kernlab plot r.json -o f.svg`,
  // `kernlab cache info`. On the command line only, never in the config file.
  po::options_description with_positional = desc;
  with_positional.add_options()("command", po::value<std::vector<std::string>>(), "subcommand");
  po::positional_options_description positional;
  positional.add("command", -1);
  try {
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(with_positional).positional(positional).run();
    for (const auto& opt : parsed.options)
      if (opt.string_key != "command") r.given.insert(opt.string_key);
    po::store(parsed, r.vm);
  } catch (po::error& e) {
    throw kl::usage_error(message(e));
  }
}

// The config file's settings join in below the command line's; returns the file read, if any.
std::string read_config_file(const std::string& default_config, const po::options_description& desc,
                             read_options& r) {
  std::string config = default_config;
  const bool config_explicit = r.vm.count("config") > 0;
  if (config_explicit) config = r.vm["config"].as<std::string>();
  std::error_code ec;
  if (config.empty() || (!config_explicit && !fs::exists(config, ec))) return "";
  std::istringstream in(read_config(config));
  try {
    auto parsed = po::parse_config_file(in, desc);
    for (const auto& opt : parsed.options)
      if (opt.string_key == "kernels-dir-only")
        throw kl::usage_error(config +
                              ": kernels-dir-only is for the command line (it leaves this file's "
                              "kernels-dir out); write only the folders you want in kernels-dir");
    resolve_config_paths(parsed, fs::absolute(config).parent_path());
    for (const auto& opt : parsed.options) {
      std::string value;
      for (const auto& v : opt.value) value += (value.empty() ? "" : " ") + v;
      r.config_settings.emplace_back(opt.string_key, value);
    }
    auto& opts = parsed.options;
    opts.erase(
        std::remove_if(opts.begin(), opts.end(),
                       [&](const po::option& opt) { return overridden(opt.string_key, r.given); }),
        opts.end());
    po::store(parsed, r.vm);
  } catch (po::error& e) {
    throw kl::usage_error(config + ": " + message(e));
  }
  return config;
}

}  // namespace kl::cli
