// SPDX-License-Identifier: MIT
/* Names of the CUPTI enumerations the GPU records carry, as nsys and Kineto print them. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "output/model/gpu/gpu_strings.h"
#include "output/trace/trace_format.h"

const char *gpu_copy_kind_name(uint32_t kind)
{
	static const char *const names[] = {
	    [GS_GPU_COPY_UNKNOWN] = "Unknown",	     [GS_GPU_COPY_HTOD] = "Host-to-Device",
	    [GS_GPU_COPY_DTOH] = "Device-to-Host",   [GS_GPU_COPY_HTOA] = "Host-to-Array",
	    [GS_GPU_COPY_ATOH] = "Array-to-Host",    [GS_GPU_COPY_ATOA] = "Array-to-Array",
	    [GS_GPU_COPY_ATOD] = "Array-to-Device",  [GS_GPU_COPY_DTOA] = "Device-to-Array",
	    [GS_GPU_COPY_DTOD] = "Device-to-Device", [GS_GPU_COPY_HTOH] = "Host-to-Host",
	    [GS_GPU_COPY_PTOP] = "Peer-to-Peer",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "Unknown";
}

const char *gpu_copy_kind_short(uint32_t kind)
{
	static const char *const names[] = {
	    [GS_GPU_COPY_UNKNOWN] = "<unknown>", [GS_GPU_COPY_HTOD] = "HtoD",
	    [GS_GPU_COPY_DTOH] = "DtoH",	 [GS_GPU_COPY_HTOA] = "HtoA",
	    [GS_GPU_COPY_ATOH] = "AtoH",	 [GS_GPU_COPY_ATOA] = "AtoA",
	    [GS_GPU_COPY_ATOD] = "AtoD",	 [GS_GPU_COPY_DTOA] = "DtoA",
	    [GS_GPU_COPY_DTOD] = "DtoD",	 [GS_GPU_COPY_HTOH] = "HtoH",
	    [GS_GPU_COPY_PTOP] = "PtoP",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "<unknown>";
}

/* CUpti_ActivityMemoryKind */
const char *gpu_memory_kind_name(uint32_t kind)
{
	static const char *const names[] = {
	    "Unknown", "Pageable", "Pinned",	    "Device",
	    "Array",   "Managed",  "Device Static", "Managed Static",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "Unrecognized";
}

/* CUpti_ActivitySynchronizationType */
const char *gpu_sync_type_name(uint32_t type)
{
	static const char *const names[] = {
	    "Unknown", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "Unknown";
}

const char *gpu_nvtx_style_name(uint32_t kind)
{
	switch (kind) {
	case GS_NVTX_PUSH_POP:
		return "PushPop";
	case GS_NVTX_START_END:
		return "StartEnd";
	case GS_NVTX_MARK:
		return "Mark";
	default:
		return "Unknown";
	}
}

/* CUPTI names runtime callbacks with the version that introduced them ("_v3020", "_v11060");
 * driver callbacks are the exported names themselves, where "_v2" is part of the symbol. */
void gpu_api_function(const char *cupti_name, char *buf, size_t len)
{
	const char *v = strrchr(cupti_name, '_');
	size_t n = strlen(cupti_name), digits = 0;

	if (v && v[1] == 'v')
		for (const char *p = v + 2; isdigit((unsigned char)*p); p++)
			digits++;
	if (v && v[1] == 'v' && digits >= 4 && !v[2 + digits])
		n = (size_t)(v - cupti_name);
	snprintf(buf, len, "%.*s", (int)n, cupti_name);
}
