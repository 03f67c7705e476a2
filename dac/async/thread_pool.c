/* thread_pool.c - the managed thread pool's global queues and workers. See thread_pool.h. */
#include "async/thread_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/limits.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/statics.h"

/* Offset of field `name` inside the value type ns.type (from the start of its data). */
static bool struct_field(struct adac_runtime *rt, uint64_t corelib, const char *ns, const char *type,
                         const char *name, uint32_t *off)
{
	uint64_t mt = 0;
	struct adac_field f;
	if (adac_module_type(rt, corelib, ns, type, &mt, NULL) || !mt || adac_mt_find_field(rt, mt, name, &f, NULL) ||
	    f.is_static)
		return false;
	*off = f.offset;
	return true;
}

/* An instance field of the object at obj by name: its address. */
static bool field_addr(struct adac_runtime *rt, uint64_t obj, const char *name, uint64_t *addr)
{
	uint64_t mt;
	uint32_t off;
	if (!obj || adac_object_mt(rt, obj, &mt, NULL) || adac_mt_field_offset(rt, mt, name, &off, NULL))
		return false;
	*addr = obj + off;
	return true;
}

static bool field_ptr(struct adac_runtime *rt, uint64_t obj, const char *name, uint64_t *v)
{
	uint64_t a;
	return field_addr(rt, obj, name, &a) && adac_read_ptr(rt->t, a, v, NULL) == 0;
}

/* One segment of a ConcurrentQueue<T>: its items are slots [head, tail) (modulo mask + 1). */
struct segment {
	uint32_t head, tail, mask;
	uint64_t next;
};

/* Reads segment seg: false when it cannot be read or is not consistent (a frozen segment's Tail
 * carries the freeze offset, twice its slot count). */
static bool read_segment(struct adac_runtime *rt, uint64_t corelib, uint64_t seg, struct segment *s)
{
	uint32_t head_off, tail_off;
	uint64_t ht, mask_at, frozen_at;
	uint8_t frozen;
	if (!struct_field(rt, corelib, "System.Collections.Concurrent", "PaddedHeadAndTail", "Head", &head_off) ||
	    !struct_field(rt, corelib, "System.Collections.Concurrent", "PaddedHeadAndTail", "Tail", &tail_off) ||
	    !field_addr(rt, seg, "_headAndTail", &ht) || !field_addr(rt, seg, "_slotsMask", &mask_at) ||
	    !field_addr(rt, seg, "_frozenForEnqueues", &frozen_at) ||
	    adac_read_u32(rt->t, ht + head_off, &s->head, NULL) || adac_read_u32(rt->t, ht + tail_off, &s->tail, NULL) ||
	    adac_read_u32(rt->t, mask_at, &s->mask, NULL) || adac_read_u8(rt->t, frozen_at, &frozen, NULL) ||
	    !field_ptr(rt, seg, "_nextSegment", &s->next))
		return false;
	uint64_t slots = (uint64_t)s->mask + 1;
	if (frozen)
		s->tail -= (uint32_t)(2 * slots);
	int32_t items = (int32_t)(s->tail - s->head);
	return items >= 0 && (uint64_t)items <= slots;
}

/* The items of a ConcurrentQueue<T>: each segment's Tail - Head, from _head along _nextSegment. */
static bool queue_count(struct adac_runtime *rt, uint64_t corelib, uint64_t queue, uint64_t *count)
{
	uint64_t seg;
	if (!field_ptr(rt, queue, "_head", &seg))
		return false;
	uint64_t n = 0;
	for (unsigned i = 0; seg; i++) {
		struct segment s;
		if (i == ADAC_MAX_QUEUE_SEGMENTS || !read_segment(rt, corelib, seg, &s))
			return false;
		n += s.tail - s.head;
		seg = s.next;
	}
	*count = n;
	return true;
}

static void read_queue(struct adac_runtime *rt, uint64_t corelib, struct adac_thread_pool *tp)
{
	uint64_t mt = 0, wq = 0, assignable = 0;
	uint32_t n_assignable = 0;
	if (adac_module_type(rt, corelib, "System.Threading", "ThreadPool", &mt, NULL) || !mt ||
	    adac_gc_static_value(rt, mt, "s_workQueue", &wq, NULL) || !wq)
		return;
	/* Work items assigned to per-processor queues (many processors) are not counted: then the
	 * global count is unknown. */
	if (field_ptr(rt, wq, "_assignableWorkItemQueues", &assignable) && assignable &&
	    (adac_object_array_length(rt, assignable, &n_assignable, NULL) || n_assignable))
		return;
	static const char *const queues[] = {"workItems", "highPriorityWorkItems", "lowPriorityWorkItems"};
	uint64_t total = 0;
	for (size_t i = 0; i < sizeof queues / sizeof *queues; i++) {
		uint64_t q = 0, n = 0;
		if (!field_ptr(rt, wq, queues[i], &q))
			return;
		if (q && !queue_count(rt, corelib, q, &n))
			return;
		total += n;
	}
	tp->has_queue = true;
	tp->queued = total;
}

static void read_workers(struct adac_runtime *rt, uint64_t corelib, struct adac_thread_pool *tp)
{
	uint64_t mt = 0, pool = 0, sep, min_at, max_at, data;
	uint32_t counts_off, data_off;
	uint16_t min, max;
	if (adac_module_type(rt, corelib, "System.Threading", "PortableThreadPool", &mt, NULL))
		return;
	/* (Not loaded, or its instance not made yet: no work was ever queued.) */
	if (mt && adac_gc_static_value(rt, mt, "ThreadPoolInstance", &pool, NULL))
		return;
	tp->state_known = true;
	if (!pool)
		return;
	tp->started = true;
	if (!struct_field(rt, corelib, "System.Threading", "PortableThreadPool+CacheLineSeparated", "counts", &counts_off) ||
	    !struct_field(rt, corelib, "System.Threading", "PortableThreadPool+ThreadCounts", "_data", &data_off) ||
	    !field_addr(rt, pool, "_separated", &sep) || !field_addr(rt, pool, "_minThreads", &min_at) ||
	    !field_addr(rt, pool, "_maxThreads", &max_at) ||
	    adac_read_u64(rt->t, sep + counts_off + data_off, &data, NULL) ||
	    adac_read_u16(rt->t, min_at, &min, NULL) || adac_read_u16(rt->t, max_at, &max, NULL))
		return;
	tp->has_workers = true;
	tp->working = (uint16_t)data;          /* NumProcessingWork: bits 0-15 */
	tp->existing = (uint16_t)(data >> 16); /* NumExistingThreads: bits 16-31 */
	tp->min = (int16_t)min;
	tp->max = (int16_t)max;
	uint64_t cpu_at;
	uint32_t cpu;
	if (field_addr(rt, pool, "_cpuUtilization", &cpu_at) && adac_read_u32(rt->t, cpu_at, &cpu, NULL) == 0) {
		tp->has_cpu = true;
		tp->cpu = (int32_t)cpu;
	}
}

const struct adac_thread_pool *adac_thread_pool(struct adac_runtime *rt)
{
	struct adac_thread_pool *tp = adac_runtime_slot(rt, ADAC_SLOT_THREAD_POOL);
	if (tp)
		return tp;
	tp = calloc(1, sizeof *tp);
	if (!tp) {
		static const struct adac_thread_pool none;
		return &none;
	}
	uint64_t corelib;
	if (adac_corelib_module(rt, &corelib, NULL) == 0) {
		read_queue(rt, corelib, tp);
		read_workers(rt, corelib, tp);
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_THREAD_POOL, tp, free);
	return tp;
}

const char *adac_tp_queue_name(enum adac_tp_queue q)
{
	switch (q) {
	case ADAC_TP_LOCAL: return "Local";
	case ADAC_TP_HIGH: return "Global high-pri";
	case ADAC_TP_ASSIGNABLE: return "Global assignable";
	case ADAC_TP_GLOBAL: return "Global";
	case ADAC_TP_LOW: return "Global low-pri";
	}
	return "?";
}

/* ---- the work items ---------------------------------------------------------------------------- */

struct items {
	struct adac_runtime *rt;
	uint64_t corelib;
	adac_tp_item_cb cb;
	void *ctx;
	struct adac_error *err;      /* the queue being read's failure ... */
	struct adac_error *first;    /* ... the first one's, for the caller: the other queues are read */
	bool failed;
	int stop;                    /* what cb returned, once non-zero */
};

/* After a queue that could not be read (w->err): the first failure is kept, the next queue read. */
static void queue_failed(struct items *w)
{
	if (!w->failed)
		adac_error_copy(w->first, w->err);
	w->failed = true;
	memset(w->err, 0, sizeof *w->err);
}

/* Passes the work item at obj (none when null); false once cb asks to stop. */
static bool item(struct items *w, uint64_t obj, const struct adac_tp_item *how)
{
	if (!obj || w->stop)
		return !w->stop;
	struct adac_tp_item it = *how;
	it.obj = obj;
	w->stop = w->cb(w->ctx, &it);
	return !w->stop;
}

/* The items of ConcurrentQueue<object> `queue`, segment by segment, from each one's Head to its Tail:
 * 0, or -1 with w->err. */
static int queue_items(struct items *w, uint64_t queue, enum adac_tp_queue q)
{
	struct adac_runtime *rt = w->rt;
	uint64_t seg;
	if (!field_ptr(rt, queue, "_head", &seg))
		return adac_fail(w->err, ADAC_E_READ, queue, "cannot read the thread pool's queue 0x%llx",
		                 (unsigned long long)queue);
	const struct adac_tp_item how = {.queue = q};
	uint32_t item_off = UINT32_MAX;
	uint64_t listed = 0;
	for (unsigned i = 0; seg && !w->stop; i++) {
		struct segment s;
		uint64_t slots, first;
		uint32_t count, size;
		if (i == ADAC_MAX_QUEUE_SEGMENTS)
			return adac_fail(w->err, ADAC_E_LIMIT, queue, "more than ADAC_MAX_QUEUE_SEGMENTS (%u) segments in the "
			                 "thread pool's queue 0x%llx", ADAC_MAX_QUEUE_SEGMENTS, (unsigned long long)queue);
		if (!read_segment(rt, w->corelib, seg, &s) || !field_ptr(rt, seg, "_slots", &slots) ||
		    adac_array_elements(rt, slots, &first, &count, &size, NULL) || (uint64_t)s.mask + 1 > count)
			return adac_fail(w->err, ADAC_E_READ, seg, "cannot read the segment 0x%llx of the thread pool's queue "
			                 "0x%llx", (unsigned long long)seg, (unsigned long long)queue);
		if (item_off == UINT32_MAX) {
			/* Slot<object>: {Item, SequenceNumber}, the element type of the slots array. */
			uint64_t mt;
			struct adac_mt_info ai;
			struct adac_field f;
			if (adac_object_mt(rt, slots, &mt, NULL) || adac_mt_read(rt, mt, &ai, NULL) ||
			    adac_mt_find_field(rt, ai.element_type, "Item", &f, NULL) || f.offset + 8u > size)
				return adac_fail(w->err, ADAC_E_LAYOUT, slots, "the thread pool's queue slots have no Item field");
			item_off = f.offset;
		}
		for (uint32_t k = s.head; k != s.tail; k++) {
			uint64_t obj;
			if (++listed > ADAC_MAX_QUEUE_ITEMS)
				return adac_fail(w->err, ADAC_E_LIMIT, queue, "more than ADAC_MAX_QUEUE_ITEMS (%u) work items in "
				                 "the thread pool's queue 0x%llx", ADAC_MAX_QUEUE_ITEMS, (unsigned long long)queue);
			if (adac_read_ptr(rt->t, first + (uint64_t)(k & s.mask) * size + item_off, &obj, w->err))
				return -1;
			if (!item(w, obj, &how))
				break;
		}
		seg = s.next;
	}
	return 0;
}

/* Each thread's local queue (ThreadPoolWorkQueueThreadLocals.threadLocals.workStealingQueue), read
 * once for all the queues. */
struct owner {
	uint64_t queue, tid;
	uint32_t managed_id;
};

struct owners {
	struct adac_runtime *rt;
	struct adac_field locals;   /* the [ThreadStatic] threadLocals */
	struct owner *v;
	size_t n, cap;
};

static int on_owner(void *ctx, const struct adac_managed_thread *th)
{
	struct owners *o = ctx;
	uint64_t at = 0, locals = 0, q = 0;
	if (!th->os_id || adac_field_thread_static_addr(o->rt, th, &o->locals, &at, NULL) || !at ||
	    adac_read_ptr(o->rt->t, at, &locals, NULL) || !field_ptr(o->rt, locals, "workStealingQueue", &q) || !q)
		return 0;
	if (adac_grow((void **)&o->v, &o->cap, o->n + 1, sizeof *o->v, 16))
		return 1; /* (out of memory: the rest have no owner) */
	o->v[o->n++] = (struct owner){q, th->os_id, th->managed_id};
	return 0;
}

/* The items of the local queue `queue` (a WorkStealingQueue), from m_headIndex to m_tailIndex: 0, or
 * -1 with w->err. */
static int local_items(struct items *w, uint64_t queue, const struct owners *owners)
{
	struct adac_runtime *rt = w->rt;
	uint64_t arr, first, head_at, tail_at, mask_at;
	uint32_t count, size, head, tail, mask;
	if (!field_ptr(rt, queue, "m_array", &arr) || !field_addr(rt, queue, "m_headIndex", &head_at) ||
	    !field_addr(rt, queue, "m_tailIndex", &tail_at) || !field_addr(rt, queue, "m_mask", &mask_at) ||
	    adac_read_u32(rt->t, head_at, &head, NULL) || adac_read_u32(rt->t, tail_at, &tail, NULL) ||
	    adac_read_u32(rt->t, mask_at, &mask, NULL) || adac_array_elements(rt, arr, &first, &count, &size, NULL) ||
	    (uint64_t)mask + 1 > count || size != adac_target_ptr_size(rt->t))
		return adac_fail(w->err, ADAC_E_READ, queue, "cannot read the thread pool's local queue 0x%llx",
		                 (unsigned long long)queue);
	if ((int32_t)(tail - head) < 0 || tail - head > count)
		return adac_fail(w->err, ADAC_E_CORRUPT, queue, "the thread pool's local queue 0x%llx is not consistent "
		                 "(head %u, tail %u, %u slots)", (unsigned long long)queue, head, tail, count);
	struct adac_tp_item how = {.queue = ADAC_TP_LOCAL};
	for (size_t i = 0; i < owners->n; i++)
		if (owners->v[i].queue == queue) {
			how.owner_tid = owners->v[i].tid;
			how.owner_managed_id = owners->v[i].managed_id;
		}
	for (uint32_t k = head; k != tail; k++) {
		uint64_t obj;
		if (adac_read_ptr(rt->t, first + (uint64_t)(k & mask) * size, &obj, w->err))
			return -1;
		if (!item(w, obj, &how))
			break;
	}
	return 0;
}

/* Every local queue, in WorkStealingQueueList.s_queues: 0 (none when the type is not loaded), or -1. */
static int all_local_items(struct items *w)
{
	struct adac_runtime *rt = w->rt;
	uint64_t list = 0, queues = 0, first, locals_mt = 0;
	uint32_t count, size;
	if (adac_module_type(rt, w->corelib, "System.Threading", "ThreadPoolWorkQueue+WorkStealingQueueList", &list,
	                     NULL) || !list || adac_gc_static_value(rt, list, "s_queues", &queues, NULL) || !queues)
		return 0;
	if (adac_array_elements(rt, queues, &first, &count, &size, NULL) || size != adac_target_ptr_size(rt->t))
		return adac_fail(w->err, ADAC_E_READ, queues, "cannot read WorkStealingQueueList.s_queues");
	struct owners owners = {.rt = rt};
	if (adac_module_type(rt, w->corelib, "System.Threading", "ThreadPoolWorkQueueThreadLocals", &locals_mt, NULL) == 0 &&
	    locals_mt && adac_mt_find_field(rt, locals_mt, "threadLocals", &owners.locals, NULL) == 0 &&
	    owners.locals.is_thread_static)
		adac_managed_threads(rt, on_owner, &owners, NULL); /* (the queues of threads not read have no owner) */
	for (uint32_t i = 0; i < count && i < ADAC_MAX_THREADS && !w->stop; i++) {
		uint64_t q;
		if (adac_read_ptr(rt->t, first + (uint64_t)i * size, &q, w->err) || (q && local_items(w, q, &owners)))
			queue_failed(w);
	}
	free(owners.v);
	return 0;
}

int adac_thread_pool_items(struct adac_runtime *rt, adac_tp_item_cb cb, void *ctx, struct adac_error *err)
{
	struct adac_error scratch = {0};
	struct items w = {.rt = rt, .cb = cb, .ctx = ctx, .err = &scratch, .first = err};
	uint64_t mt = 0, wq = 0;
	if (adac_corelib_module(rt, &w.corelib, err))
		return -1;
	if (adac_module_type(rt, w.corelib, "System.Threading", "ThreadPool", &mt, NULL) || !mt ||
	    adac_gc_static_value(rt, mt, "s_workQueue", &wq, NULL) || !wq)
		return 0; /* (not loaded: nothing was ever queued) */
	if (all_local_items(&w))
		queue_failed(&w);
	static const struct {
		const char *field;
		enum adac_tp_queue q;
	} globals[] = {{"highPriorityWorkItems", ADAC_TP_HIGH}, {"_assignableWorkItemQueues", ADAC_TP_ASSIGNABLE},
	               {"workItems", ADAC_TP_GLOBAL}, {"lowPriorityWorkItems", ADAC_TP_LOW}};
	for (size_t i = 0; i < sizeof globals / sizeof *globals && !w.stop; i++) {
		uint64_t q = 0, first;
		uint32_t count, size;
		if (!field_ptr(rt, wq, globals[i].field, &q) || !q)
			continue; /* (not in this CoreLib, or never made) */
		if (globals[i].q != ADAC_TP_ASSIGNABLE) {
			if (queue_items(&w, q, globals[i].q))
				queue_failed(&w);
			continue;
		}
		/* One ConcurrentQueue<object> per group of processors. */
		if (adac_array_elements(rt, q, &first, &count, &size, NULL) || size != adac_target_ptr_size(rt->t)) {
			adac_fail(w.err, ADAC_E_READ, q, "cannot read ThreadPoolWorkQueue._assignableWorkItemQueues");
			queue_failed(&w);
			continue;
		}
		for (uint32_t k = 0; k < count && k < ADAC_MAX_QUEUE_SEGMENTS && !w.stop; k++) {
			uint64_t aq;
			if (adac_read_ptr(rt->t, first + (uint64_t)k * size, &aq, w.err) || (aq && queue_items(&w, aq, ADAC_TP_ASSIGNABLE)))
				queue_failed(&w);
		}
	}
	return w.failed ? -1 : 0;
}

enum adac_tp_role adac_thread_pool_role(const char (*methods)[200], size_t n)
{
	static const char idle[] = "System.Threading.LowLevelLifoSemaphore.";
	static const char gate[] = "System.Threading.PortableThreadPool+GateThread.";
	for (size_t i = 0; i < n; i++) {
		if (strncmp(methods[i], idle, sizeof idle - 1) == 0)
			return ADAC_TP_ROLE_IDLE;
		if (strncmp(methods[i], gate, sizeof gate - 1) == 0)
			return ADAC_TP_ROLE_GATE;
	}
	return ADAC_TP_ROLE_OTHER;
}

bool adac_thread_pool_starved(const struct adac_thread_pool *tp)
{
	return tp->has_queue && tp->has_workers && tp->queued > 0 && tp->max > 0 && tp->working >= (uint32_t)tp->max;
}

void adac_thread_pool_text(const struct adac_thread_pool *tp, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = '\0';
	int n = 0;
	if (tp->has_workers)
		n = snprintf(buf, size, "%u worker thread%s busy, %u exist%s, at most %d", tp->working,
		             tp->working == 1 ? "" : "s", tp->existing, tp->existing == 1 ? "s" : "", tp->max);
	if (n < 0 || (size_t)n >= size)
		return;
	if (tp->has_queue)
		snprintf(buf + n, size - (size_t)n, "%s%llu work item%s in the global queues", n ? "; " : "",
		         (unsigned long long)tp->queued, tp->queued == 1 ? "" : "s");
}
