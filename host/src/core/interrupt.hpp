// Ctrl-C during a sweep or a tune. The first SIGINT (or SIGTERM) asks the run to stop after the
// row in flight, so that every row measured so far is reported and written; a second one ends
// kernlab at once (the signal's default action). The child processes (worker, compile child,
// plugin probe) ignore SIGINT: kernlab decides when they stop, and a row in flight is never
// reported as a crash because the terminal's Ctrl-C reached its worker too.
#pragma once

namespace kl {

/// Installs the handlers for SIGINT and SIGTERM (once per process; later calls do nothing).
void install_interrupt_handler();
/// Whether a stop was asked for since the handler was installed.
bool interrupt_requested();
/// The signal that asked (SIGINT, SIGTERM), 0 when none did.
int interrupt_signal();
/// For child processes: SIGINT is ignored, SIGTERM keeps its default action.
void ignore_interrupts();
/// For tests: asks for a stop as the signal would, or forgets that one was asked.
void request_interrupt_for_test(int signal);
void clear_interrupt_for_test();

}  // namespace kl
