// SPDX-License-Identifier: MIT
/*
 * PyTorch operators on the Chrome timeline: a `cpu_op` complete event per operator call on
 * its thread, as Kineto writes them. The CUDA calls an operator makes run inside it on the
 * same thread, so their spans (and the launch -> kernel flows that start in them) nest inside
 * the operator's slice without anything linking them; Kineto's dialect also gives each
 * operator an "External id" and each CUDA API span the id of the innermost operator around
 * it, which is how Kineto's tools link a runtime call to its operator.
 *
 * The calls come from the model (pass 1), where they are nested per thread: a child that
 * would end after its parent (clock jitter between two uprobes) is cut at the parent's end,
 * so slices on a thread never overlap partially.
 */
#include <inttypes.h>
#include "lib/json_writer.h"
#include "output/export/chrome_events.h"
#include "output/export/export_chrome_ops.h"
#include "output/export/export_chrome_python.h"
#include "output/model/trace_model.h"

static uint64_t op_end(const struct op_model *om, const struct op_call *o)
{
	uint64_t end = o->ts + o->dur;

	for (; o->parent != OP_NONE; o = &om->calls[o->parent]) {
		const struct op_call *p = &om->calls[o->parent];

		if (p->ts + p->dur < end)
			end = p->ts + p->dur;
	}
	return end;
}

static int emit_op(struct chrome_ctx *c, const struct op_model *om, size_t i)
{
	const struct op_call *o = &om->calls[i];
	uint64_t end = op_end(om, o);

	chrome_begin_event(c);
	fputs("{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": ", c->out);
	json_print_string(c->out, op_model_name(om, o->op));
	fprintf(c->out, ", \"pid\": %u, \"tid\": %u, ", o->pid, o->tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, o->ts));
	fputs(", ", c->out);
	chrome_print_dur(c, end > o->ts ? end - o->ts : 0);
	fprintf(c->out, ", \"args\": {\"depth\": %u", o->depth);
	if (c->kineto)
		fprintf(c->out, ", \"External id\": %zu", i + 1);
	/* an operator inside another ran under the same Python stack, which the outer one has */
	if (o->parent == OP_NONE && chrome_python_stack_args(c, o->pid, o->tid, o->ts))
		return -1;
	fputs("}}", c->out);
	return 0;
}

int chrome_ops(struct chrome_ctx *c)
{
	const struct op_model *om = &c->names->ops;

	for (size_t i = 0; i < om->ncalls; i++)
		if (emit_op(c, om, i))
			return -1;
	return 0;
}

void chrome_op_external_id(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts)
{
	const struct op_model *om = &c->names->ops;
	const struct op_call *o;

	if (!c->kineto || !om->ncalls)
		return;
	o = op_model_call_at(om, pid, tid, ts);
	if (o)
		fprintf(c->out, ", \"External id\": %zu", (size_t)(o - om->calls) + 1);
}
