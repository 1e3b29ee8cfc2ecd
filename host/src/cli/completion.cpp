// `kernlab --completion bash|zsh`: shell completion made from the option table, so that a new
// option completes without a second list to keep.
#include "cli/option_table.hpp"
#include "cli/options.hpp"

#include "spec/dtypes.hpp"

#include <boost/program_options.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace po = boost::program_options;

namespace kl {
namespace {

// Each option as the shell sees it: its long name, whether a value follows it, its help line.
struct option_word {
  std::string name;  // "--variant"
  bool takes_value = false;
  std::string help;
};

std::vector<option_word> option_words() {
  std::vector<option_word> out;
  const po::options_description all = cli::make_description();
  for (const auto& o : all.options())
    out.push_back({"--" + o->long_name(), o->semantic()->max_tokens() > 0, o->description()});
  return out;
}

// The options whose value is a folder: they complete with folders. --variant completes with the
// names of `kernlab --list-names`, --dtype with the dtypes, the other options with file names.
const std::vector<std::string>& folder_options() {
  static const std::vector<std::string> all = {"--kernels-dir", "--plugin-dir", "--cache-dir",
                                               "--cuda-include"};
  return all;
}

std::string dtype_words() {
  std::string out;
  for (const auto& d : data_dtypes()) out += (out.empty() ? "" : " ") + d;
  return out;
}

// The command words (cli::command_words), as a shell list.
std::string command_names() {
  std::string out;
  for (const auto& w : cli::command_words()) out += (out.empty() ? "" : " ") + std::string(w.name);
  return out;
}

std::string bash_script() {
  std::string options, folders;
  for (const auto& o : option_words()) options += (options.empty() ? "" : " ") + o.name;
  for (const auto& f : folder_options()) folders += (folders.empty() ? "" : "|") + f;
  std::ostringstream os;
  os << "# kernlab's completion for bash: source <(kernlab --completion bash), or save it as\n"
        "# ~/.local/share/bash-completion/completions/kernlab\n"
        "_kernlab() {\n"
        "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
        "  case \"$prev\" in\n"
        "    --variant|-v)\n"
        "      COMPREPLY=($(compgen -W \"$(\"${COMP_WORDS[0]}\" --list-names 2>/dev/null)\" -- "
        "\"$cur\"))\n"
        "      return ;;\n"
        "    "
     << folders
     << ")\n"
        "      COMPREPLY=($(compgen -d -- \"$cur\"))\n"
        "      return ;;\n"
        "    --dtype)\n"
        "      COMPREPLY=($(compgen -W \""
     << dtype_words()
     << "\" -- \"$cur\"))\n"
        "      return ;;\n"
        "    --completion)\n"
        "      COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\"))\n"
        "      return ;;\n"
        "  esac\n"
        "  if [[ \"$cur\" == -* ]]; then\n"
        "    COMPREPLY=($(compgen -W \""
     << options
     << "\" -- \"$cur\"))\n"
        "  elif [[ $COMP_CWORD -eq 1 ]]; then\n"
        "    COMPREPLY=($(compgen -W \""
     << command_names()
     << "\" -- \"$cur\"))\n"
        "  elif [[ $COMP_CWORD -eq 2 && \"${COMP_WORDS[1]}\" == cache ]]; then\n"
        "    COMPREPLY=($(compgen -W \"info clear prune\" -- \"$cur\"))\n"
        "  else\n"
        "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "  fi\n"
        "}\n"
        "complete -o filenames -F _kernlab kernlab\n";
  return os.str();
}

// An option's help as a zsh _arguments description: its first clause, without the characters
// that end one ("]", ":") or the single-quoted word.
std::string zsh_help(const std::string& help) {
  std::string out;
  for (char c : help.substr(0, help.find_first_of(";(:"))) {
    if (c == '[' || c == ']' || c == '\'' || c == '\\' || c == '`' || c == '$') continue;
    out += c;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ',')) out.pop_back();
  return out;
}

// What completes the value of option `name` in zsh.
std::string zsh_action(const std::string& name) {
  if (name == "--variant") return "_kernlab_variants";
  for (const auto& f : folder_options())
    if (name == f) return "_files -/";
  if (name == "--dtype") return "(" + dtype_words() + ")";
  if (name == "--completion") return "(bash zsh)";
  return "_files";
}

std::string zsh_script() {
  std::ostringstream os;
  os << "#compdef kernlab\n"
        "# kernlab's completion for zsh: save it as _kernlab in a folder of $fpath, or source it\n"
        "# after compinit.\n"
        "_kernlab_variants() {\n"
        "  local -a names\n"
        "  names=(${(f)\"$(${words[1]} --list-names 2>/dev/null)\"})\n"
        "  compadd -a names\n"
        "}\n"
        "_kernlab() {\n"
        "  local -a args\n"
        "  args=(\n";
  for (const auto& o : option_words()) {
    os << "    '" << o.name << (o.takes_value ? "=" : "") << "[" << zsh_help(o.help) << "]";
    if (o.takes_value) os << ":value:" << zsh_action(o.name);
    os << "'\n";
  }
  os << "    '1: :(" << command_names()
     << ")'\n"
        "    '*: :->rest'\n"
        "  )\n"
        "  _arguments -s $args && return\n"
        "  if [[ $words[2] == cache && $CURRENT -eq 3 ]]; then\n"
        "    compadd info clear prune\n"
        "  else\n"
        "    _files\n"
        "  fi\n"
        "}\n"
        "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
        "  _kernlab \"$@\"\n"
        "else\n"
        "  compdef _kernlab kernlab\n"
        "fi\n";
  return os.str();
}

}  // namespace

std::string completion_script(const std::string& shell) {
  if (shell == "bash") return bash_script();
  if (shell == "zsh") return zsh_script();
  throw usage_error("--completion: no script for '" + shell + "' (bash, zsh)");
}

}  // namespace kl
