/* command.c - dispatches a command line to its cmd_<name>.c, and shared option parsing. */
#include "commands/command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/gc_heap.h"
#include "runtime/runtime.h"
#include "target/target.h"

struct entry {
	const struct adac_command_info *info;
	adac_command_fn run;
};

static const struct entry entries[] = {
	{&adac_cmd_bt_info, adac_cmd_bt},
	{&adac_cmd_runtime_info, adac_cmd_runtime},
	{&adac_cmd_ip2md_info, adac_cmd_ip2md},
	{&adac_cmd_dumpmd_info, adac_cmd_dumpmd},
	{&adac_cmd_frame_info, adac_cmd_frame},
	{&adac_cmd_dumpheap_info, adac_cmd_dumpheap},
	{&adac_cmd_ps_info, adac_cmd_ps},
	{&adac_cmd_symbols_info, adac_cmd_symbols},
	{&adac_cmd_dumpobj_info, adac_cmd_dumpobj},
	{&adac_cmd_pe_info, adac_cmd_pe},
	{&adac_cmd_report_info, adac_cmd_report},
	{&adac_cmd_refs_info, adac_cmd_refs},
	{&adac_cmd_gcroot_info, adac_cmd_gcroot},
	{&adac_cmd_locks_info, adac_cmd_locks},
	{&adac_cmd_threadpool_info, adac_cmd_threadpool},
	{&adac_cmd_clrthreads_info, adac_cmd_clrthreads},
	{&adac_cmd_pstacks_info, adac_cmd_pstacks},
	{&adac_cmd_diff_info, NULL},   /* two targets: adac_command_run_diff */
};
#define N_ENTRIES (sizeof entries / sizeof entries[0])

const struct adac_command_info *adac_commands(void)
{
	static struct adac_command_info list[N_ENTRIES + 1];
	for (size_t i = 0; i < N_ENTRIES; i++)
		list[i] = *entries[i].info;
	return list;
}

const struct adac_command_info *adac_command_find(const char *name)
{
	for (size_t i = 0; i < N_ENTRIES; i++)
		if (strcmp(entries[i].info->name, name) == 0)
			return entries[i].info;
	return NULL;
}

/* A held live process stopped inside a garbage collection is let run until it is out of it before a
 * command reads it (adac_gc_settle), as debuggers stop managed code only outside a GC: inside one,
 * objects move and the heap cannot be walked. */
static int settle(struct adac_target *t, struct adac_error *err)
{
	if (!adac_target_can_run(t))
		return 0;
	struct adac_error e = {0};
	struct adac_runtime *rt = adac_runtime_acquire(t, &e);
	if (!rt)
		return 0; /* (a command that needs it says why) */
	int rc = adac_gc_settle(rt, err);
	adac_runtime_release(rt);
	return rc;
}

int adac_command_run(struct adac_target *t, enum adac_frontend fe, int argc, char **argv, struct adac_out *out,
                     struct adac_error *err)
{
	if (argc < 1)
		return adac_fail(err, ADAC_E_USAGE, 0, "no command given");
	for (size_t i = 0; i < N_ENTRIES; i++)
		if (strcmp(entries[i].info->name, argv[0]) == 0 && entries[i].run)
			return settle(t, err) ? -1 : entries[i].run(t, fe, argc, argv, out, err);
	if (strcmp(argv[0], "diff") == 0)
		return adac_fail(err, ADAC_E_USAGE, 0, "'diff' compares two targets: run it in the CLI, "
		                                       "'asyncdac diff <core-A> <core-B>'");
	return adac_fail(err, ADAC_E_USAGE, 0, "'%s' is not a valid command", argv[0]);
}

int adac_command_run_diff(struct adac_target *a, struct adac_target *b, int argc, char **argv, struct adac_out *out,
                          struct adac_error *err)
{
	return settle(a, err) || settle(b, err) ? -1 : adac_cmd_diff(a, b, argc, argv, out, err);
}

bool adac_opt_is(const char *arg, const char *short_opt, const char *long_opt)
{
	return (short_opt && strcmp(arg, short_opt) == 0) || (long_opt && strcmp(arg, long_opt) == 0);
}

int adac_opt_u64(const char *cmd, const char *opt, const char *value, uint64_t *out, struct adac_error *err)
{
	char *end = NULL;
	errno = 0;
	unsigned long long v = 0;
	if (value && *value && *value != '-')
		v = strtoull(value, &end, 0);
	if (!end || errno || *end)
		/* opt: "--depth", or an argument's "<object address>" */
		return adac_fail(err, ADAC_E_USAGE, 0, "invalid value '%s' for %s%s of '%s'", value ? value : "",
		                 opt[0] == '<' ? "" : "option ", opt, cmd);
	*out = (uint64_t)v;
	return 0;
}

int adac_opt_value(const char *cmd, int argc, char **argv, int *i, const char **value, struct adac_error *err)
{
	if (*i + 1 >= argc)
		return adac_fail(err, ADAC_E_USAGE, 0, "option %s of '%s' requires a value", argv[*i], cmd);
	*value = argv[++*i];
	return 0;
}

int adac_opt_unknown(const char *cmd, const char *arg, struct adac_error *err)
{
	if (arg[0] == '-')
		return adac_fail(err, ADAC_E_USAGE, 0, "unknown option '%s' for '%s'", arg, cmd);
	return adac_fail(err, ADAC_E_USAGE, 0, "unexpected argument '%s' for '%s'", arg, cmd);
}

int adac_opt_only_address(const char *cmd, const char *syntax, const char *need, int argc, char **argv, uint64_t *addr,
                          struct adac_error *err)
{
	if (argc < 2)
		return adac_fail(err, ADAC_E_USAGE, 0, "'%s' needs %s", cmd, need);
	if (argv[1][0] == '-')
		return adac_opt_unknown(cmd, argv[1], err);
	if (adac_opt_u64(cmd, syntax, argv[1], addr, err))
		return -1;
	return argc > 2 ? adac_opt_unknown(cmd, argv[2], err) : 0;
}

uint64_t adac_opt_thread_id(enum adac_frontend fe, const struct adac_thread *th)
{
	return fe == ADAC_FRONTEND_LLDB ? th->index : th->tid;
}

int adac_opt_no_thread(enum adac_frontend fe, uint64_t id, struct adac_error *err)
{
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no thread %llu in the target%s", (unsigned long long)id,
	                 fe == ADAC_FRONTEND_LLDB ? " (give its index, as 'thread list' shows)" : "");
}

int adac_command_json_view(const char *cmd, struct adac_target *t, int argc, char **argv, adac_json_view_fn print,
                           struct adac_out *out, struct adac_error *err)
{
	bool json = false;
	for (int i = 1; i < argc; i++) {
		if (adac_opt_is(argv[i], "-j", "--json"))
			json = true;
		else
			return adac_opt_unknown(cmd, argv[i], err);
	}
	struct adac_runtime *rt = adac_runtime_acquire(t, err);
	if (!rt)
		return -1;
	int rc = print(rt, json, out, err);
	adac_runtime_release(rt);
	return rc;
}
