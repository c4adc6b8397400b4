// SPDX-License-Identifier: MIT
/* `gpuspy export FILE`: timeline files. Written to a temporary file and renamed into place,
 * so a failed export never leaves a half-written OUT behind. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf/records.h"
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "lib/out_file.h"
#include "lib/value_parse.h"
#include "output/analysis/steps.h"
#include "output/export/export_chrome.h"
#include "output/export/export_cmd.h"
#include "output/export/export_kineto.h"
#include "output/export/export_kineto_ranks.h"
#include "output/export/export_sqlite.h"
#include "output/export/perfetto/export_perfetto.h"

static const char usage[] =
    "usage: gpuspy export FILE [--format chrome|kineto|perfetto|sqlite] [-o OUT]\n"
    "                          [--python-depth N] [--steps-by nvtx:NAME|py:FUNCTION|op:NAME]\n"
    "\n"
    "Convert a trace file into a timeline.\n"
    "\n"
    "  -f, --format FMT   chrome: Chrome Trace Event JSON, loadable in Perfetto UI\n"
    "                     (ui.perfetto.dev) and chrome://tracing (default)\n"
    "                     kineto: the same in PyTorch profiler's (Kineto's) dialect, for\n"
    "                     Holistic Trace Analysis and TensorBoard\n"
    "                     perfetto: the same events as Perfetto's native protobuf trace:\n"
    "                     streamed, a fraction of the size, for large recordings\n"
    "  -o, --output OUT   output file (default FILE with .json appended, .kineto.json for\n"
    "                     kineto, .perfetto-trace for perfetto; - for stdout); kineto of\n"
    "                     several ranks (RANK in the processes' environment): a directory\n"
    "                     of rank-N.json (FILE.kineto)\n"
    "  --python-depth N   Python frames kept in each event's python_stack arg, leafmost\n"
    "                     first (default 32; 0: no stacks in args, for smaller files)\n"
    "  --steps-by HOW     how a training step is marked instead of gpuspy finding it\n"
    "                     (ProfilerStep#N NVTX ranges, else the step loop in the Python\n"
    "                     stacks), as for the steps report: nvtx:NAME, each NVTX range\n"
    "                     whose name starts with NAME; py:FUNCTION, each call of a\n"
    "                     Python function; op:NAME, from each call of a PyTorch\n"
    "                     operator to the next. The steps are a \"steps\" track per process\n"
    "                     (chrome), or ProfilerStep#N annotations on the loop's thread\n"
    "                     (kineto) where the process has no ProfilerStep#N ranges\n"
    "  -h, --help         this help\n"
    "\n"
    "examples:\n"
    "  gpuspy export run.gpuspy -o run.json\n"
    "  gpuspy export run.gpuspy --format kineto -o traces/rank0.json\n"
    "  gpuspy export run.gpuspy --format perfetto   # run.gpuspy.perfetto-trace\n"
    "  gpuspy export run.gpuspy -o - | jq '.traceEvents | length'\n";

enum { OPT_STEPS_BY = 256 }; /* long options only: no short letter */

/* Perfetto's protobuf is the Chrome trace converted as it is written: one set of emitters */
static int export_perfetto_chrome(const char *path, const struct export_opts *opts, FILE *out,
				  char *err, size_t errlen)
{
	return export_perfetto(export_chrome, path, opts, out, err, errlen);
} /* long options only: no short letter */

typedef int (*exporter_fn)(const char *path, const struct export_opts *opts, FILE *out, char *err,
			   size_t errlen);

static int export_to_stdout(exporter_fn export, const char *path, const struct export_opts *opts)
{
	char err[256];

	if (export(path, opts, stdout, err, sizeof(err))) {
		gs_error("cannot read %s: %s", path, err);
		return GS_EXIT_BAD_TRACE;
	}
	return fflush(stdout) ? GS_EXIT_FAILURE : GS_EXIT_OK;
}

/* A temporary file next to OUT (OUT.XXXXXX, its name in tmp), once OUT is known to be one the
 * export may create (out_file_rename() checks again at the end): its fd, or -1 with the error
 * said and the exit code in *code. */
static int open_temp(const char *out_path, char *tmp, size_t len, int *code)
{
	char why[128];
	int fd;

	*code = GS_EXIT_FAILURE;
	if (strlen(out_path) + sizeof(".XXXXXX") > len) {
		gs_error("output path too long: %s", out_path);
		*code = GS_EXIT_USAGE;
		return -1;
	}
	if (out_file_check(out_path, why, sizeof(why))) {
		gs_error("cannot create %s: %s", out_path, why);
		return -1;
	}
	snprintf(tmp, len, "%s.XXXXXX", out_path);
	fd = mkstemp(tmp);
	if (fd < 0)
		gs_error("cannot create %s: %s", out_path, strerror(errno));
	return fd;
}

static int export_to_file(exporter_fn export, const char *path, const struct export_opts *opts,
			  const char *out_path)
{
	char tmp[4096], err[256], why[128];
	FILE *out;
	int fd, code, ret = GS_EXIT_OK;

	if ((fd = open_temp(out_path, tmp, sizeof(tmp), &code)) < 0)
		return code;
	if (!(out = fdopen(fd, "w"))) {
		gs_error("cannot create %s: %s", out_path, strerror(errno));
		close(fd);
		unlink(tmp);
		return GS_EXIT_FAILURE;
	}
	if (export(path, opts, out, err, sizeof(err))) {
		gs_error("cannot read %s: %s", path, err);
		ret = GS_EXIT_BAD_TRACE;
	}
	if (fclose(out) && !ret) {
		gs_error("cannot write %s: %s", out_path, strerror(errno));
		ret = GS_EXIT_FAILURE;
	}
	if (!ret && out_file_rename(tmp, out_path, why, sizeof(why))) {
		gs_error("cannot create %s: %s", out_path, why);
		ret = GS_EXIT_FAILURE;
	}
	if (ret)
		unlink(tmp);
	return ret;
}

/* The database is written by SQLite, which needs a path, not a stream: a temporary file next to
 * OUT, renamed into place when complete, as export_to_file() does for the JSON formats. */
static int export_to_db(const char *path, const struct export_opts *opts, const char *out_path)
{
	char tmp[4096], err[256], why[128];
	int fd, ret;

	if ((fd = open_temp(out_path, tmp, sizeof(tmp), &ret)) < 0)
		return ret;
	close(fd); /* SQLite opens it by name; an empty file is an empty database */
	ret = export_sqlite(path, opts, tmp, err, sizeof(err));
	if (ret == -1) {
		gs_error("cannot read %s: %s", path, err);
		ret = GS_EXIT_BAD_TRACE;
	} else if (ret) {
		gs_error("cannot write %s: %s", out_path, err);
		ret = GS_EXIT_FAILURE;
	} else if (out_file_rename(tmp, out_path, why, sizeof(why))) {
		gs_error("cannot create %s: %s", out_path, why);
		ret = GS_EXIT_FAILURE;
	}
	if (ret)
		unlink(tmp);
	return ret;
}

/* The directory of a multi-rank export: created (0700), or one of the caller's that exists;
 * never a symbolic link, nor someone else's, into which gpuspy (root) would write. */
static int rank_dir(const char *dir)
{
	struct stat st;

	if (!mkdir(dir, 0700))
		return 0;
	if (errno != EEXIST) {
		gs_error("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid()) {
		gs_error("cannot create %s: exists and is not a directory of yours", dir);
		return -1;
	}
	return 0;
}

/* `--format kineto` of a recording whose processes have two ranks or more (RANK in their
 * environment): a trace per rank, DIR/rank-N.json, each with its rank's processes only, the
 * directory Holistic Trace Analysis reads a job from. -1 when the recording is not one (one
 * file is written as usual), else the exit code. */
static int export_ranks(const char *path, struct export_opts *opts, const char *dir)
{
	struct kineto_ranks kr;
	char err[256], file[4096];
	int ret = GS_EXIT_OK;

	if (kineto_ranks_find(path, &kr, err, sizeof(err))) {
		gs_error("cannot read %s: %s", path, err);
		return GS_EXIT_BAD_TRACE;
	}
	if (kr.n < 2) {
		kineto_ranks_free(&kr);
		return -1;
	}
	if (!strcmp(dir, "-")) {
		gs_error("--format kineto of %zu ranks writes a directory: give -o DIR", kr.n);
		ret = GS_EXIT_USAGE;
	} else if (rank_dir(dir)) {
		ret = GS_EXIT_FAILURE;
	}
	for (size_t i = 0; i < kr.n && !ret; i++) {
		if (snprintf(file, sizeof(file), "%s/rank-%d.json", dir, kr.ranks[i].rank) >=
		    (int)sizeof(file)) {
			gs_error("output path too long: %s", dir);
			ret = GS_EXIT_USAGE;
			break;
		}
		opts->pids = &kr.ranks[i].filter;
		ret = export_to_file(export_kineto, path, opts, file);
	}
	opts->pids = NULL;
	if (!ret)
		fprintf(stderr, "gpuspy: wrote %zu ranks to %s\n", kr.n, dir);
	kineto_ranks_free(&kr);
	return ret;
}

int export_main(int argc, char **argv)
{
	static const struct option long_opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"output", required_argument, NULL, 'o'},
	    {"python-depth", required_argument, NULL, 'P'},
	    {"steps-by", required_argument, NULL, OPT_STEPS_BY},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *out_path = NULL, *suffix = ".json";
	exporter_fn export = export_chrome;
	struct export_opts opts = {.python_depth = EXPORT_PYTHON_DEPTH};
	bool sqlite = false;
	uint64_t depth;
	char default_out[4096];
	int c;

	optind = 1;
	opterr = 0; /* gs_option_error() says it in one line */
	while ((c = getopt_long(argc, argv, ":f:o:h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			sqlite = !strcmp(optarg, "sqlite");
			if (!strcmp(optarg, "kineto")) {
				export = export_kineto;
				suffix = ".kineto.json";
			} else if (!strcmp(optarg, "perfetto")) {
				export = export_perfetto_chrome;
				suffix = ".perfetto-trace";
			} else if (sqlite) {
				suffix = ".sqlite";
			} else if (strcmp(optarg, "chrome")) {
				return gs_bad_value("--format", optarg,
						    "chrome, kineto, perfetto or sqlite");
			}
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'P':
			if (gs_parse_u64(optarg, 0, GS_PY_MAX_FRAMES, &depth)) {
				gs_error("invalid value '%s' for --python-depth: expected 0 to %d",
					 optarg, GS_PY_MAX_FRAMES);
				return GS_EXIT_USAGE;
			}
			opts.python_depth = (size_t)depth;
			break;
		case OPT_STEPS_BY:
			if (!steps_by_valid(optarg))
				return gs_bad_value("--steps-by", optarg,
						    "nvtx:NAME, py:FUNCTION or op:NAME");
			opts.steps_by = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return GS_EXIT_OK;
		default:
			return gs_option_error("export", c, argv);
		}
	}
	if (optind != argc - 1) {
		gs_error(optind < argc ? "export takes one trace file"
				       : "export needs a trace file");
		return GS_EXIT_USAGE;
	}
	if (export == export_kineto) {
		int ret;

		/* a multi-rank job's default is a directory, FILE.kineto */
		if ((size_t)snprintf(default_out, sizeof(default_out), "%s.kineto", argv[optind]) >=
		    sizeof(default_out)) {
			gs_error("trace path too long: %s", argv[optind]);
			return GS_EXIT_USAGE;
		}
		ret = export_ranks(argv[optind], &opts, out_path ?: default_out);
		if (ret != -1)
			return ret;
	}
	if (!out_path) {
		if (strlen(argv[optind]) + strlen(suffix) + 1 > sizeof(default_out)) {
			gs_error("trace path too long: %s", argv[optind]);
			return GS_EXIT_USAGE;
		}
		strcpy(default_out, argv[optind]);
		strcat(default_out, suffix);
		out_path = default_out;
	}
	if (sqlite && !strcmp(out_path, "-")) {
		gs_error("--format sqlite cannot write to stdout: give -o FILE");
		return GS_EXIT_USAGE;
	}
	if (sqlite)
		return export_to_db(argv[optind], &opts, out_path);
	if (!strcmp(out_path, "-"))
		return export_to_stdout(export, argv[optind], &opts);
	return export_to_file(export, argv[optind], &opts, out_path);
}
