/* target_lldb.c - the "lldb" data target: dac/'s backend contract (target.h) over LLDB's process,
 * live or a core, through the SB shim (shim.h). */
#include "target_lldb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "shim_symbols.h"

static int64_t lldb_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	return adac_lldb_process_read(impl, addr, buf, len, err);
}

struct module_walk {
	adac_module_cb cb;
	void *ctx;
};

/* LLDB names a library as the dynamic linker was asked for it (/lib/x86_64-linux-gnu/libc.so.6);
 * the kernel, and so the core and pid backends, by its canonical path (/usr/lib/...). Use the
 * canonical path when the file is on this machine, so both front ends print the same. */
static int canonical_module(void *ctx, const struct adac_module *m)
{
	struct module_walk *w = ctx;
	if (adac_lldb_is_symbols_file(m->path))
		return 0; /* ours, not the process's: it covers managed code that no module maps */
	struct adac_module copy = *m;
	char *real = m->path[0] == '/' ? realpath(m->path, NULL) : NULL;
	if (real)
		copy.path = real;
	int stop = w->cb(w->ctx, &copy);
	free(real);
	return stop;
}

static int lldb_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	struct module_walk w = {cb, ctx};
	return adac_lldb_process_modules(impl, canonical_module, &w, err);
}

static int lldb_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	return adac_lldb_process_threads(impl, cb, ctx, err);
}

static int lldb_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	return adac_lldb_process_regs(impl, tid, regs, err);
}

static int lldb_frames(void *impl, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err)
{
	return adac_lldb_process_frames(impl, tid, cb, ctx, err);
}

/* One LLDB session, one command thread: the file loaded now ("" when none) and the number of the
 * next one. */
static char loaded_path[4096];
static unsigned generation;

static int lldb_symbols_path(void *impl, char *buf, size_t size, struct adac_error *err)
{
	(void)impl;
	return adac_lldb_symbols_file(++generation, buf, size < sizeof loaded_path ? size : sizeof loaded_path, err);
}

static int lldb_load_symbols(void *impl, const char *path, struct adac_error *err)
{
	if (adac_lldb_process_replace_module(impl, loaded_path[0] ? loaded_path : NULL, path, err)) {
		adac_lldb_remove_symbols_file(path);
		return -1;
	}
	if (loaded_path[0] && strcmp(loaded_path, path) != 0)
		adac_lldb_remove_symbols_file(loaded_path);
	snprintf(loaded_path, sizeof loaded_path, "%s", path);
	return 0;
}

static uint64_t lldb_stop_id(void *impl)
{
	return adac_lldb_process_stop_id(impl);
}

static uint64_t lldb_selected_thread(void *impl)
{
	return adac_lldb_process_selected_thread(impl);
}

static void lldb_close(void *impl)
{
	adac_lldb_process_close(impl);
}

/* find_symbol is left NULL: the generic .dynsym lookup reads through lldb_read, the same path the
 * CLI takes, so both front ends find the descriptor the same way. */
static const struct adac_target_ops lldb_ops = {
	.kind = "lldb",
	.read = lldb_read,
	.modules = lldb_modules,
	.threads = lldb_threads,
	.regs = lldb_regs,
	.frames = lldb_frames,
	.stop_id = lldb_stop_id,
	.selected_thread = lldb_selected_thread,
	.symbols_path = lldb_symbols_path,
	.load_symbols = lldb_load_symbols,
	.close = lldb_close,
};

/* The target of the process last used, keyed by LLDB's process unique id. Commands run on
 * LLDB's command thread one at a time, so this needs no lock. */
static struct adac_target *cached_target;
static uint64_t cached_process_id;

struct adac_target *adac_lldb_target(struct adac_lldb_cmd *cmd, struct adac_error *err)
{
	uint64_t id = 0;
	switch (adac_lldb_cmd_process_state(cmd, &id)) {
	case ADAC_LLDB_NO_PROCESS:
		adac_fail(err, ADAC_E_BAD_ARG, 0,
		          "no process (use 'process attach', 'process launch' or 'target create --core')");
		return NULL;
	case ADAC_LLDB_RUNNING:
		adac_fail(err, ADAC_E_BAD_ARG, 0, "the process is running (use 'process interrupt' to stop it)");
		return NULL;
	case ADAC_LLDB_STOPPED:
		break;
	}
	if (cached_target && cached_process_id == id)
		return cached_target;
	adac_target_close(cached_target);
	cached_target = NULL;
	struct adac_lldb_process *p = adac_lldb_process_open(cmd, err);
	if (!p)
		return NULL;
	cached_target = adac_target_new(&lldb_ops, p, err);
	cached_process_id = id;
	return cached_target;
}
