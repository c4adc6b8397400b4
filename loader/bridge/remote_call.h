/* SPDX-License-Identifier: MIT */
/*
 * Function calls in one thread of another process, made with ptrace the way a debugger's
 * `call` command makes them (x86_64): the thread is seized and stopped at a point the caller
 * judges safe, its registers, extended FPU state and signal mask are saved, the function runs
 * on the thread's own stack (below the red zone) with asynchronous signals blocked, and returns
 * into libc's rt_sigreturn trampoline through a signal frame that holds the thread's own
 * context (remote_frame.h): gpuspy sees the trampoline's syscall stop and restores the thread
 * exactly itself, and if gpuspy dies at any instant the kernel restores it from the frame. So
 * a call never needs gpuspy to come back, and a call that takes too long is left to finish
 * instead of being abandoned half-way (which could leave a lock of the process held). Only the
 * one thread stops; the others run on.
 */
#ifndef GPUSPY_REMOTE_CALL_H
#define GPUSPY_REMOTE_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where a stopped thread is, for the caller's judgement. */
struct remote_stop {
	bool entry;	  /* at the entry of syscall `nr`, which has not run yet */
	long nr;	  /* the syscall it is in, entering or leaving; -1: not at a syscall */
	uint64_t args[6]; /* its arguments */
	uint64_t ip;	  /* the instruction after its `syscall` */
};

/* Whether calls may be made from this point (bridge_inject.c decides). */
typedef bool (*remote_safe_fn)(void *ctx, const struct remote_stop *at);

enum remote_call_state {
	REMOTE_CALL_NONE,     /* no call made: the thread is where it stopped */
	REMOTE_CALL_RUNNING,  /* in the function: it returns through its frame by itself */
	REMOTE_CALL_RETURNED, /* stopped at the trampoline's syscall: gpuspy restores it */
	REMOTE_CALL_FAULTED,  /* the function faulted: gpuspy restores it (the fault is dropped) */
};

struct remote_thread {
	pid_t pid, tid;
	uint64_t restorer;     /* libc's rt_sigreturn trampoline (the caller finds it): every call
				* returns through it */
	bool seized;	       /* PTRACE_SEIZE succeeded */
	bool own_child;	       /* gpuspy's child's main thread: its exit is not reaped here */
	bool stopped;	       /* in a ptrace stop now */
	bool gone;	       /* the thread exited (or was reaped) meanwhile */
	bool saved;	       /* at a safe point, state saved in the fields below */
	bool modified;	       /* registers changed since: restore before letting go */
	bool at_entry;	       /* the safe point was a syscall entry: run it again at release */
	bool group_stop;       /* a SIGSTOP-like stop was seen while it was held */
	int pending_sig;       /* a signal sent to it during a call, raised again at release */
	unsigned char *regs;   /* struct user_regs_struct, as it was at the safe point */
	unsigned char *xstate; /* NT_X86_XSTATE, or the plain FPU/SSE area where that is refused */
	size_t xstate_len;
	bool xstate_is_fpregs;
	int stop_sig; /* the signal of the signal-delivery stop it is in, delivered at
		       * release */
	uint64_t sigmask;
	enum remote_call_state call;
	uint64_t entry_sp;     /* the stack pointer the last call was entered with */
	uint64_t blob_addr;    /* where the last call's blob is in the process */
	uint64_t open_path;    /* an open(at) the call is in: its path's address, 0 if none */
	char failed_open[256]; /* the last path the call failed to open, and why */
	int failed_open_err;
	uint64_t stop_ns;   /* when it first stopped */
	uint64_t safe_ns;   /* when it reached the safe point */
	uint64_t resume_ns; /* when it was let go */
};

/* PTRACE_SEIZE; -EPERM when ptrace is not permitted, -ESRCH when the thread is gone. */
int remote_attach(struct remote_thread *t, pid_t pid, pid_t tid);
/* Stops the thread at a point `safe` accepts: where it is now, if it sits in a syscall, or
 * else at the entry of a later syscall (syscall stops on this thread alone meanwhile).
 * 0; -ETIMEDOUT past `deadline_ns` (CLOCK_MONOTONIC); -EAGAIN when the process was stopped
 * by job control meanwhile; -ESRCH when the thread exited. */
int remote_stop_safely(struct remote_thread *t, remote_safe_fn safe, void *ctx,
		       uint64_t deadline_ns);
/* Calls fn(args...) in the thread; `blob` (if any) is copied onto its stack and its address
 * kept in t->blob_addr, where what the function wrote there can be read until the release.
 * Each args[i] whose bit i is set in `blob_args` is an offset into the blob: the blob's
 * address is added to it (pointers to several of its fields). The function's return value is not
 * seen (the trampoline overwrites it): a function whose result matters writes it into the blob.
 * t->failed_open names the last open the call saw fail. 0; -EFAULT when the call faulted (the
 * thread gets its own context back at release), -ETIMEDOUT when it had not returned by
 * `deadline_ns` (it is left to finish on its own at release), -ESRCH when the thread exited. */
int remote_call(struct remote_thread *t, uint64_t fn, uint64_t args[6], const void *blob,
		size_t blob_len, unsigned blob_args, uint64_t deadline_ns);
/* Restores what was saved and detaches (a call still running is left to return through its
 * frame); a signal that arrived during a call is raised again. Safe in any state; frees the
 * saved state. */
void remote_release(struct remote_thread *t);

#endif /* GPUSPY_REMOTE_CALL_H */
