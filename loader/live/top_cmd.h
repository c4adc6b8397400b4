/* SPDX-License-Identifier: MIT */
/* `gpuspy top`: the live view of the host's GPU users. */
#ifndef GPUSPY_TOP_CMD_H
#define GPUSPY_TOP_CMD_H

/* argv[0] is "top"; returns the process exit code (lib/exit_codes.h). */
int top_main(int argc, char **argv);

#endif /* GPUSPY_TOP_CMD_H */
