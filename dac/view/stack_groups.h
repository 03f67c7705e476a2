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
struct adac_pending_stack;
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

/* Report's view of the stacks, from one listing: both groupings and the objects several stacks
 * await. _begin before the listing's first stack (the stacks are digested as they resolve), _add
 * with each listed stack, _end after the last (more: what adac_pending_list_next returned last);
 * then any of the rest, in any order. -1 with err when out of memory. */
struct adac_stack_groups;
struct adac_stack_groups *adac_stack_groups_begin(struct adac_pending_list *l, struct adac_out *out,
                                                  struct adac_error *err);
int adac_stack_groups_add(struct adac_stack_groups *sg, const struct adac_pending_stack *st, struct adac_error *err);
int adac_stack_groups_end(struct adac_stack_groups *sg, int more, struct adac_error *err);
/* The deadlock line's text of a listed stack on an await cycle (adac_pending_cycle_text: the digest
 * wrote it while the stack's frames were at hand), NULL when it is on none or memory runs out; free it. */
char *adac_stack_groups_cycle_text(const struct adac_stack_groups *sg, const struct adac_pending_stack *st);
/* One grouping (ADAC_GROUP_COALESCE or ADAC_GROUP_STATS) as `ps` prints it in text, warnings and
 * summary included; or, root not NULL, as `ps --json` has it: root's member "coalesce" or "stats". */
struct json_t;
int adac_stack_groups_render(struct adac_stack_groups *sg, enum adac_stack_grouping how, struct json_t *root,
                             struct adac_error *err);
/* Report's findings: "<n> chains await one <type> 0x... (...)" (its "shared:" lines) to add, per
 * awaited object (or SemaphoreSlim whose waiters they are) that several listed stacks await, most
 * awaited first. */
int adac_stack_groups_shared(struct adac_stack_groups *sg, void (*add)(void *ctx, const char *text), void *ctx,
                             struct adac_error *err);
void adac_stack_groups_free(struct adac_stack_groups *sg);

#endif
