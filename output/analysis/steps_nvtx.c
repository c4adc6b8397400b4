// SPDX-License-Identifier: MIT
/* Steps from NVTX ranges (steps_nvtx.h). The model keeps NVTX ranges as totals per name only, so
 * the ranges are read from the file again, as gpu_join and gpu_idle read spans. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/array_grow.h"
#include "output/analysis/steps_nvtx.h"
#include "output/trace/trace_reader.h"

struct range {
	uint32_t pid, tid;
	uint64_t start, end;
};

struct ranges {
	struct range *v;
	size_t n, cap;
};

static int on_nvtx(struct ranges *rs, const struct gs_nvtx *n, const char *prefix)
{
	struct range *r;

	if (n->kind == GS_NVTX_MARK || strncmp(n->name, prefix, strlen(prefix)))
		return 0;
	r = array_grow((void **)&rs->v, &rs->n, &rs->cap, sizeof(*r));
	if (!r)
		return -1;
	*r = (struct range){n->hdr.pid, n->hdr.tid, n->hdr.ts, n->hdr.ts + n->dur_ns};
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid > y->pid) - (x->pid < y->pid);
	return (x->start > y->start) - (x->start < y->start);
}

static int read_ranges(const char *path, const struct pid_filter *filter, const char *prefix,
		       struct ranges *rs, char *err, size_t errlen)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	int ret;

	if (trace_reader_open(path, &r, err, errlen))
		return -1;
	trace_reader_set_filter(r, filter);
	while ((ret = trace_reader_next(r, &h)) > 0) {
		if (h->type == GS_REC_NVTX && on_nvtx(rs, (const void *)h, prefix)) {
			snprintf(err, errlen, "out of memory reading NVTX ranges");
			ret = -1;
			break;
		}
	}
	if (ret < 0 && !*err)
		snprintf(err, errlen, "%s", trace_reader_error(r));
	trace_reader_close(r);
	return ret < 0 ? -1 : 0;
}

int steps_nvtx_find(const char *path, const struct pid_filter *filter, const char *prefix,
		    struct step_list *out, char *err, size_t errlen)
{
	struct ranges rs = {0};
	char how[192];
	int ret = 0;

	*err = '\0';
	if (read_ranges(path, filter, prefix, &rs, err, errlen)) {
		free(rs.v);
		return -1;
	}
	if (rs.n) /* qsort takes no NULL array, even empty */
		qsort(rs.v, rs.n, sizeof(*rs.v), cmp_range);
	snprintf(how, sizeof(how), "nvtx ranges %s*", prefix);
	for (size_t i = 0; !ret && i < rs.n; i++) {
		if (!i || rs.v[i].pid != rs.v[i - 1].pid)
			ret = step_list_begin(out, rs.v[i].pid, rs.v[i].tid, how);
		ret = ret ? ret : step_list_add(out, rs.v[i].start, rs.v[i].end);
	}
	free(rs.v);
	if (ret)
		snprintf(err, errlen, "out of memory");
	return ret;
}
