// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/syscall_class.h"
#include "loader/live/serve_metrics.h"
#include "output/trace/trace_format.h"

#define NWORDS (sizeof(struct live_counters) / sizeof(uint64_t))

/* One process or group as the slots see it. */
struct entity {
	bool *slotted;
	struct live_counters *base, *shown; /* counted in "other" from base; exported up to shown */
	const struct live_counters *c;
	bool cuda;
	uint64_t activity; /* over the last interval: CPU, CUDA API, GPU and syscall time */
};

void serve_metrics_init(struct serve_metrics *sm, size_t max_series, double interval_s,
			double grace_s)
{
	memset(sm, 0, sizeof(*sm));
	sm->max_series = max_series;
	sm->interval_s = interval_s;
	sm->grace_s = grace_s;
}

void serve_metrics_free(struct serve_metrics *sm)
{
	prom_buf_free(&sm->labels);
	free(sm->label_at);
	sm->label_at = NULL;
	sm->label_cap = 0;
}

/* into += c - base, field by field (every field of live_counters is a u64 count) */
static void add_diff(struct live_counters *into, const struct live_counters *c,
		     const struct live_counters *base)
{
	uint64_t *dst = (uint64_t *)into;
	const uint64_t *now = (const uint64_t *)c, *then = (const uint64_t *)base;

	for (size_t i = 0; i < NWORDS; i++)
		dst[i] += now[i] >= then[i] ? now[i] - then[i] : 0;
}

void serve_metrics_on_leave(void *ctx, enum live_kind kind, bool slotted,
			    const struct live_counters *c, const struct live_counters *base)
{
	struct serve_metrics *sm = ctx;

	if (!slotted)
		add_diff(&sm->other_departed[kind], c, base);
}

static uint64_t busy_time(const struct live_counters *c)
{
	uint64_t t = c->cpu_ns + c->api_ns + c->gpu_busy_ns;

	for (int k = 0; k < SC_NCLASSES; k++)
		t += c->syscall_ns[k];
	return t;
}

static int cmp_candidates(const void *a, const void *b)
{
	const struct entity *x = *(const struct entity *const *)a;
	const struct entity *y = *(const struct entity *const *)b;

	if (x->cuda != y->cuda)
		return x->cuda ? -1 : 1;
	return (x->activity < y->activity) - (x->activity > y->activity);
}

/* The slotted entity without CUDA that did least, or NULL. */
static struct entity *least_busy_plain(struct entity *e, size_t n)
{
	struct entity *least = NULL;

	for (size_t i = 0; i < n; i++)
		if (*e[i].slotted && !e[i].cuda && (!least || e[i].activity < least->activity))
			least = &e[i];
	return least;
}

/* Gives free slots to the busiest unslotted entities (CUDA first); a CUDA entity without a
 * slot takes one from the least busy entity without CUDA. What "other" has exported of a
 * promoted entity stays in other_departed; a demoted one counts in "other" from its current
 * values on. */
static int assign_slots(struct serve_metrics *sm, enum live_kind kind, struct entity *e, size_t n)
{
	struct entity **cand = malloc((n ? n : 1) * sizeof(*cand));
	size_t ncand = 0, used = 0;

	if (!cand)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (*e[i].slotted)
			used++;
		else
			cand[ncand++] = &e[i];
	}
	qsort(cand, ncand, sizeof(*cand), cmp_candidates);
	for (size_t i = 0; i < ncand; i++) {
		struct entity *victim = NULL;

		if (used >= sm->max_series &&
		    (!cand[i]->cuda || !(victim = least_busy_plain(e, n))))
			break;
		if (victim) {
			*victim->slotted = false;
			*victim->base = *victim->shown = *victim->c;
			used--;
		}
		add_diff(&sm->other_departed[kind], cand[i]->shown, cand[i]->base);
		*cand[i]->slotted = true;
		used++;
	}
	free(cand);
	return 0;
}

static void sum_other(struct serve_metrics *sm, enum live_kind kind, const struct entity *e,
		      size_t n)
{
	sm->other_sum[kind] = sm->other_departed[kind];
	for (size_t i = 0; i < n; i++) {
		if (*e[i].slotted)
			continue;
		add_diff(&sm->other_sum[kind], e[i].c, e[i].base);
		*e[i].shown = *e[i].c;
	}
}

static struct entity *process_entities(struct live_model *lm)
{
	struct entity *e = calloc(lm->nprocs ? lm->nprocs : 1, sizeof(*e));

	for (size_t i = 0; e && i < lm->nprocs; i++) {
		struct live_proc *p = &lm->procs[i];

		e[i] = (struct entity){&p->slotted,
				       &p->base,
				       &p->shown,
				       &p->c,
				       p->mode != LIVE_MODE_NONE,
				       busy_time(&p->c) - busy_time(&p->prev)};
	}
	return e;
}

static struct entity *group_entities(struct live_group *g, size_t n)
{
	struct entity *e = calloc(n ? n : 1, sizeof(*e));

	for (size_t i = 0; e && i < n; i++) {
		uint64_t now = busy_time(&g[i].sum), before = busy_time(&g[i].prev_sum);

		e[i] = (struct entity){&g[i].slotted,
				       &g[i].base,
				       &g[i].shown,
				       &g[i].sum,
				       g[i].sum.api_calls > 0,
				       now > before ? now - before : 0};
	}
	return e;
}

/* One counter or gauge of struct live_counters, or an array of them by a label. */
struct metric {
	const char *suffix, *type, *help;
	size_t offset;
	double scale;	      /* ns to seconds, or 1 */
	const char *sublabel; /* NULL: a single value */
	unsigned n;	      /* values under sublabel */
	const char *(*subname)(unsigned i);
	bool gpu; /* from kernel records: an estimate under --gpu-sample */
};

static const char *class_name(unsigned i)
{
	return syscall_class_name((enum syscall_class)i);
}

static const char *reason_name(unsigned i)
{
	return gs_offcpu_reason_name(i);
}

static const char *direction_name(unsigned i)
{
	static const char *const names[GS_COPY_NKINDS] = {"htoh", "htod", "dtoh", "dtod",
							  "default"};

	return names[i];
}

#define AT(member) offsetof(struct live_counters, member)

static const struct metric metrics[] = {
    {"cuda_api_calls_total", "counter", "outermost CUDA runtime and driver API calls (uprobes)",
     AT(api_calls), 1, NULL, 0, NULL, false},
    {"cuda_api_errors_total", "counter",
     "CUDA API calls other than launches that returned an error", AT(api_errors), 1, NULL, 0, NULL,
     false},
    {"cuda_api_seconds_total", "counter", "time spent inside CUDA API calls other than launches",
     AT(api_ns), 1e-9, NULL, 0, NULL, false},
    {"cuda_launches_total", "counter", "kernel and graph launches (driver launch calls)",
     AT(launches), 1, NULL, 0, NULL, false},
    {"gpu_kernels_total", "counter",
     "kernels the GPU ran (CUPTI bridge active only; estimated where labelled sampled)",
     AT(kernels), 1, NULL, 0, NULL, true},
    {"gpu_busy_seconds_total", "counter",
     "time at least one kernel ran, per device union (CUPTI bridge active only; estimated where "
     "labelled sampled)",
     AT(gpu_busy_ns), 1e-9, NULL, 0, NULL, true},
    {"cuda_copy_bytes_total", "counter", "bytes copied by CUDA memcpy calls, by direction",
     AT(copy_bytes), 1, "direction", GS_COPY_NKINDS, direction_name, false},
    {"cuda_memset_bytes_total", "counter", "bytes set by CUDA memset calls", AT(memset_bytes), 1,
     NULL, 0, NULL, false},
    {"syscalls_total", "counter", "system calls, by class", AT(syscalls), 1, "class", SC_NCLASSES,
     class_name, false},
    {"syscall_seconds_total", "counter", "time in system calls, by class", AT(syscall_ns), 1e-9,
     "class", SC_NCLASSES, class_name, false},
    {"offcpu_seconds_total", "counter", "time threads spent off CPU, by reason", AT(offcpu_ns),
     1e-9, "reason", GS_OFFCPU_NREASONS, reason_name, false},
    {"cpu_seconds_total", "counter", "user and system CPU time of its threads", AT(cpu_ns), 1e-9,
     NULL, 0, NULL, false},
};

static uint64_t value_at(const struct live_counters *c, size_t offset, unsigned i)
{
	uint64_t v;

	memcpy(&v, (const char *)c + offset + i * sizeof(uint64_t), sizeof(v));
	return v;
}

/* The label that marks a GPU figure as an estimate, and the factor from what the windows saw
 * to it (gpu_sample.h): only under --gpu-sample, so series are unchanged without it. */
static double gpu_mark(const struct live_model *lm, struct prom_label *at)
{
	if (!gpu_sample_is_sampled(&lm->sample))
		return 1.0;
	*at = (struct prom_label){"sampled", lm->sample.label};
	return gpu_sample_scale(&lm->sample);
}

/* Samples of one metric for one series' labels (with room for one more). */
static void emit(struct prom_buf *b, const char *name, const struct metric *m,
		 struct prom_label *labels, size_t nlabels, const struct live_counters *c,
		 const struct live_model *lm)
{
	if (m->gpu) {
		double scale = gpu_mark(lm, &labels[nlabels]);

		prom_sample(b, name, labels, nlabels + (scale != 1.0),
			    (double)value_at(c, m->offset, 0) * m->scale * scale);
		return;
	}
	if (!m->sublabel) {
		prom_sample(b, name, labels, nlabels, (double)value_at(c, m->offset, 0) * m->scale);
		return;
	}
	labels[nlabels].name = m->sublabel;
	for (unsigned i = 0; i < m->n; i++) {
		labels[nlabels].value = m->subname(i);
		prom_sample(b, name, labels, nlabels + 1,
			    (double)value_at(c, m->offset, i) * m->scale);
	}
}

/* Samples of one metric for a process whose labels were rendered (render_process_labels). */
static void emit_rendered(struct prom_buf *b, const char *name, const struct metric *m,
			  const char *labels, size_t len, const struct live_counters *c,
			  const struct live_model *lm)
{
	struct prom_label sub;

	if (m->gpu) {
		double scale = gpu_mark(lm, &sub);

		prom_sample_rendered(b, name, labels, len, scale != 1.0 ? &sub : NULL,
				     (double)value_at(c, m->offset, 0) * m->scale * scale);
		return;
	}

	if (!m->sublabel) {
		prom_sample_rendered(b, name, labels, len, NULL,
				     (double)value_at(c, m->offset, 0) * m->scale);
		return;
	}
	sub.name = m->sublabel;
	for (unsigned i = 0; i < m->n; i++) {
		sub.value = m->subname(i);
		prom_sample_rendered(b, name, labels, len, &sub,
				     (double)value_at(c, m->offset, i) * m->scale);
	}
}

static void process_labels(const struct live_proc *p, char *pid, struct prom_label *l)
{
	snprintf(pid, 16, "%u", p->pid);
	l[0] = (struct prom_label){"pid", pid};
	l[1] = (struct prom_label){"comm", p->comm};
	l[2] = (struct prom_label){"container", p->container};
	l[3] = (struct prom_label){"user", p->user};
}

/* Every slotted process's labels, escaped once for the ~30 samples each has: the exposition is
 * rebuilt at every interval. 0 or -ENOMEM. */
static int render_process_labels(struct serve_metrics *sm, const struct live_model *lm)
{
	struct prom_label l[4];
	char pid[16];

	if (lm->nprocs + 1 > sm->label_cap) {
		size_t cap =
		    lm->nprocs + 1 > 2 * sm->label_cap ? lm->nprocs + 1 : 2 * sm->label_cap;
		size_t *at = realloc(sm->label_at, cap * sizeof(*at));

		if (!at)
			return -ENOMEM;
		sm->label_at = at;
		sm->label_cap = cap;
	}
	prom_buf_reset(&sm->labels);
	for (size_t i = 0; i < lm->nprocs; i++) {
		sm->label_at[i] = sm->labels.len;
		if (!lm->procs[i].slotted)
			continue;
		process_labels(&lm->procs[i], pid, l);
		prom_labels_render(&sm->labels, l, 4);
	}
	sm->label_at[lm->nprocs] = sm->labels.len;
	return sm->labels.oom ? -ENOMEM : 0;
}

/* Process i's rendered labels and their length. */
static const char *rendered(const struct serve_metrics *sm, size_t i, size_t *len)
{
	*len = sm->label_at[i + 1] - sm->label_at[i];
	return sm->labels.data + sm->label_at[i];
}

static void process_family(struct serve_metrics *sm, const struct live_model *lm,
			   const struct metric *m, struct prom_buf *b)
{
	struct prom_label l[5];
	char name[96];
	const char *labels;
	size_t len;

	snprintf(name, sizeof(name), "gpuspy_process_%s", m->suffix);
	prom_family(b, name, m->type, m->help);
	for (size_t i = 0; i < lm->nprocs; i++) {
		if (!lm->procs[i].slotted)
			continue;
		labels = rendered(sm, i, &len);
		emit_rendered(b, name, m, labels, len, &lm->procs[i].c, lm);
	}
	l[0] = (struct prom_label){"pid", "other"};
	l[1] = (struct prom_label){"comm", "other"};
	l[2] = (struct prom_label){"container", "other"};
	l[3] = (struct prom_label){"user", "other"};
	emit(b, name, m, l, 4, &sm->other_sum[LIVE_PROCESS], lm);
}

static void group_family(struct serve_metrics *sm, const struct live_model *lm,
			 const struct live_group *g, size_t n, enum live_kind kind,
			 const struct metric *m, struct prom_buf *b)
{
	const char *label = kind == LIVE_CONTAINER ? "container" : "user";
	struct prom_label l[2];
	char name[96];

	snprintf(name, sizeof(name), "gpuspy_%s_%s", label, m->suffix);
	prom_family(b, name, m->type, m->help);
	for (size_t i = 0; i < n; i++) {
		if (!g[i].slotted)
			continue;
		l[0] = (struct prom_label){label, g[i].label};
		emit(b, name, m, l, 1, &g[i].sum, lm);
	}
	l[0] = (struct prom_label){label, "other"};
	emit(b, name, m, l, 1, &sm->other_sum[kind], lm);
}

static void gauges(const struct serve_metrics *sm, const struct live_model *lm, struct prom_buf *b)
{
	struct prom_label l[1], mode;
	const char *labels;
	size_t len;

	prom_family(b, "gpuspy_process_info", "gauge",
		    "1 for each process with series of its own: its mode is how its GPU side is "
		    "seen (uprobes, bridge, injected; - without CUDA)");
	for (size_t i = 0; i < lm->nprocs; i++) {
		if (!lm->procs[i].slotted)
			continue;
		labels = rendered(sm, i, &len);
		mode = (struct prom_label){"mode", live_mode_name(lm->procs[i].mode)};
		prom_sample_rendered(b, "gpuspy_process_info", labels, len, &mode, 1);
	}
	prom_family(b, "gpuspy_process_gpu_memory_bytes", "gauge",
		    "GPU memory allocated through the CUDA API since gpuspy attached, not freed");
	for (size_t i = 0; i < lm->nprocs; i++) {
		if (!lm->procs[i].slotted)
			continue;
		labels = rendered(sm, i, &len);
		prom_sample_rendered(b, "gpuspy_process_gpu_memory_bytes", labels, len, NULL,
				     lm->procs[i].exited ? 0 : (double)lm->procs[i].gpu_mem_bytes);
	}
	prom_family(b, "gpuspy_container_gpu_memory_bytes", "gauge",
		    "GPU memory allocated through the CUDA API by the container's live processes");
	for (size_t i = 0; i < lm->ncontainers; i++) {
		l[0] = (struct prom_label){"container", lm->containers[i].label};
		if (lm->containers[i].slotted)
			prom_sample(b, "gpuspy_container_gpu_memory_bytes", l, 1,
				    (double)lm->containers[i].gpu_mem_bytes);
	}
	prom_family(b, "gpuspy_user_gpu_memory_bytes", "gauge",
		    "GPU memory allocated through the CUDA API by the user's live processes");
	for (size_t i = 0; i < lm->nusers; i++) {
		l[0] = (struct prom_label){"user", lm->users[i].label};
		if (lm->users[i].slotted)
			prom_sample(b, "gpuspy_user_gpu_memory_bytes", l, 1,
				    (double)lm->users[i].gpu_mem_bytes);
	}
}

static void devices(const struct live_model *lm, struct prom_buf *b)
{
	struct prom_label l[2];
	char dev[16];
	double scale;

	prom_family(b, "gpuspy_device_gpu_kernels_total", "counter",
		    "kernels run on the device by processes with an active CUPTI bridge "
		    "(estimated where labelled sampled)");
	for (size_t i = 0; i < lm->ndevices; i++) {
		snprintf(dev, sizeof(dev), "%u", lm->devices[i].device);
		l[0] = (struct prom_label){"device", dev};
		scale = gpu_mark(lm, &l[1]);
		prom_sample(b, "gpuspy_device_gpu_kernels_total", l, 1 + (scale != 1.0),
			    (double)lm->devices[i].kernels * scale);
	}
	prom_family(b, "gpuspy_device_gpu_busy_seconds_total", "counter",
		    "time at least one kernel of a bridged process ran on the device (estimated "
		    "where labelled sampled)");
	for (size_t i = 0; i < lm->ndevices; i++) {
		snprintf(dev, sizeof(dev), "%u", lm->devices[i].device);
		l[0] = (struct prom_label){"device", dev};
		scale = gpu_mark(lm, &l[1]);
		prom_sample(b, "gpuspy_device_gpu_busy_seconds_total", l, 1 + (scale != 1.0),
			    (double)lm->devices[i].busy_ns * 1e-9 * scale);
	}
}

/* The duty the GPU figures come from: 1 (always, exact), ON/PERIOD, or 0 (off: none). */
static void gpu_sample_gauge(const struct live_model *lm, struct prom_buf *b)
{
	struct prom_label l[1] = {{"sample", lm->sample.label}};
	double ratio =
	    lm->sample.mode == GPU_SAMPLE_OFF ? 0.0 : 1.0 / gpu_sample_scale(&lm->sample);

	prom_family(b, "gpuspy_gpu_sample_ratio", "gauge",
		    "share of the time kernel records are taken (--gpu-sample); below 1 the "
		    "gpu_kernels and gpu_busy counters are what the windows saw scaled by its "
		    "inverse, and labelled sampled");
	prom_sample(b, "gpuspy_gpu_sample_ratio", l, 1, ratio);
}

static void self_metrics(const struct serve_metrics *sm, const struct live_model *lm,
			 struct prom_buf *b)
{
	struct prom_label l[1];
	unsigned alive = 0, slotted = 0;
	char max[24];

	for (size_t i = 0; i < lm->nprocs; i++) {
		alive += !lm->procs[i].exited;
		slotted += lm->procs[i].slotted;
	}
	prom_family(b, "gpuspy_collections_total", "counter",
		    "refreshes of these values, one per interval: a stall shows as no increase");
	prom_sample(b, "gpuspy_collections_total", NULL, 0, (double)sm->collections);
	prom_family(b, "gpuspy_events_total", "counter",
		    "records gpuspy took from BPF and bridges");
	prom_sample(b, "gpuspy_events_total", NULL, 0, (double)lm->events);
	prom_family(b, "gpuspy_events_lost_total", "counter",
		    "events lost (ring buffer full, maps full, GPU records lost): counted, never "
		    "silent");
	prom_sample(b, "gpuspy_events_lost_total", NULL, 0, (double)live_model_lost(lm));
	prom_family(b, "gpuspy_processes", "gauge",
		    "processes gpuspy tracks: alive, and exited but within the grace period");
	l[0] = (struct prom_label){"state", "alive"};
	prom_sample(b, "gpuspy_processes", l, 1, alive);
	l[0] = (struct prom_label){"state", "exited"};
	prom_sample(b, "gpuspy_processes", l, 1, (double)lm->nprocs - alive);
	prom_family(b, "gpuspy_process_series", "gauge",
		    "processes with series of their own; the limit is the max label");
	snprintf(max, sizeof(max), "%zu", sm->max_series);
	l[0] = (struct prom_label){"max", max};
	prom_sample(b, "gpuspy_process_series", l, 1, slotted);
	prom_family(b, "gpuspy_grace_seconds", "gauge",
		    "how long an exited process's series outlive it");
	prom_sample(b, "gpuspy_grace_seconds", NULL, 0, sm->grace_s);
	prom_family(b, "gpuspy_http_requests_total", "counter", "HTTP requests served, by outcome");
	l[0] = (struct prom_label){"outcome", "ok"};
	prom_sample(b, "gpuspy_http_requests_total", l, 1, (double)sm->http_requests);
	l[0] = (struct prom_label){"outcome", "bad"};
	prom_sample(b, "gpuspy_http_requests_total", l, 1, (double)sm->http_bad);
	l[0] = (struct prom_label){"outcome", "rejected"};
	prom_sample(b, "gpuspy_http_requests_total", l, 1, (double)sm->http_rejected);
	l[0] = (struct prom_label){"outcome", "timeout"};
	prom_sample(b, "gpuspy_http_requests_total", l, 1, (double)sm->http_timeouts);
}

int serve_metrics_build(struct serve_metrics *sm, struct live_model *lm, struct prom_buf *out)
{
	struct entity *procs = process_entities(lm);
	struct entity *conts = group_entities(lm->containers, lm->ncontainers);
	struct entity *users = group_entities(lm->users, lm->nusers);
	int err = procs && conts && users ? 0 : -ENOMEM;

	err = err ?: assign_slots(sm, LIVE_PROCESS, procs, lm->nprocs);
	err = err ?: assign_slots(sm, LIVE_CONTAINER, conts, lm->ncontainers);
	err = err ?: assign_slots(sm, LIVE_USER, users, lm->nusers);
	err = err ?: render_process_labels(sm, lm);
	if (!err) {
		sm->collections++;
		sum_other(sm, LIVE_PROCESS, procs, lm->nprocs);
		sum_other(sm, LIVE_CONTAINER, conts, lm->ncontainers);
		sum_other(sm, LIVE_USER, users, lm->nusers);
		prom_buf_reset(out);
		for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
			if (sm->no_syscall_time && metrics[i].offset == AT(syscall_ns))
				continue;
			process_family(sm, lm, &metrics[i], out);
			group_family(sm, lm, lm->containers, lm->ncontainers, LIVE_CONTAINER,
				     &metrics[i], out);
			group_family(sm, lm, lm->users, lm->nusers, LIVE_USER, &metrics[i], out);
		}
		gauges(sm, lm, out);
		devices(lm, out);
		gpu_sample_gauge(lm, out);
		self_metrics(sm, lm, out);
		err = out->oom ? -ENOMEM : 0;
	}
	free(procs);
	free(conts);
	free(users);
	return err;
}
