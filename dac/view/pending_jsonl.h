/* pending_jsonl.h - `ps --jsonl`: the stacks `ps` lists (pending_list.h) as JSON Lines, one stack
 * per line written as it is resolved, each distinct frame and type name described once on a line of
 * its own before the first stack that refers to it (docs/json.md, "ps --jsonl"):
 *   {"schema": 1, "command": "ps", "format": "jsonl"}
 *   {"type": 0, "name": "..."}
 *   {"frame": 0, "kind": "async", "method": "...", ...}
 *   {"chain": 0, "task": {...}, "awaiting": {...}, "frames": [[0, "0x..."], ...]}
 *   {"summary": {...}, "unlisted": [...], "heap_errors": [...], ...}
 * Memory grows with the distinct frames and types, not with the stacks. */
#ifndef ADAC_PENDING_JSONL_H
#define ADAC_PENDING_JSONL_H

#include "base/error.h"

struct adac_pending_list;
struct adac_out;

int adac_pending_print_jsonl(struct adac_pending_list *l, struct adac_out *out, struct adac_error *err);

#endif
