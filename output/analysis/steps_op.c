// SPDX-License-Identifier: MIT
/* Steps marked by an operator's calls (steps_op.h). */
#include <stdio.h>
#include <string.h>
#include "output/analysis/steps_op.h"

/* Whether a call is an outermost call of the operator named `name`. */
static bool marks(const struct op_model *om, const struct op_call *c, const char *name)
{
	return c->parent == OP_NONE && !strcmp(op_model_name(om, c->op), name);
}

/* The calls[] run of one process: [first, *end). Calls are sorted by (pid, tid, ts). */
static uint32_t busiest_thread(const struct op_model *om, size_t first, size_t *end,
			       const char *name)
{
	uint32_t pid = om->calls[first].pid, best_tid = 0, tid = 0;
	size_t best = 0, n = 0, i;

	for (i = first; i < om->ncalls && om->calls[i].pid == pid; i++) {
		if (om->calls[i].tid != tid) {
			tid = om->calls[i].tid;
			n = 0;
		}
		if (marks(om, &om->calls[i], name) && ++n > best) {
			best = n;
			best_tid = tid;
		}
	}
	*end = i;
	return best ? best_tid : 0;
}

static int emit_thread(const struct op_model *om, size_t first, size_t end, uint32_t tid,
		       const char *name, struct step_list *out)
{
	const struct op_call *prev = NULL;
	char how[192];

	snprintf(how, sizeof(how), "op:%s (each call)", name);
	if (step_list_begin(out, om->calls[first].pid, tid, how))
		return -1;
	for (size_t i = first; i < end; i++) {
		const struct op_call *c = &om->calls[i];

		if (c->tid != tid || !marks(om, c, name))
			continue;
		if (prev && step_list_add(out, prev->ts, c->ts))
			return -1;
		prev = c;
	}
	return prev ? step_list_add(out, prev->ts, prev->ts + prev->dur) : 0;
}

int steps_op_find(const struct op_model *om, const char *name, struct step_list *out)
{
	size_t end;

	for (size_t first = 0; first < om->ncalls; first = end) {
		uint32_t tid = busiest_thread(om, first, &end, name);

		if (tid && emit_thread(om, first, end, tid, name, out))
			return -1;
	}
	return 0;
}
