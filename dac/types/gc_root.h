/* gc_root.h - `gcroot`: which roots keep an object alive, and through which references.
 *
 * One heap pass builds the reference graph (types/heap_refs.h: each object's reference slots from its
 * type); a breadth-first search backwards from the object gives every object's shortest path to it
 * (cycle-safe: each object is reached once). The roots are then checked against it:
 *   - GC handles that keep their object alive: strong, pinned, async pinned, sized ref
 *     (runtime/gc_handles.h). Dependent handles are not roots: each is an edge from its primary to
 *     its secondary object. Static fields are not roots of their own: on .NET 11 a type's reference
 *     statics are elements of an object[] (on the pinned heap) that a strong handle holds, so a
 *     static shows as "strong handle -> Object[] -> ...", the element named by its field
 *     (types/statics.h; its index when the field is not found);
 *   - each managed thread's stack, scanned conservatively from its stack pointer to the stack's high
 *     end (Thread.CachedStackBase; else as far as memory reads, at most ADAC_MAX_STACK_SCAN_BYTES):
 *     every pointer-aligned slot whose value is the start of a heap object. GC info is not decoded,
 *     so a slot may be dead (a conservative root), and a reference to an object's interior is not
 *     seen; then the thread's general-purpose registers, the same way. The slots and registers of one
 *     thread that hold the same object are one root (its first slot, then how many more);
 *   - each thread's non-collectible thread statics: the object[] of their bases the thread's
 *     ThreadLocalData holds (the GC scans it with the thread; no handle holds it);
 *   - the finalization queue's ready lists (objects waiting for the finalizer thread).
 * Parts that cannot be read (a thread's registers, the handle tables) are recorded as warnings and
 * the rest is still searched. */
#ifndef ADAC_GC_ROOT_H
#define ADAC_GC_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "runtime/gc_heap.h"

struct adac_runtime;

enum adac_root_kind {
	ADAC_ROOT_STACK,      /* a slot of a thread's stack (conservative) */
	ADAC_ROOT_REGISTER,   /* a register of a thread (conservative) */
	ADAC_ROOT_HANDLE,     /* a GC handle */
	ADAC_ROOT_FINALIZER,  /* the finalization queue's ready lists */
	ADAC_ROOT_THREAD_STATICS, /* a thread's object[] of non-collectible thread-static bases */
};

/* One step of a path: an object, and the slot of the previous step's object that references it. */
struct adac_root_hop {
	uint64_t obj;
	uint64_t mt;
	uint32_t offset;      /* the slot in the previous hop's object (hop 0: none) */
	bool dependent;       /* reached through a dependent handle (offset unused), held in `handle` */
	uint64_t handle;
};

struct adac_gc_root {
	enum adac_root_kind kind;
	uint64_t where;       /* stack slot, handle, or finalization queue slot; register: its ADAC_REG_*;
	                       * thread statics: the thread's ThreadLocalData */
	uint32_t handle_type; /* ADAC_ROOT_HANDLE */
	uint64_t os_tid;      /* ADAC_ROOT_STACK/REGISTER/THREAD_STATICS: the thread */
	uint32_t managed_id;
	uint64_t more_slots;  /* ADAC_ROOT_STACK/REGISTER: later slots and registers of the thread holding the
	                       * same object (one root: the first slot holding it) */
	size_t hop_count;     /* path[0] is what the root holds, path[hop_count - 1] the object */
	struct adac_root_hop *path;
};

struct adac_gcroot {
	uint64_t object;
	uint64_t mt;
	size_t root_count;
	struct adac_gc_root *roots;   /* threads (in the runtime's order), then handles, then the queue */
	uint64_t objects;             /* heap objects searched */
	uint64_t handles;             /* handles read, of every type */
	uint64_t threads;             /* threads whose stacks were scanned */
	size_t warning_count;         /* parts not searched, one line each */
	char **warnings;
	struct adac_gc_walk_report rep;
};

/* ADAC_E_NOT_FOUND when no heap object starts at obj. progress: the sink the heap walk reports to
 * and asks whether the user interrupted it (ADAC_E_INTERRUPTED), or NULL. */
struct adac_out;
int adac_gcroot(struct adac_runtime *rt, uint64_t obj, struct adac_out *progress, struct adac_gcroot *out,
                struct adac_error *err);
void adac_gcroot_free(struct adac_gcroot *g);

#endif
