/* sync_block.c - SyncBlock contract: the sync table and thin locks. See sync_block.h. */
#include "runtime/sync_block.h"

#include <stdlib.h>

#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

#define SYNC_FIELDS(X)                                     \
	X(ENTRY_SIZE, "SyncTableEntry", NULL, 0)               \
	X(ENTRY_BLOCK, "SyncTableEntry", "SyncBlock", 8)       \
	X(ENTRY_OBJECT, "SyncTableEntry", "Object", 8)         \
	X(CACHE_FREE, "SyncBlockCache", "FreeSyncTableIndex", 4) \
	X(BLOCK_LOCK, "SyncBlock", "Lock", 8)                  \
	X(BLOCK_THIN, "SyncBlock", "ThinLock", 4)

enum {
#define X(id, type, field, width) S_##id,
	SYNC_FIELDS(X)
#undef X
	S_COUNT
};

static const struct adac_field_spec sync_specs[S_COUNT] = {
#define X(id, type, field, width) {type, field, width, true},
	SYNC_FIELDS(X)
#undef X
};

struct sync_state {
	uint32_t off[S_COUNT];
	uint8_t has[S_COUNT];
	uint64_t entries;          /* &SyncTableEntries (a pointer to the table) */
	uint64_t cache;            /* &SyncBlockCache (a pointer to the cache) */
	uint64_t value_offset;     /* SyncBlockValueToObjectOffset */
	uint64_t is_hash_or_index; /* SyncBlockIsHashOrSyncBlockIndex */
	uint64_t is_hash;          /* SyncBlockIsHashCode */
	uint64_t index_mask;       /* SyncBlockIndexMask */
	uint64_t thread_mask;      /* SyncBlockMaskLockThreadId */
	uint64_t level_mask;       /* SyncBlockMaskLockRecursionLevel */
	uint64_t level_shift;      /* SyncBlockRecursionLevelShift */
};

static void free_state(void *p) { free(p); }

static int get_state(struct adac_runtime *rt, struct sync_state **out, struct adac_error *err)
{
	struct sync_state *s = adac_runtime_slot(rt, ADAC_SLOT_SYNC_BLOCK);
	if (s) {
		*out = s;
		return 0;
	}
	if (!adac_desc_contract(rt->desc, "SyncBlock"))
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime has no SyncBlock contract: its locks cannot be read");
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (adac_desc_resolve(rt->desc, sync_specs, S_COUNT, s->off, s->has, err) ||
	    adac_desc_global(rt->desc, "SyncTableEntries", &s->entries, err) ||
	    adac_desc_global(rt->desc, "SyncBlockCache", &s->cache, err) ||
	    adac_desc_global(rt->desc, "SyncBlockValueToObjectOffset", &s->value_offset, err) ||
	    adac_desc_global(rt->desc, "SyncBlockIsHashOrSyncBlockIndex", &s->is_hash_or_index, err) ||
	    adac_desc_global(rt->desc, "SyncBlockIsHashCode", &s->is_hash, err) ||
	    adac_desc_global(rt->desc, "SyncBlockIndexMask", &s->index_mask, err) ||
	    adac_desc_global(rt->desc, "SyncBlockMaskLockThreadId", &s->thread_mask, err) ||
	    adac_desc_global(rt->desc, "SyncBlockMaskLockRecursionLevel", &s->level_mask, err) ||
	    adac_desc_global(rt->desc, "SyncBlockRecursionLevelShift", &s->level_shift, err))
		goto fail;
	if (s->off[S_ENTRY_SIZE] < 2 * adac_target_ptr_size(rt->t) || s->value_offset == 0 || s->value_offset > 8 ||
	    s->level_shift > 31 || !s->thread_mask) {
		adac_fail(err, ADAC_E_CORRUPT, 0,
		          "sync block constants out of range (SyncTableEntry size %u, SyncBlockValueToObjectOffset %llu, "
		          "SyncBlockRecursionLevelShift %llu)", s->off[S_ENTRY_SIZE], (unsigned long long)s->value_offset,
		          (unsigned long long)s->level_shift);
		goto fail;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_SYNC_BLOCK, s, free_state);
	*out = s;
	return 0;
fail:
	free(s);
	adac_error_wrap(err, "SyncBlock contract: ");
	return -1;
}

int adac_header_offset(struct adac_runtime *rt, uint32_t *offset, struct adac_error *err)
{
	struct sync_state *s;
	if (get_state(rt, &s, err))
		return -1;
	*offset = (uint32_t)s->value_offset;
	return 0;
}

static void thin_of(const struct sync_state *s, uint32_t bits, struct adac_thin_lock *out)
{
	out->owner = bits & (uint32_t)s->thread_mask;
	/* The recursion level counts the entries after the first. */
	out->entered = out->owner ? ((bits & (uint32_t)s->level_mask) >> s->level_shift) + 1 : 0;
}

int adac_thin_lock_decode(struct adac_runtime *rt, uint32_t bits, struct adac_thin_lock *out, struct adac_error *err)
{
	struct sync_state *s;
	if (get_state(rt, &s, err))
		return -1;
	thin_of(s, bits, out);
	return 0;
}

int adac_header_decode(struct adac_runtime *rt, uint32_t value, struct adac_header *out, struct adac_error *err)
{
	struct sync_state *s;
	if (get_state(rt, &s, err))
		return -1;
	*out = (struct adac_header){.kind = ADAC_HEADER_THIN_LOCK};
	if (value & (uint32_t)s->is_hash_or_index) {
		out->kind = value & (uint32_t)s->is_hash ? ADAC_HEADER_HASH : ADAC_HEADER_SYNC_INDEX;
		if (out->kind == ADAC_HEADER_SYNC_INDEX)
			out->index = value & (uint32_t)s->index_mask;
		return 0;
	}
	thin_of(s, value, &out->thin);
	return 0;
}

int adac_sync_blocks(struct adac_runtime *rt, adac_sync_entry_cb cb, void *ctx, struct adac_error *err)
{
	struct sync_state *s;
	uint64_t table, cache;
	uint32_t free_index;
	if (get_state(rt, &s, err))
		return -1;
	if (adac_read_ptr(rt->t, s->entries, &table, err) || adac_read_ptr(rt->t, s->cache, &cache, err))
		goto fail;
	if (!table || !cache)
		return 0; /* (no object was ever locked or hashed) */
	if (adac_read_u32(rt->t, cache + s->off[S_CACHE_FREE], &free_index, err))
		goto fail;
	/* FreeSyncTableIndex is one past the last entry ever used; entry 0 is never used. */
	if (free_index > ADAC_MAX_SYNC_BLOCKS)
		return adac_fail(err, ADAC_E_LIMIT, cache, "the sync table has %u entries, more than ADAC_MAX_SYNC_BLOCKS (%u)",
		                 free_index, ADAC_MAX_SYNC_BLOCKS);
	for (uint32_t i = 1; i < free_index; i++) {
		uint64_t at = table + (uint64_t)i * s->off[S_ENTRY_SIZE];
		struct adac_sync_entry e = {.index = i};
		if (adac_read_ptr(rt->t, at + s->off[S_ENTRY_OBJECT], &e.object, err) ||
		    adac_read_ptr(rt->t, at + s->off[S_ENTRY_BLOCK], &e.block, err))
			goto fail;
		if (!e.object || (e.object & 1))
			continue; /* free: the object's slot holds the next free entry, tagged */
		if (e.block) {
			uint64_t handle = 0;
			if (adac_read_ptr(rt->t, e.block + s->off[S_BLOCK_LOCK], &handle, err) ||
			    (handle && adac_read_ptr(rt->t, handle, &e.lock, err)) ||
			    adac_read_u32(rt->t, e.block + s->off[S_BLOCK_THIN], &e.thin_lock, err))
				goto fail;
		}
		int rc = cb(ctx, &e);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	return 0;
fail:
	adac_error_wrap(err, "the sync table: ");
	return -1;
}
