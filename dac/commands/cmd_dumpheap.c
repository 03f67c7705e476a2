/* cmd_dumpheap.c - `dumpheap`: every object of the GC heap, or counts per type (like SOS dumpheap),
 * and `dumpheap --segments`: the GC's heaps, regions/segments and allocation contexts. */
#include "commands/command.h"
#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "view/heap_view.h"

const struct adac_command_info adac_cmd_dumpheap_info = {
	.name = "dumpheap",
	.summary = "List the objects of the GC heap, or count them per type",
	.syntax = "[--stat] [--mt <MethodTable>] [--type <substring>] [--short] [--segments] [--json [--timings]]",
	.details =
		"Walks every region (or segment) of every GC heap from the runtime's GC data, in\n"
		"address order, skipping free objects and the unused parts of allocation\n"
		"contexts, and prints each object's address, MethodTable and size (BaseSize +\n"
		"ComponentSize * length, before alignment, as SOS prints it), then statistics:\n"
		"per MethodTable the object count and total size, smallest total first, and the\n"
		"totals. Free objects are not listed; their count and size follow the totals. A\n"
		"region whose walk meets a bad object (unreadable or null MethodTable,\n"
		"impossible size) is reported after the statistics and the command fails; the\n"
		"other regions are still walked.\n"
		"\n"
		"Options:\n"
		"  -s, --stat            Print only the statistics.\n"
		"      --mt <address>    Only objects with this MethodTable.\n"
		"  -t, --type <text>     Only objects whose type name contains <text>,\n"
		"                        ignoring case, in any spelling (as ps --type).\n"
		"      --short           Print only the addresses of the objects, one per line.\n"
		"      --segments        Print the GC's heaps, generations, regions/segments and\n"
		"                        allocation contexts instead of objects.\n"
		"  -j, --json            Print the same facts as one JSON object (docs/json.md).\n"
		"      --timings         With --json: the heap walk's wall time.\n",
};

int adac_cmd_dumpheap(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                      struct adac_error *err)
{
	(void)fe;
	struct adac_heap_opts opt = {0};
	bool segments = false;
	for (int i = 1; i < argc; i++) {
		const char *v;
		if (adac_opt_is(argv[i], "-s", "--stat")) {
			opt.stat = true;
		} else if (adac_opt_is(argv[i], "-j", "--json")) {
			opt.json = true;
		} else if (adac_opt_is(argv[i], NULL, "--timings")) {
			opt.timings = true;
		} else if (adac_opt_is(argv[i], NULL, "--segments")) {
			segments = true;
		} else if (adac_opt_is(argv[i], NULL, "--short")) {
			opt.short_list = true;
		} else if (adac_opt_is(argv[i], NULL, "--mt")) {
			if (adac_opt_value("dumpheap", argc, argv, &i, &v, err) || adac_opt_u64("dumpheap", "--mt", v, &opt.mt, err))
				return -1;
			opt.has_mt = true;
		} else if (adac_opt_is(argv[i], "-t", "--type")) {
			if (adac_opt_value("dumpheap", argc, argv, &i, &opt.type, err))
				return -1;
		} else {
			return adac_opt_unknown("dumpheap", argv[i], err);
		}
	}
	if (segments && (opt.stat || opt.has_mt || opt.type || opt.short_list))
		return adac_fail(err, ADAC_E_USAGE, 0, "--segments of 'dumpheap' takes no object filter or --stat/--short");
	if (opt.timings && (!opt.json || segments))
		return adac_fail(err, ADAC_E_USAGE, 0, "--timings of 'dumpheap' applies to the JSON of a heap walk (--json)");
	if (opt.short_list && (opt.stat || opt.json))
		return adac_fail(err, ADAC_E_USAGE, 0, "--short of 'dumpheap' cannot be combined with --stat or --json");
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = 0;
	if (segments) {
		const struct adac_gc_info *info = adac_gc_info(rt, err);
		if (!info)
			rc = -1;
		else if (opt.json)
			rc = adac_gc_info_print_json(info, out, err);
		else
			adac_gc_info_print(info, out);
	} else {
		rc = adac_heap_print(rt, &opt, out, err);
	}
	adac_runtime_release(rt);
	return rc;
}
