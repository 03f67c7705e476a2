/* locks.c - the locks held in a process. See locks.h. */
#include "types/locks.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/grow.h"
#include "runtime/runtime.h"
#include "runtime/sync_block.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"

/* System.Threading.Lock's _state: bit 0 says it is held (Lock.cs: State.IsLockedMask); the bits from
 * State.WaiterCountShift on count the threads waiting (waiter_shift). */
#define LOCK_HELD 1u

const char *adac_lock_kind_name(enum adac_lock_kind k)
{
	switch (k) {
	case ADAC_LOCK_MONITOR: return "Monitor";
	case ADAC_LOCK_THIN: return "Monitor, thin lock";
	case ADAC_LOCK_LOCK: return "System.Threading.Lock";
	}
	return "?";
}

/* Where System.Threading.Lock keeps its state (object-relative offsets), and where a SemaphoreSlim
 * keeps the object its synchronous waits Monitor.Wait on, and a ManualResetEventSlim its Lock. */
struct lock_layout {
	uint64_t mt;              /* 0: CoreLib has not loaded the type (no Lock exists) */
	uint32_t state, owner, recursion;
	int waiter_shift;         /* State.WaiterCountShift; -1 when not found (waiters not counted) */
	uint64_t semaphore_mt;    /* System.Threading.SemaphoreSlim; 0: not loaded, or no lock object known */
	uint32_t semaphore_lock;  /* its m_lockObjAndDisposed */
	uint64_t mres_mt, task_mres_mt; /* ManualResetEventSlim, Task+SetOnInvokeMres; 0: not loaded */
	uint32_t mres_lock;       /* their m_lock */
};

/* Where _state's waiter count starts (State.WaiterCountShift). CoreLib keeps no constant of it (the
 * trimmed metadata has State._state alone), so it goes by the Lock's fields: 6 while the Lock waited
 * on an AutoResetEvent (_waitEvent, .NET 9), 7 since bit 6 says UseTrivialWaits (the event became
 * _waitEventOrCondition: .NET 11.0.0, where _state 0x81 is held with one waiter). -1 when neither:
 * the waiters are not counted rather than guessed. */
static int waiter_shift(struct adac_runtime *rt, uint64_t mt)
{
	uint32_t off;
	if (adac_mt_field_offset(rt, mt, "_waitEventOrCondition", &off, NULL) == 0)
		return 7;
	if (adac_mt_field_offset(rt, mt, "_waitEvent", &off, NULL) == 0)
		return 6;
	return -1;
}

static int lock_layout(struct adac_runtime *rt, struct lock_layout *l, struct adac_error *err)
{
	uint64_t corelib;
	memset(l, 0, sizeof *l);
	if (adac_corelib_module(rt, &corelib, err) ||
	    adac_module_type(rt, corelib, "System.Threading", "Lock", &l->mt, err))
		return -1;
	if (!l->mt)
		return 0;
	l->waiter_shift = waiter_shift(rt, l->mt);
	/* (Naming the semaphore behind a Monitor.Wait is a nicety: without it, its lock object is shown alone.) */
	if (adac_module_type(rt, corelib, "System.Threading", "SemaphoreSlim", &l->semaphore_mt, NULL) || !l->semaphore_mt ||
	    adac_mt_field_offset(rt, l->semaphore_mt, "m_lockObjAndDisposed", &l->semaphore_lock, NULL))
		l->semaphore_mt = 0;
	if (adac_module_type(rt, corelib, "System.Threading", "ManualResetEventSlim", &l->mres_mt, NULL) || !l->mres_mt ||
	    adac_mt_field_offset(rt, l->mres_mt, "m_lock", &l->mres_lock, NULL) ||
	    adac_module_type(rt, corelib, "System.Threading.Tasks", "Task+SetOnInvokeMres", &l->task_mres_mt, NULL))
		l->mres_mt = l->task_mres_mt = 0;
	if (adac_mt_field_offset(rt, l->mt, "_state", &l->state, err) ||
	    adac_mt_field_offset(rt, l->mt, "_owningThreadId", &l->owner, err) ||
	    adac_mt_field_offset(rt, l->mt, "_recursionCount", &l->recursion, err)) {
		adac_error_wrap(err, "System.Threading.Lock: ");
		return -1;
	}
	return 0;
}

/* A Lock's state from its bytes (len of them at obj), else read from the target: true when held. */
static bool lock_state(struct adac_runtime *rt, const struct lock_layout *l, uint64_t obj, const uint8_t *bytes,
                       size_t len, struct adac_held_lock *out)
{
	uint32_t state = 0, owner = 0, recursion = 0;
	if (bytes && l->state + 4 <= len && l->owner + 4 <= len && l->recursion + 4 <= len) {
		state = adac_get_u32(bytes, l->state);
		owner = adac_get_u32(bytes, l->owner);
		recursion = adac_get_u32(bytes, l->recursion);
	} else if (adac_read_u32(rt->t, obj + l->state, &state, NULL) ||
	           adac_read_u32(rt->t, obj + l->owner, &owner, NULL) ||
	           adac_read_u32(rt->t, obj + l->recursion, &recursion, NULL)) {
		return false;
	}
	if (!(state & LOCK_HELD))
		return false;
	out->owner = owner;
	out->entered = recursion + 1; /* (_recursionCount counts the entries after the first) */
	out->has_waiters = l->waiter_shift >= 0;
	out->waiters = out->has_waiters ? state >> l->waiter_shift : 0;
	return true;
}

struct found {
	struct adac_held_lock *locks;
	size_t count, cap;
	struct adac_error fail;
};

static int add(struct found *f, const struct adac_held_lock *h)
{
	if (adac_grow((void **)&f->locks, &f->cap, f->count + 1, sizeof *f->locks, 16))
		return adac_fail(&f->fail, ADAC_E_NOMEM, 0, "out of memory collecting locks");
	f->locks[f->count++] = *h;
	return 0;
}

struct table_ctx {
	struct adac_runtime *rt;
	const struct lock_layout *layout;
	struct found *found;
	struct adac_sync_lock *sync_locks; /* the Locks sync blocks use: not listed again as Locks */
	size_t sync_lock_count, sync_lock_cap;
	uint64_t *sync_objects;   /* the objects of those sync blocks, sorted: the Monitors one can Wait on */
	uint32_t entries;
};

static int on_entry(void *ctx, const struct adac_sync_entry *e)
{
	struct table_ctx *c = ctx;
	c->entries++;
	struct adac_held_lock h = {.object = e->object, .sync_index = e->index};
	if (e->lock) {
		if (adac_grow((void **)&c->sync_locks, &c->sync_lock_cap, c->sync_lock_count + 1, sizeof *c->sync_locks, 16))
			return adac_fail(&c->found->fail, ADAC_E_NOMEM, 0, "out of memory collecting locks");
		c->sync_locks[c->sync_lock_count++] = (struct adac_sync_lock){e->lock, e->object};
		h.kind = ADAC_LOCK_MONITOR;
		h.lock = e->lock;
		if (c->layout->mt && lock_state(c->rt, c->layout, e->lock, NULL, 0, &h))
			return add(c->found, &h) ? -1 : 0;
		return 0;
	}
	struct adac_thin_lock thin;
	if (e->block && adac_thin_lock_decode(c->rt, e->thin_lock, &thin, NULL) == 0 && thin.owner) {
		h.kind = ADAC_LOCK_THIN;
		h.owner = thin.owner;
		h.entered = thin.entered;
		return add(c->found, &h) ? -1 : 0;
	}
	return 0;
}

/* A part of the heap walk: the thin locks in headers, the Locks it meets, and what locks belong to
 * (on_owner). */
struct part_ctx {
	struct adac_runtime *rt;
	const struct lock_layout *layout;
	const struct table_ctx *table;
	uint32_t header_offset;
	struct found found;
	struct adac_lock_object_owner *owners;
	size_t owner_count, owner_cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_owner(const void *a, const void *b)
{
	uint64_t x = ((const struct adac_lock_object_owner *)a)->object, y = ((const struct adac_lock_object_owner *)b)->object;
	return x < y ? -1 : x > y;
}

/* The reference in o's field at off, 0 when null (or past the walk's bytes of o). */
static uint64_t ref_at(const struct adac_gc_object *o, uint32_t off)
{
	return off + 8 <= o->data_len ? adac_get_u64(o->data, off) : 0;
}

static int add_owner(struct part_ctx *p, uint64_t object, const struct adac_gc_object *o, enum adac_lock_owner_kind kind)
{
	if (adac_grow((void **)&p->owners, &p->owner_cap, p->owner_count + 1, sizeof *p->owners, 16))
		return adac_fail(&p->found.fail, ADAC_E_NOMEM, 0, "out of memory collecting locks");
	p->owners[p->owner_count++] = (struct adac_lock_object_owner){object, o->addr, kind};
	return 0;
}

/* A SemaphoreSlim whose lock object has a sync block's Lock (a Monitor it waits on), a
 * ManualResetEventSlim with a Lock (it was waited on). */
static int on_owner(struct part_ctx *p, const struct adac_gc_object *o)
{
	const struct lock_layout *l = p->layout;
	const struct table_ctx *t = p->table;
	if (l->semaphore_mt && o->mt == l->semaphore_mt) {
		uint64_t obj = ref_at(o, l->semaphore_lock);
		if (obj && t->sync_lock_count && bsearch(&obj, t->sync_objects, t->sync_lock_count, sizeof obj, cmp_u64))
			return add_owner(p, obj, o, ADAC_OWNER_SEMAPHORE);
	} else if (l->mres_mt && (o->mt == l->mres_mt || o->mt == l->task_mres_mt)) {
		uint64_t lock = ref_at(o, l->mres_lock);
		if (lock)
			return add_owner(p, lock, o, o->mt == l->mres_mt ? ADAC_OWNER_MRES : ADAC_OWNER_TASK_WAIT);
	}
	return 0;
}

static int cmp_sync_lock(const void *a, const void *b)
{
	uint64_t x = ((const struct adac_sync_lock *)a)->lock, y = ((const struct adac_sync_lock *)b)->lock;
	return x < y ? -1 : x > y;
}

/* The sync block entry of the Lock at addr (sync locks sorted), NULL when it is no sync block's. */
static const struct adac_sync_lock *find_sync_lock(const struct adac_sync_lock *locks, size_t n, uint64_t addr)
{
	const struct adac_sync_lock key = {addr, 0};
	return n ? bsearch(&key, locks, n, sizeof *locks, cmp_sync_lock) : NULL;
}

static bool is_sync_lock(const struct table_ctx *t, uint64_t addr)
{
	return find_sync_lock(t->sync_locks, t->sync_lock_count, addr) != NULL;
}

const struct adac_lock_object_owner *adac_lock_object_owner(const struct adac_held_locks *h, uint64_t object)
{
	const struct adac_lock_object_owner key = {.object = object};
	return h->lock_owner_count ? bsearch(&key, h->lock_owners, h->lock_owner_count, sizeof key, cmp_owner) : NULL;
}

uint64_t adac_sync_lock_object(const struct adac_held_locks *h, uint64_t lock)
{
	const struct adac_sync_lock *s = find_sync_lock(h->sync_locks, h->sync_lock_count, lock);
	return s ? s->object : 0;
}

static int on_object(void *ctx, const struct adac_gc_object *o)
{
	struct part_ctx *p = ctx;
	uint32_t value = 0;
	if (o->before >= p->header_offset) {
		value = adac_get_u32(o->data - p->header_offset, 0);
	} else {
		adac_gc_walk_lock(p->rt);
		int rc = adac_read_u32(p->rt->t, o->addr - p->header_offset, &value, NULL);
		adac_gc_walk_unlock(p->rt);
		if (rc)
			value = 0;
	}
	struct adac_header hd;
	if (value && adac_header_decode(p->rt, value, &hd, NULL) == 0 && hd.kind == ADAC_HEADER_THIN_LOCK &&
	    hd.thin.owner) {
		struct adac_held_lock h = {.object = o->addr, .kind = ADAC_LOCK_THIN, .owner = hd.thin.owner,
		                           .entered = hd.thin.entered};
		if (add(&p->found, &h))
			return 1;
	}
	if (on_owner(p, o))
		return 1;
	if (p->layout->mt && o->mt == p->layout->mt && !is_sync_lock(p->table, o->addr)) {
		struct adac_held_lock h = {.object = o->addr, .kind = ADAC_LOCK_LOCK};
		adac_gc_walk_lock(p->rt); /* (should its fields lie past the walk's bytes) */
		bool held = lock_state(p->rt, p->layout, o->addr, o->data, o->data_len, &h);
		adac_gc_walk_unlock(p->rt);
		if (held && add(&p->found, &h))
			return 1;
	}
	return 0;
}

/* The OS thread id of each lock's holder. */
static int name_owner(void *ctx, const struct adac_managed_thread *th)
{
	struct found *f = ctx;
	for (size_t i = 0; i < f->count; i++)
		if (f->locks[i].owner == th->managed_id)
			f->locks[i].owner_tid = th->os_id;
	return 0;
}

static int cmp_lock(const void *a, const void *b)
{
	uint64_t x = ((const struct adac_held_lock *)a)->object, y = ((const struct adac_held_lock *)b)->object;
	return x < y ? -1 : x > y;
}

int adac_held_locks_find(struct adac_runtime *rt, const struct adac_gc_walk_progress *progress,
                         struct adac_held_locks *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	struct lock_layout layout;
	uint32_t header_offset;
	if (adac_header_offset(rt, &header_offset, err) || lock_layout(rt, &layout, err))
		return -1;
	struct found found = {0};
	size_t owner_cap = 0;
	struct table_ctx table = {.rt = rt, .layout = &layout, .found = &found};
	int rc = adac_sync_blocks(rt, on_entry, &table, err);
	if (adac_failed(&found.fail)) {
		adac_error_copy(err, &found.fail);
		rc = -1;
	}
	if (table.sync_lock_count > 1)
		qsort(table.sync_locks, table.sync_lock_count, sizeof *table.sync_locks, cmp_sync_lock);
	if (rc == 0 && table.sync_lock_count) {
		if (!(table.sync_objects = malloc(table.sync_lock_count * sizeof *table.sync_objects)))
			rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory collecting locks");
		for (size_t i = 0; rc == 0 && i < table.sync_lock_count; i++)
			table.sync_objects[i] = table.sync_locks[i].object;
		if (rc == 0)
			qsort(table.sync_objects, table.sync_lock_count, sizeof *table.sync_objects, cmp_u64);
	}
	struct part_ctx parts[ADAC_GC_WALK_MAX_PARTS];
	void *ctxs[ADAC_GC_WALK_MAX_PARTS];
	unsigned n = adac_gc_walk_parts(rt);
	memset(parts, 0, sizeof parts);
	for (unsigned k = 0; k < n; k++) {
		parts[k] = (struct part_ctx){.rt = rt, .layout = &layout, .table = &table, .header_offset = header_offset};
		ctxs[k] = &parts[k];
	}
	if (rc == 0)
		rc = adac_gc_walk_split(rt, n, on_object, ctxs, progress, &out->walk, err);
	for (unsigned k = 0; k < n; k++) {
		struct found *f = &parts[k].found;
		if (rc == 0 && adac_failed(&f->fail)) {
			adac_error_copy(err, &f->fail);
			rc = -1;
		}
		for (size_t i = 0; rc == 0 && i < f->count; i++)
			if (add(&found, &f->locks[i])) {
				adac_error_copy(err, &found.fail);
				rc = -1;
			}
		free(f->locks);
		for (size_t i = 0; rc == 0 && i < parts[k].owner_count; i++)
			if (adac_grow((void **)&out->lock_owners, &owner_cap, out->lock_owner_count + 1, sizeof *out->lock_owners, 16))
				rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory collecting locks");
			else
				out->lock_owners[out->lock_owner_count++] = parts[k].owners[i];
		free(parts[k].owners);
	}
	free(table.sync_objects);
	if (rc) {
		free(table.sync_locks);
		free(found.locks);
		free(out->lock_owners);
		adac_gc_walk_report_free(&out->walk);
		memset(out, 0, sizeof *out);
		return -1;
	}
	if (found.count > 1)
		qsort(found.locks, found.count, sizeof *found.locks, cmp_lock);
	if (out->lock_owner_count > 1)
		qsort(out->lock_owners, out->lock_owner_count, sizeof *out->lock_owners, cmp_owner);
	if (found.count) /* (without the threads, holders go by managed id) */
		(void)adac_managed_threads(rt, name_owner, &found, NULL);
	out->locks = found.locks;
	out->count = found.count;
	out->sync_locks = table.sync_locks;
	out->sync_lock_count = table.sync_lock_count;
	out->sync_entries = table.entries;
	return 0;
}

void adac_held_locks_free(struct adac_held_locks *l)
{
	free(l->locks);
	free(l->sync_locks);
	free(l->lock_owners);
	adac_gc_walk_report_free(&l->walk);
	memset(l, 0, sizeof *l);
}
