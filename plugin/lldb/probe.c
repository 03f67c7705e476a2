/* probe.c - `async-probe`, only in the test build of the plugin (libasyncdac-lldb-probe.so): drives
 * the LLDB data target directly, with the actions and output of tests/integration/adac_probe.c,
 * so tests can hold the LLDB backend against the core and pid backends. Never in the real plugin.
 *
 *   async-probe modules | threads | regs <tid> | frames <tid> | sym <module> <name> |
 *               read <addr> <len> | text <addr> <len> | selected ...
 * Every failure prints "error: <message>" and the probe goes on; the command fails at the end
 * if any action failed. */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "shim.h"
#include "target_lldb.h"

static void write_result(void *ctx, const char *text, size_t len)
{
	adac_lldb_cmd_write(ctx, text, len);
}

struct probe {
	struct adac_out out;
	int failures;
};

static void report(struct probe *p, struct adac_error *err)
{
	adac_print(&p->out, "error: %s\n", err->msg);
	adac_error_clear(err);
	p->failures++;
}

static int print_frame(void *ctx, const struct adac_frame *f)
{
	struct probe *p = ctx;
	adac_print(&p->out, "0x%llx %s %s", (unsigned long long)f->pc, f->module ? f->module : "?",
	           f->symbol ? f->symbol : "?");
	if (f->file)
		adac_print(&p->out, " %s:%u", f->file, f->line);
	adac_print(&p->out, "\n");
	return 0;
}

static uint64_t num(const char *s) { return strtoull(s, NULL, 0); }

static void run_action(struct probe *p, struct adac_target *t, char **args, int *i)
{
	struct adac_error err = {0};
	const char *a = args[*i];
	if (strcmp(a, "modules") == 0) {
		const struct adac_module *mods;
		size_t n;
		if (adac_target_modules(t, &mods, &n, &err))
			report(p, &err);
		for (size_t k = 0; !err.code && k < n; k++)
			adac_print(&p->out, "0x%llx 0x%llx %s\n", (unsigned long long)mods[k].base,
			           (unsigned long long)mods[k].end, mods[k].path);
	} else if ((strcmp(a, "read") == 0 || strcmp(a, "text") == 0) && args[*i + 1] && args[*i + 2]) {
		uint64_t addr = num(args[++*i]);
		size_t len = (size_t)num(args[++*i]);
		uint8_t *buf = malloc(len ? len : 1);
		size_t n = buf ? adac_read_upto(t, addr, buf, len) : 0;
		adac_print(&p->out, "read %zu\n", n);
		if (a[0] == 't')
			p->out.write(p->out.ctx, (const char *)buf, n);
		else
			for (size_t k = 0; k < n; k++)
				adac_print(&p->out, "%02x", buf[k]);
		adac_print(&p->out, "\n");
		free(buf);
	} else if (strcmp(a, "sym") == 0 && args[*i + 1] && args[*i + 2]) {
		const char *mod = args[++*i], *name = args[++*i];
		const struct adac_module *m = adac_target_find_module(t, mod, &err);
		uint64_t addr;
		if (!m || adac_target_find_symbol(t, m, name, &addr, &err))
			report(p, &err);
		else
			adac_print(&p->out, "0x%llx\n", (unsigned long long)addr);
	} else if (strcmp(a, "threads") == 0) {
		const struct adac_thread *th;
		size_t n;
		if (adac_target_threads(t, &th, &n, &err))
			report(p, &err);
		for (size_t k = 0; !err.code && k < n; k++)
			adac_print(&p->out, "%u %llu %s\n", th[k].index, (unsigned long long)th[k].tid, th[k].name);
	} else if (strcmp(a, "regs") == 0 && args[*i + 1]) {
		struct adac_regs r;
		if (adac_target_regs(t, num(args[++*i]), &r, &err))
			report(p, &err);
		else
			adac_print(&p->out, "rip 0x%llx rsp 0x%llx rbp 0x%llx fs_base 0x%llx\n",
			           (unsigned long long)r.r[ADAC_REG_RIP], (unsigned long long)r.r[ADAC_REG_RSP],
			           (unsigned long long)r.r[ADAC_REG_RBP], (unsigned long long)r.r[ADAC_REG_FS_BASE]);
	} else if (strcmp(a, "selected") == 0) {
		adac_print(&p->out, "selected %llu\n", (unsigned long long)adac_target_selected_thread(t));
	} else if (strcmp(a, "frames") == 0 && args[*i + 1]) {
		if (adac_target_frames(t, num(args[++*i]), print_frame, p, &err))
			report(p, &err);
	} else {
		adac_fail(&err, ADAC_E_BAD_ARG, 0, "bad action '%s'", a);
		report(p, &err);
	}
}

int adac_lldb_probe(struct adac_lldb_cmd *cmd, char **args)
{
	struct adac_error err = {0};
	struct adac_target *t = adac_lldb_target(cmd, &err);
	if (!t) {
		adac_lldb_cmd_error(cmd, err.msg);
		return -1;
	}
	struct probe p = {.out = {.write = write_result, .ctx = cmd}};
	adac_print(&p.out, "kind %s\n", adac_target_kind(t));
	for (int i = 0; args && args[i]; i++)
		run_action(&p, t, args, &i);
	if (p.failures) {
		adac_lldb_cmd_error(cmd, "some probe actions failed");
		return -1;
	}
	return 0;
}
