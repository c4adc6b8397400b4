/* SPDX-License-Identifier: MIT */
/* PyTorch operators on the Chrome timeline (export_chrome_ops.c), from the model. */
#ifndef GPUSPY_EXPORT_CHROME_OPS_H
#define GPUSPY_EXPORT_CHROME_OPS_H

#include <stdint.h>
#include "output/export/chrome_events.h"

/* cpu_op slices on their threads; 0, or -1 out of memory. */
int chrome_ops(struct chrome_ctx *c);
/* Kineto's dialect: `, "External id": N` of the innermost operator thread (pid, tid) was in at
 * ts, linking a CUDA API span to its operator; nothing otherwise. */
void chrome_op_external_id(struct chrome_ctx *c, uint32_t pid, uint32_t tid, uint64_t ts);

#endif /* GPUSPY_EXPORT_CHROME_OPS_H */
