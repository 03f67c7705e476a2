/* test_debuginfo.c - DebugInfo decoding: data cases (tests/data/debuginfo), real .NET 11 blobs
 * cross-checked against Microsoft's decoder, and reading through a memory target.
 *
 *   test_debuginfo <tests/data/debuginfo>        run every case
 *   test_debuginfo --dump <case-dir>             print the decode of one case (to write `expected`) */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../check.h"
#include "asyncdac.h"
#include "base/limits.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target_mem.h"
#include "testutil.h"
#include "view/debuginfo_view.h"

/* dir/file, read whole (NULL if absent). */
static char *slurp_in(const char *dir, const char *file, size_t *len)
{
	char path[2048];
	int n = snprintf(path, sizeof path, "%s/%s", dir, file);
	if (n < 0 || (size_t)n >= sizeof path)
		return NULL;
	return slurp(path, len);
}

static const char *code_name(enum adac_errcode c)
{
	static const char *const names[] = {
#define X(name, text) #name,
		ADAC_ERRORS(X)
#undef X
	};
	return names[c];
}

/* Hex bytes, whitespace anywhere; '#' starts a comment up to the end of the line. */
static uint8_t *parse_hex(const char *text, size_t *len)
{
	uint8_t *out = malloc(strlen(text) / 2 + 1);
	size_t n = 0;
	int hi = -1;
	for (const char *p = text; *p; p++) {
		if (*p == '#') {
			while (*p && *p != '\n')
				p++;
			if (!*p)
				break;
			continue;
		}
		int v;
		if (*p >= '0' && *p <= '9')
			v = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			v = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			v = *p - 'A' + 10;
		else
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			out[n++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	*len = n;
	return out;
}

/* `format` file: "net11" (default), "net10" or "net10 flag_byte"; optional "x86". */
static void read_opts(const char *dir, struct adac_debuginfo_opts *o)
{
	char *f = slurp_in(dir, "format", NULL);
	enum adac_debuginfo_format fmt = f && strstr(f, "net10") ? ADAC_DEBUGINFO_FORMAT_NET10 : ADAC_DEBUGINFO_FORMAT_NET11;
	adac_debuginfo_opts_init(o, fmt, f && strstr(f, "flag_byte"));
	o->x86 = f && strstr(f, "x86");
	free(f);
}

static char *decode_case(const char *dir, struct adac_debug_info **keep)
{
	char *hex = slurp_in(dir, "input", NULL);
	if (!hex)
		return NULL;
	size_t len;
	uint8_t *blob = parse_hex(hex, &len);
	free(hex);
	struct adac_debuginfo_opts o;
	read_opts(dir, &o);
	struct buf got = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &got};
	struct adac_debug_info *di = NULL;
	struct adac_error err = {0};
	if (adac_debuginfo_decode_ex(blob, len, &o, &di, &err) == 0) {
		adac_debuginfo_dump(di, &out);
		/* A blob's measured size is what the decoder consumed. */
		size_t total = 0, need = 0;
		struct adac_error e2 = {0};
		if (adac_debuginfo_measure(blob, len, &o, &total, &need, &e2) != 0 || total != di->hdr.total_bytes)
			adac_print(&out, "measure disagrees: %zu\n", total);
	} else {
		adac_print(&out, "%s: %s\n", code_name(err.code), err.msg);
	}
	if (keep)
		*keep = di;
	else
		adac_debuginfo_free(di);
	free(blob);
	return got.p;
}

/* clrmd_map: Microsoft's bounds (ClrMD ILOffsetMap), "<signed il> <start> <end>" per line. */
static void check_clrmd(const char *dir, const char *name, const struct adac_debug_info *di)
{
	char *text = slurp_in(dir, "clrmd_map", NULL);
	if (!text)
		return;
	uint32_t n = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		long il;
		unsigned long start, end;
		if (sscanf(line, "%ld %lx %lx", &il, &start, &end) != 3)
			continue;
		if (n >= di->num_bounds) {
			fprintf(stderr, "case %s: ClrMD has more map entries than our %u bounds\n", name, di->num_bounds);
			check_failures++;
			break;
		}
		const struct adac_bound *b = &di->bounds[n++];
		if ((uint32_t)il != b->il_offset || start != b->native_offset) {
			fprintf(stderr, "case %s: bound %u is il=0x%x native=0x%x, ClrMD says il=%ld native=0x%lx\n", name,
			        n - 1, b->il_offset, b->native_offset, il, start);
			check_failures++;
		}
	}
	if (n != di->num_bounds) {
		fprintf(stderr, "case %s: ClrMD has %u map entries, we decoded %u bounds\n", name, n, di->num_bounds);
		check_failures++;
	}
	free(text);
}

/* oracle: "state <n> ip_offset <hex> il_offset <hex> [no_async_info]" per continuation of this
 * method (from the ClrMD oracle): SP[state] is at ip_offset (or, for code whose blob has no async
 * chunk, there are no suspension points), and the ASYNC bound there maps to il_offset. */
static void check_oracle(const char *dir, const char *name, const struct adac_debug_info *di)
{
	char *text = slurp_in(dir, "oracle", NULL);
	if (!text)
		return;
	char *save = NULL;
	int n = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned state, ipoff, iloff;
		if (sscanf(line, "state %u ip_offset %x il_offset %x", &state, &ipoff, &iloff) != 3)
			continue;
		n++;
		const struct adac_suspension_point *sp = adac_debuginfo_suspension_point(di, state);
		if (strstr(line, "no_async_info")) {
			CHECK(di->num_suspension_points == 0 && di->hdr.cb_async == 0);
		} else if (!sp || sp->diagnostic_native_offset != ipoff) {
			fprintf(stderr, "case %s: SP[%u] native offset 0x%x, the oracle's DiagnosticIP is at +0x%x\n", name,
			        state, sp ? sp->diagnostic_native_offset : 0xffffffffu, ipoff);
			check_failures++;
		}
		uint32_t src = 0;
		uint32_t il = adac_debuginfo_il_offset(di, ipoff, &src);
		if (il != iloff || !(src & ADAC_SRC_ASYNC)) {
			fprintf(stderr, "case %s: IL offset at +0x%x is 0x%x (source 0x%x), the oracle says 0x%x (ASYNC)\n", name,
			        ipoff, il, src, iloff);
			check_failures++;
		}
	}
	CHECK(n > 0);
	free(text);
}

static void run_case(const char *root, const char *name)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/%s", root, name);
	struct adac_debug_info *di = NULL;
	char *got = decode_case(dir, &di);
	if (!got) {
		fprintf(stderr, "case %s: no input\n", name);
		check_failures++;
		return;
	}
	char *want = slurp_in(dir, "expected", NULL);
	if (!want)
		want = slurp_in(dir, "error", NULL);
	if (!want || strcmp(want, got) != 0) {
		fprintf(stderr, "case %s: decode differs\n--- expected\n%s--- got\n%s", name, want ? want : "(missing)\n", got);
		check_failures++;
	}
	if (di) {
		check_clrmd(dir, name, di);
		check_oracle(dir, name, di);
	}
	adac_debuginfo_free(di);
	free(want);
	free(got);
}

static int run_cases(const char *root)
{
	DIR *dp = opendir(root);
	CHECK(dp != NULL);
	if (!dp)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		char path[2048];
		struct stat st;
		int pn = snprintf(path, sizeof path, "%s/%s/input", root, e->d_name);
		if (e->d_name[0] == '.' || pn < 0 || (size_t)pn >= sizeof path || stat(path, &st) != 0)
			continue;
		run_case(root, e->d_name);
		n++;
	}
	closedir(dp);
	return n;
}

/* ---------------------------------------------------------------------------------------------- */

static void test_il_offset(void)
{
	struct adac_bound b[] = {
		{0x00, ADAC_IL_PROLOG, ADAC_SRC_STACK_EMPTY},
		{0x10, 0x0, ADAC_SRC_STACK_EMPTY},
		{0x20, ADAC_IL_NO_MAPPING, 0},
		{0x20, 0x5, 0},
		{0x30, 0x7, ADAC_SRC_CALL_INSTRUCTION},
		{0x30, 0x9, ADAC_SRC_ASYNC},
		{0x40, ADAC_IL_EPILOG, 0},
	};
	struct adac_debug_info di = {.num_bounds = 7, .bounds = b};
	uint32_t src;
	CHECK_EQ_U64(adac_debuginfo_il_offset(&di, 0x30, &src), 0x9); /* ASYNC at that exact offset wins */
	CHECK_EQ_U64(src, ADAC_SRC_ASYNC);
	CHECK_EQ_U64(adac_debuginfo_il_offset(&di, 0x35, &src), 0x7); /* nearest before: the first at 0x30 */
	CHECK_EQ_U64(adac_debuginfo_il_offset(&di, 0x28, &src), 0x5); /* a real IL offset beats NO_MAPPING */
	CHECK_EQ_U64(adac_debuginfo_il_offset(&di, 0x10, &src), 0x0);
	CHECK_EQ_U64(adac_debuginfo_il_offset(&di, 0x50, &src), ADAC_IL_EPILOG);
	struct adac_debug_info empty = {0};
	CHECK_EQ_U64(adac_debuginfo_il_offset(&empty, 0x10, &src), ADAC_IL_NO_MAPPING);
	CHECK_EQ_U64(src, 0);
}

/* A tiny NibbleWriter for blobs too big for a data file. */
struct nw {
	uint8_t *b;
	size_t n; /* nibbles */
};

static void nw_nib(struct nw *w, unsigned v)
{
	if (w->n & 1)
		w->b[w->n / 2] |= (uint8_t)(v << 4);
	else
		w->b[w->n / 2] = (uint8_t)v;
	w->n++;
}

static void nw_u32(struct nw *w, uint32_t v)
{
	int i = 0;
	while ((v >> i) > 7)
		i += 3;
	for (; i > 0; i -= 3)
		nw_nib(w, ((v >> i) & 7) | 8);
	nw_nib(w, v & 7);
}

/* 1,000,001 bounds entries of 5 bits fit in their chunk but exceed ADAC_MAX_NIBBLE_ENTRIES. */
static void test_limit(void)
{
	uint32_t count = ADAC_MAX_NIBBLE_ENTRIES + 1;
	size_t chunk = 5 + ((size_t)count * 5 + 7) / 8;
	uint8_t *blob = calloc(1, chunk + 16);
	struct nw w = {blob, 0};
	nw_u32(&w, 0);
	nw_u32(&w, (uint32_t)chunk);
	for (int i = 0; i < 5; i++)
		nw_u32(&w, 0);
	size_t hdr = (w.n + 1) / 2;
	struct nw c = {blob + hdr, 0};
	nw_u32(&c, count);
	nw_u32(&c, 0);
	nw_u32(&c, 0);
	CHECK_EQ_U64((c.n + 1) / 2, 5);
	struct adac_debug_info *di = NULL;
	struct adac_error err = {0};
	int rc = adac_debuginfo_decode(blob, hdr + chunk, ADAC_DEBUGINFO_FORMAT_NET11, false, &di, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "debug info bounds chunk: 1000001 entries exceed ADAC_MAX_NIBBLE_ENTRIES");
	CHECK(di == NULL);
	/* One fewer is decoded. */
	c.n = 0;
	nw_u32(&c, count - 1);
	adac_error_clear(&err);
	CHECK(adac_debuginfo_decode(blob, hdr + chunk, ADAC_DEBUGINFO_FORMAT_NET11, false, &di, &err) == 0);
	CHECK(di && di->num_bounds == count - 1 && di->bounds[count - 2].il_offset == ADAC_IL_EPILOG);
	adac_debuginfo_free(di);
	free(blob);
}

/* A minimal .NET 11 runtime in a memory target: the descriptor plus a blob at 0x10000. */
static struct adac_runtime *make_runtime(struct adac_memimg *img, const char *contract, struct adac_target **tp)
{
	char json[512];
	snprintf(json, sizeof json,
	         "{\"version\":2,\"types\":{},\"globals\":{\"Architecture\":[\"x64\",\"string\"]},"
	         "\"contracts\":{%s}}", contract);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	CHECK(t != NULL);
	struct adac_runtime *rt = calloc(1, sizeof *rt);
	rt->t = t;
	rt->desc = adac_desc_new();
	CHECK(adac_desc_parse_json(rt->desc, json, strlen(json), NULL, 0, &err) == 0);
	*tp = t;
	return rt;
}

static void free_runtime(struct adac_runtime *rt, struct adac_target *t)
{
	for (int i = 0; i < ADAC_SLOT_COUNT; i++)
		if (rt->slots[i] && rt->slot_free[i])
			rt->slot_free[i](rt->slots[i]);
	adac_desc_free(rt->desc);
	free(rt);
	adac_target_close(t);
}

static void test_get(const char *root)
{
	char *hex = slurp_in(root, "net11_C/input", NULL);
	CHECK(hex != NULL);
	if (!hex)
		return;
	size_t len;
	uint8_t *blob = parse_hex(hex, &len);
	free(hex);

	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, 0x10000, blob, len);
	adac_memimg_add(img, 0x20000, blob, 20); /* a blob cut short by unreadable memory */
	struct adac_target *t;
	struct adac_runtime *rt = make_runtime(img, "\"DebugInfo\":\"c1\"", &t);
	struct adac_code_info code = {.kind = ADAC_CODE_JIT, .code_start = 0x5000, .debug_info = 0x10000};
	const struct adac_debug_info *di = NULL, *di2 = NULL;
	struct adac_error err = {0};
	CHECK(adac_debuginfo_get(rt, &code, &di, &err) == 0);
	CHECK(di != NULL && di->num_suspension_points == 1 && di->hdr.total_bytes == len);
	CHECK(adac_debuginfo_get(rt, &code, &di2, &err) == 0);
	CHECK(di == di2); /* cached per blob address */

	/* No debug info. */
	code.debug_info = 0;
	int rc = adac_debuginfo_get(rt, &code, &di, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "no debug info for the code at 0x5000");
	adac_error_clear(&err);

	/* The blob runs into unreadable memory: chunks past the mapped bytes. */
	code.debug_info = 0x20000;
	rc = adac_debuginfo_get(rt, &code, &di, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "debug info at 0x20000: ");
	adac_error_clear(&err);
	free_runtime(rt, t);

	/* Unknown contract versions are refused, not guessed. */
	img = adac_memimg_new();
	adac_memimg_add(img, 0x10000, blob, len);
	rt = make_runtime(img, "\"DebugInfo\":\"c9\"", &t);
	code.debug_info = 0x10000;
	rc = adac_debuginfo_get(rt, &code, &di, &err);
	CHECK_ERR(rc, &err, ADAC_E_UNSUPPORTED, "DebugInfo contract version c9 is not supported");
	adac_error_clear(&err);
	free_runtime(rt, t);

	img = adac_memimg_new();
	rt = make_runtime(img, "", &t);
	rc = adac_debuginfo_get(rt, &code, &di, &err);
	CHECK_ERR(rc, &err, ADAC_E_UNSUPPORTED, "describes no DebugInfo contract");
	free_runtime(rt, t);
	free(blob);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
		char *got = decode_case(argv[2], NULL);
		fputs(got ? got : "no input\n", stdout);
		free(got);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: test_debuginfo <tests/data/debuginfo> | --dump <case-dir>\n");
		return 2;
	}
	int n = run_cases(argv[1]);
	CHECK(n >= 20);
	test_il_offset();
	test_limit();
	test_get(argv[1]);
	return check_report("test_debuginfo");
}
