/* SPDX-License-Identifier: MIT */
/*
 * Short, specific advice for a stall finding, as TensorBoard's profiler recommends: what to
 * try first, naming the place and call the finding found. Honest: it says what usually helps,
 * never that it will.
 */
#ifndef GPUSPY_STALL_ADVICE_H
#define GPUSPY_STALL_ADVICE_H

#include <stdbool.h>
#include <stdint.h>

/* malloc'd advice for a finding of `kind` (enum stall_kind) in processes that ran GPU work
 * (`gpu`) or not, or NULL out of memory. */
char *stall_advice(uint32_t kind, const char *where, const char *what, const char *cause, bool gpu);

#endif /* GPUSPY_STALL_ADVICE_H */
