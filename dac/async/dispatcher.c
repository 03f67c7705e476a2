/* dispatcher.c - reads AsyncDispatcherInfo.t_current and the records it links. */
#include "async/dispatcher.h"

#include <stdlib.h>
#include <string.h>

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
	uint64_t slot, cur;
	if (adac_field_thread_static_addr(rt, th, &l.t_current, &slot, err))
		return -1;
	if (!slot)
		return 0; /* this thread never ran runtime-async code */
	if (adac_read_ptr(rt->t, slot, &cur, err)) {
		adac_error_wrap(err, "thread %llu: t_current: ", (unsigned long long)th->os_id);
		return -1;
	}
	while (cur) {
		if (*n >= max)
			return adac_fail(err, ADAC_E_LIMIT, cur, "thread %llu has more than %zu nested dispatch loops%s",
			                 (unsigned long long)th->os_id, max, max == ADAC_MAX_DISPATCHERS ? " (ADAC_MAX_DISPATCHERS)" : "");
		for (size_t i = 0; i < *n; i++)
			if (out[i].addr == cur)
				return adac_fail(err, ADAC_E_CORRUPT, cur, "thread %llu: dispatcher records loop back to 0x%llx",
				                 (unsigned long long)th->os_id, (unsigned long long)cur);
		struct adac_dispatcher *d = &out[*n];
		memset(d, 0, sizeof *d);
		d->addr = cur;
		if (adac_read_ptr(rt->t, cur + l.next, &d->next, err) ||
		    adac_read_ptr(rt->t, cur + l.next_continuation, &d->next_continuation, err) ||
		    (l.has_current_task && adac_read_ptr(rt->t, cur + l.current_task, &d->current_task, err))) {
			adac_error_wrap(err, "thread %llu: dispatcher record: ", (unsigned long long)th->os_id);
			return -1;
		}
		(*n)++;
		cur = d->next;
	}
	return 0;
}
