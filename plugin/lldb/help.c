/* help.c - the help texts of the plugin's own commands; a command's details as LLDB's long help. */
#include "help.h"

#include <stdlib.h>
#include <string.h>

const char adac_lldb_async_help[] = "Show what asynchronous .NET code (runtime async) is doing in the process (asyncdac)";

const char adac_lldb_impl_help[] =
	"asyncdac's commands as 'async <command>' and 'bt' run them (those complete their options; "
	"use them)";

const char adac_lldb_bt_help[] =
	"Show the current thread's call stack; 'bt async' shows its asynchronous .NET call chains "
	"(asyncdac: any other form is LLDB's own 'bt').";
const char adac_lldb_bt_syntax[] = "bt [<digit> | all | async [<options>]]";

const char adac_lldb_threads_help[] =
	"Show each pending async chain (suspended, on no thread) as a thread of its own, named after its "
	"innermost method and its task's status, or stop showing them. At most 10000 chains are threads "
	"(--max <n>; 0: every chain), one of each distinct stack among them: one more thread then says how "
	"many were left out. Without an argument, says which it does";
const char adac_lldb_threads_syntax[] = "async threads [enable [--max <n>] | disable]";
const char adac_lldb_threads_words[] = "=enable|disable";

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
