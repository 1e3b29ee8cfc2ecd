// kernlab's option table (cli/options.cpp's parser reads it): every option with its help line,
// the commands (modes) there are, and which options apply to which command.
#pragma once

#include <boost/program_options.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kl::cli {

/// Every option kernlab has, with its help line, in --help's groups.
boost::program_options::options_description make_description();

// What a command does, and so which options apply to it.
enum class mode {
  sweep,
  list,
  plan,
  compile_only,
  resources,
  pipeline,
  compare,
  plot,
  cache,
  tune,
  scaffold  ///< kernlab new
};

/// "a sweep", "--list", "kernlab compare"...: a mode as messages name it.
const char* mode_name(mode m);

/// A command word (`kernlab WORD ...`): the mode it runs in, and the first lines of its --help.
struct command_word {
  const char* name;
  mode runs;
  const char* usage;
};

/// Every command word, in the order messages, --help and shell completion list them.
const std::vector<command_word>& command_words();

/// The command word `name`; null when there is none.
const command_word* find_command(const std::string& name);

/// The words as messages list them: "kernlab tune, kernlab check-dispatch, ..., kernlab new".
std::string command_list();

/// Whether option `key` (its long name) applies to `m`: listed for it, or listed for no mode.
bool option_applies(const std::string& key, mode m);

/// Throws usage_error for an option given on the command line (`given`) that does not apply to
/// `md`: one table says which options apply where, so that no option is silently ignored.
void check_options_apply(mode md, const std::set<std::string>& given);

}  // namespace kl::cli
