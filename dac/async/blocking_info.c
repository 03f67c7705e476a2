/* blocking_info.c - reads ThreadBlockingInfo.t_first and the records it links. */
#include "async/blocking_info.h"

#include <string.h>

#include "async/thread_records.h"
#include "base/limits.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"

#define NS "System.Threading"

struct layout {
	bool loaded;
	struct adac_field t_first;
	uint32_t object_ptr, object_kind, timeout_ms, next;
	uint64_t lock_mt, condition_mt; /* 0 while not loaded */
	uint32_t condition_lock;        /* Condition._lock (object-relative) */
};

/* A field's offset in the struct (a value type's fields have no MethodTable before them). */
static int field_offset(struct adac_runtime *rt, uint64_t mt, const char *name, uint32_t *off, struct adac_error *err)
{
	struct adac_field f;
	if (adac_mt_find_field(rt, mt, name, &f, err))
		return -1;
	*off = f.offset;
	return 0;
}

static int layout(struct adac_runtime *rt, struct layout *l, struct adac_error *err)
{
	memset(l, 0, sizeof *l);
	uint64_t corelib, mt;
	if (adac_corelib_module(rt, &corelib, err) || adac_module_type(rt, corelib, NS, "ThreadBlockingInfo", &mt, err))
		return -1;
	if (!mt)
		return 0; /* nothing has blocked in a way it records yet */
	l->loaded = true;
	if (adac_mt_find_field(rt, mt, "t_first", &l->t_first, err))
		return -1;
	if (!l->t_first.is_thread_static)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "ThreadBlockingInfo.t_first is not thread-static");
	if (field_offset(rt, mt, "_objectPtr", &l->object_ptr, err) || field_offset(rt, mt, "_objectKind", &l->object_kind, err) ||
	    field_offset(rt, mt, "_timeoutMs", &l->timeout_ms, err) || field_offset(rt, mt, "_next", &l->next, err))
		return -1;
	if (adac_module_type(rt, corelib, NS, "Lock", &l->lock_mt, err) ||
	    adac_module_type(rt, corelib, NS, "Condition", &l->condition_mt, err))
		return -1;
	if (l->condition_mt && adac_mt_field_offset(rt, l->condition_mt, "_lock", &l->condition_lock, err))
		return -1;
	return 0;
}

/* What the record's slot holds: the object, and whether it is a Lock or a Condition (of which Lock). */
static int read_object(struct adac_runtime *rt, const struct layout *l, struct adac_blocking *b, uint64_t object_ptr,
                       struct adac_error *err)
{
	b->kind = ADAC_BLOCKING_OTHER;
	uint64_t obj, mt;
	if (!object_ptr || adac_read_ptr(rt->t, object_ptr, &obj, NULL) || !obj || adac_object_mt(rt, obj, &mt, NULL))
		return 0; /* a native object (a Monitor kind's AwareLock), or nothing the slot names */
	b->object = obj;
	if (mt == l->lock_mt) {
		b->kind = ADAC_BLOCKING_LOCK;
		b->lock = obj;
	} else if (mt == l->condition_mt) {
		b->kind = ADAC_BLOCKING_CONDITION;
		if (adac_read_ptr(rt->t, obj + l->condition_lock, &b->lock, err))
			return -1;
	}
	return 0;
}

struct walk {
	const struct layout *l;
	struct adac_runtime *rt;
	struct adac_blocking *out;
	size_t *n;
};

static int on_record(void *ctx, uint64_t rec, size_t index, struct adac_error *err)
{
	struct walk *w = ctx;
	const struct layout *l = w->l;
	struct adac_blocking *b = &w->out[index];
	memset(b, 0, sizeof *b);
	b->addr = rec;
	uint64_t object_ptr;
	uint32_t kind, timeout;
	if (adac_read_ptr(w->rt->t, rec + l->object_ptr, &object_ptr, err) ||
	    adac_read_u32(w->rt->t, rec + l->object_kind, &kind, err) ||
	    adac_read_u32(w->rt->t, rec + l->timeout_ms, &timeout, err) || read_object(w->rt, l, b, object_ptr, err))
		return -1;
	b->object_kind = kind;
	b->timeout_ms = (int32_t)timeout;
	*w->n = index + 1;
	return 0;
}

int adac_thread_blocking(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_blocking *out,
                         size_t max, size_t *n, struct adac_error *err)
{
	*n = 0;
	struct layout l;
	if (layout(rt, &l, err)) {
		adac_error_wrap(err, "blocking records: ");
		return -1;
	}
	if (!l.loaded)
		return 0;
	const struct adac_thread_records_names names = {
		"ThreadBlockingInfo.t_first", "blocking record", "nested blocking waits",
		max == ADAC_MAX_BLOCKING_INFOS ? "ADAC_MAX_BLOCKING_INFOS" : NULL};
	struct walk w = {&l, rt, out, n};
	return adac_thread_records(rt, th, &l.t_first, l.next, max, &names, on_record, &w, err);
}

bool adac_thread_innermost_blocking(struct adac_runtime *rt, const struct adac_managed_thread *th,
                                    struct adac_blocking *b, struct adac_error *err)
{
	struct adac_blocking recs[ADAC_MAX_BLOCKING_INFOS];
	size_t n = 0;
	if (adac_thread_blocking(rt, th, recs, ADAC_MAX_BLOCKING_INFOS, &n, err) || !n)
		return false;
	*b = recs[0];
	return true;
}
