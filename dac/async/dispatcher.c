/* dispatcher.c - reads AsyncDispatcherInfo.t_current and the records it links. */
#include "async/dispatcher.h"

#include <stdlib.h>
#include <string.h>

#include "async/thread_records.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"

/* Names in the 11.0 CoreLib (AsyncHelpers.CoreCLR.cs: "the debugger depends on" t_current). */
#define DISPATCHER_NS "System.Runtime.CompilerServices"
#define DISPATCHER_TYPE "AsyncDispatcherInfo"

struct dispatcher_layout {
	bool loaded;
	struct adac_field t_current;
	uint32_t next, next_continuation, current_task;
	bool has_current_task;
};

static int layout(struct adac_runtime *rt, struct dispatcher_layout *l, struct adac_error *err)
{
	uint64_t corelib, mt;
	if (adac_corelib_module(rt, &corelib, err) || adac_module_type(rt, corelib, DISPATCHER_NS, DISPATCHER_TYPE, &mt, err))
		return -1;
	if (!mt) {
		l->loaded = false; /* no dispatch loop has run in this process yet */
		return 0;
	}
	l->loaded = true;
	struct adac_field f;
	if (adac_mt_find_field(rt, mt, "t_current", &l->t_current, err))
		return -1;
	if (!l->t_current.is_thread_static)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "%s.t_current is not thread-static", DISPATCHER_TYPE);
	if (adac_mt_find_field(rt, mt, "Next", &f, err))
		return -1;
	l->next = f.offset;
	if (adac_mt_find_field(rt, mt, "NextContinuation", &f, err))
		return -1;
	l->next_continuation = f.offset;
	l->has_current_task = adac_mt_find_field(rt, mt, "CurrentTask", &f, NULL) == 0;
	l->current_task = l->has_current_task ? f.offset : 0;
	return 0;
}

struct walk {
	const struct dispatcher_layout *l;
	struct adac_runtime *rt;
	struct adac_dispatcher *out;
	size_t *n;
};

static int on_record(void *ctx, uint64_t rec, size_t index, struct adac_error *err)
{
	struct walk *w = ctx;
	const struct dispatcher_layout *l = w->l;
	struct adac_dispatcher *d = &w->out[index];
	memset(d, 0, sizeof *d);
	d->addr = rec;
	if (adac_read_ptr(w->rt->t, rec + l->next, &d->next, err) ||
	    adac_read_ptr(w->rt->t, rec + l->next_continuation, &d->next_continuation, err) ||
	    (l->has_current_task && adac_read_ptr(w->rt->t, rec + l->current_task, &d->current_task, err)))
		return -1;
	*w->n = index + 1;
	return 0;
}

int adac_thread_dispatchers(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_dispatcher *out,
                            size_t max, size_t *n, struct adac_error *err)
{
	*n = 0;
	struct dispatcher_layout l;
	if (layout(rt, &l, err)) {
		adac_error_wrap(err, "dispatcher records: ");
		return -1;
	}
	if (!l.loaded)
		return 0;
	const struct adac_thread_records_names names = {
		"t_current", "dispatcher record", "nested dispatch loops",
		max == ADAC_MAX_DISPATCHERS ? "ADAC_MAX_DISPATCHERS" : NULL};
	struct walk w = {&l, rt, out, n};
	return adac_thread_records(rt, th, &l.t_current, l.next, max, &names, on_record, &w, err);
}
