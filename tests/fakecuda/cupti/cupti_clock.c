/* CUPTI's clock.  It is deliberately NOT CLOCK_MONOTONIC: every CUPTI
 * timestamp is CLOCK_MONOTONIC + FAKECUDA_CUPTI_CLOCK_OFFSET_NS (default
 * 1,000,000,000,000 ns), so a tracer that forgets to align CUPTI time with its
 * own clock is caught by tests.  A callback registered with
 * cuptiActivityRegisterTimestampCallback replaces that clock: records are
 * then converted into the caller's time base. */
#include "cupti_internal.h"

#include <stdlib.h>
#include <time.h>

#define FC_DEFAULT_CUPTI_OFFSET_NS 1000000000000ull

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static uint64_t g_offset;
static _Atomic(int64_t) g_user_delta; /* user clock - monotonic */
static _Atomic int g_have_user_clock;

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void load_offset(void)
{
	const char *v = getenv("FAKECUDA_CUPTI_CLOCK_OFFSET_NS");
	char *end = NULL;
	unsigned long long x = v ? strtoull(v, &end, 10) : 0;
	g_offset = (v && *v && end && *end == '\0') ? x : FC_DEFAULT_CUPTI_OFFSET_NS;
}

uint64_t fc_cupti_time(uint64_t mono)
{
	if (g_have_user_clock)
		return (uint64_t)((int64_t)mono + g_user_delta);
	pthread_once(&g_once, load_offset);
	return mono + g_offset;
}

void fc_cupti_clock_reset(void)
{
	g_have_user_clock = 0;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = fc_cupti_time(monotonic_ns());
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	if (!funcTimestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	uint64_t before = monotonic_ns();
	uint64_t user = funcTimestamp();
	uint64_t after = monotonic_ns();
	g_user_delta = (int64_t)user - (int64_t)(before + (after - before) / 2);
	g_have_user_clock = 1;
	return CUPTI_SUCCESS;
}
