/* SPDX-License-Identifier: MIT */
/* Training steps from NVTX ranges: torch.profiler's ProfilerStep#N, or ranges the user names. */
#ifndef GPUSPY_STEPS_NVTX_H
#define GPUSPY_STEPS_NVTX_H

#include <stddef.h>
#include "output/analysis/step_list.h"
#include "output/trace/pid_filter.h"

/* Reads the trace at `path` again (the processes `filter` keeps; NULL: all) and appends, per
 * process, one step per NVTX push/pop or start/end range whose name starts with `prefix`.
 * 0, or -1 with a message in err. */
int steps_nvtx_find(const char *path, const struct pid_filter *filter, const char *prefix,
		    struct step_list *out, char *err, size_t errlen);

#endif /* GPUSPY_STEPS_NVTX_H */
