// SPDX-License-Identifier: MIT
/* gpuspy: subcommand dispatch, --help and --version. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "loader/live/serve_cmd.h"
#include "loader/live/top_cmd.h"
#include "loader/record/record_cmd.h"
#include "loader/session/privileges.h"
#include "output/export/export_cmd.h"
#include "output/report/report_cmd.h"
#include "output/report/report_registry.h"

struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

/* `gpuspy --help` lists these, and tests/cli.bats reads that list to check every command's
 * own --help: a command added here is covered there. */
static const struct command commands[] = {
    {"record", record_main,
     "trace a command (-- CMD), running processes (-p PID) or the host (-a)"},
    {"report", report_main, "print tables from a trace file (reports below)"},
    {"export", export_main,
     "convert a trace file to a timeline (Chrome trace JSON for Perfetto UI)"},
    {"top", top_main, "live view of the host's GPU users: GPU busy, launches, memory, CPU, waits"},
    {"serve", serve_main, "Prometheus exporter (/metrics) of the same, for fleets"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The registry's names, wrapped as the rest of the help is. */
static void print_report_names(FILE *out)
{
	size_t col = 0;

	for (size_t i = 0; report_all[i]; i++) {
		size_t n = strlen(report_all[i]->name) + (report_all[i + 1] ? 1 : 0);

		if (col && col + 1 + n > 90) {
			fputc('\n', out);
			col = 0;
		}
		col += (size_t)fprintf(out, "%s%s%s", col ? " " : "  ", report_all[i]->name,
				       report_all[i + 1] ? "," : "");
	}
	fputc('\n', out);
}

static void print_usage(FILE *out)
{
	fputs("usage: gpuspy [--version [-v]] [--help] <command> [<args>]\n"
	      "\n"
	      "An eBPF tracer for GPU and PyTorch workloads: OS-runtime activity, CUDA calls, GPU\n"
	      "work, Python stacks and PyTorch operators of any process, launched or already\n"
	      "running, as nsys-style tables and a Perfetto-loadable timeline.\n"
	      "\n"
	      "commands:\n",
	      out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\nreports ('gpuspy report --list' shows their columns):\n", out);
	print_report_names(out);
	fputs("\n"
	      "'gpuspy <command> --help' describes each command.\n"
	      "\n"
	      "examples:\n"
	      "  sudo gpuspy record -o run.gpuspy -- python3 train.py\n"
	      "  gpuspy report run.gpuspy\n"
	      "  gpuspy export run.gpuspy --format chrome -o run.json\n",
	      out);
}

static int print_version(bool verbose)
{
	printf("gpuspy %s\n", GPUSPY_VERSION);
	if (!verbose)
		return GS_EXIT_OK;
	printf("libbpf %u.%u\n", libbpf_major_version(), libbpf_minor_version());
	printf("kernel BTF: %s (%s)\n", privileges_btf_path(),
	       access(privileges_btf_path(), R_OK) ? "missing" : "found");
	printf("privileges: %s\n", geteuid() == 0 ? "root" : "not root");
	printf("ring buffer: %s\n", libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1
					? "supported"
					: "missing");
	printf("task storage: %s\n", libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1
					 ? "supported"
					 : "missing");
	return GS_EXIT_OK;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd || !strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		print_usage(cmd ? stdout : stderr);
		return cmd ? GS_EXIT_OK : GS_EXIT_USAGE;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		return print_version(argc > 2 && !strcmp(argv[2], "-v"));
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	gs_error("'%s' is not a gpuspy command (see 'gpuspy --help')", cmd);
	return GS_EXIT_USAGE;
}
