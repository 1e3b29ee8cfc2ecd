#include "report/output_file.hpp"

#include "core/errors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace kl {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw io_error(path + ": " + what + ": " + std::strerror(err));
}

// Every byte of `text` to `fd`, or the errno of the write that failed.
int write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// A stream or a special file: nothing to rename, so the writes themselves are checked.
void write_directly(const std::string& path, int fd, const std::string& text, bool close_it) {
  const int err = write_all(fd, text);
  const int closed = close_it ? ::close(fd) : 0;
  if (err) fail(path, "writing failed", err);
  if (closed != 0) fail(path, "closing failed", errno);
}

}  // namespace

void write_output_file(const std::string& path, const std::string& text) {
  if (path == "-" || path == "/dev/stdout") return write_directly(path, STDOUT_FILENO, text, false);
  if (path == "/dev/stderr") return write_directly(path, STDERR_FILENO, text, false);

  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw io_error(path + ": is a folder, not a file");
  if (exists && !S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot be opened for writing", errno);
    return write_directly(path, fd, text, true);
  }

  // A symbolic link keeps pointing where it did: the file it names is the one replaced.
  std::filesystem::path target = path;
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    std::error_code ec;
    target = std::filesystem::weakly_canonical(target, ec);
    if (ec) fail(path, "cannot follow the link", ec.value());
  }
  const std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  std::string temp = (dir / ("." + target.filename().string() + ".kernlab-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, "cannot create a temporary file in " + dir.string(), errno);
  auto give_up = [&](const std::string& what, int err) {
    ::unlink(temp.c_str());
    fail(path, what, err);
  };
  // The mode a new file gets from open(): 0666 less the umask (mkstemp makes it 0600), or the
  // mode of the file being replaced.
  mode_t mode = st.st_mode & 07777;
  if (!exists) {
    const mode_t mask = ::umask(022);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd, mode) != 0) {
    const int err = errno;
    ::close(fd);
    give_up("cannot set the temporary file's mode", err);
  }
  if (const int err = write_all(fd, text)) {
    ::close(fd);
    give_up("writing failed", err);
  }
  // On the disk before the rename: a crash then leaves the old file or the new, never a torn one.
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    give_up("flushing to the disk failed", err);
  }
  if (::close(fd) != 0) give_up("closing failed", errno);
  if (::rename(temp.c_str(), target.c_str()) != 0) give_up("cannot replace the file", errno);
}

}  // namespace kl
