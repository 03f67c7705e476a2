/* fuzz_json.c - the JSON printers (base/json.h) against jansson's own dump: any JSON document jansson
 * parses from the input (NUL in strings allowed) is printed by adac_json_print, and at an indent by
 * adac_json_print_indented and adac_json_print_members; each must be the bytes json_dumps writes
 * with JSON_INDENT(2), re-indented as the printers place it. And the input as text: adac_utf8_seq
 * must find it UTF-8 exactly when jansson does (json_stringn), and adac_line_utf8's repair of it
 * must be UTF-8 to jansson, the same bytes when it was already. A difference traps. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/line.h"
#include "base/output.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct text {
	char *p;
	size_t n, cap;
	int nomem;
};

static void text_write(void *ctx, const char *s, size_t len)
{
	struct text *t = ctx;
	if (t->nomem)
		return;
	if (t->n + len + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (t->n + len + 1 > cap)
			cap *= 2;
		char *p = realloc(t->p, cap);
		if (!p) {
			t->nomem = 1;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->n, s, len);
	t->n += len;
	t->p[t->n] = '\0';
}

static void append(struct text *t, const char *s, size_t len) { text_write(t, s, len); }

/* json_dumps' text with every line indented by `indent`, between before and after. */
static struct text expected(const char *dumped, const char *before, unsigned indent, const char *after)
{
	static const char spaces[] = "        "; /* (indent is at most 8) */
	struct text t = {0};
	append(&t, before, strlen(before));
	append(&t, spaces, indent);
	for (const char *p = dumped; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		append(&t, p, n);
		if (nl)
			append(&t, spaces, indent);
		p += n;
	}
	append(&t, after, strlen(after));
	return t;
}

static void same(const struct text *got, const struct text *want)
{
	if (got->nomem || want->nomem)
		return;
	if (got->n != want->n || (got->n && memcmp(got->p, want->p, got->n) != 0))
		__builtin_trap();
}

/* The input as text (see the top). */
static void check_utf8(const char *s, size_t n)
{
	int valid = 1;
	for (size_t i = 0, len; i < n && valid; i += len)
		valid = (len = adac_utf8_seq(s + i, n - i)) != 0;
	json_t *j = json_stringn(s, n);
	if (j ? !valid : valid)
		__builtin_trap();
	json_decref(j);
	struct adac_line b = {0};
	adac_line_utf8(&b, s, n);
	if (!b.nomem) {
		json_t *r = json_stringn(b.p ? b.p : "", b.len);
		if (!r || (valid && (b.len != n || (n && memcmp(b.p, s, n) != 0))))
			__builtin_trap();
		json_decref(r);
	}
	adac_line_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_utf8((const char *)data, size);
	json_error_t je;
	json_t *v = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &je);
	if (!v)
		return 0;
	char *dumped = json_dumps(v, JSON_INDENT(2));
	struct adac_error err = {0};
	if (dumped) {
		unsigned indent = size ? data[0] % 9u : 0; /* (at most 8) */
		struct text got = {0}, want = expected(dumped, "", 0, "\n");
		struct adac_out out = {.write = text_write, .ctx = &got};
		if (adac_json_print(&out, json_incref(v), &err) == 0)
			same(&got, &want);
		free(got.p);
		free(want.p);

		got = (struct text){0};
		want = expected(dumped, ",\n", indent, "]");
		out.ctx = &got;
		if (adac_json_print_indented(&out, ",\n", v, indent, "]", &err) == 0)
			same(&got, &want);
		free(got.p);
		free(want.p);

		/* The members: the lines between the braces' (nothing for an empty object). */
		if (json_is_object(v)) {
			got = (struct text){0};
			want = expected(dumped, "", indent, "");
			out.ctx = &got;
			char *first = want.p ? strchr(want.p, '\n') : NULL, *last = want.p ? strrchr(want.p, '\n') : NULL;
			struct text members = {0};
			if (first && last > first)
				append(&members, first, (size_t)(last - first));
			if (adac_json_print_members(&out, v, indent, &err) == 0)
				same(&got, &members);
			free(members.p);
			free(got.p);
			free(want.p);
		}
		free(dumped);
	}
	json_decref(v);
	return 0;
}
