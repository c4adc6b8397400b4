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
 *
 * Calls the in-process observer recorded carry what torch.profiler's trace gives them: user
 * ranges (record_function, Optimizer.step#SGD.step) in category `user_annotation`, args
 * "Sequence number" and "Fwd thread id" where there is a number, "Input Dims" where shapes
 * were recorded, and a `fwdbwd` flow from each forward operator to the backward one Kineto
 * links it to (op_torch.c says how).
 */
#include <inttypes.h>
#include <string.h>
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

#define RECORD_SCOPE_USER 7 /* at::RecordScope::USER_SCOPE */

static bool is_user_range(const struct op_model *om, const struct op_call *o)
{
	const struct op_torch *x = op_model_torch(om, o);

	return x && x->scope == RECORD_SCOPE_USER;
}

/* Kineto writes the shapes as a JSON array: so does this when the text is one of numbers,
 * brackets and commas (it comes from the file), else as a string. */
static void print_shapes(FILE *out, const char *shapes)
{
	if (shapes[0] == '[' && !shapes[strspn(shapes, "[], -0123456789")])
		fputs(shapes, out);
	else
		json_print_string(out, shapes);
}

static void torch_args(struct chrome_ctx *c, const struct op_model *om, const struct op_call *o)
{
	const struct op_torch *x = op_model_torch(om, o);
	const char *shapes = op_model_shapes(om, o);

	if (x && x->seq_nr >= 0)
		fprintf(c->out, ", \"Sequence number\": %" PRId64 ", \"Fwd thread id\": %u",
			x->seq_nr, x->fwd_tid);
	if (shapes) {
		fputs(", \"Input Dims\": ", c->out);
		print_shapes(c->out, shapes);
	}
}

static void emit_flow(struct chrome_ctx *c, const struct op_call *o, char ph, size_t id)
{
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"%c\", %s\"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"id\": %zu, "
		"\"pid\": %u, \"tid\": %u, ",
		ph, ph == 'f' ? "\"bp\": \"e\", " : "", id, o->pid, o->tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, o->ts));
	fputs("}", c->out);
}

/* The flow of a forward op to its backward op, keyed by the forward op's index. */
static void emit_fwdbwd(struct chrome_ctx *c, const struct op_model *om, size_t i)
{
	const struct op_torch *x = op_model_torch(om, &om->calls[i]);

	if (!x || x->bwd == OP_NONE || x->bwd >= om->ncalls)
		return;
	emit_flow(c, &om->calls[i], 's', i + 1);
	emit_flow(c, &om->calls[x->bwd], 'f', i + 1);
}

static int emit_op(struct chrome_ctx *c, const struct op_model *om, size_t i)
{
	const struct op_call *o = &om->calls[i];
	uint64_t end = op_end(om, o);

	chrome_begin_event(c);
	fprintf(c->out, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ",
		is_user_range(om, o) ? "user_annotation" : "cpu_op");
	json_print_string(c->out, op_model_name(om, o->op));
	fprintf(c->out, ", \"pid\": %u, \"tid\": %u, ", o->pid, o->tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, o->ts));
	fputs(", ", c->out);
	chrome_print_dur(c, end > o->ts ? end - o->ts : 0);
	fprintf(c->out, ", \"args\": {\"depth\": %u", o->depth);
	if (c->kineto)
		fprintf(c->out, ", \"External id\": %zu", i + 1);
	torch_args(c, om, o);
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
	for (size_t i = 0; om->ntorch && i < om->ncalls; i++)
		emit_fwdbwd(c, om, i);
	return 0;
}

void chrome_op_external_id(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts)
{
	const struct op_model *om = &c->names->ops;
	const struct op_call *o;

	if (!c->kineto || !om->ncalls)
		return;
	/* Kineto correlates a user range apart (its own correlation stack): a CUDA call's is the
	 * innermost cpu_op's */
	for (o = op_model_call_at(om, pid, tid, ts); o && is_user_range(om, o);
	     o = o->parent == OP_NONE ? NULL : &om->calls[o->parent])
		;
	if (o)
		fprintf(c->out, ", \"External id\": %zu", (size_t)(o - om->calls) + 1);
}
