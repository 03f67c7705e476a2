/* test_symbols.c - symbol paths (target/symbols.c), SSQP keys and file:// stores
 * (target/symbol_store.c), PE identity (target/pe_image.c), and finding a PDB through a symbol
 * path (metadata/pdb_find.c) on the assemblies of tests/data/pdb. HTTP servers and debuginfod are
 * exercised by the integration test `symbols`.
 *
 *   test_symbols <tests/data/pdb> */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../check.h"
#include "metadata/pdb.h"
#include "metadata/pdb_find.h"
#include "target/pe_image.h"
#include "target/symbol_store.h"
#include "target/symbols.h"

static char tmp[] = "/tmp/adac-symbols-XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", tmp, rel);
	for (char *p = path + strlen(tmp) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0777);
			*p = '/';
		}
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_keys(void)
{
	/* The SSQP key conventions' examples (dotnet/symstore, SSQP_Key_Conventions.md). */
	char key[256];
	struct adac_error err = {0};
	CHECK(adac_ssqp_key_pe("Foo.exe", 0x542d5742, 0x32000, key, sizeof key, &err) == 0);
	CHECK_EQ_STR(key, "foo.exe/542D574232000/foo.exe");
	static const uint8_t guid[20] = {0xf6, 0x72, 0x7b, 0x49, 0x0a, 0x39, 0xfc, 0x44, 0x87, 0x8e,
	                                 0x5a, 0x2d, 0x63, 0xb6, 0xcc, 0x4b, 1, 2, 3, 4};
	CHECK(adac_ssqp_key_portable_pdb("Foo.pdb", guid, key, sizeof key, &err) == 0);
	CHECK_EQ_STR(key, "foo.pdb/497b72f6390a44fc878e5a2d63b6cc4bFFFFFFFF/foo.pdb");
	static const uint8_t id[20] = {0x18, 0x0a, 0x37, 0x3d, 0x6a, 0xfb, 0xab, 0xf0, 0xeb, 0x1f,
	                               0x09, 0xbe, 0x1b, 0xc4, 0x5b, 0xd7, 0x96, 0xa7, 0x10, 0x85};
	CHECK(adac_ssqp_key_elf("foo.so", id, 20, key, sizeof key, &err) == 0);
	CHECK_EQ_STR(key, "foo.so/elf-buildid-180a373d6afbabf0eb1f09be1bc45bd796a71085/foo.so");
	CHECK(adac_ssqp_key_elf_debug(id, 20, key, sizeof key, &err) == 0);
	CHECK_EQ_STR(key, "_.debug/elf-buildid-sym-180a373d6afbabf0eb1f09be1bc45bd796a71085/_.debug");
	CHECK(adac_ssqp_key_elf_debug(id, 16, key, sizeof key, &err) == 0);
	CHECK_EQ_STR(key, "_.debug/elf-buildid-sym-180a373d6afbabf0eb1f09be1bc45bd700000000/_.debug");
	/* Names from the target that are not plain file names are never asked for. */
	int rc = adac_ssqp_key_pe("../etc/passwd", 1, 2, key, sizeof key, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "'../etc/passwd' is not a file name a symbol store can be asked for");
	adac_error_clear(&err);
	rc = adac_ssqp_key_elf("x", id, 21, key, sizeof key, &err);
	CHECK_ERR(rc, &err, ADAC_E_BAD_ARG, "a 21-byte build-id has no symbol store key");
	adac_error_clear(&err);
	rc = adac_ssqp_key_pe("nested.dll", 1, 2, key, 10, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "symbol store key longer than 10 bytes");
}

static void test_parse_errors(void)
{
	static const struct {
		const char *spec, *message;
	} bad[] = {
		{"/a:srv*", "symbol path: 'srv*' is not srv*CACHE*URL or srv*URL"},
		{"srv*/c*/d*http://x", "symbol path: 'srv*/c*/d*http://x' is not srv*CACHE*URL or srv*URL"},
		{"srv**http://x", "symbol path: 'srv**http://x' is not srv*CACHE*URL or srv*URL"},
		{"srv*/c*ftp://x", "symbol path: 'ftp://x': a symbol server is an http://, https:// or file:// URL"},
		{"srv*file://rel/dir", "symbol path: 'file://rel/dir': a file:// URL needs an absolute path"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct adac_error err = {0};
		struct adac_symbols *s = adac_symbols_new(bad[i].spec, &err);
		CHECK_ERR(s ? 0 : -1, &err, ADAC_E_BAD_ARG, bad[i].message);
		adac_symbols_free(s);
	}
	char many[ADAC_MAX_SYMBOL_PATH_ENTRIES * 3 + 8] = "";
	for (unsigned i = 0; i <= ADAC_MAX_SYMBOL_PATH_ENTRIES; i++)
		strcat(many, "/d:");
	struct adac_error err = {0};
	struct adac_symbols *s = adac_symbols_new(many, &err);
	CHECK_ERR(s ? 0 : -1, &err, ADAC_E_LIMIT, "more than ADAC_MAX_SYMBOL_PATH_ENTRIES (64) entries");
	adac_symbols_free(s);
	/* Empty entries are skipped; an empty path finds nothing and says so. */
	adac_error_clear(&err);
	s = adac_symbols_new("::;", &err);
	CHECK(s != NULL);
	struct adac_symbol_want w = {.name = "x"};
	struct adac_symbol_found f;
	CHECK_ERR(adac_symbols_find(s, &w, &f, &err), &err, ADAC_E_NOT_FOUND, "no symbol path");
	CHECK_EQ_STR(adac_symbols_spec(s), "::;");
	adac_symbols_free(s);
}

static int refuse_wrong(void *ctx, const char *path, char *why, size_t why_size)
{
	(void)ctx;
	char buf[16] = "";
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(buf, sizeof buf, f))
			buf[0] = '\0';
		fclose(f);
	}
	if (strcmp(buf, "right") == 0)
		return 0;
	snprintf(why, why_size, "holds '%s'", buf);
	return -1;
}

static void found_cb(void *ctx, const char *name, const struct adac_symbol_found *f)
{
	char *list = ctx;
	size_t n = strlen(list);
	snprintf(list + n, 2048 - n, "%s=%s(%s);", name, f->path + strlen(tmp), f->route);
}

static void test_find(void)
{
	/* Directories by name, by key, by build-id; a file:// store by key (as given, then lower-cased). */
	put("a/lib.so", "wrong");
	put("b/lib.so/elf-buildid-0102000000000000000000000000000000000000/lib.so", "right");
	put("c/.build-id/01/02.debug", "right");
	put("store/Lib.pdb/ABCFFFFFFFF/Lib.pdb", "right");
	put("store/other.pdb/abcffffffff/other.pdb", "right");
	char spec[1024];
	/* A ':' in a URL (scheme, port) separates nothing; ';' separates too. */
	snprintf(spec, sizeof spec, "%s/a:%s/b;srv*%s/cache*http://127.0.0.1:1/x:%s/c:srv*file://%s/store", tmp, tmp, tmp,
	         tmp, tmp);
	struct adac_error err = {0};
	struct adac_symbols *s = adac_symbols_new(spec, &err);
	CHECK(s != NULL);
	if (!s)
		return;
	static const uint8_t id[2] = {1, 2};
	struct adac_symbol_want w = {.name = "lib.so",
	                             .key = "lib.so/elf-buildid-0102000000000000000000000000000000000000/lib.so",
	                             .build_id = id, .build_id_len = 2, .check = refuse_wrong};
	struct adac_symbol_found f;
	CHECK(adac_symbols_find(s, &w, &f, &err) == 0);
	CHECK_EQ_STR(f.path + strlen(tmp), "/b/lib.so/elf-buildid-0102000000000000000000000000000000000000/lib.so");
	CHECK_EQ_STR(f.route, "symbol path");
	/* Debug files by build-id in a directory's .build-id/. */
	w = (struct adac_symbol_want){.name = "lib.so.dbg", .build_id = id, .build_id_len = 2,
	                              .kind = ADAC_SYMBOL_DEBUG, .check = refuse_wrong};
	CHECK(adac_symbols_find(s, &w, &f, &err) == 0);
	CHECK_EQ_STR(f.path + strlen(tmp), "/c/.build-id/01/02.debug");
	/* The file:// store: the key as given, else lower-cased. The http:// server before it is
	 * down: what it said is not kept once another route found the file. */
	w = (struct adac_symbol_want){.name = "Lib.pdb", .key = "Lib.pdb/ABCFFFFFFFF/Lib.pdb", .check = refuse_wrong};
	CHECK(adac_symbols_find(s, &w, &f, &err) == 0);
	CHECK_EQ_STR(f.path + strlen(tmp), "/store/Lib.pdb/ABCFFFFFFFF/Lib.pdb");
	char route[128];
	snprintf(route, sizeof route, "symbol server file://%s/store", tmp);
	CHECK_EQ_STR(f.route, route);
	w = (struct adac_symbol_want){.name = "other.pdb", .key = "other.pdb/ABCFFFFFFFF/other.pdb", .check = refuse_wrong};
	CHECK(adac_symbols_find(s, &w, &f, &err) == 0);
	CHECK_EQ_STR(f.path + strlen(tmp), "/store/other.pdb/abcffffffff/other.pdb");
	/* Refused candidates are listed; the server that is down is said. */
	w = (struct adac_symbol_want){.name = "lib.so", .key = "lib.so/elf-buildid-ff/lib.so", .check = refuse_wrong};
	CHECK_ERR(adac_symbols_find(s, &w, &f, &err), &err, ADAC_E_NOT_FOUND, "/a/lib.so holds 'wrong'");
	CHECK(strstr(err.msg, "; http://127.0.0.1:1/x/lib.so/elf-buildid-ff/lib.so: Failed to connect to 127.0.0.1 port 1") !=
	      NULL);
	/* Without a key no symbol server is asked. */
	adac_error_clear(&err);
	w = (struct adac_symbol_want){.name = "nothing.dll"};
	CHECK_ERR(adac_symbols_find(s, &w, &f, &err), &err, ADAC_E_NOT_FOUND,
	          "not in the symbol path (its identity is unknown: symbol servers not asked)");
	/* What was found, each file once. */
	char list[2048] = "";
	adac_symbols_each_found(s, found_cb, list);
	char want[2048];
	snprintf(want, sizeof want,
	         "lib.so=/b/lib.so/elf-buildid-0102000000000000000000000000000000000000/lib.so(symbol path);"
	         "lib.so.dbg=/c/.build-id/01/02.debug(symbol path);Lib.pdb=/store/Lib.pdb/ABCFFFFFFFF/Lib.pdb(%s);"
	         "other.pdb=/store/other.pdb/abcffffffff/other.pdb(%s);", route, route);
	CHECK_EQ_STR(list, want);
	adac_symbols_free(s);

	/* Keys that are not three plain parts never become paths. */
	struct adac_store st = {"file:///", NULL};
	char path[256];
	bool cached;
	adac_error_clear(&err);
	CHECK_ERR(adac_store_get(&st, "../../etc/passwd", path, sizeof path, &cached, &err), &err, ADAC_E_BAD_ARG,
	          "'../../etc/passwd' is not a symbol store key");
	adac_error_clear(&err);
	struct adac_store nocache = {"http://127.0.0.1:1", NULL};
	CHECK_ERR(adac_store_get(&nocache, "a/b/a", path, sizeof path, &cached, &err), &err, ADAC_E_BAD_ARG,
	          "no cache directory to download into");
}

struct file_reader {
	int fd;
};

static int read_fd(void *ctx, uint64_t off, void *buf, size_t len, struct adac_error *err)
{
	struct file_reader *r = ctx;
	if (pread(r->fd, buf, len, (off_t)off) == (ssize_t)len)
		return 0;
	return adac_fail(err, ADAC_E_IO, 0, "short read at %llu", (unsigned long long)off);
}

static void test_pe(const char *root)
{
	char path[512];
	snprintf(path, sizeof path, "%s/nested/nested.dll", root);
	struct file_reader fr = {open(path, O_RDONLY)};
	struct adac_pe_reader r = {read_fd, &fr, false, "nested.dll"};
	struct adac_pe_headers h;
	struct adac_pe_debug d;
	struct adac_error err = {0};
	CHECK(fr.fd >= 0 && adac_pe_read_headers(&r, &h, &err) == 0 && adac_pe_debug_info(&r, &h, &d, &err) == 0);
	CHECK_EQ_U64(h.timestamp, 0xfe2b9e29);
	CHECK_EQ_U64(h.size_of_image, 0x8000);
	CHECK(d.has_codeview && d.portable && !d.has_embedded);
	CHECK_EQ_STR(d.pdb_name, "nested.pdb");
	char hex[41];
	for (int i = 0; i < 20; i++)
		sprintf(hex + 2 * i, "%02x", d.pdb_id[i]);
	CHECK_EQ_STR(hex, "f408912a77d2774bba025fc1dd527aaed24af299");
	close(fr.fd);
	snprintf(path, sizeof path, "%s/embedded/pdbcases.dll", root);
	fr.fd = open(path, O_RDONLY);
	CHECK(fr.fd >= 0 && adac_pe_read_headers(&r, &h, &err) == 0 && adac_pe_debug_info(&r, &h, &d, &err) == 0);
	CHECK(d.has_codeview && d.has_embedded && d.embedded_size > 8);
	close(fr.fd);
	/* Not PE, and cut headers. */
	uint8_t b[512] = {'M', 'Z'};
	CHECK_ERR(adac_pe_parse_headers(b, 8, "x", &h, &err), &err, ADAC_E_NOT_FOUND, "x is not a PE image");
	adac_error_clear(&err);
	b[0x3c] = 0x80;
	memcpy(b + 0x80, "PE\0\0", 4);
	b[0x80 + 20] = 0xf0; /* SizeOfOptionalHeader 240, past the 512 bytes given */
	b[0x80 + 21] = 0x01;
	CHECK_ERR(adac_pe_parse_headers(b, sizeof b, "x", &h, &err), &err, ADAC_E_CORRUPT,
	          "x: the PE optional header is cut");
}

static void test_pdb_through_symbols(const char *root)
{
	char dll[512], spec[512];
	struct adac_error err = {0};
	/* pdbcases.dll alone: its PDB is in another directory of the symbol path. */
	snprintf(dll, sizeof dll, "%s/nopdb/pdbcases.dll", root);
	snprintf(spec, sizeof spec, "%s/nested:%s/portable", root, root);
	struct adac_symbols *s = adac_symbols_new(spec, &err);
	struct adac_pdb *p = adac_pdb_open_for_assembly(dll, s, &err);
	char want[600];
	snprintf(want, sizeof want, "%s/portable/pdbcases.pdb (symbol path)", root);
	CHECK(p != NULL && strcmp(adac_pdb_origin(p), want) == 0);
	adac_pdb_close(p);
	/* The Debug nested.dll beside the Release PDB: refused there, found in the symbol path. */
	snprintf(dll, sizeof dll, "%s/mismatch/nested.dll", root);
	p = adac_pdb_open_for_assembly(dll, s, &err);
	snprintf(want, sizeof want, "%s/nested/nested.pdb (symbol path)", root);
	CHECK(p != NULL && strcmp(adac_pdb_origin(p), want) == 0);
	adac_pdb_close(p);
	adac_symbols_free(s);
	/* Only the mismatched one: refused beside it (said once, though the symbol path has it too). */
	snprintf(spec, sizeof spec, "%s/mismatch", root);
	s = adac_symbols_new(spec, &err);
	p = adac_pdb_open_for_assembly(dll, s, &err);
	snprintf(want, sizeof want,
	         "no PDB for nested.dll: %s/mismatch/nested.pdb does not match it (PDB id 411a8fa9622d254c8947f2b82846a795960a9fe7,"
	         " the assembly wants f408912a77d2774bba025fc1dd527aaed24af299); not in the symbol path",
	         root);
	CHECK_ERR(p ? 0 : -1, &err, ADAC_E_NOT_FOUND, want);
	adac_symbols_free(s);
	/* None anywhere: the message says the symbol path was looked through. */
	adac_error_clear(&err);
	snprintf(dll, sizeof dll, "%s/nopdb/pdbcases.dll", root);
	snprintf(spec, sizeof spec, "%s/classic", root);
	s = adac_symbols_new(spec, &err);
	p = adac_pdb_open_for_assembly(dll, s, &err);
	CHECK_ERR(p ? 0 : -1, &err, ADAC_E_NOT_FOUND,
	          "no PDB for pdbcases.dll: not in the symbol path");
	adac_symbols_free(s);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !mkdtemp(tmp)) {
		fprintf(stderr, "usage: test_symbols <tests/data/pdb>\n");
		return 2;
	}
	test_keys();
	test_parse_errors();
	test_find();
	test_pe(argv[1]);
	test_pdb_through_symbols(argv[1]);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return check_report("test_symbols");
}
