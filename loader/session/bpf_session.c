// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cuda.skel.h"
#include "cupti.skel.h"
#include "lib/messages.h"
#include "loader/session/bpf_session.h"
#include "loader/session/hold_watchdog.h"
#include "loader/session/stat_slots.h"
#include "loader/session/stats_dump.h"
#include "loader/session/uprobe_multi.h"
#include "ops.skel.h"
#include "osrt.skel.h"
#include "python.skel.h"
#include "sched.skel.h"

struct bpf_session {
	struct osrt_bpf *osrt;
	struct sched_bpf *sched;
	struct cuda_bpf *cuda;	 /* NULL with --no-cuda; its uprobes are attached by cuda_probes */
	struct cupti_bpf *cupti; /* NULL with --no-cupti; its USDT probes by cupti_link */
	struct python_bpf *python; /* NULL with --no-python or --sample-hz 0 */
	struct ops_bpf *ops;	   /* NULL with --no-ops; its uprobes by op_probes */
	struct ring_buffer *rb;
	uint32_t stat_slots;	       /* syscall_slots entries (stat_slots.h) */
	struct gs_syscall_slot *slots; /* them, mapped; NULL when there are none */
	__u64 *traced_pids;	       /* the traced_pids map, mmapped on first use */
	pid_t watchdog; /* resumes held processes if gpuspy cannot (hold_watchdog.h) */
	bpf_session_record_fn fn;
	void *ctx;
};

static int on_ringbuf_record(void *ctx, void *data, size_t size)
{
	struct bpf_session *s = ctx;
	const struct gs_hdr *h = data;

	/* the kernel rounds sizes up; the header's own size is the record */
	if (size < sizeof(*h) || h->size > size)
		return 0;
	return s->fn(s->ctx, h, h->size);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's own messages (verifier logs included) only with -v: gpuspy prints the error */
	(void)level;
	return gs_verbose ? vfprintf(stderr, fmt, ap) : 0;
}

/* The same global configuration goes into every component's read-only data. */
#define CONFIGURE_RODATA(skel, cfg)                                                                \
	do {                                                                                       \
		(skel)->rodata->trace_all = (cfg)->trace_all;                                      \
		(skel)->rodata->follow = (cfg)->follow;                                            \
		(skel)->rodata->self_tgid = (__u32)getpid();                                       \
		(skel)->rodata->launch_tgid = (__u32)(cfg)->launch_pid;                            \
		(skel)->rodata->wakeup_bytes = (cfg)->ringbuf_bytes / 8;                           \
		(skel)->rodata->py_stacks = (cfg)->python;                                         \
	} while (0)

static int share_map(struct bpf_map *dst, struct bpf_map *src)
{
	int err = bpf_map__reuse_fd(dst, bpf_map__fd(src));

	if (err)
		gs_error("cannot share map %s between BPF components: %s", bpf_map__name(src),
			 strerror(-err));
	return err;
}

/* Every map common.bpf.h defines, created by the osrt component, reused by another. */
static int share_common_maps(struct bpf_object *dst, struct bpf_object *src)
{
	static const char *const common[] = {"events",	    "traced_pids", "traced_tids", "losses",
					     "cuda_opened", "py_procs",	   "held_procs"};
	int err = 0;

	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]) && !err; i++)
		err = share_map(bpf_object__find_map_by_name(dst, common[i]),
				bpf_object__find_map_by_name(src, common[i]));
	return err;
}

/* The open and load steps every component shares: -errno, said on stderr. */
static int opened(const void *skel, const char *what)
{
	int err = -errno;

	if (skel)
		return 0;
	gs_error("cannot open the %s BPF program: %s", what, strerror(-err));
	return err;
}

static int loaded(int err, const char *what)
{
	if (err)
		gs_error("cannot load the %s BPF program: %s (run with -v for the verifier log)",
			 what, strerror(-err));
	return err;
}

static int open_osrt(struct bpf_session *s, const struct bpf_session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	int err;

	s->osrt = osrt_bpf__open_opts(&opts);
	err = opened(s->osrt, "syscall");
	if (err)
		return err;
	CONFIGURE_RODATA(s->osrt, cfg);
	s->osrt->rodata->span_threshold_ns = cfg->osrt_threshold_ns;
	/* a syscall that makes a span, or holds an off-CPU span, gets its Python stack */
	s->osrt->rodata->py_stack_min_ns = cfg->osrt_threshold_ns < cfg->offcpu_threshold_ns
					       ? cfg->osrt_threshold_ns
					       : cfg->offcpu_threshold_ns;
	bpf_map__set_max_entries(s->osrt->maps.events, cfg->ringbuf_bytes);
	s->stat_slots = stat_slots_count(cfg->max_stat_keys, cfg->stats_taken);
	bpf_map__set_max_entries(s->osrt->maps.syscall_stats, cfg->max_stat_keys - s->stat_slots);
	/* a map has one entry at least; with no slots none is ever pushed onto the free list */
	bpf_map__set_max_entries(s->osrt->maps.syscall_slots, s->stat_slots ?: 1);
	bpf_map__set_max_entries(s->osrt->maps.free_slots, s->stat_slots ?: 1);
	/* one way of tracing syscalls is loaded, and attached by osrt_bpf__attach() */
	bpf_program__set_autoload(s->osrt->progs.osrt_sys_count, cfg->syscall_counts_only);
	bpf_program__set_autoload(s->osrt->progs.osrt_sys_enter, !cfg->syscall_counts_only);
	bpf_program__set_autoload(s->osrt->progs.osrt_sys_exit, !cfg->syscall_counts_only);
	err = loaded(osrt_bpf__load(s->osrt), "syscall");
	if (err || !s->stat_slots)
		return err;
	s->slots = stat_slots_map(bpf_map__fd(s->osrt->maps.syscall_slots), s->stat_slots);
	err = s->slots ? stat_slots_free_all(bpf_map__fd(s->osrt->maps.free_slots), s->stat_slots)
		       : -errno;
	if (err)
		gs_error("cannot set up the statistics slots: %s", strerror(-err));
	return err;
}

static int open_sched(struct bpf_session *s, const struct bpf_session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	int err;

	s->sched = sched_bpf__open_opts(&opts);
	err = opened(s->sched, "scheduler");
	if (err)
		return err;
	CONFIGURE_RODATA(s->sched, cfg);
	s->sched->rodata->offcpu_threshold_ns = cfg->offcpu_threshold_ns;
	bpf_map__set_max_entries(s->sched->maps.offcpu_stats, cfg->max_stat_keys);
	/* attached by sched_bpf__attach() as a link, read at each interval */
	bpf_program__set_autoload(s->sched->progs.task_cputime, cfg->cputime);
	err = share_common_maps(s->sched->obj, s->osrt->obj);
	if (err)
		return err;
	return loaded(sched_bpf__load(s->sched), "scheduler");
}

static int open_cuda(struct bpf_session *s, const struct bpf_session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	int err;

	s->cuda = cuda_bpf__open_opts(&opts);
	err = opened(s->cuda, "CUDA");
	if (err)
		return err;
	CONFIGURE_RODATA(s->cuda, cfg);
	/* the API probes attach through uprobe_multi links (cuda_probes.c); ld.so's stays a
	 * perf-event uprobe, which needs the program's address (PT_REGS_IP) */
	bpf_program__set_expected_attach_type(s->cuda->progs.cuda_entry, GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(s->cuda->progs.cuda_return,
					      GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(s->cuda->progs.cuda_return_naming,
					      GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(s->cuda->progs.cuda_launch_count,
					      GS_BPF_TRACE_UPROBE_MULTI);
	err = share_common_maps(s->cuda->obj, s->osrt->obj);
	if (err)
		return err;
	return loaded(cuda_bpf__load(s->cuda), "CUDA");
}

static int open_cupti(struct bpf_session *s, const struct bpf_session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	int err;

	s->cupti = cupti_bpf__open_opts(&opts);
	err = opened(s->cupti, "CUPTI bridge");
	if (err)
		return err;
	CONFIGURE_RODATA(s->cupti, cfg);
	/* uprobe_multi links detach without the RCU grace period (~0.1 s) a perf-event uprobe
	 * costs, which adds up with many short CUDA processes */
	bpf_program__set_expected_attach_type(s->cupti->progs.bridge_records_regs,
					      GS_BPF_TRACE_UPROBE_MULTI);
	bpf_program__set_expected_attach_type(s->cupti->progs.bridge_semaphore,
					      GS_BPF_TRACE_UPROBE_MULTI);
	err = share_common_maps(s->cupti->obj, s->osrt->obj);
	if (err)
		return err;
	return loaded(cupti_bpf__load(s->cupti), "CUPTI bridge");
}

static int open_python(struct bpf_session *s, const struct bpf_session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	int err;

	s->python = python_bpf__open_opts(&opts);
	err = opened(s->python, "Python sampler");
	if (err)
		return err;
	CONFIGURE_RODATA(s->python, cfg);
	s->python->rodata->sample_period_ns = 1000000000ULL / cfg->sample_hz;
	err = share_common_maps(s->python->obj, s->osrt->obj);
	if (err)
		return err;
	return loaded(python_bpf__load(s->python), "Python sampler");
}

static int open_ops(struct bpf_session *s, const struct bpf_session_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	int err;

	s->ops = ops_bpf__open_opts(&opts);
	err = opened(s->ops, "PyTorch operator");
	if (err)
		return err;
	CONFIGURE_RODATA(s->ops, cfg);
	bpf_program__set_expected_attach_type(s->ops->progs.op_call, GS_BPF_TRACE_UPROBE_SESSION);
	err = share_common_maps(s->ops->obj, s->osrt->obj);
	if (err)
		return err;
	err = ops_bpf__load(s->ops);
	if (!err)
		return 0;
	/* operators are an addition: the rest of the recording goes on without them */
	gs_warn("not tracing PyTorch operators: cannot load their BPF program (%s; uprobe sessions "
		"need Linux 6.13+)",
		strerror(-err));
	ops_bpf__destroy(s->ops);
	s->ops = NULL;
	return 0;
}

int bpf_session_open(const struct bpf_session_config *cfg, bpf_session_record_fn fn, void *ctx,
		     struct bpf_session **out)
{
	struct bpf_session *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	libbpf_set_print(libbpf_print);
	s->fn = fn;
	s->ctx = ctx;
	err = open_osrt(s, cfg);
	err = err ?: open_sched(s, cfg);
	if (!err && cfg->cuda)
		err = open_cuda(s, cfg);
	if (!err && cfg->cupti)
		err = open_cupti(s, cfg);
	if (!err && cfg->python && cfg->sample_hz)
		err = open_python(s, cfg);
	if (!err && cfg->ops)
		err = open_ops(s, cfg);
	/* before anything can be held: CUDA library loads and operator unwinds */
	if (!err && (s->cuda || s->ops)) {
		err = hold_watchdog_start(bpf_session_held_fd(s), &s->watchdog);
		if (err)
			gs_error("cannot start the hold watchdog: %s", strerror(-err));
	}
	if (err)
		goto fail;
	s->rb = ring_buffer__new(bpf_map__fd(s->osrt->maps.events), on_ringbuf_record, s, NULL);
	if (!s->rb) {
		err = -errno;
		gs_error("cannot create the ring buffer reader: %s", strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	bpf_session_destroy(s);
	return err;
}

int bpf_session_held_fd(const struct bpf_session *s)
{
	return bpf_map__fd(s->osrt->maps.held_procs);
}

int bpf_session_trace_process(struct bpf_session *s, pid_t tgid)
{
	void *bits;

	if (tgid <= 0 || tgid >= GS_PID_LIMIT)
		return -EINVAL;
	if (!s->traced_pids) {
		bits = mmap(NULL, GS_PID_WORDS * sizeof(__u64), PROT_READ | PROT_WRITE, MAP_SHARED,
			    bpf_map__fd(s->osrt->maps.traced_pids), 0);
		if (bits == MAP_FAILED)
			return -errno;
		s->traced_pids = bits;
	}
	/* atomic: BPF sets and clears other bits of the same word as processes fork and exit */
	__atomic_fetch_or(&s->traced_pids[tgid / 64], 1ULL << (tgid % 64), __ATOMIC_SEQ_CST);
	return 0;
}

int bpf_session_trace_thread(struct bpf_session *s, pid_t tid)
{
	__u32 key = (__u32)tid;
	__u8 one = 1;

	return bpf_map_update_elem(bpf_map__fd(s->osrt->maps.traced_tids), &key, &one, BPF_ANY)
		   ? -errno
		   : 0;
}

int bpf_session_attach(struct bpf_session *s)
{
	int err;

	/* scheduler first: a child forked while the syscall programs attach is still followed */
	err = sched_bpf__attach(s->sched);
	if (err) {
		gs_error("cannot attach scheduler tracepoints: %s", strerror(-err));
		return err;
	}
	err = osrt_bpf__attach(s->osrt);
	if (err)
		gs_error("cannot attach syscall tracepoints: %s", strerror(-err));
	return err;
}

int bpf_session_poll(struct bpf_session *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms), m;

	/* records are submitted without a wakeup until 1/8 of the ring is pending, so a poll that
	 * timed out has not read them: read what is there, or a quiet process's records (and a
	 * CUPTI bridge's flush answer) would wait for the end of the recording */
	m = ring_buffer__consume(s->rb);
	if (m < 0)
		return m;
	return n < 0 ? n : n + m;
}

void bpf_session_detach(struct bpf_session *s)
{
	osrt_bpf__detach(s->osrt);
	sched_bpf__detach(s->sched);
}

int bpf_session_drain(struct bpf_session *s)
{
	return ring_buffer__consume(s->rb);
}

/* Sums a per-CPU array of u64 counters into counts[0..n). */
static void sum_percpu_counters(int fd, uint64_t *counts, uint32_t n)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 *percpu;

	memset(counts, 0, n * sizeof(counts[0]));
	if (ncpus <= 0)
		return;
	percpu = calloc((size_t)ncpus, sizeof(*percpu));
	if (!percpu)
		return;
	for (__u32 kind = 0; kind < n; kind++) {
		if (bpf_map_lookup_elem(fd, &kind, percpu))
			continue;
		for (int cpu = 0; cpu < ncpus; cpu++)
			counts[kind] += percpu[cpu];
	}
	free(percpu);
}

void bpf_session_losses(struct bpf_session *s, uint64_t counts[GS_LOSS_NKINDS])
{
	sum_percpu_counters(bpf_map__fd(s->osrt->maps.losses), counts, GS_LOSS_NKINDS);
}

void bpf_session_gpu_losses(struct bpf_session *s, uint64_t *batches, uint64_t *records)
{
	uint64_t counts[2] = {0, 0};

	if (s->cupti)
		sum_percpu_counters(bpf_map__fd(s->cupti->maps.gpu_losses), counts, 2);
	*batches = counts[0];
	*records = counts[1];
}

uint64_t bpf_session_loss_total(struct bpf_session *s)
{
	uint64_t counts[GS_LOSS_NKINDS], sum = 0;

	bpf_session_losses(s, counts);
	for (int k = 0; k < GS_LOSS_NKINDS; k++)
		sum += counts[k];
	return sum;
}

int bpf_session_write_stats(struct bpf_session *s, struct trace_writer *w, uint64_t ts, bool sweep)
{
	int err = stats_dump_syscalls(bpf_map__fd(s->osrt->maps.syscall_stats), w, ts, sweep);

	err = err
		  ?: stat_slots_dump(s->slots, bpf_map__fd(s->osrt->maps.free_slots), s->stat_slots,
				     w, ts, sweep);
	return err ?: stats_dump_offcpu(bpf_map__fd(s->sched->maps.offcpu_stats), w, ts, sweep);
}

/* Whole records through the callback; a record cut at the end of a read is kept for the next. */
static int read_cputime_fd(int fd, bpf_session_cputime_fn fn, void *ctx)
{
	struct gs_task_cputime recs[256];
	size_t have = 0, whole;
	ssize_t n;
	int err = 0;

	while (!err && (n = read(fd, (char *)recs + have, sizeof(recs) - have)) > 0) {
		have += (size_t)n;
		whole = have / sizeof(recs[0]);
		for (size_t i = 0; i < whole && !err; i++)
			err = fn(ctx, &recs[i]);
		have -= whole * sizeof(recs[0]);
		memmove(recs, &recs[whole], have);
	}
	if (!err && n < 0)
		err = -errno;
	return err;
}

int bpf_session_read_cputime(struct bpf_session *s, bpf_session_cputime_fn fn, void *ctx)
{
	struct bpf_link *link = s->sched->links.task_cputime;
	int fd, err;

	if (!link)
		return -ENOTSUP;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	err = read_cputime_fd(fd, fn, ctx);
	close(fd);
	return err;
}

int bpf_session_take_stats(struct bpf_session *s, struct trace_writer *w, uint64_t ts)
{
	int err = stats_take_syscalls(bpf_map__fd(s->osrt->maps.syscall_stats), w, ts);

	return err ?: stats_take_offcpu(bpf_map__fd(s->sched->maps.offcpu_stats), w, ts);
}

struct cuda_bpf *bpf_session_cuda(struct bpf_session *s)
{
	return s->cuda;
}

struct cupti_bpf *bpf_session_cupti(struct bpf_session *s)
{
	return s->cupti;
}

struct python_bpf *bpf_session_python(struct bpf_session *s)
{
	return s->python;
}

struct ops_bpf *bpf_session_ops(struct bpf_session *s)
{
	return s->ops;
}

void bpf_session_task_maps(const struct bpf_session *s, int *syscall_fd, int *offcpu_fd,
			   int *cuda_fd)
{
	*syscall_fd = bpf_map__fd(s->osrt->maps.inflight_by_task);
	*offcpu_fd = bpf_map__fd(s->sched->maps.offcpu_by_task);
	*cuda_fd = s->cuda ? bpf_map__fd(s->cuda->maps.cuda_threads) : -1;
}

int bpf_session_py_procs_fd(struct bpf_session *s)
{
	return bpf_map__fd(s->osrt->maps.py_procs);
}

void bpf_session_destroy(struct bpf_session *s)
{
	if (!s)
		return;
	ring_buffer__free(s->rb);
	if (s->traced_pids)
		munmap(s->traced_pids, GS_PID_WORDS * sizeof(__u64));
	stat_slots_unmap(s->slots, s->stat_slots);
	python_bpf__destroy(s->python);
	ops_bpf__destroy(s->ops);
	cuda_bpf__destroy(s->cuda);
	cupti_bpf__destroy(s->cupti);
	sched_bpf__destroy(s->sched);
	osrt_bpf__destroy(s->osrt);
	free(s);
}
