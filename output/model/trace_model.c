// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/model/gpu/gpu_finish.h"
#include "output/model/trace_model.h"
#include "output/trace/trace_reader.h"

static uint64_t pid_tid(uint32_t pid, uint32_t tid)
{
	return (uint64_t)pid << 32 | tid;
}

static struct model_thread *find_thread(const struct trace_model *m, uint32_t pid, uint32_t tid)
{
	size_t i;

	return key_index_find(&m->ix_threads, pid, tid, &i) ? &m->threads[i] : NULL;
}

static struct model_process *find_process(const struct trace_model *m, uint32_t pid)
{
	size_t i;

	return key_index_find(&m->ix_procs, pid, 0, &i) ? &m->procs[i] : NULL;
}

static struct model_thread *get_thread(struct trace_model *m, uint32_t pid, uint32_t tid)
{
	struct model_thread *t = find_thread(m, pid, tid);

	if (t)
		return t;
	t = array_grow((void **)&m->threads, &m->nthreads, &m->threads_cap, sizeof(*t));
	if (!t || key_index_put(&m->ix_threads, pid, tid, m->nthreads - 1))
		return NULL;
	t->pid = pid;
	t->tid = tid;
	return t;
}

static struct model_process *get_process(struct trace_model *m, uint32_t pid)
{
	struct model_process *p = find_process(m, pid);

	if (p)
		return p;
	p = array_grow((void **)&m->procs, &m->nprocs, &m->procs_cap, sizeof(*p));
	if (!p || key_index_put(&m->ix_procs, pid, 0, m->nprocs - 1))
		return NULL;
	p->pid = pid;
	return p;
}

static void set_name(struct trace_model *m, uint32_t pid, uint32_t tid, const char *comm)
{
	struct model_thread *t = get_thread(m, pid, tid);
	struct model_process *p = get_process(m, pid);

	if (t)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	if (p && (pid == tid || !p->comm[0]))
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
}

/* A child runs as its parent, in its parent's cgroup, with its parent's environment, until a
 * PROC_INFO or PROC_ENV says otherwise. */
static void inherit_attr(struct trace_model *m, struct model_process *child)
{
	const struct model_process *parent = find_process(m, child->ppid);

	if (parent && parent->has_rank) {
		child->has_rank = true;
		child->rank = parent->rank;
		child->local_rank = parent->local_rank;
		child->world_size = parent->world_size;
	}
	if (!parent || !parent->has_attr)
		return;
	child->has_attr = true;
	child->uid = parent->uid;
	child->euid = parent->euid;
	child->user = parent->user;
	child->cgroup = parent->cgroup;
}

static int on_proc_info(struct trace_model *m, const struct gs_proc_info *pi)
{
	struct model_process *p = get_process(m, pi->hdr.pid);

	if (!p)
		return -1;
	p->has_attr = true;
	p->uid = pi->uid;
	p->euid = pi->euid;
	return string_pool_intern(&m->attr_strings, pi->user, &p->user)
		   ?: string_pool_intern(&m->attr_strings, pi->cgroup, &p->cgroup);
}

static int on_proc_env(struct trace_model *m, const struct gs_proc_env *pe)
{
	struct model_process *p = get_process(m, pe->hdr.pid);

	if (!p)
		return -1;
	p->has_rank = true;
	p->rank = pe->rank;
	p->local_rank = pe->local_rank;
	p->world_size = pe->world_size;
	return 0;
}

static void on_fork(struct trace_model *m, const struct gs_fork *f)
{
	struct model_process *p;

	if (f->hdr.flags & GS_FORK_THREAD) {
		set_name(m, f->child_pid, f->child_tid, f->comm);
		return;
	}
	p = get_process(m, f->child_pid);
	if (!p)
		return;
	p->ppid = f->hdr.pid;
	p->start_ts = f->hdr.ts;
	inherit_attr(m, p);
	set_name(m, f->child_pid, f->child_tid, f->comm);
}

static void on_exec(struct trace_model *m, const struct gs_exec *e)
{
	struct model_process *p = get_process(m, e->hdr.pid);

	if (p)
		snprintf(p->exe, sizeof(p->exe), "%s", e->filename);
	set_name(m, e->hdr.pid, e->hdr.tid, e->comm);
}

static void on_process_exit(struct trace_model *m, const struct gs_exit *e)
{
	struct model_process *p;

	if (!(e->hdr.flags & GS_EXIT_GROUP))
		return;
	p = get_process(m, e->hdr.pid);
	if (!p)
		return;
	p->exited = true;
	p->exit_code = e->exit_code;
	p->end_ts = e->hdr.ts;
}

static void on_trace_info(struct trace_model *m, const struct gs_trace_info *ti)
{
	m->start_ts = ti->hdr.ts;
	m->osrt_threshold_ns = ti->osrt_threshold_ns;
	m->offcpu_threshold_ns = ti->offcpu_threshold_ns;
	m->mode = ti->mode;
	m->follow = ti->follow;
	snprintf(m->command, sizeof(m->command), "%s", ti->command);
}

/*
 * Statistics (trace_model.h). A thread's syscall keys are found through its chain; a key has an
 * entry for the sum of its FINAL records (ts: the latest one's), one for its live checkpoint, or
 * both while a thread that reused the tid runs; the load's end adds the two. A checkpoint entry
 * that a FINAL superseded stays in the chain, empty, for the key's next checkpoint; emptied
 * entries are taken out of syscalls[] at the end.
 */
enum { KEY_EMPTY = 0, KEY_CKPT = 1, KEY_FINISHED = 2 };

struct key_entries {
	struct model_syscall *finished, *ckpt, *empty;
};

static void find_entries(struct trace_model *m, const struct model_thread *t, uint32_t nr,
			 struct key_entries *k)
{
	memset(k, 0, sizeof(*k));
	for (uint32_t i = t->syscalls; i; i = m->syscalls[i - 1].next) {
		struct model_syscall *e = &m->syscalls[i - 1];

		if (e->nr != nr)
			continue;
		if (e->stats.owner_tag == KEY_FINISHED)
			k->finished = e;
		else if (e->stats.owner_tag == KEY_CKPT)
			k->ckpt = e;
		else
			k->empty = e;
	}
}

/* A new entry at the head of the thread's chain (`t` may move: passed by index). */
static struct model_syscall *new_entry(struct trace_model *m, size_t thread,
				       const struct gs_syscall_stats *s)
{
	struct model_syscall *e;

	if (m->nsyscalls >= UINT32_MAX)
		return NULL;
	e = array_grow((void **)&m->syscalls, &m->nsyscalls, &m->syscalls_cap, sizeof(*e));
	if (!e)
		return NULL;
	e->pid = s->hdr.pid;
	e->tid = s->hdr.tid;
	e->nr = s->nr;
	e->next = m->threads[thread].syscalls;
	m->threads[thread].syscalls = (uint32_t)m->nsyscalls;
	key_stats_init(&e->stats);
	return e;
}

/* An entry to hold a checkpoint or the finished sum: the key's empty one, or a new one. */
static struct model_syscall *take_entry(struct trace_model *m, size_t thread, struct key_entries *k,
					const struct gs_syscall_stats *s, uint8_t tag)
{
	struct model_syscall *e = k->empty ? k->empty : new_entry(m, thread, s);

	k->empty = NULL;
	if (e)
		e->stats.owner_tag = tag;
	return e;
}

/* A checkpoint replaces the live one, unless older than it or than the key's latest FINAL. */
static int syscall_checkpoint(struct trace_model *m, size_t thread, struct key_entries *k,
			      const struct gs_syscall_stats *s)
{
	struct model_syscall *e = k->ckpt;

	if ((k->finished && s->hdr.ts < k->finished->ts) || (e && s->hdr.ts < e->ts))
		return 0;
	if (e)
		key_stats_release(&m->hist, &e->stats);
	else if (!(e = take_entry(m, thread, k, s, KEY_CKPT)))
		return -1;
	e->ts = s->hdr.ts;
	return key_stats_add_record(&m->hist, &e->stats, s);
}

/* A FINAL adds to the finished sum and ends the live checkpoint if that was older: the same
 * thread's. A checkpoint as new as the FINAL or newer is a thread that reused the tid. */
static int syscall_final(struct trace_model *m, size_t thread, struct key_entries *k,
			 const struct gs_syscall_stats *s)
{
	struct model_syscall *f = k->finished;

	if (k->ckpt && k->ckpt->ts < s->hdr.ts) {
		key_stats_release(&m->hist, &k->ckpt->stats);
		k->ckpt->stats.owner_tag = KEY_EMPTY;
		if (!k->empty)
			k->empty = k->ckpt;
		k->ckpt = NULL;
	}
	if (!f && !(f = take_entry(m, thread, k, s, KEY_FINISHED)))
		return -1;
	if (s->hdr.ts > f->ts)
		f->ts = s->hdr.ts;
	return key_stats_add_record(&m->hist, &f->stats, s);
}

static int on_syscall_stats(struct trace_model *m, const struct gs_syscall_stats *s)
{
	struct model_thread *t = get_thread(m, s->hdr.pid, s->hdr.tid);
	struct key_entries k;
	size_t thread;

	if (!t || !get_process(m, s->hdr.pid))
		return -1;
	if (s->hdr.ts > m->stats_ts)
		m->stats_ts = s->hdr.ts;
	thread = (size_t)(t - m->threads);
	find_entries(m, t, s->nr, &k);
	return s->hdr.flags & GS_STATS_FINAL ? syscall_final(m, thread, &k, s)
					     : syscall_checkpoint(m, thread, &k, s);
}

/* Each key's checkpoint added to its finished sum, when it has both; then one entry per key. */
static int finish_syscall_stats(struct trace_model *m)
{
	size_t kept = 0;

	for (size_t i = 0; i < m->nthreads; i++) {
		struct model_thread *t = &m->threads[i];

		for (uint32_t c = t->syscalls; c; c = m->syscalls[c - 1].next) {
			struct model_syscall *e = &m->syscalls[c - 1];
			struct key_entries k;

			if (e->stats.owner_tag != KEY_CKPT)
				continue;
			find_entries(m, t, e->nr, &k);
			if (!k.finished)
				continue;
			if (key_stats_add(&m->hist, &k.finished->stats, &e->stats))
				return -1;
			key_stats_release(&m->hist, &e->stats);
			e->stats.owner_tag = KEY_EMPTY;
		}
		t->syscalls = 0; /* the chains end with the load */
	}
	for (size_t i = 0; i < m->nsyscalls; i++)
		if (m->syscalls[i].stats.owner_tag != KEY_EMPTY)
			m->syscalls[kept++] = m->syscalls[i];
	m->nsyscalls = kept;
	return 0;
}

static void add_reasons(uint64_t *ns, uint64_t *count, const struct gs_offcpu_stats *s)
{
	for (int r = 0; r < GS_OFFCPU_NREASONS; r++) {
		ns[r] += s->ns[r];
		count[r] += s->count[r];
	}
}

/* The same rules as the syscall keys', per thread. */
static int on_offcpu_stats(struct trace_model *m, const struct gs_offcpu_stats *s)
{
	uint64_t key = pid_tid(s->hdr.pid, s->hdr.tid), ts = s->hdr.ts;
	struct model_offcpu *e;
	size_t i;

	if (key_index_find(&m->ix_offcpu, key, 0, &i)) {
		e = &m->offcpu[i];
	} else {
		e = array_grow((void **)&m->offcpu, &m->noffcpu, &m->offcpu_cap, sizeof(*e));
		if (!e || key_index_put(&m->ix_offcpu, key, 0, m->noffcpu - 1))
			return -1;
		memset(e, 0, sizeof(*e));
		e->pid = s->hdr.pid;
		e->tid = s->hdr.tid;
	}
	if (ts > m->stats_ts)
		m->stats_ts = ts;
	if (s->hdr.flags & GS_STATS_FINAL) {
		if (e->has_ckpt && e->ckpt_ts < ts)
			e->has_ckpt = false;
		add_reasons(e->ns, e->count, s);
		if (!e->has_final || ts > e->final_ts)
			e->final_ts = ts;
		e->has_final = true;
	} else if (!(e->has_final && ts < e->final_ts) && !(e->has_ckpt && ts < e->ckpt_ts)) {
		memset(e->ckpt_ns, 0, sizeof(e->ckpt_ns));
		memset(e->ckpt_count, 0, sizeof(e->ckpt_count));
		add_reasons(e->ckpt_ns, e->ckpt_count, s);
		e->ckpt_ts = ts;
		e->has_ckpt = true;
	}
	return get_thread(m, s->hdr.pid, s->hdr.tid) ? 0 : -1;
}

static void finish_offcpu_stats(struct trace_model *m)
{
	for (size_t i = 0; i < m->noffcpu; i++) {
		struct model_offcpu *e = &m->offcpu[i];

		for (int r = 0; e->has_ckpt && r < GS_OFFCPU_NREASONS; r++) {
			e->ns[r] += e->ckpt_ns[r];
			e->count[r] += e->ckpt_count[r];
		}
		e->has_ckpt = false;
	}
}

/* One entry per (process, fd, inode), the latest name: a file opened again and again at the
 * same fd (a loop reading it) costs one, and each distinct name is stored once. */
static int on_fd_name(struct trace_model *m, const struct gs_fd_name *f)
{
	uint32_t id;

	if (string_pool_intern(&m->fd_names, f->name, &id))
		return -1;
	return key_index_put(&m->ix_fds, pid_tid(f->hdr.pid, f->fd), f->ino, id);
}

static int apply(struct trace_model *m, const struct gs_hdr *h)
{
	m->records++;
	switch (h->type) {
	case GS_REC_SYSCALL:
		m->spans++;
		return 0;
	case GS_REC_OFFCPU:
		m->offcpu_spans++;
		return 0;
	case GS_REC_FORK:
		on_fork(m, (const void *)h);
		return 0;
	case GS_REC_EXEC:
		on_exec(m, (const void *)h);
		return 0;
	case GS_REC_EXIT:
		on_process_exit(m, (const void *)h);
		return 0;
	case GS_REC_COMM:
		set_name(m, h->pid, h->tid, ((const struct gs_comm *)h)->comm);
		return 0;
	case GS_REC_TRACE_INFO:
		on_trace_info(m, (const void *)h);
		return 0;
	case GS_REC_FD_NAME:
		return on_fd_name(m, (const void *)h);
	case GS_REC_PROC_INFO:
		return on_proc_info(m, (const void *)h);
	case GS_REC_PROC_ENV:
		return on_proc_env(m, (const void *)h);
	case GS_REC_SYSCALL_STATS:
		return on_syscall_stats(m, (const void *)h);
	case GS_REC_OFFCPU_STATS:
		return on_offcpu_stats(m, (const void *)h);
	case GS_REC_LOSS:
		/* cumulative counters: the last record is the total */
		for (int i = 0; i < GS_LOSS_SLOTS; i++)
			m->losses[i] = ((const struct gs_loss *)h)->count[i];
		return 0;
	case GS_REC_LOSS_MORE:
		for (int i = 0; i < GS_LOSS_SLOTS; i++)
			m->losses[GS_LOSS_SLOTS + i] = ((const struct gs_loss_more *)h)->count[i];
		return 0;
	case GS_REC_TRAILER:
		m->end_ts = h->ts;
		return 0;
	case GS_REC_CUDA_CALL:
	case GS_REC_CUDA_NAME:
	case GS_REC_CUDA_LIB:
		return cuda_model_apply(&m->cuda, h);
	default:
		if (op_model_takes(h))
			return op_model_apply_only(&m->ops, h, m->kept & TRACE_MODEL_OP_CALLS);
		if (gpu_model_takes(h->type))
			return gpu_model_apply(&m->gpu, h);
		if (h->type == GS_REC_PY_STACK && !(m->kept & TRACE_MODEL_PY_STACKS)) {
			py_model_count_stack(&m->py, (const void *)h);
			return 0;
		}
		if (py_model_takes(h->type))
			return py_model_apply(&m->py, h);
		return 0; /* newer record types: skipped */
	}
}

static void count_threads(struct trace_model *m)
{
	for (size_t i = 0; i < m->nthreads; i++) {
		struct model_process *p = get_process(m, m->threads[i].pid);

		if (p)
			p->threads++;
	}
	for (size_t i = 0; i < m->nsyscalls; i++) {
		struct model_process *p = find_process(m, m->syscalls[i].pid);

		if (p)
			p->syscalls += m->syscalls[i].stats.count;
	}
}

int trace_model_load(const char *path, struct trace_model *m, char *err, size_t errlen)
{
	return trace_model_load_only(path, m, TRACE_MODEL_ALL, err, errlen);
}

int trace_model_load_only(const char *path, struct trace_model *m, unsigned keep, char *err,
			  size_t errlen)
{
	return trace_model_load_filtered(path, m, keep, NULL, err, errlen);
}

int trace_model_load_filtered(const char *path, struct trace_model *m, unsigned keep,
			      const struct pid_filter *filter, char *err, size_t errlen)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	memset(m, 0, sizeof(*m));
	m->kept = keep;
	m->filter = filter;
	m->gpu.filter = filter;
	hist_pool_init(&m->hist);
	err[0] = '\0';
	if (trace_reader_open(path, &r, err, errlen))
		return -1;
	m->path = strdup(path);
	if (!m->path) {
		trace_reader_close(r);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	m->header = *trace_reader_header(r);
	trace_reader_set_filter(r, filter);
	while ((ret = trace_reader_next(r, &h)) > 0) {
		if (apply(m, h)) {
			snprintf(err, errlen, "out of memory");
			ret = -1;
			break;
		}
	}
	if (ret < 0 && !err[0])
		snprintf(err, errlen, "%s", trace_reader_error(r));
	m->complete = trace_reader_complete(r);
	trace_reader_close(r);
	if (!ret && finish_syscall_stats(m)) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	if (!ret)
		finish_offcpu_stats(m);
	if (!ret && cuda_model_finish(&m->cuda)) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	if (!ret && gpu_model_finish(&m->gpu, path, &m->ix_threads, err, errlen))
		ret = -1;
	/* after the GPU join: operators get the GPU time of what they launched */
	if (!ret && op_model_finish(&m->ops, &m->gpu)) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	if (!ret && py_model_finish(&m->py)) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	if (ret < 0) {
		/* callers get nothing to free on failure */
		trace_model_free(m);
		return -1;
	}
	count_threads(m);
	return 0;
}

void trace_model_free(struct trace_model *m)
{
	free(m->path);
	free(m->threads);
	free(m->procs);
	free(m->syscalls);
	hist_pool_free(&m->hist);
	free(m->offcpu);
	string_pool_free(&m->fd_names);
	string_pool_free(&m->attr_strings);
	key_index_free(&m->ix_threads);
	key_index_free(&m->ix_procs);
	key_index_free(&m->ix_offcpu);
	key_index_free(&m->ix_fds);
	cuda_model_free(&m->cuda);
	gpu_model_free(&m->gpu);
	op_model_free(&m->ops);
	py_model_free(&m->py);
	memset(m, 0, sizeof(*m));
}

void trace_model_syscall_stats(const struct trace_model *m, const struct model_syscall *s,
			       struct duration_stats *into)
{
	duration_stats_add_key(into, &m->hist, &s->stats);
}

const char *trace_model_thread_name(const struct trace_model *m, uint32_t pid, uint32_t tid)
{
	const struct model_thread *t = find_thread(m, pid, tid);

	return t && t->comm[0] ? t->comm : "?";
}

const struct model_process *trace_model_process(const struct trace_model *m, uint32_t pid)
{
	return find_process(m, pid);
}

uint64_t trace_model_loss_total(const struct trace_model *m)
{
	uint64_t sum = 0;

	for (int i = 0; i < 2 * GS_LOSS_SLOTS; i++)
		sum += m->losses[i];
	return sum + gpu_model_loss_total(&m->gpu);
}

const char *trace_model_fd_name(const struct trace_model *m, uint32_t pid, uint32_t fd,
				uint64_t ino)
{
	size_t i;

	if (ino && key_index_find(&m->ix_fds, pid_tid(pid, fd), ino, &i))
		return string_pool_get(&m->fd_names, (uint32_t)i);
	return NULL;
}

const char *trace_model_process_user(const struct trace_model *m, const struct model_process *p)
{
	return p->has_attr ? string_pool_get(&m->attr_strings, p->user) : "";
}

const char *trace_model_process_cgroup(const struct trace_model *m, const struct model_process *p)
{
	return p->has_attr ? string_pool_get(&m->attr_strings, p->cgroup) : "";
}
