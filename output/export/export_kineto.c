// SPDX-License-Identifier: MIT
/*
 * `--format kineto`: the Chrome trace in the dialect of PyTorch's profiler (Kineto), which
 * Holistic Trace Analysis and TensorBoard's trace viewer load: Kineto's top-level fields
 * (schemaVersion, deviceProperties, distributedInfo, baseTimeNanoseconds), categories
 * (cuda_runtime, cuda_driver, kernel, gpu_memcpy, gpu_memset, cuda_sync, ac2g flows keyed by
 * correlation id, user_annotation and its GPU side gpu_user_annotation) and kernel args; ts, name,
 * cat, pid and tid on every event and dur on every complete one, as HTA requires, and CUPTI's names
 * for the CUDA calls, one of them per correlation id (chrome_events.c, export_chrome_gpu.c say
 * why). The OS events (syscalls, off-CPU, process events) are there too, under gpuspy's own
 * categories, which Kineto's tools ignore.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/json_writer.h"
#include "output/export/chrome_events.h"
#include "output/export/chrome_stream.h"
#include "output/export/export_kineto.h"
#include "output/model/gpu/gpu_model.h"
#include "output/model/trace_model.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* One device's entry with Kineto's keys (libkineto's DeviceProperties.cpp reads them from
 * cudaGetDeviceProperties), from the CUPTI device record the bridge sent. CUPTI's record has no
 * sharedMemPerBlockOptin, so that key is left out; maxThreadsPerMultiprocessor is CUPTI's
 * resident warps per multiprocessor times the warp size. */
static void device_entry(FILE *out, const struct gpu_device *d)
{
	const struct gs_gpu_device *r = d->rec;

	fprintf(out, "{\"id\": %u, \"name\": ", r->device);
	json_print_string(out, d->name);
	fprintf(out,
		", \"totalGlobalMem\": %" PRIu64 ", \"computeMajor\": %u, \"computeMinor\": %u"
		", \"maxThreadsPerBlock\": %u, \"maxThreadsPerMultiprocessor\": %" PRIu64
		", \"regsPerBlock\": %u, \"regsPerMultiprocessor\": %u, \"warpSize\": %u"
		", \"sharedMemPerBlock\": %u, \"sharedMemPerMultiprocessor\": %u"
		", \"numSms\": %u}",
		(uint64_t)r->global_mem, r->compute_major, r->compute_minor,
		r->max_threads_per_block, (uint64_t)r->max_warps_per_sm * r->warp_size,
		r->regs_per_block, r->regs_per_sm, r->warp_size, r->smem_per_block, r->smem_per_sm,
		r->sms);
}

/* Kineto's deviceProperties: an entry per device index seen, in GPU work or in a CUPTI device
 * record. Where several processes recorded one index (each with its own devices), the first
 * record read describes it; a device without a record (a bridge older than GS_REC_GPU_DEVICE)
 * gets only its index and "GPU N". 0, or -1 when out of memory. */
static int device_properties(FILE *out, const struct gpu_model *g)
{
	uint32_t *dev = malloc((g->nops + g->ndevices + 1) * sizeof(*dev));
	size_t n = 0;

	if (!dev)
		return -1;
	for (size_t i = 0; i < g->nops; i++)
		dev[n++] = g->ops[i].device;
	for (size_t i = 0; i < g->ndevices; i++)
		dev[n++] = g->devices[i].rec->device;
	qsort(dev, n, sizeof(*dev), cmp_u32);
	fputs("  \"deviceProperties\": [", out);
	for (size_t i = 0, shown = 0; i < n; i++) {
		const struct gpu_device *d = NULL;

		if (i && dev[i] == dev[i - 1])
			continue;
		for (size_t k = 0; k < g->ndevices && !d; k++)
			if (g->devices[k].rec->device == dev[i])
				d = &g->devices[k];
		fputs(shown++ ? ",\n    " : "\n    ", out);
		if (d)
			device_entry(out, d);
		else
			fprintf(out, "{\"id\": %u, \"name\": \"GPU %u\"}", dev[i], dev[i]);
	}
	fputs(n ? "\n  ],\n" : "],\n", out);
	free(dev);
	return 0;
}

/* The wall-clock time of ts 0 (the recording start), in ns since the epoch. */
static uint64_t base_time_ns(const struct trace_model *m)
{
	const struct gs_file_header *h = &m->header;

	if (m->start_ts >= h->created_monotonic_ns)
		return h->created_realtime_ns + (m->start_ts - h->created_monotonic_ns);
	return h->created_realtime_ns - (h->created_monotonic_ns - m->start_ts);
}

/* Kineto's distributedInfo from the processes' RANK, WORLD_SIZE and LOCAL_RANK (the first
 * process that has a rank: one rank's processes share it); rank 0 when none has one, since HTA
 * wants a rank in every trace. Kineto's backend and process groups are the job's, not in its
 * environment, and are left out. */
static void distributed_info(FILE *out, const struct trace_model *m)
{
	const struct model_process *p = NULL;

	for (size_t i = 0; i < m->nprocs && !p; i++)
		if (m->procs[i].has_rank && m->procs[i].rank >= 0)
			p = &m->procs[i];
	/* HTA reads the rank with a regex that needs this exact spacing: "rank": N */
	fprintf(out, "  \"distributedInfo\": {\"rank\": %d", p ? p->rank : 0);
	if (p && p->world_size >= 0)
		fprintf(out, ", \"world_size\": %d", p->world_size);
	if (p && p->local_rank >= 0)
		fprintf(out, ", \"local_rank\": %d", p->local_rank);
	fputs("},\n", out);
}

static int header(FILE *out, const struct trace_model *m)
{
	fputs("{\n  \"schemaVersion\": 1,\n", out);
	if (device_properties(out, &m->gpu))
		return -1;
	distributed_info(out, m);
	fputs("  \"displayTimeUnit\": \"ms\",\n", out);
	fprintf(out, "  \"baseTimeNanoseconds\": %" PRIu64 ",\n", base_time_ns(m));
	fputs("  \"traceName\": ", out);
	json_print_string(out, m->path);
	fputs(",\n  \"otherData\": {\"producer\": \"gpuspy\"},\n  \"traceEvents\": [", out);
	return 0;
}

int export_kineto(const char *path, const struct export_opts *opts, FILE *out, char *err,
		  size_t errlen)
{
	struct trace_model m;
	struct chrome_ctx c = {.out = out,
			       .first = true,
			       .kineto = true,
			       .python_depth = opts->python_depth,
			       .steps_by = opts->steps_by};
	int ret;

	if (trace_model_load_filtered(path, &m, TRACE_MODEL_ALL, opts->pids, err, errlen))
		return -1;
	c.start_ts = m.start_ts;
	c.names = &m;
	if (header(out, &m)) {
		snprintf(err, errlen, "out of memory");
		trace_model_free(&m);
		return -1;
	}
	ret = chrome_write_events(&c, path, err, errlen);
	fputs("\n]}\n", out);
	trace_model_free(&m);
	return ret;
}
