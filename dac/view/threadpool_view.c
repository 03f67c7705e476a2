/* threadpool_view.c - `threadpool`. See threadpool_view.h. */
#include "view/threadpool_view.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/async_frame.h"
#include "async/classic_async.h"
#include "async/continuation.h"
#include "async/lock_wait.h"
#include "async/pending.h"
#include "async/task.h"
#include "async/thread_pool.h"
#include "base/addr_map.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/output.h"
#include "code/delegate.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "types/fielddesc.h"
#include "types/locks.h"
#include "types/names.h"
#include "view/wait_chain.h"

/* ---- what a work item runs --------------------------------------------------------------------- */

struct item {
	struct adac_tp_item it;
	uint64_t mt;
	uint32_t work;              /* index into the distinct works, UINT32_MAX: not known */
};

struct work {
	char *text;                 /* "<method>", "resumes <method> at <file>:<line>" */
	uint64_t count;
};

struct pool {
	struct adac_runtime *rt;
	struct adac_classic_cache *boxes;
	struct item *items;
	size_t n, cap;
	struct work *works;         /* distinct, in the order met ... */
	size_t nworks, works_cap;
	struct adac_addr_map by_text; /* ... and struct work_slot by their text's hash */
	struct adac_error fail;     /* out of memory */
	struct adac_error threads_err; /* the thread list was read in part */
};

struct work_slot {
	uint64_t hash;              /* the key (FNV-1a of the text, never 0) */
	uint32_t work;
};

static uint64_t text_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ? h : 1;
}

/* The index of the work whose text is `text`, a new one when none is: UINT32_MAX when memory runs
 * out. */
static uint32_t work_of(struct pool *pl, const char *text)
{
	uint64_t hash = text_hash(text);
	struct work_slot *slot = adac_addr_map_find(&pl->by_text, hash);
	if (slot && strcmp(pl->works[slot->work].text, text) == 0)
		return slot->work;
	for (size_t k = 0; slot && k < pl->nworks; k++) /* (two texts of one hash: rare) */
		if (strcmp(pl->works[k].text, text) == 0)
			return (uint32_t)k;
	char *dup = strdup(text);
	if (!dup || adac_grow((void **)&pl->works, &pl->works_cap, pl->nworks + 1, sizeof *pl->works, 16)) {
		free(dup);
		return UINT32_MAX;
	}
	pl->works[pl->nworks] = (struct work){dup, 0};
	if (!slot && (slot = adac_addr_map_get(&pl->by_text, hash, sizeof *slot, NULL)))
		slot->work = (uint32_t)pl->nworks;
	return (uint32_t)pl->nworks++;
}

/* The file name of a PDB path. */
static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path;
}

/* "resumes <method> at <file>:<line>": the innermost frame `bt` shows of the chain a runtime-async
 * task (or its continuation) resumes. */
static bool resumes_chain(struct adac_runtime *rt, uint64_t obj, char *buf, size_t size)
{
	uint64_t head, task;
	struct adac_chain ch;
	if (adac_chain_head_of(rt, obj, &head, &task, NULL) || adac_chain_walk(rt, head, 0, &ch, NULL))
		return false;
	bool found = false;
	for (size_t i = 0; i < ch.count && !found; i++) {
		struct adac_async_frame *f = malloc(sizeof *f);
		if (!f)
			break;
		adac_async_frame_resolve(rt, &ch.links[i], f);
		if (adac_async_frame_shown(f) && f->method) {
			found = true;
			if (f->has_source && f->file)
				snprintf(buf, size, "resumes %s at %s:%u", f->method, base_name(f->file), f->line);
			else
				snprintf(buf, size, "resumes %s", f->method);
		}
		free(f);
	}
	adac_chain_free(&ch);
	return found;
}

/* "<method>" of the delegate at obj ("<method> (and N more)" for a multicast one). */
static bool delegate_text(struct adac_runtime *rt, uint64_t obj, char *buf, size_t size)
{
	struct adac_delegate d;
	const char *name;
	if (!obj || adac_delegate_read(rt, obj, &d, NULL) ||
	    !(name = adac_method_name(rt, d.method_desc, ADAC_NAME_PARAMS, NULL)))
		return false;
	if (d.count > 1)
		snprintf(buf, size, "%s (and %u more)", name, d.count - 1);
	else
		snprintf(buf, size, "%s", name);
	return true;
}

/* What the work item at obj (MethodTable mt) runs, in buf; false when not known. */
static bool work_text(struct pool *pl, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	struct adac_runtime *rt = pl->rt;
	if (adac_is_delegate_mt(rt, mt))
		return delegate_text(rt, obj, buf, size);
	bool task = false;
	if (adac_task_is_task_mt(rt, mt, &task, NULL) == 0 && task) {
		if (adac_task_is_state_machine_box(rt, mt)) {
			struct adac_classic_frame f;
			adac_classic_frame_read(rt, pl->boxes, obj, mt, &f);
			if (!f.method)
				return false;
			if (f.has_source && f.file)
				snprintf(buf, size, "resumes %s at %s:%u", f.method, base_name(f.file), f.line);
			else
				snprintf(buf, size, "resumes %s", f.method);
			return true;
		}
		if (resumes_chain(rt, obj, buf, size))
			return true;
	}
	/* A Task's action (Task.Run, ContinueWith), a QueueUserWorkItem callback, an await continuation's
	 * action: the delegate the item holds. */
	static const char *const fields[] = {"m_action", "_callback", "m_continuation", "_action"};
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
		uint64_t d = 0;
		if (adac_object_field_ptr(rt, obj, fields[i], &d, NULL) == 0 && d && delegate_text(rt, d, buf, size))
			return true;
	}
	return false;
}

static int on_item(void *ctx, const struct adac_tp_item *it)
{
	struct pool *pl = ctx;
	if (adac_grow((void **)&pl->items, &pl->cap, pl->n + 1, sizeof *pl->items, 64)) {
		adac_fail(&pl->fail, ADAC_E_NOMEM, 0, "out of memory listing the thread pool's work items");
		return 1;
	}
	struct item *e = &pl->items[pl->n++];
	*e = (struct item){.it = *it, .work = UINT32_MAX};
	char text[700];
	if (adac_object_mt(pl->rt, it->obj, &e->mt, NULL) || !work_text(pl, it->obj, e->mt, text, sizeof text))
		return 0; /* (counted under its type) */
	if ((e->work = work_of(pl, text)) == UINT32_MAX) {
		adac_fail(&pl->fail, ADAC_E_NOMEM, 0, "out of memory listing the thread pool's work items");
		return 1;
	}
	pl->works[e->work].count++;
	return 0;
}

static const char *type_name(struct adac_runtime *rt, uint64_t mt)
{
	const char *name = mt ? adac_type_name(rt, mt, 0, NULL) : NULL;
	return name ? name : "?";
}

/* The summary's rows: each distinct work, then each type of the items whose work is not known. */
struct row {
	const char *text;
	uint64_t count;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

static struct row *summary(struct pool *pl, size_t *n)
{
	struct row *r = malloc((pl->nworks + pl->n + 1) * sizeof *r);
	if (!r)
		return NULL;
	*n = 0;
	for (size_t k = 0; k < pl->nworks; k++)
		r[(*n)++] = (struct row){pl->works[k].text, pl->works[k].count};
	size_t first_type = *n;
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->items[i].work != UINT32_MAX)
			continue;
		const char *t = type_name(pl->rt, pl->items[i].mt);
		size_t k = first_type;
		while (k < *n && strcmp(r[k].text, t) != 0)
			k++;
		if (k == *n)
			r[(*n)++] = (struct row){t, 0};
		r[k].count++;
	}
	qsort(r, *n, sizeof *r, cmp_row);
	return r;
}

/* The items, collected: 0, or -1 with err when the queues cannot be read at all (a partial read is
 * in *items_err). */
static int pool_collect(struct adac_runtime *rt, struct pool *pl, struct adac_error *items_err, struct adac_error *err)
{
	memset(pl, 0, sizeof *pl);
	pl->rt = rt;
	if (!(pl->boxes = adac_classic_cache_new()))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (adac_thread_pool_items(rt, on_item, pl, items_err) && items_err->code == ADAC_E_LAYOUT && !pl->n)
		return adac_error_copy(err, items_err);
	if (adac_failed(&pl->fail))
		return adac_error_copy(err, &pl->fail);
	return 0;
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->nworks; i++)
		free(pl->works[i].text);
	free(pl->works);
	adac_addr_map_free(&pl->by_text);
	free(pl->items);
	adac_classic_cache_free(pl->boxes);
}

static size_t local_items(const struct pool *pl)
{
	size_t local = 0;
	for (size_t i = 0; i < pl->n; i++)
		local += pl->items[i].it.queue == ADAC_TP_LOCAL;
	return local;
}

/* "     Count  Work item" and the first max rows of the summary (all: SIZE_MAX). */
static void summary_print(struct pool *pl, size_t max, struct adac_out *out)
{
	size_t nrows = 0;
	struct row *rows = pl->n ? summary(pl, &nrows) : NULL;
	if (!rows)
		return;
	adac_print(out, "     Count  Work item\n");
	for (size_t i = 0; i < nrows && i < max; i++)
		adac_print(out, "%10llu  %s\n", (unsigned long long)rows[i].count, rows[i].text);
	if (nrows > max)
		adac_print(out, "... and %zu more: see `threadpool`\n", nrows - max);
	free(rows);
}

/* The members of the pool's JSON that `threadpool` and `report` share: started, cpu_utilization,
 * workers, queued, summary. */
static void common_json(const struct adac_thread_pool *tp, struct pool *pl, json_t *j, json_t *warnings)
{
	json_object_set_new(j, "started", tp->state_known ? json_boolean(tp->started) : json_null());
	json_object_set_new(j, "cpu_utilization", tp->has_cpu ? json_integer(tp->cpu) : json_null());
	if (tp->has_workers) {
		json_object_set_new(j, "workers", json_pack("{s:I, s:I, s:I, s:i, s:i}", "total", (json_int_t)tp->existing,
		                                            "running", (json_int_t)tp->working, "idle",
		                                            (json_int_t)(tp->existing > tp->working ? tp->existing - tp->working : 0),
		                                            "min", tp->min, "max", tp->max));
	} else {
		json_object_set_new(j, "workers", json_null());
		if (!tp->state_known)
			json_array_append_new(warnings, adac_json_text("whether the thread pool was started is not known "
			                                               "(PortableThreadPool.ThreadPoolInstance cannot be read)"));
		else if (tp->started)
			json_array_append_new(warnings, adac_json_text("the worker counts (PortableThreadPool.ThreadPoolInstance) "
			                                               "cannot be read"));
	}
	size_t local = local_items(pl);
	json_object_set_new(j, "queued", json_pack("{s:I, s:I}", "global", (json_int_t)(pl->n - local), "local",
	                                           (json_int_t)local));
	size_t nrows = 0;
	struct row *rows = pl->n ? summary(pl, &nrows) : NULL;
	json_t *sum = json_array();
	for (size_t i = 0; rows && i < nrows; i++)
		json_array_append_new(sum, json_pack("{s:I, s:o}", "count", (json_int_t)rows[i].count, "work",
		                                     adac_json_text(rows[i].text)));
	free(rows);
	json_object_set_new(j, "summary", sum);
}

static void items_warning(const struct adac_error *items_err, json_t *warnings, struct adac_out *out)
{
	if (!adac_failed(items_err))
		return;
	if (!warnings) {
		adac_print(out, "warning: the queues were read in part: %s\n", items_err->msg);
		return;
	}
	char line[600];
	snprintf(line, sizeof line, "the queues were read in part: %s", items_err->msg);
	json_array_append_new(warnings, adac_json_text(line));
}

/* ---- the workers ------------------------------------------------------------------------------- */

struct workers {
	struct adac_managed_thread *v;
	size_t n, cap;
};

static int on_thread(void *ctx, const struct adac_managed_thread *th)
{
	struct workers *w = ctx;
	if (!th->os_id || !(th->state & ADAC_THREAD_STATE_TP_WORKER))
		return 0;
	if (adac_grow((void **)&w->v, &w->cap, w->n + 1, sizeof *w->v, 16))
		return 1;
	w->v[w->n++] = *th;
	return 0;
}

/* ---- printing ---------------------------------------------------------------------------------- */

/* -1 with err when the user interrupts the listing of the items. */
static int print_text(struct adac_runtime *rt, const struct adac_thread_pool *tp, const struct workers *ws,
                      struct adac_blocking_scan *k, struct pool *pl, const struct adac_error *items_err, bool items,
                      struct adac_out *out, struct adac_error *err)
{
	adac_print(out, "Using the portable thread pool.\n\n");
	if (!tp->state_known)
		adac_print(out, "warning: whether it was started is not known (PortableThreadPool.ThreadPoolInstance "
		                "cannot be read)\n");
	else if (!tp->started)
		adac_print(out, "Not started: no work was ever queued to it.\n");
	if (tp->has_cpu)
		adac_print(out, "CPU utilization:  %d%%\n", tp->cpu);
	if (tp->has_workers) {
		adac_print(out, "Workers Total:    %u\n", tp->existing);
		adac_print(out, "Workers Running:  %u\n", tp->working);
		adac_print(out, "Workers Idle:     %u\n", tp->existing > tp->working ? tp->existing - tp->working : 0);
		adac_print(out, "Worker Min Limit: %d\n", tp->min);
		adac_print(out, "Worker Max Limit: %d\n", tp->max);
	} else if (tp->started) {
		adac_print(out, "warning: the worker counts (PortableThreadPool.ThreadPoolInstance) cannot be read\n");
	}

	adac_print(out, "\nWorker threads:\n");
	if (adac_failed(&pl->threads_err))
		adac_print(out, "warning: the threads were read in part: %s\n", pl->threads_err.msg);
	if (!ws->n)
		adac_print(out, "none\n");
	char warning[700];
	if (adac_blocking_scan_warning(k, warning, sizeof warning))
		adac_print(out, "warning: %s\n", warning);
	for (size_t i = 0; i < ws->n; i++) {
		const struct adac_managed_thread *th = &ws->v[i];
		const struct adac_blocked *b = adac_blocking_scan_thread(k, th->os_id);
		char doing[1100];
		if (!b)
			adac_thread_doing(rt, th->os_id, false, doing, sizeof doing);
		adac_print(out, "thread tid %llu (managed thread %u): %s\n", (unsigned long long)th->os_id, th->managed_id,
		           b ? b->text : doing);
		if (b)
			adac_wait_chain_print(&k->b, b, 1);
	}

	size_t local = local_items(pl);
	adac_print(out, "\nQueued work items: %zu (%zu global, %zu local)\n", pl->n, pl->n - local, local);
	items_warning(items_err, NULL, out);
	summary_print(pl, SIZE_MAX, out);
	if (!items || !pl->n)
		return 0;
	adac_print(out, "\n%-17s %-18s %s\n", "Queue", "Object", "Type");
	for (size_t i = 0; i < pl->n; i++) {
		if (adac_interrupted(out))
			return adac_fail(err, ADAC_E_INTERRUPTED, 0, "interrupted");
		const struct item *e = &pl->items[i];
		char queue[64];
		if (e->it.queue == ADAC_TP_LOCAL && e->it.owner_tid)
			snprintf(queue, sizeof queue, "[Local tid %llu]", (unsigned long long)e->it.owner_tid);
		else
			snprintf(queue, sizeof queue, "[%s]", adac_tp_queue_name(e->it.queue));
		adac_print(out, "%-17s 0x%016llx %s\n", queue, (unsigned long long)e->it.obj, type_name(rt, e->mt));
		if (e->work != UINT32_MAX)
			adac_print(out, "    => %s\n", pl->works[e->work].text);
	}
	return 0;
}

static int print_json(struct adac_runtime *rt, const struct adac_thread_pool *tp, const struct workers *ws,
                      struct adac_blocking_scan *k, struct pool *pl, const struct adac_error *items_err, struct adac_out *out,
                      struct adac_error *err)
{
	json_t *j = json_object(), *warnings = json_array();
	json_object_set_new(j, "portable", json_true());
	common_json(tp, pl, j, warnings);
	json_t *threads = json_array();
	for (size_t i = 0; i < ws->n; i++) {
		const struct adac_managed_thread *th = &ws->v[i];
		const struct adac_blocked *b = adac_blocking_scan_thread(k, th->os_id);
		json_t *o = json_object(), *then = json_array();
		char doing[1100];
		json_object_set_new(o, "tid", json_integer((json_int_t)th->os_id));
		json_object_set_new(o, "managed_id", json_integer(th->managed_id));
		if (b) {
			json_object_set_new(o, "waits_on", adac_json_text(b->text));
			json_object_set_new(o, "doing", json_null());
			adac_wait_chain(&k->b, b, 1, then);
		} else {
			adac_thread_doing(rt, th->os_id, false, doing, sizeof doing);
			json_object_set_new(o, "waits_on", json_null());
			json_object_set_new(o, "doing", adac_json_text(doing));
		}
		json_object_set_new(o, "then", then);
		json_array_append_new(threads, o);
	}
	json_object_set_new(j, "worker_threads", threads);
	if (adac_failed(&pl->threads_err)) {
		char line[600];
		snprintf(line, sizeof line, "the threads were read in part: %s", pl->threads_err.msg);
		json_array_append_new(warnings, adac_json_text(line));
	}
	char warning[700];
	if (adac_blocking_scan_warning(k, warning, sizeof warning))
		json_array_append_new(warnings, adac_json_text(warning));
	json_t *items = json_array();
	for (size_t i = 0; i < pl->n; i++) {
		const struct item *e = &pl->items[i];
		json_t *o = json_object();
		json_object_set_new(o, "queue", json_string(adac_tp_queue_name(e->it.queue)));
		json_object_set_new(o, "owner_tid", e->it.owner_tid ? json_integer((json_int_t)e->it.owner_tid) : json_null());
		json_object_set_new(o, "object", adac_json_addr(e->it.obj));
		json_object_set_new(o, "type", adac_json_text(e->mt ? adac_type_name(rt, e->mt, 0, NULL) : NULL));
		json_object_set_new(o, "work", e->work != UINT32_MAX ? adac_json_text(pl->works[e->work].text) : json_null());
		json_array_append_new(items, o);
	}
	json_object_set_new(j, "items", items);
	items_warning(items_err, warnings, out);
	json_object_set_new(j, "warnings", warnings);
	return adac_json_print_document(out, "threadpool", j, err);
}

int adac_threadpool_print(struct adac_runtime *rt, bool items, bool json, struct adac_out *out, struct adac_error *err)
{
	const struct adac_thread_pool *tp = adac_thread_pool(rt);
	struct pool pl;
	struct adac_error items_err = {0};
	int rc = -1;
	if (pool_collect(rt, &pl, &items_err, err))
		goto done;
	struct workers ws = {0};
	if (adac_managed_threads(rt, on_thread, &ws, &pl.threads_err) == 0 && ws.n && !ws.v)
		adac_fail(&pl.threads_err, ADAC_E_NOMEM, 0, "out of memory");
	struct adac_blocking_scan k;
	if (adac_blocking_scan_find(rt, out, &k, err) == 0) {
		rc = json ? print_json(rt, tp, &ws, &k, &pl, &items_err, out, err)
		          : print_text(rt, tp, &ws, &k, &pl, &items_err, items, out, err);
	}
	adac_blocking_scan_free(&k);
	free(ws.v);
done:
	pool_free(&pl);
	return rc;
}

void adac_threadpool_report(struct adac_runtime *rt, json_t *root, json_t *warnings, struct adac_out *out)
{
	const struct adac_thread_pool *tp = adac_thread_pool(rt);
	struct pool pl;
	struct adac_error items_err = {0}, e = {0};
	if (pool_collect(rt, &pl, &items_err, &e)) {
		if (root)
			json_object_set_new(root, "thread_pool", json_null());
		items_warning(&e, warnings, out);
		pool_free(&pl);
		return;
	}
	if (root) {
		json_t *j = json_object();
		common_json(tp, &pl, j, warnings);
		items_warning(&items_err, warnings, out);
		json_object_set_new(root, "thread_pool", j);
		pool_free(&pl);
		return;
	}
	if (!tp->state_known) {
		adac_print(out, "not known: PortableThreadPool.ThreadPoolInstance cannot be read\n");
	} else if (!tp->started) {
		adac_print(out, "not started: no work was ever queued to it\n");
	} else {
		char figures[160] = "";
		int n = 0;
		if (tp->has_workers)
			n = snprintf(figures, sizeof figures, "%u of %u workers busy (at most %d)", tp->working, tp->existing,
			             tp->max);
		if (tp->has_cpu && n >= 0 && (size_t)n < sizeof figures)
			snprintf(figures + n, sizeof figures - (size_t)n, "%sCPU %d%%", n ? ", " : "", tp->cpu);
		size_t local = local_items(&pl);
		adac_print(out, "%s%s%zu work item%s queued (%zu global, %zu local)%s\n", figures, figures[0] ? "; " : "", pl.n,
		           pl.n == 1 ? "" : "s", pl.n - local, local, pl.n ? ", by what they run:" : "");
		items_warning(&items_err, NULL, out);
		summary_print(&pl, ADAC_REPORT_POOL_ROWS, out);
	}
	pool_free(&pl);
}
