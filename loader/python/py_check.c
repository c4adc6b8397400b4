// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "loader/python/py_check.h"
#include "loader/python/py_code.h"

#define MAX_THREADS	256  /* thread states looked at */
#define MAX_FRAMES	4096 /* links of one frame chain followed */
#define MAX_MEMBERS	64   /* PyMemberDef entries of PyCode_Type looked at */
#define TSD_KEYS	32   /* glibc's first-level TSD block; bpf/py_stack.bpf.h reads only it */
#define OWNED_BY_CSTACK 3

static int rd64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return py_mem_read(pid, addr, v, sizeof(*v));
}

static void not_ready(struct py_runtime *rt, const char *why)
{
	rt->state = PY_RUNTIME_NOT_READY;
	snprintf(rt->message, sizeof(rt->message), "%s", why);
}

static void refused(struct py_runtime *rt, const char *what, uint64_t got, uint64_t want)
{
	rt->state = PY_RUNTIME_REFUSED;
	snprintf(rt->message, sizeof(rt->message), "layout check failed: %s is %llu, expected %llu",
		 what, (unsigned long long)got, (unsigned long long)want);
}

/* 3.13+ publishes its own offsets: each that gpuspy also has in its table must agree. */
static int check_debug_offsets(pid_t pid, struct py_runtime *rt)
{
	const struct py_layout *l = rt->layout;
	const struct {
		unsigned word;
		int want;
		const char *name;
	} fields[] = {
	    {PY_DBG_INTERP_HEAD, l->rt_interp_head, "interpreters_head"},
	    {PY_DBG_THREADS_HEAD, l->is_threads_head, "threads_head"},
	    {PY_DBG_TS_NEXT, l->ts_next, "thread_state.next"},
	    {PY_DBG_TS_CURRENT_FRAME, l->ts_frame, "current_frame"},
	    {PY_DBG_TS_THREAD_ID, l->ts_thread_id, "thread_id"},
	    {PY_DBG_FR_PREVIOUS, l->fr_back, "interpreter_frame.previous"},
	    {PY_DBG_FR_EXECUTABLE, l->fr_code, "executable"},
	    {PY_DBG_FR_INSTR_PTR, l->fr_instr, "instr_ptr"},
	    {PY_DBG_FR_OWNER, l->fr_owner, "owner"},
	    {PY_DBG_CO_FILENAME, l->co_filename, "co_filename"},
	    {PY_DBG_CO_NAME, l->co_name, "co_name"},
	    {PY_DBG_CO_QUALNAME, l->co_qualname, "co_qualname"},
	    {PY_DBG_CO_LINETABLE, l->co_lines, "co_linetable"},
	    {PY_DBG_CO_FIRSTLINENO, l->co_firstlineno, "co_firstlineno"},
	    {PY_DBG_CO_CODE_ADAPTIVE, l->code_basicsize, "co_code_adaptive"},
	};
	uint64_t w[PY_DBG_WORDS];
	int err = py_mem_read(pid, rt->off.runtime, w, sizeof(w));

	if (err)
		return err;
	if (memcmp(w, PY_DEBUG_COOKIE, 8)) {
		rt->state = PY_RUNTIME_REFUSED;
		snprintf(rt->message, sizeof(rt->message), "no _Py_DebugOffsets at _PyRuntime");
		return 0;
	}
	if (w[PY_DBG_VERSION] >> 16 != rt->version_hex >> 16) {
		refused(rt, "_Py_DebugOffsets.version", w[PY_DBG_VERSION], rt->version_hex);
		return 0;
	}
	if (w[PY_DBG_FREE_THREADED]) {
		rt->state = PY_RUNTIME_REFUSED;
		snprintf(rt->message, sizeof(rt->message),
			 "a free-threaded build is not supported");
		return 0;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (w[fields[i].word] != (uint64_t)fields[i].want) {
			refused(rt, fields[i].name, w[fields[i].word], (uint64_t)fields[i].want);
			return 0;
		}
	return 0;
}

/* A PyMemberDef of PyCode_Type: its name must be at the offset the table has. */
static int check_member(pid_t pid, uint64_t def, const struct py_layout *l, unsigned *seen,
			struct py_runtime *rt)
{
	const struct {
		const char *name;
		int want;
	} wanted[] = {
	    {"co_filename", l->co_filename},	   {"co_name", l->co_name},
	    {"co_firstlineno", l->co_firstlineno}, {l->lines_member, l->co_lines},
	    {"co_qualname", l->co_qualname},
	};
	uint64_t m[PY_MEMBERDEF_SIZE / 8];
	char name[32] = "";
	int err = py_mem_read(pid, def, m, sizeof(m));

	if (err)
		return err;
	if (!m[0])
		return 1; /* the terminating entry */
	if (py_mem_read(pid, m[0], name, sizeof(name) - 1) && !memchr(name, '\0', sizeof(name)))
		return -EFAULT;
	name[sizeof(name) - 1] = '\0';
	for (unsigned k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++) {
		if (wanted[k].want < 0 || strcmp(name, wanted[k].name))
			continue;
		if (m[PY_MEMBERDEF_OFF / 8] != (uint64_t)wanted[k].want) {
			refused(rt, wanted[k].name, m[PY_MEMBERDEF_OFF / 8],
				(uint64_t)wanted[k].want);
			return 1;
		}
		*seen |= 1u << k;
	}
	return 0;
}

/* PyCode_Type's size and the offsets of the members the walker and py_code.c read. */
static int check_code_type(pid_t pid, struct py_runtime *rt)
{
	const struct py_layout *l = rt->layout;
	unsigned seen = 0, want = l->co_qualname >= 0 ? 31 : 15;
	uint64_t size, members;
	int err = rd64(pid, rt->code_type + PY_TP_BASICSIZE, &size);

	err = err ?: rd64(pid, rt->code_type + PY_TP_MEMBERS, &members);
	if (err)
		return err;
	if (size != (uint64_t)l->code_basicsize) {
		refused(rt, "PyCode_Type.tp_basicsize", size, (uint64_t)l->code_basicsize);
		return 0;
	}
	for (int i = 0; i < MAX_MEMBERS && !err; i++)
		err = check_member(pid, members + (uint64_t)i * PY_MEMBERDEF_SIZE, l, &seen, rt);
	if (err < 0)
		return err;
	if (rt->state == PY_RUNTIME_NONE && seen != want) {
		rt->state = PY_RUNTIME_REFUSED;
		snprintf(rt->message, sizeof(rt->message),
			 "layout check failed: PyCode_Type lacks a member gpuspy reads");
	}
	return 0;
}

/* One frame as BPF sees it: code object (0: not Python code) and the previous frame. */
static int read_frame(pid_t pid, const struct gs_py_offsets *o, uint64_t frame, uint64_t *code,
		      uint64_t *back)
{
	unsigned char buf[PY_FRAME_READ_MAX];
	int err = py_mem_read(pid, frame, buf, o->fr_size);

	if (err)
		return err;
	memcpy(back, buf + o->fr_back, sizeof(*back));
	memcpy(code, buf + o->fr_code, sizeof(*code));
	if ((o->fr_owner >= 0 && buf[o->fr_owner] >= OWNED_BY_CSTACK) || *code == o->none)
		*code = 0;
	return 0;
}

/* A frame's code object must be a code object with str names. */
static int check_code(pid_t pid, const struct py_runtime *rt, uint64_t code)
{
	uint64_t type, names[2];
	char s[64];
	int err = rd64(pid, code + PY_OB_TYPE, &type);

	err = err ?: py_mem_read(pid, code + rt->off.co_filename, names, sizeof(names));
	if (err)
		return err;
	if (type != rt->code_type)
		return -EINVAL;
	err = py_read_str(pid, rt, names[0], s, sizeof(s));
	return err ?: py_read_str(pid, rt, names[1], s, sizeof(s));
}

static uint64_t top_frame(pid_t pid, const struct gs_py_offsets *o, uint64_t tstate)
{
	uint64_t cframe = 0, frame = 0;

	if (o->ts_cframe >= 0) {
		if (rd64(pid, tstate + (uint64_t)o->ts_cframe, &cframe) || !cframe)
			return 0;
		return rd64(pid, cframe + (uint64_t)o->cframe_cur, &frame) ? 0 : frame;
	}
	return rd64(pid, tstate + (uint64_t)o->ts_frame, &frame) ? 0 : frame;
}

/* Walks one thread's frames, checking each code object; the frames found, or -errno. */
static int walk_thread(pid_t pid, const struct py_runtime *rt, uint64_t tstate)
{
	uint64_t frame = top_frame(pid, &rt->off, tstate), code, back;
	int n = 0, err;

	for (int i = 0; frame && i < MAX_FRAMES; i++, frame = back) {
		err = read_frame(pid, &rt->off, frame, &code, &back);
		if (err)
			return err;
		if (!code)
			continue;
		err = check_code(pid, rt, code);
		if (err)
			return err;
		n++;
	}
	return n;
}

struct walk_result {
	int threads, matched, frames;
};

/* Every thread state of the main interpreter: those bound to their thread's TSD slot (the
 * lookup BPF makes) are walked. */
static int walk_threads(pid_t pid, struct py_runtime *rt, uint64_t interp, uint32_t key,
			struct walk_result *r)
{
	const struct py_layout *l = rt->layout;
	uint64_t tstate, thread, slot;
	int err = rd64(pid, interp + (uint64_t)l->is_threads_head, &tstate), n;

	for (; !err && tstate && r->threads < MAX_THREADS; r->threads++) {
		if (!rd64(pid, tstate + (uint64_t)l->ts_thread_id, &thread) && thread &&
		    !rd64(pid, thread + PY_GLIBC_TSD_BLOCK + (uint64_t)key * 16 + 8, &slot) &&
		    slot == tstate) {
			n = walk_thread(pid, rt, tstate);
			if (n < 0)
				return n;
			r->matched++;
			r->frames += n;
		}
		err = rd64(pid, tstate + (uint64_t)l->ts_next, &tstate);
	}
	return err;
}

static int dry_run(pid_t pid, struct py_runtime *rt)
{
	const struct py_layout *l = rt->layout;
	struct walk_result r = {0};
	uint32_t tss[2]; /* Py_tss_t: {int _is_initialized; pthread_key_t _key} */
	uint64_t interp;
	int err = rd64(pid, rt->off.runtime + (uint64_t)l->rt_interp_head, &interp);

	err = err ?: py_mem_read(pid, rt->off.runtime + (uint64_t)l->rt_autotss, tss, sizeof(tss));
	if (err)
		return err;
	if (!interp || !tss[0]) {
		not_ready(rt, "the interpreter is not initialised yet");
		return 0;
	}
	if (tss[1] >= TSD_KEYS) {
		rt->state = PY_RUNTIME_REFUSED;
		snprintf(rt->message, sizeof(rt->message),
			 "its thread-state key %u is beyond glibc's first TSD block", tss[1]);
		return 0;
	}
	err = walk_threads(pid, rt, interp, tss[1], &r);
	if (err == -ENOENT)
		return err;
	if (err) {
		not_ready(rt, "its frames changed while they were read");
		return 0;
	}
	if (!r.matched) {
		not_ready(rt, "no thread state is bound to its thread yet");
		return 0;
	}
	rt->state = PY_RUNTIME_READY;
	snprintf(rt->message, sizeof(rt->message),
		 "%s: python %s, layout checked (%sPyCode_Type), %d of %d thread states walked "
		 "(%d frames)",
		 rt->path, rt->version, l->minor >= 13 ? "_Py_DebugOffsets, " : "", r.matched,
		 r.threads, r.frames);
	return 0;
}

int py_check(pid_t pid, struct py_runtime *rt)
{
	int err = 0;

	rt->state = PY_RUNTIME_NONE;
	if (rt->layout->minor >= 13)
		err = check_debug_offsets(pid, rt);
	if (!err && rt->state == PY_RUNTIME_NONE)
		err = check_code_type(pid, rt);
	if (!err && rt->state == PY_RUNTIME_NONE)
		err = dry_run(pid, rt);
	return err;
}
