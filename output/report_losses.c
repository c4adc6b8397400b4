// SPDX-License-Identifier: MIT
/* losses: every kind of counted loss, zero or not, so scripts can check a recording is whole. */
#include "report.h"

static const struct table_col cols[] = {
    {"Lost", "lost", COL_INT},
    {"Kind", "kind", COL_STR},
};

static int build(const struct trace_model *m, struct table *t)
{
	for (unsigned k = 0; k < GS_LOSS_NKINDS; k++) {
		struct table_cell *row = table_add_row(t);

		if (!row || table_set_str(&row[1], gs_loss_kind_name(k)))
			return -1;
		row[0].u = m->losses[k];
	}
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
