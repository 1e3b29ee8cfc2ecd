#include "core/interrupt.hpp"

#include <atomic>
#include <csignal>

namespace kl {
namespace {

// Written by the handler: a lock-free atomic is async-signal-safe.
std::atomic<int> asked{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_interrupt(int sig) {
  asked.store(sig);
  // The next one takes the default action: a user who presses Ctrl-C twice means it.
  std::signal(sig, SIG_DFL);
}

}  // namespace

void install_interrupt_handler() {
  static const bool installed = [] {
    std::signal(SIGINT, on_interrupt);
    std::signal(SIGTERM, on_interrupt);
    return true;
  }();
  (void)installed;
}

bool interrupt_requested() { return asked.load() != 0; }
int interrupt_signal() { return asked.load(); }
void ignore_interrupts() { std::signal(SIGINT, SIG_IGN); }
void request_interrupt_for_test(int signal) { asked.store(signal); }
void clear_interrupt_for_test() { asked.store(0); }

}  // namespace kl
