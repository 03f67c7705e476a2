/* stack_groups.h - the stacks `ps` lists, grouped: --coalesce, a tree of the stacks' labels
 * innermost first, each line "[count] <frame>" with the number of stacks sharing it (the first
 * level is what they await), indented only where stacks part and a recursion folded to one line;
 * --stats, counts of frames per method and await state (each continuation or state machine once),
 * of stacks per awaited object, and of tasks per type and status, most frequent first. Both group
 * what stacks await by identity: the object, or the SemaphoreSlim whose waiter it is ("awaiting one
 * SemaphoreSlim 0x... (current count 0, 7000 waiters)", "awaiting one Task<Int32> 0x...",
 * "awaiting 500 distinct Task<Int32> (promise never completed)"). */
#ifndef ADAC_STACK_GROUPS_H
#define ADAC_STACK_GROUPS_H

#include <stdbool.h>

#include "base/error.h"

struct adac_pending_list;
struct adac_out;

enum adac_stack_grouping {
	ADAC_GROUP_COALESCE,
	ADAC_GROUP_STATS,
	ADAC_GROUP_FOLDED,   /* "outermost;...;innermost;awaiting X <count>" per distinct stack */
	ADAC_GROUP_DOT,      /* the await graph in Graphviz DOT, boxes of shared frames (Parallel Stacks) */
};

/* Lists the stacks grouped, between the listing's warnings and its summary (coalesce, stats), or
 * as {"schema": 1, "ps": {"coalesce" | "stats", "summary", ...}}; folded stacks and DOT alone. */
int adac_stack_groups_print(struct adac_pending_list *l, enum adac_stack_grouping how, bool json, struct adac_out *out,
                            struct adac_error *err);

/* Report's findings: "shared: <n> chains await one <type> 0x... (...)" per awaited object (or
 * SemaphoreSlim whose waiters they are) that several listed stacks await, most awaited first;
 * adds their number to *found. */
int adac_stack_groups_shared(struct adac_pending_list *l, struct adac_out *out, size_t *found, struct adac_error *err);

#endif
