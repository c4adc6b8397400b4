// SPDX-License-Identifier: MIT
/*
 * The in-process operator observer: a global at::RecordFunction callback pair whose start and
 * end write one 32-byte record each into the calling thread's own ring, read out later by
 * gpuspy_torch_ops_read(). Written in C: libtorch 1.13's callback types are plain function
 * pointers and its at::RecordFunctionCallback is trivially copyable, so both cross the C++
 * ABI as C types do (docs/TORCH_OBSERVER.md); nothing here needs a C++ runtime.
 *
 * Safety rules, as for the CUPTI bridge:
 *  - nothing is registered with libtorch until the first enable, and disable unregisters:
 *    with no recorder, operators run exactly as without gpuspy;
 *  - libtorch copies the callback pointers into per-thread caches and into RecordFunctions
 *    already running, so they may be called after removeCallback returned: both trampolines
 *    first read g_on and return when it is 0, and the library is never unloaded (-z nodelete),
 *    so no pointer libtorch holds ever dangles;
 *  - a callback never blocks, never throws, allocates only a thread's first buffer, and
 *    drops (counted) rather than waits when its thread's ring is full (a new name or a new
 *    input shapes text is copied once, under a lock held only for that);
 *  - input shapes (opt-in) are read only while the start callback runs, the only time the
 *    inputs exist: through an IValue whose tag says Tensor, a TensorImpl that is not the
 *    undefined one, a bounded rank; the dimensions are hashed and looked up in a per-thread
 *    cache, and their text is made only the first time a thread sees them.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "torch_abi.h"
#include "torch_ops.h"

#define TBUF_RECS   8192  /* per thread: 256 KiB, ~40 training steps of a small CNN */
#define NAME_CACHE  64	  /* per thread, direct-mapped by the name's address */
#define NAMES_MAX   65536 /* distinct names and shapes texts per process (< 2^24) */
#define NAME_HASH   (NAMES_MAX * 2)
#define NAMES_KEPT  4096 /* of those, never taken by shapes: new operator names still fit */
#define DEPTH_BITS  1024 /* nesting tracked exactly this deep; deeper ends are not kept */
#define SHAPE_CACHE 256	 /* per thread, direct-mapped by the hash of the dimensions */
#define MAX_INPUTS  64	 /* an operator with more inputs gets no shapes */
#define MAX_RANK    16	 /* a tensor with more dimensions: no shapes for its operator */
#define KEY_MAX	    256	 /* words of one operator's shapes key */

/* at::RecordFunctionCallback of torch 1.13 (record_function.h: start_, end_, sampling_prob_,
 * scopes_[NUM_SCOPES = 10], needs_inputs_, needs_outputs_, needs_ids_). The start callback
 * returns a std::unique_ptr<ObserverContext>, which is returned through a hidden pointer
 * (rdi) that the callee hands back in rax: in C, a first parameter returned. */
struct rf_callback_1_13 {
	void **(*start)(void **ret, const void *rf);
	void (*end)(const void *rf, void *ctx);
	double sampling_prob;
	unsigned char scopes[10];
	unsigned char needs_inputs, needs_outputs, needs_ids;
};
_Static_assert(sizeof(struct rf_callback_1_13) == 40, "RecordFunctionCallback is 40 bytes");
_Static_assert(offsetof(struct rf_callback_1_13, needs_inputs) == 34, "needs_inputs_ at 34");

typedef uint64_t (*add_global_fn)(struct rf_callback_1_13 cb);
typedef void (*remove_fn)(uint64_t handle);
typedef const char *(*name_fn)(const void *rf);

struct name_slot {
	const char *ptr;  /* the address name() returned */
	const char *text; /* the interned copy it was equal to then */
	uint32_t id;
};

/* An operator's input shapes as seen by one thread: the hash of its key and the id it had, or
 * that it has none (a text too long, the table full: not tried again at every call). */
struct shape_slot {
	uint64_t hash;
	uint32_t id;
	uint32_t none;
};

/* One thread's ring: the thread writes head, gpuspy_torch_ops_read() writes tail. */
struct tbuf {
	struct tbuf *next; /* the list of every buffer; buffers are never freed */
	atomic_int in_use; /* owned by a live thread */
	uint32_t tid;
	_Atomic uint64_t head, tail;
	_Atomic uint64_t dropped, recorded; /* written by the thread only */
	uint32_t session;		    /* g_session when depth and the bits were last reset */
	uint32_t depth;			/* RecordFunctions started in this session and not ended */
	uint64_t kept[DEPTH_BITS / 64]; /* bit d: the start at depth d was recorded */
	struct name_slot cache[NAME_CACHE];
	struct shape_slot shapes[SHAPE_CACHE];
	struct gpuspy_torch_op recs[TBUF_RECS];
};

static const struct torch_abi *g_abi;
static add_global_fn g_add;
static remove_fn g_remove;
static name_fn g_name;

static pthread_mutex_t g_ctl = PTHREAD_MUTEX_INITIALIZER; /* init, enable, disable */
static atomic_int g_on;					  /* the flag every callback reads first */
static _Atomic uint32_t g_session;
static uint64_t g_handle; /* libtorch's CallbackHandle, 0 when not registered */
static uint32_t g_enables;

/* Input shapes: wanted (set_shapes, under g_ctl) and asked of libtorch at the last enable (read
 * by every start callback). Available only once torch_abi_tensor() found libc10's layout. */
static int g_shapes_want;
static atomic_int g_shapes_on;
static struct torch_tensor_syms g_tensor;
static char g_shapes_why[192] = "not initialised";
static int g_shapes_ok;
static _Atomic uint64_t g_no_shapes;

static pthread_mutex_t g_read_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct tbuf *) g_bufs;
static atomic_uint g_nbufs;
static _Atomic uint64_t g_no_buffer;
static pthread_key_t g_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static _Thread_local struct tbuf *t_buf;

/* Interned names: ids from 1; g_names[id] is set before the id is handed out. */
static pthread_mutex_t g_names_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *g_names[NAMES_MAX];
static _Atomic uint32_t g_nnames; /* ids 1..g_nnames-1 are used */
static uint32_t g_hash[NAME_HASH];
/* For an id that is a shapes text: the key it was made from (length first), set before the
 * id is handed out and never changed; a thread's cache hit is checked against it. */
static const int64_t *g_shape_key[NAMES_MAX];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* g_names_lock held. The id of a name, interned at its first sight; 0 when it is new and
 * `limit` ids are taken. */
static uint32_t intern_locked(const char *name, uint32_t limit)
{
	uint32_t h = fnv1a(name), i, id = 0;

	for (i = h % NAME_HASH;; i = (i + 1) % NAME_HASH) {
		uint32_t cand = g_hash[i];

		if (!cand) {
			uint32_t n = atomic_load_explicit(&g_nnames, memory_order_relaxed);
			char *copy;

			if (!n)
				n = 1;
			if (n >= limit || !(copy = strdup(name)))
				break;
			g_names[n] = copy;
			g_hash[i] = id = n;
			atomic_store_explicit(&g_nnames, n + 1, memory_order_release);
			break;
		}
		if (!strcmp(g_names[cand], name)) {
			id = cand;
			break;
		}
	}
	return id;
}

static uint32_t intern(const char *name, const char **text)
{
	uint32_t id;

	pthread_mutex_lock(&g_names_lock);
	id = intern_locked(name, NAMES_MAX);
	*text = id ? g_names[id] : NULL;
	pthread_mutex_unlock(&g_names_lock);
	return id;
}

/*
 * name() of a RecordFunction points into its FunctionSchema (stable) or into its own
 * std::string (a user scope, an autograd node: freed with it, and often inside the object
 * on the stack, so the next name may have the same address). The cache is therefore keyed by
 * address but trusted only when the text still equals what was interned.
 */
static uint32_t name_id(struct tbuf *b, const char *name)
{
	struct name_slot *s = &b->cache[((uintptr_t)name >> 3) % NAME_CACHE];
	const char *text;
	uint32_t id;

	if (s->ptr == name && s->text && !strcmp(name, s->text))
		return s->id;
	id = intern(name, &text);
	s->ptr = name;
	s->text = text;
	s->id = id;
	return id;
}

/*
 * Input shapes. The key of an operator's inputs: their number, then per input its rank and
 * dimensions, rank 0 for anything torch.profiler (1.13, collection.cpp's InputOutputEncoder)
 * writes as []: a 0-dim tensor, an undefined or nested tensor, a scalar, a TensorList (it
 * skips lists), None, any other value. Keys and texts map one to one.
 */

/* The text of a key as torch.profiler prints input_shapes (Python's str of a list of lists):
 * "[[16, 3, 16, 16], [8], [], []]"; malloc'd, NULL when out of memory. */
static char *shapes_text(const int64_t *key, size_t len)
{
	size_t cap = 2 + len * 22, at = 0, k = 1, i, j;
	char *t = malloc(cap);

	if (!t)
		return NULL;
	t[at++] = '[';
	for (i = 0; i < (size_t)key[0]; i++) {
		size_t rank = (size_t)key[k++];

		at += (size_t)snprintf(t + at, cap - at, "%s[", i ? ", " : "");
		for (j = 0; j < rank; j++)
			at += (size_t)snprintf(t + at, cap - at, "%s%" PRId64, j ? ", " : "",
					       key[k++]);
		t[at++] = ']';
	}
	t[at++] = ']';
	t[at] = '\0';
	return t;
}

/* The id of a key seen first by this thread: its text interned (by content: another thread
 * may have made it), the key kept for later checks. 0 when out of room. */
static uint32_t shapes_intern(const int64_t *key, size_t len)
{
	char *text = shapes_text(key, len);
	int64_t *copy = NULL;
	uint32_t id = 0;

	if (!text)
		return 0;
	/* a text the wire would cut is not sent at all: a cut one would name other shapes */
	if (strlen(text) > GPUSPY_TORCH_SHAPES_TEXT_MAX) {
		free(text);
		return 0;
	}
	pthread_mutex_lock(&g_names_lock);
	id = intern_locked(text, NAMES_MAX - NAMES_KEPT);
	if (id && !g_shape_key[id]) {
		copy = malloc((len + 1) * sizeof(*copy));
		if (copy) {
			copy[0] = (int64_t)len;
			memcpy(copy + 1, key, len * sizeof(*key));
			g_shape_key[id] = copy;
		} else {
			id = 0;
		}
	}
	pthread_mutex_unlock(&g_names_lock);
	free(text);
	return id;
}

static int aligned8(const void *p)
{
	return p && !((uintptr_t)p & 7);
}

/* The key of the RecordFunction's inputs into key[]: its length, or 0 when there is none to
 * give (see struct gpuspy_torch_stats.no_shapes). Reads only what the table describes, and
 * only through an IValue tagged Tensor. */
static size_t shapes_key(const unsigned char *rf, int64_t *key)
{
	const struct torch_abi *a = g_abi;
	const unsigned char *in;
	size_t n, i, k = 0;

	/* inputs_ is filled only when the RecordFunction asked for them: a range begun before
	 * the registration that asks, or a before() that passes none, has nothing to read */
	if (!rf[a->off_needs_inputs])
		return 0;
	memcpy(&in, rf + a->off_inputs, sizeof(in));
	memcpy(&n, rf + a->off_inputs_size, sizeof(n));
	if (n > MAX_INPUTS || (n && !aligned8(in)))
		return 0;
	key[k++] = (int64_t)n;
	for (i = 0; i < n; i++) {
		const unsigned char *v = in + i * a->ivalue_size, *impl, *sizes;
		uint32_t tag;
		uint64_t keys, rank;

		if (k >= KEY_MAX)
			return 0;
		memcpy(&tag, v + a->off_ivalue_tag, sizeof(tag));
		if (tag != a->tag_tensor) {
			key[k++] = 0; /* a scalar, a list, None, ...: [] */
			continue;
		}
		memcpy(&impl, v + a->off_ivalue_payload, sizeof(impl));
		if (!aligned8(impl))
			return 0;
		if (impl == g_tensor.undefined_impl) {
			key[k++] = 0; /* !defined(): [] */
			continue;
		}
		memcpy(&keys, impl + a->off_impl_key_set, sizeof(keys));
		if ((keys & a->nested_key_mask) == a->nested_key_mask) {
			key[k++] = 0; /* is_nested(): [] */
			continue;
		}
		/* sizes() would call the virtual sizes_custom(), or the sizes are symbolic */
		if (((impl[a->off_impl_policy] >> a->policy_shift) & 3) >= 2 ||
		    (impl[a->off_impl_symbolic] & a->symbolic_bit))
			return 0;
		memcpy(&rank, impl + a->off_impl_sizes, sizeof(rank));
		if (rank > MAX_RANK || k + 1 + rank > KEY_MAX)
			return 0;
		sizes = impl + a->off_impl_sizes + 8;
		if (rank > a->sizes_inline_max) {
			const unsigned char *out_of_line;

			memcpy(&out_of_line, sizes, sizeof(out_of_line));
			sizes = out_of_line;
			if (!aligned8(sizes))
				return 0;
		}
		key[k++] = (int64_t)rank;
		memcpy(key + k, sizes, rank * sizeof(*key));
		k += rank;
	}
	return k;
}

static uint64_t key_hash(const int64_t *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint64_t)key[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* The shapes id of a starting operator; 0 none (counted). */
static uint32_t shapes_id(struct tbuf *b, const void *rf)
{
	int64_t key[KEY_MAX];
	size_t len = shapes_key(rf, key);
	struct shape_slot *s;
	const int64_t *known;
	uint64_t h;

	if (!len) {
		atomic_fetch_add_explicit(&g_no_shapes, 1, memory_order_relaxed);
		return 0;
	}
	h = key_hash(key, len);
	s = &b->shapes[h % SHAPE_CACHE];
	/* a hit is trusted only when the id's own key is this one: no collision misnames (a
	 * colliding key remembered as having none loses its shapes, never gets others') */
	if (s->hash == h && s->none)
		goto none;
	if (s->id && s->hash == h && (known = g_shape_key[s->id]) && known[0] == (int64_t)len &&
	    !memcmp(known + 1, key, len * sizeof(*key)))
		return s->id;
	s->hash = h;
	s->id = shapes_intern(key, len);
	s->none = !s->id;
	if (s->id)
		return s->id;
none:
	atomic_fetch_add_explicit(&g_no_shapes, 1, memory_order_relaxed);
	return 0;
}

static void release_buf(void *p)
{
	struct tbuf *b = p;

	/* runs in the exiting thread, after its C++ thread_local destructors (glibc) */
	t_buf = NULL;
	atomic_store_explicit(&b->in_use, 0, memory_order_release);
}

static void make_key(void)
{
	if (pthread_key_create(&g_key, release_buf))
		g_key = (pthread_key_t)-1;
}

/* This thread's buffer: an exited thread's fully read one, else a new one. */
static struct tbuf *thread_buf(void)
{
	struct tbuf *b;

	if (t_buf)
		return t_buf;
	pthread_once(&g_key_once, make_key);
	for (b = atomic_load(&g_bufs); b; b = b->next) {
		int free_one = 0;

		if (atomic_load(&b->head) != atomic_load(&b->tail))
			continue;
		if (atomic_compare_exchange_strong(&b->in_use, &free_one, 1))
			break;
	}
	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return NULL;
		atomic_store(&b->in_use, 1);
		b->next = atomic_load(&g_bufs);
		while (!atomic_compare_exchange_weak(&g_bufs, &b->next, b))
			;
		atomic_fetch_add(&g_nbufs, 1);
	}
	b->tid = (uint32_t)gettid();
	b->session = 0;
	b->depth = 0;
	t_buf = b;
	/* without the key the buffer stays owned after the thread exits: lost, not wrong */
	if (g_key != (pthread_key_t)-1)
		pthread_setspecific(g_key, b);
	return b;
}

/* A counter only its buffer's thread writes: no locked read-modify-write per operator. */
static void count(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static int put(struct tbuf *b, const void *rf, int kind)
{
	const unsigned char *p = rf;
	uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
	struct gpuspy_torch_op *r;
	uint64_t fwd;
	uint32_t idx;
	const char *name;

	if (h - atomic_load_explicit(&b->tail, memory_order_acquire) >= TBUF_RECS) {
		count(&b->dropped);
		return 0;
	}
	r = &b->recs[h % TBUF_RECS];
	r->ts = now_ns();
	r->tid = b->tid;
	r->kind = (uint32_t)kind;
	memcpy(&r->seq_nr, p + g_abi->off_seq_nr, sizeof(r->seq_nr));
	r->scope = p[g_abi->off_scope];
	memcpy(&idx, p + g_abi->off_fn_index, sizeof(idx));
	r->flags = p[g_abi->off_is_async] ? GPUSPY_TORCH_OP_ASYNC : 0;
	memcpy(&fwd, p + g_abi->off_fwd_tid, sizeof(fwd));
	r->fwd_tid = (uint32_t)fwd;
	r->shapes = kind == GPUSPY_TORCH_OP_START &&
			    atomic_load_explicit(&g_shapes_on, memory_order_relaxed)
			? shapes_id(b, rf)
			: 0;
	/* name() throws std::bad_variant_access when fn_ holds nothing: never call it then */
	name = idx <= 1 ? g_name(rf) : NULL;
	r->name_id = name ? name_id(b, name) : 0;
	atomic_store_explicit(&b->head, h + 1, memory_order_release);
	count(&b->recorded);
	return 1;
}

static struct tbuf *session_buf(void)
{
	struct tbuf *b = thread_buf();
	uint32_t session = atomic_load_explicit(&g_session, memory_order_relaxed);

	if (!b) {
		atomic_fetch_add_explicit(&g_no_buffer, 1, memory_order_relaxed);
		return NULL;
	}
	if (b->session != session) {
		b->session = session;
		b->depth = 0;
	}
	return b;
}

static void **on_start(void **ret, const void *rf)
{
	struct tbuf *b;
	uint32_t d;
	int kept;

	*ret = NULL; /* no ObserverContext: libtorch's unique_ptr stays empty */
	if (!atomic_load_explicit(&g_on, memory_order_relaxed))
		return ret;
	b = session_buf();
	if (!b)
		return ret;
	kept = put(b, rf, GPUSPY_TORCH_OP_START);
	d = b->depth++;
	if (d < DEPTH_BITS) {
		if (kept)
			b->kept[d / 64] |= 1ull << (d % 64);
		else
			b->kept[d / 64] &= ~(1ull << (d % 64));
	}
	return ret;
}

static void on_end(const void *rf, void *ctx)
{
	struct tbuf *b;
	uint32_t d;

	(void)ctx;
	if (!atomic_load_explicit(&g_on, memory_order_relaxed))
		return;
	b = t_buf;
	/* no buffer, another session, or a start before this session: its end is not kept */
	if (!b || b->session != atomic_load_explicit(&g_session, memory_order_relaxed) || !b->depth)
		return;
	d = --b->depth;
	if (d < DEPTH_BITS && (b->kept[d / 64] >> (d % 64) & 1))
		put(b, rf, GPUSPY_TORCH_OP_END);
}

int gpuspy_torch_ops_init(const struct gpuspy_torch_syms *syms, char *why, size_t why_len)
{
	const struct torch_abi *abi;
	char dummy[8];
	int err = 0;

	if (!why || !why_len) {
		why = dummy;
		why_len = sizeof(dummy);
	}
	why[0] = '\0';
	pthread_mutex_lock(&g_ctl);
	if (g_abi)
		goto out;
	abi = syms ? torch_abi_find(syms, why, why_len) : NULL;
	if (!abi) {
		if (!syms)
			snprintf(why, why_len, "no libtorch entry points given");
		err = -1;
		goto out;
	}
	if (abi->callback_size != sizeof(struct rf_callback_1_13)) {
		snprintf(why, why_len, "RecordFunctionCallback size mismatch");
		err = -1;
		goto out;
	}
	g_add = (add_global_fn)(uintptr_t)syms->add_global_callback;
	g_remove = (remove_fn)(uintptr_t)syms->remove_callback;
	g_name = (name_fn)(uintptr_t)syms->rf_name;
	/* shapes are optional: a libc10 not known refuses them, not the observer */
	g_shapes_ok = !torch_abi_tensor(abi, syms->add_global_callback, &g_tensor, g_shapes_why,
					sizeof(g_shapes_why));
	if (g_shapes_ok)
		g_shapes_why[0] = '\0';
	g_abi = abi;
out:
	pthread_mutex_unlock(&g_ctl);
	return err;
}

int gpuspy_torch_ops_enable(void)
{
	struct rf_callback_1_13 cb = {
	    .start = on_start,
	    .end = on_end,
	    .sampling_prob = 1.0,
	};
	int err = 0;

	memset(cb.scopes, 1, sizeof(cb.scopes)); /* every RecordScope, as the constructor does */
	pthread_mutex_lock(&g_ctl);
	if (!g_abi) {
		err = -1;
	} else if (!g_handle) {
		/* boxing every operator's inputs costs libtorch far more than the callbacks: asked
		 * for only when shapes are wanted */
		cb.needs_inputs = g_shapes_want && g_shapes_ok;
		atomic_store(&g_shapes_on, cb.needs_inputs);
		atomic_fetch_add(&g_session, 1);
		atomic_store(&g_on, 1);
		g_handle = g_add(cb);
		g_enables++;
	}
	pthread_mutex_unlock(&g_ctl);
	return err;
}

void gpuspy_torch_ops_disable(void)
{
	pthread_mutex_lock(&g_ctl);
	atomic_store(&g_on, 0);
	if (g_handle) {
		g_remove(g_handle);
		g_handle = 0;
	}
	pthread_mutex_unlock(&g_ctl);
}

int gpuspy_torch_ops_set_shapes(int on)
{
	int err;

	pthread_mutex_lock(&g_ctl);
	g_shapes_want = on != 0;
	err = on && !g_shapes_ok ? -1 : 0;
	pthread_mutex_unlock(&g_ctl);
	return err;
}

const char *torch_ops_shapes_why(void)
{
	return g_shapes_ok ? NULL : g_shapes_why;
}

void gpuspy_torch_ops_set_recording(int on)
{
	pthread_mutex_lock(&g_ctl);
	if (g_handle && (on != 0) != atomic_load(&g_on)) {
		/* a new session: ranges begun while off must not pop the bits of others */
		if (on)
			atomic_fetch_add(&g_session, 1);
		atomic_store(&g_on, on != 0);
	}
	pthread_mutex_unlock(&g_ctl);
}

void torch_ops_after_fork_child(void)
{
	/* the child's only thread: any lock may have been held by a thread it does not have */
	atomic_store(&g_on, 0);
	pthread_mutex_init(&g_ctl, NULL);
	pthread_mutex_init(&g_read_lock, NULL);
	pthread_mutex_init(&g_names_lock, NULL);
}

size_t gpuspy_torch_ops_read(struct gpuspy_torch_op *out, size_t max)
{
	struct tbuf *b;
	size_t n = 0;

	pthread_mutex_lock(&g_read_lock);
	for (b = atomic_load(&g_bufs); b && n < max; b = b->next) {
		uint64_t t = atomic_load_explicit(&b->tail, memory_order_relaxed);
		uint64_t h = atomic_load_explicit(&b->head, memory_order_acquire);

		for (; t != h && n < max; t++)
			out[n++] = b->recs[t % TBUF_RECS];
		atomic_store_explicit(&b->tail, t, memory_order_release);
	}
	pthread_mutex_unlock(&g_read_lock);
	return n;
}

const char *gpuspy_torch_ops_name(uint32_t id)
{
	if (!id || id >= atomic_load_explicit(&g_nnames, memory_order_acquire))
		return NULL;
	return g_names[id];
}

void gpuspy_torch_ops_stats(struct gpuspy_torch_stats *out)
{
	struct tbuf *b;
	uint32_t n = atomic_load(&g_nnames);

	memset(out, 0, sizeof(*out));
	out->no_buffer = atomic_load(&g_no_buffer);
	for (b = atomic_load(&g_bufs); b; b = b->next) {
		out->dropped += atomic_load(&b->dropped);
		out->recorded += atomic_load(&b->recorded);
		out->pending += atomic_load(&b->head) - atomic_load(&b->tail);
	}
	out->names = n ? n - 1 : 0;
	out->buffers = atomic_load(&g_nbufs);
	pthread_mutex_lock(&g_ctl);
	out->enables = g_enables;
	out->shapes_on = (uint32_t)(g_handle && atomic_load(&g_shapes_on));
	pthread_mutex_unlock(&g_ctl);
	out->no_shapes = atomic_load(&g_no_shapes);
}
