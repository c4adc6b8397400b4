/* SPDX-License-Identifier: MIT */
/* `gpuspy serve`: the Prometheus exporter of the live view. */
#ifndef GPUSPY_SERVE_CMD_H
#define GPUSPY_SERVE_CMD_H

/* argv[0] is "serve"; returns the process exit code (lib/exit_codes.h). */
int serve_main(int argc, char **argv);

#endif /* GPUSPY_SERVE_CMD_H */
