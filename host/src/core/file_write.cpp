#include "core/file_write.hpp"

#include "core/errors.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace kl {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// 12 letters and digits from the kernel's random source: 71 bits no one can guess.
std::string random_suffix() {
  static constexpr char letters[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bits[12];
  std::size_t got = 0;
  while (got < sizeof bits) {
    const ssize_t n = ::getrandom(bits + got, sizeof bits - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw io_error("no random bytes for a temporary name: " + errno_text(errno));
    got += static_cast<std::size_t>(n);
  }
  std::string out;
  for (unsigned char b : bits) out += letters[b % (sizeof letters - 1)];
  return out;
}

std::string folder_of(const std::string& path) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return dir.empty() ? "." : dir.string();
}

}  // namespace

int write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

created_file create_file_beside(const std::string& target, const std::string& prefix, mode_t mode) {
  const std::string dir = folder_of(target);
  for (;;) {
    created_file f;
    f.path = dir + "/" + prefix + random_suffix();
    f.fd.reset(::open(f.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (f.fd) return f;
    if (errno != EEXIST)  // EEXIST: 71 random bits met a name already there; draw again
      throw io_error("cannot create a file in " + dir + ": " + errno_text(errno));
  }
}

void replace_file(const std::string& path, std::string_view bytes, mode_t mode) {
  const std::string name = std::filesystem::path(path).filename().string();
  created_file f = create_file_beside(path, "." + name + ".kernlab-", mode);
  auto give_up = [&](const std::string& what, int err) {
    ::unlink(f.path.c_str());
    throw io_error(path + ": " + what + ": " + errno_text(err));
  };
  if (const int err = write_all(f.fd.get(), bytes)) give_up("writing failed", err);
  if (::close(f.fd.release()) != 0) give_up("closing failed", errno);
  if (::rename(f.path.c_str(), path.c_str()) != 0) give_up("cannot replace the file", errno);
}

unique_fd open_appending(const std::string& what, const std::string& path, existing what_is_there,
                         mode_t mode) {
  const std::string name = what + " " + path + ": ";
  unique_fd fd(::open(path.c_str(),
                      O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode));
  if (!fd) {
    if (errno == ELOOP) throw io_error(name + "a symbolic link; not written through");
    if (errno == ENXIO) throw io_error(name + "a FIFO that no process reads; not written");
    throw io_error(name + errno_text(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw io_error(name + errno_text(errno));
  if (S_ISREG(st.st_mode) && st.st_uid != ::geteuid())
    throw io_error(name + "belongs to another user; not written");
  if (S_ISREG(st.st_mode) && what_is_there == existing::empty && ::ftruncate(fd.get(), 0) != 0)
    throw io_error(name + errno_text(errno));
  if (::fcntl(fd.get(), F_SETFL, O_APPEND) != 0) throw io_error(name + errno_text(errno));
  return fd;
}

std::string make_private_folder(const std::string& prefix) {
  std::error_code ec;
  const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  std::string name = ((ec ? std::filesystem::path("/tmp") : tmp) / (prefix + "XXXXXX")).string();
  if (::mkdtemp(name.data()) == nullptr)  // mode 0700, created exclusively
    throw io_error("cannot create a folder " + name + ": " + errno_text(errno));
  return name;
}

}  // namespace kl
