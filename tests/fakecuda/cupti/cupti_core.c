/* Subscriber and callback API, cuptiFinalize, and the sink the driver
 * reports into.  Like the real library only one subscriber may exist at a
 * time; CUPTI may arrive (subscribe, enable) after CUDA is in use and leave
 * again with cuptiFinalize, then come back. */
#include "cupti_internal.h"

#include <dlfcn.h>
#include <string.h>

struct CUpti_Subscriber_st {
	CUpti_CallbackFunc callback;
	void *userdata;
	uint8_t enabled[CUPTI_CB_DOMAIN_SIZE][FC_MAX_CBID];
};

_Static_assert(CUPTI_DRIVER_TRACE_CBID_SIZE <= FC_MAX_CBID, "driver cbid table");
_Static_assert(CUPTI_RUNTIME_TRACE_CBID_SIZE <= FC_MAX_CBID, "runtime cbid table");

enum { SEEN_ENTER = 1 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUpti_Subscriber_st g_subscriber;
static int g_subscribed;
static const struct fakecuda_hooks *g_hooks;
static int g_attached;
/* The outermost API call in progress on this thread, as its enter was seen:
 * GPU work belongs to the call that launched it. */
static _Thread_local uint32_t t_outer_correlation;
static _Thread_local uint64_t t_outer_start;

const struct fakecuda_hooks *fc_cupti_hooks(void)
{
	pthread_mutex_lock(&g_lock);
	if (!g_hooks) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		if (!h)
			h = dlopen("libcuda.so.1", RTLD_NOW);
		const struct fakecuda_hooks *k = h ? dlsym(h, FAKECUDA_HOOKS_SYMBOL) : NULL;
		if (k && k->version == FAKECUDA_HOOKS_VERSION)
			g_hooks = k;
	}
	pthread_mutex_unlock(&g_lock);
	return g_hooks;
}

/* Snapshot of the callback to run, taken under the lock. */
static CUpti_CallbackFunc callback_for(int domain, uint32_t cbid, void **ud)
{
	CUpti_CallbackFunc cb = NULL;
	pthread_mutex_lock(&g_lock);
	if (g_subscribed && domain > 0 && domain < CUPTI_CB_DOMAIN_SIZE && cbid < FC_MAX_CBID &&
	    g_subscriber.enabled[domain][cbid]) {
		cb = g_subscriber.callback;
		*ud = g_subscriber.userdata;
	}
	pthread_mutex_unlock(&g_lock);
	return cb;
}

static void deliver(struct fc_api_call *call, CUpti_ApiCallbackSite site)
{
	void *ud = NULL;
	CUpti_CallbackFunc cb = callback_for(call->domain, call->cbid, &ud);
	if (!cb)
		return;
	if (site == CUPTI_API_ENTER)
		call->sink_flags |= SEEN_ENTER;
	else if (!(call->sink_flags & SEEN_ENTER))
		return; /* never an exit without its enter */
	CUpti_CallbackData data = {
	    .callbackSite = site,
	    .functionName = call->name,
	    .functionParams = NULL, /* parameter structs are not simulated */
	    .functionReturnValue = &call->result,
	    .symbolName = call->symbol,
	    .context = (CUcontext)call->context,
	    .contextUid = call->context_id,
	    .correlationData = &call->user_data,
	    .correlationId = call->correlation_id,
	};
	cb(ud, (CUpti_CallbackDomain)call->domain, call->cbid, &data);
}

static void sink_enter(void *ud, struct fc_api_call *call)
{
	(void)ud;
	if (call->correlation_id != t_outer_correlation) { /* nested calls share the id */
		t_outer_correlation = call->correlation_id;
		t_outer_start = call->start_ns;
	}
	deliver(call, CUPTI_API_ENTER);
}

static void sink_exit(void *ud, struct fc_api_call *call)
{
	(void)ud;
	deliver(call, CUPTI_API_EXIT);
	if (fc_activity_wants_api(call->domain, call->start_ns))
		fc_activity_api(call);
}

/* Reported on the thread of the call that caused the work.  A call whose
 * enter the sink did not see began before CUPTI was attached. */
static void sink_work(void *ud, const struct fc_work *w)
{
	(void)ud;
	uint64_t launched = w->queued_ns;
	if (w->correlation_id)
		launched = w->correlation_id == t_outer_correlation ? t_outer_start : 0;
	fc_activity_work(w, launched);
}

static void sink_initialized(void *ud)
{
	(void)ud;
	fc_activity_driver_initialized();
}

CUptiResult fc_cupti_attach(void)
{
	const struct fakecuda_hooks *h = fc_cupti_hooks();
	if (!h)
		return CUPTI_ERROR_NOT_INITIALIZED;
	pthread_mutex_lock(&g_lock);
	if (!g_attached) {
		struct fc_sink s = {sink_enter, sink_exit, sink_work, NULL, sink_initialized};
		h->set_sink(&s);
		g_attached = 1;
	}
	pthread_mutex_unlock(&g_lock);
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
						 CUpti_CallbackFunc callback, void *userdata)
{
	if (!subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	CUptiResult r = fc_cupti_attach();
	if (r != CUPTI_SUCCESS)
		return r;
	pthread_mutex_lock(&g_lock);
	if (g_subscribed) {
		r = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	} else {
		memset(&g_subscriber, 0, sizeof(g_subscriber));
		g_subscriber.callback = callback;
		g_subscriber.userdata = userdata;
		g_subscribed = 1;
		*subscriber = &g_subscriber;
	}
	pthread_mutex_unlock(&g_lock);
	return r;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&g_lock);
	if (!g_subscribed || subscriber != &g_subscriber)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	else
		g_subscribed = 0;
	pthread_mutex_unlock(&g_lock);
	return r;
}

static CUptiResult set_enabled(uint32_t enable, CUpti_SubscriberHandle sub,
			       CUpti_CallbackDomain domain, int all, CUpti_CallbackId cbid)
{
	if (domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE ||
	    (!all && cbid >= FC_MAX_CBID))
		return CUPTI_ERROR_INVALID_PARAMETER;
	CUptiResult r = CUPTI_SUCCESS;
	pthread_mutex_lock(&g_lock);
	if (!g_subscribed || sub != &g_subscriber)
		r = CUPTI_ERROR_INVALID_PARAMETER;
	else if (all)
		memset(g_subscriber.enabled[domain], enable ? 1 : 0, FC_MAX_CBID);
	else
		g_subscriber.enabled[domain][cbid] = enable ? 1 : 0;
	pthread_mutex_unlock(&g_lock);
	return r;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable,
						      CUpti_SubscriberHandle subscriber,
						      CUpti_CallbackDomain domain,
						      CUpti_CallbackId cbid)
{
	return set_enabled(enable, subscriber, domain, 0, cbid);
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable,
						    CUpti_SubscriberHandle subscriber,
						    CUpti_CallbackDomain domain)
{
	return set_enabled(enable, subscriber, domain, 1, 0);
}

/* Detach CUPTI from the running process (cupti_activity.h): activity is
 * disabled and everything held is delivered, every buffer is handed back,
 * the subscriber and the client's callbacks are forgotten and the driver no
 * longer reports to CUPTI.  Safe from an API exit callback, as the header
 * recommends (no lock is held while callbacks run).  Any later CUPTI call
 * attaches afresh. */
CUPTI_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	fc_activity_finalize();
	pthread_mutex_lock(&g_lock);
	memset(&g_subscriber, 0, sizeof(g_subscriber));
	g_subscribed = 0;
	if (g_attached && g_hooks)
		g_hooks->set_sink(NULL);
	g_attached = 0;
	pthread_mutex_unlock(&g_lock);
	fc_cupti_clock_reset();
	return CUPTI_SUCCESS;
}

CUPTI_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
						       const char **name)
{
	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = fc_cbid_name(domain, cbid);
	return *name ? CUPTI_SUCCESS : CUPTI_ERROR_INVALID_PARAMETER;
}
