/* commands.c - the plugin's commands: `async <name>` runs the shared command layer (dac/) on the
 * LLDB target and prints into the command's result; `bt` hands `bt async ...` to `async bt` and
 * forwards every other form, unchanged, to LLDB's own `_regexp-bt`. */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "asyncdac.h"
#include "reports.h"
#include "shim.h"
#include "target_lldb.h"

/* A command's sink: its result, and its progress as LLDB reports (reports.h). */
struct sink {
	struct adac_lldb_cmd *cmd;
	struct adac_lldb_reports reports;
};

static void write_result(void *ctx, const char *text, size_t len)
{
	struct sink *s = ctx;
	adac_lldb_cmd_write(s->cmd, text, len);
}

static void show_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct sink *s = ctx;
	adac_lldb_reports_show(&s->reports, phase, done, total);
}

static bool interrupted(void *ctx)
{
	struct sink *s = ctx;
	return adac_lldb_cmd_interrupted(s->cmd);
}

static size_t count_args(char **args)
{
	size_t n = 0;
	while (args && args[n])
		n++;
	return n;
}

int adac_lldb_async(struct adac_lldb_cmd *cmd, const char *name, char **args)
{
	struct adac_error err = {0};
	size_t nargs = count_args(args);
	char **argv = calloc(nargs + 2, sizeof *argv);
	if (!argv) {
		adac_lldb_cmd_error(cmd, "out of memory");
		return -1;
	}
	argv[0] = (char *)name;
	for (size_t i = 0; i < nargs; i++)
		argv[i + 1] = args[i];
	/* `async ps --help` is `help async ps`, as `asyncdac ps --help` is the CLI's help. */
	for (size_t i = 1; i <= nargs; i++)
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			char line[64];
			snprintf(line, sizeof line, "help async %s", name);
			free(argv);
			return adac_lldb_cmd_forward(cmd, line);
		}
	/* A mistyped option is said before the process is touched (modules shown, a GC let finish). */
	const struct adac_command_info *info = adac_command_find(name);
	struct adac_target *t = NULL;
	if ((info && adac_command_check_options(info, (int)nargs + 1, argv, &err)) || !(t = adac_lldb_target(cmd, &err))) {
		adac_lldb_cmd_error(cmd, err.msg);
		free(argv);
		return -1;
	}
	/* A container's or a core's native modules first (once a stop, if the OS plugin could not):
	 * the command may unwind a thread through LLDB. */
	adac_lldb_target_show_modules(t, false);
	struct sink sink = {.cmd = cmd, .reports.progress = adac_lldb_cmd_progress(cmd)};
	snprintf(sink.reports.details, sizeof sink.reports.details, "async %s", name);
	struct adac_out out = {.write = write_result, .ctx = &sink, .progress = show_progress, .interrupted = interrupted};
	int rc = adac_command_run(t, ADAC_FRONTEND_LLDB, (int)nargs + 1, argv, &out, &err);
	show_progress(&sink, NULL, 0, 0);
	free(argv);
	if (rc)
		adac_lldb_cmd_error(cmd, err.msg);
	return rc ? -1 : 0;
}

/* Appends arg to line, quoted the way LLDB's argument parser reads it back unchanged. */
static void append_arg(char *line, size_t *len, const char *arg)
{
	int plain = arg[0] != '\0' && !strpbrk(arg, " \t\n\"'`\\");
	line[(*len)++] = ' ';
	if (plain) {
		size_t n = strlen(arg);
		memcpy(line + *len, arg, n);
		*len += n;
		return;
	}
	line[(*len)++] = '"';
	for (const char *s = arg; *s; s++) {
		if (*s == '"' || *s == '\\' || *s == '`')
			line[(*len)++] = '\\';
		line[(*len)++] = *s;
	}
	line[(*len)++] = '"';
}

int adac_lldb_bt(struct adac_lldb_cmd *cmd, char **args)
{
	if (args && args[0] && strcmp(args[0], "async") == 0) {
		if (!adac_command_find("bt")) {
			adac_lldb_cmd_error(cmd, "'async bt' is not available yet");
			return -1;
		}
		return adac_lldb_async(cmd, "bt", args + 1);
	}
	static const char forward_to[] = "_regexp-bt";
	size_t size = sizeof forward_to;
	for (size_t i = 0; args && args[i]; i++)
		size += 3 + 2 * strlen(args[i]);  /* space, quotes, every byte escaped */
	char *line = malloc(size);
	if (!line) {
		adac_lldb_cmd_error(cmd, "out of memory");
		return -1;
	}
	size_t len = sizeof forward_to - 1;
	memcpy(line, forward_to, len);
	for (size_t i = 0; args && args[i]; i++)
		append_arg(line, &len, args[i]);
	line[len] = '\0';
	int rc = adac_lldb_cmd_forward(cmd, line);
	free(line);
	return rc;
}

/* `enable`'s --max: a count, 0 for no cap. */
static bool parse_max(const char *v, size_t *max)
{
	char *end;
	if (!v || !isdigit((unsigned char)v[0]))
		return false;
	errno = 0;
	unsigned long long n = strtoull(v, &end, 10);
	if (errno || *end || n > SIZE_MAX)
		return false;
	*max = (size_t)n;
	return true;
}

int adac_lldb_threads(struct adac_lldb_cmd *cmd, char **args)
{
	if (!args || !args[0]) {  /* what it does now */
		char text[160];
		size_t max = adac_lldb_chain_threads_max();
		if (!adac_lldb_chain_threads())
			snprintf(text, sizeof text, "Pending chains are not shown as threads.\n");
		else if (max)
			snprintf(text, sizeof text, "Pending chains are shown as threads: at most %zu of them.\n", max);
		else
			snprintf(text, sizeof text, "Pending chains are shown as threads: every one of them.\n");
		adac_lldb_cmd_write(cmd, text, strlen(text));
		return 0;
	}
	bool on = false, usage = false;
	size_t max = ADAC_LLDB_CHAIN_THREADS_MAX;
	if (strcmp(args[0], "enable") == 0) {
		on = true;
		if (args[1] && (strcmp(args[1], "--max") == 0 || strcmp(args[1], "-m") == 0)) {
			if (!parse_max(args[2], &max)) {
				char msg[256];
				snprintf(msg, sizeof msg, "invalid value '%.64s' for option --max of 'async threads enable': "
				         "a number of threads (0: every chain)", args[2] ? args[2] : "");
				adac_lldb_cmd_error(cmd, msg);
				return -1;
			}
			usage = args[3] != NULL;
		} else {
			usage = args[1] != NULL;
		}
	} else {
		usage = strcmp(args[0], "disable") != 0 || args[1];
	}
	if (usage) {
		adac_lldb_cmd_error(cmd, "usage: async threads [enable [--max <n>] | disable]");
		return -1;
	}
	/* The threads come from asyncdac's OS plugin (asyncdac_lldb.py), which LLDB asks for a process's
	 * threads when it creates, attaches or stops it. Making LLDB ask again for a process it already
	 * has (setting the plugin's path again) loses threads of a core in LLDB 22.1.8: not done. */
	char path[4096];
	static const char adapter[] = "asyncdac_lldb.py";
	size_t n = adac_lldb_cmd_setting(cmd, "target.process.python-os-plugin-path", path, sizeof path);
	if (n < sizeof adapter - 1 || strcmp(path + n - (sizeof adapter - 1), adapter) != 0) {
		adac_lldb_cmd_error(cmd, n ? "target.process.python-os-plugin-path is another OS plugin: asyncdac cannot "
		                             "add threads"
		                           : "asyncdac's Python adapter is not loaded: it cannot add threads");
		return -1;
	}
	bool changed = adac_lldb_chain_threads() != on || (on && adac_lldb_chain_threads_max() != max);
	adac_lldb_set_chain_threads(on, on ? max : adac_lldb_chain_threads_max());
	uint64_t id;
	if (changed && adac_lldb_cmd_process_state(cmd, &id) != ADAC_LLDB_NO_PROCESS) {
		static const char note[] =
			"note: this takes effect when LLDB reads the process's threads again: at its next stop (a live "
			"process), or when the process is created or attached again (a core: 'target create --core')\n";
		adac_lldb_cmd_write(cmd, note, sizeof note - 1);
	}
	return 0;
}
