#include "nvrtc/compile_cache.hpp"

#include "nvrtc/compile_result_json.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
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

// Owns a POSIX file descriptor.
class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Holds an exclusive flock on a lock file for its lifetime.
class file_lock {
 public:
  explicit file_lock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_.get() < 0) throw cache_error("cannot open " + path.string() + ": " + errno_text());
    while (::flock(fd_.get(), LOCK_EX) != 0)
      if (errno != EINTR) throw cache_error("cannot lock " + path.string() + ": " + errno_text());
  }  // the lock goes with the descriptor

 private:
  unique_fd fd_;
};

// A name no other thread or process writing into the same folder picks.
std::string temp_name(const std::string& stem) {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint64_t salt = std::random_device{}();
  return std::string(kTempPrefix) + stem + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(salt & 0xffffff) + "-" + std::to_string(counter++);
}

// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
// sees the old file or the new one, never a part.
void write_atomically(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw cache_error("cannot create " + path.parent_path().string() + ": " + ec.message());
  const fs::path tmp = path.parent_path() / temp_name(path.filename().string());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw cache_error("cannot create " + tmp.string() + ": " + errno_text());
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      fs::remove(tmp, ec);
      throw cache_error("cannot write " + tmp.string() + " (disk full?)");
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw cache_error("cannot rename " + tmp.string() + " to " + path.string() + ": " +
                      ec.message());
  }
}

bool read_file(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  return !in.bad();
}

// What reading an entry found.
enum class entry_read { ok, absent, not_a_file, failed };

// Reads an entry without ever blocking: a FIFO is opened O_NONBLOCK and, like a folder or a
// device, is reported as not a file before any read. On `ok` with `touch` the entry's use time is
// set to now (a failure to, in a cache this user may only read, costs only its place in the LRU).
entry_read read_entry(const fs::path& path, std::string& out, bool touch) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) return errno == ENOENT || errno == ENOTDIR ? entry_read::absent : entry_read::failed;
  unique_fd fd(raw);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return entry_read::failed;
  if (!S_ISREG(st.st_mode)) return entry_read::not_a_file;
  out.assign(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd.get(), out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return entry_read::failed;
    if (n == 0) break;  // shorter than its size said: the checks below call it truncated
    got += static_cast<std::size_t>(n);
  }
  out.resize(got);
  if (touch) ::futimens(fd.get(), nullptr);
  return entry_read::ok;
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
  std::string text;
  if (!read_file(path, text)) return c;
  try {
    const json j = json::parse(text);
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
  std::string bytes;
  switch (read_entry(path, bytes, touch)) {
    case entry_read::absent:
    case entry_read::not_a_file:  // store() replaces it
      return out;                 // a miss
    case entry_read::failed:
      out.status = lookup_status::corrupt;
      out.problem = "cannot read " + path.string() + ": " + errno_text();
      return out;
    case entry_read::ok: break;
  }
  try {
    out.result = decode_entry(key, bytes);
    out.status = lookup_status::hit;
  } catch (const cache_error& e) {
    out.status = lookup_status::corrupt;
    out.problem = path.string() + ": " + e.what();
  }
  return out;
}

void compile_cache::store(const digest128& key, const compile_result& result) const {
  if (!result.ok) throw cache_error("only successful compiles are stored");
  const fs::path path = entry_path(key);
  // A rename replaces a file, a FIFO or a device at the entry's name, but not a folder: that
  // goes first (it is at an entry's name in our entries folder, so it is no one else's).
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(path, ec))) fs::remove_all(path, ec);
  write_atomically(path, encode_entry(key, result));
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
    if (::stat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      ++info.not_files;  // never opened: a FIFO would block the reader
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
  unique_fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.get() < 0) throw cache_error("cannot open " + lock_path.string() + ": " + errno_text());
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
