/* SPDX-License-Identifier: MIT */
/* The record stream of a Chrome trace (chrome_stream.c), shared by the Chrome and Kineto
 * exporters: each record handed to the emitter of its kind, the OS events written here. */
#ifndef GPUSPY_CHROME_STREAM_H
#define GPUSPY_CHROME_STREAM_H

#include <stddef.h>
#include "output/export/chrome_events.h"

/* The events of a trace (`path`, read again): its records streamed, then the track names.
 * 0, or -1 with a message in err. */
int chrome_write_events(struct chrome_ctx *c, const char *path, char *err, size_t errlen);

#endif /* GPUSPY_CHROME_STREAM_H */
