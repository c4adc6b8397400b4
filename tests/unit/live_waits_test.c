// SPDX-License-Identifier: MIT
/*
 * Tests of loader/live/live_waits.c, top's wait column, on made-up records with exact answers:
 * spans nested as they are recorded (innermost first), clipped to the interval, what a thread
 * is in at the refresh (a stand-in for thread_now_read), a wait begun before the attach, the
 * CUDA thread chosen, a process started in the interval, a thread gone, and more pieces waiting
 * than are kept. Every result must account for its whole interval. Exits 1 on any mismatch.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include "loader/live/live_waits.h"
#include "output/trace/cuda_api.h"

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* What the stand-in says each thread is in at the refresh. */
static struct {
	uint32_t pid, tid;
	int ret;
	struct thread_now now;
} nows[8];
static size_t nnows;

static int fake_now(void *ctx, uint32_t pid, uint32_t tid, struct thread_now *now)
{
	(void)ctx;
	memset(now, 0, sizeof(*now));
	for (size_t i = 0; i < nnows; i++)
		if (nows[i].pid == pid && nows[i].tid == tid) {
			*now = nows[i].now;
			return nows[i].ret;
		}
	return 0;
}

static void set_now(uint32_t pid, uint32_t tid, int ret, struct thread_now now)
{
	nows[nnows].pid = pid;
	nows[nnows].tid = tid;
	nows[nnows].ret = ret;
	nows[nnows++].now = now;
}

static struct gs_hdr hdr(uint16_t type, uint16_t size, uint32_t pid, uint32_t tid, uint64_t ts)
{
	return (struct gs_hdr){.type = type, .size = size, .pid = pid, .tid = tid, .ts = ts};
}

static void offcpu(struct live_waits *w, uint32_t pid, uint32_t tid, uint64_t start, uint64_t dur,
		   uint32_t reason)
{
	struct gs_offcpu o = {.hdr = hdr(GS_REC_OFFCPU, sizeof(o), pid, tid, start), .dur_ns = dur};

	o.reason = reason;
	CHECK(!live_waits_take(w, &o.hdr));
}

static void sys(struct live_waits *w, uint32_t pid, uint32_t tid, uint64_t start, uint64_t dur,
		uint32_t nr)
{
	struct gs_syscall s = {.hdr = hdr(GS_REC_SYSCALL, sizeof(s), pid, tid, start),
			       .dur_ns = dur};

	s.nr = nr;
	CHECK(!live_waits_take(w, &s.hdr));
}

static void cuda(struct live_waits *w, uint32_t pid, uint32_t tid, uint64_t start, uint64_t dur,
		 const char *fn, bool nested)
{
	struct gs_cuda_call c = {.hdr = hdr(GS_REC_CUDA_CALL, sizeof(c), pid, tid, start),
				 .dur_ns = dur};

	CHECK(cuda_probe_find(fn) >= 0);
	c.probe = (uint16_t)cuda_probe_find(fn);
	c.hdr.flags = nested ? GS_CUDA_NESTED : 0;
	CHECK(!live_waits_take(w, &c.hdr));
}

static void tick(struct live_waits *w, uint64_t now, const uint32_t *pids, size_t n)
{
	CHECK(!live_waits_tick(w, now, pids, n, fake_now, NULL));
	nnows = 0;
}

/* The result of `pid`: known, of thread `tid`, `wall` long, summing to it. */
static const struct live_wait_result *result(struct live_waits *w, uint32_t pid, uint32_t tid,
					     uint64_t wall)
{
	static const struct live_wait_result none;
	const struct live_wait_result *r = live_waits_result(w, pid);
	uint64_t sum = 0;

	CHECK(r && r->known && r->tid == tid && r->wall_ns == wall);
	if (!r)
		return &none;
	for (int k = 0; k < STALL_NKINDS; k++)
		sum += r->ns[k];
	CHECK(sum == r->wall_ns);
	return r;
}

/* A blocked read, a preemption and a page fault's I/O; then a futex wait begun before the
 * interval, and a read under way at the refresh, whose records come in the next interval. */
static void test_main_thread(void)
{
	const uint32_t pids[] = {100, 200};
	struct live_waits *w = live_waits_new();
	const struct live_wait_result *r;
	double pct;

	tick(w, 1000, pids, 2);
	offcpu(w, 100, 100, 2000, 3000, GS_OFFCPU_SLEEPING);
	sys(w, 100, 100, 1500, 4000, SYS_read);
	offcpu(w, 100, 100, 6000, 1000, GS_OFFCPU_PREEMPTED);
	offcpu(w, 100, 100, 7000, 500, GS_OFFCPU_BLOCKED);
	/* another thread of it makes no CUDA call: not the one shown */
	offcpu(w, 100, 101, 2000, 8000, GS_OFFCPU_SLEEPING);
	offcpu(w, 200, 200, 600, 1300, GS_OFFCPU_SLEEPING);
	sys(w, 200, 200, 500, 1500, SYS_futex);
	set_now(200, 200, 0,
		(struct thread_now){.in_syscall = true,
				    .nr = SYS_read,
				    .syscall_start = 8000,
				    .off_cpu = true,
				    .reason = GS_OFFCPU_SLEEPING,
				    .off_since = 8500});
	tick(w, 11000, pids, 2);

	r = result(w, 100, 100, 10000);
	CHECK(r->ns[STALL_INPUT_WAIT] == 4000);
	CHECK(r->ns[STALL_CPU_CONTENTION] == 1000);
	CHECK(r->ns[STALL_IO_WAIT] == 500);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 4500);
	CHECK(live_wait_dominant(r, &pct) == STALL_HOST_COMPUTE && pct == 45.0);

	/* the futex wait began before the interval: only its part in it counts */
	r = result(w, 200, 200, 10000);
	CHECK(r->ns[STALL_LOCK_WAIT] == 1000);
	CHECK(r->ns[STALL_INPUT_WAIT] == 3000);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 6000);

	/* the read's records, once it ended: what was counted at the refresh is not again */
	offcpu(w, 200, 200, 8500, 4000, GS_OFFCPU_SLEEPING);
	sys(w, 200, 200, 8000, 5000, SYS_read);
	tick(w, 21000, pids, 2);
	r = result(w, 200, 200, 10000);
	CHECK(r->ns[STALL_INPUT_WAIT] == 2000);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 8000);
	live_waits_free(w);
}

/* The thread with most CUDA calls is shown; a blocking call holds the syscall and the sleep
 * in it (sync), not a preemption (runq); the thread stays shown while no thread makes a call,
 * with the synchronisation it is in at the refresh. */
static void test_cuda_thread(void)
{
	const uint32_t pids[] = {300};
	struct live_waits *w = live_waits_new();
	const struct live_wait_result *r;

	tick(w, 1000, pids, 1);
	cuda(w, 300, 300, 1100, 10, "cudaLaunchKernel", false);
	for (int i = 0; i < 3; i++)
		cuda(w, 300, 301, 1200 + 100 * (uint64_t)i, 10, "cudaLaunchKernel", false);
	offcpu(w, 300, 301, 3000, 2000, GS_OFFCPU_SLEEPING);
	sys(w, 300, 301, 2900, 2200, SYS_clock_nanosleep);
	cuda(w, 300, 301, 2800, 2400, "cuCtxSynchronize", true);
	cuda(w, 300, 301, 2700, 2600, "cudaDeviceSynchronize", false);
	offcpu(w, 300, 301, 6000, 100, GS_OFFCPU_PREEMPTED);
	cuda(w, 300, 301, 5900, 300, "cudaDeviceSynchronize", false);
	tick(w, 11000, pids, 1);
	r = result(w, 300, 301, 10000);
	CHECK(r->ns[STALL_SYNC_WAIT] == 2800);
	CHECK(r->ns[STALL_CPU_CONTENTION] == 100);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 7100);

	offcpu(w, 300, 301, 12050, 20, GS_OFFCPU_PREEMPTED);
	set_now(
	    300, 301, 0,
	    (struct thread_now){.in_cuda = true,
				.cuda_probe = (uint16_t)cuda_probe_find("cudaStreamSynchronize"),
				.cuda_start = 12000,
				.in_syscall = true,
				.nr = SYS_clock_nanosleep,
				.syscall_start = 12100,
				.off_cpu = true,
				.reason = GS_OFFCPU_SLEEPING,
				.off_since = 12200});
	tick(w, 21000, pids, 1);
	r = result(w, 300, 301, 10000);
	CHECK(r->ns[STALL_SYNC_WAIT] == 8980);
	CHECK(r->ns[STALL_CPU_CONTENTION] == 20);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 1000);
	live_waits_free(w);
}

/* A main thread in a read since before the attach (no BPF entry: /proc says so) at the
 * baseline: the read's end has no record, the thread's next span bounds it. */
static void test_wait_before_attach(void)
{
	const uint32_t pids[] = {800};
	struct live_waits *w = live_waits_new();
	const struct live_wait_result *r;

	set_now(
	    800, 800, 0,
	    (struct thread_now){
		.in_syscall = true, .nr = SYS_read, .off_cpu = true, .reason = GS_OFFCPU_SLEEPING});
	tick(w, 1000, pids, 1);
	offcpu(w, 800, 800, 5000, 100, GS_OFFCPU_PREEMPTED);
	tick(w, 11000, pids, 1);
	r = result(w, 800, 800, 10000);
	CHECK(r->ns[STALL_INPUT_WAIT] == 4000);
	CHECK(r->ns[STALL_CPU_CONTENTION] == 100);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 5900);
	live_waits_free(w);
}

/* A thread that starts making CUDA calls in the interval is shown with what it did before its
 * first one: here a sleep. */
static void test_new_cuda_thread(void)
{
	const uint32_t pids[] = {700};
	struct live_waits *w = live_waits_new();
	const struct live_wait_result *r;

	tick(w, 1000, pids, 1);
	offcpu(w, 700, 702, 1000, 6000, GS_OFFCPU_SLEEPING);
	sys(w, 700, 702, 1000, 6000, SYS_clock_nanosleep);
	for (int i = 0; i < 5; i++)
		cuda(w, 700, 702, 7000 + 100 * (uint64_t)i, 10, "cudaLaunchKernel", false);
	offcpu(w, 700, 700, 1000, 10000, GS_OFFCPU_SLEEPING);
	sys(w, 700, 700, 1000, 10000, SYS_futex);
	tick(w, 11000, pids, 1);
	r = result(w, 700, 702, 10000);
	CHECK(r->ns[STALL_OTHER_WAIT] == 6000);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 4000);
	live_waits_free(w);
}

/* A process forked in the interval counts from its start; one whose thread is gone has no
 * result; one no longer listed is forgotten. */
static void test_lifecycle(void)
{
	const uint32_t pids[] = {400, 500}, later[] = {500};
	struct live_waits *w = live_waits_new();
	struct gs_fork f = {.hdr = hdr(GS_REC_FORK, sizeof(f), 400, 400, 16000), .child_pid = 500};
	const struct live_wait_result *r;

	tick(w, 11000, pids, 1);
	CHECK(!live_waits_take(w, &f.hdr));
	offcpu(w, 500, 500, 17000, 1000, GS_OFFCPU_SLEEPING);
	set_now(400, 400, -ESRCH, (struct thread_now){0});
	tick(w, 21000, pids, 2);
	r = live_waits_result(w, 400);
	CHECK(r && !r->known);
	r = result(w, 500, 500, 5000);
	CHECK(r->ns[STALL_OTHER_WAIT] == 1000);
	CHECK(r->ns[STALL_HOST_COMPUTE] == 4000);
	tick(w, 31000, later, 1);
	CHECK(!live_waits_result(w, 400));
	result(w, 500, 500, 10000);
	live_waits_free(w);
}

/* More spans waiting for the CUDA call around them than are kept: the oldest are sorted as if
 * nothing held them, and the interval is still all accounted for. */
static void test_many_pieces(void)
{
	const uint32_t pids[] = {600};
	struct live_waits *w = live_waits_new();
	const struct live_wait_result *r;

	tick(w, 1000, pids, 1);
	cuda(w, 600, 600, 1000, 10, "cudaLaunchKernel", false);
	for (uint64_t i = 0; i < 100; i++) {
		offcpu(w, 600, 600, 2000 + 50 * i, 10, GS_OFFCPU_SLEEPING);
		sys(w, 600, 600, 1995 + 50 * i, 20, SYS_sched_yield);
	}
	cuda(w, 600, 600, 1990, 5020, "cudaDeviceSynchronize", false);
	tick(w, 11000, pids, 1);
	r = result(w, 600, 600, 10000);
	/* kept: the last 8 yields (O and S pieces), 160 ns, held by the call (sync); the 92
	 * before them were sorted on their own (sleeping in sched_yield: other; on CPU in it:
	 * cpu), and the call does not count them again */
	CHECK(r->ns[STALL_SYNC_WAIT] == 5020 - 92 * 20);
	CHECK(r->ns[STALL_OTHER_WAIT] == 92 * 10);
	live_waits_free(w);
}

int main(void)
{
	test_main_thread();
	test_cuda_thread();
	test_new_cuda_thread();
	test_wait_before_attach();
	test_lifecycle();
	test_many_pieces();
	if (failures)
		fprintf(stderr, "live_waits_test: %d failure(s)\n", failures);
	else
		printf("live_waits_test: ok\n");
	return failures ? 1 : 0;
}
