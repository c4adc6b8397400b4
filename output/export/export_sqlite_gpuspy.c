// SPDX-License-Identifier: MIT
/*
 * gpuspy's own tables in the SQLite export, for what nsys has no table of: PyTorch operator
 * calls (PYTORCH_OPS), the Python stacks (PYTHON_STACKS), the training steps and where their
 * time went (STEPS, as the steps report) and the stalls ranked (STALLS, as the stalls report).
 * Their columns are the reports' JSON keys, so a query reproduces a report's figures; times
 * are ns on CLOCK_MONOTONIC and threads globalTid, as in nsys's tables, to join with them.
 */
#include <stdio.h>
#include <string.h>
#include "output/analysis/stalls.h"
#include "output/analysis/step_time.h"
#include "output/analysis/wait_kinds.h"
#include "output/export/export_sqlite_gpuspy.h"
#include "output/model/op_model.h"
#include "output/model/py_model.h"

static const char schema[] =
    "CREATE TABLE PYTORCH_OPS (id INTEGER NOT NULL PRIMARY KEY, start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, globalTid INTEGER NOT NULL, nameId INTEGER NOT NULL, "
    "depth INTEGER NOT NULL, parentId INTEGER, self_ns INTEGER NOT NULL, "
    "self_cuda_ns INTEGER NOT NULL, cuda_total_ns INTEGER NOT NULL);"
    "CREATE TABLE PYTHON_STACKS (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "globalTid INTEGER NOT NULL, kind TEXT NOT NULL, depth INTEGER NOT NULL, "
    "truncated INTEGER NOT NULL, leafId INTEGER, stackId INTEGER);"
    "CREATE TABLE STEPS (globalTid INTEGER NOT NULL, pid INTEGER NOT NULL, "
    "tid INTEGER NOT NULL, step INTEGER NOT NULL, start INTEGER NOT NULL, "
    "end INTEGER NOT NULL, duration_ns INTEGER NOT NULL, input_wait_ns INTEGER NOT NULL, "
    "io_wait_ns INTEGER NOT NULL, host_compute_ns INTEGER NOT NULL, "
    "sync_wait_ns INTEGER NOT NULL, launch_bound_ns INTEGER NOT NULL, "
    "cpu_contention_ns INTEGER NOT NULL, lock_wait_ns INTEGER NOT NULL, "
    "gpu_bound_ns INTEGER NOT NULL, other_wait_ns INTEGER NOT NULL, "
    "gpu_busy_ns INTEGER NOT NULL, gpu_idle_ns INTEGER NOT NULL, launches INTEGER NOT NULL, "
    "found_by TEXT NOT NULL);"
    "CREATE TABLE STALLS (rank INTEGER NOT NULL PRIMARY KEY, kind TEXT NOT NULL, "
    "total_ns INTEGER NOT NULL, share_pct REAL NOT NULL, steps INTEGER NOT NULL, pids TEXT, "
    "place TEXT, what TEXT, cause TEXT, advice TEXT);";

/* STEPS's stall columns, in the order of the schema above */
static const enum stall_kind step_kinds[] = {
    STALL_INPUT_WAIT,	  STALL_IO_WAIT,   STALL_HOST_COMPUTE, STALL_SYNC_WAIT,	 STALL_LAUNCH_BOUND,
    STALL_CPU_CONTENTION, STALL_LOCK_WAIT, STALL_GPU_BOUND,    STALL_OTHER_WAIT,
};
_Static_assert(sizeof(step_kinds) / sizeof(step_kinds[0]) == STALL_NKINDS, "a column per kind");

static int ops_rows(struct sqlite_db *d, const struct op_model *om)
{
	sqlite3_stmt *st;
	int64_t name;
	int ret = 0;

	if (sqlite_db_prepare(d, "INSERT INTO PYTORCH_OPS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      &st))
		return -1;
	for (size_t i = 0; i < om->ncalls && !ret; i++) {
		const struct op_call *c = &om->calls[i];

		if ((ret = sqlite_db_string(d, op_model_name(om, c->op), &name)))
			break;
		sqlite3_bind_int64(st, 1, (int64_t)i);
		sqlite3_bind_int64(st, 2, (int64_t)c->ts);
		sqlite3_bind_int64(st, 3, (int64_t)(c->ts + c->dur));
		sqlite3_bind_int64(st, 4, sqlite_global_tid(c->pid, c->tid));
		sqlite3_bind_int64(st, 5, name);
		sqlite3_bind_int64(st, 6, c->depth);
		if (c->parent != OP_NONE)
			sqlite3_bind_int64(st, 7, c->parent);
		sqlite3_bind_int64(st, 8, (int64_t)c->self_ns);
		sqlite3_bind_int64(st, 9, (int64_t)c->self_cuda_ns);
		sqlite3_bind_int64(st, 10, (int64_t)c->cuda_total_ns);
		ret = sqlite_db_insert(d, st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* A stack's StringIds: its leaf as "qualname (file:line)" and the whole stack folded as
 * flame-graph tools take it, root first: "main;train;step". */
static int stack_strings(struct sqlite_db *d, const struct py_model *pm, const struct py_stack *s,
			 int64_t *leaf, int64_t *stack)
{
	char buf[4096], leafbuf[512];
	const char *qualname, *filename;
	size_t n = 0;
	int line;

	buf[0] = '\0';
	for (size_t j = s->nframes; j-- > 0;) {
		py_frame_symbol(pm, py_stack_frame(pm, s, j), &qualname, NULL, NULL);
		n += (size_t)snprintf(buf + n, n < sizeof(buf) ? sizeof(buf) - n : 0, "%s%s",
				      j + 1 < s->nframes ? ";" : "", qualname);
		if (n >= sizeof(buf)) /* a stack past 4 KiB is cut at its leaf end */
			break;
	}
	py_frame_symbol(pm, py_stack_frame(pm, s, 0), &qualname, &filename, &line);
	snprintf(leafbuf, sizeof(leafbuf), "%s (%s:%d)", qualname, filename, line);
	return sqlite_db_string(d, leafbuf, leaf) || sqlite_db_string(d, buf, stack);
}

static int stack_rows(struct sqlite_db *d, const struct py_model *pm)
{
	sqlite3_stmt *st;
	int64_t leaf, stack;
	int ret = 0;

	if (sqlite_db_prepare(d, "INSERT INTO PYTHON_STACKS VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &st))
		return -1;
	for (size_t i = 0; i < py_model_stack_count(pm) && !ret; i++) {
		const struct py_stack *s = py_model_stack(pm, i);

		sqlite3_bind_int64(st, 1, (int64_t)s->ts);
		sqlite3_bind_int64(st, 2, (int64_t)(s->end_ts > s->ts ? s->end_ts : s->ts));
		sqlite3_bind_int64(st, 3, sqlite_global_tid(s->pid, s->tid));
		sqlite3_bind_text(st, 4, py_stack_kind_name(s->kind), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, s->nframes);
		sqlite3_bind_int(st, 6, !!(s->flags & GS_PY_TRUNCATED));
		if (s->nframes) {
			if ((ret = stack_strings(d, pm, s, &leaf, &stack)))
				break;
			sqlite3_bind_int64(st, 7, leaf);
			sqlite3_bind_int64(st, 8, stack);
		}
		ret = sqlite_db_insert(d, st);
	}
	sqlite3_finalize(st);
	return ret;
}

static int step_rows(struct sqlite_db *d, const struct step_times *st)
{
	sqlite3_stmt *ins;
	int ret = 0;

	if (st->whole_recording) /* no steps found: the steps report lists none either */
		return 0;
	if (sqlite_db_prepare(d,
			      "INSERT INTO STEPS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
			      "?, ?, ?, ?, ?, ?)",
			      &ins))
		return -1;
	for (size_t o = 0; o < st->steps.norigins && !ret; o++) {
		const struct step_origin *org = &st->steps.origins[o];

		for (size_t i = org->first; i < org->first + org->n && !ret; i++) {
			const struct step *s = &st->steps.v[i];
			const struct step_time *t = &st->t[i];
			int col = 1;

			sqlite3_bind_int64(ins, col++, sqlite_global_tid(s->pid, s->tid));
			sqlite3_bind_int64(ins, col++, s->pid);
			sqlite3_bind_int64(ins, col++, s->tid);
			sqlite3_bind_int64(ins, col++, s->index);
			sqlite3_bind_int64(ins, col++, (int64_t)s->start);
			sqlite3_bind_int64(ins, col++, (int64_t)s->end);
			sqlite3_bind_int64(ins, col++, (int64_t)t->wall_ns);
			for (size_t k = 0; k < STALL_NKINDS; k++)
				sqlite3_bind_int64(ins, col++, (int64_t)t->ns[step_kinds[k]]);
			sqlite3_bind_int64(ins, col++, (int64_t)t->gpu_busy_ns);
			sqlite3_bind_int64(ins, col++, (int64_t)t->gpu_idle_ns);
			sqlite3_bind_int64(ins, col++, t->launches);
			sqlite3_bind_text(ins, col, org->how, -1, SQLITE_STATIC);
			ret = sqlite_db_insert(d, ins);
		}
	}
	sqlite3_finalize(ins);
	return ret;
}

static int stall_rows(struct sqlite_db *d, const struct stalls *s)
{
	sqlite3_stmt *st;
	int ret = 0;

	if (sqlite_db_prepare(d, "INSERT INTO STALLS VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st))
		return -1;
	for (size_t i = 0; i < s->n && !ret; i++) {
		const struct stall_finding *f = &s->v[i];

		sqlite3_bind_int64(st, 1, (int64_t)i + 1);
		sqlite3_bind_text(st, 2, stall_kind_name(f->kind), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, (int64_t)f->ns);
		sqlite3_bind_double(st, 4, f->share_pct);
		sqlite3_bind_int64(st, 5, f->steps);
		sqlite3_bind_text(st, 6, f->pids, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, f->where, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 8, f->what, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 9, f->cause, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 10, f->advice, -1, SQLITE_STATIC);
		ret = sqlite_db_insert(d, st);
	}
	sqlite3_finalize(st);
	return ret;
}

int sqlite_gpuspy_tables(struct sqlite_db *d, const struct trace_model *m, const char *steps_by)
{
	struct stalls s;
	int ret;

	if (sqlite_db_exec(d, schema) || ops_rows(d, &m->ops) || stack_rows(d, &m->py))
		return -1;
	if (stalls_find(m, steps_by, &s, d->err, d->errlen))
		return -1;
	ret = step_rows(d, &s.st) || stall_rows(d, &s) ? -1 : 0;
	stalls_free(&s);
	return ret;
}
