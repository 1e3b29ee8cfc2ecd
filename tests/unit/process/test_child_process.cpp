// core/child_process: the one launcher of kernlab's children (worker, probe, compile child,
// programs run to their end), without a GPU.
#include "core/child_process.hpp"
#include "core/unique_fd.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>

namespace kl {
namespace {

using namespace std::chrono_literals;

TEST(ChildProcess, ItsDescriptorsAreTheOnesGivenAndItsExitIsSaid) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  unique_fd read_end(fds[0]), write_end(fds[1]);
  child_process child({"sh", "-c", "echo hello; echo oops >&2; exit 3"},
                      {{write_end.get(), 1}, {1, 2}});
  write_end.reset();  // the child's copy is the only writer now
  const auto status = child.wait_until(std::chrono::steady_clock::now() + 10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(describe_exit(*status), "exited with code 3");
  EXPECT_FALSE(child.running());
  std::string out;
  char buf[64];
  for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) > 0;) out.append(buf, n);
  EXPECT_EQ(out, "hello\noops\n") << "stdout on the pipe, stderr copied onto it";
}

TEST(ChildProcess, OneStillRunningIsKilledAndReapedWhenItGoes) {
  pid_t pid = -1;
  {
    child_process child({"sleep", "30"}, {});
    pid = child.pid();
    ASSERT_GT(pid, 0);
    EXPECT_FALSE(child.poll());
    EXPECT_FALSE(child.wait_until(std::chrono::steady_clock::now() + 20ms));
  }
  // Reaped: not even a zombie is left to signal.
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  child_process killed({"sleep", "30"}, {});
  EXPECT_EQ(describe_exit(killed.kill_and_wait()), "killed by signal 9 (Killed)");
  EXPECT_EQ(describe_exit(killed.kill_and_wait()), "killed by signal 9 (Killed)")
      << "asked again, the same end";
}

TEST(ChildProcess, AProgramThatCannotStartIsAnErrorNamingIt) {
  try {
    child_process child({"/nonexistent/program", "x"}, {});
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot start /nonexistent/program: ", 0), 0u)
        << e.what();
  }
  EXPECT_THROW(child_process({}, {}), std::runtime_error);
}

TEST(ChildProcess, TheChildGetsSigpipeBackWhileKernlabIgnoresIt) {
  // A child writing to a pipe nobody reads dies of SIGPIPE, as a program normally does.
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  unique_fd read_end(fds[0]), write_end(fds[1]);
  read_end.reset();
  child_process child({"sh", "-c", "sleep 0.1; echo x"}, {{write_end.get(), 1}});
  write_end.reset();
  const auto status = child.wait_until(std::chrono::steady_clock::now() + 10s);
  ASSERT_TRUE(status);
  EXPECT_EQ(describe_exit(*status), "killed by signal 13 (Broken pipe)");
  struct sigaction now {};
  ::sigaction(SIGPIPE, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_IGN) << "kernlab ignores it once it has started a child";
}

}  // namespace
}  // namespace kl
