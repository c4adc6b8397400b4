// A long-running CUDA process for attach tests.  Usage: cuda_loop READY_FILE
// It sets up (context, stream, buffers, lazy module load), creates READY_FILE
// and then does only what stdin asks, one command a line, so a tracer that
// attached after READY_FILE appeared knows exactly which calls it must see:
//   go N    N x (tick_kernel launch, 4096-byte HtoD cudaMemcpyAsync,
//           cudaStreamSynchronize), then "BATCH done n=N"
//   more N  N x (4096-byte cudaMemsetAsync, cudaFree of a pointer never allocated, which
//           fails), one cudaStreamSynchronize, then "MORE done n=N": 2N + 1 API calls,
//           N errors, N x 4096 bytes set
//   exit    (or EOF) free the buffers, print "DONE ok", exit 0
#include <string.h>

#include "common.h"

#define TICK_NAME  "_Z11tick_kernelPj"
#define TICK_NS	   10000 // short, so batches of many iterations stay quick
#define COPY_BYTES 4096

static const dim3 tick_grid(2), tick_block(64);

static cudaStream_t s;
static unsigned int *d_ticks;
static unsigned char *d_data;
static unsigned char h_data[COPY_BYTES];

__global__ void tick_kernel(unsigned int *ticks)
{
	ticks[blockIdx.x * blockDim.x + threadIdx.x] += 1;
}

static void tick(void)
{
	tick_kernel<<<tick_grid, tick_block, 0, s>>>(d_ticks);
	print_launch(TICK_NAME, tick_grid, tick_block, "s");
}

static void set_up(const char *ready_file)
{
	CHECK(cudaSetDevice(0));
	CHECK(cudaStreamCreate(&s));
	CHECK(alloc_device(&d_ticks, tick_grid.x * tick_block.x * sizeof(*d_ticks)));
	CHECK(alloc_device(&d_data, COPY_BYTES));
	tick(); // loads the module, so no batch pays for it
	CHECK(sync_device());
	FILE *f = fopen(ready_file, "w");
	EXPECT(f && fclose(f) == 0, "cannot create %s", ready_file);
}

static void run_batch(long n)
{
	for (long i = 0; i < n; i++) {
		tick();
		CHECK(copy_async(d_data, h_data, COPY_BYTES, cudaMemcpyHostToDevice, s, "s"));
		CHECK(sync_stream(s));
	}
	CHECK(cudaGetLastError()); // a failed launch only shows here
	printf("BATCH done n=%ld\n", n);
}

static void run_more(long n)
{
	for (long i = 0; i < n; i++) {
		CHECK(fill_async(d_data, 0, COPY_BYTES, s, "s"));
		EXPECT_ERR_AS("cudaFree((void *)0x1234)", free_device((void *)0x1234),
			      cudaErrorInvalidValue);
		EXPECT_ERR(cudaGetLastError(), cudaErrorInvalidValue); // not sticky: read it
	}
	CHECK(sync_stream(s));
	printf("MORE done n=%ld\n", n);
}

static void shut_down(void)
{
	CHECK(free_device(d_ticks));
	CHECK(free_device(d_data));
	CHECK(cudaStreamDestroy(s));
	printf("DONE ok\n");
}

// Runs one command line; returns 0 when the program should stop.
static int run_command(char *line)
{
	line[strcspn(line, "\r\n")] = '\0';
	long n;
	char extra;
	if (sscanf(line, "go %ld %c", &n, &extra) == 1 && n >= 0) {
		run_batch(n);
		return 1;
	}
	if (sscanf(line, "more %ld %c", &n, &extra) == 1 && n >= 0) {
		run_more(n);
		return 1;
	}
	EXPECT(strcmp(line, "exit") == 0, "unknown command '%s'", line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s READY_FILE\n", argv[0]);
		return 2;
	}
	use_kernel_duration(TICK_NAME, TICK_NS);
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
