/* test_json.c - base/json (addresses as JSON strings, printing) and the sink's progress reports. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
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

int main(void)
{
	test_addr();
	test_print();
	test_print_indented();
	test_progress();
	return check_report("test_json");
}
