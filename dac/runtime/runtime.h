/* runtime.h - one .NET runtime found in a target: its module and its contract descriptor.
 * Contract files (object.c, ...) hang their resolved layouts and caches off this struct. */
#ifndef ADAC_RUNTIME_H
#define ADAC_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/descriptor.h"
#include "target/target.h"

#define ADAC_DESCRIPTOR_SYMBOL "DotNetRuntimeContractDescriptor"

/* Per-contract state (resolved layouts, caches), created on first use by the contract's file and
 * freed with the runtime. One slot per contract file. */
enum adac_slot {
	ADAC_SLOT_AWAITING,      /* async_frame.c (awaited-object fields per continuation type) */
	ADAC_SLOT_AWAITED,       /* awaited.c (how objects of each awaited type are described) */
	ADAC_SLOT_RTS,           /* methodtable.c / methoddesc.c: RuntimeTypeSystem */
	ADAC_SLOT_LOADER,        /* loader.c */
	ADAC_SLOT_METADATA,      /* ecma_metadata.c (per-module metadata cache) */
	ADAC_SLOT_NAMES,         /* names.c (method/type display-name cache) */
	ADAC_SLOT_EM,            /* execution_manager.c */
	ADAC_SLOT_PRECODE,       /* precode.c */
	ADAC_SLOT_DEBUGINFO,     /* debuginfo.c */
	ADAC_SLOT_PDB,           /* pdb.c (per-assembly portable PDB cache) */
	ADAC_SLOT_CONTINUATION,  /* continuation.c */
	ADAC_SLOT_THREADS,       /* thread statics and dispatcher records */
	ADAC_SLOT_GC,            /* gc_heap.c */
	ADAC_SLOT_TASK,          /* task.c */
	ADAC_SLOT_OBJECT,        /* object.c */
	ADAC_SLOT_EXCEPTION,     /* exception.c */
	ADAC_SLOT_FIELDDESC,     /* fielddesc.c (FieldDesc layout, fields found by name) */
	ADAC_SLOT_GC_HANDLES,    /* gc_handles.c */
	ADAC_SLOT_STATICS,       /* statics.c (GC statics base -> type) */
	ADAC_SLOT_THREAD_POOL,   /* thread_pool.c (the thread pool's queue and workers, read once) */
	ADAC_SLOT_SYNC_BLOCK,    /* sync_block.c */
	ADAC_SLOT_COUNT
};

struct adac_runtime {
	void *slots[ADAC_SLOT_COUNT];
	void (*slot_free[ADAC_SLOT_COUNT])(void *);
	bool (*slot_keep[ADAC_SLOT_COUNT])(void *);
	uint64_t generation;     /* adac_runtime_refresh calls so far */
	struct adac_target *t;
	struct adac_descriptor *desc;
	char *module_path;       /* module exporting the descriptor (libcoreclr.so normally) */
	uint64_t module_base;
	uint64_t desc_addr;
	bool transient;          /* opened by adac_runtime_acquire for one command: released = closed */
};

/* Finds the runtime: the descriptor exported by libcoreclr.so, else by any module (single-file
 * hosts, NativeAOT, synthetic targets). ADAC_E_NO_RUNTIME when there is none. */
struct adac_runtime *adac_runtime_open(struct adac_target *t, struct adac_error *err);
void adac_runtime_close(struct adac_runtime *rt);

/* The runtime a command runs on: the one t's front end keeps across commands
 * (adac_target_set_runtime_source: refreshed when the target ran since its last use), else one
 * opened for the command. Each command gives it back with adac_runtime_release, which closes it
 * only when it was opened here. NULL with err as adac_runtime_open. */
struct adac_runtime *adac_runtime_acquire(struct adac_target *t, struct adac_error *err);
void adac_runtime_release(struct adac_runtime *rt);

/* The target ran since rt was opened or refreshed: frees every contract's state, but for what a
 * contract's keep function (adac_runtime_set_slot_keep) keeps, pruned to data that cannot have
 * changed (a loaded module's metadata, a PDB file); the descriptor stays, the runtime's static
 * data, once read again and found the same (adac_desc_unchanged). Bumps rt->generation, so kept
 * state can check itself again on its next use. false, rt untouched, when the descriptor changed
 * (the process wrote it, or set a sub-descriptor since): close rt and open the runtime again. */
bool adac_runtime_refresh(struct adac_runtime *rt);

/* A contract file's state: NULL until set; freed with the runtime through free_fn. */
static inline void *adac_runtime_slot(const struct adac_runtime *rt, enum adac_slot s) { return rt->slots[s]; }
static inline void adac_runtime_set_slot(struct adac_runtime *rt, enum adac_slot s, void *state, void (*free_fn)(void *))
{
	rt->slots[s] = state;
	rt->slot_free[s] = free_fn;
	rt->slot_keep[s] = NULL;
}

/* Makes a slot's state survive adac_runtime_refresh: keep_fn prunes it and returns true to keep
 * it (false: it is freed). */
static inline void adac_runtime_set_slot_keep(struct adac_runtime *rt, enum adac_slot s, bool (*keep_fn)(void *))
{
	rt->slot_keep[s] = keep_fn;
}

#endif
