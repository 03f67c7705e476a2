/* classic_async.h - classic (compiler-generated state machine) async, and the logical stacks that
 * stitch classic and runtime-async frames together, for `ps`.
 *
 * Boxes. A classic async method suspended at an await lives in an
 * AsyncTaskMethodBuilder<TResult>+AsyncStateMachineBox<TStateMachine> (or a type derived from it):
 * a Task with a StateMachine field holding the compiler-generated state machine (a struct in
 * optimized builds, a class in debug builds) whose <>1__state is the await state (N: suspended at
 * await N; -1: running or not started; -2: done). The state machine type is named "<Method>d__N"
 * and nested in the method's type, which gives the kickoff method (the one the user wrote).
 *
 * Edges. A task's m_continuationObject says what runs when it completes, resolved as SOS dumpasync
 * resolves it: a box or a task as they are; a runtime-async Continuation (the head of the chain
 * that awaits the task); each item of a List<object>; otherwise the object's m_task field, or its
 * m_action delegate's _target (through AsyncMethodBuilderCore+ContinuationWrapper._continuation).
 *
 * Stitch points, as the .NET 11.0.0 runtime makes them (targets/dotnet/mixed, checked against
 * Microsoft's DAC):
 *   - runtime-async code awaiting a classic Task: the caller's chain starts with a
 *     RuntimeAsyncTaskContinuation whose Task is the classic box, followed by a runtime-created
 *     thunk continuation whose DiagnosticIP resolves to the classic method (a hidden frame); the
 *     box's m_continuationObject is that RuntimeAsyncTaskContinuation;
 *   - classic code awaiting runtime-async code: the callee chain's RuntimeAsyncTask (the task whose
 *     m_stateObject holds the chain) has the classic box in m_continuationObject.
 * So every edge is "task -> what its m_continuationObject resolves to", in both directions.
 *
 * The graph. Nodes are the chains that are not stale (async_scan.h), the boxes, and the other
 * tasks that have awaiters. A chain's task (its owner) and a box are the tasks whose awaiters are
 * the node's callers; edges go callee -> caller. A stack starts at a frame node (a chain or a box)
 * that no frame node feeds, directly or through other tasks (a task fed by nothing, such as a
 * TaskCompletionSource's, is what the stack is awaiting), and follows callers to a node without
 * any. A node awaited by several callers starts several stacks (one per path), like the branches
 * SOS dumpasync indents. Frame nodes on a cycle (a deadlock) that no stack reached start a stack
 * of their own, marked as a cycle. */
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

struct adac_async_node {
	enum adac_node_kind kind;
	uint32_t index;
	uint32_t callers_first, callers_count;   /* node ids (adac_async_graph.callers) */
	uint32_t callees;                        /* number of edges into this node */
	bool fed;                                /* reached from a frame node (then not a stack start) */
	uint64_t awaits;                         /* a task fed by nothing with an edge into this node (what
	                                          * a stack starting here awaits), 0 if none */
	bool visited;                            /* part of some stack */
};

struct adac_async_stack {
	uint32_t first, count;     /* node ids in adac_async_graph.stack_nodes, innermost first */
	bool cycle;                /* the last node's caller is already in the stack */
	bool truncated;            /* stopped at ADAC_MAX_CHAIN_DEPTH nodes */
};

struct adac_async_graph {
	struct adac_async_node *nodes;
	size_t node_count;
	uint32_t *callers;
	size_t caller_count;
	uint32_t *chain_node;      /* per scan chain: its node id, or ADAC_SCAN_NONE (stale) */
	uint32_t *task_node;       /* per scan task: its node id (a box, a task, or the chain it owns) or NONE */
	uint32_t *stack_nodes;
	size_t stack_node_count;
	struct adac_async_stack *stacks;   /* running chains first, then by the first node's address */
	size_t stack_count;
	bool stacks_capped;        /* ADAC_MAX_CHAINS stacks, or 2^25 stack nodes in all, were reached; the
	                            * rest are not listed */
};

/* Builds the graph and the stacks from a scan whose chains and awaiters are set. Reads nothing
 * from the target. */
int adac_async_graph_build(const struct adac_async_scan *scan, struct adac_async_graph *g, struct adac_error *err);
void adac_async_graph_free(struct adac_async_graph *g);

/* Address that identifies a node: the chain's head, the box or the task. */
uint64_t adac_async_node_addr(const struct adac_async_scan *scan, const struct adac_async_node *n);

#endif
