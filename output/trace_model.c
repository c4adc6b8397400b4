// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "trace_model.h"
#include "trace_reader.h"

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

/* Statistics are cumulative checkpoints: a later record for the same key replaces it. */
static int on_syscall_stats(struct trace_model *m, const struct gs_syscall_stats *s)
{
	uint64_t key = pid_tid(s->hdr.pid, s->hdr.tid);
	struct model_syscall *e;
	size_t i;

	if (key_index_find(&m->ix_syscalls, key, s->nr, &i)) {
		e = &m->syscalls[i];
	} else {
		e = array_grow((void **)&m->syscalls, &m->nsyscalls, &m->syscalls_cap, sizeof(*e));
		if (!e || key_index_put(&m->ix_syscalls, key, s->nr, m->nsyscalls - 1))
			return -1;
	}
	e->pid = s->hdr.pid;
	e->tid = s->hdr.tid;
	e->nr = s->nr;
	duration_stats_init(&e->stats);
	duration_stats_add_record(&e->stats, s);
	m->stats_ts = s->hdr.ts;
	if (!get_thread(m, s->hdr.pid, s->hdr.tid) || !get_process(m, s->hdr.pid))
		return -1;
	return 0;
}

static int on_offcpu_stats(struct trace_model *m, const struct gs_offcpu_stats *s)
{
	uint64_t key = pid_tid(s->hdr.pid, s->hdr.tid);
	struct model_offcpu *e;
	size_t i;

	if (key_index_find(&m->ix_offcpu, key, 0, &i)) {
		e = &m->offcpu[i];
	} else {
		e = array_grow((void **)&m->offcpu, &m->noffcpu, &m->offcpu_cap, sizeof(*e));
		if (!e || key_index_put(&m->ix_offcpu, key, 0, m->noffcpu - 1))
			return -1;
	}
	e->pid = s->hdr.pid;
	e->tid = s->hdr.tid;
	memcpy(e->ns, s->ns, sizeof(e->ns));
	memcpy(e->count, s->count, sizeof(e->count));
	return get_thread(m, s->hdr.pid, s->hdr.tid) ? 0 : -1;
}

static int on_fd_name(struct trace_model *m, const struct gs_fd_name *f)
{
	struct model_fd *e = array_grow((void **)&m->fds, &m->nfds, &m->fds_cap, sizeof(*e));
	uint64_t key = pid_tid(f->hdr.pid, f->fd);

	if (!e)
		return -1;
	e->pid = f->hdr.pid;
	e->fd = f->fd;
	e->ino = f->ino;
	e->name = strdup(f->name);
	if (!e->name)
		return -1;
	/* keyed by inode too: an fd number is reused, an (fd, inode) pair rarely */
	return key_index_put(&m->ix_fds, key, f->ino, m->nfds - 1);
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
		if (gpu_model_takes(h->type))
			return gpu_model_apply(&m->gpu, h);
		if (op_model_takes(h->type))
			return op_model_apply(&m->ops, h);
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
}

int trace_model_load(const char *path, struct trace_model *m, char *err, size_t errlen)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	memset(m, 0, sizeof(*m));
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
	free(m->offcpu);
	for (size_t i = 0; i < m->nfds; i++)
		free(m->fds[i].name);
	free(m->fds);
	key_index_free(&m->ix_threads);
	key_index_free(&m->ix_procs);
	key_index_free(&m->ix_syscalls);
	key_index_free(&m->ix_offcpu);
	key_index_free(&m->ix_fds);
	cuda_model_free(&m->cuda);
	gpu_model_free(&m->gpu);
	op_model_free(&m->ops);
	py_model_free(&m->py);
	memset(m, 0, sizeof(*m));
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
		return m->fds[i].name;
	return NULL;
}
