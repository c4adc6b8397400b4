// SPDX-License-Identifier: MIT
#include "lib/array_grow.h"
#include "output/model/gpu/cuda_nesting.h"

static uint64_t thread_key(const struct gs_cuda_call *c)
{
	return (uint64_t)c->hdr.pid << 32 | c->hdr.tid;
}

static struct cuda_nested_launch *slot(struct cuda_nesting *n, uint64_t key)
{
	struct cuda_nested_launch *l;
	size_t i;

	if (key_index_find(&n->ix, key, 0, &i))
		return &n->last[i];
	l = array_grow((void **)&n->last, &n->n, &n->cap, sizeof(*l));
	if (!l || key_index_put(&n->ix, key, 0, n->n - 1))
		return NULL;
	return l;
}

static bool is_driver_launch(const struct cuda_call_info *info)
{
	return info->probe->cls == GS_CUDA_LAUNCH_DRV || info->probe->cls == GS_CUDA_LAUNCH_EX;
}

uint64_t cuda_nesting_feed(struct cuda_nesting *n, const struct gs_cuda_call *c,
			   const struct cuda_call_info *info, bool *oom)
{
	struct cuda_nested_launch *l;
	size_t i;

	if ((c->hdr.flags & GS_CUDA_NESTED) && is_driver_launch(info)) {
		l = slot(n, thread_key(c));
		if (!l) {
			*oom = true;
			return 0;
		}
		*l = (struct cuda_nested_launch){c->hdr.ts, c->hdr.ts + c->dur_ns, info->func};
		return 0;
	}
	if (info->probe->cls != GS_CUDA_LAUNCH_RT || !key_index_find(&n->ix, thread_key(c), 0, &i))
		return 0;
	l = &n->last[i];
	/* a driver launch left from an earlier call (its outer record lost) lies outside */
	if (l->ts >= c->hdr.ts && l->end <= c->hdr.ts + c->dur_ns)
		return l->func;
	return 0;
}

void cuda_nesting_free(struct cuda_nesting *n)
{
	free(n->last);
	key_index_free(&n->ix);
	memset(n, 0, sizeof(*n));
}
