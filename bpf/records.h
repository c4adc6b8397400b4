/* SPDX-License-Identifier: MIT */
/*
 * Records shared by the BPF programs, the loader and the trace file.
 *
 * Every record starts with struct gs_hdr, whose `size` covers the whole record, so a reader can
 * skip types it does not know: new capabilities (CUDA API calls, GPU activity, Python stacks)
 * are new types, never a change to an existing layout. Layouts are fixed-width and 8-byte
 * aligned so the bytes the kernel writes into the ring buffer go to the trace file unchanged.
 * This header must stay includable from BPF code: fixed-width kernel types only.
 */
#ifndef GPUSPY_RECORDS_H
#define GPUSPY_RECORDS_H

#ifdef __BPF__
/* vmlinux.h already provides __u8 .. __s64 */
#else
#include <linux/types.h>
#endif

#define GS_COMM_LEN	16
#define GS_FILENAME_LEN 96
#define GS_FORK_THREAD	1 /* gs_fork.hdr.flags: a new thread, not a new process */
#define GS_EXIT_GROUP	1 /* gs_exit.hdr.flags: the last thread of the process exited */
#define GS_SYSCALL_ARGS 3
#define GS_PATH_MAX	256 /* open() paths as BPF copies them */
/* The kernel's PID_MAX_LIMIT on 64-bit: pids are below it, so a bit per pid fits in
 * GS_PID_WORDS 64-bit words (512 KiB) */
#define GS_PID_LIMIT (4 * 1024 * 1024)
#define GS_PID_WORDS (GS_PID_LIMIT / 64)

/* Histogram of durations: GS_HIST_SUB buckets per power of two, from 2^GS_HIST_MIN_SHIFT ns. */
#define GS_HIST_SUB_SHIFT 2
#define GS_HIST_SUB	  (1 << GS_HIST_SUB_SHIFT)
#define GS_HIST_MIN_SHIFT 6
#define GS_HIST_OCTAVES	  34
#define GS_HIST_BUCKETS	  (GS_HIST_OCTAVES * GS_HIST_SUB)

enum gs_record_type {
	/* emitted by BPF programs */
	GS_REC_SYSCALL = 1,
	GS_REC_OFFCPU = 2,
	GS_REC_FORK = 3,
	GS_REC_EXEC = 4,
	GS_REC_EXIT = 5,
	GS_REC_COMM = 6, /* a thread's name: at rename (BPF) or from /proc at attach (loader) */
	GS_REC_CUDA_CALL = 7, /* a CUDA runtime or driver API call, at its return */
	GS_REC_CUDA_NAME = 8, /* a kernel handle bound to its (mangled) name; BPF or the loader */
	GS_REC_LIBS_CHANGED = 9, /* ld.so finished mapping objects; the process is being stopped */
	GS_REC_GPU_BATCH = 10,	 /* the CUPTI bridge's records, as it batched them; unpacked */
	GS_REC_PY_STACK = 11,	 /* a thread's Python stack over an interval, or a CPU sample */
	GS_REC_OP_CALL = 12,	 /* a PyTorch operator call (at::_ops::<op>::call), at its return */
	GS_REC_OP_UNWIND = 13,	 /* BPF to loader only: a C++ exception is about to unwind a
				  * stack with return probes pending; the process is being stopped */
	GS_REC_SYSCALL_FINAL = 14, /* BPF to loader only: an exiting thread's statistics of one
				    * syscall, removed from the map; written as SYSCALL_STATS */
	/* written by the CUPTI bridge (cupti_bridge/) inside GS_REC_GPU_BATCH records */
	GS_REC_GPU_KERNEL = 20,
	GS_REC_GPU_MEMCPY = 21,
	GS_REC_GPU_MEMSET = 22,
	GS_REC_GPU_API = 23, /* CUPTI's own record of a runtime/driver call: the correlation key */
	GS_REC_GPU_SYNC = 24,
	GS_REC_NVTX = 25,
	GS_REC_GPU_CLOCK = 26, /* CUPTI clock -> CLOCK_MONOTONIC calibration */
	GS_REC_BRIDGE_STATUS = 27,
	GS_REC_GPU_OVERHEAD = 28,
	/* written by the in-process operator observer (libgpuspy_torch.so), in GS_REC_GPU_BATCH */
	GS_REC_TORCH_OP = 29,	/* a RecordFunction's start or end */
	GS_REC_TORCH_NAME = 30, /* an observer name id and its text */
	/* written by the CUPTI bridge, in GS_REC_GPU_BATCH */
	GS_REC_GPU_DEVICE = 31, /* a GPU's properties, from CUPTI's device record */
	/* written by the loader */
	GS_REC_TRACE_INFO = 100,
	GS_REC_FD_NAME = 101, /* BPF at open(), or the loader from /proc */
	GS_REC_SYSCALL_STATS = 102,
	GS_REC_OFFCPU_STATS = 103,
	GS_REC_LOSS = 104,
	GS_REC_TRAILER = 105,
	GS_REC_CUDA_LIB = 106,	/* a CUDA library found mapped in a process, and what was probed */
	GS_REC_GPU_LOSS = 107,	/* GPU records lost on gpuspy's side, cumulative */
	GS_REC_PY_PROC = 108,	/* a Python interpreter found in a process: traced, or why not */
	GS_REC_PY_CODE = 109,	/* a code object's names and line table, read at capture time */
	GS_REC_OP_NAME = 110,	/* an operator index (GS_REC_OP_CALL.op) and its name */
	GS_REC_LOSS_MORE = 111, /* loss kinds GS_LOSS_SLOTS and up, cumulative like GS_REC_LOSS */
	GS_REC_BRIDGE_LOAD = 112, /* how the CUPTI bridge came to be in a process, or why not */
	GS_REC_PROC_INFO = 113,	  /* who a process runs as and its cgroup: the loader, from /proc */
	GS_REC_PROC_ENV = 114, /* a process's rank in a distributed job: the loader, from /proc */
};

enum gs_offcpu_reason {
	GS_OFFCPU_PREEMPTED = 0, /* runnable but descheduled */
	GS_OFFCPU_SLEEPING = 1,	 /* TASK_INTERRUPTIBLE: waiting on futex, poll, pipe, ... */
	GS_OFFCPU_BLOCKED = 2,	 /* TASK_UNINTERRUPTIBLE: usually disk I/O or page faults */
	GS_OFFCPU_NREASONS = 3,
};

/* Sources of loss; each is counted where it happens and written into the trace. */
enum gs_loss_kind {
	GS_LOSS_RINGBUF_SYSCALL = 0,
	GS_LOSS_RINGBUF_OFFCPU = 1,
	GS_LOSS_RINGBUF_PROC = 2,
	GS_LOSS_STATS_MAP_FULL = 3,
	GS_LOSS_TRACED_MAP_FULL = 4,
	GS_LOSS_RINGBUF_FD_NAME = 5,
	GS_LOSS_CUDA_CALL = 6,	   /* ring buffer full, or calls nested deeper than tracked */
	GS_LOSS_LIBS_NOT_HELD = 7, /* ring buffer or cuda_opened full: a dlopen ran on unprobed */
	/* the following ones travel in GS_REC_LOSS_MORE */
	GS_LOSS_PY_STACK = 8,  /* Python stacks not captured: ring buffer (or py_procs) full */
	GS_LOSS_PY_SAMPLE = 9, /* CPU samples not recorded: ring buffer full */
	GS_LOSS_OP_CALL = 10,  /* operator calls: ring buffer full, or nested deeper than tracked */
	GS_LOSS_NKINDS = 11,
};

struct gs_hdr {
	__u16 type;
	__u16 size;
	__u32 pid; /* process (tgid) */
	__u32 tid;
	__u32 flags;
	__u64 ts; /* CLOCK_MONOTONIC ns; the start for span records */
};

/* A syscall longer than the span threshold. */
struct gs_syscall {
	struct gs_hdr hdr;
	__u64 dur_ns;
	__s64 ret;
	__u64 args[GS_SYSCALL_ARGS];
	__u64 fd_ino; /* inode behind args[0] when it is an fd, 0 otherwise */
	__u32 nr;
	__u32 pad;
};

struct gs_offcpu {
	struct gs_hdr hdr;
	__u64 dur_ns;
	__u32 reason; /* enum gs_offcpu_reason */
	__u32 pad;
};

struct gs_fork {
	struct gs_hdr hdr; /* pid/tid: the parent */
	__u32 child_pid;
	__u32 child_tid;
	char comm[GS_COMM_LEN];
};

struct gs_exec {
	struct gs_hdr hdr;
	char comm[GS_COMM_LEN];
	char filename[GS_FILENAME_LEN];
};

struct gs_exit {
	struct gs_hdr hdr;
	__s32 exit_code; /* wait(2) status; meaningful when tid == pid */
	__u32 pad;
	char comm[GS_COMM_LEN];
};

struct gs_comm {
	struct gs_hdr hdr;
	char comm[GS_COMM_LEN];
};

/* GS_REC_FD_NAME: what an fd of a process refers to. BPF writes one at every successful
 * open (the path as the program passed it, in a fixed GS_PATH_MAX buffer); the loader
 * completes relative paths and compacts the record, or writes one from /proc/PID/fd for fds
 * that were open before the recording. */
struct gs_fd_name {
	struct gs_hdr hdr; /* pid, tid */
	__u64 ino;
	__u32 fd;
	__s32 dirfd; /* the open's dirfd, for a relative path; -100 is AT_FDCWD */
	char name[]; /* NUL-terminated */
};

/* Values of the per-(process, thread, syscall) statistics map: exact for every call. */
struct gs_syscall_stats_key {
	__u32 pid;
	__u32 tid;
	__u32 nr;
	__u32 pad;
};

/* Exact sums over a set of durations; shared by the BPF map value and the trace record. */
struct gs_duration_sums {
	__u64 count;
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	/* sum of squared durations as a 128-bit number, for an exact standard deviation */
	__u64 sumsq_lo;
	__u64 sumsq_hi;
};

struct gs_syscall_stats_val {
	struct gs_duration_sums sums;
	__u32 hist[GS_HIST_BUCKETS];
};

/* hdr.flags of GS_REC_SYSCALL_STATS and GS_REC_OFFCPU_STATS: the thread exited; these are its
 * final totals and its key left the BPF map (a later record for the same key is a new thread
 * that reused the tid). Without it a record is a cumulative checkpoint. */
#define GS_STATS_FINAL 1

/* GS_REC_SYSCALL_FINAL: hdr.pid/tid/ts (exit time) and the map's key and value. */
struct gs_syscall_final {
	struct gs_hdr hdr;
	__u32 nr;
	__u32 pad;
	struct gs_syscall_stats_val val;
};

struct gs_offcpu_stats_key {
	__u32 pid;
	__u32 tid;
};

struct gs_offcpu_stats_val {
	__u64 ns[GS_OFFCPU_NREASONS];
	__u64 count[GS_OFFCPU_NREASONS];
};

/* An exiting thread's off-CPU totals as BPF writes them: a GS_REC_OFFCPU_STATS record with
 * GS_STATS_FINAL (the layout of trace_format.h's struct gs_offcpu_stats). */
struct gs_offcpu_final {
	struct gs_hdr hdr;
	struct gs_offcpu_stats_val val;
};

/* One traced thread's CPU time from the task iterator (sched.bpf.c's task_cputime): not a ring
 * buffer record, so no header. `exited_threads_ns` is its process's exited threads' total. */
struct gs_task_cputime {
	__u32 tgid;
	__u32 tid;
	__u64 run_ns;
	__u64 exited_threads_ns;
};

/* CUDA API calls. Each probed function has an index in output/trace/cuda_probe_list.h; the loader
 * passes it to BPF in the uprobe's cookie together with what BPF must capture for it. */
#define GS_CUDA_ARGS	     9	 /* rdi rsi rdx rcx r8 r9, then three stack words */
#define GS_CUDA_MAX_DEPTH    8	 /* nested calls tracked per thread */
#define GS_KERNEL_NAME_MAX   512 /* mangled names as BPF copies them */
#define GS_CUDA_COOKIE_SHIFT 16	 /* cookie = probe index | capture flags << 16 */
enum gs_cuda_capture {
	GS_CUDA_CAP_STACK = 1,	    /* args[6..8] = the three stack arguments after the return */
	GS_CUDA_CAP_CONFIG = 2,	    /* args[4..8] = the CUlaunchConfig at args[0] (40 bytes) */
	GS_CUDA_CAP_OUT = 4,	    /* `out` = *(u64 *)args[0] after a successful call */
	GS_CUDA_CAP_NAME = 8,	    /* a CUDA_NAME record: the string at args[2] names `out` */
	GS_CUDA_CAP_NAME_ARG1 = 16, /* ... names args[1] instead, whatever the call returned */
	GS_CUDA_CAP_RUNTIME = 32,   /* a libcudart function (else libcuda) */
};
#define GS_CUDA_NESTED	 1	/* gs_cuda_call.hdr.flags: inside another probed call */
#define GS_CUDA_NAME_ELF 0xffff /* gs_cuda_name.probe: named from the ELF symbol table */

struct gs_cuda_call {
	struct gs_hdr hdr; /* ts: entry */
	__u64 dur_ns;
	__s64 ret; /* cudaError_t / CUresult as returned (rax) */
	__u64 args[GS_CUDA_ARGS];
	__u64 out;   /* see GS_CUDA_CAP_OUT */
	__u16 probe; /* index in output/trace/cuda_probe_list.h */
	__u16 depth; /* probed calls around this one on the thread */
	__u32 pad;
};

/* GS_REC_CUDA_NAME: kernel handle -> mangled name in process hdr.pid. BPF writes a fixed
 * GS_KERNEL_NAME_MAX buffer; the loader compacts it. */
struct gs_cuda_name {
	struct gs_hdr hdr;
	__u64 handle; /* host stub, CUfunction or CUkernel */
	__u32 probe;  /* the naming call's probe index, or GS_CUDA_NAME_ELF */
	__u32 pad;
	char name[]; /* NUL-terminated */
};

/*
 * GPU activity from the CUPTI bridge. The bridge converts CUPTI's records into these, with
 * every timestamp already on CLOCK_MONOTONIC (its calibration is in GS_REC_GPU_CLOCK), and
 * hands them over in batches: a GS_REC_GPU_BATCH record whose payload is whole records, at
 * most GS_GPU_BATCH_MAX bytes in all, one USDT probe firing per batch (gpuspy:records, whose
 * semaphore is also the bridge's "a recorder is attached" gate). BPF copies a batch into the
 * ring buffer as it is and sets its pid/tid; the loader stores the records it contains with
 * that pid (the bridge's own getpid() may be a container's).
 */
#define GS_GPU_BATCH_MAX 16384
#define GS_GPU_NAME_MAX	 1024 /* kernel and NVTX names, NUL included, cut beyond */

/* seq's top byte: the library that sent the batch, each numbering its own from 1 */
#define GS_GPU_BATCH_STREAM_SHIFT  56
#define GS_GPU_BATCH_STREAM_BRIDGE 0 /* the CUPTI bridge */
#define GS_GPU_BATCH_STREAM_TORCH  1 /* the PyTorch operator observer */

struct gs_gpu_batch {
	struct gs_hdr hdr; /* flags: number of records in the payload */
	__u64 seq;	   /* per process and stream, from 1: a gap means batches were lost */
	unsigned char records[];
};

struct gs_gpu_kernel {
	struct gs_hdr hdr; /* tid 0; ts: start */
	__u64 dur_ns;
	__u32 correlation;
	__u32 device;
	__u32 context;
	__u32 stream;
	__u32 grid[3];
	__u32 block[3];
	__u32 registers; /* per thread */
	__u32 static_smem;
	__u32 dynamic_smem;
	__u32 graph_id; /* 0: not from a graph */
	__u64 graph_node_id;
	char name[]; /* mangled, NUL-terminated */
};

enum gs_gpu_copy_kind { /* CUpti_ActivityMemcpyKind's values */
			GS_GPU_COPY_UNKNOWN = 0,
			GS_GPU_COPY_HTOD = 1,
			GS_GPU_COPY_DTOH = 2,
			GS_GPU_COPY_HTOA = 3,
			GS_GPU_COPY_ATOH = 4,
			GS_GPU_COPY_ATOA = 5,
			GS_GPU_COPY_ATOD = 6,
			GS_GPU_COPY_DTOA = 7,
			GS_GPU_COPY_DTOD = 8,
			GS_GPU_COPY_HTOH = 9,
			GS_GPU_COPY_PTOP = 10,
};

struct gs_gpu_memcpy {
	struct gs_hdr hdr; /* tid 0; ts: start */
	__u64 dur_ns;
	__u32 correlation;
	__u32 device;
	__u32 context;
	__u32 stream;
	__u64 bytes;
	__u32 copy_kind; /* enum gs_gpu_copy_kind */
	__u32 src_kind;	 /* CUpti_ActivityMemoryKind */
	__u32 dst_kind;
	__u32 graph_id;
	__u64 graph_node_id;
};

struct gs_gpu_memset {
	struct gs_hdr hdr; /* tid 0; ts: start */
	__u64 dur_ns;
	__u32 correlation;
	__u32 device;
	__u32 context;
	__u32 stream;
	__u64 bytes;
	__u32 value;
	__u32 mem_kind; /* CUpti_ActivityMemoryKind */
	__u32 graph_id;
	__u32 pad;
	__u64 graph_node_id;
};

enum gs_gpu_api_kind {
	GS_GPU_API_RUNTIME = 1,
	GS_GPU_API_DRIVER = 2,
};

/* CUPTI's record of an API call, the link between a GPU record (same correlation id) and the
 * uprobe span of the call (same thread, same time). */
struct gs_gpu_api {
	struct gs_hdr hdr; /* tid: CUPTI's threadId; ts: start */
	__u64 dur_ns;
	__u32 correlation;
	__u32 cbid;
	__u32 kind; /* enum gs_gpu_api_kind */
	__s32 ret;
	char name[]; /* cuptiGetCallbackName(), e.g. "cudaMalloc_v3020" */
};

struct gs_gpu_sync {
	struct gs_hdr hdr; /* tid 0; ts: start */
	__u64 dur_ns;
	__u32 correlation;
	__u32 type; /* CUpti_ActivitySynchronizationType */
	__u32 context;
	__u32 stream; /* CUPTI_SYNCHRONIZATION_INVALID_VALUE when none */
	__u32 event;
	__u32 pad;
};

enum gs_nvtx_kind {
	GS_NVTX_PUSH_POP = 1,  /* nvtxRangePush / nvtxRangePop: nested per thread */
	GS_NVTX_START_END = 2, /* nvtxRangeStart / nvtxRangeEnd: may cross threads */
	GS_NVTX_MARK = 3,      /* an instant: dur_ns 0 */
};

struct gs_nvtx {
	struct gs_hdr hdr; /* tid: the thread that pushed or started it; ts: start */
	__u64 dur_ns;
	__u32 kind;  /* enum gs_nvtx_kind */
	__u32 depth; /* push/pop nesting depth when pushed, from 0 */
	__u64 id;    /* start/end range id; 0 otherwise */
	char name[]; /* NUL-terminated, "" when the range had no message */
};

/* mono = cupti_ts + offset_ns, within +-error_ns: the tightest of `samples` (monotonic,
 * cuptiGetTimestamp, monotonic) triples; repeated while recording, to follow drift. */
struct gs_gpu_clock {
	struct gs_hdr hdr; /* ts: CLOCK_MONOTONIC when calibrated */
	__s64 offset_ns;
	__u64 error_ns;
	__u32 samples;
	__u32 pad;
};

enum gs_bridge_state {
	GS_BRIDGE_ACTIVE = 1,	   /* CUPTI subscribed, activities enabled */
	GS_BRIDGE_INACTIVE = 2,	   /* flushed and disabled: no recorder attached any more */
	GS_BRIDGE_CUPTI_BUSY = 3,  /* another CUPTI subscriber (torch.profiler, nsys, DCGM) */
	GS_BRIDGE_CUPTI_ERROR = 4, /* a CUPTI call failed: see cupti_result and the message */
	GS_BRIDGE_FLUSHED = 5,	   /* a flush gpuspy asked for is complete (all batches out) */
};

struct gs_bridge_status {
	struct gs_hdr hdr;
	__u32 state;	    /* enum gs_bridge_state */
	__s32 cupti_result; /* CUptiResult of the failing call, 0 otherwise */
	__u64 dropped;	    /* CUPTI's dropped records so far (cuptiActivityGetNumDroppedRecords) */
	__u64 lost;	    /* records the bridge itself could not batch (out of memory) */
	char message[];	    /* NUL-terminated, human-readable */
};

struct gs_gpu_overhead {
	struct gs_hdr hdr; /* ts: start */
	__u64 dur_ns;
	__u32 kind;	   /* CUpti_ActivityOverheadKind */
	__u32 object_kind; /* CUpti_ActivityObjectKind */
};

/*
 * PyTorch operators seen from inside the process: gpuspy's observer (cupti_bridge/torch_ops.c,
 * docs/TORCH_OBSERVER.md) registers a global at::RecordFunction callback and hands its records
 * over in GS_REC_GPU_BATCH batches like the CUPTI bridge's. A start and its end are two
 * records; per thread they nest (an end always follows its own start, a start may have no
 * end when the recording stopped inside it). Names are ids, each named by a GS_REC_TORCH_NAME
 * of the same process sent before the first record that uses it in a recording.
 */
#define GS_TORCH_OP_END	  1 /* hdr.flags: the range's end (else its start) */
#define GS_TORCH_OP_ASYNC 2 /* hdr.flags: RecordFunction::isAsync() */

struct gs_torch_op {
	struct gs_hdr hdr; /* tid: the thread; ts: the start or the end */
	__s64 seq_nr;	   /* autograd sequence number: a backward op's is its forward op's; -1 */
	__u32 name;	   /* id, named by GS_REC_TORCH_NAME; 0: no name */
	__u32 fwd_tid;	   /* torch's logical id (not the tid) of the forward op's thread; 0 */
	__u32 scope;	   /* at::RecordScope: 0 function, 1 backward function, 7 user scope ... */
	__u32 shapes;	   /* start only: a TORCH_NAME id of the input shapes text; 0 none */
};

struct gs_torch_name {
	struct gs_hdr hdr;
	__u32 name; /* the id GS_REC_TORCH_OP records use */
	__u32 pad;
	char text[]; /* NUL-terminated: "aten::addmm", "Optimizer.step#SGD.step", ... */
};

/*
 * GS_REC_GPU_DEVICE: one GPU's properties as CUPTI reports them (CUpti_ActivityDevice5,
 * CUPTI_ACTIVITY_KIND_DEVICE), sent by the bridge whenever CUPTI hands it one (every device at
 * each CUPTI session; repeats carry the same values). `device` is the index the GPU records of
 * the process carry. Kineto's deviceProperties are written from these.
 */
struct gs_gpu_device {
	struct gs_hdr hdr;   /* tid 0; ts: when the bridge converted it */
	__u64 global_mem;    /* bytes */
	__u64 mem_bandwidth; /* global memory bandwidth, kB/s */
	__u32 device;	     /* CUPTI's device id */
	__u32 compute_major; /* compute capability */
	__u32 compute_minor;
	__u32 sms;	 /* multiprocessors */
	__u32 warp_size; /* threads per warp */
	__u32 max_threads_per_block;
	__u32 max_warps_per_sm;	 /* resident warps per multiprocessor */
	__u32 max_blocks_per_sm; /* resident blocks per multiprocessor */
	__u32 regs_per_block;	 /* 32-bit registers */
	__u32 regs_per_sm;
	__u32 smem_per_block; /* bytes of shared memory a block may have */
	__u32 smem_per_sm;    /* bytes */
	__u32 l2_cache;	      /* bytes */
	__u32 const_mem;      /* bytes */
	__u32 core_clock_khz;
	__u32 copy_engines;
	__u8 uuid[16]; /* CUPTI's uuid, as the driver reports it */
	char name[];   /* NUL-terminated: "NVIDIA H100 80GB HBM3" */
};

/* GS_REC_GPU_LOSS (loader): batches BPF could not put in the ring buffer and the records they
 * held, and batches missing from a bridge's sequence; cumulative. */
struct gs_gpu_loss {
	struct gs_hdr hdr;
	__u64 batches;
	__u64 records;
	__u64 gaps; /* batches missing from the per-process sequence numbers */
};

/*
 * Python stacks. The loader finds a process's CPython runtime, checks its layout and puts a
 * struct gs_py_offsets into BPF's py_procs map (key: tgid); BPF then walks the frame chain of
 * the current thread wherever a stack is wanted and emits the raw frames: the code object's
 * address, the instruction index and a stamp of the code object's identity. The loader reads
 * each (pid, code, stamp) it has not seen from the live process once and writes a
 * GS_REC_PY_CODE record, so names survive the code object being freed and its address reused
 * (a new object at the same address has another stamp).
 */
#define GS_PY_MAX_FRAMES 128 /* leaf first; the outermost callers are cut beyond this */

enum gs_py_stack_kind {
	GS_PY_AT_SYSCALL = 1, /* over a syscall long enough for a span or an off-CPU span */
	GS_PY_AT_CUDA = 2,    /* over an outermost CUDA API call */
	GS_PY_AT_OP = 3,      /* over an outermost PyTorch operator call */
	GS_PY_SAMPLE = 4,     /* a CPU sample: ts is when, end_ts - ts the sampling period */
};

#define GS_PY_TRUNCATED 1 /* gs_py_stack.hdr.flags: deeper than GS_PY_MAX_FRAMES */
#define GS_PY_NO_THREAD 2 /* ... the thread has no Python thread state (a native thread) */

struct gs_py_frame {
	__u64 code;  /* PyCodeObject address */
	__s32 lasti; /* instruction index in code units (2 bytes); -1 unknown */
	__u32 stamp; /* gs_py_code_stamp() of the code object, as BPF read it */
};

/* The Python stack of thread hdr.tid, unchanged over [hdr.ts, end_ts]: every syscall, off-CPU
 * span, CUDA call and operator of that thread within the interval ran under it. */
struct gs_py_stack {
	struct gs_hdr hdr; /* flags: GS_PY_TRUNCATED, GS_PY_NO_THREAD */
	__u64 end_ts;
	__u32 kind;    /* enum gs_py_stack_kind */
	__u32 nframes; /* frames[] that follow */
	struct gs_py_frame frames[];
};

/* Identity of a code object from the two string pointers BPF reads with it. */
static inline __u32 gs_py_code_stamp(__u64 filename, __u64 name)
{
	__u64 x = filename * 0x9e3779b97f4a7c15ULL ^ name;

	return (__u32)(x ^ (x >> 32));
}

/* Where things are in one process's interpreter: absolute addresses and the offsets of its
 * CPython version (loader/python/py_offsets.h), filled by the loader once the layout is checked. */
struct gs_py_offsets {
	__u64 runtime;		/* &_PyRuntime */
	__u64 none;		/* &_Py_NoneStruct: 3.13's entry frames have it as their code */
	__u32 minor;		/* 3.<minor> */
	__u32 tsd_key;		/* _PyRuntime offset of autoTSSkey's pthread key (Py_tss_t + 4) */
	__u32 tsd_block;	/* glibc struct pthread.specific_1stblock (0x310) */
	__s32 ts_frame;		/* PyThreadState -> frame (<=3.10) or current_frame (3.13); -1 */
	__s32 ts_cframe;	/* PyThreadState -> cframe (3.11, 3.12); -1 */
	__s32 cframe_cur;	/* _PyCFrame -> current_frame; -1 */
	__s32 ts_thread_id;	/* PyThreadState.thread_id (pthread_self, = fsbase) */
	__s32 fr_back;		/* frame -> previous frame */
	__s32 fr_code;		/* frame -> code object */
	__s32 fr_instr;		/* f_lasti (int), or prev_instr / instr_ptr (pointer) */
	__s32 fr_owner;		/* _PyInterpreterFrame.owner (one byte); -1 */
	__u32 instr_is_ptr;	/* fr_instr is a pointer into the code (3.11+) */
	__u32 lasti_bytes;	/* f_lasti counts bytes (3.8, 3.9): halve it */
	__u32 co_code_adaptive; /* offset of the bytecode in the code object (3.11+) */
	__u32 co_filename;	/* code -> co_filename; co_name follows 8 bytes on */
	__u32 fr_size;		/* bytes of a frame read at once: every fr_* field is within */
};

struct gs_op_call {
	struct gs_hdr hdr; /* ts: entry; flags: GS_CUDA_NESTED when inside another operator */
	__u64 dur_ns;
	__u32 op;    /* index, named by a GS_REC_OP_NAME record */
	__u16 depth; /* operator calls around this one on the thread */
	__u16 pad;
};

#define GS_OP_MAX_DEPTH 32 /* nested operator calls tracked per thread */

/* The return addresses the kernel replaced with its uretprobe trampoline on one thread's stack,
 * with the originals (its utask->return_instances), for the loader to put back before the C++
 * unwinder reads them (bpf/ops.bpf.c: op_unwind). Not written to the trace. */
#define GS_OP_UNWIND_MAX 64 /* the kernel's MAX_URETPROBE_DEPTH */

struct gs_op_unwind_slot {
	__u64 slot; /* stack address of the replaced return address */
	__u64 orig; /* the return address that was there */
};

struct gs_op_unwind {
	struct gs_hdr hdr;
	__u64 trampoline; /* what the kernel wrote in each slot */
	__u32 n;	  /* slots[] used */
	__u32 pad;
	struct gs_op_unwind_slot slots[GS_OP_UNWIND_MAX];
};

/* A process BPF stopped (SIGSTOP) for the loader: the key of its entry in the held_procs map,
 * which the loader deletes once it resumed it, and gpuspy's watchdog
 * (loader/session/hold_watchdog.c) resumes it from if the loader does not in time or dies. The
 * value is a struct gs_op_unwind whose hdr.type says why (GS_REC_LIBS_CHANGED, GS_REC_OP_UNWIND:
 * then with the return addresses to put back before the process may unwind). */
struct gs_hold_key {
	__u32 tgid;
	__u32 tid;
	__u64 ts; /* the hold record's hdr.ts */
};

#define GS_HELD_MAX 1024 /* processes held at once */

/* What a traced thread is in at this moment, as BPF keeps it in task-local storage: an entry
 * per thread, made at its first syscall, switch or CUDA call after the attach, freed with the
 * task. A wait still under way has no record yet, so `gpuspy top` reads these entries for the
 * thread it shows, by pidfd (loader/session/thread_now.c). */
#define GS_SYSCALL_NR_TRACKED 512 /* syscall numbers below it have an entry in stat_slot */
/* stat_slot values besides a slot index + 1 */
#define GS_STAT_NONE	  0	 /* no statistics for this syscall yet */
#define GS_STAT_IN_HASH	  0xffff /* its statistics are a syscall_stats key */
#define GS_STAT_SLOTS_MAX 4096	 /* syscall_slots entries at most (< GS_STAT_IN_HASH - 1) */

struct gs_syscall_inflight {
	__u64 start_ns;
	__u64 args[GS_SYSCALL_ARGS];
	__s64 nr; /* -1: nothing in flight */
	/* Where this thread's statistics of each syscall are (bpf/osrt.bpf.c): GS_STAT_NONE,
	 * GS_STAT_IN_HASH or a syscall_slots index + 1. Flushed when the thread exits. */
	__u16 stat_slot[GS_SYSCALL_NR_TRACKED];
};

/* A syscall_slots entry: one (process, thread, syscall)'s statistics, key.pid 0 when free. */
struct gs_syscall_slot {
	struct gs_syscall_stats_key key;
	struct gs_syscall_stats_val val;
};

struct gs_offcpu_inflight {
	__u64 ts;     /* when it left the CPU */
	__u32 reason; /* enum gs_offcpu_reason */
	__u32 valid;  /* 0: on CPU (back since) */
};

struct gs_cuda_frame {
	__u64 ts;
	__u64 cookie; /* probe index | capture flags << GS_CUDA_COOKIE_SHIFT */
	__u64 args[GS_CUDA_ARGS];
};

struct gs_cuda_thread {
	__u32 depth; /* open probed calls, including ones too deep to keep a frame for */
	__u32 pad;
	struct gs_cuda_frame frames[GS_CUDA_MAX_DEPTH]; /* [0]: the outermost */
};

#define GS_REC_ASSERT_SIZE(type, bytes)                                                            \
	_Static_assert(sizeof(type) == (bytes), #type " layout is part of the trace format");      \
	_Static_assert(sizeof(type) % 8 == 0, #type " must keep 8-byte alignment")

GS_REC_ASSERT_SIZE(struct gs_hdr, 24);
GS_REC_ASSERT_SIZE(struct gs_syscall, 80);
GS_REC_ASSERT_SIZE(struct gs_offcpu, 40);
GS_REC_ASSERT_SIZE(struct gs_fork, 48);
GS_REC_ASSERT_SIZE(struct gs_exec, 136);
GS_REC_ASSERT_SIZE(struct gs_exit, 48);
GS_REC_ASSERT_SIZE(struct gs_comm, 40);
GS_REC_ASSERT_SIZE(struct gs_fd_name, 40);
GS_REC_ASSERT_SIZE(struct gs_cuda_call, 128);
GS_REC_ASSERT_SIZE(struct gs_cuda_name, 40);
GS_REC_ASSERT_SIZE(struct gs_gpu_batch, 32);
GS_REC_ASSERT_SIZE(struct gs_gpu_kernel, 96);
GS_REC_ASSERT_SIZE(struct gs_gpu_memcpy, 80);
GS_REC_ASSERT_SIZE(struct gs_gpu_memset, 80);
GS_REC_ASSERT_SIZE(struct gs_gpu_api, 48);
GS_REC_ASSERT_SIZE(struct gs_gpu_sync, 56);
GS_REC_ASSERT_SIZE(struct gs_nvtx, 48);
GS_REC_ASSERT_SIZE(struct gs_gpu_clock, 48);
GS_REC_ASSERT_SIZE(struct gs_bridge_status, 48);
GS_REC_ASSERT_SIZE(struct gs_gpu_overhead, 40);
GS_REC_ASSERT_SIZE(struct gs_gpu_device, 120);
GS_REC_ASSERT_SIZE(struct gs_torch_op, 48);
GS_REC_ASSERT_SIZE(struct gs_torch_name, 32);
GS_REC_ASSERT_SIZE(struct gs_gpu_loss, 48);
GS_REC_ASSERT_SIZE(struct gs_py_frame, 16);
GS_REC_ASSERT_SIZE(struct gs_py_stack, 40);
GS_REC_ASSERT_SIZE(struct gs_py_offsets, 80);
GS_REC_ASSERT_SIZE(struct gs_op_call, 40);
GS_REC_ASSERT_SIZE(struct gs_op_unwind, 40 + 16 * GS_OP_UNWIND_MAX);
GS_REC_ASSERT_SIZE(struct gs_hold_key, 16);
GS_REC_ASSERT_SIZE(struct gs_syscall_inflight, 40 + 2 * GS_SYSCALL_NR_TRACKED);
GS_REC_ASSERT_SIZE(struct gs_syscall_slot, 16 + 48 + 4 * GS_HIST_BUCKETS);
GS_REC_ASSERT_SIZE(struct gs_offcpu_inflight, 16);
GS_REC_ASSERT_SIZE(struct gs_cuda_frame, 88);
GS_REC_ASSERT_SIZE(struct gs_cuda_thread, 8 + 88 * GS_CUDA_MAX_DEPTH);
GS_REC_ASSERT_SIZE(struct gs_syscall_stats_val, 48 + 4 * GS_HIST_BUCKETS);
GS_REC_ASSERT_SIZE(struct gs_offcpu_stats_val, 48);
GS_REC_ASSERT_SIZE(struct gs_offcpu_final, 72);
GS_REC_ASSERT_SIZE(struct gs_task_cputime, 24);
GS_REC_ASSERT_SIZE(struct gs_syscall_final, 32 + 48 + 4 * GS_HIST_BUCKETS);

#endif /* GPUSPY_RECORDS_H */
