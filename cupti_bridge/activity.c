// SPDX-License-Identifier: MIT
/*
 * The CUPTI side: subscribe, enable the activity kinds, receive CUPTI's buffers, and undo it
 * all when the recorder leaves. Called only by the control thread (bridge.c, under its lock);
 * the buffer callbacks run on CUPTI's thread or on whichever thread flushes.
 *
 * The subscription is taken although no callback domain is enabled: CUPTI allows one
 * subscriber per process, and cuptiSubscribe is the only way to learn that torch.profiler,
 * nsys or DCGM already hold CUPTI (their activity buffers would otherwise silently be shared
 * with, or stolen from, them).
 */
#include <cupti.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bridge.h"

#define BUFFER_SIZE (2u << 20) /* CUPTI asks for more when one fills between flushes */

/* Weak: a CUPTI without it (the simulator) already reports gettid() in API records. */
#pragma weak cuptiSetThreadIdType

/* Devices are enabled with cuptiActivityEnableAndDump: CUPTI emits a device's record when CUDA
 * initialises it, so a session opened later (gpuspy attached to a running program, or a second
 * recording) gets them only dumped (cupti_activity.h). The `per_call` kinds cost a record per
 * CUDA call or copy and are on only while a recorder asks for them (gpuspy:call_records):
 * the live views show kernels and GPU busy alone, and count calls and bytes with uprobes. */
static const struct {
	CUpti_ActivityKind kind;
	const char *name;
	bool dump;
	bool per_call;
} g_kinds[] = {
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel", false, false},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy", false, true},
    {CUPTI_ACTIVITY_KIND_MEMSET, "memset", false, true},
    {CUPTI_ACTIVITY_KIND_RUNTIME, "runtime", false, true},
    {CUPTI_ACTIVITY_KIND_DRIVER, "driver", false, true},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync", false, true},
    {CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead", false, true},
    {CUPTI_ACTIVITY_KIND_DEVICE, "device", true, false},
};
#define N_KINDS (sizeof(g_kinds) / sizeof(g_kinds[0]))
#define KERNELS 0 /* g_kinds[] index of the kind a live view's --gpu-sample turns on and off */

static CUpti_SubscriberHandle g_sub;
static unsigned char g_enabled[N_KINDS];
static int g_kernels_paused; /* CUPTI accepted the kernel kind, and it is disabled for now */
static int g_calls_on;	     /* the per-call kinds are wanted (those CUPTI accepted are on) */
static unsigned char g_refused[N_KINDS]; /* CUPTI refused the kind: not asked again */
/* Read by the buffer callback on CUPTI's thread: whether records are wanted, and the CUPTI
 * time before which they are not (work launched before the recorder attached). */
static _Atomic int g_accept;
static _Atomic uint64_t g_floor;

/* Only the control thread calls this, hence the static buffer. */
static const char *result_name(CUptiResult r)
{
	static char unknown[32];
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	snprintf(unknown, sizeof(unknown), "CUPTI error %d", (int)r);
	return unknown;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud, (void)domain, (void)cbid, (void)data;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI needs 8-byte alignment; on failure it drops records and counts them */
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	int keep = g_accept;
	uint64_t floor = g_floor;
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		convert_record(rec, floor, keep);
	free(buffer);
	/* the count is reset by each call, so this sums to CUPTI's total */
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
		status_add_dropped(dropped);
		if (keep)
			status_emit(GS_BRIDGE_ACTIVE, 0,
				    "CUPTI dropped %zu records (no buffer space)", dropped);
	}
	if (keep)
		batch_send();
}

/* Kind `i` on; one CUPTI refuses is reported once and never asked again. */
static bool enable_kind(size_t i)
{
	CUptiResult r;

	if (g_refused[i])
		return false;
	r = g_kinds[i].dump ? cuptiActivityEnableAndDump(g_kinds[i].kind)
			    : cuptiActivityEnable(g_kinds[i].kind);
	g_enabled[i] = r == CUPTI_SUCCESS;
	g_refused[i] = r != CUPTI_SUCCESS;
	if (r != CUPTI_SUCCESS)
		status_emit(GS_BRIDGE_CUPTI_ERROR, (int)r, "%s(%s) failed: %s: not recorded",
			    g_kinds[i].dump ? "cuptiActivityEnableAndDump" : "cuptiActivityEnable",
			    g_kinds[i].name, result_name(r));
	return g_enabled[i];
}

/* The kinds wanted (the per-call ones only with `calls`); returns how many are on. */
static size_t enable_kinds(int calls)
{
	size_t on = 0;

	g_calls_on = calls;
	for (size_t i = 0; i < N_KINDS; i++)
		on += (!g_kinds[i].per_call || calls) && enable_kind(i);
	return on;
}

/* The ACTIVE status naming the kinds on (" kernel device" and so on, and NVTX with the
 * per-call kinds), sent at once: gpuspy waits for a flush only from bridges it heard this
 * from. Into `list` too, for the debug log. */
static void announce_kinds(char *list, size_t list_len)
{
	size_t used = 0;

	list[0] = '\0';
	for (size_t i = 0; i < N_KINDS; i++) {
		if (!g_enabled[i])
			continue;
		used += (size_t)snprintf(list + used, list_len - used, " %s", g_kinds[i].name);
		if (used >= list_len)
			used = list_len - 1;
	}
	status_emit(GS_BRIDGE_ACTIVE, 0, "CUPTI activity:%s%s", list, g_calls_on ? "; NVTX" : "");
	batch_send();
}

static enum activity_start_result fail(const char *call, CUptiResult r)
{
	status_emit(GS_BRIDGE_CUPTI_ERROR, (int)r, "%s failed: %s: GPU activity not recorded", call,
		    result_name(r));
	cuptiUnsubscribe(g_sub);
	return ACTIVITY_FAILED;
}

enum activity_start_result activity_start(int calls)
{
	CUptiResult r = cuptiSubscribe(&g_sub, on_callback, NULL);
	uint64_t floor = 0;
	char list[128];
	int err;

	debug_log("pid %d: cuptiSubscribe: %s", (int)getpid(), result_name(r));
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		static const char msg[] = "CUPTI already has a subscriber (torch.profiler, nsys or "
					  "DCGM?): GPU activity not recorded";

		status_emit(GS_BRIDGE_CUPTI_BUSY, (int)r, "%s", msg);
		fprintf(stderr, "gpuspy-cupti: %s\n", msg);
		return ACTIVITY_BUSY;
	}
	if (r != CUPTI_SUCCESS) {
		status_emit(GS_BRIDGE_CUPTI_ERROR, (int)r,
			    "cuptiSubscribe failed: %s: GPU activity not recorded", result_name(r));
		return ACTIVITY_FAILED;
	}
	r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS)
		return fail("cuptiActivityRegisterCallbacks", r);
	/* CUPTI's default thread id on Linux is pthread_self(); gpuspy matches API records with
	 * the uprobe spans of the same calls by the kernel's thread id */
	if (cuptiSetThreadIdType) {
		r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		if (r != CUPTI_SUCCESS)
			status_emit(
			    GS_BRIDGE_CUPTI_ERROR, (int)r,
			    "cuptiSetThreadIdType failed: %s: API records carry pthread ids",
			    result_name(r));
	}
	err = clock_calibrate();
	if (err)
		return fail("cuptiGetTimestamp", (CUptiResult)err);
	r = cuptiGetTimestamp(&floor);
	if (r != CUPTI_SUCCESS)
		return fail("cuptiGetTimestamp", r);
	g_floor = floor;
	g_accept = 1;
	memset(g_refused, 0, sizeof(g_refused));
	if (!enable_kinds(calls)) {
		g_accept = 0;
		return fail("cuptiActivityEnable", CUPTI_ERROR_NOT_SUPPORTED);
	}
	/* before the log line: a script that waits for the line must find gpuspy knowing */
	announce_kinds(list, sizeof(list));
	debug_log("pid %d: activity on:%s", (int)getpid(), list);
	return ACTIVITY_STARTED;
}

void activity_flush(int forced)
{
	cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

/*
 * The kernel kind alone is switched: kernel records are what costs per kernel, and a live
 * view's duty cycle (gpuspy:kernels_paused) samples only GPU busy time. A kernel launched
 * before the disable is still delivered, one launched while disabled never is (CUPTI records
 * what was submitted while its kind was on), so the windows gpuspy sees are the enabled ones.
 */
void activity_set_kernels(int on)
{
	CUptiResult r;

	if (!g_enabled[KERNELS] && !g_kernels_paused)
		return; /* refused at the start: nothing to switch */
	if (on == !g_kernels_paused)
		return;
	r = on ? cuptiActivityEnable(g_kinds[KERNELS].kind)
	       : cuptiActivityDisable(g_kinds[KERNELS].kind);
	if (r != CUPTI_SUCCESS) {
		status_emit(GS_BRIDGE_CUPTI_ERROR, (int)r, "%s(kernel) failed: %s",
			    on ? "cuptiActivityEnable" : "cuptiActivityDisable", result_name(r));
		return;
	}
	g_enabled[KERNELS] = (unsigned char)on;
	g_kernels_paused = !on;
	debug_log("pid %d: kernels %s", (int)getpid(), on ? "on" : "paused");
}

/* What a live view does not show costs nothing while only live views watch: the per-call
 * kinds follow gpuspy:call_records. A call made while they were off has no record, which is
 * what a recorder that attached later expects (it records from its attach). */
void activity_set_calls(int on)
{
	if (on == g_calls_on)
		return;
	for (size_t i = 0; i < N_KINDS; i++) {
		if (!g_kinds[i].per_call)
			continue;
		if (on) {
			enable_kind(i);
		} else if (g_enabled[i]) {
			cuptiActivityDisable(g_kinds[i].kind);
			g_enabled[i] = 0;
		}
	}
	g_calls_on = on;
	debug_log("pid %d: call records %s", (int)getpid(), on ? "on" : "off");
	if (on) {
		char list[128];

		/* a recorder that came while a live view kept the session open learns here that
		 * this bridge records, and so waits for its flush at the end */
		announce_kinds(list, sizeof(list));
	}
}

/* Disabled before the forced flush, so nothing launched after the recorder left slips in
 * between and nothing stays queued in CUPTI for the next recorder. */
void activity_stop(void)
{
	for (size_t i = 0; i < N_KINDS; i++)
		if (g_enabled[i])
			cuptiActivityDisable(g_kinds[i].kind);
	memset(g_enabled, 0, sizeof(g_enabled));
	g_kernels_paused = 0;
	g_calls_on = 0;
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	g_accept = 0;
	cuptiUnsubscribe(g_sub);
	debug_log("pid %d: cuptiUnsubscribe", (int)getpid());
}
