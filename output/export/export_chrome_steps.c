// SPDX-License-Identifier: MIT
/*
 * Training steps on the Chrome timeline, as gpuspy found them (output/analysis/steps.h, the
 * `steps` report's rows).
 *
 * Chrome's dialect: per process, a track of its own named "steps" with one slice per step. Its
 * tid is STEPS_TID, above every Linux tid, so it is no real thread's: the steps then show as one
 * row per process, whichever thread ran the loop, and never overlap that thread's own slices
 * (a step found from the Python stacks starts at an event of its thread and need not nest with
 * the slices around it).
 *
 * Kineto's dialect: what torch.profiler writes for profiler.step(), a `user_annotation` named
 * ProfilerStep#N on the loop's thread, which Holistic Trace Analysis splits iterations by.
 * A process whose trace already has ProfilerStep#N NVTX ranges (torch.profiler's own, exported
 * as user_annotation slices under that name by export_chrome_gpu.c) gets none from gpuspy:
 * HTA would count each iteration twice, whatever thread the second set were on.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "lib/json_writer.h"
#include "output/analysis/steps.h"
#include "output/analysis/steps_nvtx.h"
#include "output/export/chrome_events.h"
#include "output/export/export_chrome_gpu.h"
#include "output/export/export_chrome_steps.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/trace_model.h"

/* PID_MAX_LIMIT (2^22): above every real tid, below the Python samples' tracks (2^23 + tid) */
#define STEPS_TID (1u << 22)

static void step_common(struct chrome_ctx *c, const struct step *s, const char *cat,
			const char *name, uint32_t tid)
{
	chrome_begin_event(c);
	fprintf(c->out, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
	json_print_string(c->out, name);
	fprintf(c->out, ", \"pid\": %u, \"tid\": %u, ", s->pid, tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, s->start));
	fputs(", ", c->out);
	/* a corrupt file may end a step before it starts */
	chrome_print_dur(c, s->end > s->start ? s->end - s->start : 0);
}

static void emit_track(struct chrome_ctx *c, const struct step_list *l, const struct step_origin *o)
{
	char name[32];

	for (size_t i = o->first; i < o->first + o->n; i++) {
		const struct step *s = &l->v[i];

		snprintf(name, sizeof(name), "step %u", s->index);
		step_common(c, s, "step", name, STEPS_TID);
		fprintf(c->out, ", \"args\": {\"index\": %u, \"found_by\": ", s->index);
		json_print_string(c->out, o->how);
		fprintf(c->out, ", \"duration_ns\": %" PRIu64 ", \"loop_tid\": %u}}",
			s->end > s->start ? s->end - s->start : 0, s->tid);
	}
	chrome_metadata(c, "thread_name", o->pid, STEPS_TID, "steps");
}

/* Each step a ProfilerStep#N on the loop's thread, and on the streams that ran its work as
 * Kineto draws an annotation's GPU side; 0, or -1 out of memory. */
static int emit_profiler_steps(struct chrome_ctx *c, const struct step_list *l,
			       const struct step_origin *o)
{
	char name[32];

	for (size_t i = o->first; i < o->first + o->n; i++) {
		const struct step *s = &l->v[i];

		snprintf(name, sizeof(name), STEPS_PROFILER_STEP "%u", s->index);
		step_common(c, s, "user_annotation", name, s->tid);
		fputs(", \"args\": {\"found_by\": ", c->out);
		json_print_string(c->out, o->how);
		fputs("}}", c->out);
		if (chrome_gpu_annotation(c, o->pid, s->tid, s->start, s->end, name))
			return -1;
	}
	return 0;
}

/* Whether any NVTX range (not a mark) of the trace is named ProfilerStep#...: the model's totals
 * by name say so without reading the file again. */
static bool any_profiler_ranges(const struct gpu_model *g)
{
	for (size_t i = 0; i < g->nnvtx; i++)
		if (g->nvtx[i].kind != GS_NVTX_MARK &&
		    !strncmp(string_pool_get(&g->names, g->nvtx[i].name), STEPS_PROFILER_STEP,
			     strlen(STEPS_PROFILER_STEP)))
			return true;
	return false;
}

static bool has_pid(const struct step_list *l, uint32_t pid)
{
	for (size_t i = 0; i < l->norigins; i++)
		if (l->origins[i].pid == pid)
			return true;
	return false;
}

int chrome_steps(struct chrome_ctx *c, char *err, size_t errlen)
{
	const struct trace_model *m = c->names;
	struct step_list steps = {0}, recorded = {0};
	int ret = -1;

	if (steps_find(m, c->steps_by, &steps, err, errlen))
		goto cleanup;
	/* the processes with ProfilerStep#N ranges of their own, read again only when there are
	 * some (with steps found the preferred way they are the processes stepped by NVTX, but
	 * --steps-by may have found those processes' steps otherwise) */
	if (c->kineto && steps.norigins && any_profiler_ranges(&m->gpu) &&
	    steps_nvtx_find(m->path, m->filter, STEPS_PROFILER_STEP, &recorded, err, errlen))
		goto cleanup;
	for (size_t i = 0; i < steps.norigins; i++) {
		const struct step_origin *o = &steps.origins[i];

		if (!c->kineto)
			emit_track(c, &steps, o);
		else if (!has_pid(&recorded, o->pid) && emit_profiler_steps(c, &steps, o)) {
			snprintf(err, errlen, "out of memory");
			goto cleanup;
		}
	}
	ret = 0;
cleanup:
	step_list_free(&steps);
	step_list_free(&recorded);
	return ret;
}
