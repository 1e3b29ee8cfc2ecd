#include "report/output_file.hpp"

#include "core/errors.hpp"
#include "core/file_write.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kl {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int err) {
  throw io_error(path + ": " + what + ": " + std::strerror(err));
}

// A stream or a special file: nothing to rename, so the writes themselves are checked.
void write_directly(const std::string& path, int fd, const std::string& text, bool close_it) {
  const int err = write_all(fd, text);
  const int closed = close_it ? ::close(fd) : 0;
  if (err) fail(path, "writing failed", err);
  if (closed != 0) fail(path, "closing failed", errno);
}

}  // namespace

bool is_standard_output(const std::string& path) { return path == "-" || path == "/dev/stdout"; }

bool is_stream_output(const std::string& path) {
  if (is_standard_output(path) || path == "/dev/stderr") return true;
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

void write_output_file(const std::string& path, const std::string& text) {
  if (is_standard_output(path)) return write_directly(path, STDOUT_FILENO, text, false);
  if (path == "/dev/stderr") return write_directly(path, STDERR_FILENO, text, false);

  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // what is there, through a link
  if (exists && S_ISDIR(st.st_mode)) throw io_error(path + ": is a folder, not a file");
  if (exists && !S_ISREG(st.st_mode)) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(path, "cannot be opened for writing", errno);
    return write_directly(path, fd, text, true);
  }

  // A symbolic link at the name is replaced itself, like any file there: the file it points at is
  // left as it was (a link planted in a shared folder must not turn the rename onto a file of
  // the user's). A regular file replaced keeps its mode; a new file gets 0666 less the umask.
  struct stat at_name {};
  const bool link = ::lstat(path.c_str(), &at_name) == 0 && S_ISLNK(at_name.st_mode);
  const std::string name = std::filesystem::path(path).filename().string();
  created_file temp;
  try {
    temp = create_file_beside(path, "." + name + ".kernlab-", 0666);
  } catch (const io_error& e) {
    throw io_error(path + ": " + e.what());
  }
  auto give_up = [&](const std::string& what, int err) {
    ::unlink(temp.path.c_str());
    fail(path, what, err);
  };
  if (exists && !link && ::fchmod(temp.fd.get(), st.st_mode & 07777) != 0)
    give_up("cannot set the temporary file's mode", errno);
  if (const int err = write_all(temp.fd.get(), text)) give_up("writing failed", err);
  // On the disk before the rename: a crash then leaves the old file or the new, never a torn one.
  if (::fsync(temp.fd.get()) != 0) give_up("flushing to the disk failed", errno);
  if (::close(temp.fd.release()) != 0) give_up("closing failed", errno);
  if (::rename(temp.path.c_str(), path.c_str()) != 0) give_up("cannot replace the file", errno);
}

}  // namespace kl
