// SPDX-License-Identifier: MIT
/*
 * The Perfetto exporter: the Chrome writer's output goes to a stream of ours (fopencookie), cut
 * there into event objects, each parsed (tef_event.c) and written as TracePackets at once. Only
 * one event's text (two while a GPU op waits for its flow), the interned strings (bounded,
 * pf_intern.h) and the set of tracks already described are held. Field numbers are REFERENCE.md
 * §3's; the interned entries' and debug annotations' inner ones Perfetto's published schema's,
 * as docs/gpuspy_perfetto.proto lists them.
 */
#include <stdlib.h>
#include <string.h>
#include "output/export/perfetto/export_perfetto.h"
#include "output/export/perfetto/pb_writer.h"
#include "output/export/perfetto/pf_intern.h"
#include "output/export/perfetto/tef_event.h"

enum {
	TRACE_PACKET = 1,
	PKT_TIMESTAMP = 8,
	PKT_SEQUENCE_ID = 10,
	PKT_TRACK_EVENT = 11,
	PKT_INTERNED_DATA = 12,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_TRACK_DESCRIPTOR = 60,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT_UUID = 5,
	TD_COUNTER = 8,
	PD_PID = 1,
	PD_PROCESS_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_THREAD_NAME = 5,
	TE_CATEGORY_IIDS = 3,
	TE_DEBUG_ANNOTATIONS = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_COUNTER_VALUE = 30,
	TE_FLOW_IDS = 47,
	TE_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1,
	TYPE_SLICE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,
	ID_EVENT_CATEGORIES = 1,
	ID_EVENT_NAMES = 2,
	ID_DEBUG_ANNOTATION_NAMES = 3,
	IID = 1, /* EventName, EventCategory, DebugAnnotationName: iid 1, name 2 */
	IID_NAME = 2,
	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_LEGACY_JSON = 9,
};

#define SEQUENCE_ID 1 /* one writer, one sequence */
/* the Chrome writer's numbering (export_chrome_gpu.c, export_chrome_python.c): a pid above
 * PID_MAX_LIMIT is a GPU, a tid at or above 2^23 a track of its own (syncs, samples), and
 * neither is a process or thread Perfetto should list as one */
#define FAKE_PID_BASE 4194304u
#define FAKE_TID_BASE (1u << 23)

struct pf_track {
	uint64_t key, uuid;
};

struct pf_writer {
	FILE *out;
	struct pb_buf pkt, ev, interned, msg, sub, outbuf;
	struct pf_intern names, cats, keys;
	bool cleared;		 /* the next event packet says its incremental state was cleared */
	struct pf_track *tracks; /* tracks already described (open addressing, key 0: empty) */
	size_t ntracks, tracks_cap;
	char *text;	    /* the event being cut from the stream */
	char *held, *spare; /* a GPU op waiting for its flow end, and the next event's room */
	size_t held_len, held_cap, spare_cap;
	size_t len, cap;
	int depth;
	bool in_array; /* the container at depth 2 is an array: traceEvents */
	bool in_str, escaped, failed, bad_event;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	/* splitmix64 of both halves: track keys with no structure to collide on */
	uint64_t z = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (z ^ (z >> 31)) | 1; /* never 0 (the empty slot) */
}

/* A GPU's tracks are keyed apart from a process's of the same number: the Chrome dialect numbers
 * a GPU by its device index, which can be a pid too. */
static uint64_t process_key(uint64_t pid, bool gpu)
{
	return mix(pid, gpu ? UINT64_MAX - 1 : UINT64_MAX);
}

static uint64_t thread_key(uint64_t pid, uint64_t tid, bool gpu)
{
	return mix(pid ^ (gpu ? 1ull << 63 : 0), tid);
}

/* The Chrome writer's GPU tracks: the GPU operations and the flows' ends on them, or a number
 * above every pid (a GPU per process). */
static bool on_gpu(const struct tef_event *e)
{
	return e->pid >= FAKE_PID_BASE || e->ph == 'f' || !strcmp(e->cat, "kernel") ||
	       !strncmp(e->cat, "gpu_", 4) || !strcmp(e->cat, "cuda_sync");
}

static uint64_t name_hash(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The packets go out in blocks of this size: one fwrite per packet cost a tenth of the time. */
#define OUT_BLOCK (64 * 1024)

static void flush_out(struct pf_writer *w)
{
	if (w->outbuf.len && fwrite(w->outbuf.p, 1, w->outbuf.len, w->out) != w->outbuf.len)
		w->failed = true;
	pb_reset(&w->outbuf);
}

/* w->pkt as one Trace.packet field. */
static void write_packet(struct pf_writer *w)
{
	if (w->pkt.oom) {
		w->failed = true;
		return;
	}
	pb_message(&w->outbuf, TRACE_PACKET, &w->pkt);
	if (w->outbuf.oom)
		w->failed = true;
	if (w->outbuf.len >= OUT_BLOCK)
		flush_out(w);
}

/* The uuid of the track `key` stands for, and whether it is new (now counted as described).
 * Uuids are numbered from 1 rather than the keys themselves: a small varint on every event
 * instead of ten bytes. */
static bool track_new(struct pf_writer *w, uint64_t key, uint64_t *uuid)
{
	size_t i, mask;

	*uuid = 0;
	if ((w->ntracks + 1) * 2 > w->tracks_cap) {
		size_t cap = w->tracks_cap ? w->tracks_cap * 2 : 256;
		struct pf_track *t = calloc(cap, sizeof(*t));

		if (!t) {
			w->failed = true;
			return false;
		}
		for (size_t k = 0; k < w->tracks_cap; k++) {
			if (!w->tracks[k].key)
				continue;
			for (i = w->tracks[k].key & (cap - 1); t[i].key; i = (i + 1) & (cap - 1))
				;
			t[i] = w->tracks[k];
		}
		free(w->tracks);
		w->tracks = t;
		w->tracks_cap = cap;
	}
	mask = w->tracks_cap - 1;
	for (i = key & mask; w->tracks[i].key; i = (i + 1) & mask) {
		if (w->tracks[i].key == key) {
			*uuid = w->tracks[i].uuid;
			return false;
		}
	}
	w->tracks[i].key = key;
	w->tracks[i].uuid = *uuid = ++w->ntracks;
	return true;
}

/* The uuid of a track already described, or 0. */
static uint64_t track_find(const struct pf_writer *w, uint64_t key)
{
	size_t mask = w->tracks_cap - 1;

	if (!w->tracks_cap)
		return 0;
	for (size_t i = key & mask; w->tracks[i].key; i = (i + 1) & mask)
		if (w->tracks[i].key == key)
			return w->tracks[i].uuid;
	return 0;
}

/* A TrackDescriptor packet from w->msg (the descriptor's fields). */
static void write_descriptor(struct pf_writer *w)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, PKT_SEQUENCE_ID, SEQUENCE_ID);
	pb_message(&w->pkt, PKT_TRACK_DESCRIPTOR, &w->msg);
	write_packet(w);
}

/* A process's track (a GPU's: named, but no process to Perfetto); `name` NULL on first sight:
 * the names come last in the Chrome stream, and the descriptor is sent again with them. */
static uint64_t describe_process(struct pf_writer *w, uint64_t pid, bool gpu, const char *name)
{
	uint64_t uuid;

	if (!track_new(w, process_key(pid, gpu), &uuid) && !name)
		return uuid;
	pb_reset(&w->msg);
	pb_uint(&w->msg, TD_UUID, uuid);
	if (gpu) {
		if (name)
			pb_string(&w->msg, TD_NAME, name);
	} else {
		pb_reset(&w->sub);
		pb_uint(&w->sub, PD_PID, pid);
		if (name)
			pb_string(&w->sub, PD_PROCESS_NAME, name);
		pb_message(&w->msg, TD_PROCESS, &w->sub);
	}
	write_descriptor(w);
	return uuid;
}

/* A thread's track, or a GPU stream's, or one of the Chrome writer's own under a process (CPU
 * samples, syncs): named, but no thread to Perfetto. */
static uint64_t describe_thread(struct pf_writer *w, uint64_t pid, uint64_t tid, bool gpu,
				const char *name)
{
	uint64_t uuid, parent = describe_process(w, pid, gpu, NULL);

	if (!track_new(w, thread_key(pid, tid, gpu), &uuid) && !name)
		return uuid;
	pb_reset(&w->msg);
	pb_uint(&w->msg, TD_UUID, uuid);
	pb_uint(&w->msg, TD_PARENT_UUID, parent);
	if (gpu || tid >= FAKE_TID_BASE) {
		if (name)
			pb_string(&w->msg, TD_NAME, name);
	} else {
		pb_reset(&w->sub);
		pb_uint(&w->sub, THD_PID, pid);
		pb_uint(&w->sub, THD_TID, tid);
		if (name)
			pb_string(&w->sub, THD_THREAD_NAME, name);
		pb_message(&w->msg, TD_THREAD, &w->sub);
	}
	write_descriptor(w);
	return uuid;
}

/* A named track under the process: a counter's ("GPU memory device") or an async pair's. */
static uint64_t describe_child(struct pf_writer *w, uint64_t pid, const char *name, const char *key,
			       uint64_t id, bool counter)
{
	uint64_t parent = describe_process(w, pid, false, NULL), uuid;
	char label[256];

	if (!track_new(w, mix(parent, name_hash(key, name_hash(name, id))), &uuid))
		return uuid;
	snprintf(label, sizeof(label), "%s%s%s", name, key[0] ? " " : "", key);
	pb_reset(&w->msg);
	pb_uint(&w->msg, TD_UUID, uuid);
	pb_uint(&w->msg, TD_PARENT_UUID, parent);
	pb_string(&w->msg, TD_NAME, label);
	if (counter) {
		pb_reset(&w->sub);
		pb_message(&w->msg, TD_COUNTER, &w->sub); /* an empty CounterDescriptor */
	}
	write_descriptor(w);
	return uuid;
}

/* The iid of s in t, its InternedData entry (field `field`) added to the packet's when new. */
static uint64_t intern(struct pf_writer *w, struct pf_intern *t, uint32_t field, const char *s)
{
	bool fresh;
	uint64_t iid = pf_intern_get(t, s, &fresh);

	if (!iid) {
		w->failed = true;
		return 0;
	}
	if (fresh) {
		pb_reset(&w->sub);
		pb_uint(&w->sub, IID, iid);
		pb_string(&w->sub, IID_NAME, s);
		pb_message(&w->interned, field, &w->sub);
	}
	return iid;
}

/* Starts a TrackEvent in w->ev: the interned strings it needs go to w->interned. */
static void event_start(struct pf_writer *w, int type, uint64_t track)
{
	/* cleared before the event names any string, so none of its ids is stale */
	if (w->names.count + w->cats.count + w->keys.count > PF_INTERN_MAX) {
		pf_intern_clear(&w->names);
		pf_intern_clear(&w->cats);
		pf_intern_clear(&w->keys);
		w->cleared = true;
	}
	pb_reset(&w->ev);
	pb_reset(&w->interned);
	pb_uint(&w->ev, TE_TYPE, (uint64_t)type);
	pb_uint(&w->ev, TE_TRACK_UUID, track);
}

static void event_name(struct pf_writer *w, const struct tef_event *e)
{
	if (e->cat[0])
		pb_uint(&w->ev, TE_CATEGORY_IIDS, intern(w, &w->cats, ID_EVENT_CATEGORIES, e->cat));
	pb_uint(&w->ev, TE_NAME_IID, intern(w, &w->names, ID_EVENT_NAMES, e->name));
}

static void event_args(struct pf_writer *w, const struct tef_event *e)
{
	struct tef_arg a;
	char *pos = (char *)e->args;
	struct pb_buf da = {0};

	if (!pos)
		return;
	while (tef_next_arg(e, &pos, &a) > 0) {
		pb_reset(&da);
		pb_uint(&da, DA_NAME_IID, intern(w, &w->keys, ID_DEBUG_ANNOTATION_NAMES, a.key));
		switch (a.kind) {
		case TEF_ARG_INT:
			pb_int(&da, DA_INT, a.i);
			break;
		case TEF_ARG_DOUBLE:
			pb_double(&da, DA_DOUBLE, a.d);
			break;
		case TEF_ARG_BOOL:
			pb_uint(&da, DA_BOOL, a.b);
			break;
		case TEF_ARG_STRING:
			pb_string(&da, DA_STRING, a.s);
			break;
		case TEF_ARG_JSON:
			pb_string(&da, DA_LEGACY_JSON, a.s);
			break;
		}
		pb_message(&w->ev, TE_DEBUG_ANNOTATIONS, &da);
	}
	if (da.oom)
		w->failed = true;
	pb_free(&da);
}

static void event_write(struct pf_writer *w, uint64_t rel_ns)
{
	pb_reset(&w->pkt);
	pb_uint(&w->pkt, PKT_TIMESTAMP, rel_ns);
	pb_uint(&w->pkt, PKT_SEQUENCE_ID, SEQUENCE_ID);
	pb_uint(&w->pkt, PKT_SEQUENCE_FLAGS,
		SEQ_NEEDS_INCREMENTAL_STATE | (w->cleared ? SEQ_INCREMENTAL_STATE_CLEARED : 0));
	w->cleared = false;
	if (w->interned.len)
		pb_message(&w->pkt, PKT_INTERNED_DATA, &w->interned);
	pb_message(&w->pkt, PKT_TRACK_EVENT, &w->ev);
	write_packet(w);
}

static void convert_counter(struct pf_writer *w, const struct tef_event *e)
{
	struct tef_arg a;
	char *pos = (char *)e->args;

	while (pos && tef_next_arg(e, &pos, &a) > 0) {
		if (a.kind != TEF_ARG_INT && a.kind != TEF_ARG_DOUBLE)
			continue;
		event_start(w, TYPE_COUNTER, describe_child(w, e->pid, e->name, a.key, 0, true));
		pb_int(&w->ev, TE_COUNTER_VALUE, a.kind == TEF_ARG_INT ? a.i : (int64_t)a.d);
		event_write(w, e->ts_ns);
	}
}

static void convert_metadata(struct pf_writer *w, const struct tef_event *e)
{
	struct tef_arg a;
	char *pos = (char *)e->args;

	if (!pos || tef_next_arg(e, &pos, &a) <= 0 || a.kind != TEF_ARG_STRING)
		return;
	/* a GPU's when its events were seen as a GPU's (a device index can be a pid too) */
	if (!strcmp(e->name, "process_name"))
		describe_process(w, e->pid, track_find(w, process_key(e->pid, true)), a.s);
	else if (!strcmp(e->name, "thread_name"))
		describe_thread(w, e->pid, e->tid, track_find(w, thread_key(e->pid, e->tid, true)),
				a.s);
}

/* Chrome's flows are told apart by category as well as id, Perfetto's by id alone: the
 * forward/backward flows (ids from 1, as the ac2g flows' first correlation ids) get the top bit. */
static uint64_t flow_id(const struct tef_event *e)
{
	return strcmp(e->cat, "fwdbwd") ? e->id : e->id | 1ull << 63;
}

/* A slice, or an instant; flow_end: the flow it terminates, or 0. */
static void convert_slice(struct pf_writer *w, const struct tef_event *e, uint64_t flow_end)
{
	uint64_t track = describe_thread(w, e->pid, e->tid, on_gpu(e), NULL);

	event_start(w, e->ph == 'i' ? TYPE_INSTANT : TYPE_SLICE_BEGIN, track);
	event_name(w, e);
	event_args(w, e);
	if (flow_end)
		pb_fixed64(&w->ev, TE_TERMINATING_FLOW_IDS, flow_end);
	event_write(w, e->ts_ns);
	/* no complete event in Perfetto: a BEGIN and an END at the end, which readers sort into
	 * place by timestamp (equal ones in file order) */
	if (e->ph == 'X') {
		event_start(w, TYPE_SLICE_END, track);
		event_write(w, e->ts_ns + e->dur_ns);
	}
}

static void convert(struct pf_writer *w, const struct tef_event *e)
{
	switch (e->ph) {
	case 'X':
	case 'B':
	case 'i':
		convert_slice(w, e, 0);
		break;
	case 'E':
		event_start(w, TYPE_SLICE_END, describe_thread(w, e->pid, e->tid, on_gpu(e), NULL));
		event_write(w, e->ts_ns);
		break;
	case 'b':
	case 'e':
		event_start(w, e->ph == 'b' ? TYPE_SLICE_BEGIN : TYPE_SLICE_END,
			    describe_child(w, e->pid, e->name, "", e->id, false));
		if (e->ph == 'b') {
			event_name(w, e);
			event_args(w, e);
		}
		event_write(w, e->ts_ns);
		break;
	case 's':
	case 'f':
		/* a flow's start is an instant in the launch, whose slice was written long
		 * before; an end not taken by its GPU op's slice (convert_held()) one too */
		event_start(w, TYPE_INSTANT, describe_thread(w, e->pid, e->tid, on_gpu(e), NULL));
		event_name(w, e);
		pb_fixed64(&w->ev, e->ph == 's' ? TE_FLOW_IDS : TE_TERMINATING_FLOW_IDS,
			   flow_id(e));
		event_write(w, e->ts_ns);
		break;
	case 'C':
		convert_counter(w, e);
		break;
	case 'M':
		convert_metadata(w, e);
		break;
	default:
		break;
	}
}

/* The GPU op held back (hold_gpu_op()), converted: with the flow that `next` ends on it when
 * next is that flow's end ('f' at its track and time), which is then taken. True when taken. */
static bool convert_held(struct pf_writer *w, const struct tef_event *next)
{
	struct tef_event op;
	bool taken;

	if (!w->held_len)
		return false;
	if (tef_parse(w->held, w->held_len, &op)) {
		w->bad_event = true;
		w->held_len = 0;
		return false;
	}
	taken = next && next->ph == 'f' && next->has_id && next->pid == op.pid &&
		next->tid == op.tid && next->ts_ns == op.ts_ns;
	convert_slice(w, &op, taken ? next->id : 0);
	w->held_len = 0;
	return taken;
}

/* One event cut from the stream (text is parsed in place). The Chrome writer writes a GPU op's
 * flow start and end ("s", "f" binding to the enclosing slice) right after the op: the op is
 * held until then, so that the flow ends on the op's slice itself. */
static void take_event(struct pf_writer *w, char *text, size_t len)
{
	struct tef_event e;
	char *t;

	/* parsing unescapes in place: the original kept in case the event is held */
	if (len > w->spare_cap) {
		if (!(t = realloc(w->spare, len))) {
			w->failed = true;
			return;
		}
		w->spare = t;
		w->spare_cap = len;
	}
	memcpy(w->spare, text, len);
	if (tef_parse(text, len, &e)) {
		w->bad_event = true;
		return;
	}
	/* the op's flow start (on the launch's thread) comes between the op and its end */
	if (w->held_len && e.ph == 's') {
		convert(w, &e);
		return;
	}
	if (convert_held(w, &e))
		return;
	if (e.ph == 'X' && on_gpu(&e)) {
		size_t cap = w->held_cap;

		t = w->held;
		w->held = w->spare;
		w->held_cap = w->spare_cap;
		w->held_len = len;
		w->spare = t;
		w->spare_cap = cap;
		return;
	}
	convert(w, &e);
}

/* Room for `more` bytes of the event being cut. */
static bool text_reserve(struct pf_writer *w, size_t more)
{
	size_t cap = w->cap ? w->cap : 4096;
	char *t;

	if (w->len + more <= w->cap)
		return true;
	while (cap < w->len + more)
		cap *= 2;
	t = realloc(w->text, cap);
	if (!t) {
		w->failed = true;
		return false;
	}
	w->text = t;
	w->cap = cap;
	return true;
}

/* The Chrome writer's bytes: `{..., "traceEvents": [EVENT, ...]}`. An event is an object whose
 * container is the array at depth 2; its text is kept until it closes, then converted. */
static ssize_t stream_write(void *cookie, const char *buf, size_t size)
{
	struct pf_writer *w = cookie;

	/* room for all of buf at once: an event is cut out as the buffer's bytes go by */
	if (!text_reserve(w, size))
		return -1;
	for (size_t i = 0; i < size; i++) {
		char ch = buf[i];
		bool in_event = w->depth > 2 || (w->depth == 2 && w->in_array && ch == '{');

		if (in_event)
			w->text[w->len++] = ch;
		if (w->in_str) {
			if (w->escaped)
				w->escaped = false;
			else if (ch == '\\')
				w->escaped = true;
			else if (ch == '"')
				w->in_str = false;
			continue;
		}
		if (ch == '"') {
			w->in_str = true;
		} else if (ch == '{' || ch == '[') {
			if (++w->depth == 2)
				w->in_array = ch == '[';
		} else if (ch == '}' || ch == ']') {
			if (--w->depth == 2 && in_event) {
				take_event(w, w->text, w->len);
				w->len = 0;
			}
		}
	}
	return (ssize_t)size;
}

static void writer_free(struct pf_writer *w)
{
	pb_free(&w->pkt);
	pb_free(&w->ev);
	pb_free(&w->interned);
	pb_free(&w->msg);
	pb_free(&w->sub);
	pb_free(&w->outbuf);
	pf_intern_free(&w->names);
	pf_intern_free(&w->cats);
	pf_intern_free(&w->keys);
	free(w->tracks);
	free(w->text);
	free(w->held);
	free(w->spare);
}

int export_perfetto(perfetto_source source, const char *path, const struct export_opts *opts,
		    FILE *out, char *err, size_t errlen)
{
	struct pf_writer w = {.out = out, .cleared = true};
	cookie_io_functions_t io = {.write = stream_write};
	FILE *events = fopencookie(&w, "w", io);
	int ret;

	if (!events) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	ret = source(path, opts, events, err, errlen);
	/* the last events are still in the stream's buffer, and the last GPU op may be held */
	if (fclose(events) && !ret) {
		snprintf(err, errlen, "out of memory");
		ret = -1;
	}
	convert_held(&w, NULL);
	flush_out(&w);
	if (!ret && (w.failed || w.bad_event)) {
		/* an event the Chrome writer wrote and this reader could not read is a bug here */
		snprintf(err, errlen, w.failed ? "out of memory" : "cannot convert a Chrome event");
		ret = -1;
	}
	writer_free(&w);
	return ret;
}
