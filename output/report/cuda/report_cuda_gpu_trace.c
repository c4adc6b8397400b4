// SPDX-License-Identifier: MIT
/*
 * cuda_gpu_trace: nsys's GPU trace, one row per kernel, copy and memset in start order, with
 * the process and thread that launched it (from the join of its correlation id to the uprobe
 * span of the launching call; 0 when unknown). Kernel columns are blank in copy rows and the
 * size columns blank in kernel rows, as nsys prints them.
 */
#include <stdlib.h>
#include "output/model/gpu/gpu_model.h"
#include "output/report/base/report.h"
#include "output/report/cuda/cuda_reports.h"

#define MB 1e6

enum {
	C_START,
	C_DUR,
	C_CORR,
	C_GX,
	C_GY,
	C_GZ,
	C_BX,
	C_BY,
	C_BZ,
	C_REG,
	C_SSMEM,
	C_DSMEM,
	C_BYTES,
	C_THRU,
	C_DEV,
	C_CTX,
	C_STRM,
	C_PID,
	C_TID,
	C_NAME,
	C_MANGLED,
};

static const struct table_col cols[] = {
    [C_START] = {"Start (ns)", "start_ns", COL_INT},
    [C_DUR] = {"Duration (ns)", "duration_ns", COL_INT},
    [C_CORR] = {"CorrId", "correlation", COL_ID},
    [C_GX] = {"GrdX", "grid_x", COL_ID},
    [C_GY] = {"GrdY", "grid_y", COL_ID},
    [C_GZ] = {"GrdZ", "grid_z", COL_ID},
    [C_BX] = {"BlkX", "block_x", COL_ID},
    [C_BY] = {"BlkY", "block_y", COL_ID},
    [C_BZ] = {"BlkZ", "block_z", COL_ID},
    [C_REG] = {"Reg/Trd", "registers", COL_ID},
    [C_SSMEM] = {"StcSMem (MB)", "static_smem_mb", COL_FLOAT3},
    [C_DSMEM] = {"DymSMem (MB)", "dynamic_smem_mb", COL_FLOAT3},
    [C_BYTES] = {"Bytes (MB)", "bytes_mb", COL_FLOAT3},
    [C_THRU] = {"Throughput (MB/s)", "throughput_mbps", COL_FLOAT3},
    [C_DEV] = {"Device", "device", COL_ID},
    [C_CTX] = {"Ctx", "context", COL_ID},
    [C_STRM] = {"Strm", "stream", COL_ID},
    [C_PID] = {"PID", "pid", COL_ID},
    [C_TID] = {"TID", "tid", COL_ID},
    [C_NAME] = {"Name", "name", COL_STR},
    [C_MANGLED] = {"Mangled", "mangled", COL_STR},
};

static int cmp_start(const void *a, const void *b, void *model)
{
	const struct gpu_model *g = model;
	const struct gpu_op *x = &g->ops[*(const size_t *)a], *y = &g->ops[*(const size_t *)b];

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (*(const size_t *)a > *(const size_t *)b) -
	       (*(const size_t *)a < *(const size_t *)b);
}

static void kernel_cells(struct table_cell *row, const struct gpu_op *op)
{
	for (int i = 0; i < 3; i++) {
		row[C_GX + i].u = op->grid[i];
		row[C_BX + i].u = op->block[i];
	}
	row[C_REG].u = op->registers;
	row[C_SSMEM].d = op->static_smem / MB;
	row[C_DSMEM].d = op->dynamic_smem / MB;
	row[C_BYTES].empty = row[C_THRU].empty = true;
}

static void copy_cells(struct table_cell *row, const struct gpu_op *op)
{
	for (int c = C_GX; c <= C_DSMEM; c++)
		row[c].empty = true;
	row[C_BYTES].d = (double)op->bytes / MB;
	/* bytes per ns are GB/s: MB/s is that times 1000 */
	if (op->dur)
		row[C_THRU].d = (double)op->bytes / (double)op->dur * 1000.0;
	else
		row[C_THRU].empty = true;
}

static int add_row(const struct trace_model *m, struct table *t, const struct gpu_op *op)
{
	struct table_cell *row = table_add_row(t);
	char buf[64];

	if (!row || table_set_str(&row[C_NAME], gpu_op_name(&m->gpu, op, buf, sizeof(buf))) ||
	    table_set_str(&row[C_MANGLED], gpu_op_mangled(&m->gpu, op, buf, sizeof(buf))))
		return -1;
	row[C_START].u = op->ts > m->start_ts ? op->ts - m->start_ts : 0;
	row[C_DUR].u = op->dur;
	row[C_CORR].u = op->correlation;
	if (op->kind == GPU_OP_KERNEL)
		kernel_cells(row, op);
	else
		copy_cells(row, op);
	row[C_DEV].u = op->device;
	row[C_CTX].u = op->context;
	row[C_STRM].u = op->stream;
	row[C_PID].u = op->pid;
	row[C_TID].u = op->launch_tid;
	return 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;
	size_t *order = malloc((g->nops + 1) * sizeof(*order)), n = 0;
	int ret = 0;

	if (!order)
		return -1;
	for (size_t i = 0; i < g->nops; i++)
		if (g->ops[i].kind != GPU_OP_SYNC)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), cmp_start, (void *)g);
	for (size_t i = 0; i < n && !ret; i++)
		ret = add_row(m, t, &g->ops[order[i]]);
	free(order);
	return ret;
}

const struct report_def report_cuda_gpu_trace = {
    .name = "cuda_gpu_trace",
    .summary = "GPU kernels, copies and memsets in start order (CUPTI bridge), as nsys stats",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = NULL, /* start order */
    .build = build,
};
