/* json.c - JSON addresses and printing. */
#include "base/json.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/line.h"
#include "base/output.h"

json_t *adac_json_addr(uint64_t v)
{
	char buf[19]; /* (the line keeps a byte spare: 18 never grow it) */
	struct adac_line b = adac_line_on(buf, sizeof buf);
	adac_line_addr(&b, v);
	return json_stringn_nocheck(buf, b.len);
}

/* ---- values made in a scratch arena ---- */

static _Thread_local struct adac_arena *scratch;

static void *json_alloc(size_t n) { return scratch ? adac_arena_alloc(scratch, n) : malloc(n); }

static void json_release(void *p)
{
	if (!scratch || !adac_arena_owns(scratch, p))
		free(p);
}

static void set_alloc(void) { json_set_alloc_funcs(json_alloc, json_release); }

void adac_json_scratch_setup(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, set_alloc);
}

void adac_json_scratch_begin(struct adac_arena *a) { scratch = a; }

void adac_json_scratch_end(void)
{
	adac_arena_reset(scratch);
	scratch = NULL;
}

/* ---- text: jansson's JSON_INDENT(2) layout, written straight into a line ----
 *
 * json_dumps spent most of a million-stack `ps --json` (30 us a stack, a loop check per container
 * among them); this writes the same bytes (tests/unit/test_json.c and fuzz_json compare them with
 * json_dumps') a line buffer at a time, each line already indented for where the value goes. */

/* Containers nested deeper are refused (no document of ours comes near it). */
#define JSON_DEPTH_MAX 512u

static void newline(struct adac_line *b, unsigned spaces)
{
	static const char blanks[] = "                                                                ";
	adac_line_put_n(b, "\n", 1);
	for (; spaces > sizeof blanks - 1; spaces -= (unsigned)(sizeof blanks - 1))
		adac_line_put_n(b, blanks, sizeof blanks - 1);
	adac_line_put_n(b, blanks, spaces);
}

/* A real as jansson writes it: %.17g, with ".0" when that reads as an integer, and the exponent
 * without '+' or leading zeros. */
static void put_real(struct adac_line *b, double v)
{
	char buf[40];
	int n = snprintf(buf, sizeof buf - 2, "%.17g", v);
	if (n <= 0 || (size_t)n >= sizeof buf - 2)
		return;
	size_t len = (size_t)n;
	if (!strchr(buf, '.') && !strchr(buf, 'e')) {
		memcpy(buf + len, ".0", 3);
		len += 2;
	}
	char *e = strchr(buf, 'e');
	if (e) {
		char *from = e + 1, *to = e + 1;
		if (*from == '-')
			from = to = e + 2;
		else if (*from == '+')
			from++;
		while (*from == '0' && from[1])
			from++;
		memmove(to, from, strlen(from) + 1);
		len = strlen(buf);
	}
	adac_line_put_n(b, buf, len);
}

/* value at nesting depth (its members' lines indented by base + 2 * (depth + 1)). -1 when it is
 * nested deeper than JSON_DEPTH_MAX (jansson makes no real that is not finite). */
static int put_value(struct adac_line *b, const json_t *v, unsigned base, unsigned depth)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		void *it = json_object_iter((json_t *)v);
		if (!it) {
			adac_line_put_n(b, "{}", 2);
			return 0;
		}
		if (depth >= JSON_DEPTH_MAX)
			return -1;
		adac_line_put_n(b, "{", 1);
		for (; it; it = json_object_iter_next((json_t *)v, it)) {
			newline(b, base + 2 * (depth + 1));
			adac_line_json_strn(b, json_object_iter_key(it), json_object_iter_key_len(it));
			adac_line_put_n(b, ": ", 2);
			if (put_value(b, json_object_iter_value(it), base, depth + 1))
				return -1;
			if (json_object_iter_next((json_t *)v, it))
				adac_line_put_n(b, ",", 1);
		}
		newline(b, base + 2 * depth);
		adac_line_put_n(b, "}", 1);
		return 0;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(v);
		if (!n) {
			adac_line_put_n(b, "[]", 2);
			return 0;
		}
		if (depth >= JSON_DEPTH_MAX)
			return -1;
		adac_line_put_n(b, "[", 1);
		for (size_t i = 0; i < n; i++) {
			newline(b, base + 2 * (depth + 1));
			if (put_value(b, json_array_get(v, i), base, depth + 1))
				return -1;
			if (i + 1 < n)
				adac_line_put_n(b, ",", 1);
		}
		newline(b, base + 2 * depth);
		adac_line_put_n(b, "]", 1);
		return 0;
	}
	case JSON_STRING:
		adac_line_json_strn(b, json_string_value(v), json_string_length(v));
		return 0;
	case JSON_INTEGER:
		adac_line_i64(b, (int64_t)json_integer_value(v));
		return 0;
	case JSON_REAL:
		put_real(b, json_real_value(v));
		return 0;
	case JSON_TRUE:
		adac_line_put_n(b, "true", 4);
		return 0;
	case JSON_FALSE:
		adac_line_put_n(b, "false", 5);
		return 0;
	case JSON_NULL:
		adac_line_put_n(b, "null", 4);
		return 0;
	}
	return -1;
}

/* before, value (an object or an array, as json_dumps takes) laid out as JSON_INDENT(2) with every
 * line indented by `indent` more, then after: into b. */
static int format(struct adac_line *b, const char *before, const json_t *value, unsigned indent, const char *after,
                  struct adac_error *err)
{
	if (!value)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	if (!json_is_object(value) && !json_is_array(value))
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "only an object or an array is a JSON document");
	adac_line_put(b, before);
	for (unsigned i = 0; i < indent; i++)
		adac_line_put_n(b, " ", 1);
	if (put_value(b, value, indent, 0))
		return adac_fail(err, ADAC_E_LIMIT, 0, "JSON nested more than %u deep", JSON_DEPTH_MAX);
	adac_line_put(b, after);
	if (b->nomem)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	return 0;
}

/* Writes what b holds to out, then frees it: 0, or rc (with err set) when formatting failed. */
static int emit(struct adac_line *b, int rc, struct adac_out *out)
{
	if (rc == 0)
		adac_line_write(b, out);
	adac_line_free(b);
	return rc;
}

json_t *adac_json_text(const char *s)
{
	if (!s)
		return NULL;
	json_t *v = json_string(s);
	if (v)
		return v;
	/* Not UTF-8 (or out of memory): each byte that starts no UTF-8 sequence as U+FFFD. */
	struct adac_line b = {0};
	adac_line_utf8(&b, s, strlen(s));
	v = b.nomem ? NULL : json_stringn(b.p ? b.p : "", b.len);
	adac_line_free(&b);
	return v;
}

/* Most values fit: no malloc (ps --json formats a million stacks of a few KB). */
#define TEXT_ON_STACK 16384u

int adac_json_print(struct adac_out *out, json_t *value, struct adac_error *err)
{
	char buf[TEXT_ON_STACK];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	int rc = format(&b, "", value, 0, "\n", err);
	json_decref(value);
	return emit(&b, rc, out);
}

int adac_json_print_document(struct adac_out *out, const char *command, json_t *payload, struct adac_error *err)
{
	json_t *doc = payload ? json_object() : NULL;
	if (doc) {
		json_object_set_new(doc, "schema", json_integer(ADAC_JSON_SCHEMA));
		json_object_set_new(doc, command, payload);
	} else {
		json_decref(payload);
	}
	return adac_json_print(out, doc, err);
}

void adac_json_document_open(struct adac_out *out, const char *command)
{
	adac_print(out, "{\n  \"schema\": %d,\n  \"%s\": ", ADAC_JSON_SCHEMA, command);
}

int adac_json_document_close(struct adac_out *out, json_t *rest, struct adac_error *err)
{
	if (json_object_size(rest))
		adac_print(out, ",");
	int rc = rest ? adac_json_print_members(out, rest, 2, err) : 0;
	json_decref(rest);
	if (rc == 0)
		adac_print(out, "\n  }\n}\n");
	return rc;
}

int adac_json_print_indented(struct adac_out *out, const char *before, json_t *value, unsigned indent,
                             const char *after, struct adac_error *err)
{
	char buf[TEXT_ON_STACK];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	return emit(&b, format(&b, before, value, indent, after, err), out);
}

int adac_json_print_members(struct adac_out *out, json_t *value, unsigned indent, struct adac_error *err)
{
	char buf[TEXT_ON_STACK];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	int rc = format(&b, "", value, indent, "", err);
	if (rc == 0) {
		/* "{\n  a,\n  b\n}": from the first line's end to the last line's start. */
		const char *first = memchr(b.p, '\n', b.len);
		size_t from = first ? (size_t)(first - b.p) : b.len, to = b.len;
		while (to > from && b.p[to - 1] != '\n')
			to--;
		if (to > from)
			to--; /* (the last line's newline goes with it) */
		if (to > from)
			out->write(out->ctx, b.p + from, to - from);
	}
	adac_line_free(&b);
	return rc;
}
