/* read_ahead.h - reads a target front to back in blocks, the next block read on a second thread
 * while the caller works on the current one (a heap walk: the read is a third of its time). */
#ifndef ADAC_READ_AHEAD_H
#define ADAC_READ_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "target/target.h"

struct adac_read_ahead;

/* NULL when the target cannot be read on another thread (adac_target_reads_concurrently), or no
 * thread or memory: then read with adac_read_upto. */
struct adac_read_ahead *adac_read_ahead_new(struct adac_target *t, size_t block);
void adac_read_ahead_free(struct adac_read_ahead *ra);

/* Bytes from at or before addr: *base is the address of (*data)[0], and the count returned reaches
 * at least addr + need unless the target has fewer there; no more than a block, nor past limit.
 * The data stays valid until the next call. Then the block after them (up to limit, else the
 * range adac_read_ahead_next gave) is read ahead. */
size_t adac_read_ahead_get(struct adac_read_ahead *ra, uint64_t addr, size_t need, uint64_t limit,
                           const uint8_t **data, uint64_t *base);
/* Where reading goes on after limit (the next heap region), 0 for nowhere. */
void adac_read_ahead_next(struct adac_read_ahead *ra, uint64_t addr, uint64_t limit);

#endif
