/* SPDX-License-Identifier: MIT */
/* Subcommand entry points; each returns the process exit code. */
#ifndef GPUSPY_COMMANDS_H
#define GPUSPY_COMMANDS_H

int record_main(int argc, char **argv);
int report_main(int argc, char **argv);
int export_main(int argc, char **argv);
int top_main(int argc, char **argv);
int serve_main(int argc, char **argv);

#endif /* GPUSPY_COMMANDS_H */
