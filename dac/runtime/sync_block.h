/* sync_block.h - SyncBlock contract: the sync table (each object given a sync block, and the state of
 * the Monitor it holds: a managed System.Threading.Lock once the lock was contended, else thin-lock
 * bits) and the thin lock an object's header holds while nobody contends for it. */
#ifndef ADAC_SYNC_BLOCK_H
#define ADAC_SYNC_BLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* A sync table entry in use. */
struct adac_sync_entry {
	uint32_t index;       /* in the sync table (what the object's header holds) */
	uint64_t object;      /* the object it belongs to */
	uint64_t block;       /* SyncBlock*; 0 when the entry has none */
	uint64_t lock;        /* the System.Threading.Lock its Monitor uses (SyncBlock.Lock's handle), 0 when
	                       * none yet */
	uint32_t thin_lock;   /* SyncBlock.ThinLock: the Monitor's thin-lock bits while it has no Lock */
};

typedef int (*adac_sync_entry_cb)(void *ctx, const struct adac_sync_entry *e);

/* Each entry of the sync table in use (free ones are skipped), up to ADAC_MAX_SYNC_BLOCKS; cb returns
 * non-zero to stop. -1 with err when the table cannot be read (ADAC_E_LAYOUT: a runtime without the
 * contract). */
int adac_sync_blocks(struct adac_runtime *rt, adac_sync_entry_cb cb, void *ctx, struct adac_error *err);

/* Who holds a thin lock: the managed thread id (Thread.Id) and how many times it entered it. */
struct adac_thin_lock {
	uint32_t owner;       /* 0: not held */
	uint32_t entered;     /* 1 when entered once */
};

/* What an object header's sync block value holds. */
enum adac_header_kind {
	ADAC_HEADER_THIN_LOCK,  /* thin-lock bits (owner 0: no lock held) */
	ADAC_HEADER_HASH,       /* the object's hash code */
	ADAC_HEADER_SYNC_INDEX, /* the index of its sync table entry */
};
struct adac_header {
	enum adac_header_kind kind;
	uint32_t index;               /* ADAC_HEADER_SYNC_INDEX */
	struct adac_thin_lock thin;   /* ADAC_HEADER_THIN_LOCK */
};

/* Decodes an object header's sync block value; -1 with err when the runtime does not describe it. */
int adac_header_decode(struct adac_runtime *rt, uint32_t value, struct adac_header *out, struct adac_error *err);
/* Decodes SyncBlock.ThinLock. */
int adac_thin_lock_decode(struct adac_runtime *rt, uint32_t bits, struct adac_thin_lock *out, struct adac_error *err);
/* Bytes before an object's address where its header's sync block value lies (4 on x64). */
int adac_header_offset(struct adac_runtime *rt, uint32_t *offset, struct adac_error *err);

#endif
