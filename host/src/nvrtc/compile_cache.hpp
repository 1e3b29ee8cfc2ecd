// The on-disk cache of compiled images: a successful NVRTC compile, stored under its key (see
// cache_key.hpp) so the next run with the same inputs loads it instead of compiling.
//
// Layout of a cache folder:
//   entries/<32 hex digits>.klc   one entry per key
//   entries/.tmp-*                an entry being written (renamed into place when complete)
//   counters.json, counters.lock  hits, misses and stores over every run, and their lock
//   prune.lock                    held by the one process pruning the entries
//
// An entry is a fixed header (magic, format version, the key, the payload's length and XXH3-64
// checksum) and a CBOR payload (the compile_result, the cubin as a byte string). Entries are
// written to a temporary file in the same folder and renamed over the final name, so processes
// that share a cache see a whole entry or none. Nothing is fsync'ed: an entry cut short by a
// crash fails its checksum, is reported as damaged, and is rebuilt.
//
// Only successful compiles are stored: a compile error is shown from a fresh compile every time.
//
// Size: the entries are kept under a cap (2 GiB unless configured) by removing the least recently
// used ones (prune(), run after every sweep that stored an entry). A hit sets its entry's
// modification time to now, so the time an entry was last used is its mtime. Removal is an
// unlink: a process that opened the entry before reads it whole, one that comes after finds no
// entry (a miss), so no process ever reads a partly deleted entry. Anything at an entry's name
// that is not a regular file (a folder, a FIFO, a device, a link) is a miss, never opened for a
// blocking read, and the next store replaces it; so is an entry over kMaxEntryBytes (a sparse
// 1 TiB file), which is never read. Every file of the folder is read through kl's bounded reader
// (core/file_read.hpp) and written through an exclusively created file (core/file_write.hpp).
#pragma once

#include "nvrtc/compiler.hpp"
#include "nvrtc/hash.hpp"

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kl::nvrtc {

/// The cache folder cannot be read or written; the message names the file and the reason.
class cache_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class lookup_status {
  hit,     ///< a valid entry: `result` holds it
  miss,    ///< no entry for the key
  corrupt  ///< an entry that fails its checks (`problem` says which); compile and store again
};

struct cache_lookup {
  lookup_status status = lookup_status::miss;
  compile_result result;
  std::string problem;
};

/// Counts over runs, kept in the cache folder.
struct cache_counters {
  std::uint64_t runs = 0, hits = 0, misses = 0, stores = 0, corrupt = 0;
};

/// What `kernlab cache info` reports.
struct cache_info {
  std::filesystem::path dir;
  bool exists = false;
  std::uint64_t entries = 0;
  std::uint64_t bytes = 0;            ///< of the entries
  std::uint64_t damaged = 0;          ///< entries that fail their checks
  std::uint64_t temporary_files = 0;  ///< left by a process that died while writing an entry
  std::uint64_t not_files = 0;  ///< folders, FIFOs, devices at an entry's name: skipped, unread
  std::uint64_t max_bytes = 0;  ///< the cap on `bytes` (compile_cache::max_bytes())
  double compile_ms = 0;        ///< NVRTC time the valid entries took to make
  std::time_t oldest = 0, newest = 0;  ///< entry modification times; 0 without entries
  cache_counters counters;
};

/// What prune() did.
struct prune_result {
  std::uint64_t removed = 0, removed_bytes = 0;  ///< entries (and non-files at their names) removed
  std::uint64_t kept = 0, kept_bytes = 0;        ///< entries left
  bool skipped = false;  ///< another process was pruning (only when asked not to wait)
};

/// The default cap on the entries' size: 2 GiB.
constexpr std::uint64_t kDefaultCacheMaxBytes = std::uint64_t{2} << 30;
/// The largest entry read or stored: a worker frame's limit (process/protocol.hpp), since a cubin
/// larger than that could not be sent to the worker anyway.
constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{256} << 20;

class compile_cache {
 public:
  /// The folder is created on the first store, so a run that stores nothing leaves no trace.
  /// prune_if_needed() keeps the entries under `max_bytes`.
  explicit compile_cache(std::filesystem::path dir,
                         std::uint64_t max_bytes = kDefaultCacheMaxBytes);

  const std::filesystem::path& dir() const { return dir_; }
  std::uint64_t max_bytes() const { return max_bytes_; }
  std::filesystem::path entry_path(const digest128& key) const;

  /// Never throws: an absent entry, or something that is not a regular file, is a miss; an
  /// unreadable, damaged or oversized one is `corrupt`. A hit sets the entry's use time (mtime)
  /// to now.
  cache_lookup lookup(const digest128& key) const;
  /// Stores a successful compile, replacing whatever is at the entry's name. Thread-safe and
  /// safe across processes. Throws cache_error (also for an entry over kMaxEntryBytes).
  void store(const digest128& key, const compile_result& result) const;

  /// Removes the least recently used entries (oldest mtime first) until the rest take at most
  /// `max_bytes`, and anything at an entry's name that is not a regular file. One process prunes
  /// at a time (a lock file); with `wait` false a process that finds another pruning returns at
  /// once (`skipped`). An entry used since it was listed is kept. Throws cache_error.
  prune_result prune(std::uint64_t max_bytes, bool wait = true) const;

  /// Adds one run's counts to the folder's counters, under a file lock (processes share them).
  /// Throws cache_error.
  void add_counters(const cache_counters& run) const;
  /// Reads every entry (to count the damaged ones) and the counters. Throws cache_error.
  cache_info info() const;
  /// Removes the entries, leftover temporary files and counters, and only those: a --cache-dir
  /// pointed at the wrong folder loses nothing else. Returns how many entries went.
  std::uint64_t clear() const;

 private:
  cache_lookup look_up(const digest128& key, bool touch) const;

  std::filesystem::path dir_;
  std::uint64_t max_bytes_;
};

/// $XDG_CACHE_HOME/kernlab, else $HOME/.cache/kernlab; empty when neither is set.
std::filesystem::path default_cache_dir();

/// An entry's bytes (exposed for tests).
std::string encode_entry(const digest128& key, const compile_result& result);
/// The compile_result in an entry's bytes. Throws cache_error saying what is wrong.
compile_result decode_entry(const digest128& key, std::string_view bytes);

}  // namespace kl::nvrtc
