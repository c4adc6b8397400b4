/* Test CUPTI client for late attach and detach: loaded with dlopen by
 * tests/targets/cuda/late_cupti.cu after that program has initialised CUDA,
 * created its streams and launched work, as a tracer injected into a running
 * process would be.  Built against NVIDIA's headers only, linked to
 * libcupti.so.13.
 *
 * A session is lc_start() ... lc_disable() ... lc_finish() (forced flush and
 * unsubscribe) or lc_detach_on_exit() (forced flush and cuptiFinalize from
 * the exit callback of the next runtime API call, as cupti_activity.h
 * recommends); lc_report(LABEL) then prints what the session received and
 * forgets it:
 *   LABEL result subscribe=<r> register=<r> enable=<r> disable=<r> flush=<r> end=<r>
 *   LABEL count kernel=<n> memcpy=<n> memset=<n> runtime=<n> driver=<n> sync=<n> other=<n>
 *   LABEL kernel <name> <n>    (one line per kernel name; "kernel*" for
 *                              records of kind KERNEL, not CONCURRENT_KERNEL)
 *   LABEL runtime <name> <n>   (one line per runtime API function)
 *   LABEL driver <name> <n>    (one line per driver API function)
 *   LABEL outside=<n> orphans=<n> dropped=<n>
 * outside: API records that began before the first enable or ended after the
 * disable, and kernels queued outside that window (CUPTI clock); orphans: GPU
 * and sync records whose correlation id no API record of the session has. */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LC_EXPORT      __attribute__((visibility("default")))
#define LC_BUFFER_SIZE (1u << 20)
#define LC_MAX_NAMES   64
#define LC_MAX_IDS     4096

static const CUpti_ActivityKind g_kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,
    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_OVERHEAD,
};
#define LC_N_KINDS (sizeof(g_kinds) / sizeof(g_kinds[0]))

enum { C_KERNEL, C_MEMCPY, C_MEMSET, C_RUNTIME, C_DRIVER, C_SYNC, C_OTHER, C_COUNT };

struct name_count {
	char what[8];
	char name[128];
	unsigned n;
};

/* One session's state.  Buffers complete on whichever thread fills or
 * flushes them, so records are taken under g_lock. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	CUpti_SubscriberHandle sub;
	int r_subscribe, r_register, r_enable, r_disable, r_flush, r_end;
	uint64_t t_enable, t_disable;
	unsigned counts[C_COUNT];
	struct name_count names[LC_MAX_NAMES];
	size_t n_names;
	uint32_t api_ids[LC_MAX_IDS], gpu_ids[LC_MAX_IDS];
	size_t n_api, n_gpu;
	unsigned outside;
	size_t dropped;
	int detach_armed;
} g;

static void count_name(const char *what, const char *name)
{
	for (size_t i = 0; i < g.n_names; i++)
		if (!strcmp(g.names[i].what, what) && !strcmp(g.names[i].name, name)) {
			g.names[i].n++;
			return;
		}
	if (g.n_names == LC_MAX_NAMES)
		return;
	struct name_count *c = &g.names[g.n_names++];
	snprintf(c->what, sizeof(c->what), "%s", what);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->n = 1;
}

static void add_id(uint32_t *ids, size_t *n, uint32_t id)
{
	if (*n < LC_MAX_IDS)
		ids[(*n)++] = id;
}

static int in_window(uint64_t start, uint64_t end)
{
	return start >= g.t_enable && (!g.t_disable || end <= g.t_disable);
}

static void take_api(const CUpti_ActivityAPI *a)
{
	CUpti_CallbackDomain d = a->kind == CUPTI_ACTIVITY_KIND_DRIVER
				     ? CUPTI_CB_DOMAIN_DRIVER_API
				     : CUPTI_CB_DOMAIN_RUNTIME_API;
	const char *name = NULL;
	if (cuptiGetCallbackName(d, a->cbid, &name) != CUPTI_SUCCESS || !name)
		name = "?";
	g.counts[d == CUPTI_CB_DOMAIN_DRIVER_API ? C_DRIVER : C_RUNTIME]++;
	count_name(d == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime", name);
	add_id(g.api_ids, &g.n_api, a->correlationId);
	if (!in_window(a->start, a->end))
		g.outside++;
}

static void take(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
		g.counts[C_KERNEL]++;
		count_name(r->kind == CUPTI_ACTIVITY_KIND_KERNEL ? "kernel*" : "kernel",
			   k->name ? k->name : "?");
		add_id(g.gpu_ids, &g.n_gpu, k->correlationId);
		if (!in_window(k->queued, k->queued))
			g.outside++;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		g.counts[C_MEMCPY]++;
		add_id(g.gpu_ids, &g.n_gpu, ((const CUpti_ActivityMemcpy6 *)r)->correlationId);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		g.counts[C_MEMSET]++;
		add_id(g.gpu_ids, &g.n_gpu, ((const CUpti_ActivityMemset4 *)r)->correlationId);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		g.counts[C_SYNC]++;
		add_id(g.gpu_ids, &g.n_gpu,
		       ((const CUpti_ActivitySynchronization2 *)r)->correlationId);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		take_api((const CUpti_ActivityAPI *)r);
		break;
	default:
		g.counts[C_OTHER]++;
		break;
	}
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, LC_BUFFER_SIZE);
	*size = *buffer ? LC_BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;
	(void)size;
	pthread_mutex_lock(&g_lock);
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		take(rec);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		g.dropped += dropped;
	pthread_mutex_unlock(&g_lock);
	free(buffer);
}

/* Detach from the exit of a runtime API call, as cupti_activity.h shows. */
static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	const CUpti_CallbackData *cb = data;
	(void)ud, (void)cbid;
	if (!g.detach_armed || domain != CUPTI_CB_DOMAIN_RUNTIME_API ||
	    cb->callbackSite != CUPTI_API_EXIT)
		return;
	g.detach_armed = 0;
	g.r_flush = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	g.r_end = cuptiFinalize();
}

static uint64_t cupti_now(void)
{
	uint64_t t = 0;
	cuptiGetTimestamp(&t);
	return t;
}

LC_EXPORT int lc_start(void)
{
	g.r_subscribe = cuptiSubscribe(&g.sub, on_callback, NULL);
	if (g.r_subscribe != CUPTI_SUCCESS)
		return g.r_subscribe;
	g.r_register = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
	g.t_enable = cupti_now();
	for (size_t i = 0; i < LC_N_KINDS; i++) {
		CUptiResult r = cuptiActivityEnable(g_kinds[i]);
		if (r != CUPTI_SUCCESS && g.r_enable == CUPTI_SUCCESS)
			g.r_enable = r;
	}
	return g.r_register != CUPTI_SUCCESS ? g.r_register : g.r_enable;
}

LC_EXPORT int lc_disable(void)
{
	for (size_t i = 0; i < LC_N_KINDS; i++) {
		CUptiResult r = cuptiActivityDisable(g_kinds[i]);
		if (r != CUPTI_SUCCESS && g.r_disable == CUPTI_SUCCESS)
			g.r_disable = r;
	}
	g.t_disable = cupti_now();
	return g.r_disable;
}

LC_EXPORT int lc_finish(void)
{
	g.r_flush = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	g.r_end = cuptiUnsubscribe(g.sub);
	return g.r_flush != CUPTI_SUCCESS ? g.r_flush : g.r_end;
}

/* The next runtime API call's exit callback flushes and calls cuptiFinalize. */
LC_EXPORT int lc_detach_on_exit(void)
{
	g.r_end = -1; /* until the callback ran */
	g.detach_armed = 1;
	return cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_RUNTIME_API);
}

static int has_id(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return 1;
	return 0;
}

LC_EXPORT void lc_report(const char *label)
{
	unsigned orphans = 0;
	pthread_mutex_lock(&g_lock);
	for (size_t i = 0; i < g.n_gpu; i++)
		orphans += !has_id(g.api_ids, g.n_api, g.gpu_ids[i]);
	printf("%s result subscribe=%d register=%d enable=%d disable=%d flush=%d end=%d\n", label,
	       g.r_subscribe, g.r_register, g.r_enable, g.r_disable, g.r_flush, g.r_end);
	printf("%s count kernel=%u memcpy=%u memset=%u runtime=%u driver=%u sync=%u other=%u\n",
	       label, g.counts[C_KERNEL], g.counts[C_MEMCPY], g.counts[C_MEMSET],
	       g.counts[C_RUNTIME], g.counts[C_DRIVER], g.counts[C_SYNC], g.counts[C_OTHER]);
	for (size_t i = 0; i < g.n_names; i++)
		printf("%s %s %s %u\n", label, g.names[i].what, g.names[i].name, g.names[i].n);
	printf("%s outside=%u orphans=%u dropped=%zu\n", label, g.outside, orphans, g.dropped);
	fflush(stdout);
	memset(&g, 0, sizeof(g));
	pthread_mutex_unlock(&g_lock);
}
