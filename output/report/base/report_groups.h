/* SPDX-License-Identifier: MIT */
/*
 * `report --group-by process|container|user`: the trace's processes partitioned by who ran
 * them or where (GS_REC_PROC_INFO: the effective user, the container, pod or service parsed
 * from the cgroup path). Each group's reports are built from the trace read for that group's
 * processes only (pid_filter.h), so every report aggregates within the group exactly as it
 * does over a whole recording.
 */
#ifndef GPUSPY_REPORT_GROUPS_H
#define GPUSPY_REPORT_GROUPS_H

#include <stddef.h>
#include <stdint.h>
#include "output/model/trace_model.h"
#include "output/trace/pid_filter.h"

enum group_by { GROUP_NONE, GROUP_PROCESS, GROUP_CONTAINER, GROUP_USER };

struct report_group {
	char label[192]; /* "4242 python3", "docker:0123456789ab", "alice" */
	uint32_t *pids;	 /* sorted */
	size_t n, cap;
	struct pid_filter filter; /* over pids, once built */
};

/* Parses "process", "container" or "user"; GROUP_NONE when it is none of them. */
enum group_by group_by_parse(const char *s);
const char *group_by_name(enum group_by by);
/* The group of one process: its label. Processes the trace has no attribution for are
 * "unknown" (traces of a gpuspy before attribution, or processes never read). */
void report_group_label(const struct trace_model *m, const struct model_process *p,
			enum group_by by, char *buf, size_t len);
/* Every process of the model in its group; groups sorted by label (by pid for processes).
 * 0, or -1 when out of memory (nothing to free then). */
int report_groups_build(const struct trace_model *m, enum group_by by, struct report_group **out,
			size_t *n);
void report_groups_free(struct report_group *g, size_t n);

#endif /* GPUSPY_REPORT_GROUPS_H */
