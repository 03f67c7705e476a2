/* test_locals.c - awaited locals (dac/async/locals.c, dac/view/locals_view.c) and value formatting
 * (dac/view/value_format.c) on the synthetic array-layout target: a runtime laid out in a memory target the way 11.0.0 lays it out
 * (the real .NET 11.0.0 descriptor gives the layouts), around the real ArrayLayout.dll (+ PDB) of
 * targets/synthetic/array_layout and the real System.Private.CoreLib.dll (names, ContinuationFlags):
 * MethodTables with EEClasses and FieldDescs, a MethodDesc for Worker.Work, strings, arrays, boxed
 * and class objects, and continuations with hand-made async debug info (the encoding documented in
 * targets/synthetic/array_layout/README.md).
 *
 *   array layout  Offset-only, GCIndex-only and mixed locals reassembled exactly from Data/GCData,
 *                 including a struct with several object references declared out of offset order
 *                 and a struct nested in a struct; every line compared with the exact text.
 *   flat layout   values at continuation + Offset, Flags and its well-known slots (CoreLib's
 *                 ContinuationFlags constants), DiagnosticNativeOffset mismatch, a variable past
 *                 the end of the continuation.
 *   corruption    State out of range, entries not in (Offset, GCIndex) pairs, Data/GCData indexes
 *                 out of range, neither index, VarNumber past the locals, Data not an array.
 *   values        floats, chars, escapes, truncation at the limits, enums, type names.
 * Fails without the .NET 11 runtime pack of scripts/dotnet-setup (for CoreLib). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#define AREA_SIZE 0x1000000ull
#include "async/async_frame.h"
#include "async/locals.h"
#include "asyncdac.h"
#include "code/debuginfo.h"
#include "metadata/ecma_metadata.h"
#include "metadata/signature.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "testrts.h"
#include "testutil.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/typename.h"
#include "view/locals_view.h"
#include "view/value_format.h"

/* The locals of a hand-made frame of `layout` whose code version's debug info is di. */
static int collect(struct adac_runtime *rt, struct adac_async_frame *f, enum adac_cont_layout_kind layout,
                   const struct adac_debug_info *di, struct adac_locals *l, struct adac_error *err)
{
	f->cont.layout = layout;
	f->note[0] = '\0';
	adac_async_frame_use_debug_info(f, di);
	return adac_frame_locals_collect(rt, f, l, err);
}

/* ---- Output capture ---- */

static char *print_locals(struct adac_runtime *rt, const struct adac_locals *l, const char *name, unsigned depth,
                          int *rc, struct adac_error *err)
{
	struct buf b = {0};
	struct adac_out out = {.write = buf_write, .ctx = &b};
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	o.max_depth = depth;
	o.internals = true;   /* every variable: these tests are about the values */
	*rc = adac_locals_print(rt, l, name, "", &o, &out, err);
	if (!b.p)
		b.p = strdup("");
	return b.p;
}

/* Text and JSON of one value formatted from host bytes. */
static char *fmt(struct adac_runtime *rt, const struct adac_vtype *t, const void *bytes, const struct adac_value_opts *o,
                 json_t **json)
{
	struct adac_sig_text text = {0};
	struct adac_error err = {0};
	if (adac_value_format(rt, t, bytes, o, &text, json, &err)) {
		fprintf(stderr, "format: %s\n", err.msg);
		adac_sig_text_free(&text);
		return strdup("<failed>");
	}
	char *s = adac_sig_text_take(&text);
	return s ? s : strdup("");
}

static void check_prim(struct adac_runtime *rt, uint8_t elem, uint32_t size, const void *bytes, const char *want)
{
	struct adac_vtype t = {.kind = ADAC_VK_PRIM, .elem = elem, .size = size};
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	char *s = fmt(rt, &t, bytes, &o, NULL);
	CHECK_EQ_STR(s, want);
	free(s);
}

/* ---- The synthetic target: testrts.h, and these objects ---- */

#define STR_WORK 0x5300000ull
#define STR_TAG 0x5300100ull
#define STR_B 0x5300200ull
#define STR_A 0x5300300ull
#define STR_N7 0x5300400ull
#define STR_INNER 0x5300500ull
#define STR_OUTER 0x5300600ull
#define STR_LONG 0x5300700ull
#define STR_ESC 0x5301800ull
#define STR_FIRST 0x5301900ull
#define WORKER 0x5302000ull
#define NODE 0x5302100ull
#define BOXED 0x5302200ull
#define NUMBERS 0x5302300ull
#define BIGARRAY 0x5302400ull
#define DATA 0x5303000ull
#define GCDATA 0x5304000ull
#define CONT 0x5305000ull

int main(int argc, char **argv)
{
	struct rts r;
	if (rts_open(argc, argv, "locals", NULL, NULL, false, &r))
		return 1;
	struct adac_runtime *rt = r.rt;
	uint64_t md_work = r.md_work;
	struct adac_error err = {0};

	/* Objects. */
	put_string(STR_WORK, MT(M_STRING), "work");
	put_string(STR_TAG, MT(M_STRING), "tag");
	put_string(STR_B, MT(M_STRING), "b");
	put_string(STR_A, MT(M_STRING), "a");
	put_string(STR_N7, MT(M_STRING), "n7");
	put_string(STR_INNER, MT(M_STRING), "inner");
	put_string(STR_OUTER, MT(M_STRING), "outer");
	char longs[301];
	memset(longs, 'x', 300);
	longs[300] = '\0';
	put_string(STR_LONG, MT(M_STRING), longs);
	put_string(STR_ESC, MT(M_STRING), "a\"b\\c\nd\te");
	put_string(STR_FIRST, MT(M_STRING), "first");
	put64(WORKER, MT(M_WORKER));
	put32(WORKER + 8, 1);
	put64(NODE, MT(M_NODE));
	put64(NODE + 8, STR_N7);
	put32(NODE + 16, 7);
	put64(BOXED, MT(M_INT32));
	put32(BOXED + 8, 5);
	put64(NUMBERS, MT(M_INT32_ARR));
	put32(NUMBERS + 8, 3);
	put32(NUMBERS + 16, 1);
	put32(NUMBERS + 20, 2);
	put32(NUMBERS + 24, 3);
	put64(BIGARRAY, MT(M_INT32_ARR));
	put32(BIGARRAY + 8, 20);
	for (uint32_t i = 0; i < 20; i++)
		put32(BIGARRAY + 16 + 4 * i, i);

	/* Data (byte[160]): the non-reference bytes; reference slots hold junk that GCData replaces. */
	const uint64_t D = DATA + 16;
	put64(DATA, MT(M_BYTE_ARR));
	put32(DATA + 8, 160);
	put32(D + 0, 42);                 /* count */
	put16(D + 4, 2);                  /* mode = Fast */
	put32(D + 8, 42);                 /* i */
	put64(D + 16, 1ull << 40);        /* big */
	double ratio = 0.25, y = 1.5;
	mem_write(D + 24, &ratio, 8);     /* ratio */
	put8(D + 32, 1);                  /* flag */
	put16(D + 34, 'Z');               /* letter */
	put16(D + 36, 2);                 /* m = Fast */
	mem_write(D + 40, &y, 8);         /* plain.Y */
	put32(D + 48, 3);                 /* plain.X */
	put64(D + 56, 0x4141414141414141ull); /* mixed.Tag (junk) */
	put64(D + 64, (uint64_t)-2);      /* mixed.Big */
	put32(D + 72, 9);                 /* mixed.Id */
	put64(D + 80, 0x4242424242424242ull); /* many.A, B, C (junk) */
	put64(D + 88, 0x4242424242424242ull);
	put64(D + 96, 0x4242424242424242ull);
	put32(D + 104, 4);                /* many.X */
	put8(D + 108, 255);               /* many.Y */
	put64(D + 112, 0x4343434343434343ull); /* outer.Inner.Tag (junk) */
	put64(D + 120, 11);               /* outer.Inner.Big */
	put32(D + 128, 10);               /* outer.Inner.Id */
	put64(D + 136, 0x4343434343434343ull); /* outer.Name (junk) */
	put64(D + 144, 0x4444444444444444ull); /* pair.First (junk) */
	put32(D + 152, 2);                /* pair.Count */
	/* GCData (object[13]). */
	static const uint64_t gc[13] = {WORKER, STR_WORK, STR_WORK, BOXED, NODE, STR_TAG, STR_A, STR_B, NODE,
	                                STR_INNER, STR_OUTER, NUMBERS, STR_FIRST};
	put64(GCDATA, MT(M_OBJECT_ARR));
	put32(GCDATA + 8, 13);
	mem_write(GCDATA + 16, gc, sizeof gc);
	flush();

	/* ---- Array layout ---- */
	/* Worker.Work(int count, string label, Mode mode): this 0, count 1, label 2, mode 3; locals
	 * i 4, big 5, ratio 6, flag 7, letter 8, m 9, text 10, boxed 11, node 12, plain 13, mixed 14,
	 * many 15, outer 16, numbers 17, pair 18. Each variable: (VarNumber, Data offset), (VarNumber,
	 * GCIndex). */
	static const struct var arr_vars[] = {
		{16, 112}, {16, 9}, {0, NONE}, {0, 0}, {1, 0}, {1, NONE}, {2, NONE}, {2, 1}, {3, 4}, {3, NONE},
		{4, 8}, {4, NONE}, {5, 16}, {5, NONE}, {6, 24}, {6, NONE}, {7, 32}, {7, NONE}, {8, 34}, {8, NONE},
		{9, 36}, {9, NONE}, {10, NONE}, {10, 2}, {11, NONE}, {11, 3}, {12, NONE}, {12, 4}, {13, 40}, {13, NONE},
		{14, 56}, {14, 5}, {15, 80}, {15, 6}, {17, NONE}, {17, 11}, {18, 144}, {18, 12},
	};
	struct adac_debug_info *di = make_di(1, 0x40, arr_vars, sizeof arr_vars / sizeof arr_vars[0]);
	struct adac_async_frame f;
	memset(&f, 0, sizeof f);
	f.method_desc = md_work;
	f.cont.addr = CONT + 0x800;
	f.cont.data = DATA;
	f.cont.gc_data = GCDATA;
	f.has_il = true;
	f.il_offset = 0x10;
	struct adac_locals l;
	int rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK(rc == 0);
	if (rc)
		fprintf(stderr, "array layout: %s\n", err.msg);
	if (rc == 0) {
		char *text = print_locals(rt, &l, NULL, 2, &rc, &err);
		CHECK(rc == 0);
		CHECK_EQ_STR(text,
		             "(ArrayLayoutSamples.Worker) this = 0x0000000005302000 { Id = 1 }\n"
		             "(int) count = 42\n"
		             "(string) label = \"work\"\n"
		             "(ArrayLayoutSamples.Mode) mode = Fast\n"
		             "(int) i = 42\n"
		             "(long) big = 1099511627776\n"
		             "(double) ratio = 0.25\n"
		             "(bool) flag = true\n"
		             "(char) letter = 'Z'\n"
		             "(ArrayLayoutSamples.Mode) m = Fast\n"
		             "(string) text = \"work\"\n"
		             "(object) boxed = 0x0000000005302200 int 5\n"
		             "(ArrayLayoutSamples.Node) node = 0x0000000005302100 { Value = 7, Label = \"n7\" }\n"
		             "(ArrayLayoutSamples.Plain) plain = { X = 3, Y = 1.5 }\n"
		             "(ArrayLayoutSamples.Mixed) mixed = { Id = 9, Tag = (object) 0x0000000005300100 string \"tag\", "
		             "Big = -2 }\n"
		             "(ArrayLayoutSamples.Many) many = { C = (object) 0x0000000005302100 ArrayLayoutSamples.Node { Value = "
		             "7, Label = \"n7\" }, X = 4, B = \"b\", A = (object) 0x0000000005300300 string \"a\", Y = 255 }\n"
		             "(ArrayLayoutSamples.Outer) outer = { Inner = { Id = 10, Tag = (object) 0x0000000005300500 "
		             "string \"inner\", Big = 11 }, Name = \"outer\" }\n"
		             "(int[]) numbers = int[3] { 1, 2, 3 }\n"
		             "(ArrayLayoutSamples.Pair<string>) pair = { First = \"first\", Count = 2 }\n");
		free(text);
		/* The default depth (1) stops at the nested struct and at objects inside structs. */
		text = print_locals(rt, &l, "outer", 1, &rc, &err);
		CHECK_EQ_STR(text, "(ArrayLayoutSamples.Outer) outer = { Inner = {...}, Name = \"outer\" }\n");
		free(text);
		text = print_locals(rt, &l, "many", 1, &rc, &err);
		CHECK_EQ_STR(text, "(ArrayLayoutSamples.Many) many = { C = (object) 0x0000000005302100 ArrayLayoutSamples.Node "
		                   "{...}, X = 4, B = \"b\", A = (object) 0x0000000005300300 string \"a\", Y = 255 }\n");
		free(text);
		adac_error_clear(&err);
		text = print_locals(rt, &l, "nope", 1, &rc, &err);
		CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "no variable named 'nope' at this await");
		free(text);
		/* JSON: where each value came from. */
		struct adac_value_opts o;
		adac_value_opts_default(&o);
		json_t *j = adac_locals_json(rt, &l, "many", &o, &err);
		CHECK(j && json_array_size(j) == 1);
		json_t *m = json_array_get(j, 0);
		CHECK(json_integer_value(json_object_get(m, "offset")) == 80);
		CHECK(json_integer_value(json_object_get(m, "gc_index")) == 6);
		CHECK_EQ_STR(json_string_value(json_object_get(m, "address")), "0x0000000005303060");
		CHECK_EQ_STR(json_string_value(json_object_get(m, "kind")), "local");
		CHECK(json_integer_value(json_object_get(m, "var_number")) == 15);
		json_t *fields = json_object_get(json_object_get(m, "value"), "fields");
		CHECK_EQ_STR(json_string_value(json_object_get(fields, "B")), "b");
		CHECK(json_integer_value(json_object_get(fields, "Y")) == 255);
		CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(fields, "C"), "class")), "ArrayLayoutSamples.Node");
		json_decref(j);
		j = adac_locals_json(rt, &l, "mode", &o, &err);
		json_t *mv = json_object_get(json_array_get(j, 0), "value");
		CHECK_EQ_STR(json_string_value(json_object_get(mv, "enum")), "ArrayLayoutSamples.Mode");
		CHECK_EQ_STR(json_string_value(json_object_get(mv, "name")), "Fast");
		CHECK(json_integer_value(json_object_get(mv, "value")) == 2);
		json_decref(j);
		/* JSON spells a type as the text does (C# style). */
		j = adac_locals_json(rt, &l, "boxed", &o, &err);
		CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(json_array_get(j, 0), "value"), "boxed")), "int");
		json_decref(j);
		j = adac_locals_json(rt, &l, "numbers", &o, &err);
		CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(j, 0), "type")), "int[]");
		CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(json_array_get(j, 0), "value"), "array")), "int");
		json_decref(j);
		j = adac_locals_json(rt, &l, "pair", &o, &err);
		CHECK_EQ_STR(json_string_value(json_object_get(json_array_get(j, 0), "type")), "ArrayLayoutSamples.Pair<string>");
		CHECK_EQ_STR(json_string_value(json_object_get(json_object_get(json_array_get(j, 0), "value"), "struct")),
		             "ArrayLayoutSamples.Pair<string>");
		json_decref(j);
		adac_locals_free(&l);
	}
	adac_debuginfo_free(di);

	/* References in ascending offset order, nested structs included. */
	struct adac_vtype vt;
	uint32_t offs[8], n = 0;
	CHECK(adac_vtype_from_th(rt, MT(M_MANY), &vt, &err) == 0);
	CHECK(vt.kind == ADAC_VK_STRUCT && vt.size == 32);
	CHECK(adac_vtype_ref_offsets(rt, &vt, offs, 8, &n, &err) == 0 && n == 3 && offs[0] == 0 && offs[1] == 8 && offs[2] == 16);
	adac_vtype_free(&vt);
	CHECK(adac_vtype_from_th(rt, MT(M_OUTER), &vt, &err) == 0);
	CHECK(adac_vtype_ref_offsets(rt, &vt, offs, 8, &n, &err) == 0 && n == 2 && offs[0] == 0 && offs[1] == 24);
	adac_vtype_free(&vt);
	CHECK(adac_vtype_from_th(rt, MT(M_MODE), &vt, &err) == 0);
	CHECK(vt.kind == ADAC_VK_STRUCT && vt.is_enum && vt.elem == 0x06 && vt.size == 2);
	CHECK_EQ_STR(vt.name, "ArrayLayoutSamples.Mode");
	adac_vtype_free(&vt);

	/* ---- Array layout: corruption ---- */
	/* State out of range: the whole frame. */
	di = make_di(1, 0x40, arr_vars, 4);
	f.cont.state = 1;
	adac_error_clear(&err);
	rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "State 1 is out of range: the method's debug info has 1 suspension point");
	f.cont.state = -1;
	adac_error_clear(&err);
	rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "State -1 is out of range");
	f.cont.state = 0;
	adac_debuginfo_free(di);
	/* Not pairs. */
	di = make_di(1, 0x40, arr_vars + 2, 3);
	adac_error_clear(&err);
	rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "suspension point 0 lists 3 entries, not (Offset, GCIndex) pairs");
	adac_debuginfo_free(di);
	static const struct var mismatched[] = {{4, 8}, {5, NONE}};
	di = make_di(1, 0x40, mismatched, 2);
	adac_error_clear(&err);
	rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "entries 0 and 1 name variables 4 and 5");
	adac_debuginfo_free(di);
	/* Per variable: the others are still shown. */
	static const struct var bad[] = {
		{1, 0}, {1, NONE}, {4, 200}, {4, NONE}, {10, NONE}, {10, 40}, {5, NONE}, {5, NONE}, {40, 0}, {40, NONE},
		{14, 150}, {14, 5}, {15, 80}, {15, 11},
	};
	di = make_di(1, 0x40, bad, sizeof bad / sizeof bad[0]);
	rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK(rc == 0);
	if (rc == 0) {
		char *text = print_locals(rt, &l, NULL, 1, &rc, &err);
		CHECK_EQ_STR(text, "(int) count = 42\n"
		                   "(int) i = <error: Data[200..204) is outside the 160-byte Data array>\n"
		                   "(long) big = <error: the debug info gives neither a Data offset nor a GCData index>\n"
		                   "(string) text = <error: GCData[40..41) is outside the 13-element GCData array>\n"
		                   "(ArrayLayoutSamples.Mixed) mixed = <error: Data[150..174) is outside the 160-byte Data array>\n"
		                   "(ArrayLayoutSamples.Many) many = <error: GCData[11..14) is outside the 13-element GCData array>\n"
		                   "(?) V_36 = <error: VarNumber 40 is past the method's 4 arguments and 21 locals>\n");
		free(text);
		adac_locals_free(&l);
	}
	/* Data that is not an array: the whole frame. */
	f.cont.data = STR_WORK;
	adac_error_clear(&err);
	rc = collect(rt, &f, ADAC_CONT_ARRAY, di, &l, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "Data 0x5300000 is not a one-dimensional array");
	f.cont.data = DATA;
	adac_debuginfo_free(di);

	/* ---- Flat layout ---- */
	/* A continuation of the 88-byte layout: Flags = ContinueOnThreadPool | ExecutionContext index 1 |
	 * Exception index 2 (CoreLib 11.0.0's ContinuationFlags: ExecutionContextIndexFirstBit 4,
	 * ExceptionIndexFirstBit 8); data from 32: [ExecutionContext] null, [Exception] a string
	 * (whatever it is, it is shown), count at 48, mode at 52, label at 56, node at 64, many at 72
	 * (32 bytes: past the end). */
	put64(CONT, MT(M_CONT_LAYOUT));
	put32(CONT + 24, 0x211);
	put64(CONT + 40, STR_WORK);
	put32(CONT + 48, 42);
	put16(CONT + 52, 1);
	put64(CONT + 56, STR_WORK);
	put64(CONT + 64, NODE);
	flush();
	static const struct var flat_vars[] = {{2, 56}, {1, 48}, {3, 52}, {12, 64}, {15, 72}};
	di = make_di(1, 0x40, flat_vars, 5);
	memset(&f, 0, sizeof f);
	f.method_desc = md_work;
	f.cont.addr = CONT;
	f.cont.mt = MT(M_CONT_LAYOUT);
	f.has_code = true;
	f.code.offset = 0x44;
	f.has_il = true;
	f.il_offset = 0x10;
	rc = collect(rt, &f, ADAC_CONT_FLAT, di, &l, &err);
	CHECK(rc == 0);
	if (rc)
		fprintf(stderr, "flat layout: %s\n", err.msg);
	if (rc == 0) {
		CHECK_EQ_STR(l.warning, "State 0 is the suspension point at +0x40, but DiagnosticIP is at +0x44");
		CHECK(l.has_flags && l.flags == 0x211);
		char *text = print_locals(rt, &l, NULL, 1, &rc, &err);
		CHECK_EQ_STR(text, "(int) count = 42\n"
		                   "(string) label = \"work\"\n"
		                   "(ArrayLayoutSamples.Mode) mode = Slow\n"
		                   "(ArrayLayoutSamples.Node) node = 0x0000000005302100 { Value = 7, Label = \"n7\" }\n"
		                   "(ArrayLayoutSamples.Many) many = <error: offset 0x48 + 32 bytes is past the end of the 80-byte "
		                   "continuation>\n"
		                   "[Flags] = 0x00000211 { ContinueOnThreadPool, ExecutionContext = 1, Exception = 2 }\n"
		                   "[ExecutionContext] = null\n"
		                   "[Exception] = 0x0000000005300000 string \"work\"\n");
		free(text);
		adac_locals_free(&l);
	}
	adac_debuginfo_free(di);
	/* An empty suspension point. */
	di = make_di(1, 0x44, NULL, 0);
	rc = collect(rt, &f, ADAC_CONT_FLAT, di, &l, &err);
	CHECK(rc == 0 && l.warning == NULL);
	if (rc == 0) {
		char *text = print_locals(rt, &l, NULL, 1, &rc, &err);
		CHECK_EQ_STR(text, "[Flags] = 0x00000211 { ContinueOnThreadPool, ExecutionContext = 1, Exception = 2 }\n"
		                   "[ExecutionContext] = null\n"
		                   "[Exception] = 0x0000000005300000 string \"work\"\n");
		free(text);
		adac_locals_free(&l);
	}
	adac_debuginfo_free(di);
	/* Several suspension points: only State's variables. */
	di = make_di(2, 0x44, flat_vars, 2);
	f.cont.state = 1;
	rc = collect(rt, &f, ADAC_CONT_FLAT, di, &l, &err);
	CHECK(rc == 0 && l.n == 3 && l.v[0].kind == ADAC_LOCAL_SLOT);
	if (rc == 0)
		adac_locals_free(&l);
	adac_debuginfo_free(di);

	/* ---- Values ---- */
	double d;
	float fl;
	d = NAN;
	check_prim(rt, 0x0d, 8, &d, "NaN");
	d = INFINITY;
	check_prim(rt, 0x0d, 8, &d, "Infinity");
	d = -INFINITY;
	check_prim(rt, 0x0d, 8, &d, "-Infinity");
	d = 0.1;
	check_prim(rt, 0x0d, 8, &d, "0.1");
	d = 1e100;
	check_prim(rt, 0x0d, 8, &d, "1e+100");
	d = -0.0;
	check_prim(rt, 0x0d, 8, &d, "-0");
	d = 1.0 / 3;
	check_prim(rt, 0x0d, 8, &d, "0.3333333333333333");
	fl = 1.1f;
	check_prim(rt, 0x0c, 4, &fl, "1.1");
	fl = 3.4028235e38f;
	check_prim(rt, 0x0c, 4, &fl, "3.4028235e+38");
	uint16_t c = '\n';
	check_prim(rt, 0x03, 2, &c, "'\\n'");
	c = '\'';
	check_prim(rt, 0x03, 2, &c, "'\\''");
	c = 1;
	check_prim(rt, 0x03, 2, &c, "'\\u0001'");
	c = 0xd800;
	check_prim(rt, 0x03, 2, &c, "'\\ud800'");
	c = 0xe9;
	check_prim(rt, 0x03, 2, &c, "'\xc3\xa9'");
	uint8_t bv = 2;
	check_prim(rt, 0x02, 1, &bv, "true (0x02)");
	bv = 0xff;
	check_prim(rt, 0x04, 1, &bv, "-1");
	check_prim(rt, 0x05, 1, &bv, "255");
	uint64_t u = UINT64_MAX;
	check_prim(rt, 0x0b, 8, &u, "18446744073709551615");
	check_prim(rt, 0x0a, 8, &u, "-1");
	int32_t i32 = INT32_MIN;
	check_prim(rt, 0x08, 4, &i32, "-2147483648");
	{
		struct adac_vtype t = {.kind = ADAC_VK_PRIM, .elem = 0x0b, .size = 8};
		struct adac_value_opts o;
		adac_value_opts_default(&o);
		json_t *j = NULL;
		char *s = fmt(rt, &t, &u, &o, &j);
		CHECK(json_is_string(j) && strcmp(json_string_value(j), "18446744073709551615") == 0);
		json_decref(j);
		free(s);
	}
	/* References: strings (escapes, the string limit), arrays (the element limit), null. */
	{
		struct adac_vtype st = {.kind = ADAC_VK_REF, .elem = 0x0e, .size = 8, .name = (char *)"string"};
		struct adac_vtype ot = {.kind = ADAC_VK_REF, .elem = 0x1c, .size = 8, .name = (char *)"object"};
		struct adac_vtype at = {.kind = ADAC_VK_REF, .elem = 0x1d, .size = 8, .name = (char *)"int[]"};
		struct adac_value_opts o;
		adac_value_opts_default(&o);
		uint64_t p = STR_ESC;
		char *s = fmt(rt, &st, &p, &o, NULL);
		CHECK_EQ_STR(s, "\"a\\\"b\\\\c\\nd\\te\"");
		free(s);
		p = STR_LONG;
		o.max_string = 4;
		json_t *j = NULL;
		s = fmt(rt, &st, &p, &o, &j);
		CHECK_EQ_STR(s, "\"xxxx\"... (length 300)");
		CHECK(json_integer_value(json_object_get(j, "length")) == 300 && json_is_true(json_object_get(j, "truncated")));
		json_decref(j);
		free(s);
		o.max_string = ADAC_VALUE_DEFAULT_STRING;
		p = BIGARRAY;
		s = fmt(rt, &at, &p, &o, NULL);
		CHECK_EQ_STR(s, "int[20] { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, ... }");
		free(s);
		o.max_elements = 2;
		s = fmt(rt, &ot, &p, &o, NULL);
		CHECK_EQ_STR(s, "0x0000000005302400 int[20] { 0, 1, ... }");
		free(s);
		o.max_elements = ADAC_VALUE_DEFAULT_ELEMENTS;
		p = 0;
		s = fmt(rt, &ot, &p, &o, NULL);
		CHECK_EQ_STR(s, "null");
		free(s);
		p = 0x7fff0000;
		s = fmt(rt, &ot, &p, &o, NULL);
		CHECK(strncmp(s, "0x000000007fff0000 <error: ", 27) == 0);
		free(s);
		p = NODE;
		o.max_depth = 0;
		s = fmt(rt, &ot, &p, &o, NULL);
		CHECK_EQ_STR(s, "0x0000000005302100 ArrayLayoutSamples.Node {...}");
		free(s);
	}
	/* Enums: a name, a combination, a number. */
	{
		struct adac_vtype et;
		CHECK(adac_vtype_from_th(rt, MT(M_MODE), &et, &err) == 0);
		struct adac_value_opts o;
		adac_value_opts_default(&o);
		uint16_t v = 0;
		char *s = fmt(rt, &et, &v, &o, NULL);
		CHECK_EQ_STR(s, "Off");
		free(s);
		v = 3;
		s = fmt(rt, &et, &v, &o, NULL);
		CHECK_EQ_STR(s, "Slow | Fast");
		free(s);
		v = 7;
		s = fmt(rt, &et, &v, &o, NULL);
		CHECK_EQ_STR(s, "7");
		free(s);
		v = 0xffff;
		s = fmt(rt, &et, &v, &o, NULL);
		CHECK_EQ_STR(s, "-1");
		free(s);
		adac_vtype_free(&et);
	}
	/* Type names of runtime types in the three styles (types/typename.h): C# for variables, SOS
	 * for frames, the DAC's; the cached names are the same. */
	{
		struct { uint64_t mt; const char *cs, *sos, *dac; } names[] = {
			{MT(M_INT32), "int", "Int32", "System.Int32"},
			{MT(M_STRING), "string", "System.String", "System.String"},
			{MT(M_OBJECT), "object", "System.Object", "System.Object"},
			{MT(M_BYTE_ARR), "byte[]", "Byte[]", "System.Byte[]"},
			{MT(M_OBJECT_ARR), "object[]", "System.Object[]", "System.Object[]"},
			{MT(M_INT32_ARR), "int[]", "Int32[]", "System.Int32[]"},
			{MT(M_MODE), "ArrayLayoutSamples.Mode", "ArrayLayoutSamples.Mode", "ArrayLayoutSamples.Mode"},
			{MT(M_PAIR_STRING), "ArrayLayoutSamples.Pair<string>", "ArrayLayoutSamples.Pair<System.String>",
			 "ArrayLayoutSamples.Pair`1[[System.String, System.Private.CoreLib]]"},
		};
		static const unsigned flags[] = {ADAC_NAME_CSHARP, 0, ADAC_NAME_DAC};
		static const enum adac_name_style styles[] = {ADAC_STYLE_CSHARP, ADAC_STYLE_SOS, ADAC_STYLE_DAC};
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			const char *want[] = {names[i].cs, names[i].sos, names[i].dac};
			for (unsigned k = 0; k < 3; k++) {
				struct adac_sig_text a = {0};
				CHECK(adac_tn_handle(rt, names[i].mt, styles[k], 0, &a, &err) == 0);
				CHECK_EQ_STR(adac_sig_text_str(&a), want[k]);
				CHECK_EQ_STR(adac_type_name(rt, names[i].mt, flags[k], &err), want[k]);
				adac_sig_text_free(&a);
			}
		}
	}

	/* ---- Garbage: never a crash ---- */
	/* Seeded random memory (pointers into itself, to real MethodTables and to nothing) read as
	 * objects of every kind, and random variable lists over it: errors in place, never a crash
	 * (run it under ADAC_SANITIZE). */
	{
		enum { RAND_BASE = 0x60000000, RAND_SIZE = 0x4000 };
		static uint64_t rnd[RAND_SIZE / 8];
		static const int mts[] = {M_OBJECT, M_STRING, M_INT32, M_BYTE_ARR, M_OBJECT_ARR, M_INT32_ARR, M_MODE,
		                          M_PLAIN, M_MIXED, M_MANY, M_OUTER, M_NODE, M_WORKER, M_PAIR_STRING};
		uint64_t seed = 0x9e3779b97f4a7c15ull;
		struct adac_value_opts o;
		adac_value_opts_default(&o);
		o.max_depth = 3;
		unsigned objects = 0, frames = 0, lines = 0;
		for (int iter = 0; iter < 200; iter++) {
			for (size_t i = 0; i < sizeof rnd / sizeof rnd[0]; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				uint64_t r = seed >> 11;
				switch (r % 5) {
				case 0: rnd[i] = RAND_BASE + (r >> 8) % RAND_SIZE / 8 * 8; break;
				case 1: rnd[i] = MT(mts[(r >> 8) % (sizeof mts / sizeof mts[0])]); break;
				case 2: rnd[i] = (r >> 8) & 0xff; break;
				default: rnd[i] = r; break;
				}
			}
			adac_memimg_add(img, RAND_BASE, rnd, sizeof rnd);
			adac_target_invalidate(tgt);
			for (int k = 0; k < 8; k++) {
				uint64_t obj = RAND_BASE + 8u * (uint64_t)((seed >> (k * 7)) % (RAND_SIZE / 8));
				struct adac_vtype ot = {.kind = ADAC_VK_REF, .elem = 0x1c, .size = 8, .name = (char *)"object"};
				struct adac_sig_text text = {0};
				json_t *j = NULL;
				struct adac_error e = {0};
				if (adac_value_format_ref(rt, &ot, obj, &o, &text, &j, &e) && e.code != ADAC_E_LIMIT)
					CHECK(!"formatting garbage failed other than at the text limit");
				objects += text.len > 40;
				adac_sig_text_free(&text);
				json_decref(j);
			}
			/* Random variable lists over random Data/GCData, both layouts. */
			struct var rv[16];
			for (int k = 0; k < 16; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				rv[k].number = (int32_t)((seed >> 20) % 26) - 4;
				rv[k].offset = (seed >> 40) % 3 == 0 ? NONE : (uint32_t)((seed >> 44) % 200);
				if (k % 2)
					rv[k].number = rv[k - 1].number;
			}
			di = make_di(1, 0x40, rv, 16);
			memset(&f, 0, sizeof f);
			f.method_desc = md_work;
			f.cont.addr = iter % 2 ? CONT : RAND_BASE;
			f.cont.mt = iter % 2 ? MT(M_CONT_LAYOUT) : MT(M_CONT_LAYOUT);
			f.cont.data = iter % 3 ? DATA : RAND_BASE + 0x100;
			f.cont.gc_data = iter % 3 ? GCDATA : RAND_BASE + 0x200;
			for (int layout = 0; layout < 2; layout++) {
				struct adac_error e = {0};
				if (collect(rt, &f, layout ? ADAC_CONT_ARRAY : ADAC_CONT_FLAT, di, &l, &e) == 0) {
					int prc;
					char *text = print_locals(rt, &l, NULL, 3, &prc, &e);
					frames++;
					for (char *p = text; *p; p++)
						lines += *p == '\n';
					free(text);
					json_t *j = adac_locals_json(rt, &l, NULL, &o, &e);
					json_decref(j);
					adac_locals_free(&l);
				}
			}
			adac_debuginfo_free(di);
		}
		/* The sweep reached deep: objects printed at length, frames and their lines. */
		CHECK(objects > 100 && frames > 100 && lines > 1000);
	}

	rts_close(&r);
	return check_report("locals");
}
