/* classic_async.h - classic (compiler-generated state machine) async frames, what each task's
 * m_continuationObject resolves to, and the logical stacks that stitch classic and runtime-async
 * frames together, for `ps` (docs/architecture.md, "Logical stacks"). */
#ifndef ADAC_CLASSIC_ASYNC_H
#define ADAC_CLASSIC_ASYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_async_scan;

/* Resolves every kept task's m_continuationObject into scan->awaiters (addresses of continuations,
 * boxes and tasks, or of objects that are none of these). Unreadable wrappers are skipped; of a
 * List<object> longer than ADAC_MAX_LIST_ITEMS the first ones are followed and scan->awaiters_cut
 * says so. */
int adac_classic_resolve_awaiters(struct adac_runtime *rt, struct adac_async_scan *scan, struct adac_error *err);

/* One classic frame: what a box says about its method. */
struct adac_classic_frame {
	uint64_t box;
	uint64_t mt;                  /* the box's MethodTable */
	uint64_t state_machine_mt;    /* the compiler-generated type, 0 when unknown */
	uint64_t state_machine;       /* the state machine, whose fields are the hoisted locals: the object
	                               * (debug builds), or the struct's address inside the box; 0 if unknown */
	bool state_machine_inline;    /* a struct inside the box (optimized builds) */
	bool has_state;
	int32_t state;                /* <>1__state */
	uint64_t method_desc;         /* the kickoff method, 0 when not found */
	const char *method;           /* its display name, else the state machine's type name; NULL if neither */
	const char *module;           /* "MyApp.dll", NULL when unknown */
	uint32_t token;               /* kickoff MethodDef token, 0 when unknown */
	/* The await it is suspended at (state N >= 0): the N-th yield point of the state machine's
	 * MoveNext in the PDB's async stepping information, and that IL offset's source line. */
	bool has_il;
	uint32_t il_offset;           /* in MoveNext */
	bool has_source;
	const char *file;             /* as recorded in the PDB */
	uint32_t line;
	char note[400];               /* what could not be found, "" when all was */
};

/* Per-MethodTable facts of boxes (field offsets, kickoff method, names), kept between calls. */
struct adac_classic_cache;
struct adac_classic_cache *adac_classic_cache_new(void);
void adac_classic_cache_free(struct adac_classic_cache *c);

/* Reads the box at `box` (MethodTable mt). Never fails: what was not found is in out->note. */
void adac_classic_frame_read(struct adac_runtime *rt, struct adac_classic_cache *cache, uint64_t box, uint64_t mt,
                             struct adac_classic_frame *out);

/* ---- logical stacks ---- */

enum adac_node_kind {
	ADAC_NODE_CHAIN,   /* a runtime-async chain (index into scan->chains) */
	ADAC_NODE_BOX,     /* a classic state-machine box (index into scan->tasks) */
	ADAC_NODE_TASK,    /* another task (index into scan->tasks) */
};

/* 12 bytes: two million of them at a million chains, kept while the stacks are listed. */
struct adac_async_node {
	uint32_t index;
	uint32_t awaits;                         /* 1 + the scan index of a task fed by nothing with an
	                                          * edge into this node (what a stack starting here
	                                          * awaits), 0 if none */
	uint8_t kind;                            /* enum adac_node_kind */
};

struct adac_async_stack {
	uint32_t first, count;     /* node ids in adac_async_graph.stack_nodes, innermost first */
	uint32_t cycle : 31;       /* the last node awaits a node of the stack: 1 + the first such
	                            * node's position; 0: no cycle */
	uint32_t truncated : 1;    /* stopped at ADAC_MAX_CHAIN_DEPTH nodes */
};

struct adac_async_graph {
	struct adac_async_node *nodes;
	size_t node_count;
	/* The edges, and marks per node, only while the stacks are found (then NULL): node n's
	 * callers are callers[callers_at[n] .. callers_at[n + 1]). */
	uint32_t *callers_at;
	uint32_t *callers;
	size_t caller_count;
	uint8_t *marks;
	uint32_t *chain_node;      /* per scan chain: its node id, or ADAC_SCAN_NONE (stale) */
	uint32_t *task_node;       /* per scan task: its node id (a box, a task, or the chain it owns) or
	                            * NONE; only while the edges are found */
	uint32_t *stack_nodes;
	size_t stack_node_count;
	struct adac_async_stack *stacks;   /* running chains first, then by the first node's address */
	size_t stack_count;
	bool stacks_capped;        /* ADAC_MAX_CHAINS stacks, or 2^25 stack nodes in all, were reached; the
	                            * rest are not listed */
};

/* Builds the graph and the stacks from a scan whose chains and awaiters are set: adac_async_graph_link
 * (the nodes and their edges; it needs no continuation record when the scan has its
 * awaiter_chains), then adac_async_graph_stacks (which needs neither the awaiters nor the task
 * links). Read nothing from the target; on failure the graph is freed. */
int adac_async_graph_build(const struct adac_async_scan *scan, struct adac_async_graph *g, struct adac_error *err);
int adac_async_graph_link(const struct adac_async_scan *scan, struct adac_async_graph *g, struct adac_error *err);
int adac_async_graph_stacks(const struct adac_async_scan *scan, struct adac_async_graph *g, struct adac_error *err);
void adac_async_graph_free(struct adac_async_graph *g);

/* Address that identifies a node: the chain's head, the box or the task. */
uint64_t adac_async_node_addr(const struct adac_async_scan *scan, const struct adac_async_node *n);
/* The task a stack starting at n awaits (adac_async_node.awaits), 0 if none. */
uint64_t adac_async_node_awaits(const struct adac_async_scan *scan, const struct adac_async_node *n);

#endif
