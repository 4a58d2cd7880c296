/* SIGINT and SIGTERM stop a campaign between cases instead of killing the
 * process: the case in flight finishes, the rest are recorded as missing and
 * the results file is written, marked incomplete. A second signal of the
 * same kind kills at once (the handler is reset after the first). SIGPIPE
 * is ignored, so a worker that dies turns a write into EPIPE, an error the
 * provider reports, rather than killing the harness. */
#ifndef TB_CORE_INTERRUPT_H
#define TB_CORE_INTERRUPT_H

void tb_interrupt_install(void);

/* The signal that asked the run to stop (SIGINT, SIGTERM), or 0. */
int tb_interrupted(void);

/* "SIGINT", "SIGTERM" or "signal N". */
const char *tb_signal_name(int signal_number);

#endif
