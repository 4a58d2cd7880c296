#include "core/interrupt.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t received;

static void on_stop_signal(int signal_number) {
  if (received == 0) {
    received = signal_number;
  }
}

void tb_interrupt_install(void) {
  struct sigaction stop;
  memset(&stop, 0, sizeof stop);
  stop.sa_handler = on_stop_signal;
  /* SA_RESETHAND: the second signal takes its default action. SA_RESTART:
   * reads and waits in progress (git provenance, a worker's reply) go on. */
  stop.sa_flags = SA_RESETHAND | SA_RESTART;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGINT, &stop, NULL);
  sigaction(SIGTERM, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
}

int tb_interrupted(void) {
  return (int)received;
}

const char *tb_signal_name(int signal_number) {
  static char other[32];
  switch (signal_number) {
  case SIGINT: return "SIGINT";
  case SIGTERM: return "SIGTERM";
  default: snprintf(other, sizeof other, "signal %d", signal_number); return other;
  }
}
