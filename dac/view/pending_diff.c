/* pending_diff.c - `diff`: the stacks `ps` lists in two targets, compared (pending_diff.h). Each
 * stack is taken as `ps --json` describes it (view/pending_view.h), so the two front ends and the
 * JSON agree on what a stack is. */
#include "view/pending_diff.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "async/pending.h"
#include "base/json.h"
#include "base/output.h"
#include "view/pending_list.h"
#include "view/pending_view.h"

#define SHOWN_FRAMES 8u   /* text: frames shown of a stack that progressed, in A and in B */

static const char *text_of(json_t *v, const char *otherwise)
{
	return json_is_string(v) ? json_string_value(v) : otherwise;
}

/* What a frame is, as far as progress goes: its method, its await (state) and where it is. */
static json_t *frame_label(json_t *f)
{
	const char *kind = json_string_value(json_object_get(f, "kind"));
	char buf[1024];
	if (kind && strcmp(kind, "task") == 0) {
		json_t *task = json_object_get(f, "task");
		snprintf(buf, sizeof buf, "task %s [%s]", text_of(json_object_get(task, "type"), "?"),
		         text_of(json_object_get(task, "status"), "?"));
		return json_string(buf);
	}
	const char *method = json_string_value(json_object_get(f, "method"));
	const char *file = json_string_value(json_object_get(f, "file"));
	json_t *state = json_object_get(f, "state"), *il = json_object_get(f, "il_offset");
	size_t n = (size_t)snprintf(buf, sizeof buf, "%s", method ? method : "<unknown method>");
	if (file && n < sizeof buf) {
		const char *base = strrchr(file, '/');
		n += (size_t)snprintf(buf + n, sizeof buf - n, " at %s:%lld", base ? base + 1 : file,
		                      (long long)json_integer_value(json_object_get(f, "line")));
	} else if (json_is_integer(il) && n < sizeof buf) {
		n += (size_t)snprintf(buf + n, sizeof buf - n, " [IL_%04llx]", (unsigned long long)json_integer_value(il));
	}
	if (n < sizeof buf) {
		const char *classic = kind && strcmp(kind, "classic") == 0 ? "classic, " : "";
		if (json_is_integer(state))
			snprintf(buf + n, sizeof buf - n, " [%sstate %lld]", classic, (long long)json_integer_value(state));
		else if (*classic)
			snprintf(buf + n, sizeof buf - n, " [classic]");
	}
	return json_string(buf);
}

/* A stack as the diff keeps it: {"key", "task", "type", "status", "frames": [label...]}. The key is
 * the owning task's address, else the innermost Continuation's (a stack no task owns). */
static json_t *stack_entry(json_t *st)
{
	json_t *task = json_object_get(st, "task");
	json_t *key = json_object_get(task, "address");
	if (!json_is_string(key))
		key = json_object_get(json_array_get(json_object_get(st, "segments"), 0), "head");
	json_t *e = json_object(), *frames = json_array();
	json_object_set(e, "key", json_is_string(key) ? key : json_null());
	json_object_set(e, "type", json_is_object(task) ? json_object_get(task, "type") : json_null());
	json_object_set(e, "status", json_is_object(task) ? json_object_get(task, "status") : json_null());
	json_object_set_new(e, "running", json_boolean(json_is_object(json_object_get(st, "running"))));
	size_t i;
	json_t *f;
	json_array_foreach(json_object_get(st, "frames"), i, f)
		json_array_append_new(frames, frame_label(f));
	json_object_set_new(e, "frames", frames);
	return e;
}

/* The stacks of a target: key -> entry. */
static int collect(struct adac_runtime *rt, struct adac_out *out, json_t *by_key, struct adac_error *err)
{
	struct adac_pending p;
	struct adac_pending_list l = {0};
	struct adac_pending_filter all = {0};
	if (adac_pending_collect(rt, out, ADAC_SCAN_MAY_RUN, &p, err)) /* (the first use of rt) */
		return -1;
	int rc = adac_pending_list_init(&l, &p, &all, out, err), more = 0;
	struct adac_pending_stack st;
	while (rc == 0 && (more = adac_pending_list_next(&l, &st, err)) > 0) {
		json_t *j = adac_pending_stack_json(&l, &st, 0);
		json_t *e = stack_entry(j);
		json_decref(j);
		const char *key = json_string_value(json_object_get(e, "key"));
		if (key)
			json_object_set_new(by_key, key, e);
		else
			json_decref(e);
	}
	if (rc == 0 && more < 0)
		rc = -1;
	if (rc == 0)
		rc = adac_pending_heap_complete(&p, err);
	adac_pending_list_free(&l);
	adac_pending_free(&p);
	return rc;
}

static void print_frames(struct adac_out *out, const char *tag, json_t *frames)
{
	size_t n = json_array_size(frames);
	for (size_t i = 0; i < n && i < SHOWN_FRAMES; i++)
		adac_print(out, "    %s %s\n", i ? " " : tag, json_string_value(json_array_get(frames, i)));
	if (n > SHOWN_FRAMES)
		adac_print(out, "       ... %zu more frame%s\n", n - SHOWN_FRAMES, n - SHOWN_FRAMES == 1 ? "" : "s");
	if (!n)
		adac_print(out, "    %s (no frames)\n", tag);
}

static void print_stack_head(struct adac_out *out, json_t *e, json_t *before)
{
	const char *status = json_string_value(json_object_get(e, "status"));
	const char *was = before ? json_string_value(json_object_get(before, "status")) : NULL;
	bool task = json_is_string(json_object_get(e, "type"));
	adac_print(out, "  %s %s %s", task ? "task" : "chain", text_of(json_object_get(e, "key"), "?"),
	           text_of(json_object_get(e, "type"), "(no task)"));
	if (was && status && strcmp(was, status) != 0)
		adac_print(out, " [%s -> %s]", was, status);
	else if (status)
		adac_print(out, " [%s]", status);
	adac_print(out, "%s\n", json_is_true(json_object_get(e, "running")) ? " (running)" : "");
}

static void print_list(struct adac_out *out, const char *title, json_t *list)
{
	if (!json_array_size(list))
		return;
	adac_print(out, "\n%s:\n", title);
	size_t i;
	json_t *e;
	json_array_foreach(list, i, e) {
		print_stack_head(out, e, NULL);
		json_t *frames = json_object_get(e, "frames");
		adac_print(out, "    %s\n", json_array_size(frames) ? json_string_value(json_array_get(frames, 0)) : "(no frames)");
	}
}

int adac_pending_diff_print(struct adac_runtime *a, struct adac_runtime *b, bool all, bool json, struct adac_out *out,
                            struct adac_error *err)
{
	json_t *in_a = json_object(), *in_b = json_object();
	json_t *progressed = json_array(), *fresh = json_array(), *finished = json_array(), *unchanged = json_array();
	int rc = -1;
	if (!in_a || !in_b || !progressed || !fresh || !finished || !unchanged) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		goto done;
	}
	if (collect(a, out, in_a, err)) {
		adac_error_wrap(err, "A: ");
		goto done;
	}
	if (collect(b, out, in_b, err)) {
		adac_error_wrap(err, "B: ");
		goto done;
	}
	const char *key;
	json_t *ea, *eb;
	json_object_foreach(in_a, key, ea) {
		eb = json_object_get(in_b, key);
		if (!eb) {
			json_array_append(finished, ea);
		} else if (json_equal(json_object_get(ea, "frames"), json_object_get(eb, "frames"))) {
			json_array_append(unchanged, eb);
		} else {
			json_t *p = json_object();
			json_object_set(p, "key", json_object_get(eb, "key"));
			json_object_set(p, "type", json_object_get(eb, "type"));
			json_object_set(p, "status_a", json_object_get(ea, "status"));
			json_object_set(p, "status_b", json_object_get(eb, "status"));
			json_object_set(p, "frames_a", json_object_get(ea, "frames"));
			json_object_set(p, "frames_b", json_object_get(eb, "frames"));
			json_array_append_new(progressed, p);
		}
	}
	json_object_foreach(in_b, key, eb)
		if (!json_object_get(in_a, key))
			json_array_append(fresh, eb);
	if (json) {
		json_t *d = json_object();
		json_object_set_new(d, "stacks_a", json_integer((json_int_t)json_object_size(in_a)));
		json_object_set_new(d, "stacks_b", json_integer((json_int_t)json_object_size(in_b)));
		json_object_set(d, "progressed", progressed);
		json_object_set(d, "new", fresh);
		json_object_set(d, "finished", finished);
		json_object_set(d, "unchanged", unchanged);
		rc = adac_json_print_document(out, "diff", d, err);
		goto done;
	}
	adac_print(out, "A has %zu pending stack%s, B %zu: %zu progressed, %zu new, %zu finished, %zu unchanged.\n",
	           json_object_size(in_a), json_object_size(in_a) == 1 ? "" : "s", json_object_size(in_b),
	           json_array_size(progressed), json_array_size(fresh), json_array_size(finished),
	           json_array_size(unchanged));
	if (json_array_size(progressed)) {
		adac_print(out, "\nProgressed (a frame or its await state changed):\n");
		size_t i;
		json_t *p;
		json_array_foreach(progressed, i, p) {
			json_t *before = json_pack("{s:O}", "status", json_object_get(p, "status_a"));
			json_t *now = json_pack("{s:O, s:O, s:O, s:b}", "key", json_object_get(p, "key"), "type",
			                        json_object_get(p, "type"), "status", json_object_get(p, "status_b"), "running", 0);
			print_stack_head(out, now, before);
			json_decref(before);
			json_decref(now);
			print_frames(out, "A:", json_object_get(p, "frames_a"));
			print_frames(out, "B:", json_object_get(p, "frames_b"));
		}
	}
	print_list(out, "New (in B only)", fresh);
	print_list(out, "Finished (in A only)", finished);
	if (all)
		print_list(out, "Unchanged", unchanged);
	rc = 0;
done:
	json_decref(in_a);
	json_decref(in_b);
	json_decref(progressed);
	json_decref(fresh);
	json_decref(finished);
	json_decref(unchanged);
	return rc;
}
