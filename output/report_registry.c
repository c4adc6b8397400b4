// SPDX-License-Identifier: MIT
#include <string.h>
#include "report.h"

const struct report_def *const report_all[] = {
    &report_osrt_sum, &report_osrt_thread, &report_offcpu, &report_processes, &report_losses, NULL,
};

const struct report_def *report_find(const char *name)
{
	for (size_t i = 0; report_all[i]; i++)
		if (!strcmp(report_all[i]->name, name))
			return report_all[i];
	return NULL;
}
