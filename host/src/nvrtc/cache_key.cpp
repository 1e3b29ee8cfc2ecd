#include "nvrtc/cache_key.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string_view>
#include <unordered_set>

namespace fs = std::filesystem;

namespace kl::nvrtc {
namespace {

// Bump when the key's contents or the entry format change, so old entries are simply not found.
constexpr std::uint64_t kKeyVersion = 1;

struct directive {
  enum kind_t { quoted, angled, computed } kind;
  std::string name;
};

// The #include lines of a file. A hand-written scan rather than std::regex: it runs on every
// source file and header of every run, before the first cache hit can be served.
std::vector<directive> parse_includes(std::string_view text) {
  std::vector<directive> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    auto skip_blanks = [&](std::size_t i) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      return i;
    };
    std::size_t i = skip_blanks(0);
    if (i >= line.size() || line[i] != '#') continue;
    i = skip_blanks(i + 1);
    if (line.substr(i, 7) != "include") continue;
    i += 7;
    if (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
      continue;  // #include_next, #includes: not an include of a kernels' header
    i = skip_blanks(i);
    if (i >= line.size()) continue;
    const char open = line[i];
    if (open == '"' || open == '<') {
      const std::size_t close = line.find(open == '"' ? '"' : '>', i + 1);
      if (close == std::string_view::npos) continue;  // malformed: NVRTC will say so
      out.push_back({open == '"' ? directive::quoted : directive::angled,
                     std::string(line.substr(i + 1, close - i - 1))});
    } else {
      std::string rest(line.substr(i));
      while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.pop_back();
      out.push_back({directive::computed, rest});
    }
  }
  return out;
}

std::string read_whole(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  if (!ok) return {};
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string join_path(const fs::path& dir, const std::string& name) {
  return (dir / name).lexically_normal().string();
}

}  // namespace

struct include_scanner::file_info {
  bool exists = false;
  digest128 content;
  std::vector<directive> includes;
};

include_scanner::include_scanner(std::vector<std::string> toolkit_dirs) {
  std::error_code ec;
  for (const auto& d : toolkit_dirs) toolkit_dirs_.push_back(fs::absolute(d, ec).lexically_normal().string());
}

include_scanner::~include_scanner() = default;

bool include_scanner::is_toolkit(const std::string& path) const {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec).lexically_normal();
  for (const auto& dir : toolkit_dirs_) {
    const fs::path rel = p.lexically_relative(dir);
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

std::shared_ptr<const include_scanner::file_info> include_scanner::read(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = files_.find(path); it != files_.end()) return it->second;
  }
  // Read outside the lock: two threads may read one header at once, and both get the same.
  auto info = std::make_shared<file_info>();
  std::error_code ec;
  if (is_toolkit(path)) {
    info->exists = fs::is_regular_file(path, ec);  // located, never read (see the file comment)
  } else if (fs::is_regular_file(path, ec)) {
    bool ok = false;
    const std::string text = read_whole(path, ok);
    info->exists = ok;
    info->content = hash128(text);
    info->includes = parse_includes(text);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return files_.emplace(path, std::move(info)).first->second;
}

std::vector<header_dependency> include_scanner::scan(const compile_request& request) {
  std::vector<header_dependency> out;
  std::unordered_set<std::string> visited;
  bool computed = false;

  // `includer` is "" for a --pre-include, which NVRTC looks up in the working folder first.
  std::function<void(const std::string&, const std::vector<directive>&)> walk =
      [&](const std::string& includer, const std::vector<directive>& includes) {
        for (const auto& d : includes) {
          if (d.kind == directive::computed) {
            computed = true;
            continue;
          }
          std::vector<std::string> candidates;
          if (d.kind == directive::quoted) candidates.push_back(join_path(fs::path(includer).parent_path(), d.name));
          for (const auto& dir : request.include_dirs) candidates.push_back(join_path(dir, d.name));
          header_dependency dep{d.name, includer, "", false, {}};
          std::shared_ptr<const file_info> found;
          for (const auto& c : candidates) {
            auto info = read(c);
            if (!info->exists) continue;
            dep.path = c;
            dep.toolkit = is_toolkit(c);
            dep.content = info->content;
            found = info;
            break;
          }
          out.push_back(dep);
          if (found && !dep.toolkit && visited.insert(dep.path).second) walk(dep.path, found->includes);
        }
      };

  std::vector<directive> pre;
  for (const auto& h : request.pre_includes) pre.push_back({directive::quoted, h});
  walk("", pre);
  walk(request.path, parse_includes(request.source));

  if (computed) {
    // A header named by a macro cannot be found without preprocessing: key on every file the
    // kernels' include folders hold instead.
    std::vector<std::string> files;
    for (const auto& dir : request.include_dirs) {
      std::error_code ec;
      if (is_toolkit(dir) || !fs::is_directory(dir, ec)) continue;
      for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it); it.increment(ec))
        if (it->is_regular_file(ec)) files.push_back(it->path().lexically_normal().string());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) out.push_back({"<computed include>", "", f, false, read(f)->content});
  }
  return out;
}

digest128 make_key(const compile_request& request, const std::vector<header_dependency>& headers) {
  hasher h;
  h.field("kernlab compile cache key").field(kKeyVersion);
  h.field(version());  // NVRTC, and so the toolkit's headers and ptxas
  h.field(request.arch);
  const auto options = options_for(request);
  h.field(options.size());
  for (const auto& o : options) h.field(o);
  h.field(request.path);
  h.field(request.name_expressions.size());
  for (const auto& e : request.name_expressions) h.field(e);
  h.field(request.source);
  h.field(headers.size());
  for (const auto& d : headers) {
    h.field(d.spelled).field(d.includer).field(d.path).field(std::uint64_t{d.toolkit});
    h.field(d.content.high).field(d.content.low);
  }
  return h.digest();
}

digest128 make_key(const compile_request& request, include_scanner& scanner) {
  return make_key(request, scanner.scan(request));
}

}  // namespace kl::nvrtc
