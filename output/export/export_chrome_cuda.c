// SPDX-License-Identifier: MIT
/*
 * CUDA API calls on the Chrome timeline: one complete event per call on its thread (a
 * runtime call holds the driver calls it made, nested spans as the real stack was), with
 * the kernel, shapes, bytes and pointers as args, and per process a "GPU memory" counter
 * of what is outstanding by kind. Kernel names come from the model of pass 1; the memory
 * counter and the runtime/driver launch pairing are replayed here in file order.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "lib/json_writer.h"
#include "output/export/chrome_events.h"
#include "output/export/export_chrome_cuda.h"
#include "output/export/export_chrome_gpu.h"
#include "output/export/export_chrome_ops.h"
#include "output/export/export_chrome_python.h"
#include "output/model/gpu/cuda_kernels.h"
#include "output/model/trace_model.h"

struct chrome_cuda {
	struct gpu_mem mem;
	struct cuda_nesting nesting;
};

static void print_dims(FILE *out, const char *key, const uint32_t d[3])
{
	fprintf(out, ", \"%s\": [%u, %u, %u]", key, d[0], d[1], d[2]);
}

static void launch_args(struct chrome_ctx *c, const struct gs_cuda_call *call,
			const struct cuda_call_info *info, uint64_t inner)
{
	const struct cuda_name *n =
	    cuda_model_kernel(&c->names->cuda, call->hdr.pid, info->func, inner);
	char placeholder[48];

	if (!n)
		cuda_kernel_placeholder(placeholder, sizeof(placeholder), false, info->func);
	fputs(", \"kernel\": ", c->out);
	json_print_string(c->out, n ? n->display : placeholder);
	fputs(", \"mangled\": ", c->out);
	json_print_string(c->out, n ? n->mangled : placeholder);
	print_dims(c->out, "grid", info->grid);
	print_dims(c->out, "block", info->block);
	fprintf(c->out, ", \"shared_mem\": %" PRIu64, info->shmem);
}

/* The handle a naming call named or made, and the kernel it stands for when known. */
static void naming_args(struct chrome_ctx *c, const struct gs_cuda_call *call,
			const struct cuda_call_info *info)
{
	const struct cuda_name *n;

	if (!info->func)
		return;
	fprintf(c->out, ", \"handle\": \"0x%" PRIx64 "\"", info->func);
	n = cuda_model_kernel(&c->names->cuda, call->hdr.pid, info->func, 0);
	if (!n)
		return;
	fputs(", \"kernel\": ", c->out);
	json_print_string(c->out, n->display);
	fputs(", \"mangled\": ", c->out);
	json_print_string(c->out, n->mangled);
}

/* The args of each kind of call, after the ones every call has. */
static void op_args(struct chrome_ctx *c, const struct gs_cuda_call *call,
		    const struct cuda_call_info *info, uint64_t inner)
{
	FILE *out = c->out;

	switch (info->op) {
	case GS_CUDA_OP_LAUNCH:
		launch_args(c, call, info, inner);
		break;
	case GS_CUDA_OP_NAMING:
		naming_args(c, call, info);
		break;
	case GS_CUDA_OP_GRAPH:
		fprintf(out, ", \"graph\": \"0x%" PRIx64 "\"", info->func);
		break;
	case GS_CUDA_OP_MEMCPY:
		fprintf(out, ", \"bytes\": %" PRIu64 ", \"kind\": \"%s\"", info->bytes,
			cuda_copy_kind_name(gpu_mem_copy_kind(&c->cuda->mem, call->hdr.pid, info)));
		break;
	case GS_CUDA_OP_MEMSET:
		fprintf(out, ", \"bytes\": %" PRIu64 ", \"kind\": \"memset\"", info->bytes);
		break;
	case GS_CUDA_OP_ALLOC:
		fprintf(out,
			", \"ptr\": \"0x%" PRIx64 "\", \"bytes\": %" PRIu64 ", \"memory\": \"%s\"",
			info->ptr, info->bytes, cuda_mem_kind_name(info->mem_kind));
		break;
	case GS_CUDA_OP_FREE:
		fprintf(out, ", \"ptr\": \"0x%" PRIx64 "\"", info->ptr);
		break;
	default:
		if (info->event)
			fprintf(out, ", \"event\": \"0x%" PRIx64 "\"", info->event);
		break;
	}
	/* Kineto's tools take any event with a "stream" arg for GPU work */
	if (info->has_stream)
		fprintf(out, ", \"%s\": %" PRIu64, c->kineto ? "stream handle" : "stream",
			info->stream);
}

static int emit_span(struct chrome_ctx *c, const struct gs_cuda_call *call,
		     const struct cuda_call_info *info, uint64_t inner)
{
	bool nested = call->hdr.flags & GS_CUDA_NESTED;
	const char *name = info->probe->name;
	char buf[48], kname[80];

	if (c->kineto)
		name = chrome_kineto_api_name(name, nested, kname, sizeof(kname));
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %u, \"tid\": %u, ",
		info->probe->runtime ? "cuda_runtime" : "cuda_driver", name, call->hdr.pid,
		call->hdr.tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, call->hdr.ts));
	fputs(", ", c->out);
	chrome_print_dur(c, call->dur_ns);
	fputs(", \"args\": {\"depth\": ", c->out);
	fprintf(c->out, "%u", call->depth);
	/* the function the uprobe saw, when Kineto's name is another */
	if (name != info->probe->name)
		fprintf(c->out, ", \"symbol\": \"%s\"", info->probe->name);
	op_args(c, call, info, inner);
	if (!nested)
		chrome_gpu_call_args(c, call);
	chrome_op_external_id(c, call->hdr.pid, call->hdr.tid, call->hdr.ts);
	if (cuda_call_failed(call, info))
		fprintf(c->out, ", \"error\": \"%s\"",
			cuda_error_name(info->probe->runtime, call->ret, buf, sizeof(buf)));
	if (nested)
		fputs(", \"nested\": true", c->out);
	/* a nested call ran under the same stack as the span around it, which has it */
	else if (chrome_python_cuda_args(c, call))
		return -1;
	fputs("}}", c->out);
	return 0;
}

/* The process's outstanding memory by kind, after an allocation or free returned. */
static void emit_counter(struct chrome_ctx *c, const struct gs_cuda_call *call,
			 const struct gpu_mem_usage *u)
{
	chrome_begin_event(c);
	fprintf(c->out, "{\"ph\": \"C\", \"name\": \"GPU memory\", \"pid\": %u, \"tid\": %u, ",
		call->hdr.pid, call->hdr.tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, call->hdr.ts + call->dur_ns));
	if (c->kineto)
		fputs(", \"cat\": \"gpu_memory\"", c->out);
	/* Kineto's tools read a "device" arg as a device index */
	fprintf(c->out,
		c->kineto ? ", \"args\": {\"device memory\": %" PRIu64
			    ", \"pinned memory\": %" PRIu64 ", \"managed memory\": %" PRIu64 "}}"
			  : ", \"args\": {\"device\": %" PRIu64 ", \"pinned\": %" PRIu64
			    ", \"managed\": %" PRIu64 "}}",
		u->kind[GS_MEM_DEVICE].outstanding_bytes, u->kind[GS_MEM_PINNED].outstanding_bytes,
		u->kind[GS_MEM_MANAGED].outstanding_bytes);
}

int chrome_cuda_call(struct chrome_ctx *c, const struct gs_cuda_call *call)
{
	const struct gpu_mem_usage *u = NULL;
	struct cuda_call_info info;
	bool oom = false;
	uint64_t inner;

	if (!cuda_call_decode(call, &info))
		return 0; /* a function this gpuspy does not know: no name to show */
	if (!c->cuda && !(c->cuda = calloc(1, sizeof(*c->cuda))))
		return -1;
	inner = cuda_nesting_feed(&c->cuda->nesting, call, &info, &oom);
	/* args first: a copy is classified against the blocks live before it */
	if (emit_span(c, call, &info, inner))
		return -1;
	if (!(call->hdr.flags & GS_CUDA_NESTED) && !cuda_call_failed(call, &info))
		u = gpu_mem_apply(&c->cuda->mem, call, &info, &oom);
	if (u)
		emit_counter(c, call, u);
	return oom ? -1 : 0;
}

void chrome_cuda_free(struct chrome_ctx *c)
{
	if (!c->cuda)
		return;
	gpu_mem_free(&c->cuda->mem);
	cuda_nesting_free(&c->cuda->nesting);
	free(c->cuda);
	c->cuda = NULL;
}
