#include "core/file_read.hpp"

#include "core/errors.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace kl {
namespace {

// "a FIFO", "a folder": what a path that is not a regular file is.
std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file";
}

file_read refused(read_status status, std::string why) {
  file_read r;
  r.status = status;
  r.why = std::move(why);
  return r;
}

file_read not_regular(mode_t mode) {
  return refused(read_status::not_regular, kind_of(mode) + ", not a regular file");
}

file_read too_large(std::uint64_t size, std::uint64_t max_bytes) {
  return refused(read_status::too_large, std::to_string(size) + " bytes, over the " +
                                             byte_count_text(max_bytes) + " limit");
}

file_read failed_with(int err) {
  if (err == ENOENT || err == ENOTDIR) return refused(read_status::absent, "no such file");
  return refused(read_status::failed, std::strerror(err));
}

}  // namespace

std::string byte_count_text(std::uint64_t bytes) {
  for (const auto& [shift, unit] :
       {std::pair<int, const char*>{30, " GiB"}, {20, " MiB"}, {10, " KiB"}})
    if (bytes >= (std::uint64_t{1} << shift) && bytes % (std::uint64_t{1} << shift) == 0)
      return std::to_string(bytes >> shift) + unit;
  return std::to_string(bytes) + " bytes";
}

file_read read_regular_file(const std::string& path, std::uint64_t max_bytes, symlinks links) {
  // Looked at before it is opened, so that a device is never even opened (a tape rewinds on
  // close); fstat below decides, on what was opened.
  struct stat st {};
  const bool follow = links == symlinks::follow;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0)
    return failed_with(errno);
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  unique_fd fd(::open(path.c_str(), flags));
  if (!fd) return errno == ELOOP ? not_regular(S_IFLNK) : failed_with(errno);
  if (::fstat(fd.get(), &st) != 0) return failed_with(errno);
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);  // replaced since the look above
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) return too_large(size, max_bytes);

  // Read until the end, which may come later than st_size said (a file still being written, a
  // /proc file that says 0): one byte past the bound is room enough to see it pass the bound.
  const std::uint64_t room = std::min<std::uint64_t>(max_bytes, SIZE_MAX - 1) + 1;
  file_read r;
  r.bytes.resize(static_cast<std::size_t>(std::min(size + 1, room)));
  std::size_t got = 0;
  for (;;) {
    if (got == r.bytes.size())
      r.bytes.resize(static_cast<std::size_t>(std::min<std::uint64_t>(room, got * 2 + 4096)));
    const ssize_t n = ::read(fd.get(), r.bytes.data() + got, r.bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed_with(errno);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    if (got > max_bytes)
      return refused(read_status::too_large,
                     "over the " + byte_count_text(max_bytes) + " limit (it grew while read)");
  }
  r.bytes.resize(got);
  r.status = read_status::ok;
  return r;
}

std::string read_regular_file_or_throw(const std::string& path, std::uint64_t max_bytes,
                                       symlinks links) {
  file_read r = read_regular_file(path, max_bytes, links);
  if (!r.ok()) throw io_error(path + ": " + r.why);
  return std::move(r.bytes);
}

}  // namespace kl
