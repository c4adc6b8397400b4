/* API tracing and correlation ids.
 *
 * Correlation model (documented in docs/FAKECUDA.md): the OUTERMOST API call
 * on a thread, runtime or driver, allocates a new correlation id; driver
 * calls made by the runtime inside it share that id, and so does the GPU work
 * they enqueue.  Thus a cudaLaunchKernel record, the cuLaunchKernel record
 * nested in it and the kernel record all carry the same id. */
#include "drv.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint32_t g_next_correlation = 1;
static _Thread_local int t_depth;
static _Thread_local uint32_t t_correlation;
/* The thread's id, asked of the kernel once: NVIDIA's libraries make no syscall per API call,
 * and a gettid() on every one would make the simulator's launches look costlier to trace than
 * real ones under a tracer that counts syscalls (gpuspy's live views, bench/live_bench.sh). */
static _Thread_local uint32_t t_tid;

/* a forked child's only thread is not the one that forked */
static void forget_tid(void)
{
	t_tid = 0;
}

__attribute__((constructor)) static void tid_cache_init(void)
{
	pthread_atfork(NULL, NULL, forget_tid);
}

static uint32_t current_tid(void)
{
	if (!t_tid)
		t_tid = (uint32_t)syscall(SYS_gettid);
	return t_tid;
}

static struct fc_sink g_sink_storage;
static _Atomic(const struct fc_sink *) g_sink;

static int hooks_set_sink(const struct fc_sink *sink)
{
	if (!sink) {
		atomic_store(&g_sink, NULL);
		return 0;
	}
	g_sink_storage = *sink;
	atomic_store(&g_sink, &g_sink_storage);
	return 0;
}

void fc_api_begin(struct fc_api_frame *f, int domain, uint32_t cbid, const char *name,
		  const char *symbol)
{
	memset(f, 0, sizeof(*f));
	f->outermost = (t_depth == 0);
	if (f->outermost)
		t_correlation = atomic_fetch_add(&g_next_correlation, 1);
	t_depth++;
	struct CUctx_st *ctx = fc_ctx_current();
	f->call.domain = domain;
	f->call.cbid = cbid;
	f->call.name = name;
	f->call.symbol = symbol;
	f->call.correlation_id = t_correlation;
	f->call.thread_id = current_tid();
	f->call.context = ctx;
	f->call.context_id = ctx ? ctx->id : 0;
	f->call.start_ns = fc_now_ns();
	const struct fc_sink *s = atomic_load(&g_sink);
	if (s && s->api_enter)
		s->api_enter(s->ud, &f->call);
}

void fc_api_end(struct fc_api_frame *f, int result)
{
	f->call.end_ns = fc_now_ns();
	f->call.result = result;
	const struct fc_sink *s = atomic_load(&g_sink);
	if (s && s->api_exit)
		s->api_exit(s->ud, &f->call);
	t_depth--;
}

uint32_t fc_current_correlation(void)
{
	return t_depth > 0 ? t_correlation : 0;
}

void fc_emit_work(const struct fc_work *w)
{
	const struct fc_sink *s = atomic_load(&g_sink);
	if (s && s->work)
		s->work(s->ud, w);
}

void fc_emit_initialized(void)
{
	const struct fc_sink *s = atomic_load(&g_sink);
	if (s && s->initialized)
		s->initialized(s->ud);
}

/* The single non-NVIDIA symbol libcuda exports (see fc_hooks.h). */
FC_EXPORT const struct fakecuda_hooks fakecuda_internal_hooks = {
    .version = FAKECUDA_HOOKS_VERSION,
    .set_sink = hooks_set_sink,
    .api_begin = fc_api_begin,
    .api_end = fc_api_end,
    .now_ns = fc_now_ns,
    .device_count = fc_device_count,
    .device_name = fc_device_name,
    .device_total_mem = fc_device_total_mem,
    .device_uuid = fc_device_uuid,
    .device_attribute = fc_device_attribute,
};
