/* The timing model: how long each piece of simulated GPU work occupies its
 * stream.  Read once from the environment (see docs/FAKECUDA.md):
 *   FAKECUDA_KERNEL_DEFAULT_NS   kernel duration, default 100000 (100 us)
 *   FAKECUDA_KERNEL_NS           "mangledName=ns,other=ns" per-kernel override
 *   FAKECUDA_COPY_LATENCY_NS     fixed cost of every copy/memset, default 1000
 *   FAKECUDA_BW_{HTOD,DTOH,DTOD,HTOH,MEMSET}_GBPS  bandwidth in GB/s, which is
 *                                exactly bytes per ns (defaults 25,25,1000,10,2000)
 * Durations are deterministic: latency + ceil(bytes / bandwidth). */
#include "drv.h"

#include <stdlib.h>
#include <string.h>

#define FC_MAX_KERNEL_OVERRIDES 64

struct kernel_override {
	char name[256];
	uint64_t ns;
};

static struct {
	uint64_t kernel_default_ns, latency_ns;
	uint64_t bw_htod, bw_dtoh, bw_dtod, bw_htoh, bw_memset;
	struct kernel_override overrides[FC_MAX_KERNEL_OVERRIDES];
	int n_overrides;
} g_model;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static uint64_t nonzero(uint64_t v, uint64_t dflt)
{
	return v ? v : dflt;
}

static void parse_overrides(const char *spec)
{
	char *copy = strdup(spec), *save = NULL;
	if (!copy)
		return;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(tok, '=');
		if (!eq || eq == tok || g_model.n_overrides >= FC_MAX_KERNEL_OVERRIDES)
			continue;
		*eq = '\0';
		char *end = NULL;
		unsigned long long ns = strtoull(eq + 1, &end, 10);
		if (!end || *end != '\0' || strlen(tok) >= sizeof(g_model.overrides[0].name))
			continue;
		struct kernel_override *o = &g_model.overrides[g_model.n_overrides++];
		strcpy(o->name, tok);
		o->ns = ns;
	}
	free(copy);
}

static void load_model(void)
{
	g_model.kernel_default_ns = fc_env_u64("FAKECUDA_KERNEL_DEFAULT_NS", 100000);
	g_model.latency_ns = fc_env_u64("FAKECUDA_COPY_LATENCY_NS", 1000);
	g_model.bw_htod = nonzero(fc_env_u64("FAKECUDA_BW_HTOD_GBPS", 25), 25);
	g_model.bw_dtoh = nonzero(fc_env_u64("FAKECUDA_BW_DTOH_GBPS", 25), 25);
	g_model.bw_dtod = nonzero(fc_env_u64("FAKECUDA_BW_DTOD_GBPS", 1000), 1000);
	g_model.bw_htoh = nonzero(fc_env_u64("FAKECUDA_BW_HTOH_GBPS", 10), 10);
	g_model.bw_memset = nonzero(fc_env_u64("FAKECUDA_BW_MEMSET_GBPS", 2000), 2000);
	const char *spec = getenv("FAKECUDA_KERNEL_NS");
	if (spec)
		parse_overrides(spec);
}

uint64_t fc_kernel_duration_ns(const char *name)
{
	pthread_once(&g_once, load_model);
	for (int i = 0; i < g_model.n_overrides; i++)
		if (name && strcmp(g_model.overrides[i].name, name) == 0)
			return g_model.overrides[i].ns;
	return g_model.kernel_default_ns;
}

static uint64_t transfer_ns(uint64_t bytes, uint64_t bytes_per_ns)
{
	return g_model.latency_ns + (bytes + bytes_per_ns - 1) / bytes_per_ns;
}

uint64_t fc_copy_duration_ns(int copy_kind, uint64_t bytes)
{
	pthread_once(&g_once, load_model);
	switch (copy_kind) {
	case FC_COPY_HTOD:
		return transfer_ns(bytes, g_model.bw_htod);
	case FC_COPY_DTOH:
		return transfer_ns(bytes, g_model.bw_dtoh);
	case FC_COPY_DTOD:
		return transfer_ns(bytes, g_model.bw_dtod);
	default:
		return transfer_ns(bytes, g_model.bw_htoh);
	}
}

uint64_t fc_memset_duration_ns(uint64_t bytes)
{
	pthread_once(&g_once, load_model);
	return transfer_ns(bytes, g_model.bw_memset);
}
