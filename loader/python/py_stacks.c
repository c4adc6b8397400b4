// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/clocks.h"
#include "lib/exit_codes.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "loader/python/py_check.h"
#include "loader/python/py_code.h"
#include "loader/python/py_runtime.h"
#include "loader/python/py_stacks.h"
#include "loader/session/bpf_session.h"
#include "loader/session/link_batch.h"
#include "output/trace/trace_writer.h"
#include "python.skel.h"

/* an exec'd process is looked at this long for an interpreter coming up, this often */
#define WATCH_NS  (2 * 1000000000ULL)
#define RETRY_NS  (20 * 1000000ULL)
#define GONE	  (SIZE_MAX - 1) /* ix_procs value of a process no longer tracked */
#define ANCESTORS 4		 /* forking processes a gone child's code objects are read from */

enum proc_state {
	PROC_WATCHING, /* exec'd or found not ready: retried until the deadline */
	PROC_TRACED,   /* in py_procs */
	PROC_DONE,     /* refused: not looked at again */
};

struct proc {
	pid_t pid;
	pid_t parent; /* the traced process it was forked from, or 0 */
	enum proc_state state;
	uint64_t deadline, last_try;
	struct py_runtime rt;
	struct key_index codes; /* (code, stamp) already written */
};

struct py_stacks {
	struct bpf_session *session;
	struct trace_writer *writer;
	struct py_elf_cache *elf;
	bool quiet;
	int map_fd;
	struct proc **procs; /* NULL where a process was removed */
	size_t nprocs, procs_cap;
	size_t nremoved;	   /* NULL slots in procs[], dropped by compact() */
	struct key_index ix_procs; /* pid -> procs[], or GONE */
	struct bpf_link **links;   /* the sampler's, one per CPU */
	size_t nlinks;
};

int py_stacks_new(struct bpf_session *s, struct trace_writer *w, bool quiet, struct py_stacks **out)
{
	struct py_stacks *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return -ENOMEM;
	ps->elf = py_elf_cache_new();
	if (!ps->elf) {
		free(ps);
		return -ENOMEM;
	}
	ps->session = s;
	ps->writer = w;
	ps->quiet = quiet;
	ps->map_fd = bpf_session_py_procs_fd(s);
	*out = ps;
	return 0;
}

static struct proc *find_proc(const struct py_stacks *ps, pid_t pid)
{
	size_t i;

	if (!key_index_find(&ps->ix_procs, (uint64_t)pid, 0, &i) || i == GONE)
		return NULL;
	return ps->procs[i];
}

static struct proc *add_proc(struct py_stacks *ps, pid_t pid)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (ps->nprocs == ps->procs_cap) {
		size_t cap = ps->procs_cap ? ps->procs_cap * 2 : 16;
		struct proc **v = realloc(ps->procs, cap * sizeof(*v));

		if (!v)
			goto fail;
		ps->procs = v;
		ps->procs_cap = cap;
	}
	if (key_index_put(&ps->ix_procs, (uint64_t)pid, 0, ps->nprocs))
		goto fail;
	p->pid = pid;
	ps->procs[ps->nprocs++] = p;
	return p;
fail:
	free(p);
	return NULL;
}

/* Forgets a process and takes it out of BPF's map (exit, exec). */
static void remove_proc(struct py_stacks *ps, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	size_t i;

	if (!key_index_find(&ps->ix_procs, (uint64_t)pid, 0, &i) || i == GONE)
		return;
	if (ps->procs[i]->state == PROC_TRACED)
		bpf_map_delete_elem(ps->map_fd, &key);
	key_index_free(&ps->procs[i]->codes);
	free(ps->procs[i]);
	ps->procs[i] = NULL;
	ps->nremoved++;
	key_index_put(&ps->ix_procs, (uint64_t)pid, 0, GONE);
}

/* Drops the slots of removed processes (and their GONE index entries) once they are at least
 * as many as the live ones, so a recording's memory and py_stacks_tick()'s walk follow the
 * processes alive, not every process it ever saw. Never while procs[] is being walked. */
static void compact(struct py_stacks *ps)
{
	struct key_index ix = {0};
	size_t n = 0;

	if (ps->nremoved < 64 || ps->nremoved * 2 < ps->nprocs)
		return;
	for (size_t i = 0; i < ps->nprocs; i++)
		if (ps->procs[i] && key_index_put(&ix, (uint64_t)ps->procs[i]->pid, 0, n++)) {
			key_index_free(&ix);
			return; /* out of memory: left as it is */
		}
	n = 0;
	for (size_t i = 0; i < ps->nprocs; i++)
		if (ps->procs[i])
			ps->procs[n++] = ps->procs[i];
	ps->nprocs = n;
	ps->nremoved = 0;
	key_index_free(&ps->ix_procs);
	ps->ix_procs = ix;
}

/* Whether a process has exited (zombie or reaped): a pidfd turns readable then. */
static bool exited(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	bool gone;

	if (fd < 0)
		return errno == ESRCH;
	gone = poll(&p, 1, 0) > 0;
	close(fd);
	return gone;
}

static int write_proc_record(struct py_stacks *ps, const struct proc *p, uint32_t state,
			     const char *message)
{
	struct gs_py_proc r = {
	    .hdr = {.type = GS_REC_PY_PROC, .pid = (uint32_t)p->pid, .ts = gs_monotonic_ns()},
	    .state = state,
	    .version_hex = p->rt.version_hex,
	};

	return trace_writer_append_tail(ps->writer, &r.hdr, sizeof(r), message, 1024);
}

/* Hands the layout to BPF: stacks of this process are captured from now on. */
static int put_in_map(struct py_stacks *ps, struct proc *p)
{
	uint32_t key = (uint32_t)p->pid;
	int err = 0;

	if (bpf_map_update_elem(ps->map_fd, &key, &p->rt.off, BPF_ANY)) {
		err = -errno;
		p->state = PROC_DONE;
		gs_error("cannot capture Python stacks in pid %d: %s", p->pid, strerror(-err));
		return write_proc_record(ps, p, GS_PY_PROC_REFUSED, "the py_procs map is full");
	}
	p->state = PROC_TRACED;
	return write_proc_record(ps, p, GS_PY_PROC_TRACED, p->rt.message);
}

static int start_tracing(struct py_stacks *ps, struct proc *p)
{
	if (!ps->quiet)
		fprintf(stderr, "gpuspy: python %s in pid %d: stacks on\n", p->rt.version, p->pid);
	return put_in_map(ps, p);
}

static int refuse(struct py_stacks *ps, struct proc *p)
{
	char msg[sizeof(p->rt.path) + sizeof(p->rt.message) + 4];

	p->state = PROC_DONE;
	if (!ps->quiet)
		fprintf(stderr, "gpuspy: python %s in pid %d: not supported: %s\n",
			p->rt.version[0] ? p->rt.version : "(unknown version)", p->pid,
			p->rt.message);
	snprintf(msg, sizeof(msg), "%s: %s", p->rt.path, p->rt.message);
	return write_proc_record(ps, p, GS_PY_PROC_REFUSED, msg);
}

/* Still not ready at the deadline: refused, saying what never became ready. */
static int give_up(struct py_stacks *ps, struct proc *p)
{
	char why[256];

	snprintf(why, sizeof(why), "%.200s", p->rt.message); /* not-ready reasons are short */
	snprintf(p->rt.message, sizeof(p->rt.message), "gave up waiting: %s", why);
	return refuse(ps, p);
}

/* Looks at a watched process once; keeps it watched while its interpreter may still come. */
static int try_proc(struct py_stacks *ps, struct proc *p, uint64_t now)
{
	int err = py_runtime_probe(ps->elf, p->pid, &p->rt);

	if (!err && p->rt.state == PY_RUNTIME_FOUND)
		err = py_check(p->pid, &p->rt);

	p->last_try = now;
	if (err == -ENOMEM)
		return err;
	if (err) { /* gone, or its memory unreadable: nothing to trace */
		remove_proc(ps, p->pid);
		return 0;
	}
	switch (p->rt.state) {
	case PY_RUNTIME_READY:
		return start_tracing(ps, p);
	case PY_RUNTIME_REFUSED:
		return refuse(ps, p);
	case PY_RUNTIME_NOT_READY:
		if (now < p->deadline)
			return 0;
		return give_up(ps, p);
	default:
		if (now >= p->deadline)
			remove_proc(ps, p->pid);
		return 0;
	}
}

/* Starts watching `pid` (again): its interpreter is looked for now and until the deadline. */
static int watch(struct py_stacks *ps, pid_t pid, uint64_t now)
{
	struct proc *p;

	remove_proc(ps, pid);
	p = add_proc(ps, pid);
	if (!p)
		return -ENOMEM;
	p->state = PROC_WATCHING;
	p->deadline = now + WATCH_NS;
	return try_proc(ps, p, now);
}

/* A running process: without a runtime mapped now it has none, unless it loads one later
 * (GS_REC_LIBS_CHANGED); one that is starting up is watched. */
int py_stacks_scan(struct py_stacks *ps, pid_t pid)
{
	struct proc *p = find_proc(ps, pid);
	int err;

	if (p && p->state != PROC_WATCHING)
		return 0;
	err = watch(ps, pid, gs_monotonic_ns());
	p = find_proc(ps, pid);
	if (p && p->state == PROC_WATCHING && p->rt.state == PY_RUNTIME_NONE)
		remove_proc(ps, pid);
	return err;
}

/* A forked child runs its parent's interpreter at the same addresses. */
static int on_fork(struct py_stacks *ps, const struct gs_fork *f)
{
	struct proc *parent = find_proc(ps, (pid_t)f->hdr.pid), *child;
	uint32_t key = f->child_pid;
	char msg[64];
	int err;

	if ((f->hdr.flags & GS_FORK_THREAD) || !parent || parent->state == PROC_DONE)
		return 0;
	if (parent->state == PROC_WATCHING)
		return watch(ps, (pid_t)f->child_pid, gs_monotonic_ns());
	remove_proc(ps, (pid_t)f->child_pid);
	child = add_proc(ps, (pid_t)f->child_pid);
	if (!child)
		return -ENOMEM;
	child->rt = parent->rt;
	child->parent = parent->pid;
	snprintf(msg, sizeof(msg), "forked from pid %u", f->hdr.pid);
	snprintf(child->rt.message, sizeof(child->rt.message), "%s: python %s, %s", parent->rt.path,
		 parent->rt.version, msg);
	err = put_in_map(ps, child);
	/* BPF copied the parent's entry at the fork and deletes it at the exit; a child that is
	 * gone already (this record is read late) must not get it back. Its record of the exit,
	 * later in the ring, removes it here: its stacks before that are still named. */
	if (!err && child->state == PROC_TRACED && exited(child->pid))
		bpf_map_delete_elem(ps->map_fd, &key);
	return err;
}

/* The code objects of a stack new to the trace, read while they are (probably) alive. */
static int write_codes(struct py_stacks *ps, struct proc *p, const struct gs_py_stack *s)
{
	pid_t from[1 + ANCESTORS] = {p->pid};
	size_t nfrom = 1, idx;
	int err = 0;

	/* a worker that exited since: what it inherited is in the processes it was forked from */
	for (const struct proc *a = p; nfrom < 1 + ANCESTORS && a->parent;) {
		a = find_proc(ps, a->parent);
		if (!a)
			break;
		from[nfrom++] = a->pid;
	}

	for (uint32_t i = 0; i < s->nframes && !err; i++) {
		const struct gs_py_frame *f = &s->frames[i];

		if (key_index_find(&p->codes, f->code, f->stamp, &idx))
			continue;
		if (key_index_put(&p->codes, f->code, f->stamp, 0))
			return -ENOMEM;
		err = py_code_write(ps->writer, &p->rt, p->pid, from, nfrom, f->code, f->stamp,
				    s->hdr.ts);
	}
	return err;
}

static int on_stack(struct py_stacks *ps, const struct gs_py_stack *s)
{
	struct proc *p;
	int err;

	if (s->hdr.size < sizeof(*s) || s->nframes > GS_PY_MAX_FRAMES ||
	    s->hdr.size < sizeof(*s) + s->nframes * sizeof(s->frames[0]))
		return 0;
	err = trace_writer_append(ps->writer, &s->hdr);
	if (err)
		return err;
	p = find_proc(ps, (pid_t)s->hdr.pid);
	return p && p->state == PROC_TRACED ? write_codes(ps, p, s) : 0;
}

int py_stacks_on_record(struct py_stacks *ps, const struct gs_hdr *rec)
{
	struct proc *p;

	switch (rec->type) {
	case GS_REC_PY_STACK:
		return on_stack(ps, (const void *)rec);
	case GS_REC_FORK:
		return on_fork(ps, (const void *)rec);
	case GS_REC_EXEC:
		return watch(ps, (pid_t)rec->pid, gs_monotonic_ns());
	case GS_REC_EXIT:
		if (rec->flags & GS_EXIT_GROUP)
			remove_proc(ps, (pid_t)rec->pid);
		return 0;
	case GS_REC_LIBS_CHANGED:
		/* a libpython loaded by dlopen */
		p = find_proc(ps, (pid_t)rec->pid);
		return p && p->state != PROC_WATCHING
			   ? 0
			   : watch(ps, (pid_t)rec->pid, gs_monotonic_ns());
	default:
		return 0;
	}
}

int py_stacks_tick(struct py_stacks *ps, uint64_t now)
{
	int err = 0;

	compact(ps);
	for (size_t i = 0; i < ps->nprocs && !err; i++) {
		struct proc *p = ps->procs[i];

		if (p && p->state == PROC_WATCHING && now - p->last_try >= RETRY_NS)
			err = try_proc(ps, p, now);
	}
	return err;
}

static int open_cpu_clock(int cpu, uint32_t hz)
{
	struct perf_event_attr attr = {
	    .type = PERF_TYPE_SOFTWARE,
	    .size = sizeof(attr),
	    .config = PERF_COUNT_SW_CPU_CLOCK,
	    .sample_period = 1000000000ULL / hz, /* cpu-clock counts nanoseconds */
	};

	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int py_stacks_attach_sampler(struct py_stacks *ps, uint32_t hz)
{
	struct python_bpf *skel = bpf_session_python(ps->session);
	int ncpus = libbpf_num_possible_cpus(), fd, err;

	if (!skel || !hz)
		return 0;
	if (ncpus < 0)
		return ncpus;
	ps->links = calloc((size_t)ncpus, sizeof(*ps->links));
	if (!ps->links)
		return -ENOMEM;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		fd = open_cpu_clock(cpu, hz);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* a possible CPU that is offline */
			err = -errno;
			gs_error("cannot start the CPU sampler on cpu %d: %s", cpu, strerror(-err));
			return err;
		}
		ps->links[ps->nlinks] = bpf_program__attach_perf_event(skel->progs.py_sample, fd);
		if (!ps->links[ps->nlinks]) {
			err = -errno;
			close(fd);
			gs_error("cannot attach the CPU sampler on cpu %d: %s", cpu,
				 strerror(-err));
			return err;
		}
		ps->nlinks++;
	}
	return 0;
}

void py_stacks_detach(struct py_stacks *ps, struct link_batch *batch)
{
	if (!ps)
		return;
	/* a perf-event link owns its event fd and closes it */
	for (size_t i = 0; i < ps->nlinks; i++)
		link_batch_add(batch, ps->links[i], NULL);
	ps->nlinks = 0;
}

void py_stacks_forget(struct py_stacks *ps, const struct pid_list *dead)
{
	(void)dead; /* each was removed at its exit record (a pid reused since is a new process) */
	if (ps)
		compact(ps);
}

size_t py_stacks_tracked(const struct py_stacks *ps)
{
	return ps ? ps->nprocs : 0;
}

void py_stacks_free(struct py_stacks *ps)
{
	if (!ps)
		return;
	py_stacks_detach(ps, NULL);
	free(ps->links);
	for (size_t i = 0; i < ps->nprocs; i++) {
		if (!ps->procs[i])
			continue;
		key_index_free(&ps->procs[i]->codes);
		free(ps->procs[i]);
	}
	free(ps->procs);
	key_index_free(&ps->ix_procs);
	py_elf_cache_free(ps->elf);
	free(ps);
}
