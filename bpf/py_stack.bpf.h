/* SPDX-License-Identifier: MIT */
/*
 * The CPython frame walker every component shares (included after common.bpf.h).
 * PLACEHOLDER: emits nothing yet.
 */
#ifndef GPUSPY_PY_STACK_BPF_H
#define GPUSPY_PY_STACK_BPF_H

/* Emits the current thread's Python stack as a GS_REC_PY_STACK record valid over
 * [start_ns, end_ns], if py_stacks is on and its process is in py_procs. */
static __always_inline void py_stack_emit(__u32 kind, __u64 start_ns, __u64 end_ns)
{
	(void)kind;
	(void)start_ns;
	(void)end_ns;
}

#endif /* GPUSPY_PY_STACK_BPF_H */
