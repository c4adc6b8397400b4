/* Modules, libraries, functions and kernels.  The simulator never runs device
 * code, but it does look at the image it is given so that asking for a
 * kernel that the image does not contain fails with CUDA_ERROR_NOT_FOUND as
 * on a GPU.  Accepted images: fatbinary (and nvcc's fatbin wrapper), ELF
 * cubin, and NUL-terminated PTX text.  Compressed fatbinaries are not
 * decompressed: build targets with nvcc -no-compress. */
#include "drv.h"

#include <stdlib.h>
#include <string.h>

#define FATBIN_MAGIC	     0xBA55ED50u
#define FATBIN_WRAPPER_MAGIC 0x466243b1u

struct fatbin_wrapper { /* layout of nvcc's __fatBinC_Wrapper_t */
	int magic;
	int version;
	const unsigned long long *data;
	void *filename_or_fatbins;
};

struct interned {
	struct interned *next;
	char s[];
};

static pthread_mutex_t g_mod_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_str_lock = PTHREAD_MUTEX_INITIALIZER; /* after mod */
static struct interned *g_strings;
static struct CUmod_st **g_mods; /* live modules incl. libraries' */
static size_t g_nmods, g_capmods;
static struct CUlib_st **g_libs;
static size_t g_nlibs, g_caplibs;

const char *fc_intern(const char *s)
{
	pthread_mutex_lock(&g_str_lock);
	for (struct interned *i = g_strings; i; i = i->next)
		if (strcmp(i->s, s) == 0) {
			pthread_mutex_unlock(&g_str_lock);
			return i->s;
		}
	size_t n = strlen(s) + 1;
	struct interned *i = malloc(sizeof(*i) + n);
	const char *r = NULL;
	if (i) {
		memcpy(i->s, s, n);
		i->next = g_strings;
		g_strings = i;
		r = i->s;
	}
	pthread_mutex_unlock(&g_str_lock);
	return r;
}

static int ptr_push(void ***arr, size_t *n, size_t *cap, void *p)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		void **a = realloc(*arr, c * sizeof(void *));
		if (!a)
			return -1;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = p;
	return 0;
}

static int ptr_remove(void **arr, size_t *n, void *p)
{
	for (size_t i = 0; i < *n; i++)
		if (arr[i] == p) {
			arr[i] = arr[--*n];
			return 1;
		}
	return 0;
}

static int ptr_has(void *const *arr, size_t n, const void *p)
{
	for (size_t i = 0; i < n; i++)
		if (arr[i] == p)
			return 1;
	return 0;
}

/* Work out where the image ends; see the accepted formats above. */
static int image_extent(const void **image, size_t *size)
{
	const unsigned char *b = *image;
	uint32_t magic;
	memcpy(&magic, b, sizeof(magic));
	if (magic == FATBIN_WRAPPER_MAGIC) {
		const struct fatbin_wrapper *w = *image;
		*image = w->data;
		return image_extent(image, size);
	}
	if (magic == FATBIN_MAGIC) {
		uint16_t hdr;
		uint64_t body;
		memcpy(&hdr, b + 6, sizeof(hdr));
		memcpy(&body, b + 8, sizeof(body));
		*size = hdr + body;
		return 0;
	}
	if (memcmp(b, "\177ELF", 4) == 0 && b[4] == 2) {
		uint64_t shoff;
		uint16_t shentsize, shnum;
		memcpy(&shoff, b + 0x28, sizeof(shoff));
		memcpy(&shentsize, b + 0x3a, sizeof(shentsize));
		memcpy(&shnum, b + 0x3c, sizeof(shnum));
		*size = shoff + (uint64_t)shentsize * shnum;
		return 0;
	}
	*size = strlen((const char *)b); /* PTX */
	return *size ? 0 : -1;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

/* Binary images keep symbol names NUL-delimited in string tables; PTX
 * declares them as ".entry name(". */
static int image_has_kernel(const struct CUmod_st *m, const char *name)
{
	size_t n = strlen(name);
	const char *img = m->image, *end = img + m->image_size;
	for (const char *p = img; p && p + n <= end;
	     p = memmem(p + 1, (size_t)(end - p - 1), name, n)) {
		if (memcmp(p, name, n) != 0)
			continue;
		char before = p > img ? p[-1] : '\0';
		char after = p + n < end ? p[n] : '\0';
		if ((before == '\0' || before == ' ' || before == '\t' || before == '.') &&
		    !is_ident(after))
			return 1;
	}
	return 0;
}

static CUresult module_init(struct CUmod_st *m, const void *image)
{
	if (!image)
		return CUDA_ERROR_INVALID_VALUE;
	const void *img = image;
	size_t size = 0;
	if (image_extent(&img, &size) != 0 || !img)
		return CUDA_ERROR_INVALID_IMAGE;
	m->image = img;
	m->image_size = size;
	m->valid = 1;
	return CUDA_SUCCESS;
}

static void module_fini(struct CUmod_st *m)
{
	for (struct CUfunc_st *f = m->funcs, *n; f; f = n) {
		n = f->next;
		free(f);
	}
	m->funcs = NULL;
	m->valid = 0;
}

CUresult fc_module_load(const void *image, struct CUmod_st **out)
{
	struct CUmod_st *m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = module_init(m, image);
	pthread_mutex_lock(&g_mod_lock);
	if (r == CUDA_SUCCESS && ptr_push((void ***)&g_mods, &g_nmods, &g_capmods, m))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_unlock(&g_mod_lock);
	if (r != CUDA_SUCCESS) {
		free(m);
		return r;
	}
	*out = m;
	return CUDA_SUCCESS;
}

CUresult fc_module_unload(struct CUmod_st *m)
{
	pthread_mutex_lock(&g_mod_lock);
	int found = ptr_remove((void **)g_mods, &g_nmods, m);
	pthread_mutex_unlock(&g_mod_lock);
	if (!found)
		return CUDA_ERROR_INVALID_HANDLE;
	module_fini(m);
	free(m);
	return CUDA_SUCCESS;
}

/* Caller holds g_mod_lock. */
static CUresult get_function_locked(struct CUmod_st *m, const char *name, struct CUfunc_st **out)
{
	for (struct CUfunc_st *f = m->funcs; f; f = f->next)
		if (strcmp(f->name, name) == 0) {
			*out = f;
			return CUDA_SUCCESS;
		}
	if (!image_has_kernel(m, name))
		return CUDA_ERROR_NOT_FOUND;
	struct CUfunc_st *f = calloc(1, sizeof(*f));
	const char *interned = fc_intern(name);
	if (!f || !interned) {
		free(f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	f->name = interned;
	f->mod = m;
	f->next = m->funcs;
	m->funcs = f;
	*out = f;
	return CUDA_SUCCESS;
}

CUresult fc_module_get_function(struct CUmod_st *m, const char *name, struct CUfunc_st **out)
{
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mod_lock);
	CUresult r = ptr_has((void **)g_mods, g_nmods, m) ? get_function_locked(m, name, out)
							  : CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_unlock(&g_mod_lock);
	return r;
}

CUresult fc_library_load(const void *image, struct CUlib_st **out)
{
	struct CUlib_st *l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	CUresult r = module_init(&l->mod, image);
	pthread_mutex_lock(&g_mod_lock);
	if (r == CUDA_SUCCESS && ptr_push((void ***)&g_libs, &g_nlibs, &g_caplibs, l))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_unlock(&g_mod_lock);
	if (r != CUDA_SUCCESS) {
		free(l);
		return r;
	}
	l->valid = 1;
	*out = l;
	return CUDA_SUCCESS;
}

CUresult fc_library_unload(struct CUlib_st *l)
{
	pthread_mutex_lock(&g_mod_lock);
	int found = ptr_remove((void **)g_libs, &g_nlibs, l);
	pthread_mutex_unlock(&g_mod_lock);
	if (!found)
		return CUDA_ERROR_INVALID_HANDLE;
	for (struct CUkern_st *k = l->kernels, *n; k; k = n) {
		n = k->next;
		free(k);
	}
	module_fini(&l->mod);
	free(l);
	return CUDA_SUCCESS;
}

CUresult fc_library_get_kernel(struct CUlib_st *l, const char *name, struct CUkern_st **out)
{
	if (!out || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mod_lock);
	CUresult r = CUDA_ERROR_INVALID_HANDLE;
	if (ptr_has((void **)g_libs, g_nlibs, l)) {
		struct CUfunc_st *f = NULL;
		r = get_function_locked(&l->mod, name, &f);
		struct CUkern_st *k = NULL;
		for (k = l->kernels; r == CUDA_SUCCESS && k; k = k->next)
			if (k->func == f)
				break;
		if (r == CUDA_SUCCESS && !k) {
			k = calloc(1, sizeof(*k));
			if (k) {
				*k = (struct CUkern_st){f->name, l, f, l->kernels};
				l->kernels = k;
			} else {
				r = CUDA_ERROR_OUT_OF_MEMORY;
			}
		}
		if (r == CUDA_SUCCESS)
			*out = k;
	}
	pthread_mutex_unlock(&g_mod_lock);
	return r;
}

static struct CUkern_st *live_kernel_locked(const void *h)
{
	for (size_t i = 0; i < g_nlibs; i++)
		for (struct CUkern_st *k = g_libs[i]->kernels; k; k = k->next)
			if ((const void *)k == h)
				return k;
	return NULL;
}

CUresult fc_kernel_get_function(struct CUkern_st *k, struct CUfunc_st **out)
{
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g_mod_lock);
	struct CUkern_st *live = live_kernel_locked(k);
	if (live)
		*out = live->func;
	pthread_mutex_unlock(&g_mod_lock);
	return live ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

struct CUfunc_st *fc_function_from_handle(void *h)
{
	struct CUfunc_st *r = NULL;
	pthread_mutex_lock(&g_mod_lock);
	for (size_t i = 0; !r && i < g_nmods; i++)
		for (struct CUfunc_st *f = g_mods[i]->funcs; f; f = f->next)
			if ((void *)f == h)
				r = f;
	for (size_t i = 0; !r && i < g_nlibs; i++)
		for (struct CUfunc_st *f = g_libs[i]->mod.funcs; f; f = f->next)
			if ((void *)f == h)
				r = f;
	if (!r) {
		struct CUkern_st *k = live_kernel_locked(h);
		r = k ? k->func : NULL;
	}
	pthread_mutex_unlock(&g_mod_lock);
	return r;
}
