// SPDX-License-Identifier: MIT
/* gpuspy: subcommand dispatch, --help and --version. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "commands.h"
#include "privileges.h"

static const char usage[] =
    "usage: gpuspy [--version [-v]] [--help] <command> [<args>]\n"
    "\n"
    "An eBPF tracer for GPU and PyTorch workloads: OS-runtime activity of any process, launched\n"
    "or already running, as nsys-style tables and a Perfetto-loadable timeline.\n"
    "\n"
    "commands:\n"
    "  record   trace a command (-- CMD), running processes (-p PID) or the host (-a)\n"
    "  report   print tables from a trace file (osrt_sum, osrt_thread, offcpu, processes)\n"
    "  export   convert a trace file to a timeline (Chrome trace JSON for Perfetto UI)\n"
    "  top      live view of the host's GPU users: GPU busy, launches, memory, CPU, waits\n"
    "  serve    Prometheus exporter (/metrics) of the same, for fleets\n"
    "\n"
    "'gpuspy <command> --help' describes each command.\n"
    "\n"
    "examples:\n"
    "  sudo gpuspy record -o run.gpuspy -- python3 train.py\n"
    "  gpuspy report run.gpuspy\n"
    "  gpuspy export run.gpuspy --format chrome -o run.json\n";

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
		fputs(usage, cmd ? stdout : stderr);
		return cmd ? GS_EXIT_OK : GS_EXIT_USAGE;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		return print_version(argc > 2 && !strcmp(argv[2], "-v"));
	if (!strcmp(cmd, "record"))
		return record_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return report_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "export"))
		return export_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "top"))
		return top_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "serve"))
		return serve_main(argc - 1, argv + 1);
	gs_error("'%s' is not a gpuspy command (see 'gpuspy --help')", cmd);
	return GS_EXIT_USAGE;
}
