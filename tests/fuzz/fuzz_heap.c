/* fuzz_heap.c - the GC heap walk (runtime/gc_heap.c) over a memory image (image.h) holding a
 * runtime's descriptor, its GC data (heaps, generation tables, region lists, allocation contexts)
 * and the regions' objects and MethodTables. adac_gc_info must list its regions sorted; every
 * object the walk yields must lie in its region, after the one before, with a size of at least the
 * minimum object size; the report must count what was yielded; split in two parts walked at once,
 * it must yield the same (adac_gc_walk_split), and so must the walk with the bytes read into its
 * windows instead of lent in place (a core file's path). Then the GC's roots outside the heap
 * (runtime/gc_handles.c): every handle of the handle tables (a held object, a type the tables
 * number, a secondary only for the types that have one, no more than ADAC_MAX_GC_HANDLES) and the
 * finalization queue's ready lists (objects); a failure of either has a code and a message. Then
 * the image's `dumpheap`, `gcroot` and `locks` commands run (gcroot: the handles again, each thread's
 * conservative stack and register scan and thread statics, the queue, the reference graph of one
 * heap pass and the shortest paths; locks: the sync table, every object's header, the owners of lock
 * objects, each thread's blocking records through its thread statics). Seeds: images
 * tests/fuzz/make_image.c recorded from real .NET 11 cores while `dumpheap --stat` ran (nested),
 * while `gcroot` ran on objects kept by a stack slot and a dependent handle, by the finalization
 * queue, and by a strong handle (roots; and under server GC: a handle table per CPU, each heap's own
 * finalization queue), and while `locks` ran (the locks sample: Monitors, a Lock, thin locks, waiters,
 * Monitor.Wait, a SemaphoreSlim's and a ManualResetEventSlim's waits). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/limits.h"
#include "image.h"
#include "runtime/gc_handles.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "target/target_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct walk {
	const struct adac_gc_info *info;
	const struct adac_gc_region *region;
	uint64_t next;     /* the lowest address the next object of the region may have */
	uint64_t objects;
};

static int check_object(void *ctx, const struct adac_gc_object *o)
{
	struct walk *w = ctx;
	const struct adac_gc_region *r = o->region;
	if (r != w->region) {
		if (w->region && r <= w->region)
			__builtin_trap(); /* regions are walked in order, each once */
		w->region = r;
		w->next = r->mem;
	}
	if (r < w->info->regions || r >= w->info->regions + w->info->region_count)
		__builtin_trap();
	if (o->addr < w->next || o->addr < r->mem || o->addr >= r->end || o->extent > r->end - o->addr ||
	    o->size < w->info->min_object_size || o->extent < o->size || o->mt == 0 || o->mt == w->info->free_mt ||
	    o->generation >= ADAC_MAX_GC_GENERATIONS || !o->data || o->data_len < 2u * w->info->ptr_size ||
	    o->data_len > o->extent)
		__builtin_trap();
	w->next = o->addr + o->extent;
	w->objects++;
	return 0;
}

/* The walk split in two parts, at once: each part in order, and together what the whole walk
 * (rep) yielded, with the same region errors. */
/* The walk with the target's bytes read into its windows, not lent (as a core file's are): the
 * same objects, regions and errors as the walk in place. */
static void check_copied(struct adac_runtime *rt, struct adac_memimg *mem, const struct adac_gc_walk_report *rep)
{
	const struct adac_gc_info *info = adac_gc_info(rt, NULL);
	struct walk w = {info, NULL, 0, 0};
	struct adac_gc_walk_report copied = {0};
	struct adac_error err = {0};
	adac_memimg_set_view(mem, false);
	if (adac_gc_walk(rt, check_object, &w, &copied, &err) != 0)
		__builtin_trap(); /* the walk in place got through */
	adac_memimg_set_view(mem, true);
	if (copied.objects != rep->objects || w.objects != rep->objects || copied.free_objects != rep->free_objects ||
	    copied.regions_walked != rep->regions_walked || copied.error_count != rep->error_count)
		__builtin_trap();
	for (size_t i = 0; i < copied.error_count; i++)
		if (copied.errors[i].region != rep->errors[i].region || copied.errors[i].err.code != rep->errors[i].err.code)
			__builtin_trap();
	adac_gc_walk_report_free(&copied);
}

static void check_split(struct adac_runtime *rt, const struct adac_gc_walk_report *rep)
{
	const struct adac_gc_info *info = adac_gc_info(rt, NULL);
	struct walk part[2] = {{info, NULL, 0, 0}, {info, NULL, 0, 0}};
	void *ctxs[2] = {&part[0], &part[1]};
	struct adac_gc_walk_report split = {0};
	struct adac_error err = {0};
	if (adac_gc_walk_split(rt, 2, check_object, ctxs, NULL, &split, &err) != 0)
		__builtin_trap(); /* the whole walk got through */
	if (split.objects != rep->objects || part[0].objects + part[1].objects != rep->objects ||
	    split.free_objects != rep->free_objects || split.regions_walked != rep->regions_walked ||
	    split.error_count != rep->error_count)
		__builtin_trap();
	for (size_t i = 0; i < split.error_count; i++)
		if (split.errors[i].region != rep->errors[i].region || split.errors[i].err.code != rep->errors[i].err.code)
			__builtin_trap();
	if (part[0].region && part[1].region && part[0].region >= part[1].region)
		__builtin_trap(); /* the first part's regions come first */
	adac_gc_walk_report_free(&split);
}

struct roots {
	uint64_t handles, ready;
};

static int check_handle(void *ctx, const struct adac_gc_handle *h)
{
	struct roots *r = ctx;
	char buf[32];
	const char *name = adac_handle_type_name(h->type, buf, sizeof buf);
	if (++r->handles > ADAC_MAX_GC_HANDLES || h->object == 0 || h->type >= 64 || !name || !name[0] ||
	    (h->secondary && h->type != ADAC_HANDLE_DEPENDENT && h->type != ADAC_HANDLE_WEAK_INTERIOR))
		__builtin_trap();
	return 0;
}

static int check_ready(void *ctx, uint64_t slot, uint64_t object)
{
	struct roots *r = ctx;
	if (object == 0 || slot == 0 || ++r->ready > ADAC_MAX_GC_ROOTS * (uint64_t)ADAC_MAX_GC_HEAPS)
		__builtin_trap();
	return 0;
}

/* The handle tables and the finalization queue's ready lists. */
static void check_roots(struct adac_runtime *rt)
{
	struct roots r = {0, 0};
	struct adac_error err = {0};
	if (adac_gc_handles(rt, check_handle, &r, &err) && (err.code == ADAC_E_OK || err.msg[0] == '\0'))
		__builtin_trap();
	adac_error_clear(&err);
	if (adac_gc_finalizer_ready(rt, check_ready, &r, &err) && (err.code == ADAC_E_OK || err.msg[0] == '\0'))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_image img;
	if (fuzz_image_open(data, size, &img))
		return 0;
	struct adac_error err = {0};
	struct adac_runtime *rt = adac_runtime_open(img.t, &err);
	const struct adac_gc_info *info = rt ? adac_gc_info(rt, &err) : NULL;
	if (info) {
		if ((info->ptr_size != 4 && info->ptr_size != 8) || info->heap_count == 0 || !info->heaps ||
		    info->region_count > ADAC_MAX_GC_REGIONS)
			__builtin_trap();
		for (size_t i = 0; i < info->region_count; i++) {
			const struct adac_gc_region *r = &info->regions[i];
			if ((i && r->mem < info->regions[i - 1].mem) || r->heap >= info->heap_count)
				__builtin_trap();
		}
		struct walk w = {info, NULL, 0, 0};
		struct adac_gc_walk_report rep = {0};
		adac_error_clear(&err);
		if (adac_gc_walk(rt, check_object, &w, &rep, &err) == 0) {
			if (rep.objects != w.objects || rep.regions_walked > info->region_count ||
			    rep.error_count > info->region_count)
				__builtin_trap();
			for (size_t i = 0; i < rep.error_count; i++)
				if (rep.errors[i].err.code == ADAC_E_OK || rep.errors[i].err.msg[0] == '\0')
					__builtin_trap();
			check_split(rt, &rep);
			check_copied(rt, img.mem, &rep);
		} else if (err.code == ADAC_E_OK || err.msg[0] == '\0') {
			__builtin_trap();
		}
		adac_gc_walk_report_free(&rep);
		check_roots(rt);
	} else if (err.code == ADAC_E_OK || err.msg[0] == '\0') {
		__builtin_trap();
	}
	adac_runtime_close(rt);
	for (size_t i = 0; i < img.ncmds; i++)
		if (strcmp(img.cmds[i].argv[0], "dumpheap") == 0 || strcmp(img.cmds[i].argv[0], "gcroot") == 0 ||
		    strcmp(img.cmds[i].argv[0], "locks") == 0)
			fuzz_run_command(img.t, img.cmds[i].argc, img.cmds[i].argv);
	fuzz_image_close(&img);
	return 0;
}
