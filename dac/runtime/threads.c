/* threads.c - walks the ThreadStore and resolves thread-static fields per thread. */
#include "runtime/threads.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

#define THREAD_FIELDS(X)                                                   \
	X(TS_FIRST, "ThreadStore", "FirstThreadLink", 8, true)                 \
	X(TH_ID, "Thread", "Id", 4, true)                                      \
	X(TH_OSID, "Thread", "OSId", 8, true)                                  \
	X(TH_STATE, "Thread", "State", 4, true)                                \
	X(TH_LINK, "Thread", "LinkNext", 8, true)                              \
	X(TH_TLD, "Thread", "ThreadLocalDataPtr", 8, true)                     \
	X(TLD_NC_COUNT, "ThreadLocalData", "NonCollectibleTlsDataCount", 4, true) \
	X(TLD_NC_ARRAY, "ThreadLocalData", "NonCollectibleTlsArrayData", 8, true) \
	X(TLD_C_COUNT, "ThreadLocalData", "CollectibleTlsDataCount", 4, true)  \
	X(TLD_C_ARRAY, "ThreadLocalData", "CollectibleTlsArrayData", 8, true)  \
	X(TLD_INFLIGHT, "ThreadLocalData", "InFlightData", 8, true)            \
	X(IF_NEXT, "InFlightTLSData", "Next", 8, true)                         \
	X(IF_INDEX, "InFlightTLSData", "TlsIndex", 4, true)                    \
	X(IF_DATA, "InFlightTLSData", "TLSData", 8, true)                      \
	X(TSI_SIZE, "ThreadStaticsInfo", NULL, 0, true)                        \
	X(TSI_NONGC, "ThreadStaticsInfo", "NonGCTlsIndex", 4, true)            \
	X(TSI_GC, "ThreadStaticsInfo", "GCTlsIndex", 4, true)                  \
	X(MT_AUX, "MethodTable", "AuxiliaryData", 8, true)                     \
	X(TH_THROWN, "Thread", "LastThrownObject", 8, false)                   \
	X(TH_THROWN_UNHANDLED, "Thread", "LastThrownObjectIsUnhandled", 1, false) \
	X(TH_STACK_BASE, "Thread", "CachedStackBase", 8, false)                \
	X(TH_STACK_LIMIT, "Thread", "CachedStackLimit", 8, false)             \
	X(TH_PREEMPTIVE_OFF, "Thread", "PreemptiveGCDisabled", 4, false)       \
	X(TH_EXPOSED, "Thread", "ExposedObject", 8, false)                     \
	X(TS_COUNT, "ThreadStore", "ThreadCount", 4, false)                    \
	X(TS_UNSTARTED, "ThreadStore", "UnstartedCount", 4, false)             \
	X(TS_BACKGROUND, "ThreadStore", "BackgroundCount", 4, false)           \
	X(TS_PENDING, "ThreadStore", "PendingCount", 4, false)                 \
	X(TS_DEAD, "ThreadStore", "DeadCount", 4, false)

enum {
#define X(id, type, field, width, req) id,
	THREAD_FIELDS(X)
#undef X
	TF_COUNT
};

static const struct adac_field_spec thread_specs[TF_COUNT] = {
#define X(id, type, field, width, req) {type, field, width, req},
	THREAD_FIELDS(X)
#undef X
};

struct threads_state {
	uint32_t off[TF_COUNT];
	uint8_t has[TF_COUNT];
	uint64_t thread_store;
	uint64_t unused_nc_slots;   /* NumberOfTlsOffsetsNotUsedInNoncollectibleArray */
	uint64_t ptr_array_data;    /* PtrArrayOffsetToDataArray */
};

static void free_state(void *p) { free(p); }

static int init_state(struct adac_runtime *rt, struct threads_state **out, struct adac_error *err)
{
	struct threads_state *s = adac_runtime_slot(rt, ADAC_SLOT_THREADS);
	if (s) {
		*out = s;
		return 0;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	uint64_t where;
	if (adac_desc_resolve(rt->desc, thread_specs, TF_COUNT, s->off, s->has, err) ||
	    adac_desc_global(rt->desc, "ThreadStore", &where, err) || adac_read_ptr(rt->t, where, &s->thread_store, err) ||
	    adac_desc_global(rt->desc, "NumberOfTlsOffsetsNotUsedInNoncollectibleArray", &s->unused_nc_slots, err) ||
	    adac_desc_global(rt->desc, "PtrArrayOffsetToDataArray", &s->ptr_array_data, err)) {
		free(s);
		return -1;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_THREADS, s, free_state);
	*out = s;
	return 0;
}

static int read_thread(struct adac_runtime *rt, const struct threads_state *s, uint64_t thread,
                       struct adac_managed_thread *th, struct adac_error *err)
{
	memset(th, 0, sizeof *th);
	th->thread = thread;
	if (adac_read_u32(rt->t, thread + s->off[TH_ID], &th->managed_id, err) ||
	    adac_read_u64(rt->t, thread + s->off[TH_OSID], &th->os_id, err) ||
	    adac_read_u32(rt->t, thread + s->off[TH_STATE], &th->state, err) ||
	    adac_read_ptr(rt->t, thread + s->off[TH_TLD], &th->thread_local_data, err)) {
		adac_error_wrap(err, "Thread 0x%llx: ", (unsigned long long)thread);
		return -1;
	}
	/* The stack bounds are optional facts: unreadable or undescribed, they stay 0. */
	if (s->has[TH_STACK_BASE] && adac_read_ptr(rt->t, thread + s->off[TH_STACK_BASE], &th->stack_base, NULL))
		th->stack_base = 0;
	if (s->has[TH_STACK_LIMIT] && adac_read_ptr(rt->t, thread + s->off[TH_STACK_LIMIT], &th->stack_limit, NULL))
		th->stack_limit = 0;
	/* The runtime records the id the process knows the thread by: in a pid namespace of its own (a
	 * container read from the host, live or in a core made there) not the target's. */
	th->os_id = adac_target_thread_of_process_tid(rt->t, th->os_id, th->stack_limit, th->stack_base);
	return 0;
}

int adac_thread_statics_array(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t *array,
                              struct adac_error *err)
{
	struct threads_state *s;
	*array = 0;
	if (init_state(rt, &s, err))
		return -1;
	if (th->thread_local_data &&
	    adac_read_ptr(rt->t, th->thread_local_data + s->off[TLD_NC_ARRAY], array, err)) {
		adac_error_wrap(err, "ThreadLocalData 0x%llx: ", (unsigned long long)th->thread_local_data);
		return -1;
	}
	return 0;
}

/* The threads in the list when its links point `bias` bytes into each Thread: how many before a null
 * link, -1 when a link cannot be read or the list does not end within ADAC_MAX_THREADS. */
static long list_length(struct adac_runtime *rt, uint64_t link, uint32_t bias, uint32_t next_off)
{
	long n = 0;
	for (; link; n++) {
		if (n >= (long)ADAC_MAX_THREADS || link < bias || adac_read_ptr(rt->t, link - bias + next_off, &link, NULL))
			return -1;
	}
	return n;
}

/* Where the list's links point: at the Thread itself (0: 11.0.0, checked on live processes: each has
 * its Id and OSId at the described offsets), or at its LinkNext field (next_off: 10.0, as the cDAC's
 * Thread_1.cs reads them, Thread = link - LinkNext). The runtime says which: the reading under which
 * the list ends after ThreadStore.ThreadCount threads (when described), else after the most. */
static uint32_t link_bias(struct adac_runtime *rt, uint64_t store, uint64_t first, uint32_t next_off)
{
	uint32_t count_off, count = 0;
	bool counted = adac_desc_has_field(rt->desc, "ThreadStore", "ThreadCount") &&
	               adac_desc_field(rt->desc, "ThreadStore", "ThreadCount", &count_off, NULL) == 0 &&
	               adac_read_u32(rt->t, store + count_off, &count, NULL) == 0;
	long at_thread = list_length(rt, first, 0, next_off), at_link = list_length(rt, first, next_off, next_off);
	if (counted && at_thread != (long)count && at_link == (long)count)
		return next_off;
	if (counted && at_thread == (long)count)
		return 0;
	return at_link > at_thread ? next_off : 0;
}

int adac_thread_list_walk(struct adac_runtime *rt, uint64_t store, uint32_t first_off, uint32_t next_off,
                          adac_thread_link_cb cb, void *ctx, struct adac_error *err)
{
	uint64_t link;
	if (adac_read_ptr(rt->t, store + first_off, &link, err)) {
		adac_error_wrap(err, "ThreadStore 0x%llx: ", (unsigned long long)store);
		return -1;
	}
	uint32_t bias = link_bias(rt, store, link, next_off);
	uint64_t thread = link ? link - bias : 0;
	uint64_t first = thread;
	for (unsigned n = 0; thread; n++) {
		if (n >= ADAC_MAX_THREADS)
			return adac_fail(err, ADAC_E_LIMIT, thread, "more than ADAC_MAX_THREADS (%u) managed threads",
			                 ADAC_MAX_THREADS);
		if (n > 0 && thread == first)
			return adac_fail(err, ADAC_E_CORRUPT, thread, "the managed thread list loops back to its start");
		int rc = cb(ctx, thread, err);
		if (rc)
			return rc < 0 ? -1 : 0;
		if (adac_read_ptr(rt->t, thread + next_off, &link, err)) {
			adac_error_wrap(err, "managed thread list: ");
			return -1;
		}
		if (link && link < bias)
			return adac_fail(err, ADAC_E_CORRUPT, link, "managed thread list: a link 0x%llx points at no Thread",
			                 (unsigned long long)link);
		thread = link ? link - bias : 0;
	}
	return 0;
}

struct each_thread {
	struct adac_runtime *rt;
	const struct threads_state *s;
	adac_managed_thread_cb cb;
	void *ctx;
};

static int visit_thread(void *ctx, uint64_t thread, struct adac_error *err)
{
	struct each_thread *w = ctx;
	struct adac_managed_thread th;
	if (read_thread(w->rt, w->s, thread, &th, err))
		return -1;
	return w->cb(w->ctx, &th) ? 1 : 0;
}

int adac_managed_threads(struct adac_runtime *rt, adac_managed_thread_cb cb, void *ctx, struct adac_error *err)
{
	struct threads_state *s;
	if (init_state(rt, &s, err))
		return -1;
	if (!s->thread_store)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "the runtime has no ThreadStore yet");
	struct each_thread w = {rt, s, cb, ctx};
	return adac_thread_list_walk(rt, s->thread_store, s->off[TS_FIRST], s->off[TH_LINK], visit_thread, &w, err);
}

struct find_tid {
	uint64_t tid;
	struct adac_managed_thread *out;
	bool found;
};

static int match_tid(void *ctx, const struct adac_managed_thread *th)
{
	struct find_tid *f = ctx;
	if (th->os_id != f->tid)
		return 0;
	*f->out = *th;
	f->found = true;
	return 1;
}

int adac_managed_thread_of(struct adac_runtime *rt, uint64_t os_tid, struct adac_managed_thread *out,
                           struct adac_error *err)
{
	struct find_tid f = {os_tid, out, false};
	if (adac_managed_threads(rt, match_tid, &f, err))
		return -1;
	if (!f.found)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "thread %llu is not a managed thread", (unsigned long long)os_tid);
	return 0;
}

enum { TLS_NON_COLLECTIBLE = 0, TLS_COLLECTIBLE = 1, TLS_DIRECT = 2 };

/* Thread.GetThreadLocalStaticBase of the Thread contract. */
static int static_base(struct adac_runtime *rt, const struct threads_state *s, const struct adac_managed_thread *th,
                       uint32_t raw, uint64_t *base, struct adac_error *err)
{
	*base = 0;
	uint64_t tld = th->thread_local_data;
	if (!tld || raw == 0xffffffffu)
		return 0;
	uint32_t index = raw & 0xffffffu, type = raw >> 24;
	unsigned ps = adac_target_ptr_size(rt->t);
	int32_t count;
	uint64_t array;
	switch (type) {
	case TLS_NON_COLLECTIBLE:
		if (adac_read_u32(rt->t, tld + s->off[TLD_NC_COUNT], (uint32_t *)&count, err) ||
		    adac_read_ptr(rt->t, tld + s->off[TLD_NC_ARRAY], &array, err))
			return -1;
		if (count > (int32_t)index && array && index >= s->unused_nc_slots &&
		    adac_read_ptr(rt->t, array + s->ptr_array_data + (uint64_t)(index - s->unused_nc_slots) * ps, base, err))
			return -1;
		break;
	case TLS_COLLECTIBLE:
		if (adac_read_u32(rt->t, tld + s->off[TLD_C_COUNT], (uint32_t *)&count, err) ||
		    adac_read_ptr(rt->t, tld + s->off[TLD_C_ARRAY], &array, err))
			return -1;
		if (count > (int32_t)index && array) {
			uint64_t handle;
			if (adac_read_ptr(rt->t, array + (uint64_t)index * ps, &handle, err) ||
			    (handle && adac_read_ptr(rt->t, handle, base, err)))
				return -1;
		}
		break;
	case TLS_DIRECT:
		*base = tld + index;
		break;
	default:
		return adac_fail(err, ADAC_E_CORRUPT, 0, "TLS index 0x%x has unknown type %u", raw, type);
	}
	if (*base)
		return 0;
	/* Not in the arrays yet: the runtime may hold it in the in-flight list. */
	uint64_t inflight;
	if (adac_read_ptr(rt->t, tld + s->off[TLD_INFLIGHT], &inflight, err))
		return -1;
	for (unsigned n = 0; inflight && n < ADAC_MAX_THREADS; n++) {
		uint32_t idx;
		if (adac_read_u32(rt->t, inflight + s->off[IF_INDEX], &idx, err))
			return -1;
		if (idx == raw) {
			uint64_t handle;
			if (adac_read_ptr(rt->t, inflight + s->off[IF_DATA], &handle, err) ||
			    (handle && adac_read_ptr(rt->t, handle, base, err)))
				return -1;
			return 0;
		}
		if (adac_read_ptr(rt->t, inflight + s->off[IF_NEXT], &inflight, err))
			return -1;
	}
	return 0;
}

int adac_thread_static_addr(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t enclosing_mt,
                            bool gc_static, uint32_t offset, uint64_t *addr, struct adac_error *err)
{
	struct threads_state *s;
	if (init_state(rt, &s, err))
		return -1;
	*addr = 0;
	uint64_t aux;
	if (adac_read_ptr(rt->t, enclosing_mt + s->off[MT_AUX], &aux, err))
		return -1;
	/* ThreadStaticsInfo sits just before MethodTableAuxiliaryData. */
	uint64_t tsi = aux - s->off[TSI_SIZE];
	uint32_t raw;
	if (adac_read_u32(rt->t, tsi + s->off[gc_static ? TSI_GC : TSI_NONGC], &raw, err))
		return -1;
	uint64_t base;
	if (static_base(rt, s, th, raw, &base, err))
		return -1;
	if (base)
		*addr = base + offset;
	return 0;
}

/* Thread.LastThrownObject is a GC handle (a slot holding the object), or 0. */
int adac_thread_store_counts(struct adac_runtime *rt, struct adac_thread_counts *c, struct adac_error *err)
{
	struct threads_state *s;
	memset(c, 0, sizeof *c);
	if (init_state(rt, &s, err))
		return -1;
	if (!s->has[TS_COUNT] || !s->has[TS_UNSTARTED] || !s->has[TS_BACKGROUND] || !s->has[TS_PENDING] || !s->has[TS_DEAD])
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime does not describe the ThreadStore's counts");
	uint64_t at = s->thread_store;
	if (adac_read_u32(rt->t, at + s->off[TS_COUNT], &c->threads, err) ||
	    adac_read_u32(rt->t, at + s->off[TS_UNSTARTED], &c->unstarted, err) ||
	    adac_read_u32(rt->t, at + s->off[TS_BACKGROUND], &c->background, err) ||
	    adac_read_u32(rt->t, at + s->off[TS_PENDING], &c->pending, err) ||
	    adac_read_u32(rt->t, at + s->off[TS_DEAD], &c->dead, err)) {
		adac_error_wrap(err, "ThreadStore 0x%llx: ", (unsigned long long)at);
		return -1;
	}
	return 0;
}

int adac_thread_details(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_thread_details *d,
                        struct adac_error *err)
{
	struct threads_state *s;
	memset(d, 0, sizeof *d);
	if (init_state(rt, &s, err))
		return -1;
	uint32_t off = 0;
	uint64_t handle = 0, finalizer_at, finalizer = 0;
	if (s->has[TH_PREEMPTIVE_OFF] && adac_read_u32(rt->t, th->thread + s->off[TH_PREEMPTIVE_OFF], &off, NULL) == 0) {
		d->has_gc_mode = true;
		d->cooperative = off != 0;
	}
	if (s->has[TH_EXPOSED] && adac_read_ptr(rt->t, th->thread + s->off[TH_EXPOSED], &handle, NULL) == 0 && handle &&
	    adac_read_ptr(rt->t, handle, &d->object, NULL))
		d->object = 0;
	d->finalizer = adac_desc_global(rt->desc, "FinalizerThread", &finalizer_at, NULL) == 0 &&
	               adac_read_ptr(rt->t, finalizer_at, &finalizer, NULL) == 0 && finalizer == th->thread;
	return 0;
}

int adac_thread_last_thrown(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t *obj,
                            bool *unhandled, struct adac_error *err)
{
	struct threads_state *s;
	*obj = 0;
	*unhandled = false;
	if (init_state(rt, &s, err))
		return -1;
	if (!s->has[TH_THROWN])
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime does not describe Thread.LastThrownObject");
	uint64_t handle = 0;
	uint8_t flag = 0;
	if (adac_read_ptr(rt->t, th->thread + s->off[TH_THROWN], &handle, err) ||
	    (handle && adac_read_ptr(rt->t, handle, obj, err)) ||
	    (s->has[TH_THROWN_UNHANDLED] && adac_read_u8(rt->t, th->thread + s->off[TH_THROWN_UNHANDLED], &flag, err))) {
		adac_error_wrap(err, "Thread 0x%llx: last thrown object: ", (unsigned long long)th->thread);
		return -1;
	}
	*unhandled = *obj && flag;
	return 0;
}
