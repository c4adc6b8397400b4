/* SPDX-License-Identifier: MIT */
/*
 * The gpuspy trace file (docs/FORMAT.md): a fixed header, then CRC-checked blocks of records.
 * Blocks are written whole and each decodes on its own, so a file cut short by a crash is
 * readable up to its last complete block; the trailer record tells a complete recording from a
 * truncated one.
 *
 * Records are those of bpf/records.h (as BPF emits them) and the loader's own below. Format 2
 * stores each block's records compressed (zstd, after a reversible time stamp transform);
 * format 1 stored them byte for byte. Readers hand out the same records either way.
 */
#ifndef GPUSPY_TRACE_FORMAT_H
#define GPUSPY_TRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include "bpf/records.h"

#define GS_TRACE_MAGIC	       "GPUSPYTR"
#define GS_TRACE_VERSION_MAJOR 2 /* what the writer writes; readers read 1 and 2 */
#define GS_TRACE_VERSION_MINOR 3 /* new record types bump this; readers skip unknown types */
#define GS_TRACE_OLDEST_MAJOR  1 /* the oldest major readers still read */
#define GS_BLOCK_MAGIC	       0x4b425347u /* "GSBK" little-endian: format 1's raw blocks */
#define GS_ZBLOCK_MAGIC	       0x425a5347u /* "GSZB" little-endian: format 2's blocks */
#define GS_BLOCK_MAX_PAYLOAD   (1u << 20)  /* records in one block, decoded */
#define GS_RECORD_MAX_SIZE     65528u	   /* the u16 size field, kept 8-aligned */

struct gs_file_header {
	char magic[8];
	__u16 version_major;
	__u16 version_minor;
	__u32 header_size;
	__u64 created_realtime_ns;  /* wall clock when recording started */
	__u64 created_monotonic_ns; /* CLOCK_MONOTONIC taken together with the wall clock */
	char hostname[64];
	char kernel_release[64];
};

/* Format 1: the payload is the records themselves. */
struct gs_block_header {
	__u32 magic; /* GS_BLOCK_MAGIC */
	__u32 payload_len;
	__u32 record_count;
	__u32 crc32; /* zlib crc32 of the payload */
};

enum gs_block_codec {
	GS_CODEC_NONE = 0, /* stored as is (when compressing would not make it smaller) */
	GS_CODEC_ZSTD = 1, /* one or more zstd frames */
};

/* gs_zblock_header.transform bits: undone in reverse order after decoding */
#define GS_XFORM_TS_DELTA 1u /* each record's hdr.ts is stored minus the previous record's */
#define GS_XFORM_KNOWN	  GS_XFORM_TS_DELTA

/* Format 2: `stored_len` bytes follow, encoded by `codec`; decoded they are `raw_len` bytes of
 * records (the transform undone), exactly `record_count` of them. */
struct gs_zblock_header {
	__u32 magic; /* GS_ZBLOCK_MAGIC */
	__u32 stored_len;
	__u32 raw_len;
	__u32 record_count;
	__u16 codec;	 /* enum gs_block_codec */
	__u16 transform; /* GS_XFORM_* bits */
	__u32 crc32;	 /* zlib crc32 of the 20 bytes above, continued over the stored bytes */
};

enum gs_trace_mode {
	GS_MODE_LAUNCH = 1,
	GS_MODE_ATTACH = 2,
	GS_MODE_SYSTEM = 3,
};

/* GS_REC_TRACE_INFO: how the recording was made; `command` is NUL-terminated, padded to 8. */
struct gs_trace_info {
	struct gs_hdr hdr; /* ts: recording start */
	__u64 osrt_threshold_ns;
	__u64 offcpu_threshold_ns;
	__u32 mode; /* enum gs_trace_mode */
	__u32 follow;
	char command[]; /* the target command line or pid list */
};

struct gs_hist_bucket {
	__u32 bucket;
	__u32 count;
};

/* GS_REC_SYSCALL_STATS: exact per-(process, thread, syscall) totals, a cumulative checkpoint;
 * with GS_STATS_FINAL in hdr.flags (records.h), the thread's final totals at its exit. */
struct gs_syscall_stats {
	struct gs_hdr hdr;
	__u32 nr;
	__u32 nbuckets; /* nonzero histogram buckets that follow */
	struct gs_duration_sums sums;
	struct gs_hist_bucket buckets[];
};

/* GS_REC_OFFCPU_STATS: exact per-thread off-CPU totals by reason, a cumulative checkpoint;
 * with GS_STATS_FINAL in hdr.flags (records.h), the thread's final totals at its exit. */
struct gs_offcpu_stats {
	struct gs_hdr hdr;
	__u64 ns[GS_OFFCPU_NREASONS];
	__u64 count[GS_OFFCPU_NREASONS];
};

#define GS_LOSS_SLOTS 8
/* GS_REC_LOSS: every counted loss, by enum gs_loss_kind. */
struct gs_loss {
	struct gs_hdr hdr;
	__u64 count[GS_LOSS_SLOTS];
};

enum gs_cuda_lib_role {
	GS_CUDA_LIB_RUNTIME = 1, /* defines the runtime API (libcudart, or linked statically) */
	GS_CUDA_LIB_DRIVER = 2,	 /* defines the driver API (libcuda) */
	GS_CUDA_LIB_BRIDGE = 4,	 /* gpuspy's CUPTI bridge (cupti_bridge/): GPU activity */
};

/* GS_REC_CUDA_LIB: a library with CUDA entry points mapped by process hdr.pid, written once
 * per (process, library) when it is found; the probes are attached once per (dev, ino). */
struct gs_cuda_lib {
	struct gs_hdr hdr;
	__u64 dev;
	__u64 ino;
	__u32 roles;  /* enum gs_cuda_lib_role bits */
	__u32 probes; /* functions of cuda_probe_list.h probed in it */
	char path[];  /* as mapped in the process, NUL-terminated */
};

/* GS_REC_LOSS_MORE: the loss kinds from GS_LOSS_SLOTS on (count[i] is kind SLOTS + i). */
struct gs_loss_more {
	struct gs_hdr hdr;
	__u64 count[GS_LOSS_SLOTS];
};

enum gs_py_proc_state {
	GS_PY_PROC_TRACED = 1,	/* stacks are captured in this process */
	GS_PY_PROC_REFUSED = 2, /* an interpreter gpuspy does not know or could not check */
};

/* GS_REC_PY_PROC: a CPython runtime found in process hdr.pid. */
struct gs_py_proc {
	struct gs_hdr hdr;
	__u32 state;	   /* enum gs_py_proc_state */
	__u32 version_hex; /* PY_VERSION_HEX as read from the process, 0 when unknown */
	char message[];	   /* "<runtime path>: <how it was checked>" or why it was refused */
};

#define GS_PY_CODE_CUT 1 /* gs_py_code.hdr.flags: the line table was longer than the bytes kept */
/* ... the object at `code` no longer had this stamp when the loader read it (freed, its address
 * reused): names unknown, strings empty */
#define GS_PY_CODE_STALE 2

/* GS_REC_PY_CODE: code object `code` of process hdr.pid, as read from its memory when a stack
 * first showed it with this stamp. Line numbers are computed from the line table (in
 * CPython 3.<minor>'s format) and a frame's lasti (output/model/py_lines.h). */
struct gs_py_code {
	struct gs_hdr hdr;
	__u64 code;
	__u32 stamp;
	__s32 firstlineno;
	__u16 minor;
	__u16 qualname_len; /* bytes, NUL excluded; co_qualname (3.11+) or co_name */
	__u16 filename_len;
	__u16 linetable_len;
	char data[]; /* qualname NUL filename NUL linetable-bytes */
};

/* GS_REC_OP_NAME: operator index `op` of GS_REC_OP_CALL records is `name` ("aten::addmm"). */
struct gs_op_name {
	struct gs_hdr hdr;
	__u32 op;
	__u32 pad;
	char name[]; /* NUL-terminated */
};

enum gs_bridge_load_outcome {
	GS_BRIDGE_LOAD_INJECTED =
	    1,			    /* gpuspy loaded it into the running process (ptrace, dlopen) */
	GS_BRIDGE_LOAD_PRESENT = 2, /* already loaded: at start, or by an earlier attach */
	GS_BRIDGE_LOAD_REFUSED = 3, /* not permitted: ptrace denied (capability, Yama, seccomp) */
	GS_BRIDGE_LOAD_SKIPPED = 4, /* left alone by rule: --no-inject, another CUDA tool, ... */
	GS_BRIDGE_LOAD_FAILED = 5,  /* tried, failed, and the process was left as it was */
};

/* GS_REC_BRIDGE_LOAD: whether gpuspy loaded its CUPTI bridge into CUDA process hdr.pid when it
 * attached (hdr.tid: the thread that made the call, 0 if none did). */
/* hdr.flags: the PyTorch operator observer's load, not the CUPTI bridge's */
#define GS_BRIDGE_LOAD_TORCH 1

struct gs_bridge_load {
	struct gs_hdr hdr;
	__u32 outcome;	/* enum gs_bridge_load_outcome */
	__s32 err;	/* the errno behind a refusal or failure, else 0 */
	__u64 pause_ns; /* how long that thread was stopped, waiting included */
	__u64 wait_ns;	/* of which spent waiting for it to reach a safe point */
	char message[]; /* what was done, or why not, NUL-terminated */
};

/* GS_REC_PROC_INFO: process hdr.pid's credentials and cgroup, read from /proc when it was first
 * traced and again after an exec that changed them; a process without one has its parent's
 * (fork copies both). The container, pod or service is parsed from the path when read
 * (lib/cgroup_attr.h), so a better parser applies to old traces too. */
struct gs_proc_info {
	struct gs_hdr hdr;
	__u32 uid, euid; /* real and effective user ids */
	__u32 gid;	 /* real group id */
	__u32 pad;
	char user[32]; /* the effective uid's name on the recording host, or its number */
	char cgroup[]; /* the cgroup path that places it (cgroup_pick_path), NUL-terminated */
};

/* GS_REC_PROC_ENV: process hdr.pid's place in a distributed job, the variables torchrun and
 * other launchers set (RANK, LOCAL_RANK, WORLD_SIZE), read from /proc/PID/environ when it was
 * first traced and after an exec that changed them; written only for a process that has one
 * of them. A process without one has its parent's (fork copies the environment). */
struct gs_proc_env {
	struct gs_hdr hdr;
	__s32 rank;	  /* RANK, -1 when unset or not a number */
	__s32 local_rank; /* LOCAL_RANK, -1 likewise */
	__s32 world_size; /* WORLD_SIZE, -1 likewise */
	__u32 pad;
};

/* GS_REC_TRAILER: the last record of a complete recording. */
struct gs_trailer {
	struct gs_hdr hdr; /* ts: recording end */
	__u64 records;	   /* records written before the trailer */
};

GS_REC_ASSERT_SIZE(struct gs_file_header, 160);
GS_REC_ASSERT_SIZE(struct gs_block_header, 16);
GS_REC_ASSERT_SIZE(struct gs_zblock_header, 24);
GS_REC_ASSERT_SIZE(struct gs_trace_info, 48);
GS_REC_ASSERT_SIZE(struct gs_syscall_stats, 80);
GS_REC_ASSERT_SIZE(struct gs_offcpu_stats, 72);
GS_REC_ASSERT_SIZE(struct gs_loss, 88);
GS_REC_ASSERT_SIZE(struct gs_trailer, 32);
GS_REC_ASSERT_SIZE(struct gs_cuda_lib, 48);
GS_REC_ASSERT_SIZE(struct gs_loss_more, 88);
GS_REC_ASSERT_SIZE(struct gs_py_proc, 32);
GS_REC_ASSERT_SIZE(struct gs_proc_info, 72);
GS_REC_ASSERT_SIZE(struct gs_proc_env, 40);
GS_REC_ASSERT_SIZE(struct gs_py_code, 48);
GS_REC_ASSERT_SIZE(struct gs_op_name, 32);
GS_REC_ASSERT_SIZE(struct gs_bridge_load, 48);
_Static_assert(GS_LOSS_NKINDS <= 2 * GS_LOSS_SLOTS, "loss kinds must fit the loss records");

static inline size_t gs_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Whether a record's size and inner lengths are consistent with its type, so consumers can
 * read its fields without further checks. Unknown types are valid (and skipped). */
bool gs_record_valid(const struct gs_hdr *rec);

const char *gs_loss_kind_name(unsigned kind);
const char *gs_offcpu_reason_name(unsigned reason);

#endif /* GPUSPY_TRACE_FORMAT_H */
