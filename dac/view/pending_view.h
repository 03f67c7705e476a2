/* pending_view.h - the stacks `ps` lists (pending_list.h), as text or JSON. Each stack is
 *   chain #N: [running on thread <tid> (managed thread <id>), ]task <address> <type> [<status>]
 *     awaiting: <address> <type> [<status>] [(<what it is>: async/awaited.h)]
 *     async #0: <address> <module>`<method> + <off> at <file>:<line> [state <n>]
 *     async #1: <box> <module>`<method> at <file>:<line> [classic, state <n>]
 * innermost frame first; a summary line ends the listing. */
#ifndef ADAC_PENDING_VIEW_H
#define ADAC_PENDING_VIEW_H

#include <stdbool.h>

#include "base/error.h"

struct adac_pending;
struct adac_pending_list;
struct adac_out;
struct json_t;
struct adac_pending_stack;

/* Warnings about the scan, each stack as it is resolved, then the summary. flags: ADAC_VIEW_*. */
int adac_pending_print(struct adac_pending_list *l, unsigned flags, struct adac_out *out, struct adac_error *err);
/* {"ps": {"chains": [...], "summary", "unlisted", "heap_errors", "structures_valid",
 * "threads_error"}}, each chain printed as soon as it is resolved (a tree of 10,000 chains would be
 * tens of megabytes of jansson nodes). */
int adac_pending_print_json(struct adac_pending_list *l, unsigned flags, struct adac_out *out, struct adac_error *err);

/* One stack as an element of the listing's "chains" (docs/json.md). */
struct json_t *adac_pending_stack_json(const struct adac_pending_list *l, const struct adac_pending_stack *st,
                                       unsigned flags);
/* What blocks a stack besides what it awaits, as its "chains" element and `ps --jsonl`'s chain line
 * name it: "sync_waits", the threads blocked synchronously on its tasks (an array; NULL when
 * none), and the lock its running chain's thread waits to enter (NULL when none). */
struct json_t *adac_pending_stack_sync_waits_json(const struct adac_pending *p, const struct adac_pending_stack *st);
struct adac_held_lock;
const struct adac_held_lock *adac_pending_stack_lock_wait(const struct adac_pending *p,
                                                          const struct adac_pending_stack *st);
/* ... and the Monitor.Wait its running chain's thread is in (NULL when none). */
struct adac_monitor_wait;
const struct adac_monitor_wait *adac_pending_stack_monitor_wait(const struct adac_pending *p,
                                                                const struct adac_pending_stack *st);
/* ... and the ManualResetEventSlim.Wait its running chain's thread is in: its Condition wait, and
 * "in ManualResetEventSlim.Wait on System.Threading.ManualResetEventSlim 0x...[, timeout N ms]" in buf
 * (NULL when none); as JSON {"event", "condition", "timeout_ms"}. */
struct adac_condition_wait;
const struct adac_condition_wait *adac_pending_stack_event_wait(const struct adac_pending *p,
                                                                const struct adac_pending_stack *st, char *buf,
                                                                size_t size);
struct json_t *adac_pending_event_wait_json(const struct adac_pending *p, const struct adac_condition_wait *c);
/* ... and the synchronous wait for a task its running chain's thread is in (NULL when none), and that
 * as JSON {"task", "waiter"}. */
const struct adac_sync_wait *adac_pending_stack_thread_sync_wait(const struct adac_pending *p,
                                                                 const struct adac_pending_stack *st);
struct json_t *adac_pending_thread_sync_wait_json(const struct adac_sync_wait *w);
/* ... and the threads waiting for each other through one of its tasks (async/wait_cycle.h: a thread
 * waits synchronously for it while the thread it runs on waits for the first one), as one line in
 * buf (adac_wait_cycle_text); NULL when none. */
const char *adac_pending_stack_wait_cycle(const struct adac_pending *p, const struct adac_pending_stack *st, char *buf,
                                          size_t size);
/* For bt, after the lines of OS thread tid: "  deadlock: <adac_wait_cycle_text>" from its step, when
 * it is a step of one (nothing else); whether it is. */
bool adac_pending_print_thread_wait_cycle(const struct adac_pending *p, uint64_t tid, struct adac_out *out);
/* The stacks alone, no warnings and no summary: as text, or appended to the JSON array `json` when
 * it is not NULL (the objects "chains" holds). For `bt --address`: the logical stacks holding an
 * object, as `ps` shows them. l->listed says how many. */
int adac_pending_print_stacks(struct adac_pending_list *l, unsigned flags, struct adac_out *out, struct json_t *json,
                              struct adac_error *err);

/* The parts other views of the listing share: the warnings before it ("Warning: ..." lines), the
 * summary line after it, and the members after a JSON listing's own. */
/* For bt, after the frames of OS thread tid: "  blocked on: task 0x..., waited for synchronously
 * (Task.Wait(), .Result or GetAwaiter().GetResult()): its Task+SetOnInvokeMres 0x... is at 0x... in
 * this thread's stack; the task's stacks:", then the stacks holding the task as `ps --address
 * <task>` prints them; for each task p->sync_waits says the thread waits for. */
int adac_pending_print_thread_waits(struct adac_pending *p, uint64_t tid, unsigned flags, struct adac_out *out,
                                    struct adac_error *err);
/* A stack on an await cycle as one line (a heap string; NULL when it is not one, or out of memory):
 * "<frame> at <file>:<line> awaits task 0x... of <frame> at ..., which awaits task 0x... of <the
 * first frame> at ...", each node by its innermost frame, from the node whose caller closes the
 * cycle round to it. */
char *adac_pending_cycle_text(const struct adac_pending_list *l, const struct adac_pending_stack *st);
void adac_pending_print_warnings(const struct adac_pending *p, struct adac_out *out);
void adac_pending_print_summary(const struct adac_pending_list *l, struct adac_out *out);
/* For each of n tasks, where the first stack holding it (a node's task) is suspended, in one listing:
 * where[k] a heap string "chain #N, <innermost frame> at <file>:<line>, awaiting <what it awaits, as
 * `ps` says>", NULL when no stack holds tasks[k]. -1 with err when the listing fails (where[] keeps
 * what it found: free each). */
int adac_pending_tasks_where(struct adac_pending *p, const uint64_t *tasks, size_t n, char **where, struct adac_out *out,
                             struct adac_error *err);
void adac_pending_json_members(const struct adac_pending_list *l, struct json_t *ps);

#endif
