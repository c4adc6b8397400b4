/* SPDX-License-Identifier: MIT */
/* Training steps on the Chrome timeline (export_chrome_steps.c), from output/analysis/steps.h. */
#ifndef GPUSPY_EXPORT_CHROME_STEPS_H
#define GPUSPY_EXPORT_CHROME_STEPS_H

#include <stddef.h>
#include "output/export/chrome_events.h"

/* Chrome: a "steps" track per process with steps, one slice per step. Kineto's dialect: a
 * ProfilerStep#N annotation per step on the loop's thread, for processes whose trace has no
 * ProfilerStep#N ranges of its own. Steps found by c->steps_by (NULL: the preferred way).
 * 0, or -1 with a message in err. */
int chrome_steps(struct chrome_ctx *c, char *err, size_t errlen);

#endif /* GPUSPY_EXPORT_CHROME_STEPS_H */
