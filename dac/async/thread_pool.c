/* thread_pool.c - the managed thread pool's global queues and workers. See thread_pool.h. */
#include "async/thread_pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
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

/* The items of a ConcurrentQueue<T>: each segment's Tail - Head (a frozen segment's Tail carries
 * the freeze offset, twice its slot count), from _head along _nextSegment. */
static bool queue_count(struct adac_runtime *rt, uint64_t corelib, uint64_t queue, uint64_t *count)
{
	uint32_t head_off, tail_off;
	uint64_t seg;
	if (!struct_field(rt, corelib, "System.Collections.Concurrent", "PaddedHeadAndTail", "Head", &head_off) ||
	    !struct_field(rt, corelib, "System.Collections.Concurrent", "PaddedHeadAndTail", "Tail", &tail_off) ||
	    !field_ptr(rt, queue, "_head", &seg))
		return false;
	uint64_t n = 0;
	for (unsigned i = 0; seg; i++) {
		uint64_t ht, mask_at, frozen_at;
		uint32_t head, tail, mask;
		uint8_t frozen;
		if (i == ADAC_MAX_QUEUE_SEGMENTS || !field_addr(rt, seg, "_headAndTail", &ht) ||
		    !field_addr(rt, seg, "_slotsMask", &mask_at) || !field_addr(rt, seg, "_frozenForEnqueues", &frozen_at) ||
		    adac_read_u32(rt->t, ht + head_off, &head, NULL) || adac_read_u32(rt->t, ht + tail_off, &tail, NULL) ||
		    adac_read_u32(rt->t, mask_at, &mask, NULL) || adac_read_u8(rt->t, frozen_at, &frozen, NULL))
			return false;
		uint64_t slots = (uint64_t)mask + 1;
		if (frozen)
			tail -= (uint32_t)(2 * slots);
		int32_t items = (int32_t)(tail - head);
		if (items < 0 || (uint64_t)items > slots)
			return false; /* not a consistent segment */
		n += (uint64_t)items;
		if (!field_ptr(rt, seg, "_nextSegment", &seg))
			return false;
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
	if (adac_module_type(rt, corelib, "System.Threading", "PortableThreadPool", &mt, NULL) || !mt ||
	    adac_gc_static_value(rt, mt, "ThreadPoolInstance", &pool, NULL) || !pool ||
	    !struct_field(rt, corelib, "System.Threading", "PortableThreadPool+CacheLineSeparated", "counts", &counts_off) ||
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
		snprintf(buf + n, size - (size_t)n, "%s%llu work item%s queued", n ? "; " : "",
		         (unsigned long long)tp->queued, tp->queued == 1 ? "" : "s");
}
