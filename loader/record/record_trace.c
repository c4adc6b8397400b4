// SPDX-License-Identifier: MIT
/* What a recording writes into the trace besides the BPF records: the file header, how the
 * recording was made, thread names and loss counters. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "lib/clocks.h"
#include "lib/messages.h"
#include "lib/out_file.h"
#include "loader/bridge/cupti_link.h"
#include "loader/record/record_trace.h"
#include "loader/record/recorder.h"
#include "loader/session/bpf_session.h"
#include "output/trace/trace_writer.h"

int recorder_write_trace_info(struct recorder *r, uint64_t now)
{
	const struct record_opts *o = &r->opts;
	struct gs_trace_info rec = {
	    .hdr = {.type = GS_REC_TRACE_INFO, .ts = now, .pid = (uint32_t)getpid()},
	    .osrt_threshold_ns = o->osrt_threshold_ns,
	    .offcpu_threshold_ns = o->offcpu_threshold_ns,
	    .follow = o->follow,
	    .mode = o->command	   ? GS_MODE_LAUNCH
		    : o->trace_all ? GS_MODE_SYSTEM
				   : GS_MODE_ATTACH,
	};
	char command[1023] = "", *p = command, *end = command + sizeof(command);

	for (char **a = o->command; a && *a && p < end; a++)
		p += snprintf(p, (size_t)(end - p), "%s%s", a == o->command ? "" : " ", *a);
	for (size_t i = 0; i < o->npids && p < end; i++)
		p += snprintf(p, (size_t)(end - p), "%s%d", i ? "," : "-p ", o->pids[i]);
	if (o->trace_all)
		snprintf(p, (size_t)(end - p), "-a");
	return trace_writer_append_tail(r->writer, &rec.hdr, sizeof(rec), command, sizeof(command));
}

int recorder_open_trace(struct recorder *r, uint64_t now)
{
	struct gs_file_header h = {
	    .version_major = GS_TRACE_VERSION_MAJOR,
	    .version_minor = GS_TRACE_VERSION_MINOR,
	    .header_size = sizeof(h),
	    .created_realtime_ns = gs_realtime_ns(),
	    .created_monotonic_ns = now,
	};
	struct utsname u;
	char why[128];
	int fd, err;

	memcpy(h.magic, GS_TRACE_MAGIC, sizeof(h.magic));
	if (!uname(&u)) {
		snprintf(h.hostname, sizeof(h.hostname), "%.63s", u.nodename);
		snprintf(h.kernel_release, sizeof(h.kernel_release), "%.63s", u.release);
	}
	fd = out_file_create(r->opts.output, r->opts.overwrite, why, sizeof(why));
	if (fd < 0) {
		err = -errno;
		gs_error("cannot create %s: %s%s", r->opts.output, why,
			 err == -EEXIST && !r->opts.overwrite ? " (use -f to overwrite)" : "");
		return err;
	}
	err = trace_writer_open(fd, &h, &r->writer);
	if (err)
		gs_error("cannot create %s: %s", r->opts.output, strerror(-err));
	return err ? err : recorder_write_trace_info(r, now);
}

int recorder_write_comm(void *ctx, pid_t pid, pid_t tid, const char *comm)
{
	struct recorder *r = ctx;
	struct gs_comm rec = {
	    .hdr = {.type = GS_REC_COMM,
		    .size = sizeof(rec),
		    .pid = (uint32_t)pid,
		    .tid = (uint32_t)tid,
		    .ts = gs_monotonic_ns()},
	};

	snprintf(rec.comm, sizeof(rec.comm), "%.*s", GS_COMM_LEN - 1, comm);
	return trace_writer_append(r->writer, &rec.hdr);
}

/* GPU records lost on gpuspy's side: in BPF (ring buffer full) and between a bridge's
 * batches (sequence gaps). Cumulative, like the LOSS record. */
static int write_gpu_losses(struct recorder *r, const struct loss_counts *now, uint64_t ts,
			    bool warn)
{
	struct gs_gpu_loss rec = {.hdr = {.type = GS_REC_GPU_LOSS, .size = sizeof(rec), .ts = ts}};

	rec.batches = now->gpu_batches - r->loss_base.gpu_batches;
	rec.records = now->gpu_records - r->loss_base.gpu_records;
	rec.gaps = now->gpu_gaps - r->loss_base.gpu_gaps;
	if (warn && (rec.batches || rec.gaps))
		gs_warn("lost %llu GPU record batches (%llu records, ring buffer full) and %llu in "
			"transit",
			(unsigned long long)rec.batches, (unsigned long long)rec.records,
			(unsigned long long)rec.gaps);
	return trace_writer_append(r->writer, &rec.hdr);
}

void recorder_read_losses(struct recorder *r, struct loss_counts *out)
{
	bpf_session_losses(r->session, out->counts);
	out->counts[GS_LOSS_LIBS_NOT_HELD] += r->holds_cut_short;
	bpf_session_gpu_losses(r->session, &out->gpu_batches, &out->gpu_records);
	out->gpu_gaps = cupti_link_gaps(r->cupti);
}

int recorder_write_loss_counts(struct recorder *r, const struct loss_counts *now, uint64_t ts,
			       bool warn)
{
	struct gs_loss rec = {.hdr = {.type = GS_REC_LOSS, .size = sizeof(rec), .ts = ts}};
	struct gs_loss_more more = {
	    .hdr = {.type = GS_REC_LOSS_MORE, .size = sizeof(more), .ts = ts}};
	int err;

	for (int k = 0; k < GS_LOSS_NKINDS; k++) {
		uint64_t n = now->counts[k] - r->loss_base.counts[k];

		if (k < GS_LOSS_SLOTS)
			rec.count[k] = n;
		else
			more.count[k - GS_LOSS_SLOTS] = n;
		if (n && warn)
			gs_warn("lost %llu %s", (unsigned long long)n, gs_loss_kind_name(k));
	}
	err = trace_writer_append(r->writer, &more.hdr);
	if (err)
		return err;
	if (r->cupti) {
		err = write_gpu_losses(r, now, ts, warn);
		if (err)
			return err;
	}
	return trace_writer_append(r->writer, &rec.hdr);
}

int recorder_write_losses(struct recorder *r, uint64_t ts, bool warn)
{
	struct loss_counts now;

	recorder_read_losses(r, &now);
	return recorder_write_loss_counts(r, &now, ts, warn);
}
