/* adac_probe.c - drives a data-target backend directly, for the backend-level integration tests.
 *
 *   adac-probe core [--strict] <file> | pid <pid>  <action>...
 *     (a core opened best-effort prints "warning: <what is missing>" first)
 *     modules              one line per module: base end path
 *     read <addr> <len>    "read <n>" (bytes obtained, short at the first unreadable one), then hex
 *     text <addr> <len>    "read <n>", then the bytes as text
 *     sym <module> <name>  address of an exported symbol of the module with that basename
 *     threads              one line per thread: index tid name
 *     regs <tid>           rip, rsp, rbp and fs_base
 *     allregs              "<tid> rip 0x..." for every thread (each thread must be held stopped)
 *     frames <tid>         one line per physical frame: pc module symbol file:line
 *     wait                 waits for a line on stdin (the test acts on the target meanwhile)
 *     reopen               the actions after it run on a thread of their own, through a second
 *                          target over the same core or process (adac_target_reopen)
 * Every failure prints "error: <message>" and the probe goes on; the exit code is 1 if any failed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"

static int failures;

static void report(struct adac_error *err)
{
	printf("error: %s\n", err->msg);
	adac_error_clear(err);
	failures++;
}

static int print_module(void *ctx, const struct adac_module *m)
{
	(void)ctx;
	printf("0x%llx 0x%llx %s\n", (unsigned long long)m->base, (unsigned long long)m->end, m->path);
	return 0;
}

static int print_frame(void *ctx, const struct adac_frame *f)
{
	(void)ctx;
	printf("0x%llx %s %s", (unsigned long long)f->pc, f->module ? f->module : "?", f->symbol ? f->symbol : "?");
	if (f->file)
		printf(" %s:%u", f->file, f->line);
	printf("\n");
	return 0;
}

static uint64_t num(const char *s) { return strtoull(s, NULL, 0); }


struct run {
	struct adac_target *t;
	int argc;
	char **argv;
	int i;
	bool reopen;
	int rc;
};

/* The actions from r->i on, through r->t, up to a "reopen" (r->reopen, r->i at it). */
static void run_actions(struct run *r)
{
	struct adac_target *t = r->t;
	struct adac_error err = {0};
	int argc = r->argc;
	char **argv = r->argv;
	for (int i = r->i; i < argc; i++) {
		const char *a = argv[i];
		r->i = i;
		if (strcmp(a, "reopen") == 0) {
			r->reopen = true;
			return;
		} else if (strcmp(a, "modules") == 0) {
			const struct adac_module *mods;
			size_t n;
			if (adac_target_modules(t, &mods, &n, &err))
				report(&err);
			else
				for (size_t k = 0; k < n; k++)
					print_module(NULL, &mods[k]);
		} else if ((strcmp(a, "read") == 0 || strcmp(a, "text") == 0) && i + 2 < argc) {
			uint64_t addr = num(argv[++i]);
			size_t len = (size_t)num(argv[++i]);
			uint8_t *buf = malloc(len ? len : 1);
			size_t n = buf ? adac_read_upto(t, addr, buf, len) : 0;
			printf("read %zu\n", n);
			if (a[0] == 't') {
				fwrite(buf, 1, n, stdout);
			} else {
				for (size_t k = 0; k < n; k++)
					printf("%02x", buf[k]);
			}
			printf("\n");
			free(buf);
		} else if (strcmp(a, "sym") == 0 && i + 2 < argc) {
			const char *mod = argv[++i], *name = argv[++i];
			const struct adac_module *m = adac_target_find_module(t, mod, &err);
			uint64_t addr;
			if (!m || adac_target_find_symbol(t, m, name, &addr, &err))
				report(&err);
			else
				printf("0x%llx\n", (unsigned long long)addr);
		} else if (strcmp(a, "threads") == 0) {
			const struct adac_thread *th;
			size_t n;
			if (adac_target_threads(t, &th, &n, &err))
				report(&err);
			else
				for (size_t k = 0; k < n; k++)
					printf("%u %llu %s\n", th[k].index, (unsigned long long)th[k].tid, th[k].name);
		} else if (strcmp(a, "regs") == 0 && i + 1 < argc) {
			struct adac_regs r;
			if (adac_target_regs(t, num(argv[++i]), &r, &err))
				report(&err);
			else
				printf("rip 0x%llx rsp 0x%llx rbp 0x%llx fs_base 0x%llx\n", (unsigned long long)r.r[ADAC_REG_RIP],
				       (unsigned long long)r.r[ADAC_REG_RSP], (unsigned long long)r.r[ADAC_REG_RBP],
				       (unsigned long long)r.r[ADAC_REG_FS_BASE]);
		} else if (strcmp(a, "thread-of") == 0 && i + 3 < argc) {
			uint64_t tid = num(argv[i + 1]), limit = num(argv[i + 2]), base = num(argv[i + 3]);
			i += 3;
			printf("%llu\n", (unsigned long long)adac_target_thread_of_process_tid(t, tid, limit, base));
		} else if (strcmp(a, "allregs") == 0) {
			const struct adac_thread *th;
			size_t n;
			struct adac_regs r;
			if (adac_target_threads(t, &th, &n, &err))
				report(&err);
			else
				for (size_t k = 0; k < n; k++) {
					if (adac_target_regs(t, th[k].tid, &r, &err))
						report(&err);
					else
						printf("%llu rip 0x%llx\n", (unsigned long long)th[k].tid,
						       (unsigned long long)r.r[ADAC_REG_RIP]);
				}
		} else if (strcmp(a, "frames") == 0 && i + 1 < argc) {
			if (adac_target_frames(t, num(argv[++i]), print_frame, NULL, &err))
				report(&err);
		} else if (strcmp(a, "wait") == 0) {
			printf("waiting\n");
			fflush(stdout);
			char line[64];
			if (!fgets(line, sizeof line, stdin))
				break;
			adac_target_invalidate(t);
		} else {
			fprintf(stderr, "adac-probe: bad action '%s'\n", a);
			r->rc = 2;
			return;
		}
		fflush(stdout);
	}
	r->i = argc;
}

static void *run_thread(void *arg)
{
	run_actions(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	struct adac_core_options opt = {0};
	int first = 2;
	if (argc > 3 && strcmp(argv[1], "core") == 0 && strcmp(argv[2], "--strict") == 0) {
		opt.strict = true;
		first = 3;
	}
	if (argc < first + 1 || (strcmp(argv[1], "core") && strcmp(argv[1], "pid"))) {
		fprintf(stderr, "usage: adac-probe core [--strict] <file> | pid <pid>  <action>...\n");
		return 2;
	}
	struct adac_error err = {0};
	struct adac_target *t = strcmp(argv[1], "core") == 0 ? adac_target_open_core_ex(argv[first], &opt, &err)
	                                                      : adac_target_open_pid(atoi(argv[first]), &err);
	if (!t) {
		printf("error: %s\n", err.msg);
		return 1;
	}
	if (opt.warning[0])
		printf("warning: %s\n", opt.warning);
	printf("kind %s\n", adac_target_kind(t));
	struct run r = {.t = t, .argc = argc, .argv = argv, .i = first + 1};
	run_actions(&r);
	if (r.reopen) {
		struct adac_target *t2 = adac_target_reopen(t, &err);
		if (!t2) {
			report(&err);
		} else {
			printf("reopened\n");
			struct run r2 = {.t = t2, .argc = argc, .argv = argv, .i = r.i + 1};
			pthread_t th;
			if (pthread_create(&th, NULL, run_thread, &r2) == 0)
				pthread_join(th, NULL);
			else
				r2.rc = 2;
			r.rc = r2.rc;
			adac_target_close(t2);
		}
	}
	adac_target_close(t);
	return r.rc ? r.rc : failures ? 1 : 0;
}
