/* SPDX-License-Identifier: MIT */
/* `gpuspy export`: converts a trace file to a timeline. */
#ifndef GPUSPY_EXPORT_CMD_H
#define GPUSPY_EXPORT_CMD_H

/* argv[0] is "export"; returns the process exit code (lib/exit_codes.h). */
int export_main(int argc, char **argv);

#endif /* GPUSPY_EXPORT_CMD_H */
