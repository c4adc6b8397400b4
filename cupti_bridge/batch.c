// SPDX-License-Identifier: MIT
/*
 * The batch being filled: whole records packed behind a struct gs_gpu_batch, at most
 * GS_GPU_BATCH_MAX bytes, handed to gpuspy by one firing of gpuspy:records. One trap per
 * batch instead of one per record is what makes CUPTI's record rates affordable.
 *
 * A single static buffer under one mutex: CUPTI's thread (bufferCompleted), application
 * threads (NVTX) and the control thread all append here. The probe fires with the lock held
 * because the BPF program reads the buffer during the firing. The buffer is .bss: its pages
 * are not touched, so not allocated, until a recorder attaches.
 */
#include <pthread.h>
#include <string.h>

#include "bridge.h"

/* which library sends (seq's top byte): both number their batches from 1 in one process */
#ifndef GS_BATCH_STREAM
#define GS_BATCH_STREAM GS_GPU_BATCH_STREAM_BRIDGE
#endif

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static union {
	struct gs_gpu_batch b;
	unsigned char bytes[GS_GPU_BATCH_MAX];
} g_batch;
static size_t g_used = sizeof(struct gs_gpu_batch); /* bytes, header included */
static uint32_t g_count;			    /* records in the batch */
static uint64_t g_seq;				    /* last sequence number sent */

/* Lock held. Sequence numbers count only batches that went out, so that a gap in them
 * always means lost batches, never "nobody was listening". */
static uint64_t send_locked(void)
{
	uint64_t seq = 0;

	if (!g_count)
		return 0;
	if (usdt_recorder_attached()) {
		struct gs_gpu_batch *b = &g_batch.b;

		memset(&b->hdr, 0, sizeof(b->hdr));
		b->hdr.type = GS_REC_GPU_BATCH;
		b->hdr.size = (__u16)g_used;
		b->hdr.pid = bridge_getpid();
		b->hdr.tid = bridge_gettid();
		b->hdr.flags = g_count;
		b->hdr.ts = bridge_now_ns();
		seq = ++g_seq;
		b->seq = seq | (uint64_t)GS_BATCH_STREAM << GS_GPU_BATCH_STREAM_SHIFT;
		usdt_fire_records(b, g_used);
	}
	g_used = sizeof(struct gs_gpu_batch);
	g_count = 0;
	return seq;
}

static void add_locked(const struct gs_hdr *rec)
{
	if (g_used + rec->size > sizeof(g_batch))
		send_locked();
	memcpy(g_batch.bytes + g_used, rec, rec->size);
	g_used += rec->size;
	g_count++;
}

void batch_add(const struct gs_hdr *rec)
{
	pthread_mutex_lock(&g_lock);
	add_locked(rec);
	pthread_mutex_unlock(&g_lock);
}

void batch_send(void)
{
	pthread_mutex_lock(&g_lock);
	send_locked();
	pthread_mutex_unlock(&g_lock);
}

uint64_t batch_add_send(const struct gs_hdr *rec)
{
	uint64_t seq;

	pthread_mutex_lock(&g_lock);
	add_locked(rec);
	seq = send_locked();
	pthread_mutex_unlock(&g_lock);
	return seq;
}

void batch_discard(void)
{
	pthread_mutex_lock(&g_lock);
	g_used = sizeof(struct gs_gpu_batch);
	g_count = 0;
	pthread_mutex_unlock(&g_lock);
}

void batch_reset_child(void)
{
	/* the parent's other threads are gone: the lock may be held by one of them */
	pthread_mutex_init(&g_lock, NULL);
	g_used = sizeof(struct gs_gpu_batch);
	g_count = 0;
	g_seq = 0;
}
