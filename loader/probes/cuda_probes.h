/* SPDX-License-Identifier: MIT */
/*
 * Finds the CUDA libraries a process has mapped (libcudart, libcuda, or a runtime linked
 * statically into the executable or another library, recognised by its symbols) and attaches
 * the CUDA component's uprobes to them: once per (device, inode), for every process that maps
 * the file, since BPF filters by the traced set. Also watches each process's ld.so, so a CUDA
 * library that is loaded later is probed before its code runs (bpf/cuda.bpf.c holds the
 * process; cuda_probes_libs_changed() probes, and the recorder resumes it).
 */
#ifndef GPUSPY_CUDA_PROBES_H
#define GPUSPY_CUDA_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cuda_bpf;
struct cuda_probes;
struct cupti_link;
struct link_batch;
struct pid_list;
struct trace_writer;

/* `quiet`: no "probing CUDA in pid ..." lines on stderr (-q). 0 or -errno. */
int cuda_probes_new(struct cuda_bpf *skel, struct trace_writer *w, bool quiet,
		    struct cuda_probes **out);
/* Probes the CUDA libraries `pid` maps now and watches its ld.so; writes a GS_REC_CUDA_LIB
 * record per library the first time this process is seen with it. Returns the
 * gs_cuda_lib_role bits of what it maps, or -errno (-ENOENT: the process is gone). */
int cuda_probes_scan(struct cuda_probes *cp, pid_t pid);
/* Watches the ld.so of `pid` only (gpuspy's own: the one a launched command will use). */
int cuda_probes_watch_ldso(struct cuda_probes *cp, pid_t pid);
/* ld.so has mapped new objects in `pid`, which BPF stopped: probe them (the caller resumes
 * it, whatever happened). */
void cuda_probes_libs_changed(struct cuda_probes *cp, pid_t pid);
/* The live views' probe set for libraries probed from now on (cuda_probes.c says what it is):
 * launches are only counted, in a BPF map that cuda_probes_read_launches() reads. */
void cuda_probes_set_live(struct cuda_probes *cp);
/* Live probe set: calls fn(ctx, pid, launches) with each process's launch count since it was
 * first seen; where fn returns true (the process has exited), its count is removed after the
 * walk. 0 or -errno. */
int cuda_probes_read_launches(struct cuda_probes *cp,
			      bool (*fn)(void *ctx, uint32_t pid, uint64_t launches), void *ctx);
/* CUPTI bridges found from now on are handed to `cl` (cupti_link.h), to be turned on in the
 * process they were found in, or `everywhere` (-a). */
void cuda_probes_use_bridge(struct cuda_probes *cp, struct cupti_link *cl, bool everywhere);
/* Whether BPF's ld.so hold spares thread `tid`: gpuspy's own dlopen in it (bridge_inject.h)
 * is followed by a scan of the process, no hold is needed. */
void cuda_probes_exempt_thread(struct cuda_probes *cp, pid_t tid, bool exempt);
/* Exited processes (record_exit.h): the libraries reported for them are forgotten, so a pid
 * the kernel hands out again is reported (and its bridge turned on) as the new process it is. */
void cuda_probes_forget(struct cuda_probes *cp, const struct pid_list *dead);
/* Per-process entries kept: (process, library) pairs reported. */
size_t cuda_probes_tracked(const struct cuda_probes *cp);
/* Hands ld.so's watches to `batch` to detach: no library loaded from then on gets probes. */
void cuda_probes_detach_watches(struct cuda_probes *cp, struct link_batch *batch);
/* Hands every uprobe to `batch` to detach (NULL: detached here, one by one); later calls only
 * resume held processes. */
void cuda_probes_detach(struct cuda_probes *cp, struct link_batch *batch);
void cuda_probes_free(struct cuda_probes *cp);

#endif /* GPUSPY_CUDA_PROBES_H */
