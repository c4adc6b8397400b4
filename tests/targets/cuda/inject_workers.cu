// A multi-threaded CUDA process for loading gpuspy's CUPTI bridge into while it is busy,
// forking or exiting (tests/inject.bats).  Usage: inject_workers READY_FILE
// It sets up (context, main stream, buffers, lazy module load), creates READY_FILE and then
// does only what stdin asks, one command a line (it sits in a blocking read in between):
//   go N          main thread: N x (tick_kernel launch, 4096-byte HtoD cudaMemcpyAsync,
//                 4096-byte DtoH cudaMemcpyAsync back, cudaStreamSynchronize, compare),
//                 then "BATCH done n=N"
//   busy T        start T worker threads (1..8), each looping on a stream of its own until
//                 `quiet`: cudaMalloc of a scratch block (8-12 KiB, varying), HtoD copy of a
//                 pattern, busy_kernel, DtoD copy into the scratch block, DtoH copy back,
//                 cudaStreamSynchronize, compare, cudaFree, host malloc/free and CPU work;
//                 "WORKER i tid=TID started" each, "BUSY threads=T" once each has looped once
//   count N       every worker does exactly N counted iterations, between busy ones:
//                 count_kernel<<<i + 1, 64>>> (worker i), 4096-byte HtoD copy, 4096-byte DtoH
//                 copy back, cudaStreamSynchronize, compare; "COUNT done n=N threads=T"
//   spin MS       the main thread is busy too, for MS ms, without reading stdin: tick_kernel
//                 launches, 2048-byte round trips (HtoD, DtoH, sync, compare), CPU work and
//                 1 ms sleeps; then "SPIN done ms=MS iterations=K"
//   quiet         stop and join the workers: "WORKER i tid=TID iterations=K counted=C ok"
//                 each, then "QUIET ok"
//   fork cpu|exec fork a child that does CPU work and _exit(0)s (never touching CUDA) or that
//                 execs /bin/true; the parent waits: "FORK mode=M status=0 ok"
//   slowexit MS   from now on the exit path is slow: an atexit handler prints "EXITING",
//                 spends MS ms in steps, each a tick_kernel launch, a 4096-byte round trip
//                 (HtoD, DtoH, sync, compare) and a 10 ms sleep, then frees its device block:
//                 "EXITED ok steps=K"
//   exit          (or EOF) quiet the workers, free the buffers, "DONE ok", exit 0
// Every data transfer is checked by a round trip (the simulator moves real bytes; kernels are
// never checked).  The first failed check prints "FAIL ..." and exits 1.
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define TICK_NAME   "_Z11tick_kernelPj"
#define BUSY_NAME   "_Z11busy_kernelPh"
#define COUNT_NAME  "_Z12count_kernelPh"
#define TICK_NS	    10000   // as cuda_loop's
#define BUSY_NS	    1000000 // a busy iteration spends about 1 ms waiting for the GPU
#define COUNT_NS    50000
#define COPY_BYTES  4096
#define SPIN_BYTES  2048 // spin's copies: told apart from the others by their size
#define SCRATCH_MAX (12 * 1024)
#define MAX_WORKERS 8

static const dim3 tick_grid(2), tick_block(64);

__global__ void tick_kernel(unsigned int *ticks)
{
	ticks[blockIdx.x * blockDim.x + threadIdx.x] += 1;
}

__global__ void busy_kernel(unsigned char *p)
{
	p[threadIdx.x] ^= 1;
}

__global__ void count_kernel(unsigned char *p)
{
	p[blockIdx.x * blockDim.x + threadIdx.x] += 1;
}

static cudaStream_t s;
static unsigned int *d_ticks;
static unsigned char *d_data;
static unsigned char h_src[COPY_BYTES], h_dst[COPY_BYTES];

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 8));
}

// Exits through a FAIL line (every worker's output is line-buffered on one stdout).
static void expect_same(const unsigned char *a, const unsigned char *b, size_t n, const char *what,
			long iteration)
{
	EXPECT(memcmp(a, b, n) == 0, "%s: data differs after the round trip (iteration %ld)", what,
	       iteration);
}

static void tick(cudaStream_t stream, unsigned int *ticks)
{
	tick_kernel<<<tick_grid, tick_block, 0, stream>>>(ticks);
}

static void run_batch(long n)
{
	for (long i = 0; i < n; i++) {
		fill(h_src, COPY_BYTES, (unsigned)i);
		tick(s, d_ticks);
		print_launch(TICK_NAME, tick_grid, tick_block, "s");
		CHECK(copy_async(d_data, h_src, COPY_BYTES, cudaMemcpyHostToDevice, s, "s"));
		CHECK(copy_async(h_dst, d_data, COPY_BYTES, cudaMemcpyDeviceToHost, s, "s"));
		CHECK(sync_stream(s));
		expect_same(h_src, h_dst, COPY_BYTES, "batch", i);
	}
	CHECK(cudaGetLastError()); // a failed launch only shows here
	printf("BATCH done n=%ld\n", n);
}

// ---- worker threads ----

struct worker {
	int index;
	pthread_t thread;
	pid_t tid;
	cudaStream_t s;
	unsigned char *d_buf;
	unsigned char src[SCRATCH_MAX], dst[SCRATCH_MAX];
	long iterations, counted;
	long done_gen; // the last `count` request finished
	unsigned long cpu;
};

static struct worker workers[MAX_WORKERS];
static int nworkers;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int stopping;
static long count_gen, count_n; // `count` requests: generation and iterations each
static int started;		// workers that finished their first iteration

// Some CPU time that the compiler cannot drop: a few hundred microseconds of xorshift.
static unsigned long cpu_work(unsigned long x)
{
	for (int i = 0; i < 40000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static void busy_iteration(struct worker *w)
{
	size_t n = 8192 + (size_t)(w->iterations % 9) * 512; // never COPY_BYTES
	unsigned char *scratch;
	CHECK(cudaMalloc((void **)&scratch, n));
	fill(w->src, n, (unsigned)(w->index * 100003 + w->iterations));
	CHECK(cudaMemcpyAsync(w->d_buf, w->src, n, cudaMemcpyHostToDevice, w->s));
	busy_kernel<<<1, 32, 0, w->s>>>(w->d_buf);
	CHECK(cudaMemcpyAsync(scratch, w->d_buf, n, cudaMemcpyDeviceToDevice, w->s));
	CHECK(cudaMemcpyAsync(w->dst, scratch, n, cudaMemcpyDeviceToHost, w->s));
	CHECK(cudaStreamSynchronize(w->s));
	CHECK(cudaGetLastError());
	expect_same(w->src, w->dst, n, "busy", w->iterations);
	CHECK(cudaFree(scratch));
	// host allocator churn and CPU work between the GPU calls
	void *junk = malloc(1024 + (size_t)(w->iterations % 17) * 4096);
	EXPECT(junk != NULL, "malloc");
	memset(junk, w->index, 1024);
	w->cpu = cpu_work(w->cpu + ((unsigned char *)junk)[7]);
	free(junk);
	w->iterations++;
}

static void counted_iteration(struct worker *w)
{
	dim3 grid(w->index + 1), block(64);
	fill(w->src, COPY_BYTES, (unsigned)(w->index * 7919 + w->counted));
	count_kernel<<<grid, block, 0, w->s>>>(w->d_buf);
	CHECK(cudaMemcpyAsync(w->d_buf, w->src, COPY_BYTES, cudaMemcpyHostToDevice, w->s));
	CHECK(cudaMemcpyAsync(w->dst, w->d_buf, COPY_BYTES, cudaMemcpyDeviceToHost, w->s));
	CHECK(cudaStreamSynchronize(w->s));
	CHECK(cudaGetLastError());
	expect_same(w->src, w->dst, COPY_BYTES, "count", w->counted);
	w->counted++;
}

static void *worker_main(void *arg)
{
	struct worker *w = (struct worker *)arg;
	int first = 1;
	w->tid = gettid();
	printf("WORKER %d tid=%d started\n", w->index, (int)w->tid);
	for (;;) {
		pthread_mutex_lock(&lock);
		int stop = stopping;
		long gen = count_gen, n = count_n;
		pthread_mutex_unlock(&lock);
		if (stop)
			break;
		if (gen > w->done_gen) {
			for (long i = 0; i < n; i++)
				counted_iteration(w);
			pthread_mutex_lock(&lock);
			w->done_gen = gen;
			pthread_cond_broadcast(&changed);
			pthread_mutex_unlock(&lock);
		}
		busy_iteration(w);
		if (first) {
			first = 0;
			pthread_mutex_lock(&lock);
			started++;
			pthread_cond_broadcast(&changed);
			pthread_mutex_unlock(&lock);
		}
	}
	return NULL;
}

static void start_workers(int n)
{
	EXPECT(nworkers == 0, "workers already running");
	EXPECT(n >= 1 && n <= MAX_WORKERS, "busy %d: 1 to %d workers", n, MAX_WORKERS);
	stopping = 0;
	started = 0;
	for (int i = 0; i < n; i++) {
		struct worker *w = &workers[i];
		w->index = i;
		w->done_gen = count_gen;
		if (!w->s) {
			CHECK(cudaStreamCreateWithFlags(&w->s, cudaStreamNonBlocking));
			CHECK(cudaMalloc((void **)&w->d_buf, SCRATCH_MAX));
		}
		EXPECT(pthread_create(&w->thread, NULL, worker_main, w) == 0, "pthread_create");
	}
	nworkers = n;
	pthread_mutex_lock(&lock);
	while (started < n)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	printf("BUSY threads=%d\n", n);
}

static void count_workers(long n)
{
	EXPECT(nworkers > 0, "count: no workers (busy T first)");
	pthread_mutex_lock(&lock);
	long gen = ++count_gen;
	count_n = n;
	pthread_cond_broadcast(&changed);
	for (int i = 0; i < nworkers; i++)
		while (workers[i].done_gen < gen)
			pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	printf("COUNT done n=%ld threads=%d\n", n, nworkers);
}

static void quiet_workers(void)
{
	if (!nworkers)
		return;
	pthread_mutex_lock(&lock);
	stopping = 1;
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		EXPECT(pthread_join(w->thread, NULL) == 0, "pthread_join");
		printf("WORKER %d tid=%d iterations=%ld counted=%ld ok\n", i, (int)w->tid,
		       w->iterations, w->counted);
	}
	nworkers = 0;
	printf("QUIET ok\n");
}

static volatile unsigned long spin_sink;

static void spin(long ms)
{
	EXPECT(ms > 0, "spin %ld: more than 0 ms", ms);
	long long end = now_ns() + ms * 1000000LL;
	unsigned long cpu = 1;
	long k = 0;
	for (; now_ns() < end; k++) {
		fill(h_src, SPIN_BYTES, (unsigned)k);
		tick(s, d_ticks);
		CHECK(cudaMemcpyAsync(d_data, h_src, SPIN_BYTES, cudaMemcpyHostToDevice, s));
		CHECK(cudaMemcpyAsync(h_dst, d_data, SPIN_BYTES, cudaMemcpyDeviceToHost, s));
		CHECK(cudaStreamSynchronize(s));
		expect_same(h_src, h_dst, SPIN_BYTES, "spin", k);
		cpu = cpu_work(cpu);
		struct timespec ts = {0, 1000000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	CHECK(cudaGetLastError());
	spin_sink = cpu;
	printf("SPIN done ms=%ld iterations=%ld\n", ms, k);
}

// ---- fork ----

static void fork_child(const char *mode)
{
	int cpu = strcmp(mode, "cpu") == 0;
	EXPECT(cpu || strcmp(mode, "exec") == 0, "fork %s: cpu or exec", mode);
	fflush(stdout); // nothing buffered twice
	pid_t pid = fork();
	EXPECT(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (!cpu) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		// only CPU work and async-signal-safe calls: other threads may hold locks
		unsigned long a = 12345, b = 12345;
		for (int i = 0; i < 50; i++) {
			a = cpu_work(a);
			b = cpu_work(b);
		}
		_exit(a == b ? 0 : 3);
	}
	int status;
	pid_t r;
	while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	EXPECT(r == pid, "waitpid: %s", strerror(errno));
	EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fork %s: child status 0x%x", mode,
	       status);
	printf("FORK mode=%s status=0 ok\n", mode);
}

// ---- slow exit ----

static long slow_exit_ms;
static unsigned char *d_exit;

static void slow_exit(void)
{
	printf("EXITING ms=%ld\n", slow_exit_ms);
	long long end = now_ns() + slow_exit_ms * 1000000LL;
	long steps = 0;
	while (now_ns() < end) {
		fill(h_src, COPY_BYTES, (unsigned)steps);
		tick(s, (unsigned int *)d_exit); // d_ticks is freed by now
		CHECK(cudaMemcpyAsync(d_exit, h_src, COPY_BYTES, cudaMemcpyHostToDevice, s));
		CHECK(cudaMemcpyAsync(h_dst, d_exit, COPY_BYTES, cudaMemcpyDeviceToHost, s));
		CHECK(cudaStreamSynchronize(s));
		expect_same(h_src, h_dst, COPY_BYTES, "exit", steps);
		struct timespec ts = {0, 10000000};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		steps++;
	}
	CHECK(cudaFree(d_exit));
	printf("EXITED ok steps=%ld\n", steps);
}

static void make_exit_slow(long ms)
{
	EXPECT(ms > 0 && !slow_exit_ms, "slowexit %ld: once, more than 0 ms", ms);
	slow_exit_ms = ms;
	CHECK(cudaMalloc((void **)&d_exit, COPY_BYTES));
	EXPECT(atexit(slow_exit) == 0, "atexit");
	printf("SLOWEXIT ms=%ld\n", ms);
}

// ---- main ----

static void set_up(const char *ready_file)
{
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s));
	CHECK(alloc_device(&d_ticks, tick_grid.x * tick_block.x * sizeof(*d_ticks)));
	CHECK(alloc_device(&d_data, COPY_BYTES));
	tick(s, d_ticks); // loads the module, so no batch pays for it
	print_launch(TICK_NAME, tick_grid, tick_block, "s");
	CHECK(sync_device());
	FILE *f = fopen(ready_file, "w");
	EXPECT(f && fclose(f) == 0, "cannot create %s", ready_file);
}

static void shut_down(void)
{
	quiet_workers();
	for (int i = 0; i < MAX_WORKERS; i++)
		if (workers[i].s) {
			CHECK(cudaFree(workers[i].d_buf));
			CHECK(cudaStreamDestroy(workers[i].s));
		}
	CHECK(free_device(d_ticks));
	CHECK(free_device(d_data));
	printf("DONE ok\n");
}

// Runs one command line; returns 0 when the program should stop.
static int run_command(char *line)
{
	line[strcspn(line, "\r\n")] = '\0';
	long n;
	char word[16], extra;
	if (sscanf(line, "go %ld %c", &n, &extra) == 1 && n >= 0)
		run_batch(n);
	else if (sscanf(line, "busy %ld %c", &n, &extra) == 1)
		start_workers((int)n);
	else if (sscanf(line, "count %ld %c", &n, &extra) == 1 && n >= 0)
		count_workers(n);
	else if (sscanf(line, "spin %ld %c", &n, &extra) == 1)
		spin(n);
	else if (strcmp(line, "quiet") == 0)
		quiet_workers();
	else if (sscanf(line, "fork %15s %c", word, &extra) == 1)
		fork_child(word);
	else if (sscanf(line, "slowexit %ld %c", &n, &extra) == 1)
		make_exit_slow(n);
	else if (strcmp(line, "exit") == 0)
		return 0;
	else
		EXPECT(0, "unknown command '%s'", line);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s READY_FILE\n", argv[0]);
		return 2;
	}
	char spec[256];
	snprintf(spec, sizeof(spec), "%s=%d,%s=%d,%s=%d", TICK_NAME, TICK_NS, BUSY_NAME, BUSY_NS,
		 COUNT_NAME, COUNT_NS);
	setenv("FAKECUDA_KERNEL_NS", spec, 0);
	// Line-buffered even into a pipe: a test waits for each line as it comes.
	setvbuf(stdout, NULL, _IOLBF, 0);
	set_up(argv[1]);
	char line[128];
	while (fgets(line, sizeof(line), stdin))
		if (!run_command(line))
			break;
	shut_down(); // on "exit" and at EOF alike
	return 0;
}
