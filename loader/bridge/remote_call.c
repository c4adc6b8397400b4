// SPDX-License-Identifier: MIT
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "lib/clocks.h"
#include "lib/messages.h"
#include "loader/bridge/remote_call.h"
#include "loader/bridge/remote_frame.h"
#include "loader/proc/proc_mem.h"
#include "loader/proc/procfs.h"

#define STAT_PPID 4 /* /proc/PID/stat: the parent's pid */

#define RED_ZONE      128	    /* the x86_64 ABI's, below the stack pointer */
#define STACK_MARGIN  128	    /* and a little more, for nothing in particular */
#define XSTATE_MAX    (64 * 1024)   /* larger than any XSAVE area (AMX: ~11 KiB) */
#define STOP_GRACE_NS 1000000000ull /* for a thread to stop once we gave up on it */
#define WAIT_SLICE_NS 10000000ull   /* SIGCHLD wakes us; this is only a fallback */
#define EFLAGS_DF     0x400ull	    /* direction flag: clear at every function entry */

/* Signals the kernel forces on a thread whose instruction faults. They stay unblocked during a
 * call: forcing a blocked one makes the kernel reset the process's handler to the default
 * (force_sig_info_to_task), which would outlive the call. */
static uint64_t synchronous_signals(void)
{
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
	uint64_t bits = 0;

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		bits |= 1ull << (sigs[i] - 1);
	return bits;
}

static int errno_or(int fallback)
{
	return errno ? -errno : fallback;
}

static int get_regs(pid_t tid, struct user_regs_struct *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) ? errno_or(-EIO) : 0;
}

static int set_regs(pid_t tid, const struct user_regs_struct *r)
{
	return ptrace(PTRACE_SETREGS, tid, NULL, r) ? errno_or(-EIO) : 0;
}

static int set_sigmask(pid_t tid, uint64_t mask)
{
	return ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(mask), &mask) ? errno_or(-EIO) : 0;
}

/* The thread's next state change, waited for until `deadline`: 0 with *status, -ETIMEDOUT, or
 * -ESRCH when it exited. Every stop of a tracee sends SIGCHLD to its tracer; the caller has it
 * blocked (bridge_inject.c), so it can be slept on here. */
/* gpuspy's own child (a launched command's main thread): its exit is left for the recorder,
 * which waits for it, to collect; a stop is not. t->tid if it exited (and is left unreaped),
 * else 0. */
static pid_t peek_exit(struct remote_thread *t, int *status)
{
	siginfo_t info;

	memset(&info, 0, sizeof(info));
	/* the tracer's waits report ptrace stops too, whatever the flags: only an exit counts */
	if (waitid(P_PID, (id_t)t->tid, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) ||
	    info.si_pid != t->tid ||
	    (info.si_code != CLD_EXITED && info.si_code != CLD_KILLED &&
	     info.si_code != CLD_DUMPED))
		return 0;
	*status = info.si_code == CLD_EXITED ? (info.si_status & 0xff) << 8 : info.si_status;
	return t->tid;
}

static int wait_stop(struct remote_thread *t, uint64_t deadline, int *status)
{
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		pid_t r = t->own_child ? peek_exit(t, status) : 0;
		uint64_t now, slice;
		struct timespec ts;

		if (!r)
			r = waitpid(t->tid, status, __WALL | WNOHANG);
		if (r == t->tid && WIFSTOPPED(*status)) {
			t->stopped = true;
			t->stop_sig = 0;
			if (!t->stop_ns)
				t->stop_ns = gs_monotonic_ns();
			return 0;
		}
		if (r == t->tid || (r < 0 && errno != EINTR)) {
			t->gone = true; /* exited, or (ECHILD) no longer ours to wait for */
			t->stopped = false;
			return -ESRCH;
		}
		now = gs_monotonic_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		slice = deadline - now < WAIT_SLICE_NS ? deadline - now : WAIT_SLICE_NS;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)slice;
		sigtimedwait(&chld, NULL, &ts);
	}
}

static int resume(struct remote_thread *t, int request, int sig)
{
	if (ptrace(request, t->tid, NULL, (void *)(long)sig))
		return errno_or(-EIO);
	t->stopped = false;
	return 0;
}

/* Stops a running thread we gave up on, so that it can be detached (only a stopped tracee
 * can be). */
static int interrupt_and_wait(struct remote_thread *t)
{
	int status;

	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL))
		return errno_or(-EIO);
	return wait_stop(t, gs_monotonic_ns() + STOP_GRACE_NS, &status);
}

int remote_attach(struct remote_thread *t, pid_t pid, pid_t tid)
{
	unsigned long long ppid;

	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->own_child = tid == pid && !procfs_stat_field(pid, STAT_PPID, &ppid) &&
		       ppid == (unsigned long long)getpid();
	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD))
		return errno == EPERM || errno == EACCES ? -EPERM : errno_or(-EIO);
	t->seized = true;
	return 0;
}

/* The extended FPU state: a call clobbers vector registers that the code around the syscall
 * may keep live across it (a `syscall` preserves them all). */
static int save_fpu(struct remote_thread *t)
{
	struct iovec iov;

	t->xstate = malloc(XSTATE_MAX);
	if (!t->xstate)
		return -ENOMEM;
	iov.iov_base = t->xstate;
	iov.iov_len = XSTATE_MAX;
	if (!ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov)) {
		t->xstate_len = iov.iov_len;
		return 0;
	}
	t->xstate_is_fpregs = true;
	t->xstate_len = sizeof(struct user_fpregs_struct);
	return ptrace(PTRACE_GETFPREGS, t->tid, NULL, t->xstate) ? errno_or(-EIO) : 0;
}

static int restore_fpu(const struct remote_thread *t)
{
	struct iovec iov = {.iov_base = t->xstate, .iov_len = t->xstate_len};

	if (t->xstate_is_fpregs)
		return ptrace(PTRACE_SETFPREGS, t->tid, NULL, t->xstate) ? errno_or(-EIO) : 0;
	return ptrace(PTRACE_SETREGSET, t->tid, (void *)NT_X86_XSTATE, &iov) ? errno_or(-EIO) : 0;
}

/* The safe point is reached: keep everything a call will change. */
static int save_state(struct remote_thread *t, const struct user_regs_struct *regs, bool entry)
{
	int err;

	t->regs = malloc(sizeof(*regs));
	if (!t->regs)
		return -ENOMEM;
	memcpy(t->regs, regs, sizeof(*regs));
	err = save_fpu(t);
	if (!err && ptrace(PTRACE_GETSIGMASK, t->tid, (void *)sizeof(t->sigmask), &t->sigmask))
		err = errno_or(-EIO);
	if (err)
		return err;
	t->saved = true;
	t->at_entry = entry;
	t->safe_ns = gs_monotonic_ns();
	return 0;
}

static void stop_from_regs(const struct user_regs_struct *r, struct remote_stop *at)
{
	at->entry = false;
	at->nr = (long)r->orig_rax < 0 ? -1 : (long)r->orig_rax;
	at->args[0] = r->rdi;
	at->args[1] = r->rsi;
	at->args[2] = r->rdx;
	at->args[3] = r->r10;
	at->args[4] = r->r8;
	at->args[5] = r->r9;
	at->ip = r->rip;
}

/* A stop after PTRACE_INTERRUPT: a thread interrupted in (or on its way out of) a syscall has
 * orig_rax >= 0; interrupts and exceptions leave -1 there. 1 when it was taken. */
static int try_interrupt_stop(struct remote_thread *t, remote_safe_fn safe, void *ctx)
{
	struct user_regs_struct regs;
	struct remote_stop at;
	int err = get_regs(t->tid, &regs);

	if (err)
		return err;
	stop_from_regs(&regs, &at);
	if (at.nr < 0 || !safe(ctx, &at))
		return 0;
	return save_state(t, &regs, false) ?: 1;
}

/* A syscall stop: at an entry `safe` accepts, the call is taken instead of the syscall, which
 * runs afterwards. 1 when it was taken. */
static int try_syscall_stop(struct remote_thread *t, remote_safe_fn safe, void *ctx)
{
	struct __ptrace_syscall_info info;
	struct user_regs_struct regs;
	struct remote_stop at = {.entry = true};
	int err;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(info), &info) < 0)
		return errno_or(-EIO);
	if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
		return 0;
	at.nr = (long)info.entry.nr;
	memcpy(at.args, info.entry.args, sizeof(at.args));
	at.ip = info.instruction_pointer;
	if (!safe(ctx, &at))
		return 0;
	err = get_regs(t->tid, &regs);
	return err ?: save_state(t, &regs, true) ?: 1;
}

int remote_stop_safely(struct remote_thread *t, remote_safe_fn safe, void *ctx,
		       uint64_t deadline_ns)
{
	bool giving_up = false;
	int status, err, sig;

	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL))
		return errno_or(-EIO);
	for (;;) {
		err = wait_stop(t, giving_up ? deadline_ns + STOP_GRACE_NS : deadline_ns, &status);
		if (err == -ETIMEDOUT && !giving_up) {
			giving_up = true;
			if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL))
				return errno_or(-EIO);
			continue;
		}
		if (err)
			return err;
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			if (sig != SIGTRAP) { /* job control stopped the process: leave it so */
				t->group_stop = true;
				return -EAGAIN;
			}
			err = try_interrupt_stop(t, safe, ctx);
			sig = 0;
		} else if (sig == (SIGTRAP | 0x80)) {
			err = try_syscall_stop(t, safe, ctx);
			sig = 0;
		} else {
			t->stop_sig = sig; /* a signal for the thread: delivered as it would be */
			err = 0;
		}
		if (err)
			return err < 0 ? err : 0;
		if (giving_up && !sig)
			return -ETIMEDOUT; /* stopped: the release detaches it */
		err = resume(t, PTRACE_SYSCALL, sig);
		if (!err && giving_up)
			err = ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) ? errno_or(-EIO) : 0;
		if (err)
			return err;
	}
}

/* Sets up the call: blob, then the frame that returns to the thread's own context (with the
 * restart of a syscall it was in run again whole: the frame's rt_sigreturn clears the
 * thread's restart block), on the thread's stack below the red zone; arguments in registers
 * (System V x86_64). */
static int prepare_call(struct remote_thread *t, struct user_regs_struct *r, uint64_t fn,
			uint64_t args[6], const void *blob, size_t blob_len, unsigned blob_args)
{
	uint64_t sp = r->rsp - RED_ZONE - STACK_MARGIN, entry_sp;
	struct user_regs_struct resume;
	int err;

	if (blob) {
		sp = (sp - blob_len) & ~15ull;
		err = proc_mem_write(t->pid, sp, blob, blob_len);
		if (err)
			return err;
		for (int i = 0; i < 6; i++)
			if (blob_args & (1u << i))
				args[i] += sp;
		t->blob_addr = sp;
	}
	remote_frame_resume_regs(r, t->at_entry, false, &resume);
	err = remote_frame_write(t->pid, sp, t->restorer, &resume, t->xstate, t->xstate_len,
				 t->xstate_is_fpregs, t->sigmask, &entry_sp);
	if (err)
		return err;
	t->entry_sp = entry_sp;
	r->rsp = entry_sp;
	r->rip = fn;
	r->rdi = args[0];
	r->rsi = args[1];
	r->rdx = args[2];
	r->rcx = args[3];
	r->r8 = args[4];
	r->r9 = args[5];
	r->rax = 0;	     /* no vector arguments, for a variadic function */
	r->orig_rax = -1ull; /* not in a syscall: nothing to restart on the way out */
	r->eflags &= ~EFLAGS_DF;
	return 0;
}

/* The outcome of a signal stop during a call: 0 go on, <0 failed. */
static int call_signal_stop(struct remote_thread *t, int sig)
{
	struct user_regs_struct r;
	siginfo_t si;
	int err;

	if (ptrace(PTRACE_GETSIGINFO, t->tid, NULL, &si))
		return errno_or(-EIO);
	if (si.si_code <= 0) { /* sent by a process: raised again once the thread is back */
		t->pending_sig = sig;
		return 0;
	}
	/* A stop the kernel sent: another gpuspy's BPF holding the process while it probes
	 * the libraries our dlopen maps (ld.so's hook). That gpuspy resumes it with SIGCONT
	 * once done, perhaps while we still hold the thread: raised again afterwards, the stop
	 * would last for good. Dropped, the other gpuspy only probes a moment late. */
	if (sig == SIGSTOP) {
		gs_debug("thread %d: a kernel SIGSTOP during the call (another tracer's hold): "
			 "dropped",
			 t->tid);
		return 0;
	}
	err = get_regs(t->tid, &r);
	if (err)
		return err;
	t->call = REMOTE_CALL_FAULTED;
	gs_debug("the call in thread %d faulted: signal %d at %#llx", t->tid, sig,
		 (unsigned long long)r.rip);
	return -EFAULT;
}

static bool is_open(long nr)
{
	return nr == SYS_open || nr == SYS_openat || nr == SYS_openat2;
}

/* A syscall stop during a call: 1 when it is the trampoline's rt_sigreturn (the function
 * returned), else 0 (a failed open is noted on the way). */
static int call_syscall_stop(struct remote_thread *t)
{
	struct __ptrace_syscall_info info;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(info), &info) < 0)
		return errno_or(-EIO);
	if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
		long nr = (long)info.entry.nr;

		if (nr == SYS_rt_sigreturn &&
		    info.instruction_pointer == t->restorer + REMOTE_RESTORER_LEN &&
		    info.stack_pointer == t->entry_sp + sizeof(uint64_t))
			return 1;
		t->open_path = !is_open(nr)	? 0
			       : nr == SYS_open ? info.entry.args[0]
						: info.entry.args[1];
	} else if (info.op == PTRACE_SYSCALL_INFO_EXIT && t->open_path) {
		if (info.exit.is_error &&
		    !proc_mem_read_string(t->pid, t->open_path, t->failed_open,
					  sizeof(t->failed_open)))
			t->failed_open_err = (int)-info.exit.rval;
		t->open_path = 0;
	}
	return 0;
}

int remote_call(struct remote_thread *t, uint64_t fn, uint64_t args[6], const void *blob,
		size_t blob_len, unsigned blob_args, uint64_t deadline_ns)
{
	struct user_regs_struct r;
	int status, err, sig;

	if (!t->saved || !t->stopped || !t->restorer ||
	    (t->call != REMOTE_CALL_NONE && t->call != REMOTE_CALL_RETURNED))
		return -EINVAL;
	memcpy(&r, t->regs, sizeof(r));
	err = prepare_call(t, &r, fn, args, blob, blob_len, blob_args);
	/* registers first: from here on the frame brings the thread back whatever happens to
	 * gpuspy, while a mask set first would stay on the thread's own code if gpuspy died */
	err = err ?: set_regs(t->tid, &r);
	if (!err) {
		t->modified = true;
		t->call = REMOTE_CALL_RUNNING;
		t->open_path = 0;
	}
	err = err ?: set_sigmask(t->tid, ~synchronous_signals());
	/* syscall stops: the trampoline's rt_sigreturn is how the end of the call is seen */
	err = err ?: resume(t, PTRACE_SYSCALL, 0);
	while (!err) {
		err = wait_stop(t, deadline_ns, &status);
		if (err == -ETIMEDOUT) {
			/* it may wait for a lock another thread holds: it finishes on its own */
			interrupt_and_wait(t);
			return -ETIMEDOUT;
		}
		if (err)
			return err;
		sig = WSTOPSIG(status);
		if (status >> 16 == PTRACE_EVENT_STOP) {
			/* job control stopped the process: this thread finishes its call first */
			t->group_stop |= sig != SIGTRAP;
		} else if (sig == (SIGTRAP | 0x80)) {
			err = call_syscall_stop(t);
			if (err) {
				if (err == 1)
					t->call = REMOTE_CALL_RETURNED;
				return err < 0 ? err : 0;
			}
		} else {
			err = call_signal_stop(t, sig);
			if (err)
				return err;
		}
		err = resume(t, PTRACE_SYSCALL, 0);
	}
	return err;
}

/* Puts the thread back as it was at the safe point (a syscall it was entering or was
 * interrupted in is run again, exactly as the kernel restarts it: gpuspy holds the thread at
 * a stop, so its restart block is intact). The mask goes first and the registers last: if
 * gpuspy died in between, a thread still at its trampoline's rt_sigreturn would restore
 * itself from its frame. */
static int restore_state(struct remote_thread *t)
{
	struct user_regs_struct r;

	remote_frame_resume_regs((const struct user_regs_struct *)t->regs, t->at_entry, true, &r);
	return set_sigmask(t->tid, t->sigmask) ?: restore_fpu(t) ?: set_regs(t->tid, &r);
}

void remote_release(struct remote_thread *t)
{
	if (t->seized && !t->gone) {
		if (!t->stopped)
			interrupt_and_wait(t);
		/* a call still running restores the thread through its frame once it returns */
		if (t->stopped && t->modified && t->call != REMOTE_CALL_RUNNING && restore_state(t))
			gs_warn("thread %d: cannot restore its registers", t->tid);
		if (ptrace(PTRACE_DETACH, t->tid, NULL,
			   (void *)(long)(t->stopped ? t->stop_sig : 0)))
			gs_debug("cannot detach from thread %d: %s", t->tid, strerror(errno));
		if (t->pending_sig)
			syscall(SYS_tgkill, t->pid, t->tid, t->pending_sig);
	}
	t->resume_ns = gs_monotonic_ns();
	t->seized = false;
	free(t->regs);
	free(t->xstate);
	t->regs = t->xstate = NULL;
}
