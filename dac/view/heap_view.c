/* heap_view.c - `dumpheap`'s listing (objects, per-type statistics) and its --segments view. */
#include "view/heap_view.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/addr_map.h"
#include "base/clock.h"
#include "base/grow.h"
#include "base/json.h"
#include "base/output.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "types/names.h"
#include "types/typename.h"

/* Per-MethodTable counts, and the type filter's verdict. */
struct mt_stat {
	uint64_t mt;       /* the key */
	uint64_t count;
	uint64_t bytes;
	char *name;        /* NULL until asked; "" never */
	int8_t match;      /* -1: not decided yet */
};

struct dump {
	struct adac_runtime *rt;
	const struct adac_heap_opts *opt;
	struct adac_out *out;
	struct adac_addr_map stats; /* struct mt_stat by MethodTable */
	const struct adac_gc_info *info;
	bool list_json;             /* --json without --stat: "objects", printed as the walk finds them */
	size_t listed_count;        /* ... so far */
	bool opened;                /* the document printed up to "objects" */
	struct adac_type_filter type; /* opt->type in every spelling */
	uint64_t shown, shown_bytes;
	bool count_only;            /* --stat: count per MT; the type filter and the totals come after */
	struct adac_error fail;     /* out of memory inside the callback */
};

_Static_assert(offsetof(struct mt_stat, mt) == 0, "the MethodTable is the record's key");

static struct mt_stat *stat_get(struct adac_addr_map *t, uint64_t mt)
{
	bool added;
	struct mt_stat *st = adac_addr_map_get(t, mt, sizeof *st, &added);
	if (st && added)
		st->match = -1;
	return st;
}

static void stat_free(struct adac_addr_map *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct mt_stat *st = adac_addr_map_slot(t, i);
		if (st)
			free(st->name);
	}
	adac_addr_map_free(t);
}

/* The type name of an MT (adac_type_name, names.c), kept per MT; "<unknown type: why>" when it
 * cannot be named. */
static const char *name_of(struct dump *d, struct mt_stat *st)
{
	if (st->name)
		return st->name;
	struct adac_error err = {0};
	const char *n = adac_type_name(d->rt, st->mt, 0, &err);
	if (n) {
		st->name = strdup(n);
	} else {
		size_t len = strlen(err.msg) + 32;
		st->name = malloc(len);
		if (st->name)
			snprintf(st->name, len, "<unknown type: %s>", err.msg);
	}
	return st->name ? st->name : "<out of memory>";
}

/* 1234567 -> "1,234,567" (SOS's totals). */
static const char *commas(uint64_t v, char buf[32])
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
	int o = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* The document as adac_json_print_document would print it, a part at a time: up to the first
 * element of "objects" (without a listing: up to the other members). */
static int open_json(struct dump *d, struct adac_error *err)
{
	json_t *head = json_object();
	json_object_set_new(head, "gc", adac_json_text(d->info->identifiers));
	json_object_set_new(head, "structures_valid", json_boolean(d->info->structures_valid));
	adac_json_document_open(d->out, "dumpheap");
	adac_print(d->out, "{");
	int rc = adac_json_print_members(d->out, head, 2, err);
	json_decref(head);
	if (rc == 0 && d->list_json)
		adac_print(d->out, ",\n    \"objects\": [");
	d->opened = true;
	return rc;
}

/* The next element of "objects". */
static void put_listed(struct dump *d, const struct adac_gc_object *o)
{
	adac_print(d->out,
	           "%s\n      {\n        \"address\": \"0x%016llx\",\n        \"mt\": \"0x%016llx\",\n"
	           "        \"size\": %llu\n      }",
	           d->listed_count++ ? "," : "", (unsigned long long)o->addr, (unsigned long long)o->mt,
	           (unsigned long long)o->size);
}

/* The rest: the end of "objects", rest's members (released), the braces. */
static int close_json(struct dump *d, json_t *rest, struct adac_error *err)
{
	int rc = d->opened ? 0 : open_json(d, err);
	if (rc == 0 && d->list_json)
		adac_print(d->out, d->listed_count ? "\n    ]" : "]");
	if (rc) {
		json_decref(rest);
		return rc;
	}
	return adac_json_document_close(d->out, rest, err);
}

static int on_object(void *ctx, const struct adac_gc_object *o)
{
	struct dump *d = ctx;
	const struct adac_heap_opts *opt = d->opt;
	if (opt->has_mt && o->mt != opt->mt)
		return 0;
	struct mt_stat *st = stat_get(&d->stats, o->mt);
	if (!st) {
		adac_fail(&d->fail, ADAC_E_NOMEM, 0, "out of memory counting objects");
		return 1;
	}
	if (d->count_only) {
		st->count++;
		st->bytes += o->size;
		return 0;
	}
	if (opt->type) {
		if (st->match < 0)
			st->match = adac_type_filter_match(&d->type, name_of(d, st));
		if (!st->match)
			return 0;
	}
	st->count++;
	st->bytes += o->size;
	d->shown++;
	d->shown_bytes += o->size;
	if (opt->stat)
		return 0;
	if (d->list_json) {
		if (!d->opened && open_json(d, &d->fail))
			return 1;
		put_listed(d, o);
	} else if (opt->short_list) {
		adac_print(d->out, "0x%016llx\n", (unsigned long long)o->addr);
	} else {
		adac_print(d->out, "0x%016llx 0x%016llx %12llu\n", (unsigned long long)o->addr, (unsigned long long)o->mt,
		           (unsigned long long)o->size);
	}
	return 0;
}

/* --stat: the parts' counts added into d's, then the type filter and the totals, per MT. */
static int add_counts(struct dump *d, struct dump *part, unsigned parts)
{
	for (unsigned k = 1; k < parts; k++) {
		for (size_t i = 0; i < part[k].stats.cap; i++) {
			const struct mt_stat *from = adac_addr_map_slot(&part[k].stats, i);
			struct mt_stat *st = from ? stat_get(&d->stats, from->mt) : NULL;
			if (from && !st)
				return adac_fail(&d->fail, ADAC_E_NOMEM, 0, "out of memory counting objects");
			if (st) {
				st->count += from->count;
				st->bytes += from->bytes;
			}
		}
	}
	for (size_t i = 0; i < d->stats.cap; i++) {
		struct mt_stat *st = adac_addr_map_slot(&d->stats, i);
		if (!st)
			continue;
		if (d->opt->type && !adac_type_filter_match(&d->type, name_of(d, st)))
			st->count = 0; /* not shown */
		d->shown += st->count;
		d->shown_bytes += st->count ? st->bytes : 0;
	}
	return 0;
}

static int cmp_stat(const void *a, const void *b)
{
	const struct mt_stat *x = *(const struct mt_stat *const *)a, *y = *(const struct mt_stat *const *)b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	return x->mt < y->mt ? -1 : x->mt > y->mt ? 1 : 0;
}

/* The MTs with objects shown, smallest total first (as SOS). NULL with *n = 0 when there are none. */
static struct mt_stat **sorted_stats(struct dump *d, size_t *n)
{
	*n = 0;
	struct mt_stat **v = malloc((d->stats.used ? d->stats.used : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < d->stats.cap; i++) {
		struct mt_stat *st = adac_addr_map_slot(&d->stats, i);
		if (st && st->count)
			v[(*n)++] = st;
	}
	qsort(v, *n, sizeof *v, cmp_stat);
	return v;
}

static json_t *errors_json(const struct adac_gc_walk_report *rep)
{
	json_t *a = json_array();
	for (size_t i = 0; i < rep->error_count; i++) {
		const struct adac_gc_region_error *e = &rep->errors[i];
		json_t *j = json_object();
		json_object_set_new(j, "region", adac_json_addr(e->region->addr));
		json_object_set_new(j, "kind", adac_json_text(adac_gc_kind_name(e->region->kind)));
		json_object_set_new(j, "heap", json_integer(e->region->heap));
		json_object_set_new(j, "objects_before", json_integer((json_int_t)e->objects_before));
		json_object_set_new(j, "code", adac_json_text(adac_errstr(e->err.code)));
		json_object_set_new(j, "address", adac_json_addr(e->err.addr));
		json_object_set_new(j, "message", adac_json_text(e->err.msg));
		json_array_append_new(a, j);
	}
	return a;
}

/* Walks the heap once into d and rep; --stat's parts count apart, at once, and their counts add
 * up (a listing is printed in address order, by one part). */
static int walk_heap(struct dump *d, struct adac_gc_walk_report *rep, double *seconds, struct adac_error *err)
{
	unsigned parts = d->count_only ? adac_gc_walk_parts(d->rt) : 1;
	struct dump part[ADAC_GC_WALK_MAX_PARTS];
	void *ctxs[ADAC_GC_WALK_MAX_PARTS] = {d};
	for (unsigned k = 1; k < parts; k++) {
		part[k] = (struct dump){.rt = d->rt, .opt = d->opt, .count_only = true};
		ctxs[k] = &part[k];
	}
	double t0 = adac_seconds();
	const struct adac_gc_walk_progress progress = {d->out, "walking the heap"};
	int rc = adac_gc_walk_split(d->rt, parts, on_object, ctxs, &progress, rep, err);
	*seconds = adac_seconds() - t0;
	for (unsigned k = 1; k < parts; k++)
		adac_error_copy(&d->fail, &part[k].fail);
	if (rc == 0 && d->count_only && !adac_failed(&d->fail))
		add_counts(d, part, parts);
	for (unsigned k = 1; k < parts; k++)
		adac_addr_map_free(&part[k].stats);
	if (rc == 0 && adac_failed(&d->fail)) {
		adac_error_copy(err, &d->fail);
		adac_gc_walk_report_free(rep);
		rc = -1;
	}
	return rc;
}

int adac_heap_print(struct adac_runtime *rt, const struct adac_heap_opts *opt, struct adac_out *out,
                    struct adac_error *err)
{
	const struct adac_gc_info *info = adac_gc_info_walkable(rt, err);
	if (!info)
		return -1;
	struct dump d = {.rt = rt, .opt = opt, .out = out, .info = info, .list_json = opt->json && !opt->stat};
	if (!info->structures_valid && !opt->json)
		adac_print(out, "Warning: the GC heap was stopped during a garbage collection "
		                "(StructureInvalidCount != 0); objects may be missed or misread.\n");
	if (!opt->json && !opt->stat && !opt->short_list)
		adac_print(out, "%18s %18s %12s\n", "Address", "MT", "Size");
	struct adac_gc_walk_report rep;
	if (adac_type_filter_init(&d.type, opt->type, err))
		return -1;
	/* --stat and --json show nothing before a walk's end where the walk may be run again: a held
	 * process stopped where its heap cannot be walked is let run and walked again. So a held
	 * process's --json listing is a count first (on all CPUs) and then, its heap walkable (the
	 * process held still), printed as it is walked again: no object is kept (24 bytes each, 300 MB
	 * for 13 M). A core's is printed as it is walked: cut short by an error, the document is too,
	 * as the text is. */
	bool check_first = d.list_json && adac_target_can_run(rt->t);
	d.count_only = opt->stat || check_first;
	double walk_seconds;
	int rc;
	while ((rc = walk_heap(&d, &rep, &walk_seconds, err)) == 0 && rep.error_count && (opt->stat || opt->json)) {
		int ran = adac_gc_rerun(rt, err);
		if (ran == 0)
			break;
		adac_gc_walk_report_free(&rep);
		stat_free(&d.stats);
		d.shown = d.shown_bytes = 0;
		if (ran < 0 || !(info = adac_gc_info_walkable(rt, err))) {
			rc = -1;
			break;
		}
	}
	if (rc == 0 && check_first) {
		adac_gc_walk_report_free(&rep);
		stat_free(&d.stats);
		d.shown = d.shown_bytes = 0;
		d.count_only = false;
		rc = walk_heap(&d, &rep, &walk_seconds, err);
	}
	adac_type_filter_free(&d.type);
	if (rc) {
		stat_free(&d.stats);
		return -1;
	}
	size_t n;
	struct mt_stat **sorted = sorted_stats(&d, &n);
	if (!sorted) {
		stat_free(&d.stats);
		adac_gc_walk_report_free(&rep);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory sorting the statistics");
	}
	if (opt->json) {
		json_t *r = json_object();
		json_t *st = json_array();
		for (size_t i = 0; i < n; i++) {
			json_t *j = json_object();
			json_object_set_new(j, "mt", adac_json_addr(sorted[i]->mt));
			json_object_set_new(j, "count", json_integer((json_int_t)sorted[i]->count));
			json_object_set_new(j, "total_size", json_integer((json_int_t)sorted[i]->bytes));
			json_object_set_new(j, "name", adac_json_text(name_of(&d, sorted[i])));
			json_array_append_new(st, j);
		}
		json_object_set_new(r, "statistics", st);
		json_t *tot = json_object();
		json_object_set_new(tot, "objects", json_integer((json_int_t)d.shown));
		json_object_set_new(tot, "bytes", json_integer((json_int_t)d.shown_bytes));
		json_object_set_new(r, "total", tot);
		json_t *fr = json_object();
		json_object_set_new(fr, "objects", json_integer((json_int_t)rep.free_objects));
		json_object_set_new(fr, "bytes", json_integer((json_int_t)rep.free_bytes));
		json_object_set_new(r, "free", fr);
		json_t *scan = json_object();
		json_object_set_new(scan, "regions", json_integer((json_int_t)rep.regions_walked));
		json_object_set_new(scan, "bytes_scanned", json_integer((json_int_t)rep.bytes_scanned));
		json_object_set_new(scan, "bytes_read", json_integer((json_int_t)rep.bytes_read));
		json_object_set_new(scan, "allocation_contexts_skipped", json_integer((json_int_t)rep.contexts_skipped));
		json_object_set_new(scan, "objects_allocating", json_integer((json_int_t)rep.objects_allocating));
		json_object_set_new(scan, "method_tables", json_integer((json_int_t)rep.method_tables));
		json_object_set_new(scan, "reruns", json_integer(rep.reruns));
		/* Wall time of the walk alone (callbacks included, runtime and GC info reading excluded). */
		if (opt->timings)
			json_object_set_new(scan, "walk_seconds", json_real(walk_seconds));
		json_object_set_new(r, "scan", scan);
		json_object_set_new(r, "errors", errors_json(&rep));
		d.info = info; /* (a walk run again read it again) */
		rc = close_json(&d, r, err);
	} else if (!opt->short_list) {
		char b1[32], b2[32];
		if (!opt->stat)
			adac_print(out, "\n");
		adac_print(out, "Statistics:\n%18s %10s %12s %s\n", "MT", "Count", "TotalSize", "Class Name");
		for (size_t i = 0; i < n; i++)
			adac_print(out, "0x%016llx %10llu %12llu %s\n", (unsigned long long)sorted[i]->mt,
			           (unsigned long long)sorted[i]->count, (unsigned long long)sorted[i]->bytes,
			           name_of(&d, sorted[i]));
		adac_print(out, "Total %s objects, %s bytes\n", commas(d.shown, b1), commas(d.shown_bytes, b2));
		adac_print(out, "Free (not listed): %s objects, %s bytes\n", commas(rep.free_objects, b1),
		           commas(rep.free_bytes, b2));
	}
	if (!opt->json)
		for (size_t i = 0; i < rep.error_count; i++)
			adac_print(out, "Error: %s (after %llu objects of that region)\n", rep.errors[i].err.msg,
			           (unsigned long long)rep.errors[i].objects_before);
	if (rc == 0)
		rc = adac_gc_walk_report_complete(&rep, info->structures_valid, err);
	free(sorted);
	stat_free(&d.stats);
	adac_gc_walk_report_free(&rep);
	return rc;
}

/* ---- --segments ------------------------------------------------------------------------------- */

static json_t *region_json(const struct adac_gc_region *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "address", adac_json_addr(r->addr));
	json_object_set_new(j, "kind", adac_json_text(adac_gc_kind_name(r->kind)));
	json_object_set_new(j, "heap", json_integer(r->heap));
	json_object_set_new(j, "start", adac_json_addr(r->mem));
	json_object_set_new(j, "end", adac_json_addr(r->end));
	json_object_set_new(j, "allocated", adac_json_addr(r->allocated));
	json_object_set_new(j, "committed", adac_json_addr(r->committed));
	json_object_set_new(j, "reserved", adac_json_addr(r->reserved));
	json_object_set_new(j, "flags", adac_json_addr(r->flags));
	return j;
}

int adac_gc_info_print_json(const struct adac_gc_info *info, struct adac_out *out, struct adac_error *err)
{
	json_t *r = json_object();
	json_object_set_new(r, "identifiers", adac_json_text(info->identifiers));
	json_object_set_new(r, "server", json_boolean(info->server));
	json_object_set_new(r, "regions", json_boolean(info->use_regions));
	json_object_set_new(r, "background", json_boolean(info->background));
	json_object_set_new(r, "structures_valid", json_boolean(info->structures_valid));
	json_object_set_new(r, "max_generation", json_integer(info->max_generation));
	json_object_set_new(r, "free_mt", adac_json_addr(info->free_mt));
	json_t *heaps = json_array();
	for (unsigned h = 0; h < info->heap_count; h++) {
		const struct adac_gc_heap_info *hi = &info->heaps[h];
		json_t *j = json_object();
		json_object_set_new(j, "address", adac_json_addr(hi->addr));
		json_object_set_new(j, "alloc_allocated", adac_json_addr(hi->alloc_allocated));
		json_object_set_new(j, "ephemeral_segment", adac_json_addr(hi->ephemeral_segment));
		json_t *gens = json_array();
		for (unsigned g = 0; g < hi->generation_count; g++) {
			json_t *gj = json_object();
			json_object_set_new(gj, "start_segment", adac_json_addr(hi->gen[g].start_segment));
			json_object_set_new(gj, "allocation_start", adac_json_addr(hi->gen[g].allocation_start));
			json_object_set_new(gj, "alloc_ptr", adac_json_addr(hi->gen[g].alloc_ptr));
			json_object_set_new(gj, "alloc_limit", adac_json_addr(hi->gen[g].alloc_limit));
			json_array_append_new(gens, gj);
		}
		json_object_set_new(j, "generations", gens);
		json_array_append_new(heaps, j);
	}
	json_object_set_new(r, "heaps", heaps);
	json_t *regs = json_array();
	for (size_t i = 0; i < info->region_count; i++)
		json_array_append_new(regs, region_json(&info->regions[i]));
	json_object_set_new(r, "segments", regs);
	json_t *fr = json_array();
	for (size_t i = 0; i < info->free_region_count; i++)
		json_array_append_new(fr, region_json(&info->free_regions[i]));
	json_object_set_new(r, "free_regions", fr);
	json_t *ctxs = json_array();
	for (size_t i = 0; i < info->context_count; i++) {
		json_t *j = json_object();
		json_object_set_new(j, "pointer", adac_json_addr(info->contexts[i].ptr));
		json_object_set_new(j, "limit", adac_json_addr(info->contexts[i].limit));
		json_object_set_new(j, "thread", adac_json_addr(info->contexts[i].thread));
		json_array_append_new(ctxs, j);
	}
	json_object_set_new(r, "allocation_contexts", ctxs);
	json_object_set_new(r, "threads_unreadable", json_integer((json_int_t)info->threads_unreadable));
	return adac_json_print_document(out, "dumpheap", r, err);
}

void adac_gc_info_print(const struct adac_gc_info *info, struct adac_out *out)
{
	char b1[32];
	adac_print(out, "GC: %s (max generation %u)%s\n", info->identifiers, info->max_generation,
	           info->structures_valid ? "" : ", stopped during a garbage collection");
	for (unsigned h = 0; h < info->heap_count; h++) {
		const struct adac_gc_heap_info *hi = &info->heaps[h];
		if (info->server)
			adac_print(out, "Heap %u (0x%016llx):\n", h, (unsigned long long)hi->addr);
		else
			adac_print(out, "Heap %u:\n", h);
		adac_print(out, "  alloc_allocated 0x%016llx, ephemeral %s 0x%016llx\n", (unsigned long long)hi->alloc_allocated,
		           info->use_regions ? "region" : "segment", (unsigned long long)hi->ephemeral_segment);
		adac_print(out, "  %-10s %18s %18s %s\n", "generation", info->use_regions ? "first region" : "first segment",
		           "allocation start", "allocation context");
		for (unsigned g = 0; g < hi->generation_count; g++) {
			char name[16];
			if (g == 3)
				snprintf(name, sizeof name, "loh");
			else if (g == 4)
				snprintf(name, sizeof name, "poh");
			else
				snprintf(name, sizeof name, "gen%u", g);
			const struct adac_gc_generation *gen = &hi->gen[g];
			char start[24] = "-"; /* regions have no generation start */
			if (!info->use_regions)
				snprintf(start, sizeof start, "0x%016llx", (unsigned long long)gen->allocation_start);
			adac_print(out, "  %-10s 0x%016llx %18s [0x%016llx, 0x%016llx)\n", name,
			           (unsigned long long)gen->start_segment, start, (unsigned long long)gen->alloc_ptr,
			           (unsigned long long)gen->alloc_limit);
		}
	}
	adac_print(out, "%18s %18s %18s %18s %-9s %4s %12s\n", info->use_regions ? "Region" : "Segment", "Start", "End",
	           "Committed", "Kind", "Heap", "Bytes");
	uint64_t total = 0;
	for (size_t i = 0; i < info->region_count; i++) {
		const struct adac_gc_region *r = &info->regions[i];
		uint64_t bytes = adac_gc_region_bytes(r);
		total += bytes;
		adac_print(out, "0x%016llx 0x%016llx 0x%016llx 0x%016llx %-9s %4u %12llu\n", (unsigned long long)r->addr,
		           (unsigned long long)r->mem, (unsigned long long)r->end, (unsigned long long)r->committed,
		           adac_gc_kind_name(r->kind), r->heap, (unsigned long long)bytes);
	}
	adac_print(out, "Total %zu %s, %s bytes in use\n", info->region_count, info->use_regions ? "regions" : "segments",
	           commas(total, b1));
	if (info->free_region_count) {
		uint64_t reserved = 0;
		for (size_t i = 0; i < info->free_region_count; i++)
			reserved += info->free_regions[i].reserved > info->free_regions[i].mem
			                ? info->free_regions[i].reserved - info->free_regions[i].mem
			                : 0;
		adac_print(out, "Free regions: %zu (%s bytes reserved)\n", info->free_region_count, commas(reserved, b1));
	}
	adac_print(out, "Allocation contexts: %zu\n", info->context_count);
	for (size_t i = 0; i < info->context_count; i++) {
		const struct adac_gc_alloc_context *c = &info->contexts[i];
		if (c->thread)
			adac_print(out, "  [0x%016llx, 0x%016llx) thread 0x%016llx\n", (unsigned long long)c->ptr,
			           (unsigned long long)c->limit, (unsigned long long)c->thread);
		else
			adac_print(out, "  [0x%016llx, 0x%016llx) global\n", (unsigned long long)c->ptr,
			           (unsigned long long)c->limit);
	}
	if (info->threads_unreadable)
		adac_print(out, "  (%zu threads' allocation contexts could not be read)\n", info->threads_unreadable);
}
