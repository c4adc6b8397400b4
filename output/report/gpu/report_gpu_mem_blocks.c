// SPDX-License-Identifier: MIT
/* gpu_mem_blocks: the leak candidates, every block still allocated when the recording ended. */
#include <inttypes.h>
#include <stdio.h>
#include "output/report/base/report.h"
#include "output/report/gpu/gpu_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},    {"Address", "address", COL_STR},	 {"Bytes", "bytes", COL_INT},
    {"Kind", "kind", COL_STR}, {"Allocated By", "api", COL_STR}, {"At (ns)", "at_ns", COL_INT},
};

struct block_rows {
	const struct trace_model *m;
	struct table *t;
};

static int add_row(const struct mem_block *b, void *arg)
{
	struct block_rows *br = arg;
	const struct gs_cuda_probe *p = cuda_probe(b->probe);
	struct table_cell *row = table_add_row(br->t);
	char addr[24];

	snprintf(addr, sizeof(addr), "0x%" PRIx64, b->addr);
	if (!row || table_set_str(&row[1], addr) ||
	    table_set_str(&row[3], cuda_mem_kind_name((enum gs_mem_kind)b->kind)) ||
	    table_set_str(&row[4], p ? p->name : "?"))
		return -1;
	row[0].u = b->pid;
	row[2].u = b->bytes;
	/* relative to the recording start, as the processes report shows times */
	row[5].u = b->ts > br->m->start_ts ? b->ts - br->m->start_ts : 0;
	return 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	struct block_rows br = {m, t};

	return mem_blocks_each(&m->cuda.mem.blocks, add_row, &br);
}

const struct report_def report_gpu_mem_blocks = {
    .name = "gpu_mem_blocks",
    .summary = "GPU memory blocks still allocated at the end of the recording (leak candidates)",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "bytes",
    .build = build,
};
