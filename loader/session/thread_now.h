/* SPDX-License-Identifier: MIT */
/*
 * What a traced thread is in at this moment: the syscall, off-CPU interval and CUDA call still
 * under way, which have no record yet (records are written when a span ends). BPF keeps them in
 * task-local storage (bpf/records.h: gs_syscall_inflight, gs_offcpu_inflight, gs_cuda_thread),
 * read here by pidfd. A thread that has not entered a syscall, or left the CPU, since the attach
 * has no entry: it may be in a wait that began before gpuspy came, which /proc tells
 * (/proc/PID/task/TID/syscall and its state), without the start.
 */
#ifndef GPUSPY_THREAD_NOW_H
#define GPUSPY_THREAD_NOW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_session;

struct thread_now {
	bool in_syscall;
	uint32_t nr;
	uint64_t syscall_start; /* 0: began before the attach */
	bool off_cpu;
	uint32_t reason;     /* enum gs_offcpu_reason */
	uint64_t off_since;  /* 0: before the attach */
	bool in_cuda;	     /* inside a probed CUDA call */
	uint16_t cuda_probe; /* the outermost call's index in cuda_probe_list.h */
	uint64_t cuda_start;
};

/* Fills `now` for thread `tid` of process `pid`: 0, -ESRCH when the thread is gone, or another
 * -errno when nothing could be read (a thread that is not its process's leader needs Linux 6.9
 * for a pidfd of its own). */
int thread_now_read(struct bpf_session *s, pid_t pid, pid_t tid, struct thread_now *now);

#endif /* GPUSPY_THREAD_NOW_H */
