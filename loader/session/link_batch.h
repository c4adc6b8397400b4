/* SPDX-License-Identifier: MIT */
/*
 * Probes detached together. The kernel waits for an RCU grace period in each uprobe's detach
 * (uprobe_unregister_sync(): 50-100 ms on the development VM), so a recording that detached its
 * probes one after the other took one grace period per probe to stop: about a second for a
 * CUDA process, most of the time between Ctrl-C and a table. Closed from several threads at
 * once, their grace periods overlap: the whole batch takes about one.
 */
#ifndef GPUSPY_LINK_BATCH_H
#define GPUSPY_LINK_BATCH_H

#include <pthread.h>
#include <stddef.h>

struct bpf_link;

struct link_batch_item {
	struct bpf_link *link; /* or NULL */
	int fd;		       /* a link's fd (uprobe_multi), or -1 */
	pthread_mutex_t *lock; /* held around the link's destroy, or NULL (see link_batch_add) */
};

#define LINK_BATCH_THREADS 16

struct link_batch {
	struct link_batch_item *items;
	size_t n, cap;
	size_t next; /* the next item a closer takes, under `take` */
	pthread_mutex_t take;
	pthread_t threads[LINK_BATCH_THREADS];
	size_t started;
};

void link_batch_init(struct link_batch *b);
/* Adds a libbpf link, destroyed with `lock` held when not NULL: libbpf's USDT links of one
 * object share its spec-id state, which their destroy changes. With no batch (NULL) or no
 * memory, the link is destroyed at once. */
void link_batch_add(struct link_batch *b, struct bpf_link *link, pthread_mutex_t *lock);
/* Adds a link's fd (-1: nothing); NULL batch or no memory: closed at once. */
void link_batch_add_fd(struct link_batch *b, int fd);
/* Starts detaching the items from threads of their own (up to LINK_BATCH_THREADS) and
 * returns; link_batch_close() waits for them. Nothing may be added meanwhile. */
void link_batch_start(struct link_batch *b);
/* Detaches every item, from up to LINK_BATCH_THREADS threads at once and the caller's, and
 * returns when all are gone; the batch is empty and reusable after. */
void link_batch_close(struct link_batch *b);
void link_batch_free(struct link_batch *b);

#endif /* GPUSPY_LINK_BATCH_H */
