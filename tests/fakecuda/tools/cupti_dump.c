/* Test injection library: loaded by the driver through CUDA_INJECTION64_PATH
 * (the fake driver and NVIDIA's alike), it subscribes with CUPTI and writes
 * every callback and activity record as one JSON object per line to
 * $CUPTI_DUMP_FILE.  Built against NVIDIA's headers only, so the same .so
 * runs with the fake libcupti.so.13 and with the real one on a GPU host.
 *
 * Lines ("type"): clock, subscribe, second_subscribe, callback, kernel,
 * memcpy, memset, runtime, driver, sync, dropped. */
#include <cupti.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DUMP_BUFFER_SIZE (1u << 20)
#define CHECK_CUPTI(call)                                                                          \
	do {                                                                                       \
		CUptiResult r_ = (call);                                                           \
		if (r_ != CUPTI_SUCCESS) {                                                         \
			const char *s_ = NULL;                                                     \
			cuptiGetResultString(r_, &s_);                                             \
			fprintf(stderr, "cupti_dump: %s failed: %s\n", #call, s_ ? s_ : "?");      \
		}                                                                                  \
	} while (0)

static FILE *g_out;
static pthread_mutex_t g_out_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_SubscriberHandle g_sub;

__attribute__((format(printf, 1, 2))) static void emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&g_out_lock);
	if (g_out) { /* NULL once finish() closed it */
		vfprintf(g_out, fmt, ap);
		fputc('\n', g_out);
	}
	pthread_mutex_unlock(&g_out_lock);
	va_end(ap);
}

/* Names are C identifiers or mangled names; quote defensively anyway. */
static const char *safe(const char *s)
{
	if (!s)
		return "";
	for (const char *p = s; *p; p++)
		if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
			return "<unprintable>";
	return s;
}

static const char *cb_name(CUpti_CallbackDomain d, uint32_t cbid)
{
	const char *n = NULL;
	return cuptiGetCallbackName(d, cbid, &n) == CUPTI_SUCCESS ? safe(n) : "";
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return;
	const CUpti_CallbackData *d = data;
	emit("{\"type\":\"callback\",\"site\":\"%s\",\"domain\":\"%s\",\"cbid\":%u,"
	     "\"name\":\"%s\",\"corr\":%u,\"symbol\":\"%s\"}",
	     d->callbackSite == CUPTI_API_ENTER ? "enter" : "exit",
	     domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "runtime" : "driver", cbid,
	     safe(d->functionName), d->correlationId, safe(d->symbolName));
}

static void dump_kernel(const CUpti_ActivityKernel10 *k)
{
	emit("{\"type\":\"kernel\",\"name\":\"%s\",\"corr\":%u,\"stream\":%u,\"ctx\":%u,"
	     "\"device\":%u,\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d],\"shared\":%d,"
	     "\"queued\":%llu,\"start\":%llu,\"end\":%llu}",
	     safe(k->name), k->correlationId, k->streamId, k->contextId, k->deviceId, k->gridX,
	     k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ, k->dynamicSharedMemory,
	     (unsigned long long)k->queued, (unsigned long long)k->start,
	     (unsigned long long)k->end);
}

static void dump_record(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		dump_kernel((const CUpti_ActivityKernel10 *)r);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;
		emit("{\"type\":\"memcpy\",\"copyKind\":%u,\"srcKind\":%u,\"dstKind\":%u,"
		     "\"bytes\":%llu,\"async\":%d,\"corr\":%u,\"stream\":%u,\"start\":%llu,"
		     "\"end\":%llu}",
		     m->copyKind, m->srcKind, m->dstKind, (unsigned long long)m->bytes,
		     (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0, m->correlationId,
		     m->streamId, (unsigned long long)m->start, (unsigned long long)m->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;
		emit("{\"type\":\"memset\",\"bytes\":%llu,\"value\":%u,\"corr\":%u,\"stream\":%u,"
		     "\"start\":%llu,\"end\":%llu}",
		     (unsigned long long)m->bytes, m->value, m->correlationId, m->streamId,
		     (unsigned long long)m->start, (unsigned long long)m->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const void *)r;
		int rt = r->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
		emit(
		    "{\"type\":\"%s\",\"cbid\":%u,\"name\":\"%s\",\"corr\":%u,\"tid\":%u,"
		    "\"ret\":%u,\"start\":%llu,\"end\":%llu}",
		    rt ? "runtime" : "driver", a->cbid,
		    cb_name(rt ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid),
		    a->correlationId, a->threadId, a->returnValue, (unsigned long long)a->start,
		    (unsigned long long)a->end);
		break;
	}
	case CUPTI_ACTIVITY_KIND_DEVICE: {
		/* CUpti_ActivityDevice5: emitted at cuInit, as DEVICE is enabled in
		 * InitializeInjection, before the driver is initialised; the name is ours */
		const CUpti_ActivityDevice5 *d = (const void *)r;
		emit("{\"type\":\"device\",\"id\":%u,\"name\":\"%s\",\"globalMemorySize\":%llu,"
		     "\"computeCapabilityMajor\":%u,\"computeCapabilityMinor\":%u,"
		     "\"numMultiprocessors\":%u,\"numThreadsPerWarp\":%u,\"maxThreadsPerBlock\":%u,"
		     "\"maxWarpsPerMultiprocessor\":%u,\"maxRegistersPerBlock\":%u,"
		     "\"maxRegistersPerMultiprocessor\":%u,\"maxSharedMemoryPerBlock\":%u,"
		     "\"maxSharedMemoryPerMultiprocessor\":%u}",
		     d->id, safe(d->name), (unsigned long long)d->globalMemorySize,
		     d->computeCapabilityMajor, d->computeCapabilityMinor, d->numMultiprocessors,
		     d->numThreadsPerWarp, d->maxThreadsPerBlock, d->maxWarpsPerMultiprocessor,
		     d->maxRegistersPerBlock, d->maxRegistersPerMultiprocessor,
		     d->maxSharedMemoryPerBlock, d->maxSharedMemoryPerMultiprocessor);
		free((void *)d->name);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)r;
		emit("{\"type\":\"sync\",\"syncType\":%u,\"corr\":%u,\"stream\":%u,\"event\":%u,"
		     "\"start\":%llu,\"end\":%llu}",
		     (unsigned)s->type, s->correlationId, s->streamId, s->cudaEventId,
		     (unsigned long long)s->start, (unsigned long long)s->end);
		break;
	}
	default:
		break;
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, DUMP_BUFFER_SIZE);
	*size = *buffer ? DUMP_BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	(void)ctx, (void)stream, (void)size;
	CUpti_Activity *r = NULL;
	while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS)
		dump_record(r);
	free(buffer);
}

static const CUpti_ActivityKind g_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_DEVICE,
};
#define N_KINDS (sizeof(g_kinds) / sizeof(g_kinds[0]))

/* At exit: stop tracing first (CUDA calls made by later exit handlers, such
 * as fatbinary unregistration, must not reach a closed file), then flush. */
static void finish(void)
{
	CHECK_CUPTI(cuptiUnsubscribe(g_sub));
	for (size_t i = 0; i < N_KINDS; i++)
		CHECK_CUPTI(cuptiActivityDisable(g_kinds[i]));
	CHECK_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	size_t dropped = 0;
	CHECK_CUPTI(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped));
	emit("{\"type\":\"dropped\",\"n\":%zu}", dropped);
	pthread_mutex_lock(&g_out_lock);
	fclose(g_out);
	g_out = NULL;
	pthread_mutex_unlock(&g_out_lock);
}

static void emit_clock(void)
{
	struct timespec ts;
	uint64_t cupti = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	CHECK_CUPTI(cuptiGetTimestamp(&cupti));
	emit("{\"type\":\"clock\",\"cupti\":%llu,\"monotonic\":%llu}", (unsigned long long)cupti,
	     (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	const char *path = getenv("CUPTI_DUMP_FILE");
	g_out = fopen(path && *path ? path : "/dev/stderr", "w");
	if (!g_out)
		return 0;
	emit_clock();
	CUpti_SubscriberHandle other = NULL;
	CUptiResult r1 = cuptiSubscribe(&g_sub, on_callback, NULL);
	CUptiResult r2 = cuptiSubscribe(&other, on_callback, NULL);
	emit("{\"type\":\"subscribe\",\"result\":%d}", (int)r1);
	emit("{\"type\":\"second_subscribe\",\"result\":%d}", (int)r2);
	CHECK_CUPTI(cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_RUNTIME_API));
	CHECK_CUPTI(cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API));
	CHECK_CUPTI(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
	for (size_t i = 0; i < N_KINDS; i++)
		CHECK_CUPTI(cuptiActivityEnable(g_kinds[i]));
	atexit(finish);
	return 1;
}
