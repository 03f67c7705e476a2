/* commands.c - the plugin's commands: `async <name>` runs the shared command layer (dac/) on the
 * LLDB target and prints into the command's result; `bt` hands `bt async ...` to `async bt` and
 * forwards every other form, unchanged, to LLDB's own `_regexp-bt`. */
#include "commands.h"

#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "shim.h"
#include "target_lldb.h"

const char adac_lldb_async_help[] = "Show what asynchronous .NET code (runtime async) is doing in the process (asyncdac)";

const char adac_lldb_bt_help[] =
	"Show the current thread's call stack; 'bt async' shows its asynchronous .NET call chains "
	"(asyncdac: any other form is LLDB's own 'bt').";
const char adac_lldb_bt_syntax[] = "bt [<digit> | all | async [<options>]]";

char *adac_lldb_help_long(const char *details)
{
	/* LLDB wraps every line of a long help on its own, keeping the line's indentation: so join
	 * each paragraph of unindented lines into one line, keep indented lines (option lists) as
	 * they are, and start with a blank line to set the text off from "Syntax:". */
	size_t n = strlen(details);
	char *text = malloc(n + 2);
	if (!text)
		return NULL;
	size_t len = 0;
	text[len++] = '\n';
	for (const char *line = details; *line;) {
		const char *eol = strchr(line, '\n');
		size_t ll = eol ? (size_t)(eol - line) : strlen(line);
		memcpy(text + len, line, ll);
		len += ll;
		const char *next = eol ? eol + 1 : line + ll;
		int joins = ll > 0 && line[0] != ' ' && line[0] != '\t' && *next && *next != '\n' && *next != ' ' &&
		            *next != '\t';
		if (eol)
			text[len++] = joins ? ' ' : '\n';
		line = next;
	}
	text[len] = '\0';
	return text;
}

static void write_result(void *ctx, const char *text, size_t len)
{
	adac_lldb_cmd_write(ctx, text, len);
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
	struct adac_target *t = adac_lldb_target(cmd, &err);
	if (!t) {
		adac_lldb_cmd_error(cmd, err.msg);
		return -1;
	}
	size_t nargs = count_args(args);
	char **argv = calloc(nargs + 2, sizeof *argv);
	if (!argv) {
		adac_lldb_cmd_error(cmd, "out of memory");
		return -1;
	}
	argv[0] = (char *)name;
	for (size_t i = 0; i < nargs; i++)
		argv[i + 1] = args[i];
	struct adac_out out = {.write = write_result, .ctx = cmd};
	int rc = adac_command_run(t, ADAC_FRONTEND_LLDB, (int)nargs + 1, argv, &out, &err);
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
