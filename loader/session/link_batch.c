/* SPDX-License-Identifier: MIT */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "lib/array_grow.h"
#include "loader/session/link_batch.h"

void link_batch_init(struct link_batch *b)
{
	*b = (struct link_batch){0};
	pthread_mutex_init(&b->take, NULL);
}

static void detach_item(const struct link_batch_item *it)
{
	if (it->fd >= 0)
		close(it->fd);
	if (!it->link)
		return;
	if (it->lock)
		pthread_mutex_lock(it->lock);
	bpf_link__destroy(it->link);
	if (it->lock)
		pthread_mutex_unlock(it->lock);
}

static void add_item(struct link_batch *b, struct link_batch_item it)
{
	struct link_batch_item *slot = NULL;

	if (b)
		slot = array_grow((void **)&b->items, &b->n, &b->cap, sizeof(*slot));
	if (slot)
		*slot = it;
	else
		detach_item(&it);
}

void link_batch_add(struct link_batch *b, struct bpf_link *link, pthread_mutex_t *lock)
{
	if (link)
		add_item(b, (struct link_batch_item){.link = link, .fd = -1, .lock = lock});
}

void link_batch_add_fd(struct link_batch *b, int fd)
{
	if (fd >= 0)
		add_item(b, (struct link_batch_item){.fd = fd});
}

static bool take_item(struct link_batch *b, struct link_batch_item *it)
{
	bool got;

	pthread_mutex_lock(&b->take);
	got = b->next < b->n;
	if (got)
		*it = b->items[b->next++];
	pthread_mutex_unlock(&b->take);
	return got;
}

static void *closer(void *arg)
{
	struct link_batch *b = arg;
	struct link_batch_item it;

	while (take_item(b, &it))
		detach_item(&it);
	return NULL;
}

/* Up to `want` closer threads in all; one that cannot start is not needed (the caller of
 * link_batch_close() closes too). */
static void start_closers(struct link_batch *b, size_t want)
{
	sigset_t all, old;

	if (want > LINK_BATCH_THREADS)
		want = LINK_BATCH_THREADS;
	/* the closers block every signal: the caller's stop signals are for the caller, and
	 * bridge_inject.c waits for SIGCHLD with sigtimedwait() */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (b->started < want && !pthread_create(&b->threads[b->started], NULL, closer, b))
		b->started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void link_batch_start(struct link_batch *b)
{
	if (b && b->n)
		start_closers(b, b->n);
}

void link_batch_close(struct link_batch *b)
{
	if (!b || !b->n)
		return;
	start_closers(b, b->n - 1);
	closer(b);
	while (b->started)
		pthread_join(b->threads[--b->started], NULL);
	b->n = b->next = 0;
}

void link_batch_free(struct link_batch *b)
{
	link_batch_close(b);
	free(b->items);
	b->items = NULL;
	b->cap = 0;
	pthread_mutex_destroy(&b->take);
}
