/* adapter.c - the C entry point of the Python adapter (asyncdac_lldb.py), reached through ctypes:
 * one JSON request in, one JSON reply out. The requests name their target (debugger id, target
 * id), so they work on any target, selected or not:
 *   {"op": "thread", "debugger", "target", "tid", "input_frames": <address of an lldb::SBFrameList>}
 *       a thread's frames (adac_debugger_thread) from a frame provider's input frames, which the
 *       shim reads (shim.h);
 *   {"op": "runtime", "debugger", "target"}
 *       {"runtime": true} when the process has a .NET runtime at this stop, else the error saying
 *       why not (the frame provider then leaves its threads to LLDB);
 *   {"op": "chains", "debugger", "target"}
 *       the pending chains as threads (adac_debugger_chains, at most `async threads enable --max`),
 *       or none while `async threads` is off;
 *   {"op": "value", "debugger", "target", "frame": "0x..", "path": "aPair.Id"}
 *       a variable of an async frame (adac_debugger_value); one it types from the symbol file
 *       ("symbol_type", "slot") also gets "module": the path of the loaded symbol file;
 *   {"op": "modules", "debugger", "target"}
 *       shows LLDB the native modules of a process in a container (adac_lldb_target_show_modules;
 *       nothing for other processes, a core's only before a command): {}, from the OS plugin at
 *       each stop.
 * A failure is {"error": "<one line>"}. ctypes calls release Python's lock: the call may take the
 * time it needs. */
#include "adapter.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "help.h"
#include "reports.h"
#include "shim.h"
#include "shim_symbols.h"
#include "target_lldb.h"

static bool chain_threads;
static size_t chain_threads_max = ADAC_LLDB_CHAIN_THREADS_MAX;
static pthread_mutex_t state_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

void adac_lldb_lock(void)
{
	pthread_mutex_lock(&state_lock);
}

void adac_lldb_unlock(void)
{
	pthread_mutex_unlock(&state_lock);
}

void adac_lldb_set_chain_threads(bool on, size_t max_threads)
{
	chain_threads = on;
	chain_threads_max = max_threads;
}

size_t adac_lldb_chain_threads_max(void)
{
	return chain_threads_max;
}

bool adac_lldb_chain_threads(void)
{
	return chain_threads;
}

static char *error_reply(const char *msg)
{
	json_t *r = json_pack("{ss}", "error", msg);
	char *text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
	return text;
}

static uint64_t u64(json_t *v)
{
	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_string(v))
		return strtoull(json_string_value(v), NULL, 0);
	return 0;
}

/* The stack a frame provider gave, as the shim describes its input frames; the source files'
 * paths copied (the shim's last only during its callback). */
struct given {
	struct adac_frame *frames;
	char **files;
	size_t n, cap;
	struct adac_error err;
};

static int take_frame(void *ctx, const struct adac_frame *f)
{
	struct given *g = ctx;
	if (g->n == ADAC_MAX_UNWIND_FRAMES)
		return adac_fail(&g->err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_UNWIND_FRAMES (%u) frames",
		                 ADAC_MAX_UNWIND_FRAMES);
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct adac_frame *fr = realloc(g->frames, cap * sizeof *fr);
		if (fr)
			g->frames = fr;
		char **fi = fr ? realloc(g->files, cap * sizeof *fi) : NULL;
		if (!fi)
			return adac_fail(&g->err, ADAC_E_NOMEM, 0, "out of memory");
		g->files = fi;
		g->cap = cap;
	}
	g->frames[g->n] = *f;
	g->files[g->n] = f->file ? strdup(f->file) : NULL;
	if (f->file && !g->files[g->n])
		return adac_fail(&g->err, ADAC_E_NOMEM, 0, "out of memory");
	g->frames[g->n].file = g->files[g->n];
	g->n++;
	return 0;
}

/* Keeps the stack the provider gave (first: whatever happens next, LLDB shows the provider's
 * frames, and asyncdac's commands need the unwinder's). */
static int keep_stack(json_t *req, struct adac_target *t, struct adac_error *err)
{
	struct given g = {0};
	int rc = adac_lldb_frame_list_frames(u64(json_object_get(req, "input_frames")), take_frame, &g, err);
	if (rc == 0 && g.err.msg[0])
		rc = adac_fail(err, g.err.code, 0, "%s", g.err.msg);
	if (rc == 0)
		rc = adac_lldb_target_keep_stack(t, u64(json_object_get(req, "tid")), g.frames, g.n, err);
	for (size_t i = 0; i < g.n; i++)
		free(g.files[i]);
	free(g.files);
	free(g.frames);
	return rc;
}

/* A variable of an async frame; one to be typed from the symbol file also gets "module", the
 * file's path (the module LLDB finds the type in). */
static char *value_reply(struct adac_target *t, struct adac_runtime *rt, json_t *req, struct adac_error *err)
{
	char *reply = NULL;
	if (adac_debugger_value(rt, u64(json_object_get(req, "frame")), json_string_value(json_object_get(req, "path")),
	                        &reply, err))
		return NULL;
	const char *module = adac_lldb_target_symbols_file(t);
	json_t *r = module ? json_loads(reply, 0, NULL) : NULL;
	if (!r || !json_object_get(r, "symbol_type")) {
		json_decref(r);
		return reply;
	}
	json_object_set_new(r, "module", json_string(module));
	char *typed = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	if (!typed)
		return reply;  /* out of memory: the value as text */
	free(reply);
	return typed;
}

/* {"op": "commands"}: every command of the shared table, for the adapter's `async <name>`
 * commands: {"commands": [{"name", "summary", "syntax", "help_long"}] (help_long as
 * adac_lldb_help_long), "bt": {"summary", "syntax"} (LLDB's `bt`), "threads": {...}}. */
static char *commands_reply(struct adac_error *err)
{
	json_t *list = json_array();
	for (const struct adac_command_info *c = adac_commands(); list && c->name; c++) {
		char *help_long = adac_lldb_help_long(c->details);
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s}", "name", c->name, "summary", c->summary,
		                                      "syntax", c->syntax, "help_long", help_long ? help_long : ""));
		free(help_long);
	}
	json_t *doc = list ? json_pack("{s:o, s:{s:s, s:s}, s:{s:s, s:s}}", "commands", list, "bt", "summary",
	                               adac_lldb_bt_help, "syntax", adac_lldb_bt_syntax, "threads", "summary",
	                               adac_lldb_threads_help, "syntax", adac_lldb_threads_syntax) : NULL;
	char *reply = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (!reply)
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return reply;
}

/* The words of a command line a complete request may carry. */
#define MAX_COMPLETION_WORDS 256

/* {"op": "complete", "command": "ps", "words": ["--f"]}: adac_command_complete's reply. */
static char *complete_reply(json_t *req, struct adac_error *err)
{
	const char *name = json_string_value(json_object_get(req, "command"));
	json_t *words = json_object_get(req, "words");
	if (!name || !json_is_array(words) || json_array_size(words) > MAX_COMPLETION_WORDS) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "a complete request wants a command and at most %d words",
		          MAX_COMPLETION_WORDS);
		return NULL;
	}
	const char *w[MAX_COMPLETION_WORDS];
	size_t n = json_array_size(words);
	for (size_t i = 0; i < n; i++) {
		w[i] = json_string_value(json_array_get(words, i));
		if (!w[i])
			w[i] = "";
	}
	char *reply = NULL;
	if (strcmp(name, "threads") == 0)  /* the plugin's own: enable | disable */
		adac_command_complete_values(adac_lldb_threads_words, (int)n, w, &reply, err);
	else
		adac_command_complete(name, (int)n, w, &reply, err);
	return reply;
}

static void show_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	adac_lldb_reports_show(ctx, phase, done, total);
}

/* The pending chains as threads, the scan's progress reported to the debugger (a million chains
 * take a second or more, at each stop). */
static char *chains_reply(struct adac_runtime *rt, uint64_t debugger, struct adac_error *err)
{
	struct adac_lldb_reports reports = {.progress = adac_lldb_progress_new(debugger), .details = "async threads"};
	struct adac_out out = {.ctx = &reports, .progress = show_progress};
	char *reply = NULL;
	adac_debugger_chains(rt, chain_threads_max, &out, &reply, err);
	adac_lldb_progress_free(reports.progress);
	return reply;
}

static char *handle(json_t *req, struct adac_error *err)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	if (!op) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "the request has no op");
		return NULL;
	}
	if (strcmp(op, "chains") == 0 && !chain_threads)
		return strdup("{\"threads\":[]}");
	if (strcmp(op, "commands") == 0)
		return commands_reply(err);
	if (strcmp(op, "complete") == 0)
		return complete_reply(req, err);
	struct adac_target *t = adac_lldb_target_find(u64(json_object_get(req, "debugger")),
	                                              u64(json_object_get(req, "target")), err);
	if (!t || (strcmp(op, "thread") == 0 && keep_stack(req, t, err)))
		return NULL;
	/* (No runtime needed: a container's native modules are LLDB's, .NET or not.) */
	if (strcmp(op, "modules") == 0) {
		adac_lldb_target_show_modules(t, true);
		return strdup("{}");
	}
	struct adac_runtime *rt = adac_lldb_runtime(t, err);
	if (!rt)
		return NULL;
	char *reply = NULL;
	if (strcmp(op, "runtime") == 0)
		reply = strdup("{\"runtime\":true}");
	else if (strcmp(op, "thread") == 0) {
		adac_lldb_target_building(t, u64(json_object_get(req, "tid")), u64(json_object_get(req, "input_frames")));
		adac_debugger_thread(rt, u64(json_object_get(req, "tid")), &reply, err);
		adac_lldb_target_building(t, 0, 0);
	}
	else if (strcmp(op, "chains") == 0)
		reply = chains_reply(rt, u64(json_object_get(req, "debugger")), err);
	else if (strcmp(op, "value") == 0)
		reply = value_reply(t, rt, req, err);
	else
		adac_fail(err, ADAC_E_BAD_ARG, 0, "unknown op '%s'", op);
	return reply;
}

char *asyncdac_lldb_call(const char *request)
{
	struct adac_error err = {0};
	json_error_t jerr;
	json_t *req = request ? json_loads(request, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!req)
		return error_reply("bad request: not JSON");
	adac_lldb_lock();
	char *reply = handle(req, &err);
	adac_lldb_unlock();
	json_decref(req);
	if (!reply)
		return error_reply(err.msg[0] ? err.msg : "out of memory");
	return reply;
}

void asyncdac_lldb_free(char *reply)
{
	free(reply);
}
