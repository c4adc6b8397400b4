/* SPDX-License-Identifier: MIT */
/* `gpuspy record`: traces a command, running processes or the host into a trace file. */
#ifndef GPUSPY_RECORD_CMD_H
#define GPUSPY_RECORD_CMD_H

#include <stddef.h>
#include <sys/types.h>
#include "loader/record/recorder.h"

/* argv[0] is "record"; returns the process exit code (lib/exit_codes.h). */
int record_main(int argc, char **argv);

/* The rest is shared with the live views (loader/live/live_cmd.c), which record through the
 * same lifecycle. */

/* What must hold before any BPF work, for record and the live views alike: privileges, BTF,
 * and -p pids that exist and are processes, not threads. `verb` says what a missing pid
 * refuses ("attach to": "cannot attach to pid N: no such process"). 0, or an exit code
 * (message printed). */
int recorder_check_environment(const pid_t *pids, size_t npids, const char *verb);
/* A recording into the writer the caller opened (a sink, for live views): targets, probes,
 * the poll loop until a signal, -d or the targets' exit, calling on_tick after each
 * checkpoint, then detach and the final statistics. An exit code; the caller frees with
 * recorder_cleanup(). */
int recorder_run_live(struct recorder *r);
void recorder_cleanup(struct recorder *r);
void recorder_install_signal_handlers(void);

#endif /* GPUSPY_RECORD_CMD_H */
