/* Host clock of the simulator.  All simulated device timestamps are on
 * CLOCK_MONOTONIC so that host probes (uprobes, bpf_ktime_get_ns) and device
 * records share one time base; CUPTI adds its own offset on top. */
#include "drv.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

uint64_t fc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Synchronising calls really block: absolute sleeps do not drift. */
void fc_sleep_until(uint64_t t_ns)
{
	struct timespec ts = {
	    .tv_sec = (time_t)(t_ns / 1000000000ull),
	    .tv_nsec = (long)(t_ns % 1000000000ull),
	};
	while (fc_now_ns() < t_ns) {
		int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (rc != 0 && rc != EINTR)
			break;
	}
}

uint64_t fc_env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return dflt;
	char *end = NULL;
	unsigned long long x = strtoull(v, &end, 10);
	return (end && *end == '\0') ? (uint64_t)x : dflt;
}
