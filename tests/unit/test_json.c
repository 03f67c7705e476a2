/* test_json.c - base/json (addresses as JSON strings, printing) and the sink's progress reports. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/arena.h"
#include "base/json.h"
#include "base/output.h"
#include "testutil.h"

static void test_addr(void)
{
	json_t *a = adac_json_addr(0x7f0000001000ull);
	CHECK_EQ_STR(json_string_value(a), "0x00007f0000001000");
	json_decref(a);
	a = adac_json_addr(0);
	CHECK_EQ_STR(json_string_value(a), "0x0000000000000000");
	json_decref(a);
	a = adac_json_addr(UINT64_MAX);
	CHECK_EQ_STR(json_string_value(a), "0xffffffffffffffff");
	json_decref(a);
}

static void test_print(void)
{
	struct buf got = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &got};
	struct adac_error err = {0};
	json_t *v = json_object();
	json_object_set_new(v, "a", adac_json_addr(16));
	json_object_set_new(v, "b", json_array());
	CHECK(adac_json_print(&out, v, &err) == 0);
	CHECK_EQ_STR(got.p, "{\n  \"a\": \"0x0000000000000010\",\n  \"b\": []\n}\n");
	/* NULL (a jansson constructor out of memory) is an error, not a crash. */
	CHECK_ERR(adac_json_print(&out, NULL, &err), &err, ADAC_E_NOMEM, "out of memory formatting JSON");
	free(got.p);
}

static void test_print_indented(void)
{
	struct buf got = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &got};
	struct adac_error err = {0};
	json_t *v = json_pack("{s:i, s:[i]}", "x", 1, "y", 2);
	CHECK(adac_json_print_indented(&out, ",\n", v, 4, "]", &err) == 0);
	CHECK_EQ_STR(got.p, ",\n    {\n      \"x\": 1,\n      \"y\": [\n        2\n      ]\n    }]");
	json_decref(v);
	free(got.p);
}

/* json_dumps(JSON_INDENT(2)) of v, and the same with every line indented by `indent` (as the printers
 * place a value inside a document). */
static char *jansson_text(const json_t *v, unsigned indent)
{
	char *t = json_dumps(v, JSON_INDENT(2));
	if (!t)
		return NULL;
	size_t n = strlen(t), lines = 1;
	for (size_t i = 0; i < n; i++)
		lines += t[i] == '\n';
	char *r = malloc(n + lines * indent + 1), *w = r;
	memset(w, ' ', indent);
	w += indent;
	for (size_t i = 0; i < n; i++) {
		*w++ = t[i];
		if (t[i] == '\n') {
			memset(w, ' ', indent);
			w += indent;
		}
	}
	*w = 0;
	free(t);
	return r;
}

/* The printers write what json_dumps writes, byte for byte: every kind of value, strings with
 * every escape, numbers at their limits, nesting, at several indents. */
static void test_same_as_jansson(void)
{
	json_error_t je;
	const char *docs[] = {
		"{}", "[]", "[{}, [], {\"a\": []}, [[]]]",
		"{\"s\": \"quote \\\" backslash \\\\ slash / \\b\\f\\n\\r\\t \\u0001\\u001f\\u007f \\u00e9 \\u20ac \\ud83d\\ude00 end\"}",
		"{\"nul\": \"a\\u0000b\", \"\\u0007key\\\"\": 1}",
		"[0, -1, 9223372036854775807, -9223372036854775808, true, false, null]",
		"[0.0, -0.0, 1.0, 0.5, -2.5, 1e300, 1e-300, 123456789012345678.0, 0.1, 3.14159, 1e21, 1e-7, 2.2250738585072014e-308]",
		("{\"chains\": [{\"index\": 0, \"frames\": [{\"method\": \"A.B(Int32)\", \"line\": 40, \"note\": null}], "
		 "\"segments\": []}], \"summary\": {\"x\": 1.5}}"),
	};
	for (size_t i = 0; i < sizeof docs / sizeof *docs; i++) {
		json_t *v = json_loads(docs[i], JSON_ALLOW_NUL, &je);
		CHECK(v != NULL);
		if (!v)
			continue;
		for (unsigned indent = 0; indent <= 6; indent += 3) {
			struct buf got = {calloc(1, 1), 0};
			struct adac_out out = {.write = buf_write, .ctx = &got};
			struct adac_error err = {0};
			CHECK(adac_json_print_indented(&out, "", v, indent, "", &err) == 0);
			char *want = jansson_text(v, indent);
			CHECK(want && got.n == strlen(want) && memcmp(got.p, want, got.n) == 0);
			if (!want || got.n != strlen(want) || memcmp(got.p, want, got.n))
				fprintf(stderr, "doc %zu indent %u:\n got: %s\nwant: %s\n", i, indent, got.p, want ? want : "(null)");
			free(want);
			free(got.p);
		}
		json_decref(v);
	}
	/* Nested past what any document of ours holds: refused, not a deep recursion. */
	json_t *deep = json_array(), *in = deep;
	for (int i = 0; i < 600; i++) {
		json_t *a = json_array();
		json_array_append_new(in, a);
		in = a;
	}
	json_array_append_new(in, json_integer(1));
	struct buf got = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &got};
	struct adac_error err = {0};
	CHECK_ERR(adac_json_print(&out, deep, &err), &err, ADAC_E_LIMIT, "JSON nested more than 512 deep");
	CHECK_EQ_STR(got.p, "");
	free(got.p);
}

/* Text from the target that is not UTF-8 still makes a JSON string (json_string refuses it): each byte
 * that starts no sequence becomes U+FFFD. */
static void test_text(void)
{
	json_t *v = adac_json_text("Type\xff\xfe.Name");
	CHECK_EQ_STR(v ? json_string_value(v) : "(null)", "Type\xEF\xBF\xBD\xEF\xBF\xBD.Name");
	json_decref(v);
	/* A cut sequence, an overlong '/', a surrogate, past U+10FFFF; valid ones stay. */
	v = adac_json_text("a\xc3 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	CHECK_EQ_STR(v ? json_string_value(v) : "(null)",
	             "a\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD "
	             "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD \xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	json_decref(v);
	v = adac_json_text("plain");
	CHECK_EQ_STR(v ? json_string_value(v) : "(null)", "plain");
	json_decref(v);
	CHECK(adac_json_text(NULL) == NULL);
}

struct progress_log {
	char text[512];
};

static void log_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct progress_log *l = ctx;
	size_t n = strlen(l->text);
	snprintf(l->text + n, sizeof l->text - n, "%s %llu/%llu;", phase ? phase : "(end)", (unsigned long long)done,
	         (unsigned long long)total);
}

static void test_progress(void)
{
	struct progress_log log = {""};
	struct adac_out out = {.write = buf_write, .ctx = &log, .progress = log_progress};
	adac_progress(&out, "scanning the heap", 3, 10);
	adac_progress(&out, NULL, 0, 0);
	CHECK_EQ_STR(log.text, "scanning the heap 3/10;(end) 0/0;");
	/* A sink without a progress callback ignores reports. */
	struct buf got = {calloc(1, 1), 0};
	struct adac_out quiet = {.write = buf_write, .ctx = &got};
	adac_progress(&quiet, "scanning the heap", 1, 2);
	CHECK_EQ_STR(got.p, "");
	free(got.p);
}

/* A document printed a part at a time (open, the payload's brace and members, close with the rest)
 * is the one adac_json_print_document prints; a close without rest ends it at what was printed. */
static void test_document_parts(void)
{
	struct buf whole = {calloc(1, 1), 0}, parts = {calloc(1, 1), 0};
	struct adac_out out_whole = {.write = buf_write, .ctx = &whole}, out_parts = {.write = buf_write, .ctx = &parts};
	struct adac_error err = {0};
	CHECK(adac_json_print_document(&out_whole, "cmd", json_pack("{s:i, s:[i], s:s}", "a", 1, "b", 2, "c", "x"), &err) == 0);
	adac_json_document_open(&out_parts, "cmd");
	adac_print(&out_parts, "{\n    \"a\": 1");
	CHECK(adac_json_document_close(&out_parts, json_pack("{s:[i], s:s}", "b", 2, "c", "x"), &err) == 0);
	CHECK_EQ_STR(parts.p, whole.p);
	parts.n = 0;
	parts.p[0] = '\0';
	adac_json_document_open(&out_parts, "cmd");
	adac_print(&out_parts, "{\n    \"a\": 1");
	CHECK(adac_json_document_close(&out_parts, NULL, &err) == 0);
	CHECK_EQ_STR(parts.p, "{\n  \"schema\": 1,\n  \"cmd\": {\n    \"a\": 1\n  }\n}\n");
	free(whole.p);
	free(parts.p);
}

/* Values made between scratch begin and end come from the arena and print as any other; a value
 * made before (malloc's) may be released inside (ASan: no leak, no bad free), one made inside is
 * taken back at the end, and after it values are malloc's again. */
static void test_scratch(void)
{
	adac_json_scratch_setup();
	struct adac_arena a = {0};
	json_t *before = json_pack("{s:s}", "kept", "outside");
	struct buf got = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &got};
	struct adac_error err = {0};
	for (int round = 0; round < 2; round++) {
		adac_json_scratch_begin(&a);
		json_t *v = json_pack("{s:o, s:[i, s]}", "a", adac_json_addr(16), "b", 7, "text");
		CHECK(v && adac_arena_owns(&a, v));
		if (round == 1) {
			json_decref(before); /* made outside: freed */
			before = NULL;
		}
		got.n = 0;
		CHECK(adac_json_print(&out, v, &err) == 0);
		CHECK_EQ_STR(got.p, "{\n  \"a\": \"0x0000000000000010\",\n  \"b\": [\n    7,\n    \"text\"\n  ]\n}\n");
		adac_json_scratch_end();
	}
	json_t *after = json_string("malloc's");
	CHECK(after && !adac_arena_owns(&a, after));
	json_decref(after);
	adac_arena_free(&a);
	free(got.p);
}

int main(void)
{
	test_addr();
	test_print();
	test_print_indented();
	test_same_as_jansson();
	test_text();
	test_progress();
	test_document_parts();
	test_scratch();
	return check_report("test_json");
}
