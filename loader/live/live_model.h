/* SPDX-License-Identifier: MIT */
/*
 * The host as `gpuspy top` and `gpuspy serve` see it: per process, cumulative counters built
 * from the records a recording would write (trace_writer_open_sink), each tick's statistics
 * checkpoint and CPU times (BPF's task iterator, or /proc). A process that exits stays for a grace
 * period, then goes; what it counted is folded into its container's and user's totals, so group
 * counters never go backwards and memory is bounded by the processes alive plus those in their
 * grace period.
 */
#ifndef GPUSPY_LIVE_MODEL_H
#define GPUSPY_LIVE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/key_index.h"
#include "lib/syscall_class.h"
#include "loader/live/gpu_sample.h"
#include "output/model/gpu/gpu_mem.h"
#include "output/trace/cuda_api.h"
#include "output/trace/trace_format.h"

#define LIVE_MAX_DEVICES 16

/* How a process's GPU side is seen. */
enum live_mode {
	LIVE_MODE_NONE,	    /* no CUDA library probed */
	LIVE_MODE_UPROBES,  /* CUDA calls by uprobes; no bridge: no GPU times */
	LIVE_MODE_BRIDGE,   /* the CUPTI bridge was loaded at its start (CUDA_INJECTION64_PATH) */
	LIVE_MODE_INJECTED, /* gpuspy loaded the bridge into it when it attached */
};

/* Cumulative counts: every field only grows (Prometheus counters). */
struct live_counters {
	uint64_t api_calls, api_ns, api_errors; /* outermost CUDA API calls */
	uint64_t launches;	       /* successful kernel launches (and graph launches) */
	uint64_t kernels, gpu_busy_ns; /* GPU records: kernels run, time a kernel ran */
	uint64_t copy_bytes[GS_COPY_NKINDS], copies, memset_bytes;
	uint64_t syscalls[SC_NCLASSES], syscall_ns[SC_NCLASSES];
	uint64_t offcpu_ns[GS_OFFCPU_NREASONS];
	uint64_t cpu_ns; /* user + system: the task iterator's run time, or /proc's */
};

struct live_proc {
	uint32_t pid, ppid;
	char comm[GS_COMM_LEN];
	bool has_attr;
	uint32_t uid;
	char user[32];
	char container[160]; /* cgroup_attr label */
	enum live_mode mode;
	bool exited;
	uint64_t exit_ns;	   /* monotonic, when its exit record came */
	struct live_counters c;	   /* cumulative since gpuspy saw it */
	struct live_counters prev; /* at the previous tick, for rates */
	uint64_t gpu_mem_bytes;	   /* outstanding CUDA API allocations (device, pinned, managed) */
	uint64_t busy_until[LIVE_MAX_DEVICES]; /* the GPU union of its kernels, per device */
	struct gpu_sample_cycle cycle;
	/* the main thread over the last interval: its syscall with most time, or off-CPU reason */
	uint32_t wait_nr;
	uint64_t wait_ns;
	int wait_offcpu; /* -1: none */
	uint64_t wait_offcpu_ns;
	uint64_t launches_seen; /* the BPF launch count at the last tick (live_model_launches) */
	uint64_t cpu_base_ns;	/* the total at the first read: counts start at zero */
	bool cpu_base_set;
	uint64_t cpu_pass_ns; /* this tick's iterator pass: its threads' run time so far */
	uint64_t cpu_exited_threads_ns;
	bool cpu_in_pass; /* seen by this tick's pass */
	/* the serve exporter's bookkeeping (serve_metrics.c) */
	bool slotted;
	struct live_counters base, shown;
};

struct live_device {
	uint32_t device;
	uint64_t kernels, busy_ns, busy_until;
};

/* A container or user whose processes came and went: what its gone processes counted. */
struct live_group {
	char label[160];
	struct live_counters departed;
	uint64_t last_seen_ns; /* a member alive (or in its grace period) at this tick */
	bool slotted;
	struct live_counters base, shown;
	struct live_counters sum;      /* computed each tick: departed + members */
	struct live_counters prev_sum; /* at the previous tick, for rates */
	struct gpu_sample_cycle cycle;
	uint64_t gpu_mem_bytes;
	unsigned members;
};

enum live_kind { LIVE_PROCESS, LIVE_CONTAINER, LIVE_USER, LIVE_NKINDS };

/* Told as a process or group leaves the model, with what it counted and the serve exporter's
 * bookkeeping of it (slotted, base), so an aggregate "other" series can keep what it held. */
typedef void (*live_leave_fn)(void *ctx, enum live_kind kind, bool slotted,
			      const struct live_counters *c, const struct live_counters *base);

struct live_waits;

struct live_model {
	live_leave_fn on_leave; /* NULL: nobody needs to know */
	/* counts kept in BPF maps rather than sent as records (launches): read at every tick,
	 * before anything else; NULL: none */
	int (*pull)(void *ctx, struct live_model *lm);
	/* CPU times of every thread through live_model_cputime() at every tick; NULL, or
	 * -ENOTSUP: each process's /proc/PID/stat is read instead */
	int (*pull_cputime)(void *ctx, struct live_model *lm);
	void *pull_ctx;
	/* --gpu-sample: stepped at each tick before `pull`, which switches the bridges' kernel
	 * records to `kernels_on` for the interval that begins */
	struct gpu_sample sample;
	bool kernels_on;
	struct live_waits *waits; /* top's wait column, fed every record; NULL: none */
	void *leave_ctx;
	struct live_proc *procs;
	size_t nprocs, procs_cap;
	struct key_index ix_procs;
	struct live_group *containers, *users;
	size_t ncontainers, containers_cap, nusers, users_cap;
	struct key_index ix_containers, ix_users;
	struct live_device devices[LIVE_MAX_DEVICES];
	size_t ndevices;
	/* (pid << 32 | tid, nr) -> the last cumulative statistics of a syscall key */
	struct live_stat *stats;
	size_t nstats, stats_cap;
	struct key_index ix_stats;
	struct live_offcpu *offcpu;
	size_t noffcpu, offcpu_cap;
	struct key_index ix_offcpu;
	struct gpu_mem mem; /* allocations, for GPU memory and copy directions */
	uint64_t events;    /* records taken */
	uint64_t losses[2 * 8];
	uint64_t gpu_lost;
	uint64_t grace_ns;
	uint64_t tick_ns, prev_tick_ns;
	long clk_tck;
};

void live_model_init(struct live_model *lm, uint64_t grace_ns);
void live_model_free(struct live_model *lm);
/* A record, as a trace_sink_fn: 0, or -ENOMEM. */
int live_model_take(void *live_model, const struct gs_hdr *rec);
/* A process's launches as BPF counted them, cumulative (cuda_probes_read_launches): the
 * increase since the last call adds to its launches and API calls. True when the process has
 * exited, and its count can go. */
bool live_model_launches(void *live_model, uint32_t pid, uint64_t launches);
/* One thread's CPU time in a tick's pass (pull_cputime): a process none of whose threads is
 * in the pass has exited. */
void live_model_cputime(struct live_model *lm, const struct gs_task_cputime *t);
/* Call after each tick's statistics checkpoint: reads CPU times, folds and drops
 * the processes whose grace period ended, and refreshes the group sums. 0 or -ENOMEM. */
int live_model_tick(struct live_model *lm, uint64_t now_ns);
/* After the views were drawn: the current counters become the next interval's base. */
void live_model_tick_done(struct live_model *lm);
/* Events counted lost (BPF and GPU records), cumulative. */
uint64_t live_model_lost(const struct live_model *lm);
const char *live_mode_name(enum live_mode m); /* "-", "uprobes", "bridge", "injected" */

#endif /* GPUSPY_LIVE_MODEL_H */
