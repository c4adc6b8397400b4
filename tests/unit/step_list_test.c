// SPDX-License-Identifier: MIT
/*
 * Tests of output/analysis/step_list.c: a process's steps never overlap (a step from the Python
 * stacks may end at a CPU sample's end, a sampling period after the sample, past where the next
 * call of the loop began: the timelines draw steps on one track, where an overlap would not
 * nest), steps that only touch or leave a gap are kept as they are, and each process's steps are
 * its own. Exits 1 on any mismatch, printing it.
 */
#include <stdio.h>
#include "output/analysis/step_list.h"

static int failures;

static void expect_step(const struct step_list *l, size_t i, uint32_t index, uint64_t start,
			uint64_t end)
{
	const struct step *s = &l->v[i];

	if (i >= l->n || s->index != index || s->start != start || s->end != end) {
		printf("FAIL step %zu: index %u [%llu, %llu), expected %u [%llu, %llu)\n", i,
		       i < l->n ? s->index : 0, i < l->n ? (unsigned long long)s->start : 0,
		       i < l->n ? (unsigned long long)s->end : 0, index, (unsigned long long)start,
		       (unsigned long long)end);
		failures++;
	}
}

int main(void)
{
	struct step_list l = {0};

	if (step_list_begin(&l, 10, 11, "first") || step_list_add(&l, 100, 200) ||
	    step_list_add(&l, 200, 300) || /* touches: kept */
	    step_list_add(&l, 310, 420) || /* a gap: kept */
	    step_list_add(&l, 400, 500) || /* the one before reached past 400: cut there */
	    step_list_begin(&l, 20, 21, "second") ||
	    step_list_add(&l, 450, 600) || /* another process: the last step of 10 stays */
	    step_list_add(&l, 500, 700)) {
		printf("FAIL out of memory\n");
		return 1;
	}
	expect_step(&l, 0, 0, 100, 200);
	expect_step(&l, 1, 1, 200, 300);
	expect_step(&l, 2, 2, 310, 400);
	expect_step(&l, 3, 3, 400, 500);
	expect_step(&l, 4, 0, 450, 500);
	expect_step(&l, 5, 1, 500, 700);
	if (l.n != 6 || l.norigins != 2 || l.origins[0].n != 4 || l.origins[1].first != 4) {
		printf("FAIL %zu steps in %zu processes\n", l.n, l.norigins);
		failures++;
	}
	step_list_free(&l);
	printf("step_list: %s\n", failures ? "FAIL" : "ok");
	return failures ? 1 : 0;
}
