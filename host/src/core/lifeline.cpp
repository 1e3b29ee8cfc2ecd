#include "core/lifeline.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace kl {

int lifeline_read_end() {
  static const int read_end = [] {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return -1;
    // Above 9, so that no spawn's dup2 onto lifeline_fd is a dup2 of a descriptor onto itself
    // (which would leave it close-on-exec). The write end is never closed: it is the lifeline.
    const int read_end = ::fcntl(ends[0], F_DUPFD_CLOEXEC, 10);
    ::close(ends[0]);
    return read_end;
  }();
  return read_end;
}

void die_with_parent() {
  struct stat st {};
  if (::fstat(lifeline_fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  std::thread([] {
    pollfd p{lifeline_fd, POLLIN, 0};
    // Nothing is ever written: poll returns when the last write end, kernlab's, is gone.
    while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    ::kill(::getpid(), SIGKILL);
  }).detach();
}

}  // namespace kl
