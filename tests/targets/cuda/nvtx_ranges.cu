// NVTX ranges around CUDA work, with known nesting and durations: push/pop ranges nested two
// deep, a start/end range, and a mark.  Each range prints what it measured itself:
//   NVTX style=<PushPop|StartEnd|Mark> name=<name> depth=<n> ns=<duration measured here>
// so a tracer's ranges can be compared with them (a range's own timing brackets the
// tracer's, a few microseconds wider).  NVTX is header-only: the ranges reach a tool only if
// NVTX_INJECTION64_PATH is set when the first NVTX call runs.
#include <nvtx3/nvToolsExt.h>
#include <time.h>

#include "common.h"

#define OUTER_NS 30000000LL // 30 ms, with a 10 ms inner range and a 5 ms kernel in it
#define INNER_NS 10000000LL

static void sleep_ns(long long ns)
{
	struct timespec ts = {ns / 1000000000LL, ns % 1000000000LL};
	nanosleep(&ts, NULL);
}

static void print_range(const char *style, const char *name, int depth, long long ns)
{
	printf("NVTX style=%s name=%s depth=%d ns=%lld\n", style, name, depth, ns);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	use_spin_duration(5000000LL);
	CHECK(cudaSetDevice(0));
	long long t_outer = now_ns();
	nvtxRangePushA("step");
	spin_kernel<<<1, 32>>>(5000000LL);
	print_launch(SPIN_NAME, dim3(1), dim3(32), "default");
	long long t_inner = now_ns();
	nvtxRangePushA("data_load");
	sleep_ns(INNER_NS);
	nvtxRangePop();
	print_range("PushPop", "data_load", 1, now_ns() - t_inner);
	CHECK(sync_device());
	sleep_ns(OUTER_NS - (now_ns() - t_outer));
	nvtxRangePop();
	print_range("PushPop", "step", 0, now_ns() - t_outer);
	nvtxMarkA("checkpoint");
	print_range("Mark", "checkpoint", 0, 0);
	long long t_io = now_ns();
	nvtxRangeId_t io = nvtxRangeStartA("io");
	sleep_ns(5000000LL);
	nvtxRangeEnd(io);
	print_range("StartEnd", "io", 0, now_ns() - t_io);
	printf("DONE ok\n");
	return 0;
}
