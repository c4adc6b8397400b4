// A CUDA process that keeps the GPU busy a known share of the time, for the live views'
// GPU busy figures (tests/gpu_sample.bats).  Usage: duty_loop READY_FILE
// It sets up (stream, lazy module load), creates READY_FILE, then reads stdin:
//   run MS  for MS ms, launch one SPIN_NS spin_kernel every SLOT_NS on an absolute schedule
//           (so the GPU is busy SPIN_NS/SLOT_NS = 50% of the time whatever the CPU's
//           delays, as long as none is longer than the gap), then "RUN done n=N"
//   exit    (or EOF) print "DONE ok", exit 0
#include <string.h>

#include "common.h"

#define SPIN_NS 10000000LL // 10 ms
#define SLOT_NS 20000000LL // one kernel every 20 ms: 50% busy

static cudaStream_t s;

static void sleep_until(long long when)
{
	struct timespec ts = {(time_t)(when / 1000000000LL), (long)(when % 1000000000LL)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

static void run(long long ms)
{
	long long start = now_ns(), end = start + ms * 1000000LL;
	long n = 0;

	for (long long at = start; at < end; at += SLOT_NS, n++) {
		sleep_until(at);
		spin_kernel<<<1, 1, 0, s>>>(SPIN_NS);
	}
	CHECK(cudaGetLastError());
	CHECK(cudaStreamSynchronize(s));
	printf("RUN done n=%ld\n", n);
}

int main(int argc, char **argv)
{
	char line[64];
	long long ms;

	EXPECT(argc == 2, "usage: duty_loop READY_FILE");
	setvbuf(stdout, NULL, _IOLBF, 0);
	use_spin_duration(SPIN_NS);
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s));
	spin_kernel<<<1, 1, 0, s>>>(0); // loads the module before the ready file
	CHECK(cudaStreamSynchronize(s));
	FILE *f = fopen(argv[1], "w");
	EXPECT(f && fclose(f) == 0, "cannot create %s", argv[1]);
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "run %lld", &ms) == 1 && ms > 0)
			run(ms);
		else if (!strncmp(line, "exit", 4))
			break;
	}
	printf("DONE ok\n");
	return 0;
}
