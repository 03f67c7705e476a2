/* threads_view.c - `clrthreads`. See threads_view.h. */
#include "view/threads_view.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/thread_pool.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/output.h"
#include "metadata/signature.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/fielddesc.h"
#include "types/names.h"
#include "view/lock_view.h"
#include "view/value_format.h"
#include "view/wait_chain.h"

struct thread_row {
	struct adac_managed_thread th;
	struct adac_thread_details d;
	uint32_t index;             /* the debugger's, 0 when the target has no such thread */
	char *name;                 /* the managed Thread's _name as a string literal, NULL when none ... */
	json_t *name_json;          /* ... and as JSON */
	uint64_t exception;         /* Thread.LastThrownObject, 0 when none */
	bool unhandled;
	uint32_t locks;             /* the locks it holds (Monitors and Locks), when they are known */
};

/* The target's threads by OS id, for their indexes. */
struct os_thread {
	uint64_t tid;
	uint32_t index;
};

static int cmp_os(const void *a, const void *b)
{
	uint64_t x = ((const struct os_thread *)a)->tid, y = ((const struct os_thread *)b)->tid;
	return x < y ? -1 : x > y;
}

struct rows {
	struct adac_runtime *rt;
	struct thread_row *v;
	size_t n, cap;
	struct os_thread *os;
	size_t nos;
	struct adac_error fail;
	bool locks_known;           /* the rows' lock counts */
};

static int on_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct rows *r = ctx;
	if (adac_grow((void **)&r->v, &r->cap, r->n + 1, sizeof *r->v, 16)) {
		adac_fail(&r->fail, ADAC_E_NOMEM, 0, "out of memory listing the threads");
		return 1;
	}
	struct thread_row *row = &r->v[r->n++];
	memset(row, 0, sizeof *row);
	row->th = *th;
	adac_thread_details(r->rt, th, &row->d, NULL);
	const struct os_thread key = {th->os_id, 0};
	const struct os_thread *os = th->os_id && r->nos ? bsearch(&key, r->os, r->nos, sizeof *r->os, cmp_os) : NULL;
	row->index = os ? os->index : 0;
	uint64_t name = 0;
	struct adac_sig_text text = {0};
	if (row->d.object && adac_object_field_ptr(r->rt, row->d.object, "_name", &name, NULL) == 0 && name &&
	    adac_value_format_string(r->rt, name, &text, &row->name_json, NULL) == 0 && text.s) {
		row->name = text.s;
		text.s = NULL;
	}
	adac_sig_text_free(&text);
	if (adac_thread_last_thrown(r->rt, th, &row->exception, &row->unhandled, NULL))
		row->exception = 0;
	return 0;
}

/* "Finalizer", "Threadpool Worker", ... as SOS names them, ", "-separated in buf ("" when none). */
static const char *kinds(const struct thread_row *r, char *buf, size_t size)
{
	static const struct {
		uint32_t flag;
		const char *name;
	} flags[] = {{ADAC_THREAD_STATE_TP_WORKER, "Threadpool Worker"}, {ADAC_THREAD_STATE_BACKGROUND, "Background"},
	             {ADAC_THREAD_STATE_UNSTARTED, "Unstarted"}, {ADAC_THREAD_STATE_DEAD, "Dead"}};
	size_t w = 0;
	buf[0] = '\0';
	if (r->d.finalizer)
		w += (size_t)snprintf(buf, size, "Finalizer");
	for (size_t i = 0; i < sizeof flags / sizeof *flags && w < size; i++)
		if (r->th.state & flags[i].flag)
			w += (size_t)snprintf(buf + w, size - w, "%s%s", w ? ", " : "", flags[i].name);
	return buf;
}

static const char *type_of(struct adac_runtime *rt, uint64_t obj)
{
	const char *name = adac_lock_object_type(rt, obj);
	return name ? name : "?";
}

/* What the thread does, for its second line: NULL for a thread with no OS thread (not started, or
 * ended). */
static const char *doing(struct adac_runtime *rt, const struct adac_blocking_scan *k, const struct thread_row *r,
                         const struct adac_blocked **b, char *buf, size_t size)
{
	*b = NULL;
	if (!r->th.os_id || !r->index)
		return NULL;
	if ((*b = adac_blocking_scan_thread(k, r->th.os_id)))
		return (*b)->text;
	adac_thread_doing(rt, r->th.os_id, r->d.finalizer, buf, size);
	return buf;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Each row's count of the locks it holds (SOS's Lock Count, from the locks themselves: the runtime's
 * Thread keeps none); false when the locks are not known. */
static bool count_locks(struct rows *r, const struct adac_blocking_scan *k)
{
	if (!k->have_locks)
		return false;
	uint32_t *owners = malloc((k->h.count ? k->h.count : 1) * sizeof *owners);
	if (!owners)
		return false;
	for (size_t i = 0; i < k->h.count; i++)
		owners[i] = k->h.locks[i].owner;
	qsort(owners, k->h.count, sizeof *owners, cmp_u32);
	for (size_t i = 0; i < r->n; i++) {
		uint32_t id = r->v[i].th.managed_id;
		size_t lo = 0, hi = k->h.count;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (owners[mid] < id)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint32_t n = 0;
		for (size_t j = lo; j < k->h.count && owners[j] == id; j++)
			n++;
		r->v[i].locks = n;
	}
	free(owners);
	return true;
}

/* -1 with err when the user interrupts the listing. */
static int print_text(struct adac_runtime *rt, const struct adac_thread_counts *c, bool has_counts, struct rows *r,
                      const struct adac_blocking_scan *k, const struct adac_error *list_err, struct adac_out *out,
                      struct adac_error *err)
{
	if (has_counts)
		adac_print(out, "ThreadCount:      %u\nUnstartedThread:  %u\nBackgroundThread: %u\nPendingThread:    %u\n"
		                "DeadThread:       %u\n\n", c->threads, c->unstarted, c->background, c->pending, c->dead);
	if (adac_failed(list_err))
		adac_print(out, "warning: the thread list was read in part: %s\n", list_err->msg);
	char warning[700];
	if (adac_blocking_scan_warning(k, warning, sizeof warning))
		adac_print(out, "warning: %s\n", warning);
	adac_print(out, " DBG   ID     OSID ThreadOBJ          State      GC Mode     Locks Name / kind / exception\n");
	for (size_t i = 0; i < r->n; i++) {
		if (adac_interrupted(out))
			return adac_fail(err, ADAC_E_INTERRUPTED, 0, "interrupted");
		const struct thread_row *row = &r->v[i];
		char dbg[16], kind[160], buf[1100];
		snprintf(dbg, sizeof dbg, row->index ? "%u" : "-", row->index);
		const char *mode = !row->d.has_gc_mode ? "?" : row->d.cooperative ? "Cooperative" : "Preemptive";
		kinds(row, kind, sizeof kind);
		char locks[16];
		snprintf(locks, sizeof locks, r->locks_known ? "%u" : "?", row->locks);
		adac_print(out, "%4s %4u %8llu 0x%016llx 0x%08x %-11s %5s", dbg, row->th.managed_id,
		           (unsigned long long)row->th.os_id, (unsigned long long)row->th.thread, row->th.state, mode, locks);
		if (row->name)
			adac_print(out, " %s", row->name);
		if (kind[0])
			adac_print(out, " (%s)", kind);
		if (row->exception)
			adac_print(out, "%s%s 0x%016llx%s", row->name || kind[0] ? ", " : " ", type_of(rt, row->exception),
			           (unsigned long long)row->exception, row->unhandled ? " (unhandled)" : "");
		adac_print(out, "\n");
		const struct adac_blocked *b;
		const char *what = doing(rt, k, row, &b, buf, sizeof buf);
		if (what)
			adac_print(out, "         %s\n", what);
		if (b) { /* (the wait chain, indented under its line) */
			json_t *then = json_array();
			adac_wait_chain(&k->b, b, 1, then);
			for (size_t s = 0; s < json_array_size(then); s++)
				adac_print(out, "           then: %s\n", json_string_value(json_array_get(then, s)));
			json_decref(then);
		}
	}
	return 0;
}

static int print_json(struct adac_runtime *rt, const struct adac_thread_counts *c, bool has_counts, struct rows *r,
                      const struct adac_blocking_scan *k, const struct adac_error *list_err, struct adac_out *out,
                      struct adac_error *err)
{
	json_t *j = json_object(), *threads = json_array(), *warnings = json_array();
	json_object_set_new(j, "counts", has_counts ? json_pack("{s:I, s:I, s:I, s:I, s:I}", "threads", (json_int_t)c->threads,
	                                                       "unstarted", (json_int_t)c->unstarted, "background",
	                                                       (json_int_t)c->background, "pending", (json_int_t)c->pending,
	                                                       "dead", (json_int_t)c->dead)
	                                            : json_null());
	for (size_t i = 0; i < r->n; i++) {
		const struct thread_row *row = &r->v[i];
		json_t *o = json_object(), *kj = json_array(), *then = json_array();
		char kind[160], buf[1100];
		json_object_set_new(o, "index", row->index ? json_integer(row->index) : json_null());
		json_object_set_new(o, "managed_id", json_integer(row->th.managed_id));
		json_object_set_new(o, "tid", row->th.os_id ? json_integer((json_int_t)row->th.os_id) : json_null());
		json_object_set_new(o, "thread", adac_json_addr(row->th.thread));
		json_object_set_new(o, "object", row->d.object ? adac_json_addr(row->d.object) : json_null());
		json_object_set_new(o, "state", json_integer(row->th.state));
		json_object_set_new(o, "gc_mode", !row->d.has_gc_mode ? json_null()
		                                  : json_string(row->d.cooperative ? "cooperative" : "preemptive"));
		json_object_set_new(o, "name", row->name_json ? json_incref(row->name_json) : json_null());
		json_object_set_new(o, "locks_held", r->locks_known ? json_integer(row->locks) : json_null());
		kinds(row, kind, sizeof kind);
		for (char *s = kind, *e; *s; s = *e ? e + 2 : e) {
			e = strstr(s, ", ");
			if (!e)
				e = s + strlen(s);
			json_array_append_new(kj, json_stringn(s, (size_t)(e - s)));
		}
		json_object_set_new(o, "kinds", kj);
		json_object_set_new(o, "exception", !row->exception ? json_null()
		                                    : json_pack("{s:o, s:o, s:b}", "object", adac_json_addr(row->exception),
		                                                "type", adac_json_text(type_of(rt, row->exception)),
		                                                "unhandled", row->unhandled));
		const struct adac_blocked *b;
		const char *what = doing(rt, k, row, &b, buf, sizeof buf);
		json_object_set_new(o, "waits_on", b ? adac_json_text(b->text) : json_null());
		json_object_set_new(o, "doing", what && !b ? adac_json_text(what) : json_null());
		if (b)
			adac_wait_chain(&k->b, b, 1, then);
		json_object_set_new(o, "then", then);
		json_array_append_new(threads, o);
	}
	json_object_set_new(j, "threads", threads);
	if (adac_failed(list_err)) {
		char line[600];
		snprintf(line, sizeof line, "the thread list was read in part: %s", list_err->msg);
		json_array_append_new(warnings, adac_json_text(line));
	}
	char warning[700];
	if (adac_blocking_scan_warning(k, warning, sizeof warning))
		json_array_append_new(warnings, adac_json_text(warning));
	json_object_set_new(j, "warnings", warnings);
	return adac_json_print_document(out, "clrthreads", j, err);
}

int adac_clrthreads_print(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err)
{
	struct rows r = {.rt = rt};
	struct adac_error list_err = {0};
	const struct adac_thread *os;
	size_t nos;
	if (adac_target_threads(rt->t, &os, &nos, NULL) == 0 && nos && (r.os = malloc(nos * sizeof *r.os))) {
		for (size_t i = 0; i < nos; i++)
			r.os[i] = (struct os_thread){os[i].tid, os[i].index};
		qsort(r.os, nos, sizeof *r.os, cmp_os);
		r.nos = nos;
	} /* (else no indexes) */
	if (adac_managed_threads(rt, on_thread, &r, &list_err) && !r.n) {
		adac_error_copy(err, &list_err);
		free(r.v);
		free(r.os);
		return -1;
	}
	int rc = -1;
	if (adac_failed(&r.fail)) {
		adac_error_copy(err, &r.fail);
		goto done;
	}
	struct adac_thread_counts c;
	bool has_counts = adac_thread_store_counts(rt, &c, NULL) == 0;
	struct adac_blocking_scan k;
	if (adac_blocking_scan_find(rt, out, &k, err) == 0) {
		r.locks_known = count_locks(&r, &k);
		rc = json ? print_json(rt, &c, has_counts, &r, &k, &list_err, out, err)
		          : print_text(rt, &c, has_counts, &r, &k, &list_err, out, err);
	}
	adac_blocking_scan_free(&k);
done:
	for (size_t i = 0; i < r.n; i++) {
		free(r.v[i].name);
		json_decref(r.v[i].name_json);
	}
	free(r.v);
	free(r.os);
	return rc;
}
