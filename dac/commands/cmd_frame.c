/* cmd_frame.c - `frame`: select one async frame and show its awaited locals (LLDB's `async frame
 * select N` / `async frame variable [name]`).
 *
 * Frames are numbered exactly as `bt` numbers them: for an address (a Continuation, or a task
 * whose state object is one), the user frames of its chain from #0; for a thread, its async frames
 * across the chains its dispatcher records run, innermost loop first, from #0. The selection
 * (target.h, struct adac_selection) keeps the chosen frame's continuation until the target runs:
 *   - `frame select N --address A` selects frame N of A's chain and remembers that chain, so a
 *     later `frame select M` without options moves within the same chain;
 *   - `frame select N [--thread T]` selects frame N of the thread's async frames (the selected
 *     thread in LLDB unless --thread is given) and forgets any address chain.
 * `frame variable` shows the selected frame's locals, or those of frame --frame N (default 0) of
 * --address A / --thread T when given (the only way in the CLI, where nothing persists between
 * runs). */
#include <string.h>

#include "async/async_frame.h"
#include "async/continuation.h"
#include "base/json.h"
#include "commands/command.h"
#include "runtime/runtime.h"
#include "view/backtrace_view.h"
#include "view/chain_view.h"
#include "view/frame_view.h"
#include "view/value_format.h"

const struct adac_command_info adac_cmd_frame_info = {
	.name = "frame",
	.summary = "Select an async frame and show its awaited locals",
	.syntax = "select <n> | variable [<name>] | info [--address <addr> | --thread <id>] [--frame <n>] [-D <depth>] "
	          "[-Z <count>] [--all] [--json]",
	.details =
		"Async frames are numbered as 'bt' numbers them: the user frames of the chain of\n"
		"an address (a Continuation, or a task whose state object is one) from #0, or a\n"
		"thread's async frames across the chains it runs from #0.\n"
		"\n"
		"  frame select <n>   Select async frame n and show it: of the chain of\n"
		"                     --address (a later 'frame select' without options\n"
		"                     stays in that chain), else of the thread's async\n"
		"                     frames (--thread, or LLDB's selected thread).\n"
		"  frame variable [<name>]\n"
		"                     Show the locals the selected frame saved at its\n"
		"                     await (or only <name>): (int) count = 42. With\n"
		"                     --address or --thread: of frame --frame <n>\n"
		"                     (default 0) of that chain instead.\n"
		"  frame info         Show the selected frame.\n"
		"\n"
		"Options:\n"
		"  -A, --address <addr>  A Continuation, or a task owning one.\n"
		"  -t, --thread <id>     LLDB: the thread's index; CLI: its OS thread id.\n"
		"  -f, --frame <n>       With --address or --thread: the frame (default 0).\n"
		"  -D, --depth <n>       Levels of objects and structs expanded (default 1).\n"
		"  -Z, --elements <n>    Elements and fields shown per object (default 16).\n"
		"  -a, --all             Also the compiler's temporaries (V_<n>) and the\n"
		"                        continuation's internals ([Flags], [result], ...),\n"
		"                        after the source's variables.\n"
		"  -I, --internals       The same as --all.\n"
		"  -j, --json            Print JSON (every variable; docs/json.md).\n"
		"\n"
		"In the CLI the target comes first:\n"
		"  asyncdac frame <core-file> variable --address <addr> [--frame <n>]\n",
	.values = "=select|variable|info",
};

struct frame_opts {
	const char *sub;
	const char *name;
	bool has_index, has_address, has_thread, has_frame, json;
	uint64_t index, address, thread, frame;
	struct adac_value_opts values;
};

static int parse(int argc, char **argv, struct frame_opts *o, struct adac_error *err)
{
	memset(o, 0, sizeof *o);
	adac_value_opts_default(&o->values);
	if (argc < 2)
		return adac_fail(err, ADAC_E_USAGE, 0, "'frame' needs a subcommand: select, variable or info");
	o->sub = argv[1];
	if (strcmp(o->sub, "select") && strcmp(o->sub, "variable") && strcmp(o->sub, "info"))
		return adac_fail(err, ADAC_E_USAGE, 0, "'%s' is not a 'frame' subcommand (select, variable, info)", o->sub);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v;
		uint64_t n;
		if (adac_opt_is(a, "-A", "--address")) {
			if (adac_opt_value("frame", argc, argv, &i, &v, err) || adac_opt_u64("frame", a, v, &o->address, err))
				return -1;
			o->has_address = true;
		} else if (adac_opt_is(a, "-t", "--thread")) {
			if (adac_opt_value("frame", argc, argv, &i, &v, err) || adac_opt_u64("frame", a, v, &o->thread, err))
				return -1;
			o->has_thread = true;
		} else if (adac_opt_is(a, "-f", "--frame")) {
			if (adac_opt_value("frame", argc, argv, &i, &v, err) || adac_opt_u64("frame", a, v, &o->frame, err))
				return -1;
			o->has_frame = true;
		} else if (adac_opt_is(a, "-D", "--depth")) {
			if (adac_opt_value("frame", argc, argv, &i, &v, err) || adac_opt_u64("frame", a, v, &n, err))
				return -1;
			if (n > 16)
				return adac_fail(err, ADAC_E_USAGE, 0, "--depth must be at most 16");
			o->values.max_depth = (unsigned)n;
		} else if (adac_opt_is(a, "-Z", "--elements")) {
			if (adac_opt_value("frame", argc, argv, &i, &v, err) || adac_opt_u64("frame", a, v, &n, err))
				return -1;
			if (n == 0 || n > 100000)
				return adac_fail(err, ADAC_E_USAGE, 0, "--elements must be between 1 and 100000");
			o->values.max_elements = (unsigned)n;
		} else if (adac_opt_is(a, "-j", "--json")) {
			o->json = true;
		} else if (adac_opt_is(a, "-a", "--all") || adac_opt_is(a, "-I", "--internals")) {
			o->values.internals = true;
		} else if (a[0] != '-' && strcmp(o->sub, "select") == 0 && !o->has_index) {
			if (adac_opt_u64("frame", "select", a, &o->index, err))
				return -1;
			o->has_index = true;
		} else if (a[0] != '-' && strcmp(o->sub, "variable") == 0 && !o->name) {
			o->name = a;
		} else {
			return adac_opt_unknown("frame", a, err);
		}
	}
	if (o->has_address && o->has_thread)
		return adac_fail(err, ADAC_E_USAGE, 0, "give either --address or --thread, not both");
	if (strcmp(o->sub, "select") == 0 && !o->has_index)
		return adac_fail(err, ADAC_E_USAGE, 0, "'frame select' needs a frame number");
	if (o->has_frame && strcmp(o->sub, "select") == 0)
		return adac_fail(err, ADAC_E_USAGE, 0, "'frame select' takes the frame number as its argument, not --frame");
	if (o->has_frame && !o->has_address && !o->has_thread)
		return adac_fail(err, ADAC_E_USAGE, 0, "--frame needs --address or --thread (or use 'frame select')");
	return 0;
}

/* The OS thread id of the thread the options (or LLDB's selection) name. */
static int thread_tid(struct adac_target *t, enum adac_frontend fe, const struct frame_opts *o, uint64_t *tid,
                      struct adac_error *err)
{
	*tid = 0;
	if (!o->has_thread) {
		*tid = fe == ADAC_FRONTEND_LLDB ? adac_target_selected_thread(t) : 0;
		if (!*tid)
			return adac_fail(err, ADAC_E_USAGE, 0, "no thread is selected: give --address or --thread");
		return 0;
	}
	const struct adac_thread *threads;
	size_t n;
	if (adac_target_threads(t, &threads, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (adac_opt_thread_id(fe, &threads[i]) == o->thread) {
			*tid = threads[i].tid;
			return 0;
		}
	}
	return adac_opt_no_thread(fe, o->thread, err);
}

/* The frame the options name, or the selected one. */
static int resolve_target_frame(struct adac_runtime *rt, enum adac_frontend fe, const struct frame_opts *o,
                                uint64_t want, struct adac_async_frame *f, uint64_t *index, uint64_t *head,
                                bool *from_address, struct adac_error *err)
{
	struct adac_selection *sel = adac_target_selection(rt->t);
	*index = want;
	*head = 0;
	*from_address = false;
	bool by_selection = strcmp(o->sub, "select") != 0 && !o->has_address && !o->has_thread;
	if (by_selection) {
		if (!sel->valid)
			/* Each CLI run starts afresh: there is no earlier 'frame select' to remember. */
			return adac_fail(err, ADAC_E_USAGE, 0, fe == ADAC_FRONTEND_LLDB
			                     ? "no async frame is selected: use 'frame select <n>' first, or give --address or --thread"
			                     : "give the frame by --address or --thread (with --frame <n>)");
		struct adac_continuation c;
		if (adac_cont_read(rt, sel->continuation, &c, err)) {
			adac_error_wrap(err, "the selected frame #%u: ", sel->frame);
			return -1;
		}
		adac_async_frame_resolve(rt, &c, f);
		*index = sel->frame;
		*head = sel->chain_head;
		return 0;
	}
	if (o->has_address || (!o->has_thread && sel->valid && sel->chain_head && strcmp(o->sub, "select") == 0)) {
		uint64_t h = sel->chain_head, task;
		if (o->has_address && adac_chain_head_of(rt, o->address, &h, &task, err))
			return -1;
		*head = h;
		*from_address = true;
		return adac_bt_chain_frame(rt, h, want, f, err);
	}
	uint64_t tid;
	if (thread_tid(rt->t, fe, o, &tid, err))
		return -1;
	return adac_bt_thread_frame(rt, tid, want, f, head, err);
}

int adac_cmd_frame(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                   struct adac_error *err)
{
	struct frame_opts o;
	if (parse(argc, argv, &o, err))
		return -1;
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = 0;
	struct adac_async_frame f;
	uint64_t index, head;
	bool from_address;
	uint64_t want = strcmp(o.sub, "select") == 0 ? o.index : o.frame;
	if (resolve_target_frame(rt, fe, &o, want, &f, &index, &head, &from_address, err)) {
		rc = -1;
		goto done;
	}
	if (strcmp(o.sub, "select") == 0) {
		struct adac_selection *sel = adac_target_selection(t);
		sel->valid = true;
		sel->chain_head = from_address ? head : 0;
		sel->continuation = f.cont.addr;
		sel->frame = (uint32_t)index;
	}
	if (strcmp(o.sub, "variable") != 0) {
		if (o.json)
			rc = adac_json_print_document(out, "frame", adac_async_frame_json(&f, index), err);
		else
			adac_async_frame_print(&f, index, "", out);
		goto done;
	}
	if (o.json)
		rc = adac_frame_variables_print_json(rt, &f, index, o.name, &o.values, out, err);
	else
		rc = adac_frame_variables_print(rt, &f, index, o.name, &o.values, out, err);
done:
	adac_runtime_release(rt);
	return rc;
}
