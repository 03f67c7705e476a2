/* backtrace_view.c - `bt`'s text and JSON of threads and chains. */
#include "view/backtrace_view.h"

#include <jansson.h>
#include <string.h>

#include "async/lock_wait.h"
#include "async/sync_wait.h"
#include "async/thread_stack.h"
#include "base/json.h"
#include "base/output.h"
#include "runtime/object.h"
#include "runtime/threads.h"
#include "target/stop_reason.h"
#include "target/target.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "view/chain_view.h"
#include "view/exception_view.h"
#include "view/frame_vars.h"

/* ---- physical frames ---- */

struct frames {
	struct adac_runtime *rt;
	bool locals;           /* the variables of managed frames (--locals) */
	struct adac_out *out;
	json_t *json;          /* the frames array, or NULL for text */
	json_t *last;          /* JSON of the last frame */
	size_t count;          /* at most this many, 0: all */
	unsigned n;            /* frames shown */
	bool truncated;
	bool blocks;           /* a frame waits synchronously for a task */
	bool waits_lock;       /* a frame waits to enter a lock */
};


static int frame_text(void *ctx, const struct adac_stack_frame *f)
{
	struct frames *c = ctx;
	if (c->count && c->n >= c->count) {
		c->truncated = true;
		return 1;
	}
	c->blocks |= adac_sync_wait_frame(f);
	c->waits_lock |= adac_lock_wait_frame(f);
	adac_print(c->out, "  frame #%u: 0x%016llx", c->n++, (unsigned long long)f->pc);
	if (f->symbol)
		adac_print(c->out, f->managed ? " %s`%s + 0x%llx" : " %s`%s + %llu", f->module ? f->module : "?", f->symbol,
		           (unsigned long long)f->offset);
	else if (f->module)
		adac_print(c->out, " %s", f->module);
	if (f->file && f->managed) {
		const char *base = strrchr(f->file, '/');
		adac_print(c->out, " at %s:%u", base ? base + 1 : f->file, f->line); /* as async frames show it */
	} else if (f->file) {
		adac_print(c->out, " at %s:%u", f->file, f->line);
	}
	adac_print(c->out, "\n");
	if (c->locals && f->regs)
		adac_frame_vars_print(c->rt, f->regs, f->caller, "      ", c->out, NULL, NULL);
	return 0;
}

static void error_text(void *ctx, const struct adac_error *err)
{
	struct frames *c = ctx;
	adac_print(c->out, "  frame #%u: error: %s\n", c->n, err->msg);
}

static int frame_json(void *ctx, const struct adac_stack_frame *f)
{
	struct frames *c = ctx;
	if (c->count && c->n >= c->count)
		return 1;
	json_t *j = json_object();
	json_object_set_new(j, "index", json_integer(c->n++));
	json_object_set_new(j, "kind", adac_json_text(f->managed ? "managed" : "native"));
	json_object_set_new(j, "pc", adac_json_addr(f->pc));
	json_object_set_new(j, "sp", f->sp ? adac_json_addr(f->sp) : json_null());
	json_object_set_new(j, "module", f->module ? adac_json_text(f->module) : json_null());
	json_object_set_new(j, "symbol", f->symbol ? adac_json_text(f->symbol) : json_null());
	json_object_set_new(j, "offset", f->symbol ? json_integer((json_int_t)f->offset) : json_null());
	json_object_set_new(j, "managed", json_boolean(f->managed));
	json_object_set_new(j, "file", f->file ? adac_json_text(f->file) : json_null());
	json_object_set_new(j, "line", f->file ? json_integer(f->line) : json_null());
	if (f->recovered)
		json_object_set_new(j, "unwound_by", json_string("asyncdac"));
	json_t *vars = NULL;
	if (c->locals && f->regs && adac_frame_vars_print(c->rt, f->regs, f->caller, "", NULL, &vars, NULL) == 0 && vars)
		json_object_set_new(j, "locals", vars);
	json_array_append_new(c->json, j);
	c->last = j;
	return 0;
}

static void error_json(void *ctx, const struct adac_error *err)
{
	struct frames *c = ctx;
	if (c->last)
		json_object_set_new(c->last, "unwind_error", adac_json_text(err->msg));
}

/* ---- threads ---- */

/* The chains th runs, as dispatcher records give them; *n = 0 for a thread that is not managed. */
static int thread_chains(struct adac_runtime *rt, const struct adac_thread *th, struct adac_thread_chain *chains,
                         size_t *n, struct adac_error *err)
{
	struct adac_managed_thread mth;
	*n = 0;
	if (adac_managed_thread_of(rt, th->tid, &mth, NULL))
		return 0;
	return adac_thread_chains(rt, &mth, chains, n, err);
}

/* The exception worth showing on th's line: the one the runtime marked unhandled, or on a thread that
 * crashed (FailFast keeps no exception of its own, its argument was thrown last). 0 when none or
 * unreadable. */
static uint64_t thread_exception(struct adac_runtime *rt, const struct adac_thread *th, bool *unhandled)
{
	struct adac_managed_thread mth;
	uint64_t obj = 0;
	*unhandled = false;
	if (adac_managed_thread_of(rt, th->tid, &mth, NULL) || adac_thread_last_thrown(rt, &mth, &obj, unhandled, NULL))
		return 0;
	return *unhandled || adac_thread_crashed(th) ? obj : 0;
}

size_t adac_bt_thread_print(struct adac_runtime *rt, const struct adac_thread *th, bool selected,
                            const struct adac_bt_opts *o, struct adac_out *out)
{
	adac_print(out, "%c thread #%u", selected ? '*' : ' ', th->index);
	if (th->name[0])
		adac_print(out, ", name = '%s'", th->name);
	adac_print(out, ", tid = %llu", (unsigned long long)th->tid);
	if (th->stop_reason[0])
		adac_print(out, ", stop reason = %s", th->stop_reason);
	adac_print(out, "\n");
	bool unhandled;
	uint64_t exc = thread_exception(rt, th, &unhandled);
	if (exc) {
		struct adac_sig_text text = {0};
		struct adac_error e = {0};
		if (adac_exception_summary(rt, exc, &text, &e) == 0)
			adac_print(out, "  exception: %s (%s)\n", adac_sig_text_str(&text), unhandled ? "unhandled" : "last thrown");
		adac_sig_text_free(&text);
	}
	struct frames c = {.rt = rt, .locals = o->flags & ADAC_VIEW_LOCALS, .out = out, .count = o->count};
	struct adac_stack_visitor v = {frame_text, error_text, &c};
	struct adac_error err = {0};
	if (adac_thread_stack_walk(rt, th->tid, &v, &err) && err.code != ADAC_E_UNSUPPORTED)
		adac_print(out, "  frame #%u: error: %s\n", c.n, err.msg);
	if (c.truncated)
		adac_print(out, "  (shown max number of frames (%zu), use -c 0 for all)\n", o->count);
	if (c.blocks && o->blocked)
		o->blocked(o->blocked_ctx, th, out);
	if (c.waits_lock && o->waits_lock)
		o->waits_lock(o->waits_lock_ctx, th, out);

	struct adac_thread_chain chains[ADAC_MAX_DISPATCHERS];
	size_t n;
	adac_error_clear(&err);
	if (thread_chains(rt, th, chains, &n, &err))
		adac_print(out, "  async: error: %s\n", err.msg);
	size_t index = 0;
	for (size_t i = 0; i < n; i++) {
		struct adac_resolved_chain cv;
		adac_error_clear(&err);
		if (adac_resolved_chain_build(rt, chains[i].head, o->depth, NULL, &cv, &err)) {
			adac_print(out, "  async #%zu: error: %s\n", index, err.msg);
			continue;
		}
		cv.task = chains[i].task;
		index += adac_chain_view_print(rt, &cv, out, index, o->count, o->flags);
		adac_resolved_chain_free(&cv);
	}
	return n;
}

json_t *adac_bt_thread_json(struct adac_runtime *rt, const struct adac_thread *th, const struct adac_bt_opts *o)
{
	json_t *tj = json_object(), *chains_json = json_array();
	json_object_set_new(tj, "index", json_integer(th->index));
	json_object_set_new(tj, "tid", json_integer((json_int_t)th->tid));
	json_object_set_new(tj, "name", adac_json_text(th->name));
	if (th->stop_reason[0])
		json_object_set_new(tj, "stop_reason", adac_json_text(th->stop_reason));
	bool unhandled;
	uint64_t exc = thread_exception(rt, th, &unhandled);
	if (exc) {
		json_t *ej = adac_exception_summary_json(rt, exc);
		json_object_set_new(ej, "unhandled", json_boolean(unhandled));
		json_object_set_new(tj, "exception", ej);
	}
	struct frames c = {.rt = rt, .locals = o->flags & ADAC_VIEW_LOCALS, .json = json_array(), .count = o->count};
	struct adac_stack_visitor v = {frame_json, error_json, &c};
	struct adac_error err = {0};
	adac_thread_stack_walk(rt, th->tid, &v, &err);

	struct adac_thread_chain chains[ADAC_MAX_DISPATCHERS];
	size_t n;
	adac_error_clear(&err);
	if (thread_chains(rt, th, chains, &n, &err))
		json_object_set_new(tj, "error", adac_json_text(err.msg));
	for (size_t i = 0; i < n; i++) {
		struct adac_resolved_chain cv;
		adac_error_clear(&err);
		if (adac_resolved_chain_build(rt, chains[i].head, o->depth, NULL, &cv, &err))
			continue;
		cv.task = chains[i].task;
		json_t *cj = adac_chain_view_json(rt, &cv, o->count, o->flags);
		json_object_set_new(cj, "dispatcher", adac_json_addr(chains[i].dispatcher));
		json_array_append_new(chains_json, cj);
		adac_resolved_chain_free(&cv);
	}
	json_object_set_new(tj, "frames", c.json);
	json_object_set_new(tj, "chains", chains_json);
	return tj;
}

void adac_bt_chain_print(struct adac_runtime *rt, const struct adac_resolved_chain *v, uint64_t head,
                         const struct adac_bt_opts *o, struct adac_out *out)
{
	adac_print(out, "async chain of ");
	if (v->task) {
		uint64_t mt;
		const char *type = adac_object_mt(rt, v->task, &mt, NULL) == 0 ? adac_type_name(rt, mt, 0, NULL) : NULL;
		adac_print(out, "task 0x%016llx (%s), ", (unsigned long long)v->task, type ? type : "?");
	}
	adac_print(out, "Continuation 0x%016llx\n", (unsigned long long)head);
	adac_chain_view_print(rt, v, out, 0, o->count, o->flags);
}

/* ---- frame numbers ---- */

/* Frame `want` among the shown frames of the chain at head; *seen counts the frames passed. */
static int pick_in_chain(struct adac_runtime *rt, uint64_t head, uint64_t want, uint64_t *seen,
                         struct adac_async_frame *out, bool *found, struct adac_error *err)
{
	struct adac_resolved_chain v;
	if (adac_resolved_chain_build(rt, head, 0, NULL, &v, err))
		return -1;
	for (size_t i = 0; i < v.chain.count && !*found; i++) {
		if (!adac_async_frame_shown(&v.frames[i]))
			continue;
		if (*seen == want) {
			*out = v.frames[i];
			if (v.frames[i].method == v.frames[i].name_buf)
				out->method = out->name_buf; /* a name kept in the frame itself */
			*found = true;
		}
		(*seen)++;
	}
	adac_resolved_chain_free(&v);
	return 0;
}

int adac_bt_chain_frame(struct adac_runtime *rt, uint64_t head, uint64_t n, struct adac_async_frame *f,
                        struct adac_error *err)
{
	uint64_t seen = 0;
	bool found = false;
	if (pick_in_chain(rt, head, n, &seen, f, &found, err))
		return -1;
	if (!found)
		return adac_fail(err, ADAC_E_BAD_ARG, head, "the chain of 0x%llx has %llu async frame%s: there is no frame #%llu",
		                 (unsigned long long)head, (unsigned long long)seen, seen == 1 ? "" : "s", (unsigned long long)n);
	return 0;
}

int adac_bt_thread_frame(struct adac_runtime *rt, uint64_t tid, uint64_t n, struct adac_async_frame *f, uint64_t *head,
                         struct adac_error *err)
{
	struct adac_managed_thread mth;
	struct adac_thread_chain chains[ADAC_MAX_DISPATCHERS];
	size_t nchains;
	if (adac_managed_thread_of(rt, tid, &mth, err) || adac_thread_chains(rt, &mth, chains, &nchains, err))
		return -1;
	uint64_t seen = 0;
	bool found = false;
	for (size_t i = 0; i < nchains && !found; i++) {
		if (pick_in_chain(rt, chains[i].head, n, &seen, f, &found, err))
			return -1;
		if (found)
			*head = chains[i].head;
	}
	if (!found)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "thread %llu has %llu async frame%s: there is no frame #%llu",
		                 (unsigned long long)tid, (unsigned long long)seen, seen == 1 ? "" : "s", (unsigned long long)n);
	return 0;
}
