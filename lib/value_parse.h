/* SPDX-License-Identifier: MIT */
/* Option values as gpuspy's commands accept them: numbers, durations, pid lists. */
#ifndef GPUSPY_VALUE_PARSE_H
#define GPUSPY_VALUE_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0 on success, -1 when `s` is not a number in [min, max] (nothing printed). */
int gs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "10s", "500ms", "2m", "1h", "250us", "100ns"; a bare number means seconds. */
int gs_parse_duration_ns(const char *s, uint64_t *out);
/* "1234,5678": a newly allocated array of pids. */
int gs_parse_pid_list(const char *s, pid_t **pids, size_t *npids);

#endif /* GPUSPY_VALUE_PARSE_H */
