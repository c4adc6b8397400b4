/* A host program with no CUDA in it: libcudart and libcuda arrive only when
 * it dlopens a kernel library, after a tracer had the chance to attach.
 * Usage: dlopen_host READY_FILE LIBPATH N
 * Creates READY_FILE, waits for a line on stdin (EOF counts as one), dlopens
 * LIBPATH, calls its dl_run(N) and prints "DONE ok".  Built with gcc and -ldl
 * only: it must not link libcudart.so.13 or libcuda.so.1 itself. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*dl_run_fn)(int n);

static void fail(const char *what, const char *why)
{
	printf("FAIL %s: %s\n", what, why ? why : "unknown error");
	exit(1);
}

static void create_ready_file(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f || fclose(f) != 0)
		fail("create ready file", path);
}

/* Any line, or EOF, is the go signal: the test has attached by then. */
static void wait_for_go(void)
{
	char line[128];
	if (fgets(line, sizeof(line), stdin) == NULL && ferror(stdin))
		fail("read stdin", "read error");
}

static dl_run_fn load(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW);
	if (!lib)
		fail("dlopen", dlerror());
	printf("DLOPEN ok\n");
	dl_run_fn run = (dl_run_fn)dlsym(lib, "dl_run");
	if (!run)
		fail("dlsym dl_run", dlerror());
	return run;
}

int main(int argc, char **argv)
{
	char *end = NULL;
	long n = argc == 4 ? strtol(argv[3], &end, 10) : -1;
	if (argc != 4 || *end != '\0' || n < 0 || n > INT_MAX) {
		fprintf(stderr, "usage: %s READY_FILE LIBPATH N\n", argv[0]);
		return 2;
	}
	/* Line-buffered even into a pipe: the library prints through the same stdout. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	create_ready_file(argv[1]);
	wait_for_go();
	dl_run_fn run = load(argv[2]);
	if (run((int)n) != 0)
		fail("dl_run", "returned nonzero");
	printf("DONE ok\n");
	return 0;
}
