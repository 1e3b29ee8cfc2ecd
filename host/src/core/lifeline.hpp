// Children die with kernlab, however kernlab ends (Ctrl-C twice, SIGTERM, SIGKILL, a crash).
//
// kernlab holds the write end of one pipe, the lifeline, for its whole life and never writes to
// it; every child it starts of its own binary (`--compile-child`, `--probe-plugin`, `--worker`,
// under compute-sanitizer or ncu too) gets the read end on descriptor lifeline_fd. When kernlab
// is gone, so is the last write end, and the read end reports a hang-up: the child, watching it
// from a thread of its own (die_with_parent()), kills itself. Unlike PR_SET_PDEATHSIG, which
// fires when the *thread* that started the child ends (a worker is started by a short-lived
// thread with --devices), the pipe follows the process; and a kernlab that dies before the child
// starts watching has already closed its end, so the child sees it at once: no race.
#pragma once

namespace kl {

/// The descriptor a child finds the lifeline on (0-2 are its standard streams, 3-4 a worker's
/// frames).
inline constexpr int lifeline_fd = 5;

/// The parent's side: the read end of the lifeline (made on the first call, close-on-exec, above
/// descriptor 9), for a spawn to dup2 onto lifeline_fd in the child; -1 if no pipe could be made
/// (then children are not tied to kernlab).
int lifeline_read_end();

/// The child's side, first thing in its main(): when lifeline_fd is a pipe, a thread of its own
/// waits for its hang-up and then kills this process (SIGKILL). Started by hand, without a
/// lifeline, a child runs as it always did.
void die_with_parent();

}  // namespace kl
