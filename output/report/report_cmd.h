/* SPDX-License-Identifier: MIT */
/* `gpuspy report`: prints tables from a trace file. */
#ifndef GPUSPY_REPORT_CMD_H
#define GPUSPY_REPORT_CMD_H

/* argv[0] is "report"; returns the process exit code (lib/exit_codes.h). */
int report_main(int argc, char **argv);

#endif /* GPUSPY_REPORT_CMD_H */
