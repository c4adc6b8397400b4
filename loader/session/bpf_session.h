/* SPDX-License-Identifier: MIT */
/*
 * The BPF side of a recording: every component's skeleton, sharing one ring buffer and one
 * traced-process set. Lifecycle (retsnoop's shape): open+load → add targets → attach → poll →
 * detach → drain → dump statistics → destroy.
 */
#ifndef GPUSPY_BPF_SESSION_H
#define GPUSPY_BPF_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf/records.h"

struct trace_writer;

struct bpf_session_config {
	bool trace_all;
	bool follow;
	pid_t launch_pid; /* traced from its first execve; 0: none */
	uint64_t osrt_threshold_ns;
	uint64_t offcpu_threshold_ns;
	uint32_t ringbuf_bytes;
	bool syscall_counts_only; /* count syscalls, time none (osrt.bpf.c: osrt_sys_count) */
	bool cputime;		  /* the task iterator of CPU times (bpf_session_read_cputime) */
	uint32_t max_stat_keys;
	bool stats_taken;     /* bpf_session_take_stats will be called (record --steps) */
	const char *btf_path; /* NULL: the running kernel's */
	bool cuda;	      /* load the CUDA API component (its probes attach per library) */
	bool cupti;	      /* load the CUPTI bridge component (its USDT probes, likewise) */
	bool python;	      /* Python stacks, and the CPU sampler (attached by py_stacks) */
	bool ops;	      /* load the PyTorch operator component (attached by op_probes) */
	uint32_t sample_hz;   /* CPU samples per second; 0: no sampler */
};

/* Called for each ring-buffer record; a negative return stops polling. */
typedef int (*bpf_session_record_fn)(void *ctx, const struct gs_hdr *rec, size_t size);

struct bpf_session;

/* Returns 0 or -errno; on failure a message has been printed. */
int bpf_session_open(const struct bpf_session_config *cfg, bpf_session_record_fn fn, void *ctx,
		     struct bpf_session **out);
/* The held_procs map (hold_watchdog.h). */
int bpf_session_held_fd(const struct bpf_session *s);
int bpf_session_trace_process(struct bpf_session *s, pid_t tgid);
int bpf_session_trace_thread(struct bpf_session *s, pid_t tid);
int bpf_session_attach(struct bpf_session *s);
/* Returns records consumed or -errno (-EINTR is not an error). */
int bpf_session_poll(struct bpf_session *s, int timeout_ms);
void bpf_session_detach(struct bpf_session *s);
int bpf_session_drain(struct bpf_session *s);
void bpf_session_losses(struct bpf_session *s, uint64_t counts[GS_LOSS_NKINDS]);
uint64_t bpf_session_loss_total(struct bpf_session *s);
/* Writes every statistics map entry as trace records; `ts` stamps them. `sweep`: also the final
 * totals of exited threads BPF could not flush (stats_dump.h). */
int bpf_session_write_stats(struct bpf_session *s, struct trace_writer *w, uint64_t ts, bool sweep);
/* Called for each traced thread's CPU time; nonzero stops the read and is returned. */
typedef int (*bpf_session_cputime_fn)(void *ctx, const struct gs_task_cputime *t);
/* Every traced thread's CPU time, in one pass of the task iterator; 0, -ENOTSUP without
 * `cputime` in the config, or -errno. */
int bpf_session_read_cputime(struct bpf_session *s, bpf_session_cputime_fn fn, void *ctx);
/* Writes every statistics map entry and deletes it: the maps count again from now. */
int bpf_session_take_stats(struct bpf_session *s, struct trace_writer *w, uint64_t ts);
/* The CUDA component's skeleton, or NULL when not loaded; cuda_probes attaches it. */
struct cuda_bpf *bpf_session_cuda(struct bpf_session *s);
/* The CUPTI bridge component's skeleton, or NULL; cupti_link attaches it. */
struct cupti_bpf *bpf_session_cupti(struct bpf_session *s);
/* The Python sampler's skeleton, or NULL; py_stacks attaches it per CPU. */
struct python_bpf *bpf_session_python(struct bpf_session *s);
/* The PyTorch operator component's skeleton, or NULL; op_probes attaches it per library. */
struct ops_bpf *bpf_session_ops(struct bpf_session *s);
/* The task-local storage maps of what each thread is in now (thread_now.h): its syscall, its
 * off-CPU interval and its CUDA calls (-1 without the CUDA component). */
void bpf_session_task_maps(const struct bpf_session *s, int *syscall_fd, int *offcpu_fd,
			   int *cuda_fd);
/* The py_procs map's fd: which processes get Python stacks, with their layout. */
int bpf_session_py_procs_fd(struct bpf_session *s);
/* GPU batches (and the records in them) that BPF could not put in the ring buffer. */
void bpf_session_gpu_losses(struct bpf_session *s, uint64_t *batches, uint64_t *records);
void bpf_session_destroy(struct bpf_session *s);

#endif /* GPUSPY_BPF_SESSION_H */
