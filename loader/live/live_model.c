// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/array_grow.h"
#include "lib/cgroup_attr.h"
#include "loader/live/live_model.h"
#include "loader/live/live_waits.h"
#include "loader/proc/procfs.h"

/* The last cumulative statistics of one (process, thread, syscall) key. */
struct live_stat {
	uint32_t pid, tid, nr;
	uint64_t count, total_ns;
};

/* The last cumulative off-CPU totals of one thread. */
struct live_offcpu {
	uint32_t pid, tid;
	uint64_t ns[GS_OFFCPU_NREASONS];
};

void live_model_init(struct live_model *lm, uint64_t grace_ns)
{
	memset(lm, 0, sizeof(*lm));
	lm->grace_ns = grace_ns;
	lm->clk_tck = sysconf(_SC_CLK_TCK);
	if (lm->clk_tck <= 0)
		lm->clk_tck = 100;
}

void live_model_free(struct live_model *lm)
{
	free(lm->procs);
	free(lm->containers);
	free(lm->users);
	free(lm->stats);
	free(lm->offcpu);
	key_index_free(&lm->ix_procs);
	key_index_free(&lm->ix_containers);
	key_index_free(&lm->ix_users);
	key_index_free(&lm->ix_stats);
	key_index_free(&lm->ix_offcpu);
	gpu_mem_free(&lm->mem);
	memset(lm, 0, sizeof(*lm));
}

const char *live_mode_name(enum live_mode m)
{
	static const char *const names[] = {"-", "uprobes", "bridge", "injected"};

	return m <= LIVE_MODE_INJECTED ? names[m] : "?";
}

static struct live_proc *find_proc(const struct live_model *lm, uint32_t pid)
{
	size_t i;

	return key_index_find(&lm->ix_procs, pid, 0, &i) ? &lm->procs[i] : NULL;
}

static struct live_proc *get_proc(struct live_model *lm, uint32_t pid)
{
	struct live_proc *p = find_proc(lm, pid);

	if (p)
		return p;
	p = array_grow((void **)&lm->procs, &lm->nprocs, &lm->procs_cap, sizeof(*p));
	if (!p || key_index_put(&lm->ix_procs, pid, 0, lm->nprocs - 1))
		return NULL;
	p->pid = pid;
	p->wait_offcpu = -1;
	snprintf(p->container, sizeof(p->container), "unknown");
	snprintf(p->user, sizeof(p->user), "unknown");
	return p;
}

/* A pid handed out again: the old process's counters must not continue in the new one's. */
static void reset_proc(struct live_proc *p, uint32_t pid)
{
	/* BPF's launch count of the pid is removed only at the tick after the old process's exit:
	 * until then the new process's launches add to it */
	uint64_t launches_seen = p->launches_seen;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->launches_seen = launches_seen;
	p->wait_offcpu = -1;
}

static int on_fork(struct live_model *lm, const struct gs_fork *f)
{
	struct live_proc *parent, *child;

	if (f->hdr.flags & GS_FORK_THREAD)
		return 0;
	child = get_proc(lm, f->child_pid);
	if (!child)
		return -ENOMEM;
	if (child->exited || child->c.api_calls || child->cpu_base_set)
		reset_proc(child, f->child_pid);
	child->ppid = f->hdr.pid;
	snprintf(child->comm, sizeof(child->comm), "%s", f->comm);
	parent = find_proc(lm, f->hdr.pid);
	snprintf(child->container, sizeof(child->container), "%s",
		 parent ? parent->container : "unknown");
	snprintf(child->user, sizeof(child->user), "%s", parent ? parent->user : "unknown");
	if (parent) {
		child->has_attr = parent->has_attr;
		child->uid = parent->uid;
	}
	return 0;
}

static int on_name(struct live_model *lm, const struct gs_hdr *h, const char *comm)
{
	struct live_proc *p = get_proc(lm, h->pid);

	if (!p)
		return -ENOMEM;
	if (h->pid == h->tid || !p->comm[0])
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	return 0;
}

static int on_exit_rec(struct live_model *lm, const struct gs_exit *e)
{
	struct live_proc *p = find_proc(lm, e->hdr.pid);

	if (p && (e->hdr.flags & GS_EXIT_GROUP) && !p->exited) {
		p->exited = true;
		p->exit_ns = e->hdr.ts;
	}
	return 0;
}

static int on_proc_info(struct live_model *lm, const struct gs_proc_info *pi)
{
	struct live_proc *p = get_proc(lm, pi->hdr.pid);
	struct cgroup_attr attr;

	if (!p)
		return -ENOMEM;
	cgroup_classify(pi->cgroup, &attr);
	p->has_attr = true;
	p->uid = pi->euid;
	snprintf(p->user, sizeof(p->user), "%s", pi->user);
	snprintf(p->container, sizeof(p->container), "%s", attr.label);
	return 0;
}

static void raise_mode(struct live_proc *p, enum live_mode m)
{
	/* injected is how the bridge got there: it stays, whatever the records say later */
	if (p->mode != LIVE_MODE_INJECTED && m > p->mode)
		p->mode = m;
}

static int on_cuda_lib(struct live_model *lm, const struct gs_cuda_lib *l)
{
	struct live_proc *p = get_proc(lm, l->hdr.pid);

	if (!p)
		return -ENOMEM;
	if (l->roles & GS_CUDA_LIB_BRIDGE)
		raise_mode(p, LIVE_MODE_BRIDGE);
	else if (l->probes)
		raise_mode(p, LIVE_MODE_UPROBES);
	return 0;
}

static int on_bridge_load(struct live_model *lm, const struct gs_bridge_load *b)
{
	struct live_proc *p = get_proc(lm, b->hdr.pid);

	if (!p)
		return -ENOMEM;
	if (b->outcome == GS_BRIDGE_LOAD_INJECTED)
		p->mode = LIVE_MODE_INJECTED;
	else if (b->outcome == GS_BRIDGE_LOAD_PRESENT)
		raise_mode(p, LIVE_MODE_BRIDGE);
	return 0;
}

static uint64_t outstanding(const struct gpu_mem_usage *u)
{
	uint64_t sum = 0;

	for (int k = 0; k < GS_MEM_NKINDS; k++)
		sum += u->kind[k].outstanding_bytes;
	return sum;
}

/* What a successful outermost call adds: launches, copies, memory. */
static int count_success(struct live_model *lm, struct live_proc *p, const struct gs_cuda_call *c,
			 const struct cuda_call_info *info)
{
	const struct gpu_mem_usage *u;
	bool oom = false;

	switch (info->op) {
	case GS_CUDA_OP_LAUNCH:
	case GS_CUDA_OP_GRAPH:
		p->c.launches++;
		return 0;
	case GS_CUDA_OP_MEMCPY:
		p->c.copies++;
		p->c.copy_bytes[gpu_mem_copy_kind(&lm->mem, p->pid, info)] += info->bytes;
		return 0;
	case GS_CUDA_OP_MEMSET:
		p->c.memset_bytes += info->bytes;
		return 0;
	case GS_CUDA_OP_ALLOC:
	case GS_CUDA_OP_FREE:
		u = gpu_mem_apply(&lm->mem, c, info, &oom);
		if (u)
			p->gpu_mem_bytes = outstanding(u);
		return oom ? -ENOMEM : 0;
	default:
		return 0;
	}
}

static int on_cuda_call(struct live_model *lm, const struct gs_cuda_call *c)
{
	struct cuda_call_info info;
	struct live_proc *p;

	/* a runtime call and the driver calls it makes are one API call */
	if ((c->hdr.flags & GS_CUDA_NESTED) || !cuda_call_decode(c, &info))
		return 0;
	p = get_proc(lm, c->hdr.pid);
	if (!p)
		return -ENOMEM;
	raise_mode(p, LIVE_MODE_UPROBES);
	p->c.api_calls++;
	p->c.api_ns += c->dur_ns;
	if (cuda_call_failed(c, &info)) {
		p->c.api_errors++;
		return 0;
	}
	return count_success(lm, p, c, &info);
}

static struct live_device *get_device(struct live_model *lm, uint32_t device)
{
	for (size_t i = 0; i < lm->ndevices; i++)
		if (lm->devices[i].device == device)
			return &lm->devices[i];
	if (lm->ndevices == LIVE_MAX_DEVICES)
		return NULL;
	lm->devices[lm->ndevices].device = device;
	return &lm->devices[lm->ndevices++];
}

/* Time covered by kernels, overlaps counted once: the bridge hands a device's kernels over in
 * start order per stream, so a running "busy until" is the union for one stream and close to
 * it across streams. */
static uint64_t add_busy(uint64_t *busy_until, uint64_t start, uint64_t end)
{
	uint64_t from = start > *busy_until ? start : *busy_until;

	if (end <= from)
		return 0;
	*busy_until = end;
	return end - from;
}

static int on_gpu_kernel(struct live_model *lm, const struct gs_gpu_kernel *k)
{
	struct live_proc *p = get_proc(lm, k->hdr.pid);
	struct live_device *d = get_device(lm, k->device);
	uint64_t end = k->hdr.ts + k->dur_ns;

	if (!p)
		return -ENOMEM;
	raise_mode(p, LIVE_MODE_BRIDGE);
	p->c.kernels++;
	p->c.gpu_busy_ns += add_busy(&p->busy_until[k->device % LIVE_MAX_DEVICES], k->hdr.ts, end);
	if (d) {
		d->kernels++;
		d->busy_ns += add_busy(&d->busy_until, k->hdr.ts, end);
	}
	return 0;
}

static int on_gpu_other(struct live_model *lm, const struct gs_hdr *h)
{
	struct live_proc *p = get_proc(lm, h->pid);

	if (!p)
		return -ENOMEM;
	raise_mode(p, LIVE_MODE_BRIDGE);
	return 0;
}

static void note_main_wait(struct live_proc *p, uint32_t nr, uint64_t delta_ns)
{
	if (delta_ns > p->wait_ns) {
		p->wait_ns = delta_ns;
		p->wait_nr = nr;
	}
}

static size_t i_of(const struct live_model *lm, const struct live_stat *st)
{
	return (size_t)(st - lm->stats);
}

/* Swap-remove: the last key takes the place of the removed one. */
static void remove_stat(struct live_model *lm, size_t i)
{
	struct live_stat *st = &lm->stats[i], *last = &lm->stats[lm->nstats - 1];

	key_index_remove(&lm->ix_stats, (uint64_t)st->pid << 32 | st->tid, st->nr);
	if (st != last) {
		*st = *last;
		key_index_put(&lm->ix_stats, (uint64_t)st->pid << 32 | st->tid, st->nr, i);
	}
	lm->nstats--;
}

/* Statistics are cumulative per key: the difference to the key's last record is what the
 * process did since. A key whose count went down is a thread id used again after a final. */
static int on_syscall_stats(struct live_model *lm, const struct gs_syscall_stats *s)
{
	const uint64_t key = (uint64_t)s->hdr.pid << 32 | s->hdr.tid;
	struct live_proc *p = get_proc(lm, s->hdr.pid);
	struct live_stat *st;
	uint64_t dcount, dns;
	enum syscall_class cls = syscall_class_of(s->nr);
	size_t i;

	if (!p)
		return -ENOMEM;
	if (key_index_find(&lm->ix_stats, key, s->nr, &i)) {
		st = &lm->stats[i];
	} else {
		st = array_grow((void **)&lm->stats, &lm->nstats, &lm->stats_cap, sizeof(*st));
		if (!st || key_index_put(&lm->ix_stats, key, s->nr, lm->nstats - 1))
			return -ENOMEM;
		st->pid = s->hdr.pid;
		st->tid = s->hdr.tid;
		st->nr = s->nr;
	}
	if (s->sums.count < st->count) {
		st->count = 0;
		st->total_ns = 0;
	}
	dcount = s->sums.count - st->count;
	dns = s->sums.total_ns >= st->total_ns ? s->sums.total_ns - st->total_ns : 0;
	st->count = s->sums.count;
	st->total_ns = s->sums.total_ns;
	p->c.syscalls[cls] += dcount;
	p->c.syscall_ns[cls] += dns;
	if (s->hdr.tid == s->hdr.pid)
		note_main_wait(p, s->nr, dns);
	/* a final record: the thread is gone and its key with it; counts stay in the process */
	if (s->hdr.flags & GS_STATS_FINAL)
		remove_stat(lm, i_of(lm, st));
	return 0;
}

static int on_offcpu_stats(struct live_model *lm, const struct gs_offcpu_stats *s)
{
	const uint64_t key = (uint64_t)s->hdr.pid << 32 | s->hdr.tid;
	struct live_proc *p = get_proc(lm, s->hdr.pid);
	struct live_offcpu *o;
	size_t i;

	if (!p)
		return -ENOMEM;
	if (key_index_find(&lm->ix_offcpu, key, 0, &i)) {
		o = &lm->offcpu[i];
	} else {
		o = array_grow((void **)&lm->offcpu, &lm->noffcpu, &lm->offcpu_cap, sizeof(*o));
		if (!o || key_index_put(&lm->ix_offcpu, key, 0, lm->noffcpu - 1))
			return -ENOMEM;
		o->pid = s->hdr.pid;
		o->tid = s->hdr.tid;
	}
	for (int r = 0; r < GS_OFFCPU_NREASONS; r++) {
		uint64_t d = s->ns[r] >= o->ns[r] ? s->ns[r] - o->ns[r] : s->ns[r];

		p->c.offcpu_ns[r] += d;
		if (s->hdr.tid == s->hdr.pid && d > p->wait_offcpu_ns) {
			p->wait_offcpu_ns = d;
			p->wait_offcpu = r;
		}
		o->ns[r] = (s->hdr.flags & GS_STATS_FINAL) ? 0 : s->ns[r];
	}
	return 0;
}

static int on_losses(struct live_model *lm, const struct gs_hdr *h)
{
	const __u64 *count = h->type == GS_REC_LOSS ? ((const struct gs_loss *)h)->count
						    : ((const struct gs_loss_more *)h)->count;

	for (int i = 0; i < GS_LOSS_SLOTS; i++)
		lm->losses[(h->type == GS_REC_LOSS ? 0 : GS_LOSS_SLOTS) + i] = count[i];
	return 0;
}

int live_model_take(void *ctx, const struct gs_hdr *h)
{
	struct live_model *lm = ctx;
	int err = lm->waits ? live_waits_take(lm->waits, h) : 0;

	if (err)
		return err;
	lm->events++;
	switch (h->type) {
	case GS_REC_FORK:
		return on_fork(lm, (const void *)h);
	case GS_REC_EXEC:
		return on_name(lm, h, ((const struct gs_exec *)h)->comm);
	case GS_REC_COMM:
		return on_name(lm, h, ((const struct gs_comm *)h)->comm);
	case GS_REC_EXIT:
		return on_exit_rec(lm, (const void *)h);
	case GS_REC_PROC_INFO:
		return on_proc_info(lm, (const void *)h);
	case GS_REC_CUDA_LIB:
		return on_cuda_lib(lm, (const void *)h);
	case GS_REC_BRIDGE_LOAD:
		return on_bridge_load(lm, (const void *)h);
	case GS_REC_CUDA_CALL:
		return on_cuda_call(lm, (const void *)h);
	case GS_REC_GPU_KERNEL:
		return on_gpu_kernel(lm, (const void *)h);
	case GS_REC_GPU_MEMCPY:
	case GS_REC_GPU_MEMSET:
		return on_gpu_other(lm, h);
	case GS_REC_SYSCALL_STATS:
		return on_syscall_stats(lm, (const void *)h);
	case GS_REC_OFFCPU_STATS:
		return on_offcpu_stats(lm, (const void *)h);
	case GS_REC_LOSS:
	case GS_REC_LOSS_MORE:
		return on_losses(lm, h);
	case GS_REC_GPU_LOSS:
		lm->gpu_lost = ((const struct gs_gpu_loss *)h)->records +
			       ((const struct gs_gpu_loss *)h)->gaps;
		return 0;
	default:
		return 0;
	}
}

bool live_model_launches(void *ctx, uint32_t pid, uint64_t launches)
{
	struct live_model *lm = ctx;
	struct live_proc *p = get_proc(lm, pid);
	uint64_t added;

	if (!p)
		return false; /* out of memory: counted at the next tick */
	/* less than before: a new process on a pid whose old count was removed */
	added = launches >= p->launches_seen ? launches - p->launches_seen : launches;
	p->launches_seen = launches;
	if (added) {
		raise_mode(p, LIVE_MODE_UPROBES);
		p->c.launches += added;
		p->c.api_calls += added;
	}
	if (!p->exited)
		return false;
	p->launches_seen = 0;
	return true;
}

uint64_t live_model_lost(const struct live_model *lm)
{
	uint64_t sum = lm->gpu_lost;

	for (size_t i = 0; i < sizeof(lm->losses) / sizeof(lm->losses[0]); i++)
		sum += lm->losses[i];
	return sum;
}

/* utime + stime (fields 14 and 15 of /proc/PID/stat) in clock ticks; -errno when it is gone. */
static int read_cpu_ticks(uint32_t pid, uint64_t *ticks)
{
	unsigned long long v[2];
	int err = procfs_stat_fields((pid_t)pid, 14, 2, v);

	if (!err)
		*ticks = v[0] + v[1];
	return err;
}

/* Gone without an exit record (one lost to a full ring buffer): it exited now. */
static void exited_unseen(struct live_proc *p, uint64_t now_ns)
{
	p->exited = true;
	p->exit_ns = now_ns;
}

static void set_cpu_total(struct live_proc *p, uint64_t total_ns)
{
	if (!p->cpu_base_set) {
		p->cpu_base_ns = total_ns;
		p->cpu_base_set = true;
	}
	if (total_ns >= p->cpu_base_ns)
		p->c.cpu_ns = total_ns - p->cpu_base_ns;
}

static void read_cpu(struct live_model *lm, struct live_proc *p, uint64_t now_ns)
{
	uint64_t ticks;

	if (p->exited)
		return;
	if (read_cpu_ticks(p->pid, &ticks)) {
		exited_unseen(p, now_ns);
		return;
	}
	set_cpu_total(p, ticks * (1000000000ULL / (uint64_t)lm->clk_tck));
}

void live_model_cputime(struct live_model *lm, const struct gs_task_cputime *t)
{
	struct live_proc *p = find_proc(lm, t->tgid);

	if (!p || p->exited)
		return;
	p->cpu_pass_ns += t->run_ns;
	p->cpu_exited_threads_ns = t->exited_threads_ns; /* the same in each of its threads */
	p->cpu_in_pass = true;
}

/* Every process's CPU time: one pass of BPF's task iterator, or, where it failed (said why),
 * /proc/PID/stat per process. */
static int read_cpu_all(struct live_model *lm, uint64_t now_ns)
{
	int err = lm->pull_cputime ? lm->pull_cputime(lm->pull_ctx, lm) : -ENOTSUP;

	for (size_t i = 0; i < lm->nprocs; i++) {
		struct live_proc *p = &lm->procs[i];

		if (err)
			read_cpu(lm, p, now_ns);
		else if (!p->exited && !p->cpu_in_pass)
			exited_unseen(p, now_ns);
		else if (!p->exited)
			set_cpu_total(p, p->cpu_pass_ns + p->cpu_exited_threads_ns);
		p->cpu_pass_ns = 0;
		p->cpu_in_pass = false;
	}
	return 0;
}

static void add_counters(struct live_counters *into, const struct live_counters *c)
{
	uint64_t *dst = (uint64_t *)into;
	const uint64_t *src = (const uint64_t *)c;

	/* every field is a u64 count (live_model.h): summed member by member */
	for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
		dst[i] += src[i];
}

static void label_key(const char *label, uint64_t *h1, uint64_t *h2)
{
	*h1 = 0xcbf29ce484222325ULL;
	*h2 = 0;
	for (const char *s = label; *s; s++) {
		*h1 = (*h1 ^ (unsigned char)*s) * 0x100000001b3ULL;
		*h2 = *h2 * 31 + (unsigned char)*s;
	}
}

static struct live_group *get_group(struct live_group **v, size_t *n, size_t *cap,
				    struct key_index *ix, const char *label)
{
	uint64_t h1, h2;
	struct live_group *g;
	size_t i;

	label_key(label, &h1, &h2);
	if (key_index_find(ix, h1, h2, &i))
		return &(*v)[i];
	g = array_grow((void **)v, n, cap, sizeof(*g));
	if (!g || key_index_put(ix, h1, h2, *n - 1))
		return NULL;
	snprintf(g->label, sizeof(g->label), "%s", label);
	return g;
}

static struct live_group *container_of_proc(struct live_model *lm, const struct live_proc *p)
{
	return get_group(&lm->containers, &lm->ncontainers, &lm->containers_cap, &lm->ix_containers,
			 p->container);
}

static struct live_group *user_of_proc(struct live_model *lm, const struct live_proc *p)
{
	return get_group(&lm->users, &lm->nusers, &lm->users_cap, &lm->ix_users, p->user);
}

static bool grace_over(const struct live_model *lm, const struct live_proc *p, uint64_t now)
{
	return p->exited && now >= p->exit_ns && now - p->exit_ns >= lm->grace_ns;
}

static bool pid_gone(uint32_t pid, void *ctx)
{
	const struct live_model *lm = ctx;

	return !find_proc(lm, pid);
}

/* Arrays without the entries of processes that are gone, and their indexes rebuilt. */
static int compact_keys(struct live_model *lm)
{
	size_t kept = 0;

	key_index_free(&lm->ix_stats);
	for (size_t i = 0; i < lm->nstats; i++) {
		struct live_stat *st = &lm->stats[i];

		if (!find_proc(lm, st->pid))
			continue;
		lm->stats[kept] = *st;
		if (key_index_put(&lm->ix_stats, (uint64_t)st->pid << 32 | st->tid, st->nr, kept))
			return -ENOMEM;
		kept++;
	}
	lm->nstats = kept;
	kept = 0;
	key_index_free(&lm->ix_offcpu);
	for (size_t i = 0; i < lm->noffcpu; i++) {
		struct live_offcpu *o = &lm->offcpu[i];

		if (!find_proc(lm, o->pid))
			continue;
		lm->offcpu[kept] = *o;
		if (key_index_put(&lm->ix_offcpu, (uint64_t)o->pid << 32 | o->tid, 0, kept))
			return -ENOMEM;
		kept++;
	}
	lm->noffcpu = kept;
	return gpu_mem_forget(&lm->mem, pid_gone, lm) ? -ENOMEM : 0;
}

/* Processes past their grace period leave; their counts stay in their groups. */
static int prune_procs(struct live_model *lm, uint64_t now)
{
	size_t kept = 0, gone = 0;
	struct live_group *c, *u;

	key_index_free(&lm->ix_procs);
	for (size_t i = 0; i < lm->nprocs; i++) {
		struct live_proc *p = &lm->procs[i];

		if (grace_over(lm, p, now)) {
			if (lm->on_leave)
				lm->on_leave(lm->leave_ctx, LIVE_PROCESS, p->slotted, &p->c,
					     &p->base);
			c = container_of_proc(lm, p);
			u = user_of_proc(lm, p);
			if (!c || !u)
				return -ENOMEM;
			add_counters(&c->departed, &p->c);
			add_counters(&u->departed, &p->c);
			gone++;
			continue;
		}
		lm->procs[kept] = *p;
		if (key_index_put(&lm->ix_procs, p->pid, 0, kept))
			return -ENOMEM;
		kept++;
	}
	lm->nprocs = kept;
	return gone ? compact_keys(lm) : 0;
}

/* Groups without members past the grace period leave with what they counted. */
static int prune_groups(struct live_model *lm, struct live_group *v, size_t *n,
			struct key_index *ix, uint64_t now, enum live_kind kind)
{
	size_t kept = 0;
	uint64_t h1, h2;

	key_index_free(ix);
	for (size_t i = 0; i < *n; i++) {
		if (!v[i].members && now - v[i].last_seen_ns >= lm->grace_ns) {
			if (lm->on_leave)
				lm->on_leave(lm->leave_ctx, kind, v[i].slotted, &v[i].sum,
					     &v[i].base);
			continue;
		}
		v[kept] = v[i];
		label_key(v[kept].label, &h1, &h2);
		if (key_index_put(ix, h1, h2, kept))
			return -ENOMEM;
		kept++;
	}
	*n = kept;
	return 0;
}

static int sum_groups(struct live_model *lm, uint64_t now)
{
	for (size_t i = 0; i < lm->ncontainers; i++) {
		lm->containers[i].sum = lm->containers[i].departed;
		lm->containers[i].members = 0;
		lm->containers[i].gpu_mem_bytes = 0;
	}
	for (size_t i = 0; i < lm->nusers; i++) {
		lm->users[i].sum = lm->users[i].departed;
		lm->users[i].members = 0;
		lm->users[i].gpu_mem_bytes = 0;
	}
	for (size_t i = 0; i < lm->nprocs; i++) {
		struct live_proc *p = &lm->procs[i];
		struct live_group *g[2] = {container_of_proc(lm, p), user_of_proc(lm, p)};

		for (int k = 0; k < 2; k++) {
			if (!g[k])
				return -ENOMEM;
			add_counters(&g[k]->sum, &p->c);
			g[k]->gpu_mem_bytes += p->exited ? 0 : p->gpu_mem_bytes;
			g[k]->members++;
			g[k]->last_seen_ns = now;
		}
	}
	return 0;
}

/* A --gpu-sample period ended at this tick: each row's last one is complete. After the group
 * sums, which it reads. */
static void roll_cycles(struct live_model *lm)
{
	for (size_t i = 0; i < lm->nprocs; i++)
		gpu_sample_roll(&lm->procs[i].cycle, lm->procs[i].c.kernels,
				lm->procs[i].c.gpu_busy_ns);
	for (size_t i = 0; i < lm->ncontainers; i++)
		gpu_sample_roll(&lm->containers[i].cycle, lm->containers[i].sum.kernels,
				lm->containers[i].sum.gpu_busy_ns);
	for (size_t i = 0; i < lm->nusers; i++)
		gpu_sample_roll(&lm->users[i].cycle, lm->users[i].sum.kernels,
				lm->users[i].sum.gpu_busy_ns);
}

int live_model_tick(struct live_model *lm, uint64_t now_ns)
{
	bool new_cycle;
	int err;

	lm->kernels_on = gpu_sample_step(&lm->sample, &new_cycle);
	err = lm->pull ? lm->pull(lm->pull_ctx, lm) : 0;
	if (err)
		return err;
	lm->tick_ns = now_ns;
	err = read_cpu_all(lm, now_ns);
	err = err ?: prune_procs(lm, now_ns);
	err = err ?: sum_groups(lm, now_ns);
	if (err)
		return err;
	err = prune_groups(lm, lm->containers, &lm->ncontainers, &lm->ix_containers, now_ns,
			   LIVE_CONTAINER);
	err = err ?: prune_groups(lm, lm->users, &lm->nusers, &lm->ix_users, now_ns, LIVE_USER);
	if (!err && new_cycle)
		roll_cycles(lm);
	return err;
}

void live_model_tick_done(struct live_model *lm)
{
	for (size_t i = 0; i < lm->nprocs; i++) {
		struct live_proc *p = &lm->procs[i];

		p->prev = p->c;
		p->wait_ns = p->wait_offcpu_ns = 0;
		p->wait_offcpu = -1;
	}
	for (size_t i = 0; i < lm->ncontainers; i++)
		lm->containers[i].prev_sum = lm->containers[i].sum;
	for (size_t i = 0; i < lm->nusers; i++)
		lm->users[i].prev_sum = lm->users[i].sum;
	lm->prev_tick_ns = lm->tick_ns;
}
