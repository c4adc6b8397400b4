// SPDX-License-Identifier: MIT
/* Finding steps, the preferred way per process (steps.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "output/analysis/steps.h"
#include "output/analysis/steps_nvtx.h"
#include "output/analysis/steps_op.h"
#include "output/analysis/steps_py.h"

bool steps_by_valid(const char *by)
{
	return (!strncmp(by, "nvtx:", 5) && by[5]) || (!strncmp(by, "py:", 3) && by[3]) ||
	       (!strncmp(by, "op:", 3) && by[3]);
}

/* The pids that have steps already: those of the list's origins. */
static uint32_t *found_pids(const struct step_list *l, size_t *n)
{
	uint32_t *pids = malloc((l->norigins ? l->norigins : 1) * sizeof(*pids));

	if (!pids)
		return NULL;
	for (size_t i = 0; i < l->norigins; i++)
		pids[i] = l->origins[i].pid;
	*n = l->norigins;
	return pids;
}

static int find_preferred(const struct trace_model *m, struct step_list *out, char *err,
			  size_t errlen)
{
	uint32_t *skip;
	size_t nskip;
	int ret;

	if (steps_nvtx_find(m->path, m->filter, STEPS_PROFILER_STEP, out, err, errlen))
		return -1;
	skip = found_pids(out, &nskip);
	if (!skip) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ret = steps_py_find(&m->py, NULL, skip, nskip, out);
	free(skip);
	if (ret)
		snprintf(err, errlen, "out of memory");
	return ret;
}

static uint32_t model_parent(void *model, uint32_t pid)
{
	const struct model_process *p = trace_model_process(model, pid);

	return p ? p->ppid : 0;
}

static int find_by(const struct trace_model *m, const char *by, struct step_list *out, char *err,
		   size_t errlen)
{
	if (!by)
		return find_preferred(m, out, err, errlen);
	if (!strncmp(by, "nvtx:", 5))
		return steps_nvtx_find(m->path, m->filter, by + 5, out, err, errlen);
	if (!strncmp(by, "op:", 3)) {
		if (steps_op_find(&m->ops, by + 3, out)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		return 0;
	}
	if (steps_py_find(&m->py, by + 3, NULL, 0, out)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int steps_find(const struct trace_model *m, const char *by, struct step_list *out, char *err,
	       size_t errlen)
{
	if (find_by(m, by, out, err, errlen))
		return -1;
	if (step_list_drop_served(out, model_parent, (void *)m)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}
