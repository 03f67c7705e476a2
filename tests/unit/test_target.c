/* test_target.c - the block cache and typed reads of dac/target/target.c, over the memory backend;
 * modules from file mappings; the backends' pread loop (target/pread.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../check.h"
#include "target/target.h"
#include "target/target_mem.h"

static void test_reads(void)
{
	struct adac_memimg *img = adac_memimg_new();
	/* Two readable ranges with a hole between them, crossing block boundaries. */
	uint8_t a[10000], b[300];
	for (size_t i = 0; i < sizeof a; i++)
		a[i] = (uint8_t)(i * 7);
	memset(b, 0xab, sizeof b);
	adac_memimg_add(img, 0x10000, a, sizeof a);   /* 0x10000 .. 0x12710 */
	adac_memimg_add(img, 0x20000, b, sizeof b);
	const char str[] = "hello, target";
	adac_memimg_add(img, 0x30000, str, sizeof str);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	CHECK(t != NULL);

	uint8_t buf[10000];
	CHECK(adac_read(t, 0x10000, buf, sizeof a, &err) == 0);
	CHECK(memcmp(buf, a, sizeof a) == 0);
	/* Cross-block read in the middle. */
	CHECK(adac_read(t, 0x10ff8, buf, 16, &err) == 0);
	CHECK(memcmp(buf, a + 0xff8, 16) == 0);
	/* Short read at the end of the range: all-or-nothing fails naming the address. */
	int rc = adac_read(t, 0x12700, buf, 64, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "cannot read 64 bytes at 0x12700 (got 16)");
	CHECK_EQ_U64(err.addr, 0x12710);
	CHECK_EQ_U64(adac_read_upto(t, 0x12700, buf, 64), 16);
	/* Unreadable address. */
	adac_error_clear(&err);
	uint64_t v;
	rc = adac_read_u64(t, 0x50000, &v, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "cannot read 8 bytes at 0x50000 (got 0)");
	/* Typed reads. */
	uint32_t u32;
	CHECK(adac_read_u32(t, 0x20000, &u32, &err) == 0 && u32 == 0xabababab);
	CHECK(adac_read_ptr(t, 0x20008, &v, &err) == 0 && v == 0xababababababababull);
	adac_target_set_ptr_size(t, 4);
	CHECK(adac_read_ptr(t, 0x20008, &v, &err) == 0 && v == 0xabababab);
	adac_target_set_ptr_size(t, 8);
	/* Strings. */
	char *s = adac_read_cstring(t, 0x30000, 64, &err);
	CHECK_EQ_STR(s, "hello, target");
	free(s);
	adac_error_clear(&err);
	s = adac_read_cstring(t, 0x30000, 5, &err);
	CHECK(s == NULL);
	CHECK_ERR(-1, &err, ADAC_E_LIMIT, "longer than 5 bytes");
	adac_error_clear(&err);
	s = adac_read_cstring(t, 0x20000, 1000, &err); /* runs off the end without a NUL */
	CHECK(s == NULL);
	CHECK_ERR(-1, &err, ADAC_E_READ, "cannot read the string at 0x20000");

	/* Cache: reading the same block again costs no backend read. */
	adac_target_invalidate(t);
	adac_target_reset_stats(t);
	CHECK(adac_read_u64(t, 0x10100, &v, &err) == 0);
	CHECK(adac_read_u64(t, 0x10200, &v, &err) == 0);
	CHECK(adac_read_u64(t, 0x10ff0, &v, &err) == 0);
	struct adac_read_stats st;
	adac_target_stats(t, &st);
	CHECK_EQ_U64(st.backend_reads, 1);
	CHECK_EQ_U64(st.blocks_fetched, 1);
	CHECK_EQ_U64(st.cache_hits, 2);
	/* Unreadable blocks are cached too: no second backend read for the same hole. */
	adac_target_reset_stats(t);
	CHECK(adac_read_u64(t, 0x50000, &v, NULL) == -1);
	CHECK(adac_read_u64(t, 0x50008, &v, NULL) == -1);
	adac_target_stats(t, &st);
	CHECK_EQ_U64(st.backend_reads, 1);
	/* Large reads bypass the cache in one backend read. */
	adac_target_reset_stats(t);
	static uint8_t big[70000];
	CHECK_EQ_U64(adac_read_upto(t, 0x10000, big, sizeof big), sizeof a);
	adac_target_stats(t, &st);
	CHECK_EQ_U64(st.backend_reads, 1);
	CHECK_EQ_U64(st.blocks_fetched, 0);
	adac_target_close(t);
}

static void test_modules_threads(void)
{
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add_module(img, "/x/libb.so", 0x200000, 0x210000);
	adac_memimg_add_module(img, "/x/liba.so", 0x100000, 0x110000);
	struct adac_regs r = {{0}};
	r.r[ADAC_REG_RIP] = 0x100123;
	adac_memimg_add_thread(img, 77, &r);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	const struct adac_module *mods;
	size_t n;
	CHECK(adac_target_modules(t, &mods, &n, &err) == 0);
	CHECK_EQ_U64(n, 2);
	CHECK_EQ_STR(mods[0].path, "/x/liba.so"); /* sorted by base */
	CHECK(adac_target_find_module(t, "libb.so", &err) == &mods[1]);
	CHECK(adac_target_module_at(t, 0x10ffff) == &mods[0]);
	CHECK(adac_target_module_at(t, 0x110000) == NULL);
	adac_error_clear(&err);
	CHECK(adac_target_find_module(t, "libc.so", &err) == NULL);
	CHECK_ERR(-1, &err, ADAC_E_NOT_FOUND, "no module named libc.so");
	const struct adac_thread *th;
	CHECK(adac_target_threads(t, &th, &n, &err) == 0 && n == 1 && th[0].tid == 77);
	struct adac_regs got;
	CHECK(adac_target_regs(t, 77, &got, &err) == 0 && got.r[ADAC_REG_RIP] == 0x100123);
	adac_error_clear(&err);
	int rc = adac_target_frames(t, 77, NULL, NULL, &err);
	CHECK_ERR(rc, &err, ADAC_E_UNSUPPORTED, "the memory target cannot unwind threads");
	adac_target_close(t);
}

/* adac_pread_full: all of a file, short at its end, and of a process's memory up to the first
 * byte that cannot be read; -1 only when not even the first could. */
static void test_pread_full(void)
{
	FILE *f = tmpfile();
	CHECK(f != NULL);
	if (!f)
		return;
	uint8_t data[10000], buf[10000];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 13);
	CHECK(fwrite(data, 1, sizeof data, f) == sizeof data && fflush(f) == 0);
	int fd = fileno(f);
	CHECK_EQ_U64(adac_pread_full(fd, buf, sizeof buf, 0), sizeof data);
	CHECK(memcmp(buf, data, sizeof data) == 0);
	CHECK_EQ_U64(adac_pread_full(fd, buf, 64, sizeof data - 10), 10);
	CHECK(memcmp(buf, data + sizeof data - 10, 10) == 0);
	CHECK_EQ_U64(adac_pread_full(fd, buf, 64, sizeof data + 100), 0);
	fclose(f);
	errno = 0;
	CHECK(adac_pread_full(-1, buf, 16, 0) == -1 && errno == EBADF);

	/* Two pages of this process, the second unmapped: the first one's bytes, then nothing. */
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int mem = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (p == MAP_FAILED || mem < 0) {
		fprintf(stderr, "test_pread_full: no /proc/self/mem here, partial reads not checked\n");
	} else {
		memset(p, 0x5a, (size_t)page);
		CHECK(munmap(p + page, (size_t)page) == 0);
		uint8_t *out = malloc(2 * (size_t)page);
		CHECK_EQ_U64(adac_pread_full(mem, out, 2 * (size_t)page, (uint64_t)(uintptr_t)p), (uint64_t)page);
		CHECK(out[0] == 0x5a && out[page - 1] == 0x5a);
		CHECK(adac_pread_full(mem, out, 16, (uint64_t)(uintptr_t)(p + page)) == -1);
		free(out);
		munmap(p, (size_t)page);
	}
	if (mem >= 0)
		close(mem);
}

/* A backend reading in bulk (ops->read_ahead): 40 KiB readable at AHEAD_BASE, nothing else. */
#define AHEAD_BASE 0x100000u
#define AHEAD_BYTES (10u * 4096u)
static uint8_t ahead_bytes[AHEAD_BYTES];

static int64_t ahead_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	(void)impl;
	(void)err;
	if (addr < AHEAD_BASE || addr >= AHEAD_BASE + AHEAD_BYTES)
		return 0;
	size_t n = AHEAD_BASE + AHEAD_BYTES - addr;
	n = n < len ? n : len;
	memcpy(buf, ahead_bytes + (addr - AHEAD_BASE), n);
	return (int64_t)n;
}

static size_t ahead_read_concurrent(void *impl, uint64_t addr, void *buf, size_t len)
{
	int64_t n = ahead_read(impl, addr, buf, len, NULL);
	return n > 0 ? (size_t)n : 0;
}

static int ahead_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl, (void)cb, (void)ctx, (void)err;
	return 0;
}

static int ahead_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl, (void)cb, (void)ctx, (void)err;
	return 0;
}

static int ahead_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	(void)impl, (void)tid, (void)regs;
	return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "no threads");
}

/* A miss reads the pages ahead too, in one backend read (read_concurrent: the backend's own
 * bytes); those past what it has are not kept (a later read of them asks the backend again, and
 * fails as without read-ahead). */
static void test_read_ahead(void)
{
	static const struct adac_target_ops ops = {.kind = "ahead", .read = ahead_read, .read_ahead = 16,
	                                           .read_concurrent = ahead_read_concurrent,
	                                           .modules = ahead_modules, .threads = ahead_threads, .regs = ahead_regs};
	for (size_t i = 0; i < AHEAD_BYTES; i++)
		ahead_bytes[i] = (uint8_t)(i * 13 + i / 4096);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_new(&ops, NULL, &err);
	CHECK(t != NULL);
	if (!t)
		return;
	uint64_t v, want;
	struct adac_read_stats st;
	CHECK(adac_read_u64(t, AHEAD_BASE + 8, &v, &err) == 0);
	memcpy(&want, ahead_bytes + 8, 8);
	CHECK_EQ_U64(v, want);
	adac_target_stats(t, &st);
	CHECK_EQ_U64(st.backend_reads, 1);
	CHECK_EQ_U64(st.blocks_fetched, 10);
	/* The last page, read ahead: no backend read. */
	CHECK(adac_read_u64(t, AHEAD_BASE + AHEAD_BYTES - 8, &v, &err) == 0);
	memcpy(&want, ahead_bytes + AHEAD_BYTES - 8, 8);
	CHECK_EQ_U64(v, want);
	adac_target_stats(t, &st);
	CHECK_EQ_U64(st.backend_reads, 1);
	/* Past it: the read ahead gets nothing, so the page alone is asked for (through read: where
	 * a backend looks for bytes it lacks), and is unreadable as the backend says. */
	CHECK_ERR(adac_read_u64(t, AHEAD_BASE + AHEAD_BYTES, &v, &err), &err, ADAC_E_READ,
	          "cannot read 8 bytes at 0x10a000 (got 0)");
	adac_target_stats(t, &st);
	CHECK_EQ_U64(st.backend_reads, 3);
	adac_target_close(t);
}

/* A backend that reads through another target (as the LLDB plugin reads a core through dac/'s core
 * reader): both targets fill their caches on one thread, the inner one while the outer one's fill
 * waits for its bytes. Each has its own fill buffer: a shared one gave the outer read the inner
 * fill's last blocks, shifted. */
static int64_t through_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	(void)err;
	return (int64_t)adac_read_upto(impl, addr, buf, len);
}

static void test_nested_targets(void)
{
	struct adac_memimg *img = adac_memimg_new();
	static uint8_t bytes[6 * 4096];
	for (size_t i = 0; i < sizeof bytes; i++)
		bytes[i] = (uint8_t)(i * 31 + i / 4096);
	adac_memimg_add(img, 0x40000, bytes, sizeof bytes);
	struct adac_error err = {0};
	struct adac_target *inner = adac_target_open_memory(img, &err);
	static const struct adac_target_ops ops = {.kind = "through", .read = through_read,
	                                           .modules = ahead_modules, .threads = ahead_threads, .regs = ahead_regs};
	struct adac_target *outer = inner ? adac_target_new(&ops, inner, &err) : NULL;
	CHECK(outer != NULL);
	if (outer) {
		/* The inner target has the second page already; the read spans pages 1 to 3. */
		uint8_t buf[3 * 4096];
		CHECK(adac_read(inner, 0x41000 + 100, buf, 8, &err) == 0);
		CHECK(adac_read(outer, 0x40fe0, buf, sizeof buf, &err) == 0);
		CHECK(memcmp(buf, bytes + 0xfe0, sizeof buf) == 0);
		adac_target_close(outer);
	}
	adac_target_close(inner);
}

/* Modules from file mappings: an assembly the runtime maps twice (an image with gaps, flat far
 * away) around libcoreclr, whose own mappings are split; a file never mapped at offset 0. */
static void test_file_modules(void)
{
	struct adac_file_map maps[] = {
		{0x10000, 0x11000, 0, "/rt/System.Console.dll", 0},
		{0x12000, 0x14000, 0, "/rt/System.Console.dll", 0},
		{0x16000, 0x17000, 0x2000, "/rt/System.Console.dll", 0},
		{0x40000, 0x45000, 0, "/rt/libcoreclr.so", 0},
		{0x45000, 0x46000, 0x5000, "/rt/libcoreclr.so", 0},
		{0x46000, 0x50000, 0x6000, "/rt/libcoreclr.so", 0},
		{0x60000, 0x61000, 0x1000, "/data/only-a-part", 0},
		{0x70000, 0x73000, 0, "/rt/System.Console.dll", 0},
	};
	size_t n = sizeof maps / sizeof *maps;
	CHECK(adac_file_maps_number(maps, n) == 3);
	/* Numbered in the order of the paths (strcmp: "S" before "l"). */
	CHECK(maps[0].file == 1 && maps[2].file == 1 && maps[7].file == 1);
	CHECK(maps[3].file == 2 && maps[5].file == 2 && maps[6].file == 0);
	uint64_t base[3], end[3];
	adac_file_modules(maps, n, 3, base, end);
	CHECK(base[1] == 0x10000 && end[1] == 0x17000);
	CHECK(base[2] == 0x40000 && end[2] == 0x50000);
	CHECK(base[0] == UINT64_MAX);
	CHECK(adac_file_maps_number(maps, 0) == 0);
}

int main(void)
{
	test_reads();
	test_read_ahead();
	test_nested_targets();
	test_modules_threads();
	test_file_modules();
	test_pread_full();
	return check_report("test_target");
}
