// SPDX-License-Identifier: MIT
/*
 * The bridge's two USDT probes, with semaphores. The kernel increments a probe's semaphore in
 * every process that maps this library while a uprobe is attached to the probe (libbpf's
 * bpf_program__attach_usdt passes the semaphore as the uprobe's ref_ctr_offset) and
 * decrements it on detach, so the semaphores are how gpuspy talks to the bridge without any
 * other channel:
 *   gpuspy:records(batch, len)   attached = a recorder wants GPU activity (the gate)
 *   gpuspy:flushed(generation)   attached = deliver everything now, then fire this once
 * Each probe has exactly one call site (these noinline functions): with several sites the
 * kernel would count the semaphore once per site, and a recorder would pay for each.
 */
#define _SDT_HAS_SEMAPHORES 1
/*
 * sys/sdt.h names a probe's semaphore <provider>_<probe>_semaphore; the flush probe's is
 * spelled gpuspy_flush_semaphore in gpuspy's documents, so the name sys/sdt.h pastes
 * together is redirected to it (the note only records the address).
 */
#define gpuspy_flushed_semaphore gpuspy_flush_semaphore
#include <sys/sdt.h>

#include "bridge.h"

/* Exported (.dynsym): gpuspy recognises a bridge by its records semaphore's symbol. */
__extension__ BRIDGE_EXPORT unsigned short gpuspy_records_semaphore
    __attribute__((unused, section(".probes")));
__extension__ BRIDGE_EXPORT unsigned short gpuspy_flush_semaphore
    __attribute__((unused, section(".probes")));

int usdt_recorder_attached(void)
{
	return __atomic_load_n(&gpuspy_records_semaphore, __ATOMIC_RELAXED) != 0;
}

int usdt_flush_requested(void)
{
	return __atomic_load_n(&gpuspy_flush_semaphore, __ATOMIC_RELAXED) != 0;
}

__attribute__((noinline)) void usdt_fire_records(const void *batch, size_t len)
{
	DTRACE_PROBE2(gpuspy, records, batch, len);
}

__attribute__((noinline)) void usdt_fire_flushed(unsigned long generation)
{
	DTRACE_PROBE1(gpuspy, flushed, generation);
}
