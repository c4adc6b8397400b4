// SPDX-License-Identifier: MIT
/* processes: every traced process with its lifecycle as seen during the recording. */
#include <stdio.h>
#include <sys/wait.h>
#include "output/report/base/report.h"
#include "output/report/base/report_groups.h"
#include "output/report/host/host_reports.h"

static const struct table_col cols[] = {
    {"PID", "pid", COL_ID},
    {"PPID", "ppid", COL_ID},
    {"Threads", "threads", COL_INT},
    {"Syscalls", "syscalls", COL_INT},
    {"Start (ns)", "start_ns", COL_INT},
    {"End (ns)", "end_ns", COL_INT},
    {"Exit", "exit", COL_STR},
    {"Name", "name", COL_STR},
    {"Executable", "exe", COL_STR},
    {"User", "user", COL_STR},
    {"Container", "container", COL_STR},
    {"Cgroup", "cgroup", COL_STR},
};

static uint64_t relative(const struct trace_model *m, uint64_t ts)
{
	return ts > m->start_ts ? ts - m->start_ts : 0;
}

static void describe_exit(const struct model_process *p, char *buf, size_t len)
{
	int status = p->exit_code;

	if (!p->exited)
		snprintf(buf, len, "running");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "%d", WEXITSTATUS(status));
}

static int build(const struct trace_model *m, struct table *t)
{
	char exit_desc[32], user[64], container[192];

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct model_process *p = &m->procs[i];
		struct table_cell *row = table_add_row(t);

		if (!row)
			return -1;
		describe_exit(p, exit_desc, sizeof(exit_desc));
		row[0].u = p->pid;
		row[1].u = p->ppid;
		row[2].u = p->threads;
		row[3].u = p->syscalls;
		row[4].u = relative(m, p->start_ts);
		row[5].u = p->exited ? relative(m, p->end_ts) : relative(m, m->end_ts);
		report_group_label(m, p, GROUP_USER, user, sizeof(user));
		report_group_label(m, p, GROUP_CONTAINER, container, sizeof(container));
		if (table_set_str(&row[6], exit_desc) || table_set_str(&row[7], p->comm) ||
		    table_set_str(&row[8], p->exe) || table_set_str(&row[9], user) ||
		    table_set_str(&row[10], container) ||
		    table_set_str(&row[11], trace_model_process_cgroup(m, p)))
			return -1;
	}
	return 0;
}

const struct report_def report_processes = {
    .name = "processes",
    .summary = "traced processes: parent, threads, syscalls, lifetime, exit status, user, "
	       "container, cgroup",
    .cols = cols,
    .ncols = sizeof(cols) / sizeof(cols[0]),
    .default_sort = "syscalls",
    .build = build,
};
