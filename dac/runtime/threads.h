/* threads.h - Thread contract: the runtime's managed threads, and thread-static fields read out of
 * process (ThreadLocalData, TLSIndex: non-collectible, collectible and direct-on-ThreadLocalData). */
#ifndef ADAC_THREADS_H
#define ADAC_THREADS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* Thread.State's flag of a thread-pool worker (the Thread contract's ThreadState TS_TPWorkerThread;
 * SOS `threads` prints "(Threadpool Worker)" for it; .NET 11.0.0 sets it on PortableThreadPool's
 * workers). */
#define ADAC_THREAD_STATE_TP_WORKER 0x01000000u
/* ... and those SOS `threads` counts by: a background thread, one not started yet, one that ended. */
#define ADAC_THREAD_STATE_BACKGROUND 0x00000200u
#define ADAC_THREAD_STATE_UNSTARTED 0x00000400u
#define ADAC_THREAD_STATE_DEAD 0x00000800u

struct adac_managed_thread {
	uint64_t thread;              /* Thread* */
	uint32_t managed_id;          /* Thread.Id */
	uint64_t os_id;               /* Thread.OSId (LWP on Linux) as the target numbers its threads (a
	                               * process in a pid namespace of its own records its own ids:
	                               * adac_target_thread_of_process_tid), 0 when not started, dead, or
	                               * no thread of the target's */
	uint32_t state;               /* Thread.State */
	uint64_t thread_local_data;   /* Thread.ThreadLocalDataPtr */
	uint64_t stack_base;          /* Thread.CachedStackBase: the stack's high end; 0 when not known */
	uint64_t stack_limit;         /* Thread.CachedStackLimit: its low end; 0 when not known */
};

typedef int (*adac_managed_thread_cb)(void *ctx, const struct adac_managed_thread *th);

/* The Thread list alone, for readers with their own Thread layout (the GC heap's allocation
 * contexts): cb(ctx, thread, err) for each Thread* from the ThreadStore at `store` (its
 * FirstThreadLink at first_off, each Thread's LinkNext at next_off), bounded by ADAC_MAX_THREADS
 * and cycle-checked. The links point at the Thread (11.0.0) or at its LinkNext field (10.0): the
 * reading under which the list holds ThreadStore.ThreadCount threads is taken. cb returns 0 to go on, 1 to stop (the walk returns 0), -1 with err set. */
typedef int (*adac_thread_link_cb)(void *ctx, uint64_t thread, struct adac_error *err);
int adac_thread_list_walk(struct adac_runtime *rt, uint64_t store, uint32_t first_off, uint32_t next_off,
                          adac_thread_link_cb cb, void *ctx, struct adac_error *err);

/* Every Thread in the ThreadStore list (bounded by ADAC_MAX_THREADS, cycle-checked). */
int adac_managed_threads(struct adac_runtime *rt, adac_managed_thread_cb cb, void *ctx, struct adac_error *err);

/* The managed Thread running on OS thread `os_tid`; ADAC_E_NOT_FOUND when it is not a managed thread. */
int adac_managed_thread_of(struct adac_runtime *rt, uint64_t os_tid, struct adac_managed_thread *out,
                           struct adac_error *err);

/* The ThreadStore's counts, SOS `threads`' header (ThreadCount, UnstartedThread, BackgroundThread,
 * PendingThread, DeadThread). ADAC_E_LAYOUT when the runtime does not describe them. */
struct adac_thread_counts {
	uint32_t threads, unstarted, background, pending, dead;
};
int adac_thread_store_counts(struct adac_runtime *rt, struct adac_thread_counts *c, struct adac_error *err);

/* What SOS `threads` shows of a thread besides its ids and state; parts the runtime does not describe
 * or that cannot be read are left unset. */
struct adac_thread_details {
	bool has_gc_mode;
	bool cooperative;             /* Thread.PreemptiveGCDisabled: it runs managed code the GC must wait
	                               * for (SOS "Cooperative"), else "Preemptive" */
	uint64_t object;              /* its System.Threading.Thread (Thread.ExposedObject's handle), 0 when none */
	bool finalizer;               /* the finalizer thread (the global FinalizerThread) */
};
int adac_thread_details(struct adac_runtime *rt, const struct adac_managed_thread *th, struct adac_thread_details *d,
                        struct adac_error *err);

/* The exception object thread th threw last (Thread.LastThrownObject, SOS `threads`' Exception
 * column; *obj = 0 when none) and whether the runtime marked it unhandled. ADAC_E_LAYOUT when the
 * runtime does not describe it. */
int adac_thread_last_thrown(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t *obj,
                            bool *unhandled, struct adac_error *err);
/* The object[] holding thread th's non-collectible thread-static bases
 * (ThreadLocalData.NonCollectibleTlsArrayData, which the GC scans as a root of the thread); 0 when it
 * has none. */
int adac_thread_statics_array(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t *array,
                              struct adac_error *err);

/* Address of a thread-static field of type enclosing_mt (at `offset` in the type's GC or non-GC
 * thread-statics block) on thread th; *addr = 0 when the thread has not allocated that type's thread
 * statics yet. adac_field_thread_static_addr (types/fielddesc.h) takes a FieldDesc instead. */
int adac_thread_static_addr(struct adac_runtime *rt, const struct adac_managed_thread *th, uint64_t enclosing_mt,
                            bool gc_static, uint32_t offset, uint64_t *addr, struct adac_error *err);

#endif
