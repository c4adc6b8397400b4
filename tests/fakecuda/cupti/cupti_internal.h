/* Internal declarations of the fake CUPTI (libcupti.so.13).
 *
 * The fake CUPTI turns what the fake driver reports through the private
 * hooks (../fc_hooks.h) into the real CUPTI callback and activity APIs:
 * API enter/exit callbacks, CUpti_ActivityAPI (runtime and driver),
 * CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4 and
 * CUpti_ActivitySynchronization2 and CUpti_ActivityDevice5 records, with CUPTI's own
 * clock. */
#ifndef FAKECUDA_CUPTI_INTERNAL_H
#define FAKECUDA_CUPTI_INTERNAL_H

#include <cupti.h>
#include <pthread.h>
#include <stdint.h>

#include "../fc_hooks.h"

#define CUPTI_EXPORT __attribute__((visibility("default")))
#define FC_MAX_CBID  1024

/* cupti_core.c: connection to the driver, subscriber, callbacks. */
const struct fakecuda_hooks *fc_cupti_hooks(void);
/* Installs the sink on first use (again after cuptiFinalize);
 * CUPTI_SUCCESS or NOT_INITIALIZED. */
CUptiResult fc_cupti_attach(void);

/* cupti_clock.c: CUPTI's clock = CLOCK_MONOTONIC + offset. */
uint64_t fc_cupti_time(uint64_t monotonic_ns);
/* cuptiFinalize: forget a registered timestamp callback. */
void fc_cupti_clock_reset(void);

/* cupti_activity.c: called by the sink.  start_ns and launched are the
 * CLOCK_MONOTONIC starts of the API call and of the outermost call that
 * launched the work (0: it began before CUPTI was attached). */
void fc_activity_api(const struct fc_api_call *call);
void fc_activity_work(const struct fc_work *w, uint64_t launched);
int fc_activity_wants_api(int domain, uint64_t start_ns);
/* The driver finished cuInit: a device record per device if DEVICE is enabled. */
void fc_activity_driver_initialized(void);
/* cuptiFinalize: disable all, deliver and hand back every buffer, forget. */
void fc_activity_finalize(void);

/* cupti_cbid_names.c: generated from NVIDIA's cbid headers at build time. */
const char *fc_cbid_name(CUpti_CallbackDomain domain, uint32_t cbid);

#endif
