/* The activity API: client-provided buffers filled with real CUPTI 13 record
 * structs.  GPU work is held back until its simulated end time has passed
 * (a GPU cannot report a kernel before it finished); a forced flush
 * releases everything.  Full buffers are handed back through the client's
 * completion callback on the thread that filled them or that flushes.
 *
 * Late attach, as with NVIDIA's CUPTI: a kind records only what began after
 * it was enabled.  An API record needs its call to have begun after the
 * enable and the kind to be still enabled at the call's exit; GPU work and
 * synchronisations need the API call that caused them (the outermost one on
 * the thread) to have begun after the enable and the kind to be enabled when
 * the driver reports them.  So a kernel already executing, or queued, when
 * CUPTI arrives never appears, and nothing launched after a disable does;
 * work launched in between is delivered even if it ends after the disable.
 *
 * Device records (CUpti_ActivityDevice5) are emitted when the driver finishes
 * cuInit, to a client that enabled CUPTI_ACTIVITY_KIND_DEVICE before; later,
 * only cuptiActivityEnableAndDump gives them, for the devices that exist
 * (cupti_activity.h says both). */
#include "cupti_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct full_buffer {
	uint8_t *buf;
	size_t size, used;
	struct full_buffer *next;
};

struct pending {
	struct fc_work w;
	CUpti_ActivityKind kind; /* chosen at launch: the kinds may change before release */
	struct pending *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t g_enabled[CUPTI_ACTIVITY_KIND_COUNT];
static uint64_t g_since[CUPTI_ACTIVITY_KIND_COUNT]; /* CLOCK_MONOTONIC ns of the enable */
static CUpti_BuffersCallbackRequestFunc g_request;
static CUpti_BuffersCallbackCompleteFunc g_complete;
static struct {
	uint8_t *buf;
	size_t size, used;
} g_cur;
static struct full_buffer *g_full, **g_full_tail = &g_full;
static struct pending *g_pending, **g_pending_tail = &g_pending;
static size_t g_dropped;
static int64_t g_grid_id;

static uint64_t now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Enabled, and since no later than t (something that began at t).  The
 * acquire pairs with set_kind's release: an enable's start is seen with it. */
static int active(CUpti_ActivityKind k, uint64_t t)
{
	return __atomic_load_n(&g_enabled[k], __ATOMIC_ACQUIRE) &&
	       t >= __atomic_load_n(&g_since[k], __ATOMIC_RELAXED);
}

static CUpti_ActivityKind api_kind(int domain)
{
	return domain == FC_DOMAIN_DRIVER ? CUPTI_ACTIVITY_KIND_DRIVER
					  : CUPTI_ACTIVITY_KIND_RUNTIME;
}

int fc_activity_wants_api(int domain, uint64_t start_ns)
{
	return active(api_kind(domain), start_ns);
}

/* ---- buffers (g_lock held) -------------------------------------------------- */

static void close_current(void)
{
	if (!g_cur.buf)
		return;
	struct full_buffer *f = malloc(sizeof(*f));
	if (f) {
		*f = (struct full_buffer){g_cur.buf, g_cur.size, g_cur.used, NULL};
		*g_full_tail = f;
		g_full_tail = &f->next;
	}
	memset(&g_cur, 0, sizeof(g_cur));
}

static void append(const void *rec, size_t size)
{
	size_t need = (size + 7) & ~(size_t)7; /* records are 8-byte aligned */
	if (g_cur.buf && g_cur.used + need > g_cur.size)
		close_current();
	if (!g_cur.buf && g_request) {
		uint8_t *b = NULL;
		size_t sz = 0, max_records = 0;
		g_request(&b, &sz, &max_records);
		if (b && sz)
			g_cur.buf = b, g_cur.size = sz, g_cur.used = 0;
	}
	if (!g_cur.buf || need > g_cur.size) {
		g_dropped++;
		return;
	}
	memcpy(g_cur.buf + g_cur.used, rec, size);
	g_cur.used += need;
}

/* Hand full buffers to the client, without holding the lock. */
static void deliver_full(void)
{
	pthread_mutex_lock(&g_lock);
	struct full_buffer *list = g_full;
	g_full = NULL;
	g_full_tail = &g_full;
	CUpti_BuffersCallbackCompleteFunc done = g_complete;
	pthread_mutex_unlock(&g_lock);
	while (list) {
		struct full_buffer *n = list->next;
		if (done)
			done(NULL, 0, list->buf, list->size, list->used);
		free(list);
		list = n;
	}
}

/* ---- record construction ---------------------------------------------------- */

static void put_kernel(const struct fc_work *w, CUpti_ActivityKind kind)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = kind;
	k.start = fc_cupti_time(w->start_ns);
	k.end = fc_cupti_time(w->end_ns);
	k.completed = k.end;
	k.queued = fc_cupti_time(w->queued_ns);
	k.submitted = k.queued;
	k.deviceId = w->device_id;
	k.contextId = w->context_id;
	k.streamId = w->stream_id;
	k.gridX = w->grid[0], k.gridY = w->grid[1], k.gridZ = w->grid[2];
	k.blockX = w->block[0], k.blockY = w->block[1], k.blockZ = w->block[2];
	k.dynamicSharedMemory = w->dynamic_shared;
	k.correlationId = w->correlation_id;
	k.gridId = ++g_grid_id;
	k.name = w->name;
	k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	append(&k, sizeof(k));
}

static void put_memcpy(const struct fc_work *w)
{
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = (uint8_t)w->copy_kind;
	m.srcKind = (uint8_t)w->src_kind;
	m.dstKind = (uint8_t)w->dst_kind;
	m.flags = w->async ? CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC : 0;
	m.bytes = w->bytes;
	m.start = fc_cupti_time(w->start_ns);
	m.end = fc_cupti_time(w->end_ns);
	m.deviceId = w->device_id;
	m.contextId = w->context_id;
	m.streamId = w->stream_id;
	m.correlationId = w->correlation_id;
	m.copyCount = 1;
	append(&m, sizeof(m));
}

static void put_memset(const struct fc_work *w)
{
	CUpti_ActivityMemset4 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = w->memset_value;
	m.bytes = w->bytes;
	m.start = fc_cupti_time(w->start_ns);
	m.end = fc_cupti_time(w->end_ns);
	m.deviceId = w->device_id;
	m.contextId = w->context_id;
	m.streamId = w->stream_id;
	m.correlationId = w->correlation_id;
	m.flags = w->async ? CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC : 0;
	m.memoryKind = (uint16_t)w->dst_kind;
	append(&m, sizeof(m));
}

static void put_sync(const struct fc_work *w)
{
	CUpti_ActivitySynchronization2 s;
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = (CUpti_ActivitySynchronizationType)w->sync_kind;
	s.start = fc_cupti_time(w->start_ns);
	s.end = fc_cupti_time(w->end_ns);
	s.correlationId = w->correlation_id;
	s.contextId = w->context_id;
	s.streamId = w->stream_id; /* UINT32_MAX == INVALID_VALUE */
	s.cudaEventId = w->event_id;
	s.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	append(&s, sizeof(s));
}

/* One device's record, with the values the driver's cuDevice* calls report (taken through
 * the hooks, so no driver API call is made). The name is the client's to free, as the
 * header says. Lock held. */
static void put_device(const struct fakecuda_hooks *h, int ordinal)
{
	CUpti_ActivityDevice5 d;
	char name[256];
	uint64_t total = 0;
	int v[CU_DEVICE_ATTRIBUTE_MAX] = {0};
	static const int wanted[] = {
	    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
	    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
	    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
	    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
	    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
	    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
	    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
	    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
	    CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY,
	    CU_DEVICE_ATTRIBUTE_WARP_SIZE,
	    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
	    CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
	    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
	    CU_DEVICE_ATTRIBUTE_ECC_ENABLED,
	    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
	    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
	    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
	    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
	    CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT,
	    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
	    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
	    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
	    CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
	    CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
	};

	if (h->device_name(name, (int)sizeof(name), ordinal) != CUDA_SUCCESS ||
	    h->device_total_mem(&total, ordinal) != CUDA_SUCCESS)
		return;
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		h->device_attribute(&v[wanted[i]], wanted[i], ordinal);
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	/* kB/s: memory clock (kHz) x bus width in bytes x 2 transfers per clock */
	d.globalMemoryBandwidth = (uint64_t)v[CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE] *
				  (uint64_t)(v[CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH] / 8) *
				  2;
	d.globalMemorySize = total;
	d.constantMemorySize = (uint32_t)v[CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY];
	d.l2CacheSize = (uint32_t)v[CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE];
	d.numThreadsPerWarp = (uint32_t)v[CU_DEVICE_ATTRIBUTE_WARP_SIZE];
	d.coreClockRate = (uint32_t)v[CU_DEVICE_ATTRIBUTE_CLOCK_RATE];
	d.numMemcpyEngines = (uint32_t)v[CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT];
	d.numMultiprocessors = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
	d.maxIPC = 0; /* not simulated */
	if (d.numThreadsPerWarp)
		d.maxWarpsPerMultiprocessor =
		    (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] /
		    d.numThreadsPerWarp;
	d.maxBlocksPerMultiprocessor =
	    (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR];
	d.maxSharedMemoryPerMultiprocessor =
	    (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR];
	d.maxRegistersPerMultiprocessor =
	    (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR];
	d.maxRegistersPerBlock = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK];
	d.maxSharedMemoryPerBlock = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
	d.maxThreadsPerBlock = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
	d.maxBlockDimX = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X];
	d.maxBlockDimY = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y];
	d.maxBlockDimZ = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z];
	d.maxGridDimX = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X];
	d.maxGridDimY = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y];
	d.maxGridDimZ = (uint32_t)v[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z];
	d.computeCapabilityMajor = (uint32_t)v[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
	d.computeCapabilityMinor = (uint32_t)v[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
	d.id = (uint32_t)ordinal;
	d.eccEnabled = (uint32_t)v[CU_DEVICE_ATTRIBUTE_ECC_ENABLED];
	h->device_uuid((uint8_t *)d.uuid.bytes, ordinal);
	d.name = strdup(name);
	d.isCudaVisible = 1;
	d.gpuInstanceId = UINT32_MAX; /* no MIG */
	d.computeInstanceId = UINT32_MAX;
	d.numaId = invalidNumaId;
	if (!d.name) {
		g_dropped++;
		return;
	}
	size_t before = g_dropped;
	append(&d, sizeof(d));
	if (g_dropped != before) /* not stored: nobody will free it */
		free((void *)d.name);
}

/* Every device's record, if the kind is on and the client registered its buffers (without
 * them the header says the kind is enabled but no records are provided). Takes the lock. */
static void put_devices(void)
{
	const struct fakecuda_hooks *h = fc_cupti_hooks();
	if (!h)
		return;
	pthread_mutex_lock(&g_lock);
	if (g_request && __atomic_load_n(&g_enabled[CUPTI_ACTIVITY_KIND_DEVICE], __ATOMIC_ACQUIRE))
		for (int i = 0, n = h->device_count(); i < n; i++)
			put_device(h, i);
	pthread_mutex_unlock(&g_lock);
	deliver_full();
}

void fc_activity_driver_initialized(void)
{
	put_devices();
}

static void put_work(const struct fc_work *w, CUpti_ActivityKind kind)
{
	switch (w->kind) {
	case FC_WORK_KERNEL:
		put_kernel(w, kind);
		break;
	case FC_WORK_MEMCPY:
		put_memcpy(w);
		break;
	case FC_WORK_MEMSET:
		put_memset(w);
		break;
	case FC_WORK_SYNC:
		put_sync(w);
		break;
	default:
		break;
	}
}

/* Move finished (or, forced, all) pending work into buffers.  Lock held. */
static void release_pending(int forced)
{
	uint64_t now = now_mono();
	struct pending **pp = &g_pending;
	while (*pp) {
		struct pending *p = *pp;
		if (forced || p->w.end_ns <= now) {
			put_work(&p->w, p->kind);
			*pp = p->next;
			free(p);
		} else {
			pp = &p->next;
		}
	}
	g_pending_tail = pp;
}

/* The record kind for work whose API call began at `launched`, or
 * CUPTI_ACTIVITY_KIND_INVALID when none is wanted. */
static CUpti_ActivityKind work_kind(int kind, uint64_t launched)
{
	CUpti_ActivityKind k;
	switch (kind) {
	case FC_WORK_KERNEL:
		if (active(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, launched))
			return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
		k = CUPTI_ACTIVITY_KIND_KERNEL;
		break;
	case FC_WORK_MEMCPY:
		k = CUPTI_ACTIVITY_KIND_MEMCPY;
		break;
	case FC_WORK_MEMSET:
		k = CUPTI_ACTIVITY_KIND_MEMSET;
		break;
	case FC_WORK_SYNC:
		k = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
		break;
	default:
		return CUPTI_ACTIVITY_KIND_INVALID;
	}
	return active(k, launched) ? k : CUPTI_ACTIVITY_KIND_INVALID;
}

void fc_activity_work(const struct fc_work *w, uint64_t launched)
{
	if (work_kind(w->kind, launched) == CUPTI_ACTIVITY_KIND_INVALID)
		return;
	struct pending *p = malloc(sizeof(*p));
	pthread_mutex_lock(&g_lock);
	/* again under the lock: a disable or cuptiFinalize may have come between */
	CUpti_ActivityKind kind = work_kind(w->kind, launched);
	if (p && kind != CUPTI_ACTIVITY_KIND_INVALID) {
		p->w = *w;
		p->kind = kind;
		p->next = NULL;
		*g_pending_tail = p;
		g_pending_tail = &p->next;
		p = NULL;
	} else if (!p) {
		g_dropped++;
	}
	release_pending(0);
	pthread_mutex_unlock(&g_lock);
	free(p);
	deliver_full();
}

void fc_activity_api(const struct fc_api_call *c)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = c->domain == FC_DOMAIN_DRIVER ? CUPTI_ACTIVITY_KIND_DRIVER
					       : CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = c->cbid;
	a.start = fc_cupti_time(c->start_ns);
	a.end = fc_cupti_time(c->end_ns);
	a.processId = (uint32_t)getpid();
	a.threadId = c->thread_id;
	a.correlationId = c->correlation_id;
	a.returnValue = (uint32_t)c->result;
	pthread_mutex_lock(&g_lock);
	if (active(a.kind, c->start_ns)) /* still enabled at the exit */
		append(&a, sizeof(a));
	pthread_mutex_unlock(&g_lock);
	deliver_full();
}

/* ---- public API ------------------------------------------------------------- */

static CUptiResult set_kind(CUpti_ActivityKind kind, uint8_t on)
{
	if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	CUptiResult r = fc_cupti_attach();
	if (r != CUPTI_SUCCESS)
		return r;
	/* Kinds the simulator has no source for are accepted and stay empty.
	 * Enabling an enabled kind keeps its start; a new enable starts anew. */
	pthread_mutex_lock(&g_lock);
	if (on && !g_enabled[kind])
		__atomic_store_n(&g_since[kind], now_mono(), __ATOMIC_RELAXED);
	__atomic_store_n(&g_enabled[kind], on, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_lock);
	return CUPTI_SUCCESS;
}

/* FAKECUDA_CUPTI_REFUSE_DEVICE=1: DEVICE cannot be enabled (CUPTI_ERROR_NOT_COMPATIBLE, which
 * the header allows for a kind that cannot be enabled), so a test can make a client go
 * without device records. */
static int refused(CUpti_ActivityKind kind)
{
	const char *v = getenv("FAKECUDA_CUPTI_REFUSE_DEVICE");
	return kind == CUPTI_ACTIVITY_KIND_DEVICE && v && strcmp(v, "1") == 0;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if (refused(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	return set_kind(kind, 1);
}

/* Dumps the device records of an initialised driver (none before cuInit has finished: they
 * come then). Context, stream, NVLink and PCIe records are not simulated, so for those
 * kinds it is cuptiActivityEnable. */
CUPTI_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableAndDump(CUpti_ActivityKind kind)
{
	if (refused(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	CUptiResult r = set_kind(kind, 1);
	if (r == CUPTI_SUCCESS && kind == CUPTI_ACTIVITY_KIND_DEVICE)
		put_devices();
	return r;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 0);
}

CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
			       CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	if (!funcBufferRequested || !funcBufferCompleted)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&g_lock);
	g_request = funcBufferRequested;
	g_complete = funcBufferCompleted;
	pthread_mutex_unlock(&g_lock);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	pthread_mutex_lock(&g_lock);
	release_pending((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0);
	if (g_cur.used > 0)
		close_current();
	pthread_mutex_unlock(&g_lock);
	deliver_full();
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context,
								    uint32_t streamId,
								    size_t *dropped)
{
	(void)context, (void)streamId;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&g_lock);
	*dropped = g_dropped;
	g_dropped = 0; /* "since the last call to this function" */
	pthread_mutex_unlock(&g_lock);
	return CUPTI_SUCCESS;
}

/* cuptiFinalize: disable every kind, deliver everything held (forced), hand
 * back every buffer, the current one even if empty, and forget the client's
 * callbacks and counters, so a later attach starts from nothing. */
void fc_activity_finalize(void)
{
	pthread_mutex_lock(&g_lock);
	for (int k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		__atomic_store_n(&g_enabled[k], 0, __ATOMIC_RELAXED);
	release_pending(1);
	close_current(); /* even with nothing in it: the buffer is the client's */
	pthread_mutex_unlock(&g_lock);
	deliver_full();
	pthread_mutex_lock(&g_lock);
	g_request = NULL;
	g_complete = NULL;
	g_dropped = 0;
	pthread_mutex_unlock(&g_lock);
}

static size_t record_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	default:
		return 0;
	}
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer,
							     size_t validBufferSizeBytes,
							     CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off = 0;
	if (*record) {
		size_t sz = record_size(*record);
		if (sz == 0)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)((uint8_t *)*record - buffer) + ((sz + 7) & ~(size_t)7);
	}
	if (off + sizeof(CUpti_Activity) > validBufferSizeBytes)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)(void *)(buffer + off);
	return CUPTI_SUCCESS;
}
