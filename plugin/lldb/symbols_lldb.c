/* symbols_lldb.c - `async symbols` in LLDB, and loading symbols by itself once per stop. */
#include "symbols_lldb.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "asyncdac.h"
#include "commands.h"
#include "shim.h"
#include "shim_symbols.h"
#include "target_lldb.h"

/* Commands run on LLDB's command thread one at a time: plain statics. */
static int auto_on = 1;
static uint64_t refreshed_process, refreshed_stop;   /* what the loaded symbols describe */

/* Commands that show frames (the aliases bt, up, down, f, v, image lookup, p resolve to these). */
const char *const adac_lldb_symbols_watched[] = {
	"thread backtrace", "thread select", "frame select", "frame variable", "frame info",
	"source list", "target modules lookup", "disassemble", "process status", "dwim-print", "expression", NULL,
};

void adac_lldb_symbols_init(void)
{
	const char *v = getenv("ASYNCDAC_AUTO_SYMBOLS");
	auto_on = !(v && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0));
}

static void discard(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

/* The stop the loaded symbols describe. */
static void mark_current(struct adac_lldb_cmd *cmd)
{
	uint64_t id = 0;
	if (adac_lldb_cmd_process_state(cmd, &id) == ADAC_LLDB_STOPPED) {
		refreshed_process = id;
		refreshed_stop = adac_lldb_cmd_stop_id(cmd);
	}
}

int adac_lldb_symbols(struct adac_lldb_cmd *cmd, char **args)
{
	if (!args || !args[0] || strcmp(args[0], "--auto") != 0) {
		int rc = adac_lldb_async(cmd, "symbols", args);
		bool loaded = rc == 0;
		for (size_t i = 0; args && args[i]; i++)
			loaded &= strcmp(args[i], "-o") != 0 && strcmp(args[i], "--output") != 0;
		if (loaded)
			mark_current(cmd);
		return rc;
	}
	const char *v = args[1];
	if (!v || args[2] || (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)) {
		adac_lldb_cmd_error(cmd, "--auto takes 'on' or 'off'");
		return -1;
	}
	auto_on = strcmp(v, "on") == 0;
	char msg[96];
	int n = snprintf(msg, sizeof msg, "Loading symbols when the process stops: %s\n", auto_on ? "on" : "off");
	adac_lldb_cmd_write(cmd, msg, (size_t)n);
	return 0;
}

void adac_lldb_symbols_refresh(struct adac_lldb_cmd *cmd)
{
	uint64_t id = 0;
	if (adac_lldb_cmd_process_state(cmd, &id) != ADAC_LLDB_STOPPED)
		return;
	uint64_t stop = adac_lldb_cmd_stop_id(cmd);
	struct adac_error err = {0};
	struct adac_target *t = adac_lldb_target(cmd, &err);
	if (!t)
		return;
	/* A container's or a core's native modules first (once a stop): LLDB unwinds through them
	 * into managed frames. */
	adac_lldb_target_show_modules(t, false);
	if (!auto_on || (id == refreshed_process && stop == refreshed_stop))
		return;
	refreshed_process = id;
	refreshed_stop = stop;
	/* The stacks and the chains they run: no heap scan on every stop, unless the pending chains
	 * are threads (`async threads enable` scans the heap for them anyway): then the types of their
	 * variables too, for their frames' values. Not their methods: LLDB would then tell their
	 * frames apart by function rather than pc, and a recursion's frames would be one. */
	char *argv[] = {"symbols", "--stacks", "--chain-types", NULL};
	struct adac_out quiet = {.write = discard};
	adac_command_run(t, ADAC_FRONTEND_LLDB, adac_lldb_chain_threads() ? 3 : 2, argv, &quiet, &err);
}

