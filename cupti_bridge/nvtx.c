// SPDX-License-Identifier: MIT
/*
 * The NVTX injection: NVTX v3 is header-only, and at a module's first NVTX call it loads
 * NVTX_INJECTION64_PATH and calls its InitializeInjectionNvtx2 with a function that returns
 * export tables (nvtx3/nvtxDetail/nvtxInit.h). Every module that includes the NVTX headers
 * (the application, libtorch, ...) does so with its own table, so this runs once per module.
 * The tables' slots are pointers to the module's function pointers: filled here, they send
 * the module's NVTX calls to nvtx_ranges.c; unfilled ones stay no-ops.
 *
 * Implemented: marks, push/pop and start/end ranges, in the A (char), W (wchar_t) and Ex
 * (attributes) forms, with and without a domain, and registered strings. Categories,
 * colours, payloads, thread names and resources are not recorded. Names are converted only
 * while a recorder is attached; W names are turned into UTF-8 here.
 */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "bridge.h"
#include "nvtx_ranges.h"

/* UTF-32 (Linux's wchar_t) -> UTF-8 in buf[GS_GPU_NAME_MAX], cut at a character boundary. */
static const char *utf8(const wchar_t *w, char *buf)
{
	size_t n = 0;

	for (; w && *w; w++) {
		uint32_t c = (uint32_t)*w;
		size_t len = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;

		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd, len = 3; /* not a character: the replacement character */
		if (n + len >= GS_GPU_NAME_MAX)
			break;
		if (len == 1) {
			buf[n++] = (char)c;
			continue;
		}
		for (size_t i = len - 1; i > 0; i--)
			buf[n + i] = (char)(0x80 | (c & 0x3f)), c >>= 6;
		buf[n] = (char)((len == 2 ? 0xc0 : len == 3 ? 0xe0 : 0xf0) | c);
		n += len;
	}
	buf[n] = '\0';
	return buf;
}

static const char *attr_name(const nvtxEventAttributes_t *a, char *buf)
{
	if (!a)
		return "";
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return a->message.ascii ? a->message.ascii : "";
	case NVTX_MESSAGE_TYPE_UNICODE:
		return utf8(a->message.unicode, buf);
	case NVTX_MESSAGE_TYPE_REGISTERED:
		/* handles are made by register_a/register_w below */
		return a->message.registered ? (const char *)a->message.registered : "";
	default:
		return "";
	}
}

static void mark_a(const char *msg)
{
	nvtx_mark(nvtx_session(), msg);
}

static void mark_w(const wchar_t *msg)
{
	uint64_t s = nvtx_session();
	char buf[GS_GPU_NAME_MAX];

	if (s)
		nvtx_mark(s, utf8(msg, buf));
}

static void mark_ex(const nvtxEventAttributes_t *a)
{
	uint64_t s = nvtx_session();
	char buf[GS_GPU_NAME_MAX];

	if (s)
		nvtx_mark(s, attr_name(a, buf));
}

static int push_a(const char *msg)
{
	return nvtx_push(nvtx_session(), msg);
}

static int push_w(const wchar_t *msg)
{
	uint64_t s = nvtx_session();
	char buf[GS_GPU_NAME_MAX];

	return nvtx_push(s, s ? utf8(msg, buf) : NULL);
}

static int push_ex(const nvtxEventAttributes_t *a)
{
	uint64_t s = nvtx_session();
	char buf[GS_GPU_NAME_MAX];

	return nvtx_push(s, s ? attr_name(a, buf) : NULL);
}

static int pop(void)
{
	return nvtx_pop();
}

static nvtxRangeId_t start_a(const char *msg)
{
	return nvtx_start(nvtx_session(), msg);
}

static nvtxRangeId_t start_w(const wchar_t *msg)
{
	uint64_t s = nvtx_session();
	char buf[GS_GPU_NAME_MAX];

	return nvtx_start(s, s ? utf8(msg, buf) : NULL);
}

static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
	uint64_t s = nvtx_session();
	char buf[GS_GPU_NAME_MAX];

	return nvtx_start(s, s ? attr_name(a, buf) : NULL);
}

static void end_range(nvtxRangeId_t id)
{
	nvtx_end(id);
}

static void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	mark_ex(a);
}

static nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	return start_ex(a);
}

static void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;
	nvtx_end(id);
}

static int domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	(void)d;
	return push_ex(a);
}

static int domain_pop(nvtxDomainHandle_t d)
{
	(void)d;
	return nvtx_pop();
}

/* Registered strings and domain names live as long as the process (NVTX has no way to say a
 * string handle is no longer used, and domains are few), on a list that keeps them
 * reachable. A handle is the string itself, which is what attr_name() relies on. */
struct kept {
	struct kept *next;
	char s[];
};

static pthread_mutex_t g_kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kept *g_kept;

static const char *keep(const char *s)
{
	size_t len = strnlen(s ? s : "", GS_GPU_NAME_MAX - 1);
	struct kept *k = malloc(sizeof(*k) + len + 1);

	if (!k)
		return NULL;
	memcpy(k->s, s ? s : "", len);
	k->s[len] = '\0';
	pthread_mutex_lock(&g_kept_lock);
	k->next = g_kept;
	g_kept = k;
	pthread_mutex_unlock(&g_kept_lock);
	return k->s;
}

static nvtxStringHandle_t register_a(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return (nvtxStringHandle_t)keep(s);
}

static nvtxStringHandle_t register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
	char buf[GS_GPU_NAME_MAX];

	(void)d;
	return (nvtxStringHandle_t)keep(utf8(s, buf));
}

static nvtxDomainHandle_t domain_create_a(const char *name)
{
	return (nvtxDomainHandle_t)keep(name);
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
	char buf[GS_GPU_NAME_MAX];

	return (nvtxDomainHandle_t)keep(utf8(name, buf));
}

static void set(NvtxFunctionTable t, unsigned int n, unsigned int id, NvtxFunctionPointer fn)
{
	if (id <= n && t[id])
		*t[id] = fn;
}

static void fill_core(const NvtxExportTableCallbacks *cb)
{
	NvtxFunctionTable t = NULL;
	unsigned int n = 0;

	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) || !t)
		return;
	set(t, n, NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)mark_ex);
	set(t, n, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)mark_a);
	set(t, n, NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)mark_w);
	set(t, n, NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)start_ex);
	set(t, n, NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)start_a);
	set(t, n, NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)start_w);
	set(t, n, NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)end_range);
	set(t, n, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)push_ex);
	set(t, n, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)push_a);
	set(t, n, NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)push_w);
	set(t, n, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)pop);
}

static void fill_core2(const NvtxExportTableCallbacks *cb)
{
	NvtxFunctionTable t = NULL;
	unsigned int n = 0;

	if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || !t)
		return;
	set(t, n, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)domain_mark_ex);
	set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)domain_start_ex);
	set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)domain_end);
	set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)domain_push_ex);
	set(t, n, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)domain_pop);
	set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)register_a);
	set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)register_w);
	set(t, n, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create_a);
	set(t, n, NVTX_CBID_CORE2_DomainCreateW, (NvtxFunctionPointer)domain_create_w);
}

BRIDGE_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;

	if (!get_export_table)
		return 0;
	cb = get_export_table(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		return 0;
	vi = get_export_table(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	fill_core(cb);
	fill_core2(cb);
	bridge_start(0);
	return 1;
}
