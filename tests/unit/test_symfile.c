/* test_symfile.c - the symbol-file writer: a hand-built model written as DWARF 4 and 5, read back
 * with libdw (names, lines, variable locations by address), and the model's argument checks.
 * Usage: test_symfile <dir>: writes <dir>/sym4.so and <dir>/sym5.so, which symfile.cmake then
 * checks with llvm-dwarfdump --verify and readelf. */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "symfile/symfile.h"

#define M1 0x7f0000001000ull   /* App.Program.Main, 0x80 bytes */
#define M2 0x7f0000001100ull   /* App.Program.Helper, same section (closer than the cluster gap) */
#define M3 0x7f0000200000ull   /* Lib.Box.Get, another unit and section */

struct model {
	struct adac_symfile *sf;
	uint32_t t_int, t_char, t_string_ptr, t_pair, t_color, t_box_ptr, t_opaque_ptr;
};

static void build(struct model *m)
{
	struct adac_error err = {0};
	struct adac_symfile *sf = m->sf = adac_symfile_new(&err);
	CHECK(sf != NULL);
	uint32_t app = adac_symfile_unit(sf, "app.dll", "/src", &err);
	uint32_t lib = adac_symfile_unit(sf, "lib.dll", "/src", &err);
	CHECK(app == 1 && lib == 2 && adac_symfile_unit(sf, "app.dll", "", &err) == 1);
	uint32_t program = adac_symfile_file(sf, "/src/Program.cs", &err);
	uint32_t libcs = adac_symfile_file(sf, "/src/Lib.cs", &err);
	CHECK(program == 1 && libcs == 2 && adac_symfile_file(sf, "/src/Program.cs", &err) == 1);

	m->t_int = adac_symfile_base_type(sf, "int", 4, ADAC_SYM_ENC_SIGNED, &err);
	m->t_char = adac_symfile_base_type(sf, "char", 2, ADAC_SYM_ENC_UTF, &err);
	uint32_t t_void_ptr = adac_symfile_pointer_type(sf, 0, &err);
	uint32_t t_object = adac_symfile_struct_type(sf, "System.Object", 8, false, &err);
	CHECK(adac_symfile_add_member(sf, t_object, "__methodtable", t_void_ptr, 0, &err) == 0);
	uint32_t t_object_ptr = adac_symfile_pointer_type(sf, t_object, &err);
	CHECK(adac_symfile_pointer_type(sf, t_object, &err) == t_object_ptr);
	/* A .NET string: length at 8, UTF-16 characters from 12, counted by the length. */
	uint32_t t_chars = adac_symfile_dynamic_array_type(sf, m->t_char, -4, 4, &err);
	uint32_t t_string = adac_symfile_struct_type(sf, "System.String", 16, false, &err);
	CHECK(adac_symfile_add_member(sf, t_string, "__methodtable", t_void_ptr, 0, &err) == 0);
	CHECK(adac_symfile_add_member(sf, t_string, "_stringLength", m->t_int, 8, &err) == 0);
	CHECK(adac_symfile_add_member(sf, t_string, "_firstChar", t_chars, 12, &err) == 0);
	m->t_string_ptr = adac_symfile_typedef(sf, "string", adac_symfile_pointer_type(sf, t_string, &err), &err);
	m->t_pair = adac_symfile_struct_type(sf, "App.Pair", 16, false, &err);
	CHECK(adac_symfile_add_member(sf, m->t_pair, "Id", m->t_int, 0, &err) == 0);
	CHECK(adac_symfile_add_member(sf, m->t_pair, "Tag", t_object_ptr, 8, &err) == 0);
	m->t_color = adac_symfile_enum_type(sf, "App.Color", m->t_int, &err);
	CHECK(adac_symfile_add_enumerator(sf, m->t_color, "Red", 0, &err) == 0);
	CHECK(adac_symfile_add_enumerator(sf, m->t_color, "Green", -1, &err) == 0);
	uint32_t t_box = adac_symfile_struct_type(sf, "Lib.Box", 24, false, &err);
	CHECK(adac_symfile_add_member(sf, t_box, "__methodtable", t_void_ptr, 0, &err) == 0);
	CHECK(adac_symfile_add_member(sf, t_box, "Values", adac_symfile_array_type(sf, m->t_int, 4, &err), 8, &err) == 0);
	m->t_box_ptr = adac_symfile_pointer_type(sf, t_box, &err);
	m->t_opaque_ptr = adac_symfile_pointer_type(sf, adac_symfile_struct_type(sf, "App.Opaque", 0, true, &err), &err);
	CHECK(err.code == ADAC_E_OK);

	struct adac_sym_row rows1[] = {{0, program, 10, 5}, {0x10, program, 11, 9}, {0x40, program, 13, 9}, {0x70, program, 0, 0}};
	struct adac_sym_loc args_loc[] = {{0, 0x80, ADAC_SYM_LOC_MEM, ADAC_SYM_REG_RBP, -8}};
	struct adac_sym_loc i_loc[] = {{0x10, 0x40, ADAC_SYM_LOC_REG, ADAC_SYM_REG_RBX, 0},
	                               {0x40, 0x80, ADAC_SYM_LOC_MEM, ADAC_SYM_REG_RBP, -16}};
	struct adac_sym_loc pair_loc[] = {{0, 0x80, ADAC_SYM_LOC_MEM, ADAC_SYM_REG_RSP, 0x20}};
	struct adac_sym_var vars1[] = {
		{"args", m->t_string_ptr, true, false, 1, args_loc},
		{"i", m->t_int, false, false, 2, i_loc},
		{"pair", m->t_pair, false, false, 1, pair_loc},
		{"color", m->t_color, false, false, 0, NULL},
		{"opaque", m->t_opaque_ptr, false, false, 0, NULL},
	};
	/* push rbp (ends at 1); mov rbp, rsp (4); push rbx (5): the CFA moves to rbp + 16. */
	struct adac_sym_cfa_row cfa1[] = {
		{.offset = 0, .cfa_reg = ADAC_SYM_REG_RSP, .cfa_offset = 8},
		{.offset = 1, .cfa_reg = ADAC_SYM_REG_RSP, .cfa_offset = 16, .nsaved = 1, .saved = {{ADAC_SYM_REG_RBP, -16}}},
		{.offset = 4, .cfa_reg = ADAC_SYM_REG_RBP, .cfa_offset = 16, .nsaved = 1, .saved = {{ADAC_SYM_REG_RBP, -16}}},
		{.offset = 5, .cfa_reg = ADAC_SYM_REG_RBP, .cfa_offset = 16, .nsaved = 2,
		 .saved = {{ADAC_SYM_REG_RBP, -16}, {ADAC_SYM_REG_RBX, -24}}},
	};
	struct adac_sym_frame frames1[] = {{0, 0x80, 4, cfa1}};
	struct adac_sym_method m1 = {.name = "App.Program.Main(System.String[])", .unit = app, .start = M1, .size = 0x80,
	                             .decl_file = program, .decl_line = 9, .nrows = 4, .rows = rows1, .nvars = 5, .vars = vars1,
	                             .nframes = 1, .frames = frames1};
	CHECK(adac_symfile_add_method(sf, &m1, &err) == 0);
	struct adac_sym_row rows2[] = {{0, program, 20, 0}};
	struct adac_sym_method m2 = {.name = "App.Program.Helper()", .unit = app, .start = M2, .size = 0x20,
	                             .decl_file = program, .decl_line = 20, .nrows = 1, .rows = rows2};
	CHECK(adac_symfile_add_method(sf, &m2, &err) == 0);
	struct adac_sym_loc this_loc[] = {{0, 0x10, ADAC_SYM_LOC_MEM_REF, ADAC_SYM_REG_RSP, 8}};
	struct adac_sym_var vars3[] = {{"this", m->t_box_ptr, true, true, 1, this_loc}};
	struct adac_sym_method m3 = {.name = "Lib.Box.Get()", .unit = lib, .start = M3, .size = 0x10, .nvars = 1, .vars = vars3};
	CHECK(adac_symfile_add_method(sf, &m3, &err) == 0);
	CHECK(err.code == ADAC_E_OK);
	CHECK_EQ_U64(adac_symfile_method_count(sf), 3);
}

/* The model refuses what the writers could not describe. */
static void test_bad_input(struct model *m)
{
	struct adac_error err = {0};
	struct adac_sym_row past[] = {{0x90, 1, 1, 0}};
	struct adac_sym_method bad = {.name = "X.Y()", .unit = 1, .start = 0x1000, .size = 0x80, .nrows = 1, .rows = past};
	int rc = adac_symfile_add_method(m->sf, &bad, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "X.Y(): line row 0 at offset 0x90");
	adac_error_clear(&err);
	struct adac_sym_method nounit = {.name = "X.Z()", .unit = 7, .start = 0x1000, .size = 0x80};
	rc = adac_symfile_add_method(m->sf, &nounit, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "X.Z(): no unit 7");
	adac_error_clear(&err);
	rc = adac_symfile_add_member(m->sf, m->t_pair, "Big", m->t_pair, 8, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "member Big of App.Pair: 16 bytes at offset 8 pass the struct's 16 bytes");
	adac_error_clear(&err);
	CHECK(adac_symfile_dynamic_array_type(m->sf, m->t_int, 0, 2, &err) == 0 && err.code == ADAC_E_BAD_ARG);

	/* Overlapping methods cannot be written. */
	struct adac_symfile *sf = adac_symfile_new(&err);
	uint32_t u = adac_symfile_unit(sf, "a.dll", "", &err);
	struct adac_sym_method a = {.name = "A()", .unit = u, .start = 0x1000, .size = 0x100};
	struct adac_sym_method b = {.name = "B()", .unit = u, .start = 0x1080, .size = 0x10};
	CHECK(adac_symfile_add_method(sf, &a, &err) == 0 && adac_symfile_add_method(sf, &b, &err) == 0);
	uint8_t *image;
	size_t len;
	struct adac_symfile_opts o = {.dwarf_version = 5, .language = DW_LANG_C11};
	adac_error_clear(&err);
	rc = adac_symfile_image(sf, &o, &image, &len, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "B() at 0x1080 overlaps A() (which ends at 0x1100)");
	adac_symfile_free(sf);
}

static Dwarf_Die *function_at(Dwarf *dw, Dwarf_Addr pc, Dwarf_Die *cu, Dwarf_Die *fn)
{
	if (!dwarf_addrdie(dw, pc, cu) || dwarf_child(cu, fn) != 0)
		return NULL;
	do {
		if (dwarf_tag(fn) == DW_TAG_subprogram && dwarf_haspc(fn, pc) == 1)
			return fn;
	} while (dwarf_siblingof(fn, fn) == 0);
	return NULL;
}

/* The first operation of variable `name`'s location at pc (atom), and its number operand. */
static int var_op_at(Dwarf_Die *fn, const char *name, Dwarf_Addr pc, uint8_t *atom, int64_t *number)
{
	Dwarf_Die v;
	if (dwarf_child(fn, &v) != 0)
		return -1;
	do {
		const char *n = dwarf_diename(&v);
		if (!n || strcmp(n, name) != 0)
			continue;
		Dwarf_Attribute a;
		Dwarf_Op *ops;
		size_t nops;
		if (!dwarf_attr(&v, DW_AT_location, &a) || dwarf_getlocation_addr(&a, pc, &ops, &nops, 1) != 1 || nops < 1)
			return -1;
		*atom = ops[0].atom;
		*number = (int64_t)ops[0].number;
		return 0;
	} while (dwarf_siblingof(&v, &v) == 0);
	return -1;
}

static void check_line(Dwarf *dw, Dwarf_Addr pc, const char *file, int line)
{
	Dwarf_Die cu;
	Dwarf_Line *l;
	int got = -1;
	const char *src = NULL;
	if (dwarf_addrdie(dw, pc, &cu) && (l = dwarf_getsrc_die(&cu, pc)) != NULL) {
		dwarf_lineno(l, &got);
		src = dwarf_linesrc(l, NULL, NULL);
	}
	if (got != line || !src || strcmp(src, file) != 0) {
		fprintf(stderr, "line at 0x%llx: %s:%d, want %s:%d\n", (unsigned long long)pc, src ? src : "?", got, file, line);
		check_failures++;
	}
}

/* The CFA rule at pc (cfa_reg + offset, libdw's DW_OP_bregx) and, when reg >= 0, where reg is
 * saved (CFA + at: DW_OP_call_frame_cfa, DW_OP_plus_uconst). */
static void check_cfa(Dwarf *dw, Dwarf_Addr pc, unsigned cfa_reg, int64_t offset, int reg, int64_t at)
{
	Dwarf_CFI *cfi = dwarf_getcfi(dw);
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops, rops[3];
	size_t nops;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame) != 0 || dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1) {
		fprintf(stderr, "no CFA at 0x%llx: %s\n", (unsigned long long)pc, dwarf_errmsg(-1));
		check_failures++;
		free(frame);
		return;
	}
	CHECK(ops[0].atom == DW_OP_bregx && ops[0].number == cfa_reg && (int64_t)ops[0].number2 == offset);
	if (reg >= 0) {
		Dwarf_Op *r = rops;
		CHECK(dwarf_frame_register(frame, reg, rops, &r, &nops) == 0 && nops == 2 && r[0].atom == DW_OP_call_frame_cfa &&
		      r[1].atom == DW_OP_plus_uconst && (int64_t)r[1].number == at);
	}
	free(frame);
}

static void read_back(const char *path, unsigned version)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	CHECK(dw != NULL);
	if (!dw) {
		fprintf(stderr, "%s: %s\n", path, dwarf_errmsg(-1));
		return;
	}
	Dwarf_Die cu, fn;
	if (!function_at(dw, M1 + 0x20, &cu, &fn)) {
		fprintf(stderr, "%s: no function at 0x%llx: %s\n", path, M1 + 0x20, dwarf_errmsg(-1));
		check_failures++;
		dwarf_end(dw);
		close(fd);
		return;
	}
	CHECK_EQ_STR(dwarf_diename(&cu), "app.dll");
	CHECK_EQ_STR(dwarf_diename(&fn), "App.Program.Main(System.String[])");
	Dwarf_Half got_version = 0;
	CHECK(dwarf_cu_info(cu.cu, &got_version, NULL, NULL, NULL, NULL, NULL, NULL) == 0);
	CHECK_EQ_U64(got_version, version);
	check_line(dw, M1 + 0x0, "/src/Program.cs", 10);
	check_line(dw, M1 + 0x1f, "/src/Program.cs", 11);
	check_line(dw, M1 + 0x40, "/src/Program.cs", 13);
	check_line(dw, M2 + 0x4, "/src/Program.cs", 20);
	uint8_t atom = 0;
	int64_t num = 0;
	CHECK(var_op_at(&fn, "i", M1 + 0x20, &atom, &num) == 0 && atom == DW_OP_reg3);
	CHECK(var_op_at(&fn, "i", M1 + 0x50, &atom, &num) == 0 && atom == DW_OP_breg6 && num == -16);
	CHECK(var_op_at(&fn, "i", M1 + 0x08, &atom, &num) != 0); /* not live yet */
	CHECK(var_op_at(&fn, "args", M1 + 0x08, &atom, &num) == 0 && atom == DW_OP_breg6 && num == -8);
	check_cfa(dw, M1 + 0, ADAC_SYM_REG_RSP, 8, ADAC_SYM_REG_RA, -8);
	check_cfa(dw, M1 + 2, ADAC_SYM_REG_RSP, 16, ADAC_SYM_REG_RBP, -16);
	check_cfa(dw, M1 + 0x40, ADAC_SYM_REG_RBP, 16, ADAC_SYM_REG_RBX, -24);
	if (!function_at(dw, M3 + 4, &cu, &fn)) {
		CHECK(!"a function at M3");
		dwarf_end(dw);
		close(fd);
		return;
	}
	CHECK_EQ_STR(dwarf_diename(&cu), "lib.dll");
	CHECK_EQ_STR(dwarf_diename(&fn), "Lib.Box.Get()");
	CHECK(var_op_at(&fn, "this", M3 + 4, &atom, &num) == 0 && atom == DW_OP_breg7 && num == 8);
	CHECK(function_at(dw, M1 + 0x80 + 0x10, &cu, &fn) == NULL); /* between the methods */
	dwarf_end(dw);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s <output dir>\n", argv[0]);
		return 2;
	}
	mkdir(argv[1], 0755);
	struct model m;
	build(&m);
	for (unsigned v = 4; v <= 5; v++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/sym%u.so", argv[1], v);
		struct adac_symfile_opts o = {.dwarf_version = v, .language = DW_LANG_C11, .dynamic_counts = v == 5, .producer = "asyncdac test"};
		struct adac_error err = {0};
		size_t len = 0;
		CHECK(adac_symfile_write(m.sf, &o, path, &len, &err) == 0);
		if (err.code)
			fprintf(stderr, "%s\n", err.msg);
		CHECK(len > 0);
		read_back(path, v);
	}
	test_bad_input(&m);
	adac_symfile_free(m.sf);
	return check_report("test_symfile");
}
