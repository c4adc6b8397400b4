// SPDX-License-Identifier: MIT
/* Option values: numbers, durations, pid lists (value_parse.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "lib/value_parse.h"

int gs_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int gs_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		uint64_t ns;
	} units[] = {
	    {"ns", 1},
	    {"us", 1000},
	    {"ms", 1000000},
	    {"s", 1000000000ULL},
	    {"m", 60000000000ULL},
	    {"h", 3600000000000ULL},
	    {"", 1000000000ULL},
	};
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > UINT64_MAX / units[i].ns)
			return -1;
		*out = v * units[i].ns;
		return 0;
	}
	return -1;
}

int gs_parse_pid_list(const char *s, pid_t **pids, size_t *npids)
{
	char *copy = strdup(s), *save = NULL, *tok;
	pid_t *list = NULL;
	size_t n = 0;
	uint64_t v;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		pid_t *grown;

		if (gs_parse_u64(tok, 1, 4194304, &v))
			goto fail;
		grown = realloc(list, (n + 1) * sizeof(*list));
		if (!grown)
			goto fail;
		list = grown;
		list[n++] = (pid_t)v;
	}
	if (!n)
		goto fail;
	free(copy);
	*pids = list;
	*npids = n;
	return 0;
fail:
	free(copy);
	free(list);
	return -1;
}
