// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "lib/array_grow.h"
#include "lib/clocks.h"
#include "lib/key_index.h"
#include "lib/messages.h"
#include "lib/pid_list.h"
#include "lib/string_pool.h"
#include "loader/probes/op_probes.h"
#include "loader/probes/op_symbols.h"
#include "loader/proc/elf_symbols.h"
#include "loader/proc/proc_maps.h"
#include "loader/session/hold_watchdog.h"
#include "loader/session/link_batch.h"
#include "loader/session/unwind_fix.h"
#include "loader/session/uprobe_multi.h"
#include "ops.skel.h"
#include "output/trace/trace_writer.h"

#define NOT_OPS	   (SIZE_MAX - 1) /* examined: no operators (key_index value) */
#define UNEXAMINED (SIZE_MAX - 2) /* not cached: examined again at the next scan */

/* The entry points of a C++ unwinder (libgcc_s, LLVM's libunwind) that start unwinding a stack:
 * bpf/ops.bpf.c's op_unwind must run there wherever operators have return probes. */
static const char *const unwind_entries[] = {"_Unwind_RaiseException", "_Unwind_Resume_or_Rethrow",
					     "_Unwind_ForcedUnwind"};
#define NUNWIND (sizeof(unwind_entries) / sizeof(unwind_entries[0]))

struct op_lib {
	uint32_t nops; /* operators probed; 0: found but could not be probed */
	int link;      /* the uprobe session link; -1 when none */
};

struct op_probes {
	struct ops_bpf *skel;
	struct trace_writer *w;
	bool quiet, detached;
	struct op_lib *libs;
	size_t nlibs, libs_cap;
	struct bpf_link **unwind_links;
	size_t nunwind, unwind_cap;
	struct key_index unwinders; /* (dev, ino) -> 1: an unwinder, hooked; 0: not one */
	struct key_index warned;    /* pid: said why its operators are not probed */
	struct key_index files;	    /* (dev, ino) -> index in libs, or NOT_OPS */
	struct key_index reported;  /* (pid, lib index) already said */
	struct string_pool names;   /* operator names; a name's id is its index (the cookie) */
	size_t names_written;	    /* GS_REC_OP_NAME records written for ids below this */
};

int op_probes_new(struct ops_bpf *skel, struct trace_writer *w, bool quiet, struct op_probes **out)
{
	struct op_probes *op = calloc(1, sizeof(*op));

	if (!op)
		return -ENOMEM;
	op->skel = skel;
	op->w = w;
	op->quiet = quiet;
	*out = op;
	return 0;
}

/* Names of the indexes given out since the last call: written before any call can use them. */
static int write_new_names(struct op_probes *op)
{
	for (; op->names_written < op->names.n; op->names_written++) {
		struct gs_op_name rec = {
		    .hdr = {.type = GS_REC_OP_NAME, .ts = gs_monotonic_ns()},
		    .op = (uint32_t)op->names_written,
		};
		const char *name = string_pool_get(&op->names, (uint32_t)op->names_written);
		int err =
		    trace_writer_append_tail(op->w, &rec.hdr, sizeof(rec), name, strlen(name) + 1);

		if (err)
			return err;
	}
	return 0;
}

/* Offsets and cookies (the operator name's index) of a library's operators. */
static int index_ops(struct op_probes *op, const struct op_symbol *syms, size_t n,
		     uint64_t *offsets, uint64_t *cookies)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t id;

		if (string_pool_intern(&op->names, syms[i].name, &id))
			return -ENOMEM;
		offsets[i] = syms[i].offset;
		cookies[i] = id;
	}
	return write_new_names(op);
}

static int attach_link(struct op_probes *op, struct op_lib *lib, const char *path,
		       const uint64_t *offsets, const uint64_t *cookies, uint32_t n)
{
	int fd = uprobe_session_attach(bpf_program__fd(op->skel->progs.op_call), path, offsets,
				       cookies, n);

	if (fd < 0)
		return fd;
	lib->link = fd;
	return 0;
}

/* Attaches to every operator of the file; a failure leaves it unprobed (nops 0) and says why,
 * only running out of memory or a write error is returned. */
static int probe_library(struct op_probes *op, struct op_lib *lib, const char *path,
			 const char *shown, const struct op_symbol *syms, size_t n)
{
	uint64_t *offsets = calloc(n, sizeof(*offsets)), *cookies = calloc(n, sizeof(*cookies));
	int err = offsets && cookies ? index_ops(op, syms, n, offsets, cookies) : -ENOMEM;

	if (!err) {
		uint64_t t0 = gs_monotonic_ns();
		int aerr = attach_link(op, lib, path, offsets, cookies, (uint32_t)n);

		if (aerr == -EINVAL || aerr == -EOPNOTSUPP)
			gs_warn("cannot probe %s: this kernel has no uprobe sessions (Linux 6.13+)",
				shown);
		else if (aerr)
			gs_warn("cannot probe the operators of %s: %s", shown, strerror(-aerr));
		else
			lib->nops = (uint32_t)n;
		gs_debug("attached %zu operator probes to %s in %.1f ms", n, shown,
			 (double)(gs_monotonic_ns() - t0) / 1e6);
	}
	free(offsets);
	free(cookies);
	return err;
}

static void report_lib(struct op_probes *op, pid_t pid, const struct proc_mapping *m, size_t idx)
{
	size_t dummy;

	if (key_index_find(&op->reported, (uint64_t)pid, idx, &dummy))
		return;
	if (key_index_put(&op->reported, (uint64_t)pid, idx, idx))
		return; /* only the message is at stake */
	if (!op->quiet && op->libs[idx].nops)
		fprintf(stderr, "gpuspy: probing %u PyTorch operators in %s (pid %d)\n",
			op->libs[idx].nops, m->path, pid);
}

/* op->unwinders' values: what an executable file is to the operators' probes */
enum unwinder_state {
	NOT_UNWINDER = 0,
	UNWINDER_HOOKED = 1,
	UNWINDER_UNHOOKED = 2, /* hooked once a process that maps it maps operators */
};

struct scan_ctx {
	struct op_probes *op;
	pid_t pid;
	int libs;
	bool unwinder; /* the process maps an unwinder */
	bool hooked;   /* ... that is hooked */
	bool unhooked; /* ... that is not hooked yet */
};

static int keep_unwind_link(struct op_probes *op, struct bpf_link *link)
{
	struct bpf_link **slot =
	    array_grow((void **)&op->unwind_links, &op->nunwind, &op->unwind_cap, sizeof(*slot));

	if (!slot) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	*slot = link;
	return 0;
}

/* The unwinder entry points the file at `path` (on the host) defines (file offsets, 0: not
 * defined); false when it is no unwinder. */
static bool unwinder_entries(const char *path, uint64_t offsets[NUNWIND])
{
	return elf_find_functions(path, unwind_entries, NUNWIND, false, offsets) > 0 && offsets[0];
}

/* Hooks the unwinder entry points of a file (pid -1: as the operators' probes, for every
 * process that maps it). Perf-event uprobes, as always: op_unwind holds the thread with a stop
 * signal sent from the program, which a uprobe_multi program (run with preemption off) would
 * send through irq_work instead, not verified here. 0, or -ENOMEM; *hooked: whether it is
 * hooked now. */
static int hook_unwinder(struct op_probes *op, pid_t pid, const char *shown, bool *hooked)
{
	uint64_t offsets[NUNWIND];
	char path[PATH_MAX + 32];
	size_t n = 0;

	*hooked = false;
	proc_maps_host_path(pid, shown, path, sizeof(path));
	if (!unwinder_entries(path, offsets))
		return 0;
	for (size_t i = 0; i < NUNWIND; i++) {
		struct bpf_link *link;

		if (!offsets[i])
			continue;
		link = bpf_program__attach_uprobe_opts(op->skel->progs.op_unwind, -1, path,
						       (size_t)offsets[i], NULL);
		if (!link) {
			gs_warn("cannot hook %s in %s: %s", unwind_entries[i], shown,
				strerror(errno));
			return 0;
		}
		if (keep_unwind_link(op, link))
			return -ENOMEM;
		n++;
	}
	gs_debug("hooked %zu unwinder entry points of %s", n, shown);
	*hooked = true;
	return 0;
}

/* Notes which unwinders the process maps, reading a file's symbols once. */
static int on_unwinder_mapping(void *ctx, const struct proc_mapping *m)
{
	struct scan_ctx *c = ctx;
	struct op_probes *op = c->op;
	uint64_t offsets[NUNWIND];
	char path[PATH_MAX + 32];
	size_t known;

	if (!m->exec)
		return 0;
	if (!key_index_find(&op->unwinders, m->dev, m->ino, &known)) {
		proc_maps_host_path(c->pid, m->path, path, sizeof(path));
		known = unwinder_entries(path, offsets) ? UNWINDER_UNHOOKED : NOT_UNWINDER;
		if (key_index_put(&op->unwinders, m->dev, m->ino, known))
			return -ENOMEM;
	}
	c->unwinder |= known != NOT_UNWINDER;
	c->hooked |= known == UNWINDER_HOOKED;
	c->unhooked |= known == UNWINDER_UNHOOKED;
	return 0;
}

/* Hooks an unwinder the process maps that is not hooked yet. */
static int hook_mapping(void *ctx, const struct proc_mapping *m)
{
	struct scan_ctx *c = ctx;
	struct op_probes *op = c->op;
	size_t known;
	bool hooked;
	int err;

	if (!m->exec || !key_index_find(&op->unwinders, m->dev, m->ino, &known) ||
	    known != UNWINDER_UNHOOKED)
		return 0;
	err = hook_unwinder(op, c->pid, m->path, &hooked);
	if (err)
		return err;
	c->hooked |= hooked;
	return key_index_put(&op->unwinders, m->dev, m->ino,
			     hooked ? UNWINDER_HOOKED : NOT_UNWINDER)
		   ? -ENOMEM
		   : 0;
}

/*
 * The process's unwinder is hooked before its operators are probed (see op_unwind), and only
 * then: a hook is a perf-event uprobe, whose detach waits for a grace period under the
 * kernel's event_mutex, one after the other, and every C++ process maps an unwinder. Hooked
 * at every scan of a process without operators, they took most of the time from Ctrl-C to a
 * CUDA program's table. false: not hooked, the operators are not probed.
 */
static bool unwinder_ready(struct scan_ctx *c, int *err)
{
	/* every unwinder it maps: libstdc++ throws through libgcc_s, and a process may map
	 * LLVM's libunwind beside it */
	if (c->unhooked) {
		int r = proc_maps_for_each(c->pid, hook_mapping, c);

		/* a process that exited meanwhile is no error: its operators are not probed */
		*err = r == -ENOMEM ? r : 0;
		c->unhooked = false;
	}
	return c->hooked && !*err;
}

/* Examines a file not seen before: sets *idx to its index in libs, NOT_OPS, or UNEXAMINED
 * (operators, but the process's unwinder could not be hooked: not probed). */
static int examine_file(struct op_probes *op, struct scan_ctx *c, const struct proc_mapping *m,
			size_t *idx)
{
	char path[PATH_MAX + 32];
	struct op_symbol *syms;
	struct op_lib *lib;
	size_t n;
	int err = 0;

	*idx = NOT_OPS;
	proc_maps_host_path(c->pid, m->path, path, sizeof(path));
	err = op_symbols_read(path, &syms, &n);
	if (err == -ENOMEM)
		return err;
	if (err <= 0)
		return 0; /* no operators, or not a file we can read: nothing to probe */
	err = 0;
	if (!unwinder_ready(c, &err)) {
		op_symbols_free(syms, n);
		*idx = UNEXAMINED;
		return err;
	}
	lib = array_grow((void **)&op->libs, &op->nlibs, &op->libs_cap, sizeof(*lib));
	if (!lib) {
		op_symbols_free(syms, n);
		return -ENOMEM;
	}
	lib->link = -1;
	*idx = op->nlibs - 1;
	err = probe_library(op, lib, path, m->path, syms, n);
	op_symbols_free(syms, n);
	return err;
}

static int on_mapping(void *ctx, const struct proc_mapping *m)
{
	struct scan_ctx *c = ctx;
	struct op_probes *op = c->op;
	size_t idx;
	int err = 0;

	if (!m->exec)
		return 0;
	if (!key_index_find(&op->files, m->dev, m->ino, &idx)) {
		err = examine_file(op, c, m, &idx);
		if (err || idx == UNEXAMINED)
			return err;
		if (key_index_put(&op->files, m->dev, m->ino, idx))
			return -ENOMEM;
	}
	if (idx == NOT_OPS || !unwinder_ready(c, &err))
		return err;
	c->libs++;
	report_lib(op, c->pid, m, idx);
	return 0;
}

/* Operators are only probed in a process that maps an unwinder: see op_unwind. */
static bool maps_unwinder(struct op_probes *op, struct scan_ctx *c)
{
	size_t dummy;
	int err = proc_maps_for_each(c->pid, on_unwinder_mapping, c);

	if (err || c->unwinder)
		return c->unwinder;
	if (!key_index_find(&op->warned, (uint64_t)c->pid, 0, &dummy) &&
	    !key_index_put(&op->warned, (uint64_t)c->pid, 0, 0))
		gs_debug("pid %d maps no C++ unwinder (libgcc_s): its operators, if any, are not "
			 "probed",
			 c->pid);
	return false;
}

int op_probes_scan(struct op_probes *op, pid_t pid)
{
	struct scan_ctx c = {.op = op, .pid = pid};
	int err;

	if (!op || op->detached)
		return 0;
	if (!maps_unwinder(op, &c))
		return 0;
	err = proc_maps_for_each(pid, on_mapping, &c);
	return err ? err : c.libs;
}

void op_probes_forget(struct op_probes *op, const struct pid_list *dead)
{
	if (!op)
		return;
	key_index_drop_pids(&op->reported, dead, 1);
	key_index_drop_pids(&op->warned, dead, 1);
}

size_t op_probes_tracked(const struct op_probes *op)
{
	return op ? op->reported.n + op->warned.n : 0;
}

void op_probes_detach(struct op_probes *op, struct link_batch *batch)
{
	bool probed = false;

	if (!op)
		return;
	for (size_t i = 0; i < op->nlibs; i++) {
		probed |= op->libs[i].link >= 0;
		link_batch_add_fd(batch, op->libs[i].link);
		op->libs[i].link = -1;
	}
	/* no operator was probed, so none of their returns can be pending: the unwinder hooks
	 * may go with the rest */
	if (!probed)
		op_probes_detach_unwinders(op, batch);
	op->detached = true;
}

/* The unwinder hooks go last: they are needed while a return may be pending (and still are
 * after gpuspy exits, for an operator that was running then and throws later: a window no
 * uretprobe-based tool can close). */
void op_probes_detach_unwinders(struct op_probes *op, struct link_batch *batch)
{
	if (!op)
		return;
	for (size_t i = 0; i < op->nunwind; i++)
		link_batch_add(batch, op->unwind_links[i], NULL);
	op->nunwind = 0;
}

void op_probes_unwind(struct op_probes *op, const struct gs_hdr *rec)
{
	const struct gs_op_unwind *u = (const void *)rec;
	/* never written into a process that runs: another gpuspy that held the same throw
	 * resumed it once it had put the same addresses back, and the stack has moved on */
	unsigned fixed = rec->size >= sizeof(*u) && hold_watchdog_stopped(rec) ? unwind_fix(u) : 0;

	(void)op;
	/* resume it whatever happened: BPF stopped it only for this */
	kill((pid_t)rec->pid, SIGCONT);
	gs_debug("thread %u of pid %u throws a C++ exception: %u return addresses put back",
		 rec->tid, rec->pid, fixed);
}

void op_probes_free(struct op_probes *op)
{
	struct link_batch batch;

	if (!op)
		return;
	link_batch_init(&batch);
	op_probes_detach(op, &batch);
	link_batch_close(&batch);
	op_probes_detach_unwinders(op, &batch);
	link_batch_free(&batch);
	free(op->libs);
	free(op->unwind_links);
	key_index_free(&op->unwinders);
	key_index_free(&op->warned);
	key_index_free(&op->files);
	key_index_free(&op->reported);
	string_pool_free(&op->names);
	free(op);
}
