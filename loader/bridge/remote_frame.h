/* SPDX-License-Identifier: MIT */
/*
 * The way back from a function called in another process's thread (remote_call.h) that needs
 * no tracer: the function returns into libc's rt_sigreturn trampoline (`__restore_rt`: `mov
 * $15, %rax; syscall`), whose signal frame, built here on the thread's stack, holds the
 * thread's own registers, extended FPU state and signal mask as they must be when it goes on.
 * If gpuspy dies at any instant of a call (SIGKILL, the OOM killer), the thread finishes the
 * call and the kernel puts it back where it was: nothing is left that only gpuspy could undo.
 */
#ifndef GPUSPY_REMOTE_FRAME_H
#define GPUSPY_REMOTE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/* `mov $15, %rax; syscall`: what the trampoline's 9 bytes are; the syscall's return address
 * (what a syscall stop shows as its instruction pointer) is its start + this. */
#define REMOTE_RESTORER_LEN 9

/* The registers a thread stopped at `saved` must go on with, as the kernel would have let it
 * go without a tracer: a syscall it was entering, or that was interrupted with a restart
 * code, is run again. `restart_block`: restart an interrupted sleep with the kernel's
 * restart_syscall (exact, but only while its restart block is still the thread's: not after
 * an rt_sigreturn, which clears it), else by running the syscall again whole. orig_rax is -1:
 * no syscall is pending. */
void remote_frame_resume_regs(const struct user_regs_struct *saved, bool at_entry,
			      bool restart_block, struct user_regs_struct *out);

/* Writes the frame below `below` (an address on the thread's stack, nothing above it touched
 * by the call) in process `pid`: the extended FPU state `xstate` (XSAVE layout from
 * PTRACE_GETREGSET NT_X86_XSTATE, or the FXSAVE area when `fxsave_only`), the signal mask and
 * the resume registers, with `restorer` as the return address. *entry_sp is the stack
 * pointer to call the function with. 0 or -errno. */
int remote_frame_write(pid_t pid, uint64_t below, uint64_t restorer,
		       const struct user_regs_struct *resume, const void *xstate, size_t xstate_len,
		       bool fxsave_only, uint64_t sigmask, uint64_t *entry_sp);

/* The address of libc's rt_sigreturn trampoline in the text mapped at [start, end) of `pid`,
 * or 0 if there is none. */
uint64_t remote_frame_find_restorer(pid_t pid, uint64_t start, uint64_t end);

#endif /* GPUSPY_REMOTE_FRAME_H */
