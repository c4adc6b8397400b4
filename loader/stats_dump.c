// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "stats_dump.h"
#include "trace_writer.h"

/* Only nonzero histogram buckets are stored: most syscalls fill a handful. */
static int write_syscall_stats(struct trace_writer *w, const struct gs_syscall_stats_key *k,
			       const struct gs_syscall_stats_val *v, uint64_t ts)
{
	union {
		struct gs_syscall_stats rec;
		unsigned char bytes[sizeof(struct gs_syscall_stats) +
				    GS_HIST_BUCKETS * sizeof(struct gs_hist_bucket)];
	} u;
	struct gs_syscall_stats *r = &u.rec;
	__u32 n = 0;

	memset(r, 0, sizeof(*r));
	for (__u32 b = 0; b < GS_HIST_BUCKETS; b++) {
		if (!v->hist[b])
			continue;
		r->buckets[n].bucket = b;
		r->buckets[n].count = v->hist[b];
		n++;
	}
	r->hdr.type = GS_REC_SYSCALL_STATS;
	r->hdr.size = (__u16)(sizeof(*r) + n * sizeof(r->buckets[0]));
	r->hdr.pid = k->pid;
	r->hdr.tid = k->tid;
	r->hdr.ts = ts;
	r->nr = k->nr;
	r->nbuckets = n;
	r->sums = v->sums;
	if (!r->sums.count)
		r->sums.min_ns = 0; /* not the map's "no minimum yet" sentinel */
	return trace_writer_append(w, &r->hdr);
}

int stats_dump_syscalls(int map_fd, struct trace_writer *w, uint64_t ts)
{
	struct gs_syscall_stats_key key, next;
	struct gs_syscall_stats_val val;
	void *prev = NULL;
	int err;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, &val))
			continue; /* deleted meanwhile */
		err = write_syscall_stats(w, &key, &val, ts);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

int stats_dump_offcpu(int map_fd, struct trace_writer *w, uint64_t ts)
{
	struct gs_offcpu_stats_key key, next;
	struct gs_offcpu_stats_val val;
	void *prev = NULL;
	int err;

	while (bpf_map_get_next_key(map_fd, prev, &next) == 0) {
		struct gs_offcpu_stats r = {
		    .hdr = {.type = GS_REC_OFFCPU_STATS, .size = sizeof(r), .ts = ts},
		};

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, &val))
			continue;
		r.hdr.pid = key.pid;
		r.hdr.tid = key.tid;
		memcpy(r.ns, val.ns, sizeof(r.ns));
		memcpy(r.count, val.count, sizeof(r.count));
		err = trace_writer_append(w, &r.hdr);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}
