#include "nvrtc/compile_cache.hpp"

#include "core/errors.hpp"
#include "core/file_read.hpp"
#include "core/file_write.hpp"
#include "core/unique_fd.hpp"
#include "nvrtc/compile_result_json.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace kl::nvrtc {
namespace {

constexpr char kMagic[8] = {'K', 'L', 'C', 'A', 'C', 'H', 'E', '\x1a'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::size_t kHeaderBytes = 48;  // magic, version, reserved, key (16), length, checksum
constexpr const char* kEntrySuffix = ".klc";
constexpr const char* kTempPrefix = ".tmp-";
constexpr std::uint64_t kMaxCountersBytes = 64 << 10;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t get_u64(std::string_view in, std::size_t at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}
std::uint32_t get_u32(std::string_view in, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}

std::string errno_text() { return std::strerror(errno); }

// Holds an exclusive flock on a lock file for its lifetime. Never through a link planted at the
// lock's name (O_NOFOLLOW), nor blocked by a FIFO there (O_NONBLOCK).
class file_lock {
 public:
  explicit file_lock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644)) {
    if (!fd_) throw cache_error("cannot open " + path.string() + ": " + errno_text());
    while (::flock(fd_.get(), LOCK_EX) != 0)
      if (errno != EINTR) throw cache_error("cannot lock " + path.string() + ": " + errno_text());
  }  // the lock goes with the descriptor

 private:
  unique_fd fd_;
};

// Writes `bytes` to `path` through a new file in the same folder (created exclusively, under a
// name no one can guess) and a rename, so a reader sees the old file or the new one, never a part.
void write_atomically(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw cache_error("cannot create " + path.parent_path().string() + ": " + ec.message());
  try {
    created_file tmp =
        create_file_beside(path.string(), kTempPrefix + path.filename().string() + "-");
    auto give_up = [&](const std::string& what) {
      ::unlink(tmp.path.c_str());
      throw cache_error(what);
    };
    if (write_all(tmp.fd.get(), bytes) != 0 || ::close(tmp.fd.release()) != 0)
      give_up("cannot write " + tmp.path + ": " + errno_text() + " (disk full?)");
    if (::rename(tmp.path.c_str(), path.c_str()) != 0)
      give_up("cannot rename " + tmp.path + " to " + path.string() + ": " + errno_text());
  } catch (const io_error& e) {
    throw cache_error(e.what());
  }
}

json counters_to_json(const cache_counters& c) {
  return {{"runs", c.runs},
          {"hits", c.hits},
          {"misses", c.misses},
          {"stores", c.stores},
          {"corrupt", c.corrupt}};
}

cache_counters counters_from_file(const fs::path& path) {
  cache_counters c;
  // Read while counters.lock is held: a FIFO or /dev/zero here must not hold every other
  // kernlab on this cache with it.
  const file_read text = read_regular_file(path.string(), kMaxCountersBytes, symlinks::refuse);
  if (!text.ok()) return c;  // absent or not ours: the next write replaces it
  try {
    const json j = json::parse(text.bytes);
    c.runs = j.value("runs", std::uint64_t{0});
    c.hits = j.value("hits", std::uint64_t{0});
    c.misses = j.value("misses", std::uint64_t{0});
    c.stores = j.value("stores", std::uint64_t{0});
    c.corrupt = j.value("corrupt", std::uint64_t{0});
  } catch (const json::exception&) {
    // Damaged counters start again from zero: they are statistics, not data.
  }
  return c;
}

bool is_entry(const fs::path& p) {
  return p.extension() == kEntrySuffix && p.stem().string().size() == 32;
}
bool is_temp(const fs::path& p) { return p.filename().string().rfind(kTempPrefix, 0) == 0; }

}  // namespace

std::string encode_entry(const digest128& key, const compile_result& r) {
  const json payload = to_json(r);
  const std::vector<std::uint8_t> cbor = json::to_cbor(payload);
  const std::string_view body(reinterpret_cast<const char*>(cbor.data()), cbor.size());

  std::string out(kMagic, sizeof kMagic);
  put_u32(out, kFormatVersion);
  put_u32(out, 0);
  put_u64(out, key.high);
  put_u64(out, key.low);
  put_u64(out, body.size());
  put_u64(out, checksum64(body));
  out.append(body);
  return out;
}

compile_result decode_entry(const digest128& key, std::string_view bytes) {
  if (bytes.size() < kHeaderBytes)
    throw cache_error("truncated (" + std::to_string(bytes.size()) +
                      " bytes, less than its header)");
  if (bytes.substr(0, sizeof kMagic) != std::string_view(kMagic, sizeof kMagic))
    throw cache_error("not a kernlab cache entry");
  if (get_u32(bytes, 8) != kFormatVersion)
    throw cache_error("format version " + std::to_string(get_u32(bytes, 8)) + ", expected " +
                      std::to_string(kFormatVersion));
  if (get_u64(bytes, 16) != key.high || get_u64(bytes, 24) != key.low)
    throw cache_error("holds another key");
  const std::uint64_t length = get_u64(bytes, 32);
  const std::string_view body = bytes.substr(kHeaderBytes);
  if (body.size() != length)
    throw cache_error("truncated (" + std::to_string(body.size()) + " of " +
                      std::to_string(length) + " payload bytes)");
  if (checksum64(body) != get_u64(bytes, 40)) throw cache_error("checksum mismatch");

  compile_result r;
  try {
    r = compile_result_from_json(json::from_cbor(body));
    r.ok = true;
  } catch (const json::exception& e) {
    // The checksum matched, so this is an entry written by a kernlab that meant otherwise.
    throw cache_error(std::string("unreadable payload: ") + e.what());
  }
  if (r.cubin.empty()) throw cache_error("holds no cubin");
  return r;
}

compile_cache::compile_cache(fs::path dir, std::uint64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes) {}

fs::path compile_cache::entry_path(const digest128& key) const {
  return dir_ / "entries" / (key.hex() + kEntrySuffix);
}

cache_lookup compile_cache::lookup(const digest128& key) const { return look_up(key, true); }

cache_lookup compile_cache::look_up(const digest128& key, bool touch) const {
  cache_lookup out;
  const fs::path path = entry_path(key);
  const file_read bytes = read_regular_file(path.string(), kMaxEntryBytes, symlinks::refuse);
  switch (bytes.status) {
    case read_status::absent:
    case read_status::not_regular:  // store() replaces it
      return out;                   // a miss
    case read_status::too_large:
    case read_status::failed:
      out.status = lookup_status::corrupt;
      out.problem = path.string() + ": " + bytes.why;
      return out;
    case read_status::ok: break;
  }
  try {
    out.result = decode_entry(key, bytes.bytes);
    out.status = lookup_status::hit;
  } catch (const cache_error& e) {
    out.status = lookup_status::corrupt;
    out.problem = path.string() + ": " + e.what();
    return out;
  }
  // A hit is a use: its time is the entry's place in the LRU order. A failure to set it (a cache
  // this user may only read) costs only that place.
  if (touch) ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  return out;
}

void compile_cache::store(const digest128& key, const compile_result& result) const {
  if (!result.ok) throw cache_error("only successful compiles are stored");
  const fs::path path = entry_path(key);
  const std::string bytes = encode_entry(key, result);
  // One that lookup() would refuse: storing it would only make every run compile it again.
  if (bytes.size() > kMaxEntryBytes)
    throw cache_error("the entry for " + key.hex() + " would take " + std::to_string(bytes.size()) +
                      " bytes, over the " + byte_count_text(kMaxEntryBytes) + " an entry may");
  // A rename replaces a file, a FIFO or a device at the entry's name, but not a folder: that
  // goes first (it is at an entry's name in our entries folder, so it is no one else's).
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) fs::remove_all(path, ec);
  write_atomically(path, bytes);
}

void compile_cache::add_counters(const cache_counters& run) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw cache_error("cannot create " + dir_.string() + ": " + ec.message());
  file_lock lock(dir_ / "counters.lock");
  cache_counters c = counters_from_file(dir_ / "counters.json");
  c.runs += run.runs;
  c.hits += run.hits;
  c.misses += run.misses;
  c.stores += run.stores;
  c.corrupt += run.corrupt;
  write_atomically(dir_ / "counters.json", counters_to_json(c).dump() + "\n");
}

cache_info compile_cache::info() const {
  cache_info info;
  info.dir = dir_;
  info.max_bytes = max_bytes_;
  std::error_code ec;
  info.exists = fs::is_directory(dir_, ec);
  if (!info.exists) return info;
  try {
    file_lock lock(dir_ / "counters.lock");
    info.counters = counters_from_file(dir_ / "counters.json");
  } catch (const cache_error&) {
    // A folder this user may read but not write (a shared cache): read without the lock.
    info.counters = counters_from_file(dir_ / "counters.json");
  }
  const fs::path entries = dir_ / "entries";
  if (!fs::is_directory(entries, ec)) return info;
  for (auto it = fs::directory_iterator(entries, ec); !ec && it != fs::end(it); it.increment(ec)) {
    const fs::path& p = it->path();
    if (is_temp(p)) {
      ++info.temporary_files;
      continue;
    }
    if (!is_entry(p)) continue;
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      ++info.not_files;  // never opened: a FIFO would block the reader, a link is no entry
      continue;
    }
    ++info.entries;
    if (st.st_mode != 0) {
      info.bytes += static_cast<std::uint64_t>(st.st_size);
      if (info.oldest == 0 || st.st_mtime < info.oldest) info.oldest = st.st_mtime;
      if (st.st_mtime > info.newest) info.newest = st.st_mtime;
    }
    digest128 key;
    const std::string hex = p.stem().string();
    try {
      key.high = std::stoull(hex.substr(0, 16), nullptr, 16);
      key.low = std::stoull(hex.substr(16), nullptr, 16);
    } catch (const std::exception&) {
      ++info.damaged;
      continue;
    }
    const cache_lookup l = look_up(key, false);  // counting is no use: LRU order stays
    if (l.status == lookup_status::hit)
      info.compile_ms += l.result.milliseconds;
    else
      ++info.damaged;
  }
  if (ec) throw cache_error("cannot list " + entries.string() + ": " + ec.message());
  return info;
}

prune_result compile_cache::prune(std::uint64_t max_bytes, bool wait) const {
  prune_result out;
  const fs::path entries = dir_ / "entries";
  std::error_code ec;
  if (!fs::is_directory(entries, ec)) return out;
  const fs::path lock_path = dir_ / "prune.lock";
  unique_fd lock(
      ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644));
  if (!lock) throw cache_error("cannot open " + lock_path.string() + ": " + errno_text());
  while (::flock(lock.get(), LOCK_EX | (wait ? 0 : LOCK_NB)) != 0) {
    if (errno == EWOULDBLOCK && !wait) {
      out.skipped = true;  // another process is pruning the same folder right now
      return out;
    }
    if (errno != EINTR)
      throw cache_error("cannot lock " + lock_path.string() + ": " + errno_text());
  }

  struct listed {
    fs::path path;
    std::uint64_t bytes;
    struct timespec used;
  };
  std::vector<listed> files;
  std::uint64_t total = 0;
  for (auto it = fs::directory_iterator(entries, ec); !ec && it != fs::end(it); it.increment(ec)) {
    const fs::path& p = it->path();
    if (!is_entry(p)) continue;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) continue;  // gone meanwhile
    if (!S_ISREG(st.st_mode)) {  // a folder, FIFO, device or link at an entry's name: never valid
      std::error_code rm;
      const std::uintmax_t n = fs::remove_all(p, rm);
      if (!rm && n > 0) ++out.removed;
      continue;
    }
    files.push_back({p, static_cast<std::uint64_t>(st.st_size), st.st_mtim});
    total += static_cast<std::uint64_t>(st.st_size);
  }
  if (ec) throw cache_error("cannot list " + entries.string() + ": " + ec.message());

  // Least recently used first; the name breaks ties, so two prunes of one folder agree.
  std::sort(files.begin(), files.end(), [](const listed& a, const listed& b) {
    if (a.used.tv_sec != b.used.tv_sec) return a.used.tv_sec < b.used.tv_sec;
    if (a.used.tv_nsec != b.used.tv_nsec) return a.used.tv_nsec < b.used.tv_nsec;
    return a.path < b.path;
  });
  for (const auto& f : files) {
    if (total <= max_bytes) break;
    // A hit since the listing made it recently used: it stays. (Between this check and the
    // unlink a process may still open it; it then reads the whole file, which outlives the name.)
    struct stat now {};
    if (::lstat(f.path.c_str(), &now) != 0 || now.st_mtim.tv_sec != f.used.tv_sec ||
        now.st_mtim.tv_nsec != f.used.tv_nsec)
      continue;
    if (::unlink(f.path.c_str()) != 0) {
      if (errno == ENOENT) continue;  // removed by `cache clear` meanwhile
      throw cache_error("cannot remove " + f.path.string() + ": " + errno_text());
    }
    total -= f.bytes;
    ++out.removed;
    out.removed_bytes += f.bytes;
  }
  out.kept_bytes = total;
  for (const auto& f : files) {
    std::error_code gone;
    if (fs::exists(f.path, gone)) ++out.kept;
  }
  return out;
}

std::uint64_t compile_cache::clear() const {
  std::uint64_t removed = 0;
  std::error_code ec;
  const fs::path entries = dir_ / "entries";
  if (fs::is_directory(entries, ec)) {
    std::vector<fs::path> doomed;
    for (auto it = fs::directory_iterator(entries, ec); !ec && it != fs::end(it); it.increment(ec))
      if (is_entry(it->path()) || is_temp(it->path())) doomed.push_back(it->path());
    if (ec) throw cache_error("cannot list " + entries.string() + ": " + ec.message());
    for (const auto& p : doomed) {
      // remove_all: a folder at an entry's name (ours by its name) goes too.
      if (fs::remove_all(p, ec) == static_cast<std::uintmax_t>(-1) || ec)
        throw cache_error("cannot remove " + p.string() + ": " + ec.message());
      if (is_entry(p)) ++removed;
    }
    fs::remove(entries, ec);  // only if now empty; anything else in it stays
  }
  if (fs::is_directory(dir_, ec)) {
    file_lock lock(dir_ / "counters.lock");
    fs::remove(dir_ / "counters.json", ec);
  }
  return removed;
}

fs::path default_cache_dir() {
  // The XDG base directory spec: a relative XDG_CACHE_HOME is invalid and must be ignored.
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg && fs::path(xdg).is_absolute()) return fs::path(xdg) / "kernlab";
  const char* home = std::getenv("HOME");
  if (home && *home) return fs::path(home) / ".cache" / "kernlab";
  return {};
}

}  // namespace kl::nvrtc
