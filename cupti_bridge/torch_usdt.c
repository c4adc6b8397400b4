// SPDX-License-Identifier: MIT
/*
 * The observer's own USDT probe, semaphore only: gpuspy_torch:shapes. Its one site is never
 * executed; what matters is its semaphore, which the kernel raises in this process while a
 * uprobe is attached to the site (libbpf's bpf_program__attach_usdt passes the semaphore as
 * the uprobe's ref_ctr_offset), as for gpuspy:records (usdt.c). Raised when the control
 * thread enables the observer: input shapes are recorded for that recording
 * (docs/TORCH_OBSERVER.md says what gpuspy must do). A probe of its own, and in this library
 * only, so that the CUPTI bridge's probes keep exactly one site each.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include "torch_send.h"

/* Exported (.dynsym), as the bridge's semaphores are: a tool may look it up by name. */
__extension__ TORCH_OPS_EXPORT unsigned short gpuspy_torch_shapes_semaphore
    __attribute__((unused, section(".probes")));

int torch_usdt_shapes_requested(void)
{
	return __atomic_load_n(&gpuspy_torch_shapes_semaphore, __ATOMIC_RELAXED) != 0;
}

/* The site the probe's note describes; nothing calls it (used keeps it and its note). */
__attribute__((noinline, used)) void torch_usdt_shapes_site(void)
{
	DTRACE_PROBE(gpuspy_torch, shapes);
}
