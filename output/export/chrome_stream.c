// SPDX-License-Identifier: MIT
/*
 * The record stream of a Chrome trace: the training steps (export_chrome_steps.c); the file read
 * again in order, each record written as it is read by the emitter of its kind (CUDA calls, GPU
 * records), the OS events (syscalls, off-CPU spans, process events, the bridge's loading pause)
 * here; then what comes from the model (operators, the samples' flame chart) and the track
 * names, known only once every record is seen.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "lib/json_writer.h"
#include "lib/syscall_names.h"
#include "output/export/chrome_events.h"
#include "output/export/chrome_stream.h"
#include "output/export/export_chrome_cuda.h"
#include "output/export/export_chrome_gpu.h"
#include "output/export/export_chrome_ops.h"
#include "output/export/export_chrome_python.h"
#include "output/export/export_chrome_steps.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/trace_model.h"
#include "output/trace/trace_reader.h"

static bool syscall_returns_bytes(const char *name)
{
	static const char *const io[] = {"read",   "write",    "pread64", "pwrite64", "readv",
					 "writev", "recvfrom", "sendto",  "recvmsg",  "sendmsg",
					 "preadv", "pwritev",  NULL};

	for (size_t i = 0; io[i]; i++)
		if (!strcmp(io[i], name))
			return true;
	return false;
}

static void syscall_args(struct chrome_ctx *c, const struct gs_syscall *s, const char *name)
{
	FILE *out = c->out;

	if (s->fd_ino || !strcmp(name, "close")) {
		const char *file =
		    trace_model_fd_name(c->names, s->hdr.pid, (uint32_t)s->args[0], s->fd_ino);

		fprintf(out, ", \"fd\": %" PRId64, (int64_t)(int32_t)s->args[0]);
		if (file) {
			fputs(", \"file\": ", out);
			json_print_string(out, file);
		}
	}
	if (syscall_returns_bytes(name)) {
		fprintf(out, ", \"bytes_requested\": %llu", (unsigned long long)s->args[2]);
		if (s->ret >= 0)
			fprintf(out, ", \"bytes\": %lld", (long long)s->ret);
	}
	if (s->ret < 0 && s->ret > -4096)
		fprintf(out, ", \"error\": \"%s\"", strerrorname_np((int)-s->ret) ?: "unknown");
	else
		fprintf(out, ", \"ret\": %lld", (long long)s->ret);
}

static int emit_syscall(struct chrome_ctx *c, const struct gs_syscall *s)
{
	char buf[32];
	const char *name = gs_syscall_name(s->nr, buf, sizeof(buf));

	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"X\", \"cat\": \"os_runtime\", \"name\": \"%s\", \"pid\": %u, "
		"\"tid\": %u, ",
		name, s->hdr.pid, s->hdr.tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, s->hdr.ts));
	fputs(", ", c->out);
	chrome_print_dur(c, s->dur_ns);
	fputs(", \"args\": {\"nr\": ", c->out);
	fprintf(c->out, "%u", s->nr);
	syscall_args(c, s, name);
	if (chrome_python_stack_args(c, s->hdr.pid, s->hdr.tid, s->hdr.ts))
		return -1;
	fputs("}}", c->out);
	return 0;
}

static int emit_offcpu(struct chrome_ctx *c, const struct gs_offcpu *o)
{
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"X\", \"cat\": \"off_cpu\", \"name\": \"off-cpu (%s)\", \"pid\": %u, "
		"\"tid\": %u, ",
		gs_offcpu_reason_name(o->reason), o->hdr.pid, o->hdr.tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, o->hdr.ts));
	fputs(", ", c->out);
	chrome_print_dur(c, o->dur_ns);
	fprintf(c->out, ", \"args\": {\"reason\": \"%s\"", gs_offcpu_reason_name(o->reason));
	if (chrome_python_offcpu_args(c, o))
		return -1;
	fputs("}}", c->out);
	return 0;
}

static void emit_instant(struct chrome_ctx *c, const struct gs_hdr *h, const char *name,
			 const char *detail)
{
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"process\", \"name\": \"%s\", "
		"\"pid\": %u, \"tid\": %u, ",
		name, h->pid, h->tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, h->ts));
	fputs(", \"args\": {\"detail\": ", c->out);
	json_print_string(c->out, detail);
	fputs("}}", c->out);
}

/* The pause gpuspy itself caused when it loaded the CUPTI bridge through this thread: an async
 * pair, since the thread's own off-CPU spans (its stops) fall inside it. */
static void bridge_load_event(struct chrome_ctx *c, const struct gs_bridge_load *l, const char *ph,
			      uint64_t ts)
{
	chrome_begin_event(c);
	fprintf(c->out,
		"{\"ph\": \"%s\", \"cat\": \"gpuspy\", \"name\": \"gpuspy: CUPTI bridge "
		"loaded\", \"id\": %u, \"pid\": %u, \"tid\": %u, ",
		ph, l->hdr.tid, l->hdr.pid, l->hdr.tid);
	chrome_print_us(c->out, "ts", chrome_rel(c, ts));
}

static void emit_bridge_load(struct chrome_ctx *c, const struct gs_bridge_load *l)
{
	if (l->outcome != GS_BRIDGE_LOAD_INJECTED || !l->hdr.tid || l->pause_ns > l->hdr.ts)
		return;
	bridge_load_event(c, l, "b", l->hdr.ts - l->pause_ns);
	fprintf(c->out,
		", \"args\": {\"pause_ns\": %llu, \"waited_for_safe_point_ns\": %llu, "
		"\"how\": ",
		(unsigned long long)l->pause_ns, (unsigned long long)l->wait_ns);
	json_print_string(c->out, l->message);
	fputs("}}", c->out);
	bridge_load_event(c, l, "e", l->hdr.ts);
	fputs("}", c->out);
}

static int emit_record(struct chrome_ctx *c, const struct gs_hdr *h)
{
	char detail[160];

	if (h->type == GS_REC_BRIDGE_LOAD) {
		emit_bridge_load(c, (const void *)h);
		return 0;
	}
	if (gpu_model_takes(h->type))
		return chrome_gpu_record(c, h);
	switch (h->type) {
	case GS_REC_CUDA_CALL:
		return chrome_cuda_call(c, (const void *)h);
	case GS_REC_SYSCALL:
		return emit_syscall(c, (const void *)h);
	case GS_REC_OFFCPU:
		return emit_offcpu(c, (const void *)h);
	case GS_REC_FORK: {
		const struct gs_fork *f = (const void *)h;

		snprintf(detail, sizeof(detail), "%s %u/%u",
			 f->hdr.flags & GS_FORK_THREAD ? "thread" : "process", f->child_pid,
			 f->child_tid);
		emit_instant(c, h, f->hdr.flags & GS_FORK_THREAD ? "clone" : "fork", detail);
		break;
	}
	case GS_REC_EXEC:
		emit_instant(c, h, "exec", ((const struct gs_exec *)h)->filename);
		break;
	case GS_REC_EXIT:
		if (h->flags & GS_EXIT_GROUP) {
			snprintf(detail, sizeof(detail), "status %d",
				 ((const struct gs_exit *)h)->exit_code);
			emit_instant(c, h, "exit", detail);
		}
		break;
	default:
		break;
	}
	return 0;
}

static void emit_names(struct chrome_ctx *c, const struct trace_model *m)
{
	char label[64];

	for (size_t i = 0; i < m->nprocs; i++) {
		snprintf(label, sizeof(label), "%s (%u)",
			 m->procs[i].comm[0] ? m->procs[i].comm : "?", m->procs[i].pid);
		chrome_metadata(c, "process_name", m->procs[i].pid, 0, label);
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		snprintf(label, sizeof(label), "%s (%u)",
			 m->threads[i].comm[0] ? m->threads[i].comm : "?", m->threads[i].tid);
		chrome_metadata(c, "thread_name", m->threads[i].pid, m->threads[i].tid, label);
	}
	chrome_gpu_names(c);
	chrome_python_names(c);
}

int chrome_write_events(struct chrome_ctx *c, const char *path, char *err, size_t errlen)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	/* the steps before the records: a Kineto step and the first event in it may start and end
	 * together, and viewers nest slices that do in file order */
	if (chrome_steps(c, err, errlen) || trace_reader_open(path, &r, err, errlen))
		return -1;
	err[0] = '\0';
	trace_reader_set_filter(r, c->names->filter); /* the model's processes, as it read them */
	while ((ret = trace_reader_next(r, &h)) > 0) {
		if (emit_record(c, h)) {
			snprintf(err, errlen, "out of memory");
			ret = -1;
			break;
		}
	}
	/* operators and samples are the model's, sorted by thread: written after the stream */
	if (ret == 0 && (chrome_ops(c) || chrome_python_samples(c))) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	if (ret == 0)
		emit_names(c, c->names);
	if (ret < 0 && !err[0])
		snprintf(err, errlen, "%s", trace_reader_error(r));
	trace_reader_close(r);
	chrome_cuda_free(c);
	chrome_gpu_free(c);
	chrome_python_free(c);
	return ret < 0 ? -1 : 0;
}
