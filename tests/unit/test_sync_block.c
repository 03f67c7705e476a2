/* test_sync_block.c - the SyncBlock contract (runtime/sync_block.c) over a synthetic sync table in a
 * memory target, laid out with the real .NET 11.0.0 x64 descriptor (argv[1]): entries in use (a
 * sync block with a Lock handle, one with thin-lock bits, one with neither, one without a block),
 * free entries (the object's slot tagged with bit 0), an empty table, the ADAC_MAX_SYNC_BLOCKS cap,
 * an unreadable table; and the decoding of object headers (thin lock, hash code, sync index) and of
 * SyncBlock.ThinLock with the descriptor's masks. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "runtime/sync_block.h"
#include "testmem.h"

enum { P_SYNC_TABLE_ENTRIES = 24, P_SYNC_BLOCK_CACHE = 40 };

#define GLOBALS 0x10000000ull  /* the two globals: g_pSyncTable and SyncBlockCache::s_pSyncBlockCache */
#define TABLE 0x20000000ull
#define CACHE 0x21000000ull
#define BLOCKS 0x22000000ull
#define HANDLES 0x23000000ull

static struct adac_runtime *sync_runtime(void)
{
	uint64_t pdata[P_COUNT] = {0};
	pdata[P_SYNC_TABLE_ENTRIES] = GLOBALS;
	pdata[P_SYNC_BLOCK_CACHE] = GLOBALS + 8;
	return runtime_with(mem_target(), real_descriptor(pdata, NULL, NULL));
}

static void close_runtime(struct adac_runtime *rt)
{
	struct adac_target *t = rt->t;
	adac_runtime_close(rt);
	adac_target_close(t);
	mem_reset();
}

struct seen {
	struct adac_sync_entry e[8];
	size_t n;
};

static int collect(void *ctx, const struct adac_sync_entry *e)
{
	struct seen *s = ctx;
	if (s->n < 8)
		s->e[s->n++] = *e;
	return 0;
}

/* A sync table one page long whose FreeSyncTableIndex is free_index: entry i at TABLE + 16 i. */
static void table(uint32_t free_index)
{
	mem_region(GLOBALS, 0x1000);
	mem_region(TABLE, 0x1000);
	mem_region(CACHE, 0x1000);
	mem_region(BLOCKS, 0x1000);
	mem_region(HANDLES, 0x1000);
	w64(GLOBALS, TABLE);
	w64(GLOBALS + 8, CACHE);
	w32(CACHE + F("SyncBlockCache", "FreeSyncTableIndex"), free_index);
}

static void entry(uint32_t i, uint64_t object, uint64_t block)
{
	uint64_t at_ = TABLE + (uint64_t)i * F("SyncTableEntry", NULL);
	w64(at_ + F("SyncTableEntry", "Object"), object);
	w64(at_ + F("SyncTableEntry", "SyncBlock"), block);
}

static void test_table(void)
{
	table(6);
	/* 1: a block whose Monitor has a Lock (its handle holds the Lock object). */
	entry(1, 0x7000001000ull, BLOCKS);
	w64(BLOCKS + F("SyncBlock", "Lock"), HANDLES);
	w64(HANDLES, 0x7000002000ull);
	/* 2: free (the object slot holds the next free entry, tagged). */
	entry(2, (3u << 1) | 1, 0);
	/* 3: thin-lock bits kept in the block: thread 9, entered 3 times. */
	entry(3, 0x7000003000ull, BLOCKS + 0x100);
	w32(BLOCKS + 0x100 + F("SyncBlock", "ThinLock"), 9u | (2u << 16));
	/* 4: a block with neither (hashed, never locked). */
	entry(4, 0x7000004000ull, BLOCKS + 0x200);
	/* 5: an object without a block. */
	entry(5, 0x7000005000ull, 0);
	struct adac_runtime *rt = sync_runtime();
	struct seen s = {0};
	struct adac_error err = {0};
	CHECK(adac_sync_blocks(rt, collect, &s, &err) == 0);
	CHECK_EQ_U64(s.n, 4);
	CHECK_EQ_U64(s.e[0].index, 1);
	CHECK_EQ_U64(s.e[0].object, 0x7000001000ull);
	CHECK_EQ_U64(s.e[0].block, BLOCKS);
	CHECK_EQ_U64(s.e[0].lock, 0x7000002000ull);
	CHECK_EQ_U64(s.e[1].index, 3);
	CHECK_EQ_U64(s.e[1].lock, 0);
	CHECK_EQ_U64(s.e[1].thin_lock, 9u | (2u << 16));
	struct adac_thin_lock thin;
	CHECK(adac_thin_lock_decode(rt, s.e[1].thin_lock, &thin, &err) == 0);
	CHECK_EQ_U64(thin.owner, 9);
	CHECK_EQ_U64(thin.entered, 3);
	CHECK_EQ_U64(s.e[2].index, 4);
	CHECK_EQ_U64(s.e[2].lock | s.e[2].thin_lock, 0);
	CHECK_EQ_U64(s.e[3].index, 5);
	CHECK_EQ_U64(s.e[3].block, 0);
	close_runtime(rt);
}

static void test_headers(void)
{
	table(1);
	struct adac_runtime *rt = sync_runtime();
	struct adac_error err = {0};
	struct adac_header h;
	uint32_t off = 0;
	CHECK(adac_header_offset(rt, &off, &err) == 0);
	CHECK_EQ_U64(off, 4);
	CHECK(adac_header_decode(rt, 0, &h, &err) == 0);
	CHECK(h.kind == ADAC_HEADER_THIN_LOCK && h.thin.owner == 0 && h.thin.entered == 0);
	CHECK(adac_header_decode(rt, 5u | (1u << 16), &h, &err) == 0); /* thread 5, entered twice */
	CHECK(h.kind == ADAC_HEADER_THIN_LOCK && h.thin.owner == 5 && h.thin.entered == 2);
	CHECK(adac_header_decode(rt, 0x08000000u | 0x04000000u | 0x1234u, &h, &err) == 0);
	CHECK(h.kind == ADAC_HEADER_HASH);
	CHECK(adac_header_decode(rt, 0x08000000u | 42u, &h, &err) == 0);
	CHECK(h.kind == ADAC_HEADER_SYNC_INDEX && h.index == 42);
	/* Bits above the masks (the finalizer-run bit) do not make a lock. */
	CHECK(adac_header_decode(rt, 0x40000000u, &h, &err) == 0);
	CHECK(h.kind == ADAC_HEADER_THIN_LOCK && h.thin.owner == 0);
	close_runtime(rt);
}

static void test_failures(void)
{
	/* No object ever locked or hashed: no table yet. */
	mem_region(GLOBALS, 0x1000);
	struct adac_runtime *rt = sync_runtime();
	struct seen s = {0};
	struct adac_error err = {0};
	CHECK(adac_sync_blocks(rt, collect, &s, &err) == 0);
	CHECK_EQ_U64(s.n, 0);
	close_runtime(rt);
	/* A FreeSyncTableIndex past the cap. */
	table(ADAC_MAX_SYNC_BLOCKS + 1);
	rt = sync_runtime();
	adac_error_clear(&err);
	int rc = adac_sync_blocks(rt, collect, &s, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "ADAC_MAX_SYNC_BLOCKS");
	close_runtime(rt);
	/* A table whose entries cannot be read past its first page: entries up to there, then the error. */
	table(1000);
	entry(1, 0x7000001000ull, 0);
	rt = sync_runtime();
	memset(&s, 0, sizeof s);
	adac_error_clear(&err);
	rc = adac_sync_blocks(rt, collect, &s, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "the sync table: ");
	CHECK_EQ_U64(s.n, 1);
	close_runtime(rt);
	/* A runtime without the contract. */
	uint64_t pdata[P_COUNT] = {0};
	mem_region(GLOBALS, 0x1000);
	rt = runtime_with(mem_target(), real_descriptor(pdata, "\"SyncBlock\":\"c1\"", "\"SyncBlocx\":\"c1\""));
	adac_error_clear(&err);
	rc = adac_sync_blocks(rt, collect, &s, &err);
	CHECK_ERR(rc, &err, ADAC_E_LAYOUT, "no SyncBlock contract");
	close_runtime(rt);
}

int main(int argc, char **argv)
{
	int rc = layout_from_args(argc, argv);
	if (rc)
		return rc;
	test_table();
	test_headers();
	test_failures();
	adac_desc_free(layout);
	return check_report("test_sync_block");
}
