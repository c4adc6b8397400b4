/* Simulated memory.  "Device" memory is ordinary host memory, so device
 * pointers are real addresses: copies and memsets move real bytes and an
 * HtoD -> DtoH round trip returns the data.  Every allocation is recorded so
 * that frees of unknown pointers fail like on a GPU (CUDA_ERROR_INVALID_VALUE)
 * and copies can be classified (pageable / pinned / device / managed) the
 * way unified addressing does. */
#include "drv.h"

#include <stdlib.h>
#include <string.h>

struct allocation {
	char *base;
	size_t size;
	int kind; /* enum fc_mem_kind */
};

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct allocation *g_allocs;
static size_t g_nallocs, g_cap;

static int remember(char *base, size_t size, int kind)
{
	if (g_nallocs == g_cap) {
		size_t cap = g_cap ? g_cap * 2 : 64;
		struct allocation *n = realloc(g_allocs, cap * sizeof(*n));
		if (!n)
			return -1;
		g_allocs = n;
		g_cap = cap;
	}
	g_allocs[g_nallocs++] = (struct allocation){base, size, kind};
	return 0;
}

static struct allocation *find_containing(const char *p)
{
	for (size_t i = 0; i < g_nallocs; i++)
		if (p >= g_allocs[i].base && p < g_allocs[i].base + g_allocs[i].size)
			return &g_allocs[i];
	return NULL;
}

CUresult fc_mem_alloc(size_t bytes, int kind, void **out)
{
	if (!out || bytes == 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* 256-byte alignment, as cudaMalloc guarantees. */
	size_t rounded = (bytes + 255) & ~(size_t)255;
	char *p = aligned_alloc(256, rounded);
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* Touch every page now, like a GPU allocation that is backed at once, so
	 * later copies cost memmove time and not page faults. */
	memset(p, 0, rounded);
	pthread_mutex_lock(&g_mem_lock);
	int rc = remember(p, bytes, kind);
	pthread_mutex_unlock(&g_mem_lock);
	if (rc != 0) {
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = p;
	return CUDA_SUCCESS;
}

CUresult fc_mem_free(void *p, int kind)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mem_lock);
	for (size_t i = 0; i < g_nallocs; i++) {
		if (g_allocs[i].base != p)
			continue;
		if (g_allocs[i].kind == kind ||
		    (kind == FC_MEM_DEVICE && g_allocs[i].kind == FC_MEM_MANAGED)) {
			g_allocs[i] = g_allocs[--g_nallocs];
			free(p);
			r = CUDA_SUCCESS;
		}
		break;
	}
	pthread_mutex_unlock(&g_mem_lock);
	return r;
}

int fc_mem_classify(const void *p, size_t len)
{
	const char *c = p;
	int kind = FC_MEM_PAGEABLE;
	pthread_mutex_lock(&g_mem_lock);
	struct allocation *a = find_containing(c);
	if (a)
		kind = (len <= (size_t)(a->base + a->size - c)) ? a->kind : FC_MEM_UNKNOWN;
	pthread_mutex_unlock(&g_mem_lock);
	return kind;
}
