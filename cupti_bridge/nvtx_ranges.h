/* SPDX-License-Identifier: MIT */
/* NVTX ranges and marks as the NVTX entry points (nvtx.c) record them (nvtx_ranges.c). */
#ifndef GPUSPY_NVTX_RANGES_H
#define GPUSPY_NVTX_RANGES_H

#include <stdint.h>

/* The session being recorded, 0 when none: read once per NVTX call and passed on, so a call
 * that decided to build a name records it in that session or not at all. */
uint64_t nvtx_session(void);
/* Return the 0-based depth of the range pushed / popped; pop: -1 with nothing pushed. */
int nvtx_push(uint64_t session, const char *name);
int nvtx_pop(void);
/* A new range id, unique in the process whether or not it is recorded. */
uint64_t nvtx_start(uint64_t session, const char *name);
void nvtx_end(uint64_t id);
void nvtx_mark(uint64_t session, const char *name);

#endif /* GPUSPY_NVTX_RANGES_H */
