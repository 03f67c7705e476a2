/* test_descriptor.c - contract descriptor parsing (data cases) and loading (memory target). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "asyncdac.h"
#include "runtime/descriptor.h"
#include "target/target_mem.h"
#include "view/runtime_view.h"
#include "testutil.h"

static const char *code_name(enum adac_errcode c)
{
	static const char *const names[] = {
#define X(name, text) #name,
		ADAC_ERRORS(X)
#undef X
	};
	return names[c];
}

/* One directory of tests/data/descriptor: input, optional pointers, expected. */
static void run_case(const char *dir, const char *name)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/%s/input", dir, name);
	size_t len;
	char *json = slurp(path, &len);
	CHECK(json != NULL);
	if (!json)
		return;
	uint64_t pdata[1024];
	size_t np = 0;
	snprintf(path, sizeof path, "%s/%s/pointers", dir, name);
	char *ptrs = slurp(path, NULL);
	for (char *tok = ptrs ? strtok(ptrs, " \n") : NULL; tok && np < 1024; tok = strtok(NULL, " \n"))
		pdata[np++] = strtoull(tok, NULL, 0);
	free(ptrs);

	struct adac_descriptor *d = adac_desc_new();
	struct adac_error err = {0};
	struct buf got = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &got};
	if (adac_desc_parse_json(d, json, len, pdata, np, &err) == 0)
		adac_desc_dump(d, &out);
	else
		adac_print(&out, "error %s: %s\n", code_name(err.code), err.msg);
	snprintf(path, sizeof path, "%s/%s/expected", dir, name);
	char *want = slurp(path, NULL);
	if (!want || strcmp(want, got.p) != 0) {
		fprintf(stderr, "case %s: dump differs\n--- expected\n%s--- got\n%s", name, want ? want : "(missing)\n", got.p);
		check_failures++;
	}
	free(want);
	free(got.p);
	free(json);
	adac_desc_free(d);
}

static void run_cases(const char *dir)
{
	DIR *dp = opendir(dir);
	CHECK(dp != NULL);
	if (!dp)
		return;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, "README.md") == 0)
			continue;
		run_case(dir, e->d_name);
		n++;
	}
	closedir(dp);
	CHECK(n >= 10);
}

/* A descriptor struct as the runtime lays it out (64-bit). */
static void put_descriptor(struct adac_memimg *img, uint64_t at, const char *json, uint64_t json_at, uint64_t pdata_at,
                           const uint64_t *pdata, uint32_t np, uint32_t flags)
{
	uint8_t hdr[40] = {0};
	memcpy(hdr, "DNCCDAC", 8);
	uint32_t size = (uint32_t)strlen(json) + 1; /* the runtime counts the NUL */
	memcpy(hdr + 8, &flags, 4);
	memcpy(hdr + 12, &size, 4);
	memcpy(hdr + 16, &json_at, 8);
	memcpy(hdr + 24, &np, 4);
	memcpy(hdr + 32, &pdata_at, 8);
	adac_memimg_add(img, at, hdr, sizeof hdr);
	adac_memimg_add(img, json_at, json, size);
	adac_memimg_add(img, pdata_at, pdata, np * sizeof *pdata);
}

static const char main_json[] = "{\"version\":2,\"baseline\":\"empty\",\"types\":{\"Object\":{\"!\":8,\"m_pMethTab\":0}},"
                                "\"globals\":{\"P\":[[1],\"pointer\"],\"RuntimeProductVersionString\":[\"9.9.9\",\"string\"]},"
                                "\"subDescriptors\":{\"GC\":[[2],\"pointer\"],\"Absent\":[[3],\"pointer\"]},"
                                "\"contracts\":{\"Object\":\"c1\"}}";
static const char gc_json[] = "{\"version\":2,\"types\":{\"Heap\":{\"!\":16,\"Gen\":8}},\"globals\":{\"Count\":\"0x5\"},"
                              "\"contracts\":{\"GC\":\"c1\"}}";

static struct adac_memimg *make_image(const char *gc, uint32_t main_flags, const char *magic_override)
{
	struct adac_memimg *img = adac_memimg_new();
	uint64_t gc_ptr_var = 0x5000, gc_desc = 0x6000, absent_var = 0x5008, zero = 0;
	uint64_t pmain[] = {0, 0xdead0000, gc_ptr_var, absent_var};
	put_descriptor(img, 0x1000, main_json, 0x2000, 0x3000, pmain, 4, main_flags);
	uint64_t pgc[] = {0};
	put_descriptor(img, gc_desc, gc, 0x7000, 0x8000, pgc, 1, 1);
	adac_memimg_add(img, gc_ptr_var, &gc_desc, 8);
	adac_memimg_add(img, absent_var, &zero, 8);
	if (magic_override)
		adac_memimg_add(img, 0x1000, magic_override, 8);
	return img;
}

static struct adac_target *make_target(const char *gc, uint32_t main_flags, const char *magic_override)
{
	struct adac_error err = {0};
	return adac_target_open_memory(make_image(gc, main_flags, magic_override), &err);
}

static void test_load(void)
{
	struct adac_target *t = make_target(gc_json, 1, NULL);
	struct adac_descriptor *d = adac_desc_new();
	struct adac_error err = {0};
	CHECK(adac_desc_load(t, 0x1000, d, &err) == 0);
	CHECK_EQ_STR(adac_desc_version(d), "2");
	CHECK_EQ_U64(adac_desc_ptr_size(d), 8);
	CHECK_EQ_U64(adac_desc_blob_count(d), 2); /* the "Absent" sub-descriptor points to NULL: skipped */
	CHECK_EQ_STR(adac_desc_blob(d, 1)->name, "GC");
	CHECK_EQ_U64(adac_desc_type_count(d), 2);
	CHECK_EQ_U64(adac_desc_global_count(d), 3);
	CHECK_EQ_STR(adac_desc_contract(d, "GC"), "c1");
	uint64_t v;
	CHECK(adac_desc_global(d, "P", &v, &err) == 0);
	CHECK_EQ_U64(v, 0xdead0000);
	CHECK(adac_desc_global(d, "Count", &v, &err) == 0);
	CHECK_EQ_U64(v, 5);
	uint32_t off;
	CHECK(adac_desc_field(d, "Heap", "Gen", &off, &err) == 0);
	CHECK_EQ_U64(off, 8);

	/* Typed accessors name what is missing, and the runtime version. */
	int rc = adac_desc_field(d, "MethodDesc", "Flags", &off, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "the runtime (9.9.9) describes no type MethodDesc");
	adac_error_clear(&err);
	rc = adac_desc_field(d, "Object", "Flags", &off, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "describes no field Object.Flags");
	adac_error_clear(&err);
	rc = adac_desc_global(d, "Missing", &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "describes no global Missing");
	adac_error_clear(&err);
	rc = adac_desc_global(d, "RuntimeProductVersionString", &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "global RuntimeProductVersionString is not a number (\"9.9.9\")");

	/* Table-driven resolution: required, optional and size entries. */
	const struct adac_field_spec specs[] = {
		{"Object", NULL, 0, true},
		{"Object", "m_pMethTab", 8, true},
		{"Object", "Optional", 4, false},
	};
	uint32_t vals[3];
	uint8_t has[3];
	adac_error_clear(&err);
	CHECK(adac_desc_resolve(d, specs, 3, vals, has, &err) == 0);
	CHECK(has[0] && vals[0] == 8 && has[1] && vals[1] == 0 && !has[2]);
	const struct adac_field_spec too_wide[] = {{"Heap", "Gen", 16, true}};
	rc = adac_desc_resolve(d, too_wide, 1, vals, has, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "field Heap.Gen at offset 8 does not fit its 16-byte type");
	adac_error_clear(&err);
	const struct adac_field_spec missing[] = {{"Heap", "Nope", 4, true}};
	rc = adac_desc_resolve(d, missing, 1, vals, has, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "describes no field Heap.Nope");
	adac_desc_free(d);
	adac_target_close(t);
}

static void test_load_errors(void)
{
	struct adac_error err = {0};
	/* A name defined by both the main descriptor and a sub-descriptor. */
	struct adac_target *t = make_target("{\"version\":2,\"types\":{\"Object\":{\"!\":8}}}", 1, NULL);
	struct adac_descriptor *d = adac_desc_new();
	int rc = adac_desc_load(t, 0x1000, d, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "sub-descriptor GC: contract descriptor defines type Object twice");
	adac_desc_free(d);
	adac_target_close(t);

	adac_error_clear(&err);
	t = make_target(gc_json, 1, "DNCCDAX");
	d = adac_desc_new();
	rc = adac_desc_load(t, 0x1000, d, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "contract descriptor at 0x1000 has a bad magic");
	adac_desc_free(d);
	adac_target_close(t);

	/* Nothing mapped at the address. */
	adac_error_clear(&err);
	t = make_target(gc_json, 1, NULL);
	d = adac_desc_new();
	rc = adac_desc_load(t, 0x900000, d, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "contract descriptor: cannot read 16 bytes at 0x900000");
	adac_desc_free(d);
	adac_target_close(t);

	/* A 32-bit flag makes the sub-descriptor disagree on the pointer size. */
	adac_error_clear(&err);
	struct adac_memimg *img = adac_memimg_new();
	uint64_t p[] = {0};
	uint8_t hdr[40] = {0};
	memcpy(hdr, "DNCCDAC", 8);
	uint32_t flags = 1, size = 0x7fffffff;
	memcpy(hdr + 8, &flags, 4);
	memcpy(hdr + 12, &size, 4);
	adac_memimg_add(img, 0x1000, hdr, sizeof hdr);
	adac_memimg_add(img, 0x3000, p, 8);
	t = adac_target_open_memory(img, &err);
	d = adac_desc_new();
	rc = adac_desc_load(t, 0x1000, d, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "claims 2147483647 bytes of JSON");
	adac_desc_free(d);
	adac_target_close(t);
}

/* adac_desc_unchanged: the same bytes where the load read them (a process stopped again), or
 * anything the load read changed: a struct, a JSON text, a sub-descriptor pointer set since. */
static void test_unchanged(void)
{
	struct adac_target *t = make_target(gc_json, 1, NULL);
	struct adac_descriptor *d = adac_desc_new();
	struct adac_error err = {0};
	CHECK(adac_desc_load(t, 0x1000, d, &err) == 0);
	CHECK(adac_desc_unchanged(t, d));
	struct adac_target *same = make_target(gc_json, 1, NULL);
	CHECK(adac_desc_unchanged(same, d));
	struct adac_target *magic = make_target(gc_json, 1, "DNCCDAX");
	CHECK(!adac_desc_unchanged(magic, d));
	static const char other_gc[] = "{\"version\":2,\"types\":{\"Heap\":{\"!\":16,\"Gen\":8}},\"globals\":{\"Count\":\"0x6\"},"
	                               "\"contracts\":{\"GC\":\"c1\"}}";
	struct adac_target *json = make_target(other_gc, 1, NULL);
	CHECK(!adac_desc_unchanged(json, d));
	struct adac_memimg *img = make_image(gc_json, 1, NULL);
	uint64_t set = 0x6000;
	adac_memimg_add(img, 0x5008, &set, 8); /* the "Absent" sub-descriptor's pointer */
	struct adac_target *absent = adac_target_open_memory(img, &err);
	CHECK(!adac_desc_unchanged(absent, d));
	struct adac_target *empty = adac_target_open_memory(adac_memimg_new(), &err);
	CHECK(!adac_desc_unchanged(empty, d));
	adac_target_close(empty);
	adac_target_close(absent);
	adac_target_close(json);
	adac_target_close(magic);
	adac_target_close(same);
	adac_desc_free(d);
	adac_target_close(t);
}

int main(int argc, char **argv)
{
	run_cases(argc > 1 ? argv[1] : "tests/data/descriptor");
	test_load();
	test_load_errors();
	test_unchanged();
	return check_report("test_descriptor");
}
