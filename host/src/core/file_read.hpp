// Reading a file that kernlab did not write in this run (a cache entry, the cache's counters, a
// plugin's verdict, a config, results or journal file, a header, a kernel file): whatever is at
// the path, the read never blocks and never takes more memory than a bound.
//
// The rule, in one place: open with O_NONBLOCK (a FIFO opens at once instead of waiting for a
// writer) and, where a link is not expected, O_NOFOLLOW; fstat the descriptor and refuse anything
// that is not a regular file (a folder, FIFO, device or socket) before reading a byte; refuse a
// file larger than the bound (a sparse 1 TiB file, /proc's files that grow as they are read);
// then read through the same descriptor, so what was checked is what is read.
#pragma once

#include <cstdint>
#include <string>

namespace kl {

/// What read_regular_file found.
enum class read_status {
  ok,           ///< `bytes` holds the whole file
  absent,       ///< nothing at the path (or a folder on the way is missing)
  not_regular,  ///< a folder, FIFO, device or socket, or a symbolic link when links are refused
  too_large,    ///< more bytes than the bound
  failed        ///< it could not be opened or read (permissions, an I/O error)
};

/// Whether a symbolic link at the path itself is followed.
enum class symlinks { follow, refuse };

struct file_read {
  read_status status = read_status::failed;
  std::string bytes;  ///< the whole file, when ok
  std::string why;    ///< when not ok: "a FIFO, not a regular file", "2 GiB, more than ..."
  bool ok() const { return status == read_status::ok; }
};

/// Reads the regular file at `path`, of at most `max_bytes`, as the file comment says. Never
/// throws for what is at the path; `why` says what was found instead.
file_read read_regular_file(const std::string& path, std::uint64_t max_bytes,
                            symlinks links = symlinks::follow);

/// The bytes of read_regular_file, or io_error("PATH: why") (exit code 4) naming the file.
std::string read_regular_file_or_throw(const std::string& path, std::uint64_t max_bytes,
                                       symlinks links = symlinks::follow);

/// "16 MiB", "1 GiB", "4096 bytes": a bound as the messages give it.
std::string byte_count_text(std::uint64_t bytes);

}  // namespace kl
