// SPDX-License-Identifier: MIT
/*
 * losses: every kind of counted loss, zero or not, so scripts can check a recording is whole:
 * the BPF side's, then the GPU records' (batches the ring buffer could not take, batches
 * missing from a bridge's sequence, CUPTI's dropped records and the bridge's own losses, each
 * summed over processes). The rows add up to the header's "events lost".
 */
#include "output/model/gpu/gpu_model.h"
#include "output/report/base/report.h"
#include "output/report/host/host_reports.h"

static const struct table_col cols[] = {
    {"Lost", "lost", COL_INT},
    {"Kind", "kind", COL_STR},
};

static int add_row(struct table *t, uint64_t lost, const char *kind)
{
	struct table_cell *row = table_add_row(t);

	if (!row || table_set_str(&row[1], kind))
		return -1;
	row[0].u = lost;
	return 0;
}

static int build(const struct trace_model *m, struct table *t)
{
	const struct gpu_model *g = &m->gpu;

	for (unsigned k = 0; k < GS_LOSS_NKINDS; k++)
		if (add_row(t, m->losses[k], gs_loss_kind_name(k)))
			return -1;
	for (unsigned k = 0; k < GPU_LOSS_NKINDS; k++)
		if (add_row(t, gpu_loss_count(g, k), gpu_loss_kind_name(k)))
			return -1;
	return 0;
}

const struct report_def report_losses = {
    .name = "losses",
    .summary = "events lost while recording, by kind (ring buffer full, maps full)",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "lost",
    .build = build,
};
