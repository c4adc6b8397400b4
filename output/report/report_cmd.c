// SPDX-License-Identifier: MIT
/* `gpuspy report FILE`: tables from a trace file. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/exit_codes.h"
#include "lib/messages.h"
#include "lib/syscall_names.h"
#include "lib/text_escape.h"
#include "lib/value_parse.h"
#include "output/model/gpu/gpu_model.h"
#include "output/report/base/report.h"
#include "output/analysis/steps.h"
#include "output/analysis/stalls.h"
#include "output/report/base/report_groups.h"
#include "output/report/cuda/cuda_reports.h"
#include "output/report/gpu/gpu_reports.h"
#include "output/report/host/host_reports.h"
#include "output/report/report_cmd.h"
#include "output/report/report_registry.h"

#define MAX_REPORTS 32

enum { OPT_GROUP_BY_STACK = 256, OPT_GROUP_BY_INPUT_SHAPE, OPT_GROUP_BY, OPT_STEPS_BY };

static const char usage[] =
    "usage: gpuspy report FILE [--report NAME[,NAME...]]\n"
    "                          [--format text|csv|json|collapsed|collapsed-ns]\n"
    "                          [--sort KEY] [--limit N] [--group-by-stack N]\n"
    "                          [--group-by-input-shape]\n"
    "                          [--group-by process|container|user]\n"
    "                          [--steps-by nvtx:NAME|py:FUNCTION|op:NAME]\n"
    "\n"
    "Print tables from a trace file written by 'gpuspy record'.\n"
    "\n"
    "  -r, --report NAMES   reports to print (default summary,osrt_sum,offcpu,processes, and\n"
    "                       cuda_api_sum,cuda_launches,gpu_mem when CUDA calls were traced,\n"
    "                       cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,gpu_util when the CUPTI\n"
    "                       bridge recorded GPU work, ops when PyTorch operators were\n"
    "                       traced, python when Python threads were sampled)\n"
    "  -f, --format FMT     text (default), csv, or json (an array of row objects; with\n"
    "                       several reports, an object of arrays keyed by report name);\n"
    "                       collapsed: the python report's CPU samples as folded stacks\n"
    "                       for flame graphs (flamegraph.pl, speedscope), one line per\n"
    "                       stack, root first, weighted by samples; collapsed-ns: the\n"
    "                       same weighted by sampled CPU time in ns\n"
    "  -s, --sort KEY       sort by this column's JSON key, e.g. total_ns, calls, max_ns,\n"
    "                       name (numbers descending, text ascending)\n"
    "                       (torch.profiler's cpu_time_total, self_cpu_time_total,\n"
    "                       cuda_time_total, self_cuda_time_total and count name the ops\n"
    "                       report's columns)\n"
    "  -n, --limit N        print at most N rows per report\n"
    "      --group-by-stack N  ops: one row per operator and Python stack (its top N\n"
    "                       frames, shown as Source Location), as torch.profiler's\n"
    "                       key_averages(group_by_stack_n=N)\n"
    "      --group-by-input-shape  ops: one row per operator and input shapes (an\n"
    "                       Input Shapes column), as torch.profiler's\n"
    "                       key_averages(group_by_input_shape=True); shapes come from the\n"
    "                       in-process observer: without them, rows are by name (a warning)\n"
    "      --steps-by HOW   steps: how a step is marked instead of gpuspy finding it\n"
    "                       (ProfilerStep#N NVTX ranges, else the step loop in the Python\n"
    "                       stacks): nvtx:NAME, each NVTX range whose name starts with\n"
    "                       NAME; py:FUNCTION, each call of a Python function (its\n"
    "                       qualname, e.g. Trainer.training_step); op:NAME, from each\n"
    "                       call of a PyTorch operator to the next (aten::mm,\n"
    "                       Optimizer.step#SGD.step)\n"
    "      --group-by KIND  every report per process, per container (docker, containerd,\n"
    "                       cri-o, podman, Kubernetes pod, systemd service: parsed from\n"
    "                       the cgroup) or per user: text prints each group's tables in\n"
    "                       turn, csv and json add a leading group column; --limit is\n"
    "                       per group (reads the trace once per group)\n"
    "  -l, --list           list the reports and their columns\n"
    "  -h, --help           this help\n"
    "\n"
    "examples:\n"
    "  gpuspy report run.gpuspy\n"
    "  gpuspy report run.gpuspy --report osrt_thread --sort calls --limit 20\n"
    "  gpuspy report run.gpuspy --report osrt_sum --format json | jq '.[0]'\n"
    "  gpuspy report run.gpuspy --report cuda_api_errors,gpu_mem_blocks\n"
    "  gpuspy report run.gpuspy --report gpu_idle --limit 5\n"
    "  gpuspy report run.gpuspy --report python --limit 20\n"
    "  gpuspy report host.gpuspy --report cuda_api_sum --group-by container\n"
    "  gpuspy report run.gpuspy --format collapsed | flamegraph.pl > cpu.svg\n";

struct report_opts {
	const char *path;
	const struct report_def *reports[MAX_REPORTS];
	size_t nreports;
	enum table_format format;
	enum { FOLDED_NONE, FOLDED_SAMPLES, FOLDED_NS } folded; /* --format collapsed[-ns] */
	const char *sort;
	uint64_t limit; /* 0: no limit */
	struct report_params params;
	enum group_by group_by;
};

static int parse_reports(const char *arg, struct report_opts *o)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!copy)
		return GS_EXIT_FAILURE;
	o->nreports = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		const struct report_def *def = report_find(tok);

		if (!def) {
			gs_error("unknown report '%s' (see 'gpuspy report --list')", tok);
			ret = GS_EXIT_USAGE;
		} else if (o->nreports == MAX_REPORTS) {
			gs_error("too many reports (at most %d)", MAX_REPORTS);
			ret = GS_EXIT_USAGE;
		} else {
			o->reports[o->nreports++] = def;
		}
	}
	if (!ret && !o->nreports) {
		gs_error("--report needs at least one report name");
		ret = GS_EXIT_USAGE;
	}
	free(copy);
	return ret;
}

static int parse_format(const char *arg, struct report_opts *o)
{
	enum table_format *fmt = &o->format;

	o->folded = FOLDED_NONE;
	if (!strcmp(arg, "collapsed"))
		o->folded = FOLDED_SAMPLES;
	else if (!strcmp(arg, "collapsed-ns"))
		o->folded = FOLDED_NS;
	else if (!strcmp(arg, "text"))
		*fmt = TABLE_TEXT;
	else if (!strcmp(arg, "csv"))
		*fmt = TABLE_CSV;
	else if (!strcmp(arg, "json"))
		*fmt = TABLE_JSON;
	else
		return gs_bad_value("--format", arg, "text, csv, json, collapsed or collapsed-ns");
	return 0;
}

static void list_reports(void)
{
	for (size_t i = 0; report_all[i]; i++) {
		const struct report_def *r = report_all[i];

		printf("%-22s %s\n                       keys:", r->name, r->summary);
		for (size_t c = 0; c < r->ncols; c++)
			printf(" %s", r->cols[c].json_key);
		printf("\n");
	}
}

static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option long_opts[] = {
	    {"report", required_argument, NULL, 'r'},
	    {"format", required_argument, NULL, 'f'},
	    {"sort", required_argument, NULL, 's'},
	    {"limit", required_argument, NULL, 'n'},
	    {"list", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {"group-by-stack", required_argument, NULL, OPT_GROUP_BY_STACK},
	    {"group-by-input-shape", no_argument, NULL, OPT_GROUP_BY_INPUT_SHAPE},
	    {"group-by", required_argument, NULL, OPT_GROUP_BY},
	    {"steps-by", required_argument, NULL, OPT_STEPS_BY},
	    {0},
	};
	uint64_t v;
	int c, ret = 0;

	optind = 1;
	opterr = 0; /* gs_option_error() says it in one line */
	while (!ret && (c = getopt_long(argc, argv, ":r:f:s:n:lh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			ret = parse_reports(optarg, o);
			break;
		case 'f':
			ret = parse_format(optarg, o);
			break;
		case 's':
			o->sort = optarg;
			break;
		case 'n':
			if (gs_parse_u64(optarg, 1, UINT32_MAX, &o->limit))
				ret = gs_bad_value("--limit", optarg, "a positive number");
			break;
		case OPT_GROUP_BY_STACK:
			if (gs_parse_u64(optarg, 1, GS_PY_MAX_FRAMES, &v)) {
				gs_error(
				    "invalid value '%s' for --group-by-stack: expected a number "
				    "from 1 to %d",
				    optarg, GS_PY_MAX_FRAMES);
				ret = GS_EXIT_USAGE;
			}
			o->params.group_by_stack = (unsigned)v;
			break;
		case OPT_GROUP_BY_INPUT_SHAPE:
			o->params.group_by_input_shape = true;
			break;
		case OPT_GROUP_BY:
			o->group_by = group_by_parse(optarg);
			if (o->group_by == GROUP_NONE)
				ret = gs_bad_value("--group-by", optarg,
						   "process, container or user");
			break;
		case OPT_STEPS_BY:
			if (!steps_by_valid(optarg))
				ret = gs_bad_value("--steps-by", optarg,
						   "nvtx:NAME, py:FUNCTION or op:NAME");
			o->params.steps_by = optarg;
			break;
		case 'l':
			list_reports();
			return GS_EXIT_OK;
		case 'h':
			fputs(usage, stdout);
			return GS_EXIT_OK;
		default:
			return gs_option_error("report", c, argv);
		}
	}
	if (ret)
		return ret;
	if (optind != argc - 1) {
		gs_error(optind < argc ? "report takes one trace file"
				       : "report needs a trace file");
		return GS_EXIT_USAGE;
	}
	o->path = argv[optind];
	return -1;
}

static void print_cuda_header(const struct cuda_model *cm, FILE *out)
{
	if (!cm->calls && !cm->nlibs)
		return;
	fprintf(out,
		"cuda api calls: %llu, kernel launches: %llu, unnamed kernel launches: %llu, "
		"libraries probed: %llu\n",
		(unsigned long long)cm->calls, (unsigned long long)cm->launches,
		(unsigned long long)cm->unnamed_launches, (unsigned long long)cm->libs_probed);
}

/* The GPU totals, when the CUPTI bridge said anything: what it recorded and what did not join. */
static void print_gpu_header(const struct gpu_model *g, FILE *out)
{
	if (!g->records)
		return;
	fprintf(out,
		"gpu ops: %llu (kernels: %llu, memcpy: %llu, memset: %llu), syncs: %llu, "
		"nvtx: %llu\n",
		(unsigned long long)(g->counts[GPU_OP_KERNEL] + g->counts[GPU_OP_MEMCPY] +
				     g->counts[GPU_OP_MEMSET]),
		(unsigned long long)g->counts[GPU_OP_KERNEL],
		(unsigned long long)g->counts[GPU_OP_MEMCPY],
		(unsigned long long)g->counts[GPU_OP_MEMSET],
		(unsigned long long)g->counts[GPU_OP_SYNC], (unsigned long long)g->nvtx_records);
	fprintf(out,
		"gpu unmatched: %llu gpu records without api record, %llu api records without "
		"uprobe span, %llu launches without gpu record (gpu_unmatched)\n",
		(unsigned long long)g->unmatched_counts[GPU_UNMATCHED_OP],
		(unsigned long long)g->unmatched_counts[GPU_UNMATCHED_API],
		(unsigned long long)g->unmatched_counts[GPU_UNMATCHED_LAUNCH]);
	if (g->has_clock)
		fprintf(out, "gpu clock alignment error: max ±%llu ns\n",
			(unsigned long long)g->max_clock_error_ns);
}

static void print_losses(const struct trace_model *m, FILE *out)
{
	const struct gpu_model *g = &m->gpu;

	fprintf(out, "events lost: %llu\n", (unsigned long long)trace_model_loss_total(m));
	for (unsigned k = 0; k < GS_LOSS_NKINDS; k++)
		if (m->losses[k])
			fprintf(out, "  %llu %s\n", (unsigned long long)m->losses[k],
				gs_loss_kind_name(k));
	for (unsigned k = 0; k < GPU_LOSS_NKINDS; k++) {
		if (!gpu_loss_count(g, k))
			continue;
		fprintf(out, "  %llu %s", (unsigned long long)gpu_loss_count(g, k),
			gpu_loss_kind_name(k));
		if (k == GPU_LOSS_RECORDS && g->loss_batches)
			fprintf(out, ", in %llu batches", (unsigned long long)g->loss_batches);
		fputc('\n', out);
	}
}

/* How each process that maps a libtorch had its operators recorded (--ops), and why. */
static void print_ops_modes(const struct op_model *om, FILE *out)
{
	for (size_t i = 0; i < om->npids; i++) {
		const struct op_pid_calls *p = &om->pids[i];
		bool observed = p->load_outcome == GS_BRIDGE_LOAD_INJECTED ||
				p->load_outcome == GS_BRIDGE_LOAD_PRESENT;

		if (!p->load_outcome)
			continue;
		fprintf(out, "  pid %u: %s", p->pid, observed ? "in-process observer (" : "");
		text_print(out, p->load_message);
		fputs(observed ? ")\n" : "\n", out);
	}
}

/* The calls, and how many came from the in-process observer with what it could not pair. */
static void print_ops_header(const struct op_model *om, FILE *out)
{
	const struct {
		const char *what;
		uint64_t n;
	} notes[] = {
	    {"probed calls of those processes left out", om->uprobe_calls_ignored},
	    {"starts without an end", om->reader.unended},
	    {"ends without a start", om->reader.unstarted},
	    {"nested too deep", om->reader.too_deep},
	};
	uint64_t inprocess = 0;

	for (size_t i = 0; i < om->npids; i++)
		inprocess += om->pids[i].inprocess;
	fprintf(out, "pytorch operator calls: %llu", (unsigned long long)om->calls_seen);
	if (inprocess)
		fprintf(out, " (%llu in-process", (unsigned long long)inprocess);
	for (size_t i = 0; inprocess && i < sizeof(notes) / sizeof(notes[0]); i++)
		if (notes[i].n)
			fprintf(out, "; %s: %llu", notes[i].what, (unsigned long long)notes[i].n);
	fputs(inprocess ? ")\n" : "\n", out);
	print_ops_modes(om, out);
}

static void print_header(const struct trace_model *m, FILE *out)
{
	/* the command line is the traced program's own argv: escaped like any name */
	fputs("gpuspy trace: ", out);
	text_print(out, m->command);
	fputs(" (host ", out);
	text_print(out, m->header.hostname);
	fputs(", kernel ", out);
	text_print(out, m->header.kernel_release);
	fputs(")\n", out);
	fprintf(out, "duration: %.3f s, %llu syscall spans (>= %llu ns), %llu off-cpu spans\n",
		m->end_ts > m->start_ts ? (double)(m->end_ts - m->start_ts) / 1e9 : 0.0,
		(unsigned long long)m->spans, (unsigned long long)m->osrt_threshold_ns,
		(unsigned long long)m->offcpu_spans);
	if (!m->complete)
		fprintf(out, "statistics: %s\n",
			m->stats_ts ? "as of the last checkpoint (the recording did not finish)"
				    : "none (the recording did not reach a checkpoint)");
	print_cuda_header(&m->cuda, out);
	print_gpu_header(&m->gpu, out);
	if (m->ops.calls_seen || m->ops.npids)
		print_ops_header(&m->ops, out);
	print_losses(m, out);
}

/* torch.profiler's sort keys, for the reports that have no column of that name */
static const char *const sort_aliases[][2] = {
    {"cpu_time_total", "cpu_total_ns"},
    {"self_cpu_time_total", "self_cpu_ns"},
    {"cuda_time_total", "cuda_total_ns"},
    {"self_cuda_time_total", "self_cuda_ns"},
    {"count", "calls"},
};

static int sort_column(const struct table *t, const char *key)
{
	int col = table_column(t, key);

	for (size_t i = 0; col < 0 && i < sizeof(sort_aliases) / sizeof(sort_aliases[0]); i++)
		if (!strcmp(key, sort_aliases[i][0]))
			col = table_column(t, sort_aliases[i][1]);
	return col;
}

static int build_rows(const struct trace_model *m, const struct report_def *def,
		      const struct report_opts *o, struct table *t)
{
	if (def->build_params)
		return def->build_params(m, &o->params, t);
	return def->build_top ? def->build_top(m, o->limit, t) : def->build(m, t);
}

/* The report's rows, sorted and limited as asked. */
static int prepare_table(const struct trace_model *m, const struct report_def *def,
			 const struct report_opts *o, struct table *t)
{
	int col;

	table_init(t, def->cols, def->ncols);
	if (build_rows(m, def, o, t)) {
		table_free(t);
		gs_error("out of memory building report %s", def->name);
		return GS_EXIT_FAILURE;
	}
	/* --sort applies to the reports that have that column; the others keep their order */
	col = o->sort ? sort_column(t, o->sort) : -1;
	if (col < 0 && def->default_sort)
		col = table_column(t, def->default_sort);
	/* a report without a default sort key is built in its own order (time, device) */
	if (col >= 0)
		table_sort(t, col);
	if (o->limit)
		table_limit(t, o->limit);
	return 0;
}

static int print_report(const struct trace_model *m, const struct report_def *def,
			const struct report_opts *o, FILE *out)
{
	struct table t;

	if (prepare_table(m, def, o, &t))
		return GS_EXIT_FAILURE;
	if (o->format == TABLE_TEXT)
		fprintf(out, "\n** %s: %s\n\n", def->name, def->summary);
	if (o->format == TABLE_TEXT && def->print_text)
		def->print_text(m, &t, out);
	else
		table_print(&t, o->format, out);
	if (o->format != TABLE_JSON)
		fputc('\n', out);
	table_free(&t);
	return 0;
}

static bool sort_key_known(const struct report_opts *o)
{
	for (size_t i = 0; i < o->nreports; i++) {
		struct table t;

		table_init(&t, o->reports[i]->cols, o->reports[i]->ncols);
		if (sort_column(&t, o->sort) >= 0)
			return true;
	}
	return false;
}

static int print_reports(const struct trace_model *m, const struct report_opts *o)
{
	bool keyed = o->format == TABLE_JSON && o->nreports > 1;
	int ret = 0;

	if (o->format == TABLE_TEXT)
		print_header(m, stdout);
	else if (trace_model_loss_total(m))
		gs_warn("%llu events were lost while recording (see the text report)",
			(unsigned long long)trace_model_loss_total(m));
	if (keyed)
		fputc('{', stdout);
	for (size_t i = 0; i < o->nreports && !ret; i++) {
		if (keyed)
			printf("%s\"%s\": ", i ? ",\n" : "\n", o->reports[i]->name);
		ret = print_report(m, o->reports[i], o, stdout);
	}
	if (keyed)
		fputs("\n}", stdout);
	if (o->format == TABLE_JSON)
		fputc('\n', stdout);
	return ret;
}

static void default_reports(const struct trace_model *m, struct report_opts *o)
{
	o->reports[o->nreports++] = &report_summary; /* answers first, then the tables */
	o->reports[o->nreports++] = &report_osrt_sum;
	o->reports[o->nreports++] = &report_offcpu;
	o->reports[o->nreports++] = &report_processes;
	if (m->cuda.calls) {
		o->reports[o->nreports++] = &report_cuda_api_sum;
		o->reports[o->nreports++] = &report_cuda_launches;
		o->reports[o->nreports++] = &report_gpu_mem;
	}
	if (m->gpu.counts[GPU_OP_KERNEL] + m->gpu.counts[GPU_OP_MEMCPY] +
	    m->gpu.counts[GPU_OP_MEMSET]) {
		o->reports[o->nreports++] = &report_cuda_gpu_kern_sum;
		o->reports[o->nreports++] = &report_cuda_gpu_mem_time_sum;
		o->reports[o->nreports++] = &report_gpu_util;
	}
	if (m->ops.calls_seen)
		o->reports[o->nreports++] = &report_ops;
	if (m->py.counts[GS_PY_SAMPLE])
		o->reports[o->nreports++] = &report_python;
}

/* Folded stacks are not a table: only reports with stacks have them, and --sort and --limit
 * (row operations) mean nothing there. */
static int check_folded(struct report_opts *o)
{
	if (o->sort || o->limit) {
		gs_error("--sort and --limit do not apply to --format collapsed");
		return GS_EXIT_USAGE;
	}
	if (!o->nreports)
		o->reports[o->nreports++] = &report_python;
	for (size_t i = 0; i < o->nreports; i++) {
		if (!o->reports[i]->collapsed) {
			gs_error("report %s has no collapsed format (only python has)",
				 o->reports[i]->name);
			return GS_EXIT_USAGE;
		}
	}
	return 0;
}

static int print_folded(const struct trace_model *m, const struct report_opts *o)
{
	if (trace_model_loss_total(m))
		gs_warn("%llu events were lost while recording (see the text report)",
			(unsigned long long)trace_model_loss_total(m));
	/* an empty flame graph is otherwise indistinguishable from a failed one */
	if (!m->py.counts[GS_PY_SAMPLE])
		gs_warn("%s has no Python CPU samples (no Python process traced, --no-python or "
			"--sample-hz 0)",
			o->path);
	for (size_t i = 0; i < o->nreports; i++) {
		if (o->reports[i]->collapsed(m, o->folded == FOLDED_NS, stdout)) {
			gs_error("out of memory building report %s", o->reports[i]->name);
			return GS_EXIT_FAILURE;
		}
	}
	return 0;
}

/* The optional parts of the model (TRACE_MODEL_*) the reports read: the others' loads leave
 * them out, since they are most of a long recording's memory when Python processes ran. */
static unsigned model_needs(const struct report_opts *o)
{
	unsigned keep = 0;

	for (size_t i = 0; i < o->nreports; i++) {
		keep |= o->reports[i]->needs;
		if (o->reports[i] == &report_ops)
			keep |= TRACE_MODEL_OP_CALLS |
				(o->params.group_by_stack ? TRACE_MODEL_PY_STACKS : 0);
	}
	/* steps marked by an operator's calls need the calls */
	if ((keep & TRACE_MODEL_PY_STACKS) && o->params.steps_by &&
	    !strncmp(o->params.steps_by, "op:", 3))
		keep |= TRACE_MODEL_OP_CALLS;
	return keep;
}

/* The model with what the reports need: the default reports depend on what the trace holds,
 * so they are chosen from a load without the optional parts, loaded again when they need some. */
static int load_for_reports(struct report_opts *o, struct trace_model *m)
{
	bool defaults = !o->nreports;
	char err[256];

	if (trace_model_load_only(o->path, m, model_needs(o), err, sizeof(err)))
		goto fail;
	if (defaults)
		default_reports(m, o);
	if (defaults && model_needs(o)) {
		stalls_shared_release();
		trace_model_free(m);
		if (trace_model_load_only(o->path, m, model_needs(o), err, sizeof(err)))
			goto fail;
	}
	return 0;
fail:
	gs_error("cannot read %s: %s", o->path, err);
	return GS_EXIT_BAD_TRACE;
}

/* A group's report rows with the group's label in a leading column, appended to `all`. */
static int append_group_rows(struct table *all, const struct table *t, const char *label)
{
	for (size_t r = 0; r < t->nrows; r++) {
		const struct table_cell *src = &t->cells[r * t->ncols];
		struct table_cell *row = table_add_row(all);

		if (!row || table_set_str(&row[0], label))
			return -1;
		for (size_t c = 0; c < t->ncols; c++) {
			row[c + 1].u = src[c].u;
			row[c + 1].d = src[c].d;
			row[c + 1].empty = src[c].empty;
			if (src[c].s && table_set_str(&row[c + 1], src[c].s))
				return -1;
		}
	}
	return 0;
}

struct grouped_tables {
	struct table t[MAX_REPORTS];
	struct table_col *cols[MAX_REPORTS]; /* the group column, then the report's */
};

static int grouped_init(struct grouped_tables *g, const struct report_opts *o)
{
	static const struct table_col group_col = {"Group", "group", COL_STR};

	for (size_t i = 0; i < o->nreports; i++) {
		const struct report_def *def = o->reports[i];

		g->cols[i] = malloc((def->ncols + 1) * sizeof(*g->cols[i]));
		if (!g->cols[i])
			return -1;
		g->cols[i][0] = group_col;
		memcpy(&g->cols[i][1], def->cols, def->ncols * sizeof(*def->cols));
		table_init(&g->t[i], g->cols[i], def->ncols + 1);
	}
	return 0;
}

static void grouped_free(struct grouped_tables *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (g->cols[i])
			table_free(&g->t[i]);
		free(g->cols[i]);
	}
}

/* Each report's rows of one group's model, into the combined tables. */
static int add_group(struct grouped_tables *g, const struct trace_model *gm, const char *label,
		     const struct report_opts *o)
{
	struct table t;
	int err = 0;

	for (size_t i = 0; i < o->nreports && !err; i++) {
		if (prepare_table(gm, o->reports[i], o, &t))
			return GS_EXIT_FAILURE;
		err = append_group_rows(&g->t[i], &t, label);
		table_free(&t);
	}
	if (err)
		gs_error("out of memory building the grouped reports");
	return err ? GS_EXIT_FAILURE : 0;
}

static void print_grouped(const struct grouped_tables *g, const struct report_opts *o)
{
	bool keyed = o->format == TABLE_JSON && o->nreports > 1;

	if (keyed)
		fputc('{', stdout);
	for (size_t i = 0; i < o->nreports; i++) {
		if (keyed)
			printf("%s\"%s\": ", i ? ",\n" : "\n", o->reports[i]->name);
		table_print(&g->t[i], o->format, stdout);
		if (o->format != TABLE_JSON)
			fputc('\n', stdout);
	}
	if (keyed)
		fputs("\n}", stdout);
	if (o->format == TABLE_JSON)
		fputc('\n', stdout);
}

/* One group's model: the trace read for its processes only. */
static int load_group(const struct report_opts *o, const struct report_group *grp,
		      struct trace_model *gm)
{
	char err[256];

	if (!trace_model_load_filtered(o->path, gm, model_needs(o), &grp->filter, err, sizeof(err)))
		return 0;
	gs_error("cannot read %s: %s", o->path, err);
	return GS_EXIT_BAD_TRACE;
}

/* --group-by: text prints each group's header and tables in turn; csv and json print each
 * report once, its rows led by their group's label. */
static int print_groups(const struct trace_model *m, const struct report_opts *o)
{
	struct grouped_tables tables = {0};
	struct report_group *groups = NULL;
	size_t ngroups = 0;
	struct trace_model gm;
	int ret = 0;

	if (report_groups_build(m, o->group_by, &groups, &ngroups) ||
	    (o->format != TABLE_TEXT && grouped_init(&tables, o))) {
		gs_error("out of memory grouping the processes");
		ret = GS_EXIT_FAILURE;
	}
	for (size_t i = 0; i < ngroups && !ret; i++) {
		if ((ret = load_group(o, &groups[i], &gm)))
			break;
		if (o->format == TABLE_TEXT) {
			printf("\n=== %s ", group_by_name(o->group_by));
			text_print(stdout, groups[i].label); /* "PID COMM" */
			printf(" (%zu process%s) ===\n", groups[i].n, groups[i].n == 1 ? "" : "es");
			ret = print_reports(&gm, o);
		} else {
			ret = add_group(&tables, &gm, groups[i].label, o);
		}
		stalls_shared_release(); /* the next group's model has the same address */
		trace_model_free(&gm);
	}
	if (!ret && o->format != TABLE_TEXT)
		print_grouped(&tables, o);
	grouped_free(&tables, o->nreports);
	report_groups_free(groups, ngroups);
	return ret;
}

int report_main(int argc, char **argv)
{
	struct report_opts o = {.format = TABLE_TEXT};
	struct trace_model m;
	int ret = parse_args(argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.folded && (ret = check_folded(&o)))
		return ret;
	if (o.folded && o.group_by) {
		gs_error("--group-by does not apply to --format collapsed");
		return GS_EXIT_USAGE;
	}
	if ((ret = load_for_reports(&o, &m)))
		return ret;
	if (!m.complete)
		gs_warn("%s is truncated (the recording did not finish): showing what it holds",
			o.path);
	/* torch.profiler without record_shapes groups by name alone, silently: this says so */
	if (o.params.group_by_input_shape && !m.ops.calls_with_shapes)
		gs_warn(
		    "%s has no operator input shapes: --group-by-input-shape groups by name only",
		    o.path);
	/* the default reports are known once the trace is loaded */
	if (!o.folded && o.sort && !sort_key_known(&o)) {
		gs_error(
		    "no selected report has a column '%s' to sort by (see 'gpuspy report --list')",
		    o.sort);
		ret = GS_EXIT_USAGE;
	} else if (o.folded) {
		ret = print_folded(&m, &o);
	} else {
		ret = o.group_by ? print_groups(&m, &o) : print_reports(&m, &o);
	}
	stalls_shared_release();
	trace_model_free(&m);
	return ret;
}
