/* Private interface between the fake libcuda.so.1 (which owns the simulated
 * device) and its two clients, the fake libcudart.so.13 and the fake
 * libcupti.so.13.
 *
 * Why: the real runtime and CUPTI talk to the driver through undocumented
 * export tables.  We need the same kind of side channel (the runtime must
 * report its own API calls so that CUPTI sees runtime records and nested
 * driver calls share a correlation id; CUPTI must receive the GPU work the
 * device executed), but a tracer test checks that every public exported name
 * is an NVIDIA one.  So libcuda exports exactly ONE extra symbol,
 * FAKECUDA_HOOKS_SYMBOL, a const struct of function pointers; clients obtain
 * it with dlsym().  Nothing else is exported that is not in NVIDIA's headers.
 *
 * This header must stay includable together with either cuda.h (internal
 * mode) or cupti.h, so it only uses plain C types. */
#ifndef FAKECUDA_HOOKS_H
#define FAKECUDA_HOOKS_H

#include <stdint.h>

#define FAKECUDA_HOOKS_SYMBOL  "fakecuda_internal_hooks"
#define FAKECUDA_HOOKS_VERSION 2u

/* Values deliberately equal CUPTI_CB_DOMAIN_DRIVER_API / _RUNTIME_API. */
enum fc_domain { FC_DOMAIN_DRIVER = 1, FC_DOMAIN_RUNTIME = 2 };

/* One API invocation as seen by the tracer (CUPTI). */
struct fc_api_call {
	int domain;		   /* enum fc_domain */
	uint32_t cbid;		   /* CUPTI_{DRIVER,RUNTIME}_TRACE_CBID_* */
	const char *name;	   /* e.g. "cuLaunchKernel" */
	const char *symbol;	   /* kernel name for launches, else NULL */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	uint32_t correlation_id;
	uint32_t thread_id; /* gettid() */
	int result;	    /* CUresult or cudaError_t (exit only) */
	void *context;	    /* CUcontext current at entry (may be NULL) */
	uint32_t context_id;
	uint64_t user_data;  /* CUpti_CallbackData::correlationData */
	uint32_t sink_flags; /* owned by the sink (e.g. "enter seen") */
};

enum fc_work_kind {
	FC_WORK_KERNEL = 1,
	FC_WORK_MEMCPY,
	FC_WORK_MEMSET,
	FC_WORK_SYNC,
};

/* Memory kinds: values equal CUpti_ActivityMemoryKind. */
enum fc_mem_kind {
	FC_MEM_UNKNOWN = 0,
	FC_MEM_PAGEABLE = 1,
	FC_MEM_PINNED = 2,
	FC_MEM_DEVICE = 3,
	FC_MEM_MANAGED = 6,
};

/* Copy kinds: values equal CUpti_ActivityMemcpyKind. */
enum fc_copy_kind {
	FC_COPY_UNKNOWN = 0,
	FC_COPY_HTOD = 1,
	FC_COPY_DTOH = 2,
	FC_COPY_DTOD = 8,
	FC_COPY_HTOH = 9,
};

/* Sync kinds: values equal CUpti_ActivitySynchronizationType. */
enum fc_sync_kind {
	FC_SYNC_EVENT = 1,
	FC_SYNC_STREAM_WAIT_EVENT = 2,
	FC_SYNC_STREAM = 3,
	FC_SYNC_CONTEXT = 4,
};

/* One piece of work the simulated device executed (or a host sync). All
 * times are CLOCK_MONOTONIC ns; strings live until the process exits. */
struct fc_work {
	int kind; /* enum fc_work_kind */
	uint64_t queued_ns, start_ns, end_ns;
	uint32_t device_id, context_id, stream_id, correlation_id;
	/* kernels */
	const char *name;
	int32_t grid[3], block[3];
	int32_t dynamic_shared;
	/* memcpy / memset */
	uint64_t bytes;
	int copy_kind, src_kind, dst_kind, async;
	uint32_t memset_value;
	/* sync */
	int sync_kind;
	uint32_t event_id;
};

/* Installed by CUPTI; every callback is invoked without any driver lock held,
 * on the thread that made the API call. */
struct fc_sink {
	void (*api_enter)(void *ud, struct fc_api_call *call);
	void (*api_exit)(void *ud, struct fc_api_call *call);
	void (*work)(void *ud, const struct fc_work *work);
	void *ud;
	/* cuInit finished initialising the driver (CUPTI emits its device records then); on
	 * the thread that called cuInit, after the injection's InitializeInjection returned */
	void (*initialized)(void *ud);
};

/* Per-call bookkeeping the runtime keeps on its stack between begin/end. */
struct fc_api_frame {
	struct fc_api_call call;
	int outermost;
};

struct fakecuda_hooks {
	uint32_t version;
	/* CUPTI: install (or remove with NULL) the single sink. Returns 0. */
	int (*set_sink)(const struct fc_sink *sink);
	/* Runtime: report an API call.  The outermost call on a thread allocates
	 * the correlation id; nested driver calls share it. */
	void (*api_begin)(struct fc_api_frame *f, int domain, uint32_t cbid, const char *name,
			  const char *symbol);
	void (*api_end)(struct fc_api_frame *f, int result);
	uint64_t (*now_ns)(void);
	/* What cuDeviceGetCount, cuDeviceGetName, cuDeviceTotalMem, cuDeviceGetUuid and
	 * cuDeviceGetAttribute report, without being API calls (CUPTI's device records must not
	 * add driver calls to the trace). device_count is 0 until cuInit has finished; the others
	 * return a CUresult. `attrib` is a CUdevice_attribute. */
	int (*device_count)(void);
	int (*device_name)(char *name, int len, int ordinal);
	int (*device_total_mem)(uint64_t *bytes, int ordinal);
	int (*device_uuid)(uint8_t uuid[16], int ordinal);
	int (*device_attribute)(int *value, int attrib, int ordinal);
};

#endif
