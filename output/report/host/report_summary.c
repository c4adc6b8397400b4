// SPDX-License-Identifier: MIT
/* summary: one screen of answers before the tables: the steps, where their time went, the
 * GPU's busy share and the top stalls with their evidence and advice (output/analysis/stalls.h). */
#include <stdio.h>
#include <stdlib.h>
#include "lib/exact_stats.h"
#include "lib/messages.h"
#include "output/analysis/stalls.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

#define FINDINGS_SHOWN	3
#define FINDING_MIN_PCT 1.0 /* below this a finding is noise, not an answer */
#define PROCESSES_SHOWN 4   /* a host-wide recording: the rest are counted */
#define TEXT_LEN	1024

enum { C_TOPIC, C_ANSWER, C_EVIDENCE, C_ADVICE, C_NCOLS };

static const struct table_col cols[] = {
    [C_TOPIC] = {"Topic", "topic", COL_STR},
    [C_ANSWER] = {"Answer", "answer", COL_STR},
    [C_EVIDENCE] = {"Evidence", "evidence", COL_STR},
    [C_ADVICE] = {"Advice", "advice", COL_STR},
};

static int add_row(struct table *t, const char *topic, const char *answer, const char *evidence,
		   const char *advice)
{
	struct table_cell *row = table_add_row(t);

	return !row || table_set_str(&row[C_TOPIC], topic) ||
	       table_set_str(&row[C_ANSWER], answer) || table_set_str(&row[C_EVIDENCE], evidence) ||
	       table_set_str(&row[C_ADVICE], advice);
}

/* Nearest-rank percentile p of a process's step durations, in ms. */
static double step_ms(const struct step_times *st, const struct step_origin *o, unsigned p)
{
	uint64_t *d = malloc((o->n + 1) * sizeof(*d)), v;

	if (!d)
		return 0;
	for (size_t i = 0; i < o->n; i++)
		d[i] = st->t[o->first + i].wall_ns;
	sort_u64(d, o->n);
	v = sorted_percentile(d, o->n, p);
	free(d);
	return (double)v / 1e6;
}

static int add_steps(const struct stalls *s, struct table *t)
{
	const struct step_list *l = &s->st.steps;
	char answer[TEXT_LEN], how[TEXT_LEN];

	if (s->st.whole_recording || !l->norigins)
		return add_row(
		    t, "steps",
		    "none found: shares are of each process's main thread over the "
		    "recording",
		    "no ProfilerStep#N NVTX ranges and no step loop in the Python stacks "
		    "(--steps-by names one)",
		    "");
	for (size_t i = 0; i < l->norigins && i < PROCESSES_SHOWN; i++) {
		const struct step_origin *o = &l->origins[i];

		snprintf(answer, sizeof(answer), "%zu in pid %u, median %.1f ms, p90 %.1f ms", o->n,
			 o->pid, step_ms(&s->st, o, 50), step_ms(&s->st, o, 90));
		snprintf(how, sizeof(how), "found by %s", o->how);
		if (add_row(t, "steps", answer, how, ""))
			return -1;
	}
	if (l->norigins > PROCESSES_SHOWN) {
		snprintf(answer, sizeof(answer), "and %zu more processes with steps",
			 l->norigins - PROCESSES_SHOWN);
		return add_row(t, "steps", answer, "--report steps lists them", "");
	}
	return 0;
}

/* Each kind's share of the steps' time, largest first. */
static int add_time(const struct stalls *s, struct table *t)
{
	uint64_t ns[STALL_NKINDS] = {0};
	char answer[TEXT_LEN];
	size_t len = 0;
	bool used[STALL_NKINDS] = {0};

	for (size_t i = 0; i < s->st.steps.n; i++)
		for (int k = 0; k < STALL_NKINDS; k++)
			ns[k] += s->st.t[i].ns[k];
	answer[0] = '\0';
	for (int shown = 0; shown < STALL_NKINDS && s->wall_ns; shown++) {
		int best = -1;

		for (int k = 0; k < STALL_NKINDS; k++)
			if (!used[k] && (best < 0 || ns[k] > ns[best]))
				best = k;
		used[best] = true;
		if (ns[best] * 100 < s->wall_ns) /* under 1%: not worth a word */
			break;
		len += (size_t)snprintf(answer + len, sizeof(answer) - len, "%s%s %.0f%%",
					len ? ", " : "", stall_kind_name((enum stall_kind)best),
					100.0 * (double)ns[best] / (double)s->wall_ns);
		if (len >= sizeof(answer))
			break;
	}
	return add_row(t, "time", *answer ? answer : "nothing measured",
		       "each instant of the loop thread sorted by its CUDA call, syscall, off-CPU "
		       "reason and Python frame",
		       "");
}

static int add_gpu(const struct stalls *s, struct table *t)
{
	uint64_t busy = 0, wall = 0;
	char answer[TEXT_LEN];

	for (size_t i = 0; i < s->st.steps.n; i++)
		if (s->st.t[i].has_gpu) {
			busy += s->st.t[i].gpu_busy_ns;
			wall += s->st.t[i].wall_ns;
		}
	if (!wall)
		return add_row(t, "gpu", "no GPU work recorded in the steps",
			       "no kernels, copies or memsets from the CUPTI bridge", "");
	snprintf(answer, sizeof(answer), "busy %.0f%% of the steps' time",
		 100.0 * (double)busy / (double)wall);
	return add_row(t, "gpu", answer, "the union of kernels, copies and memsets in each step",
		       "");
}

static int add_findings(const struct stalls *s, struct table *t)
{
	char topic[32], answer[TEXT_LEN], evidence[2 * TEXT_LEN];

	for (size_t i = 0; i < s->n && i < FINDINGS_SHOWN; i++) {
		const struct stall_finding *f = &s->v[i];

		if (f->share_pct < FINDING_MIN_PCT)
			break;
		snprintf(topic, sizeof(topic), "finding %zu", i + 1);
		snprintf(answer, sizeof(answer), "%s %.1f%% of the %s%s%s",
			 stall_kind_name(f->kind), f->share_pct,
			 s->st.whole_recording ? "main threads' time" : "steps' time",
			 *f->where ? " at " : "", f->where);
		snprintf(evidence, sizeof(evidence), "%s (pid %s)%s%s", f->what, f->pids,
			 *f->cause ? "; cause: " : "", f->cause);
		if (add_row(t, topic, answer, evidence, f->advice))
			return -1;
	}
	return 0;
}

static int build_params(const struct trace_model *m, const struct report_params *p, struct table *t)
{
	char err[256];
	const struct stalls *s = stalls_shared(m, p->steps_by, err, sizeof(err));

	if (!s) {
		gs_error("summary: %s", err);
		return -1;
	}
	return add_steps(s, t) || add_time(s, t) || add_gpu(s, t) || add_findings(s, t) ? -1 : 0;
}

/* Text: one line a row, what and why under it, as a reader scans an answer. */
static void print_text(const struct trace_model *m, const struct table *t, FILE *out)
{
	(void)m;
	for (size_t r = 0; r < t->nrows; r++) {
		const struct table_cell *row = &t->cells[r * t->ncols];

		fprintf(out, "  %-10s %s\n", row[C_TOPIC].s, row[C_ANSWER].s);
		if (row[C_TOPIC].s[0] == 'f') { /* findings: their evidence and advice */
			fprintf(out, "  %-10s   %s\n", "", row[C_EVIDENCE].s);
			fprintf(out, "  %-10s   advice: %s\n", "", row[C_ADVICE].s);
		}
	}
}

const struct report_def report_summary = {
    .name = "summary",
    .summary = "answers first: the training steps, where their time went, the GPU's busy "
	       "share and the top stalls with their evidence and advice",
    .cols = cols,
    .ncols = C_NCOLS,
    .build_params = build_params,
    .print_text = print_text,
    .needs = TRACE_MODEL_PY_STACKS,
};
