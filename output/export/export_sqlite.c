// SPDX-License-Identifier: MIT
/*
 * `--format sqlite`: nsys's tables where gpuspy has the same data, so that SQL written against
 * `nsys export --type sqlite` (nsys's stats recipes, users' own queries) runs unchanged: times
 * in ns integers on CLOCK_MONOTONIC, names as StringIds ids, threads as globalTid (pid << 24 |
 * tid) and processes as globalPid (pid << 24). The GPU records and CUPTI's API records come
 * from the model, which joined them already; the syscall spans and NVTX ranges, which the
 * model does not keep, are streamed from the file as they are read, so memory stays bounded
 * by the model's.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "lib/syscall_names.h"
#include "output/export/export_sqlite.h"
#include "output/export/export_sqlite_db.h"
#include "output/export/export_sqlite_gpuspy.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/gpu/gpu_strings.h"
#include "output/model/trace_model.h"
#include "output/trace/trace_reader.h"

/* nsys's ENUM_NSYS_EVENT_CLASS and ENUM_NSYS_EVENT_TYPE values for the rows written here */
#define NSYS_CLASS_CUDA_RUNTIME 0
#define NSYS_CLASS_CUDA_DRIVER	1
#define NSYS_CLASS_OS_RUNTIME	27
#define NSYS_NVTX_MARK		34
#define NSYS_NVTX_PUSH_POP	59
#define NSYS_NVTX_START_END	60
/* nsys numbers memory kinds from PAGEABLE (0), CUPTI from UNKNOWN (0): UNKNOWN is nsys's 7 */
#define NSYS_MEM_KIND_UNKNOWN 7
#define CUPTI_MEM_KINDS	      8 /* CUpti_ActivityMemoryKind: UNKNOWN .. MANAGED_STATIC */

/* Column lists as nsys writes them (nsys 2024.x); columns gpuspy has no data for are NULL. */
static const char schema[] =
    "CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, "
    "launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL, "
    "gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, "
    "blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
    "staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, "
    "localMemoryPerThread INTEGER, localMemoryTotal INTEGER, gridId INTEGER, "
    "sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, "
    "srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, "
    "dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, "
    "virtualAddress INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, greenContextId INTEGER, "
    "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
    "value INTEGER, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER, "
    "nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
    "CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, "
    "eventClass INTEGER NOT NULL, globalTid INTEGER, nameId INTEGER NOT NULL, "
    "returnValue INTEGER NOT NULL, nestingLevel INTEGER, callchainId INTEGER);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, "
    "eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, "
    "globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER, "
    "uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, "
    "int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"
    "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL);"
    "CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL);"
    "CREATE TABLE ENUM_NSYS_EVENT_CLASS (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL);"
    "CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, "
    "label TEXT NOT NULL);"
    /* the rows of the event class and type enums that the tables here use, as nsys names them
     * (recipes look the ids up by name) */
    "INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES (0, 'TRACE_PROCESS_EVENT_CUDA_RUNTIME', "
    "'CUDA runtime'), (1, 'TRACE_PROCESS_EVENT_CUDA_DRIVER', 'CUDA driver'), "
    "(27, 'TRACE_PROCESS_EVENT_OS_RUNTIME', 'OS runtime');"
    "INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (34, 'NvtxMark', 'NvtxMark'), "
    "(59, 'NvtxPushPopRange', 'NvtxPushPopRange'), "
    "(60, 'NvtxStartEndRange', 'NvtxStartEndRange');";

/* After the rows: an index built once is faster than one kept up to date row by row. */
static const char indexes[] =
    "CREATE INDEX CUPTI_ACTIVITY_KIND_KERNEL_start ON CUPTI_ACTIVITY_KIND_KERNEL (start);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_KERNEL_corr ON CUPTI_ACTIVITY_KIND_KERNEL (correlationId);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_MEMCPY_start ON CUPTI_ACTIVITY_KIND_MEMCPY (start);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_MEMCPY_corr ON CUPTI_ACTIVITY_KIND_MEMCPY (correlationId);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_MEMSET_start ON CUPTI_ACTIVITY_KIND_MEMSET (start);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_MEMSET_corr ON CUPTI_ACTIVITY_KIND_MEMSET (correlationId);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_RUNTIME_start ON CUPTI_ACTIVITY_KIND_RUNTIME (start);"
    "CREATE INDEX CUPTI_ACTIVITY_KIND_RUNTIME_corr ON CUPTI_ACTIVITY_KIND_RUNTIME "
    "(correlationId);"
    "CREATE INDEX OSRT_API_start ON OSRT_API (start);"
    "CREATE INDEX NVTX_EVENTS_start ON NVTX_EVENTS (start);"
    "CREATE INDEX PYTORCH_OPS_start ON PYTORCH_OPS (start);"
    "CREATE INDEX PYTHON_STACKS_start ON PYTHON_STACKS (start);";

struct sqlite_export {
	struct sqlite_db d;
	const struct trace_model *m;
	sqlite3_stmt *kernel, *memcpy, *memset, *runtime, *osrt, *nvtx;
	bool bad_trace; /* the failure was the trace's, not the database's */
};

/* PREFIX + the name in capitals, other characters as '_': "HtoD" -> "CUDA_MEMCPY_KIND_HTOD",
 * "<unknown>" -> "..._UNKNOWN", "Device Static" -> "..._DEVICE_STATIC", as nsys names them. */
static void enum_name(const char *prefix, const char *label, char *buf, size_t len)
{
	size_t start = (size_t)snprintf(buf, len, "%s", prefix), n = start;

	for (; *label && n + 1 < len; label++) {
		if (isalnum((unsigned char)*label))
			buf[n++] = (char)toupper((unsigned char)*label);
		else if (n > start && buf[n - 1] != '_')
			buf[n++] = '_';
	}
	while (n > start && buf[n - 1] == '_')
		n--;
	buf[n] = '\0';
}

/* A CUpti_ActivityMemoryKind as nsys's ENUM_CUDA_MEM_KIND id. */
static int nsys_mem_kind(uint32_t cupti_kind)
{
	if (cupti_kind == 0 || cupti_kind >= CUPTI_MEM_KINDS)
		return NSYS_MEM_KIND_UNKNOWN;
	return (int)cupti_kind - 1;
}

static int enum_tables(struct sqlite_export *x)
{
	sqlite3_stmt *copy = NULL, *mem = NULL;
	char name[96];
	int ret = -1;

	if (sqlite_db_prepare(&x->d, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", &copy) ||
	    sqlite_db_prepare(&x->d, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)", &mem))
		goto cleanup;
	for (uint32_t k = GS_GPU_COPY_UNKNOWN; k <= GS_GPU_COPY_PTOP; k++) {
		enum_name("CUDA_MEMCPY_KIND_", gpu_copy_kind_short(k), name, sizeof(name));
		sqlite3_bind_int(copy, 1, (int)k);
		sqlite3_bind_text(copy, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(copy, 3, gpu_copy_kind_name(k), -1, SQLITE_STATIC);
		if (sqlite_db_insert(&x->d, copy))
			goto cleanup;
	}
	for (uint32_t k = 0; k < CUPTI_MEM_KINDS; k++) {
		enum_name("CUDA_MEMOPR_MEMORY_KIND_", gpu_memory_kind_name(k), name, sizeof(name));
		sqlite3_bind_int(mem, 1, nsys_mem_kind(k));
		sqlite3_bind_text(mem, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(mem, 3, gpu_memory_kind_name(k), -1, SQLITE_STATIC);
		if (sqlite_db_insert(&x->d, mem))
			goto cleanup;
	}
	ret = 0;
cleanup:
	sqlite3_finalize(copy);
	sqlite3_finalize(mem);
	return ret;
}

static int thread_names(struct sqlite_export *x)
{
	const struct trace_model *m = x->m;
	sqlite3_stmt *st;
	int64_t id;
	int ret = 0;

	if (sqlite_db_prepare(&x->d, "INSERT INTO ThreadNames VALUES (?, NULL, ?)", &st))
		return -1;
	for (size_t i = 0; i < m->nthreads && !ret; i++) {
		ret = sqlite_db_string(&x->d, m->threads[i].comm, &id);
		if (ret)
			break;
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, sqlite_global_tid(m->threads[i].pid, m->threads[i].tid));
		ret = sqlite_db_insert(&x->d, st);
	}
	sqlite3_finalize(st);
	return ret;
}

/* nsys's shortName: the function's bare name ("void at::k<int>(int*)" -> "k"), from the
 * demangled name: no return type, scope, template arguments or parameters. */
static int short_name(struct sqlite_export *x, const char *demangled, int64_t *id)
{
	char buf[512];
	const char *end = demangled + strlen(demangled), *start = demangled;
	int depth = 0;

	static const char anon[] = "(anonymous namespace)"; /* a scope, not the parameters */

	for (const char *p = demangled; *p; p++) {
		if (!strncmp(p, anon, sizeof(anon) - 1))
			p += sizeof(anon) - 2;
		else if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == '(' && !depth) {
			end = p;
			break;
		}
	}
	/* the name is the last word before the parameters, without its scope ("at::native::")
	 * or template arguments */
	for (const char *p = demangled; p < end; p++) {
		if (!strncmp(p, anon, sizeof(anon) - 1))
			p += sizeof(anon) - 2;
		else if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == ' ' && !depth)
			start = p + 1;
		else if (*p == ':' && p[1] == ':' && !depth)
			start = p + 2;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)(end - start), start);
	if (strchr(buf, '<') && buf[0] != '<')
		*strchr(buf, '<') = '\0';
	return sqlite_db_string(&x->d, buf[0] ? buf : demangled, id);
}

static void bind_gpu_common(const struct gpu_op *op, sqlite3_stmt *st)
{
	sqlite3_bind_int64(st, 1, (int64_t)op->ts);
	sqlite3_bind_int64(st, 2, (int64_t)(op->ts + op->dur));
	sqlite3_bind_int64(st, 3, op->device);
	sqlite3_bind_int64(st, 4, op->context);
	sqlite3_bind_int64(st, 5, op->stream);
	sqlite3_bind_int64(st, 6, op->correlation);
	sqlite3_bind_int64(st, 7, sqlite_global_tid(op->pid, 0));
}

static int kernel_row(struct sqlite_export *x, const struct gpu_op *op)
{
	const struct gpu_model *g = &x->m->gpu;
	sqlite3_stmt *st = x->kernel;
	int64_t demangled, shortname, mangled;

	if (sqlite_db_string(&x->d, string_pool_display(&g->names, op->name), &demangled) ||
	    short_name(x, string_pool_display(&g->names, op->name), &shortname) ||
	    sqlite_db_string(&x->d, string_pool_get(&g->names, op->name), &mangled))
		return -1;
	bind_gpu_common(op, st);
	sqlite3_bind_int64(st, 8, demangled);
	sqlite3_bind_int64(st, 9, shortname);
	sqlite3_bind_int64(st, 10, mangled);
	sqlite3_bind_int64(st, 11, op->registers);
	for (int i = 0; i < 3; i++) {
		sqlite3_bind_int64(st, 12 + i, op->grid[i]);
		sqlite3_bind_int64(st, 15 + i, op->block[i]);
	}
	sqlite3_bind_int64(st, 18, op->static_smem);
	sqlite3_bind_int64(st, 19, op->dynamic_smem);
	if (op->graph_node_id)
		sqlite3_bind_int64(st, 20, (int64_t)op->graph_node_id);
	return sqlite_db_insert(&x->d, st);
}

static int gpu_op_row(struct sqlite_export *x, const struct gpu_op *op)
{
	sqlite3_stmt *st;
	int graph_col;

	switch (op->kind) {
	case GPU_OP_KERNEL:
		return kernel_row(x, op);
	case GPU_OP_MEMCPY:
		st = x->memcpy;
		bind_gpu_common(op, st);
		sqlite3_bind_int64(st, 8, (int64_t)op->bytes);
		sqlite3_bind_int64(st, 9, op->subkind);
		sqlite3_bind_int64(st, 10, nsys_mem_kind(op->src_kind));
		sqlite3_bind_int64(st, 11, nsys_mem_kind(op->dst_kind));
		graph_col = 12;
		break;
	case GPU_OP_MEMSET:
		st = x->memset;
		bind_gpu_common(op, st);
		sqlite3_bind_int64(st, 8, (int64_t)op->bytes);
		sqlite3_bind_int64(st, 9, nsys_mem_kind(op->dst_kind));
		graph_col = 10;
		break;
	default: /* CUPTI's sync records: nsys keeps them in a table of its own, not written */
		return 0;
	}
	if (op->graph_node_id)
		sqlite3_bind_int64(st, graph_col, (int64_t)op->graph_node_id);
	return sqlite_db_insert(&x->d, st);
}

static int gpu_rows(struct sqlite_export *x)
{
	const struct gpu_model *g = &x->m->gpu;
	int64_t name;

	for (size_t i = 0; i < g->nops; i++)
		if (gpu_op_row(x, &g->ops[i]))
			return -1;
	for (size_t i = 0; i < g->napis; i++) {
		const struct gpu_api *a = &g->apis[i];

		if (sqlite_db_string(&x->d, string_pool_get(&g->names, a->name), &name))
			return -1;
		sqlite3_bind_int64(x->runtime, 1, (int64_t)a->ts);
		sqlite3_bind_int64(x->runtime, 2, (int64_t)(a->ts + a->dur));
		sqlite3_bind_int(x->runtime, 3,
				 a->kind == GS_GPU_API_DRIVER ? NSYS_CLASS_CUDA_DRIVER
							      : NSYS_CLASS_CUDA_RUNTIME);
		sqlite3_bind_int64(x->runtime, 4, sqlite_global_tid(a->pid, a->tid));
		sqlite3_bind_int64(x->runtime, 5, a->correlation);
		sqlite3_bind_int64(x->runtime, 6, name);
		sqlite3_bind_int64(x->runtime, 7, a->ret);
		if (sqlite_db_insert(&x->d, x->runtime))
			return -1;
	}
	return 0;
}

static int syscall_row(struct sqlite_export *x, const struct gs_syscall *s)
{
	char buf[32];
	int64_t name;

	if (sqlite_db_string(&x->d, gs_syscall_name(s->nr, buf, sizeof(buf)), &name))
		return -1;
	sqlite3_bind_int64(x->osrt, 1, (int64_t)s->hdr.ts);
	sqlite3_bind_int64(x->osrt, 2, (int64_t)(s->hdr.ts + s->dur_ns));
	sqlite3_bind_int(x->osrt, 3, NSYS_CLASS_OS_RUNTIME);
	sqlite3_bind_int64(x->osrt, 4, sqlite_global_tid(s->hdr.pid, s->hdr.tid));
	sqlite3_bind_int64(x->osrt, 5, name);
	sqlite3_bind_int64(x->osrt, 6, s->ret);
	sqlite3_bind_int(x->osrt, 7, 0); /* a syscall nests in no other */
	return sqlite_db_insert(&x->d, x->osrt);
}

static int nvtx_row(struct sqlite_export *x, const struct gs_nvtx *n)
{
	sqlite3_stmt *st = x->nvtx;
	int type = n->kind == GS_NVTX_MARK	  ? NSYS_NVTX_MARK
		   : n->kind == GS_NVTX_START_END ? NSYS_NVTX_START_END
						  : NSYS_NVTX_PUSH_POP;
	int64_t tid = sqlite_global_tid(n->hdr.pid, n->hdr.tid);
	size_t room = n->hdr.size - sizeof(*n);

	sqlite3_bind_int64(st, 1, (int64_t)n->hdr.ts);
	if (n->kind != GS_NVTX_MARK) /* nsys leaves a mark's end NULL */
		sqlite3_bind_int64(st, 2, (int64_t)(n->hdr.ts + n->dur_ns));
	sqlite3_bind_int(st, 3, type);
	if (n->id)
		sqlite3_bind_int64(st, 4, (int64_t)n->id);
	/* the record's reader checked the name's NUL; strnlen keeps to the record anyway */
	sqlite3_bind_text(st, 5, n->name, (int)strnlen(n->name, room), SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 6, tid);
	if (n->kind != GS_NVTX_MARK)
		sqlite3_bind_int64(st, 7, tid);
	return sqlite_db_insert(&x->d, st);
}

static int stream_rows(struct sqlite_export *x, const char *path)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	if (trace_reader_open(path, &r, x->d.err, x->d.errlen)) {
		x->bad_trace = true;
		return -1;
	}
	trace_reader_set_filter(r, x->m->filter);
	while ((ret = trace_reader_next(r, &h)) > 0) {
		if (h->type == GS_REC_SYSCALL)
			ret = syscall_row(x, (const void *)h);
		else if (h->type == GS_REC_NVTX)
			ret = nvtx_row(x, (const void *)h);
		else
			ret = 0;
		if (ret) {
			trace_reader_close(r);
			return -1;
		}
	}
	if (ret < 0) {
		snprintf(x->d.err, x->d.errlen, "%s", trace_reader_error(r));
		x->bad_trace = true;
	}
	trace_reader_close(r);
	return ret < 0 ? -1 : 0;
}

static int prepare_all(struct sqlite_export *x)
{
	struct sqlite_db *d = &x->d;

	return sqlite_db_prepare(
		   d,
		   "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, "
		   "contextId, streamId, correlationId, globalPid, demangledName, "
		   "shortName, mangledName, registersPerThread, gridX, gridY, gridZ, "
		   "blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, "
		   "graphNodeId) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
		   "?, ?, ?, ?, ?)",
		   &x->kernel) ||
	       sqlite_db_prepare(
		   d,
		   "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, "
		   "contextId, streamId, correlationId, globalPid, bytes, copyKind, "
		   "srcKind, dstKind, graphNodeId) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
		   "?, ?, ?)",
		   &x->memcpy) ||
	       sqlite_db_prepare(d,
				 "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, "
				 "contextId, streamId, correlationId, globalPid, bytes, memKind, "
				 "graphNodeId) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
				 &x->memset) ||
	       sqlite_db_prepare(
		   d,
		   "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, "
		   "globalTid, correlationId, nameId, returnValue) VALUES (?, ?, ?, ?, "
		   "?, ?, ?)",
		   &x->runtime) ||
	       sqlite_db_prepare(d,
				 "INSERT INTO OSRT_API (start, end, eventClass, globalTid, nameId, "
				 "returnValue, nestingLevel) VALUES (?, ?, ?, ?, ?, ?, ?)",
				 &x->osrt) ||
	       sqlite_db_prepare(d,
				 "INSERT INTO NVTX_EVENTS (start, end, eventType, rangeId, text, "
				 "globalTid, endGlobalTid) VALUES (?, ?, ?, ?, ?, ?, ?)",
				 &x->nvtx);
}

static void finalize_all(struct sqlite_export *x)
{
	sqlite3_stmt **v[] = {&x->kernel, &x->memcpy, &x->memset, &x->runtime, &x->osrt, &x->nvtx};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		sqlite3_finalize(*v[i]);
		*v[i] = NULL;
	}
}

int export_sqlite(const char *path, const struct export_opts *opts, const char *db_path, char *err,
		  size_t errlen)
{
	struct sqlite_export x = {0};
	struct trace_model m;
	int ret = -2;

	if (trace_model_load(path, &m, err, errlen))
		return -1;
	x.m = &m;
	if (sqlite_db_open(&x.d, db_path, err, errlen)) {
		trace_model_free(&m);
		return -2;
	}
	if (sqlite_db_exec(&x.d, schema) || prepare_all(&x) || enum_tables(&x) ||
	    thread_names(&x) || gpu_rows(&x) || stream_rows(&x, path) ||
	    sqlite_gpuspy_tables(&x.d, &m, opts->steps_by) || sqlite_db_exec(&x.d, indexes))
		goto cleanup;
	finalize_all(&x);
	ret = sqlite_db_commit(&x.d) ? -2 : 0;
	x.d.db = NULL;
cleanup:
	if (ret && x.bad_trace)
		ret = -1;
	finalize_all(&x);
	if (x.d.db)
		sqlite_db_abandon(&x.d);
	trace_model_free(&m);
	return ret;
}
