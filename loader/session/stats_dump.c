// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/array_grow.h"
#include "lib/key_index.h"
#include "loader/session/stats_dump.h"
#include "output/trace/trace_writer.h"

/* Only nonzero histogram buckets are stored: most syscalls fill a handful. */
int stats_write_syscall(struct trace_writer *w, const struct gs_syscall_stats_key *k,
			const struct gs_syscall_stats_val *v, uint64_t ts, __u32 flags)
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
	r->hdr.flags = flags;
	r->nr = k->nr;
	r->nbuckets = n;
	r->sums = v->sums;
	if (!r->sums.count)
		r->sums.min_ns = 0; /* not the map's "no minimum yet" sentinel */
	return trace_writer_append(w, &r->hdr);
}

/* Whether thread `tid` of `pid` has exited. Its /proc entry goes after BPF's exit programs have
 * run, so a gone thread's keys are ones BPF could not flush (ring buffer full): nothing else
 * touches them any more. */
bool stats_thread_gone(__u32 pid, __u32 tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/task/%u", pid, tid);
	return access(path, F_OK) && errno == ENOENT;
}

/* Both statistics maps: keys start with (pid, tid), values up to the larger one's size. */
struct thread_key {
	__u32 pid, tid;
};

typedef int (*write_stats_fn)(struct trace_writer *w, const void *key, const void *val, uint64_t ts,
			      __u32 flags);

struct stats_map {
	int fd;
	size_t key_size, val_size;
	write_stats_fn write;
};

/* Keys of exited threads seen during a dump, taken out of the map after it: deleting while
 * iterating would restart a hash map's iteration. */
struct gone_keys {
	void *keys;
	size_t n, cap, key_size;
};

static int note_gone(struct gone_keys *g, const void *key)
{
	void *slot = array_grow(&g->keys, &g->n, &g->cap, g->key_size);

	if (!slot)
		return -ENOMEM;
	memcpy(slot, key, g->key_size);
	return 0;
}

/* A key or value of either statistics map, sized for the larger. */
union any_stats_key {
	struct gs_syscall_stats_key s;
	struct gs_offcpu_stats_key o;
};

union any_stats_val {
	struct gs_syscall_stats_val s;
	struct gs_offcpu_stats_val o;
};

/* Entries per batch read: a hash map's batch returns whole buckets, and one larger than the
 * buffer makes it fail with ENOSPC (the buffer then grows). */
#define BATCH_ENTRIES 64

/* Keys and values of one batch read, laid out as the kernel writes them. */
struct batch_buf {
	unsigned char *keys, *vals;
	__u32 cap;
};

static int batch_grow(struct batch_buf *b, const struct stats_map *m, __u32 cap)
{
	free(b->keys);
	free(b->vals);
	b->keys = malloc(cap * m->key_size);
	b->vals = malloc(cap * m->val_size);
	b->cap = cap;
	return b->keys && b->vals ? 0 : -ENOMEM;
}

/* A thread seen in this sweep: whether it is gone, asked of /proc once per thread, not per key
 * (a thread has a key per syscall it made). */
static int gone_cached(struct key_index *seen, const struct thread_key *t, bool *gone)
{
	uint64_t id = (uint64_t)t->pid << 32 | t->tid;
	size_t v;

	if (key_index_find(seen, id, 0, &v)) {
		*gone = v;
		return 0;
	}
	*gone = stats_thread_gone(t->pid, t->tid);
	return key_index_put(seen, id, 0, *gone) ? -ENOMEM : 0;
}

struct dump_ctx {
	const struct stats_map *m;
	struct trace_writer *w;
	uint64_t ts;
	bool sweep;
	struct key_index seen;
	struct gone_keys gone;
};

/* One batch's entries: written as checkpoints, or noted as gone when sweeping. */
static int dump_entries(struct dump_ctx *c, const struct batch_buf *b, __u32 n)
{
	int err = 0;
	bool gone = false;

	for (__u32 i = 0; i < n && !err; i++) {
		const void *key = b->keys + i * c->m->key_size;

		if (c->sweep)
			err = gone_cached(&c->seen, key, &gone);
		if (!err && gone)
			err = note_gone(&c->gone, key);
		else if (!err)
			err = c->m->write(c->w, key, b->vals + i * c->m->val_size, c->ts, 0);
	}
	return err;
}

/* Every entry through batch reads: a few syscalls for the whole map where a key-by-key walk
 * took two per key (next key, lookup) at every interval of a live view. */
static int dump_batches(struct dump_ctx *c)
{
	struct batch_buf b = {0};
	__u64 token = 0;
	bool first = true, done = false;
	int err = batch_grow(&b, c->m, BATCH_ENTRIES);

	while (!err && !done) {
		__u32 n = b.cap;

		if (bpf_map_lookup_batch(c->m->fd, first ? NULL : &token, &token, b.keys, b.vals,
					 &n, NULL)) {
			if (errno == ENOSPC && !n) {
				err = batch_grow(&b, c->m, b.cap * 2);
				continue;
			}
			if (errno != ENOENT)
				err = -errno;
			done = true;
		}
		first = false;
		err = err ?: dump_entries(c, &b, n);
	}
	free(b.keys);
	free(b.vals);
	return err;
}

/* A checkpoint of every live thread's key; with `sweep`, the final totals of threads that
 * exited while the ring buffer was full (BPF could not flush them) and their keys out. */
static int dump_map(const struct stats_map *m, struct trace_writer *w, uint64_t ts, bool sweep)
{
	struct dump_ctx c = {
	    .m = m, .w = w, .ts = ts, .sweep = sweep, .gone.key_size = m->key_size};
	union any_stats_val val;
	int err = dump_batches(&c);

	for (size_t i = 0; i < c.gone.n && !err; i++) {
		const void *k = (const char *)c.gone.keys + i * c.gone.key_size;

		if (!bpf_map_lookup_and_delete_elem(m->fd, k, &val))
			err = m->write(w, k, &val, ts, GS_STATS_FINAL);
	}
	free(c.gone.keys);
	key_index_free(&c.seen);
	return err;
}

static int write_syscall_entry(struct trace_writer *w, const void *key, const void *val,
			       uint64_t ts, __u32 flags)
{
	return stats_write_syscall(w, key, val, ts, flags);
}

int stats_dump_syscalls(int map_fd, struct trace_writer *w, uint64_t ts, bool sweep)
{
	const struct stats_map m = {map_fd, sizeof(struct gs_syscall_stats_key),
				    sizeof(struct gs_syscall_stats_val), write_syscall_entry};

	return dump_map(&m, w, ts, sweep);
}

static int write_offcpu_entry(struct trace_writer *w, const void *key, const void *val, uint64_t ts,
			      __u32 flags)
{
	const struct gs_offcpu_stats_key *k = key;
	const struct gs_offcpu_stats_val *v = val;
	struct gs_offcpu_stats r = {
	    .hdr = {.type = GS_REC_OFFCPU_STATS,
		    .size = sizeof(r),
		    .pid = k->pid,
		    .tid = k->tid,
		    .flags = flags,
		    .ts = ts},
	};

	memcpy(r.ns, v->ns, sizeof(r.ns));
	memcpy(r.count, v->count, sizeof(r.count));
	return trace_writer_append(w, &r.hdr);
}

int stats_dump_offcpu(int map_fd, struct trace_writer *w, uint64_t ts, bool sweep)
{
	const struct stats_map m = {map_fd, sizeof(struct gs_offcpu_stats_key),
				    sizeof(struct gs_offcpu_stats_val), write_offcpu_entry};

	return dump_map(&m, w, ts, sweep);
}

/* Every key written and taken out of the map, so that the map counts again from zero. Keys are
 * read first and taken after: deleting while iterating would restart a hash map's iteration. A
 * call that ends between a value's copy and its deletion is not counted. */
static int take_map(const struct stats_map *m, struct trace_writer *w, uint64_t ts)
{
	struct gone_keys keys = {.key_size = m->key_size};
	union any_stats_key key, next;
	union any_stats_val val;
	void *prev = NULL;
	int err = 0;

	while (!err && bpf_map_get_next_key(m->fd, prev, &next) == 0) {
		memcpy(&key, &next, m->key_size);
		prev = &key;
		err = note_gone(&keys, &key);
	}
	if (!err && errno != ENOENT)
		err = -errno;
	for (size_t i = 0; i < keys.n && !err; i++) {
		const void *k = (const char *)keys.keys + i * keys.key_size;

		if (!bpf_map_lookup_and_delete_elem(m->fd, k, &val)) /* else gone meanwhile */
			err = m->write(w, k, &val, ts, 0);
	}
	free(keys.keys);
	return err;
}

int stats_take_syscalls(int map_fd, struct trace_writer *w, uint64_t ts)
{
	const struct stats_map m = {map_fd, sizeof(struct gs_syscall_stats_key),
				    sizeof(struct gs_syscall_stats_val), write_syscall_entry};

	return take_map(&m, w, ts);
}

int stats_take_offcpu(int map_fd, struct trace_writer *w, uint64_t ts)
{
	const struct stats_map m = {map_fd, sizeof(struct gs_offcpu_stats_key),
				    sizeof(struct gs_offcpu_stats_val), write_offcpu_entry};

	return take_map(&m, w, ts);
}

int stats_write_syscall_final(struct trace_writer *w, const struct gs_syscall_final *rec)
{
	struct gs_syscall_stats_key key = {.pid = rec->hdr.pid, .tid = rec->hdr.tid, .nr = rec->nr};

	if (rec->hdr.size < sizeof(*rec))
		return 0;
	return stats_write_syscall(w, &key, &rec->val, rec->hdr.ts, GS_STATS_FINAL);
}
