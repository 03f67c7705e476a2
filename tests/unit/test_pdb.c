/* test_pdb.c - the portable PDB reader against System.Reflection.Metadata's reading of the same
 * files (tests/data/pdb/<case>/expected, written by tests/data/pdb/tools/pdbdump), the await lines
 * of the nested sample and of the classic async methods of the mixed sample, PDB lookup (beside,
 * embedded, id mismatch, none), and damaged PDBs.
 *
 *   test_pdb <tests/data/pdb>          run everything
 *   test_pdb --dump <assembly.dll>     print the dump of its PDB */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "asyncdac.h"
#include "code/debuginfo.h"
#include "metadata/pdb.h"
#include "runtime/runtime.h"
#include "testutil.h"

static char *path_of(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);
	snprintf(p, n, "%s/%s", a, b);
	return p;
}

struct dump_ctx {
	struct adac_out *out;
};

static int print_local(void *ctx, uint32_t start, uint32_t end, uint16_t index, uint16_t attributes, const char *name)
{
	struct adac_out *out = ctx;
	adac_print(out, "  scope [0x%04x,0x%04x) local %u %s attr=%u\n", start, end, index, name, attributes);
	return 0;
}

/* The form pdbdump prints. Returns 0, or -1 with err when the reader failed somewhere. */
static int dump_pdb(struct adac_pdb *p, struct adac_out *out, struct adac_error *err)
{
	adac_print(out, "id ");
	for (int i = 0; i < 20; i++)
		adac_print(out, "%02x", adac_pdb_id(p)[i]);
	adac_print(out, "\n");
	for (uint32_t d = 1; d <= adac_pdb_document_count(p); d++) {
		const char *name = adac_pdb_document_name(p, d, err);
		if (!name)
			return -1;
		adac_print(out, "document %u %s\n", d, name);
	}
	for (uint32_t m = 1; m <= adac_pdb_method_count(p); m++) {
		uint32_t token = 0x06000000u | m;
		struct adac_seq_point *sp;
		size_t n;
		if (adac_pdb_sequence_points(p, token, &sp, &n, err) != 0)
			return -1;
		struct buf scopes = {calloc(1, 1), 0};
		struct adac_out sout = {.write = buf_write, .ctx = &scopes};
		int rc = adac_pdb_locals(p, token, print_local, &sout, err);
		/* Async stepping information, when the method has some (printed only with points or scopes,
		 * as pdbdump does). */
		size_t scope_bytes = scopes.n;
		struct adac_pdb_async_step *st = NULL;
		size_t nst = 0;
		uint32_t handler = 0;
		struct adac_error aerr = {0};
		if (rc == 0 && adac_pdb_async_steps(p, token, &handler, &st, &nst, &aerr) == 0) {
			if (handler == ADAC_PDB_NO_CATCH_HANDLER)
				adac_print(&sout, "  async catch=none\n");
			else
				adac_print(&sout, "  async catch=0x%04x\n", handler);
			for (size_t i = 0; i < nst; i++)
				adac_print(&sout, "  await yield=0x%04x resume=0x%04x method=0x%08x\n", st[i].yield_offset,
				           st[i].resume_offset, st[i].resume_method);
			free(st);
		} else if (rc == 0 && aerr.code != ADAC_E_NOT_FOUND) {
			adac_fail(err, aerr.code, aerr.addr, "%s", aerr.msg);
			rc = -1;
		}
		if (rc == 0 && (n || scope_bytes)) {
			adac_print(out, "method 0x%08x\n", token);
			for (size_t i = 0; i < n; i++) {
				if (sp[i].start_line == ADAC_PDB_HIDDEN_LINE)
					adac_print(out, "  il=0x%04x doc=%u hidden\n", sp[i].il_offset, sp[i].document);
				else
					adac_print(out, "  il=0x%04x doc=%u %u:%u-%u:%u\n", sp[i].il_offset, sp[i].document,
					           sp[i].start_line, sp[i].start_column, sp[i].end_line, sp[i].end_column);
			}
			adac_print(out, "%s", scopes.p);
		}
		free(scopes.p);
		free(sp);
		if (rc != 0)
			return -1;
	}
	return 0;
}

static char *find_dll(const char *dir)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return NULL;
	char *found = NULL;
	struct dirent *e;
	while ((e = readdir(dp)) && !found) {
		size_t n = strlen(e->d_name);
		if (n > 4 && strcmp(e->d_name + n - 4, ".dll") == 0)
			found = path_of(dir, e->d_name);
	}
	closedir(dp);
	return found;
}

/* Every case directory with an `expected` dump: the PDB found for its assembly reads the same. */
static int run_srm_cases(const char *root)
{
	DIR *dp = opendir(root);
	CHECK(dp != NULL);
	if (!dp)
		return 0;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		char *dir = path_of(root, e->d_name);
		char *exp_path = path_of(dir, "expected");
		char *want = slurp(exp_path, NULL);
		char *dll = want ? find_dll(dir) : NULL;
		if (want && dll) {
			n++;
			struct adac_error err = {0};
			struct adac_pdb *p = adac_pdb_open_for_assembly(dll, &err);
			struct buf got = {calloc(1, 1), 0};
			struct adac_out out = {.write = buf_write, .ctx = &got};
			if (!p || dump_pdb(p, &out, &err) != 0)
				adac_print(&out, "error: %s\n", err.msg);
			if (strcmp(want, got.p) != 0) {
				fprintf(stderr, "case %s: our reading differs from System.Reflection.Metadata's\n--- expected\n%s"
				        "--- got\n%s", e->d_name, want, got.p);
				check_failures++;
			}
			free(got.p);
			adac_pdb_close(p);
		}
		free(dll);
		free(want);
		free(exp_path);
		free(dir);
	}
	closedir(dp);
	return n;
}

/* The source lines of the ASYNC bounds of the real .NET 11 blobs (tests/data/debuginfo/net11_*,
 * captured from the nested sample whose nested.dll/.pdb are tests/data/pdb/nested) are the lines
 * marked "@await <method>" in targets/dotnet/nested/Program.cs (snapshot: nested/awaits). */
static void test_await_lines(const char *root)
{
	char *dll = path_of(root, "nested/nested.dll");
	char *aw = path_of(root, "nested/awaits");
	char *awaits = slurp(aw, NULL);
	struct adac_error err = {0};
	struct adac_pdb *p = adac_pdb_open_for_assembly(dll, &err);
	CHECK(p != NULL && awaits != NULL);
	int checked = 0;
	for (const char *m = "ABC"; p && awaits && *m; m++) {
		char rel[64];
		snprintf(rel, sizeof rel, "../debuginfo/net11_%c/source", *m);
		char *src_path = path_of(root, rel);
		snprintf(rel, sizeof rel, "../debuginfo/net11_%c/expected", *m);
		char *exp_path = path_of(root, rel);
		char *src = slurp(src_path, NULL), *exp = slurp(exp_path, NULL);
		CHECK(src && exp);
		unsigned token = 0;
		const char *t = src ? strstr(src, "token 0x") : NULL;
		CHECK(t && sscanf(t, "token 0x%x", &token) == 1);
		/* The await line from the snapshot: "<method> <line>". */
		unsigned want_line = 0;
		char key[8] = {*m, ' ', 0};
		for (const char *l = awaits; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (strncmp(l, key, 2) == 0)
				want_line = (unsigned)atoi(l + 2);
		CHECK(want_line != 0);
		int async_bounds = 0;
		for (const char *l = exp ? strstr(exp, "source=ASYNC") : NULL; l; l = strstr(l + 1, "source=ASYNC")) {
			const char *il = l;
			while (il > exp && strncmp(il, "il=", 3) != 0)
				il--;
			unsigned ilo;
			CHECK(sscanf(il, "il=0x%x", &ilo) == 1);
			struct adac_source_line sl;
			adac_error_clear(&err);
			CHECK(adac_pdb_find_line(p, token, ilo, &sl, &err) == 0);
			if (sl.line != want_line || !strstr(sl.file ? sl.file : "", "targets/dotnet/nested/Program.cs")) {
				fprintf(stderr, "await of %c (token 0x%x, IL 0x%x): %s:%u, want Program.cs:%u\n", *m, token, ilo,
				        sl.file ? sl.file : "?", sl.line, want_line);
				check_failures++;
			}
			async_bounds++;
			checked++;
		}
		CHECK(async_bounds >= 1);
		free(src);
		free(exp);
		free(src_path);
		free(exp_path);
	}
	CHECK(checked >= 3);
	adac_pdb_close(p);
	free(awaits);
	free(aw);
	free(dll);
}

/* The classic (state-machine) async methods of MixedClassic.dll (targets/dotnet/mixed/classic,
 * Debug; snapshot in tests/data/pdb/classic): the one await point of each MoveNext, through a
 * runtime, and its source line, which is the line marked "@await <method>" in Classic.cs
 * (snapshot: classic/awaits). System.Reflection.Metadata's reading of the same stepping
 * information is in classic/expected (run_srm_cases). */
static void test_classic_awaits(const char *root)
{
	static const struct {
		uint32_t move_next;   /* the MoveNext of <Method>d__N, per classic/expected's sequence points */
		const char *method;
	} moves[] = {{0x0600000a, "ClassicMiddle"}, {0x06000007, "ClassicLeaf"}, {0x0600000d, "ClassicTop"}};
	char *dll = path_of(root, "classic/MixedClassic.dll");
	char *aw = path_of(root, "classic/awaits");
	char *awaits = slurp(aw, NULL);
	CHECK(awaits != NULL);
	struct adac_runtime *rt = calloc(1, sizeof *rt);
	struct adac_error err = {0};
	for (size_t i = 0; awaits && i < sizeof moves / sizeof moves[0]; i++) {
		unsigned want_line = 0;
		size_t len = strlen(moves[i].method);
		for (const char *l = awaits; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (strncmp(l, moves[i].method, len) == 0 && l[len] == ' ')
				want_line = (unsigned)atoi(l + len + 1);
		CHECK(want_line != 0);
		uint32_t yields[4] = {0}, n = 0;
		adac_error_clear(&err);
		CHECK(adac_pdb_async_yield_offsets(rt, dll, moves[i].move_next, yields, 4, &n, &err) == 0);
		CHECK(n == 1);
		struct adac_source_line sl = {0};
		CHECK(adac_pdb_source_line(rt, dll, moves[i].move_next, yields[0], &sl, &err) == 0);
		if (sl.line != want_line || !strstr(sl.file ? sl.file : "", "targets/dotnet/mixed/classic/Classic.cs")) {
			fprintf(stderr, "await of %s (MoveNext 0x%08x, yield IL 0x%x): %s:%u, want Classic.cs:%u\n", moves[i].method,
			        moves[i].move_next, yields[0], sl.file ? sl.file : "?", sl.line, want_line);
			check_failures++;
		}
	}
	/* max 0: only the count. */
	uint32_t n = 0;
	adac_error_clear(&err);
	CHECK(adac_pdb_async_yield_offsets(rt, dll, 0x0600000a, NULL, 0, &n, &err) == 0 && n == 1);
	/* A kickoff method has no stepping information; a TypeDef token is no method. */
	int rc = adac_pdb_async_yield_offsets(rt, dll, 0x06000001, NULL, 0, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "has no async stepping information for method 0x06000001");
	CHECK(n == 0);
	adac_error_clear(&err);
	rc = adac_pdb_async_yield_offsets(rt, dll, 0x02000002, NULL, 0, &n, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "0x02000002 is not a MethodDef token");
	for (int i = 0; i < ADAC_SLOT_COUNT; i++)
		if (rt->slots[i])
			rt->slot_free[i](rt->slots[i]);
	free(rt);
	free(awaits);
	free(aw);
	free(dll);
}

static void test_lookup(const char *root)
{
	struct adac_error err = {0};
	char *dll = path_of(root, "mismatch/nested.dll");
	struct adac_pdb *p = adac_pdb_open_for_assembly(dll, &err);
	CHECK(p == NULL);
	CHECK_ERR(p ? 0 : -1, &err, ADAC_E_NOT_FOUND,
	          "no PDB for nested.dll: ");
	CHECK_ERR(p ? 0 : -1, &err, ADAC_E_NOT_FOUND,
	          "mismatch/nested.pdb does not match it (PDB id 411a8fa9622d254c8947f2b82846a795960a9fe7, the assembly "
	          "wants f408912a77d2774bba025fc1dd527aaed24af299)");
	free(dll);

	adac_error_clear(&err);
	dll = path_of(root, "nopdb/pdbcases.dll");
	p = adac_pdb_open_for_assembly(dll, &err);
	CHECK_ERR(p ? 0 : -1, &err, ADAC_E_NOT_FOUND, "no PDB for pdbcases.dll (none beside it, none embedded)");
	free(dll);

	adac_error_clear(&err);
	dll = path_of(root, "nopdb/absent.dll");
	p = adac_pdb_open_for_assembly(dll, &err);
	CHECK_ERR(p ? 0 : -1, &err, ADAC_E_NOT_FOUND, "no PDB for absent.dll: cannot open ");
	free(dll);

	adac_error_clear(&err);
	dll = path_of(root, "embedded/pdbcases.dll");
	p = adac_pdb_open_for_assembly(dll, &err);
	CHECK(p != NULL && strstr(adac_pdb_origin(p), "embedded in ") == adac_pdb_origin(p));
	/* Locals by slot and IL offset: innermost scope wins; out of scope is unknown. */
	if (p) {
		CHECK_EQ_STR(adac_pdb_local_name_at(p, 0x06000001, 0, 0x20, &err), "outer");
		CHECK_EQ_STR(adac_pdb_local_name_at(p, 0x06000001, 4, 0x17, &err), "deep");
		CHECK(adac_pdb_local_name_at(p, 0x06000001, 4, 0x30, &err) == NULL);
		CHECK(adac_pdb_local_name_at(p, 0x06000001, 3, 0x17, &err) == NULL);
		struct adac_source_line sl;
		/* 0x13 is hidden: the line is the point before it. */
		CHECK(adac_pdb_find_line(p, 0x06000001, 0x14, &sl, &err) == 0 && sl.line == 17 && sl.column == 17);
		CHECK(adac_pdb_find_line(p, 0x06000003, 0x10, &sl, &err) == 0 && sl.line == 1000);
		CHECK_EQ_STR(sl.file, "/src/pdbcases/Generated.cs");
		int rc = adac_pdb_find_line(p, 0x06000009, 0, &sl, &err);
		CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "has no method 0x06000009");
		adac_error_clear(&err);
		rc = adac_pdb_find_line(p, 0x02000001, 0, &sl, &err);
		CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "0x02000001 is not a MethodDef token");
	}
	adac_pdb_close(p);
	free(dll);

	/* Through a runtime: results (and failures) are cached per assembly path. */
	struct adac_runtime *rt = calloc(1, sizeof *rt);
	dll = path_of(root, "portable/pdbcases.dll");
	struct adac_source_line a, b;
	adac_error_clear(&err);
	CHECK(adac_pdb_source_line(rt, dll, 0x06000002, 0x15, &a, &err) == 0 && a.line == 31);
	CHECK(adac_pdb_source_line(rt, dll, 0x06000002, 0x16, &b, &err) == 0 && b.file == a.file);
	CHECK_EQ_STR(adac_pdb_local_name(rt, dll, 0x06000002, 2, 0x15, &err), "x");
	free(dll);
	dll = path_of(root, "nopdb/pdbcases.dll");
	for (int i = 0; i < 2; i++) {
		adac_error_clear(&err);
		int rc = adac_pdb_source_line(rt, dll, 0x06000001, 0, &a, &err);
		CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "no PDB for pdbcases.dll");
	}
	free(dll);
	for (int i = 0; i < ADAC_SLOT_COUNT; i++)
		if (rt->slots[i])
			rt->slot_free[i](rt->slots[i]);
	free(rt);
}

/* Every prefix and single-byte corruption of a real PDB opens or fails cleanly, and whatever
 * opens can be walked whole (ASan/UBSan builds check the "cleanly"). */
static void test_damaged(const char *root)
{
	char *path = path_of(root, "portable/pdbcases.pdb");
	size_t len;
	uint8_t *img = (uint8_t *)slurp(path, &len);
	CHECK(img != NULL);
	if (!img)
		return;
	struct buf sink = {calloc(1, 1), 0};
	struct adac_out out = {.write = buf_write, .ctx = &sink};
	int opened = 0;
	for (size_t cut = 0; cut < len; cut += 7) {
		struct adac_error err = {0};
		struct adac_pdb *p = adac_pdb_open_image(img, cut, "cut", &err);
		if (p) {
			opened++;
			(void)dump_pdb(p, &out, &err);
		} else {
			CHECK(err.code == ADAC_E_CORRUPT || err.code == ADAC_E_LIMIT || err.code == ADAC_E_UNSUPPORTED);
		}
		adac_pdb_close(p);
		sink.n = 0;
	}
	for (size_t i = 0; i < len; i++) {
		uint8_t save = img[i];
		img[i] ^= (uint8_t)(0x5a + i);
		struct adac_error err = {0};
		struct adac_pdb *p = adac_pdb_open_image(img, len, "flipped", &err);
		if (p)
			(void)dump_pdb(p, &out, &err);
		adac_pdb_close(p);
		img[i] = save;
		sink.n = 0;
	}
	free(sink.p);
	free(img);
	free(path);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--dump") == 0) {
		struct adac_error err = {0};
		struct adac_pdb *p = adac_pdb_open_for_assembly(argv[2], &err);
		struct buf got = {calloc(1, 1), 0};
		struct adac_out out = {.write = buf_write, .ctx = &got};
		if (!p || dump_pdb(p, &out, &err) != 0)
			adac_print(&out, "error: %s\n", err.msg);
		fputs(got.p, stdout);
		free(got.p);
		adac_pdb_close(p);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: test_pdb <tests/data/pdb> | --dump <assembly.dll>\n");
		return 2;
	}
	CHECK(run_srm_cases(argv[1]) >= 4);
	test_await_lines(argv[1]);
	test_classic_awaits(argv[1]);
	test_lookup(argv[1]);
	test_damaged(argv[1]);
	return check_report("test_pdb");
}
