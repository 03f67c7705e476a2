/* fuzz_json.c - the JSON printers (base/json.h) against jansson's own dump: any JSON document jansson
 * parses from the input (NUL in strings allowed) is printed by adac_json_print, and at an indent by
 * adac_json_print_indented and adac_json_print_members; each must be the bytes json_dumps writes
 * with JSON_INDENT(2), re-indented as the printers place it. And the input as text: adac_utf8_seq
 * must find it UTF-8 exactly when jansson does (json_stringn), and adac_line_utf8's repair of it
 * must be UTF-8 to jansson, the same bytes when it was already. And the document parsed again in a
 * scratch arena (adac_json_scratch_begin, as `ps --json` makes its stacks' values) prints the same
 * bytes. A difference traps. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/json.h"
#include "base/line.h"
#include "base/output.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The printers' sink: into a line. */
static void line_write(void *ctx, const char *s, size_t len) { adac_line_put_n(ctx, s, len); }

/* json_dumps' text with every line indented by `indent`, between before and after. */
static struct adac_line expected(const char *dumped, const char *before, unsigned indent, const char *after)
{
	static const char spaces[] = "        "; /* (indent is at most 8) */
	struct adac_line t = {0};
	adac_line_put(&t, before);
	adac_line_put_n(&t, spaces, indent);
	for (const char *p = dumped; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
		adac_line_put_n(&t, p, n);
		if (nl)
			adac_line_put_n(&t, spaces, indent);
		p += n;
	}
	adac_line_put(&t, after);
	return t;
}

static void same(const struct adac_line *got, const char *want, size_t want_len)
{
	if (!got->nomem && (got->len != want_len || (want_len && memcmp(got->p, want, want_len) != 0)))
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
		struct adac_line got = {0}, want = expected(dumped, "", 0, "\n");
		struct adac_out out = {.write = line_write, .ctx = &got};
		if (!want.nomem && adac_json_print(&out, json_incref(v), &err) == 0)
			same(&got, want.p, want.len);
		adac_line_free(&got);
		adac_line_free(&want);

		want = expected(dumped, ",\n", indent, "]");
		if (!want.nomem && adac_json_print_indented(&out, ",\n", v, indent, "]", &err) == 0)
			same(&got, want.p, want.len);
		adac_line_free(&got);
		adac_line_free(&want);

		/* The members: the lines between the braces' (nothing for an empty object): from the
		 * first newline up to the last. */
		if (json_is_object(v)) {
			want = expected(dumped, "", indent, "");
			const char *first = want.len ? memchr(want.p, '\n', want.len) : NULL;
			size_t last = want.len;
			while (last > 0 && want.p[last - 1] != '\n')
				last--;
			size_t from = first ? (size_t)(first - want.p) : 0, to = first && last - 1 > from ? last - 1 : from;
			if (!want.nomem && adac_json_print_members(&out, v, indent, &err) == 0)
				same(&got, want.p + from, to - from);
			adac_line_free(&got);
			adac_line_free(&want);
		}
		/* Parsed, printed and released in a scratch arena (twice: the second time on reused blocks). */
		static struct adac_arena scratch;
		adac_json_scratch_setup();
		for (int round = 0; round < 2; round++) {
			adac_json_scratch_begin(&scratch);
			json_t *s = json_loadb((const char *)data, size, JSON_ALLOW_NUL, &je);
			want = expected(dumped, "", indent, "\n");
			if (s && !want.nomem && adac_json_print_indented(&out, "", s, indent, "\n", &err) == 0)
				same(&got, want.p, want.len);
			json_decref(s);
			adac_json_scratch_end();
			adac_line_free(&got);
			adac_line_free(&want);
		}
		free(dumped);
	}
	json_decref(v);
	return 0;
}
