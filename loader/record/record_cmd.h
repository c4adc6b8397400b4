/* SPDX-License-Identifier: MIT */
/* `gpuspy record`: traces a command, running processes or the host into a trace file. */
#ifndef GPUSPY_RECORD_CMD_H
#define GPUSPY_RECORD_CMD_H

/* argv[0] is "record"; returns the process exit code (lib/exit_codes.h). */
int record_main(int argc, char **argv);

#endif /* GPUSPY_RECORD_CMD_H */
