/* Internal declarations of the fake CUDA driver (libcuda.so.1).
 * Every .c file of the driver includes this first.  We compile in NVIDIA's
 * "internal" header mode so that cuda.h declares every versioned entry point
 * (cuMemAlloc_v2, cuLaunchKernel_ptsz, ...) under its real name and the
 * compiler checks our definitions against NVIDIA's prototypes. */
#ifndef FAKECUDA_DRV_H
#define FAKECUDA_DRV_H

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cupti_driver_cbid.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "../fc_hooks.h"

#define FC_EXPORT	  __attribute__((visibility("default")))
#define FC_DRIVER_VERSION 13000

/* ---- clock (drv_clock.c) ---------------------------------------------- */
uint64_t fc_now_ns(void);
void fc_sleep_until(uint64_t t_ns);
uint64_t fc_env_u64(const char *name, uint64_t dflt);

/* ---- API tracing / correlation (drv_trace.c) --------------------------- */
void fc_api_begin(struct fc_api_frame *f, int domain, uint32_t cbid, const char *name,
		  const char *symbol);
void fc_api_end(struct fc_api_frame *f, int result);
uint32_t fc_current_correlation(void);
void fc_emit_work(const struct fc_work *w);
extern const struct fakecuda_hooks fakecuda_internal_hooks;

/* Wrap a public driver entry point: the frame reports enter/exit to CUPTI. */
#define FC_API(fn)                                                                                 \
	struct fc_api_frame fc_frame_;                                                             \
	fc_api_begin(&fc_frame_, FC_DOMAIN_DRIVER, CUPTI_DRIVER_TRACE_CBID_##fn, #fn, NULL)
#define FC_API_SYM(fn, sym)                                                                        \
	struct fc_api_frame fc_frame_;                                                             \
	fc_api_begin(&fc_frame_, FC_DOMAIN_DRIVER, CUPTI_DRIVER_TRACE_CBID_##fn, #fn, (sym))
#define FC_RETURN(expr)                                                                            \
	do {                                                                                       \
		CUresult fc_r_ = (expr);                                                           \
		fc_api_end(&fc_frame_, (int)fc_r_);                                                \
		return fc_r_;                                                                      \
	} while (0)

/* ---- init, devices, contexts (drv_context.c) -------------------------- */
struct CUctx_st {
	uint32_t id;
	int primary;
	unsigned int flags;
	int valid;
	struct CUstream_st *legacy; /* the NULL stream of this context */
	uint64_t tail_ns;	    /* completion time of all its work */
	struct CUctx_st *next;
};

int fc_initialized(void);
void fc_emit_initialized(void); /* drv_trace.c: tells the sink cuInit has finished */
/* The device queries behind the public cuDevice* calls, for the hooks (fc_hooks.h). */
int fc_device_count(void);
int fc_device_name(char *name, int len, int ordinal);
int fc_device_total_mem(uint64_t *bytes, int ordinal);
int fc_device_uuid(uint8_t uuid[16], int ordinal);
int fc_device_attribute(int *value, int attrib, int ordinal);
/* Current context, or NULL. */
struct CUctx_st *fc_ctx_current(void);
/* Checks init + current context; returns CUDA_SUCCESS and *out. */
CUresult fc_ctx_require(struct CUctx_st **out);
int fc_ctx_is_live(struct CUctx_st *c);

/* ---- device lock + timeline, streams, events (drv_timeline.c) --------- */
void fc_lock(void);
void fc_unlock(void);

struct CUstream_st {
	uint32_t id;
	unsigned int flags; /* CU_STREAM_NON_BLOCKING or default */
	int is_legacy, is_per_thread;
	struct CUctx_st *ctx;
	uint64_t tail_ns;	  /* completion time of its last work */
	struct CUstream_st *next; /* list of live streams */
};

struct CUevent_st {
	uint32_t id;
	unsigned int flags;
	int recorded;
	uint64_t ts_ns; /* completion time of the recorded work */
	struct CUevent_st *next;
};

/* Resolve a user handle (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or a
 * created stream).  ptsz: NULL means the per-thread stream.  Lock held. */
CUresult fc_stream_resolve(struct CUctx_st *ctx, CUstream h, int ptsz, struct CUstream_st **out);
CUresult fc_stream_create(struct CUctx_st *ctx, unsigned int flags, struct CUstream_st **out);
CUresult fc_stream_destroy(struct CUstream_st *s);
void fc_streams_drop_ctx(struct CUctx_st *ctx);
struct CUstream_st *fc_legacy_stream_new(struct CUctx_st *ctx);
/* Put `duration` ns of work on stream s; fills start/end.  Lock held. */
void fc_timeline_enqueue(struct CUstream_st *s, uint64_t duration, uint64_t *start, uint64_t *end);
uint64_t fc_ctx_tail(struct CUctx_st *ctx);		 /* lock held */
uint64_t fc_stream_done_ns(const struct CUstream_st *s); /* lock held */
int fc_event_is_live(struct CUevent_st *e);		 /* lock held */
struct CUevent_st *fc_event_new(unsigned int flags);
void fc_event_free(struct CUevent_st *e);

/* ---- timing model (drv_timing.c) -------------------------------------- */
uint64_t fc_kernel_duration_ns(const char *name);
uint64_t fc_copy_duration_ns(int copy_kind, uint64_t bytes);
uint64_t fc_memset_duration_ns(uint64_t bytes);

/* ---- memory (drv_memory.c) -------------------------------------------- */
CUresult fc_mem_alloc(size_t bytes, int kind, void **out);
CUresult fc_mem_free(void *p, int kind);
/* Kind of the allocation containing [p, p+len) or FC_MEM_PAGEABLE when p is
 * not a tracked allocation; FC_MEM_UNKNOWN when p is inside one but the
 * range overruns it. */
int fc_mem_classify(const void *p, size_t len);

/* ---- modules, libraries, functions (drv_module.c) --------------------- */
struct CUfunc_st {
	const char *name; /* interned, never freed */
	struct CUmod_st *mod;
	struct CUfunc_st *next;
};
struct CUmod_st {
	const void *image;
	size_t image_size;
	struct CUfunc_st *funcs;
	int valid;
};
struct CUkern_st {
	const char *name;
	struct CUlib_st *lib;
	struct CUfunc_st *func; /* created on first use */
	struct CUkern_st *next;
};
struct CUlib_st {
	struct CUmod_st mod;
	struct CUkern_st *kernels;
	int valid;
};
const char *fc_intern(const char *s);
CUresult fc_module_load(const void *image, struct CUmod_st **out);
CUresult fc_module_unload(struct CUmod_st *m);
CUresult fc_module_get_function(struct CUmod_st *m, const char *name, struct CUfunc_st **out);
CUresult fc_library_load(const void *image, struct CUlib_st **out);
CUresult fc_library_unload(struct CUlib_st *l);
CUresult fc_library_get_kernel(struct CUlib_st *l, const char *name, struct CUkern_st **out);
CUresult fc_kernel_get_function(struct CUkern_st *k, struct CUfunc_st **out);
/* Accepts a CUfunction or a CUkernel cast to CUfunction, as the driver does. */
struct CUfunc_st *fc_function_from_handle(void *h);

/* ---- work submission (drv_submit.c) ----------------------------------- */
struct fc_launch {
	struct CUfunc_st *func;
	unsigned int grid[3], block[3];
	unsigned int shared;
};
CUresult fc_submit_kernel(CUstream h, int ptsz, const struct fc_launch *l);
CUresult fc_submit_copy(CUstream h, int ptsz, void *dst, const void *src, size_t bytes,
			int expect_dst, int expect_src, int async);
CUresult fc_submit_memset(CUstream h, int ptsz, void *dst, unsigned int value, size_t elem_size,
			  size_t count, int async);
CUresult fc_sync_ctx(void);
CUresult fc_sync_stream(CUstream h, int ptsz);
CUresult fc_query_stream(CUstream h, int ptsz);
CUresult fc_event_record(struct CUevent_st *e, CUstream h, int ptsz);
CUresult fc_event_sync(struct CUevent_st *e);
CUresult fc_stream_wait_event(CUstream h, int ptsz, struct CUevent_st *e);

/* ---- cuGetProcAddress table (drv_procaddr.c) -------------------------- */
CUresult fc_proc_lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
			CUdriverProcAddressQueryResult *st);

#endif
