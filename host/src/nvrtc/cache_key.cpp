#include "nvrtc/cache_key.hpp"

#include "core/file_read.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <optional>
#include <string_view>
#include <unordered_set>

namespace fs = std::filesystem;

namespace kl::nvrtc {
namespace {

// Bump when the key's contents or the entry format change, so old entries are simply not found.
// 2: headers are named by their physical (canonical) path.
constexpr std::uint64_t kKeyVersion = 2;

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
      while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back())))
        rest.pop_back();
      out.push_back({directive::computed, rest});
    }
  }
  return out;
}

// A header's text, read as every file kernlab did not write (core/file_read.hpp); nothing when
// it is gone or cannot be read (NVRTC then says so itself). Throws scan_error, naming it, for a
// header over kMaxHeaderBytes, and for a FIFO or a device, which is no header: NVRTC's open()
// would wait on a FIFO until --compile-timeout.
std::optional<std::string> read_header(const std::string& path) {
  file_read r = read_regular_file(path, kMaxHeaderBytes);
  switch (r.status) {
    case read_status::ok: return std::move(r.bytes);
    case read_status::too_large:
      throw scan_error(path + ": " + r.why + " of a header (is this #include meant?)");
    case read_status::not_regular: throw scan_error(path + ": " + r.why + ", so no header");
    case read_status::absent:
    case read_status::failed: break;
  }
  return std::nullopt;
}

// Where NVRTC finds `name` from `dir`: the joined path as it stands, so the system resolves
// `link/..` physically, as NVRTC's own open() does (never lexically: with a symlinked folder,
// "link/../x.cuh" is the link target's sibling, not `dir`'s child).
std::string join_path(const std::string& dir, const std::string& name) {
  if (dir.empty() || (!name.empty() && name.front() == '/')) return name;  // an absolute name
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

// One file's physical identity: its canonical path, or the path itself if it has none.
std::string physical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::canonical(path, ec);
  return ec ? fs::absolute(path, ec).lexically_normal().string() : p.string();
}

}  // namespace

struct include_scanner::file_info {
  bool exists = false;
  std::string physical;  ///< the canonical path: one file reached by two spellings is one file
  bool toolkit = false;
  digest128 content;
  std::vector<directive> includes;
};

include_scanner::include_scanner(std::vector<std::string> toolkit_dirs) {
  std::error_code ec;
  for (const auto& d : toolkit_dirs) toolkit_dirs_.push_back(physical(d));
}

include_scanner::~include_scanner() = default;

bool include_scanner::is_toolkit(const std::string& physical_path) const {
  const fs::path p(physical_path);
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
  const fs::file_status st = fs::status(path, ec);
  // A folder is skipped, as NVRTC skips it; a FIFO or a device is read (and refused) below.
  if (fs::exists(st) && !fs::is_directory(st)) {
    info->physical = physical(path);
    info->toolkit = is_toolkit(info->physical);
    if (info->toolkit) {
      info->exists = true;  // located, never read (see the file comment)
    } else if (auto text = read_header(path)) {
      info->exists = true;
      info->content = hash128(*text);
      info->includes = parse_includes(*text);
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return files_.emplace(path, std::move(info)).first->second;
}

std::vector<header_dependency> include_scanner::scan(const compile_request& request) {
  std::vector<header_dependency> out;
  std::unordered_set<std::string> visited;  // physical paths: a header's includes count once
  bool computed = false;

  // Depth first with a stack of its own, not recursion: a chain of headers as long as the disk
  // allows must end in an error naming it, not in a stack overflow. `includer` is "" for a
  // --pre-include, which NVRTC looks up in the working folder first.
  struct frame {
    std::string includer;  ///< as NVRTC opened it: its folder is where "..." searches first
    std::vector<directive> includes;
    std::size_t next = 0;
  };
  std::vector<frame> stack;
  const auto walk = [&](std::string includer, std::vector<directive> includes) {
    stack.push_back({std::move(includer), std::move(includes), 0});
    while (!stack.empty()) {
      frame& f = stack.back();
      if (f.next == f.includes.size()) {
        stack.pop_back();
        continue;
      }
      const directive d = f.includes[f.next++];
      if (d.kind == directive::computed) {
        computed = true;
        continue;
      }
      std::vector<std::string> candidates;
      if (d.kind == directive::quoted)
        candidates.push_back(join_path(fs::path(f.includer).parent_path().string(), d.name));
      for (const auto& dir : request.include_dirs) candidates.push_back(join_path(dir, d.name));
      header_dependency dep{d.name, f.includer, "", false, {}};
      std::shared_ptr<const file_info> found;
      std::string found_as;
      for (const auto& c : candidates) {
        auto info = read(c);
        if (!info->exists) continue;
        dep.path = info->physical;
        dep.toolkit = info->toolkit;
        dep.content = info->content;
        found = info;
        found_as = c;
        break;
      }
      out.push_back(dep);
      if (!found || dep.toolkit || !visited.insert(dep.path).second) continue;
      if (stack.size() >= kMaxIncludeDepth)
        throw scan_error(found_as + ": #include nested more than " +
                         std::to_string(kMaxIncludeDepth) + " levels deep (included from " +
                         f.includer + "; the chain starts at " + request.path + ")");
      stack.push_back({found_as, found->includes, 0});  // `f` is invalid from here
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
      if (is_toolkit(physical(dir)) || !fs::is_directory(dir, ec)) continue;
      for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        std::error_code type_ec;  // a symlink loop fails here: that entry alone is left out
        if (it->is_regular_file(type_ec)) files.push_back(it->path().lexically_normal().string());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      out.push_back({"<computed include>", "", f, false, read(f)->content});
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
