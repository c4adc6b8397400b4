// Late CUPTI attach and detach: CUPTI arrives in a process that already runs CUDA.
// Usage: late_cupti CLIENT_LIB   (build/fakecuda/liblate_cupti_client.so)
//
// The program initialises CUDA, creates its streams, warms every kernel up and
// launches N_SPIN long spin kernels; while the first still runs and a helper
// thread waits in cudaStreamSynchronize for them, it dlopens the CUPTI client
// (as if injected) and opens session S1: M window kernels, a copy, a memset
// and two stream syncs; disable; K after kernels, a copy and a memset; forced
// flush and unsubscribe.  S2 subscribes again (a spin kernel and M2 window
// kernels behind it, all still pending when it disables), launches one after
// kernel and detaches with cuptiFinalize from an API exit callback; after
// more work S3 subscribes once more (one window kernel).  The
// client prints what each session received (S1, S2, S3 lines, see
// tests/fakecuda/tools/late_cupti_client.c): only window kernels and the calls
// made between enable and disable may appear.
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"

#define N_SPIN	2
#define M	5
#define K	3
#define M2	2
#define SPIN_NS 150000000LL
#define BYTES	4096

__global__ void window_kernel(int i)
{
	(void)i;
}

__global__ void after_kernel(int i)
{
	(void)i;
}

typedef int (*lc_fn)(void);
typedef void (*lc_report_fn)(const char *label);

static struct {
	lc_fn start, disable, finish, detach_on_exit;
	lc_report_fn report;
} lc;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	EXPECT(p, "dlsym %s: %s", name, dlerror());
	return p;
}

static void load_client(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	EXPECT(lib, "dlopen %s: %s", path, dlerror());
	lc.start = (lc_fn)sym(lib, "lc_start");
	lc.disable = (lc_fn)sym(lib, "lc_disable");
	lc.finish = (lc_fn)sym(lib, "lc_finish");
	lc.detach_on_exit = (lc_fn)sym(lib, "lc_detach_on_exit");
	lc.report = (lc_report_fn)sym(lib, "lc_report");
}

static cudaStream_t g_spin_stream;
static int g_helper_tid;
static cudaError_t g_helper_result;

// A call that begins before CUPTI is enabled and returns while it is.
static void *helper(void *arg)
{
	(void)arg;
	__atomic_store_n(&g_helper_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	g_helper_result = cudaStreamSynchronize(g_spin_stream);
	return NULL;
}

// Whether thread `tid` of this process is asleep (state S in its stat file).
static int sleeping(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); // the name may hold spaces
	return p && p[1] == ' ' && p[2] == 'S';
}

// Until the helper sleeps in its cudaStreamSynchronize (at most 1 s).
static void wait_for_helper(void)
{
	struct timespec tick = {0, 1000000};
	int tid = 0;
	for (int i = 0; i < 1000 && !tid; i++, nanosleep(&tick, NULL))
		tid = __atomic_load_n(&g_helper_tid, __ATOMIC_ACQUIRE);
	for (int i = 0; i < 1000 && tid && !sleeping(tid); i++)
		nanosleep(&tick, NULL);
	EXPECT(tid && sleeping(tid), "helper thread not waiting in cudaStreamSynchronize");
	printf("CHECK helper waits in cudaStreamSynchronize ok\n");
}

static void copy_and_set(void *d, const char *h, cudaStream_t s)
{
	CHECK(cudaMemcpyAsync(d, h, BYTES, cudaMemcpyHostToDevice, s));
	CHECK(cudaMemsetAsync(d, 0, BYTES, s));
}

int main(int argc, char **argv)
{
	static char host[BYTES];
	cudaStream_t s, s2;
	void *d = NULL;
	pthread_t th;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CLIENT_LIB\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	use_spin_duration(SPIN_NS);

	// CUDA in use before CUPTI exists: context, streams, memory, every kernel once
	CHECK(cudaStreamCreate(&s));
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK(cudaMalloc(&d, BYTES));
	window_kernel<<<1, 32, 0, s>>>(-1);
	after_kernel<<<1, 32, 0, s>>>(-1);
	copy_and_set(d, host, s2);
	CHECK(cudaDeviceSynchronize());

	// Long kernels: the first still runs, the second is queued, when CUPTI arrives
	long long t_spin = now_ns();
	for (int i = 0; i < N_SPIN; i++)
		spin_kernel<<<1, 32, 0, s>>>(SPIN_NS);
	CHECK(cudaGetLastError());
	g_spin_stream = s;
	EXPECT(pthread_create(&th, NULL, helper, NULL) == 0, "pthread_create");
	wait_for_helper();

	load_client(argv[1]);
	EXPECT(lc.start() == 0, "S1 start");
	long long t_enabled = now_ns();
	EXPECT(t_enabled - t_spin < SPIN_NS, "first spin kernel ended before CUPTI was enabled");
	printf("CHECK enabled while a kernel runs ok\n");
	for (int i = 0; i < M; i++)
		window_kernel<<<2, 64, 0, s>>>(i);
	CHECK(cudaGetLastError());
	copy_and_set(d, host, s2);
	CHECK(cudaStreamSynchronize(s2));
	CHECK(cudaStreamSynchronize(s)); // the spin kernels end meanwhile
	EXPECT(pthread_join(th, NULL) == 0, "pthread_join");
	CHECK(g_helper_result);
	EXPECT(lc.disable() == 0, "S1 disable");
	for (int i = 0; i < K; i++)
		after_kernel<<<2, 64, 0, s>>>(i);
	CHECK(cudaGetLastError());
	copy_and_set(d, host, s2);
	CHECK(cudaStreamSynchronize(s2));
	EXPECT(lc.finish() == 0, "S1 finish");
	lc.report("S1");
	CHECK(cudaDeviceSynchronize());

	// Subscribe again; the window kernels, queued behind a spin kernel, are still
	// pending at the disable; leave by cuptiFinalize from an API exit callback
	EXPECT(lc.start() == 0, "S2 start");
	spin_kernel<<<1, 32, 0, s>>>(SPIN_NS);
	for (int i = 0; i < M2; i++)
		window_kernel<<<3, 32, 0, s>>>(i);
	CHECK(cudaGetLastError());
	EXPECT(lc.disable() == 0, "S2 disable");
	after_kernel<<<3, 32, 0, s>>>(0);
	EXPECT(lc.detach_on_exit() == 0, "S2 arm detach");
	cudaError_t q = cudaStreamQuery(s); // its exit callback detaches
	EXPECT(q == cudaSuccess || q == cudaErrorNotReady, "cudaStreamQuery -> %s",
	       cudaGetErrorName(q));
	lc.report("S2");

	// Work while CUPTI is detached, then attach a third time
	after_kernel<<<4, 32, 0, s>>>(0);
	copy_and_set(d, host, s);
	CHECK(cudaDeviceSynchronize());
	EXPECT(lc.start() == 0, "S3 start");
	window_kernel<<<4, 32, 0, s>>>(0);
	CHECK(cudaDeviceSynchronize());
	EXPECT(lc.disable() == 0, "S3 disable");
	EXPECT(lc.finish() == 0, "S3 finish");
	lc.report("S3");

	CHECK(cudaFree(d));
	CHECK(cudaStreamDestroy(s2));
	CHECK(cudaStreamDestroy(s));
	printf("DONE ok\n");
	return 0;
}
