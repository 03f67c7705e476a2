/* fuzz_heap.c - the GC heap walk (runtime/gc_heap.c) over a memory image (image.h) holding a
 * runtime's descriptor, its GC data (heaps, generation tables, region lists, allocation contexts)
 * and the regions' objects and MethodTables. adac_gc_info must list its regions sorted; every
 * object the walk yields must lie in its region, after the one before, with a size of at least the
 * minimum object size; the report must count what was yielded. Then the image's `dumpheap`
 * commands run. Seeds: images tests/fuzz/make_image.c recorded from real .NET 11 cores while
 * `dumpheap --stat` ran. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "image.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"

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
		} else if (err.code == ADAC_E_OK || err.msg[0] == '\0') {
			__builtin_trap();
		}
		adac_gc_walk_report_free(&rep);
	} else if (err.code == ADAC_E_OK || err.msg[0] == '\0') {
		__builtin_trap();
	}
	adac_runtime_close(rt);
	for (size_t i = 0; i < img.ncmds; i++)
		if (strcmp(img.cmds[i].argv[0], "dumpheap") == 0)
			fuzz_run_command(img.t, img.cmds[i].argc, img.cmds[i].argv);
	fuzz_image_close(&img);
	return 0;
}
