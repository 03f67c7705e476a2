/* main.c - the asyncdac command-line front end: picks a target (core file or pid) and runs one
 * command of the shared command layer on it. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "asyncdac.h"

/* Only the command's thread writes stdout (the heap walk's threads report progress on stderr):
 * no lock per piece, of which a million-chain listing writes millions. */
/* The progress line of a long command on stderr, when stderr is a terminal: it appears after
 * PROGRESS_DELAY seconds (the environment variable ASYNCDAC_PROGRESS_DELAY overrides it, for
 * tests), is redrawn at most every PROGRESS_INTERVAL, and is erased at the end, and before output
 * to the same terminal (a listing: the next report draws it again). */
#define PROGRESS_DELAY 1.0
#define PROGRESS_INTERVAL 0.1

struct progress {
	const char *command;
	double start, last, delay;
	bool shown;
	bool stdout_terminal;
};

static void erase_progress(struct progress *p)
{
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
	p->shown = false;
}

static void write_stdout(void *ctx, const char *text, size_t len)
{
	struct progress *p = ctx;
	if (p && p->shown && p->stdout_terminal)
		erase_progress(p);
	fwrite_unlocked(text, 1, len, stdout);
}

static void vprint_stdout(void *ctx, const char *fmt, va_list ap)
{
	struct progress *p = ctx;
	if (p && p->shown && p->stdout_terminal)
		erase_progress(p);
	vfprintf(stdout, fmt, ap);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(void *ctx, const char *phase, uint64_t done, uint64_t total)
{
	struct progress *p = ctx;
	if (!phase) {
		if (p->shown)
			erase_progress(p);
		return;
	}
	double t = now();
	if (t - p->start < p->delay || (p->shown && t - p->last < PROGRESS_INTERVAL && done < total))
		return;
	p->last = t;
	p->shown = true;
	if (total)
		fprintf(stderr, "\rasyncdac %s: %s: %3u%%\033[K", p->command, phase, (unsigned)(done * 100 / total));
	else
		fprintf(stderr, "\rasyncdac %s: %s: %llu\033[K", p->command, phase, (unsigned long long)done);
	fflush(stderr);
}

/* Prints text word-wrapped to 79 columns, the first line starting at column `col`, the others
 * indented by `indent` (LLDB's help layout). */
static void print_wrapped(FILE *f, const char *text, size_t col, size_t indent)
{
	const size_t width = 79;
	while (*text) {
		size_t word = strcspn(text, " ");
		if (col > indent && col + 1 + word > width) {
			fprintf(f, "\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(text, 1, word, f);
		col += word;
		text += word;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: asyncdac <command> <core-file> [options]\n"
	           "       asyncdac <command> --pid <pid> [options]\n"
	           "       asyncdac diff <core-A> <core-B> | <core-A> --pid <pid> [options]\n"
	           "       asyncdac <command> --help\n"
	           "\n"
	           "Shows what asynchronous .NET code is doing in a core dump or a live process,\n"
	           "reading memory only.\n"
	           "\n"
	           "Commands:\n");
	for (const struct adac_command_info *c = adac_commands(); c->name; c++) {
		fprintf(f, "  %-10s ", c->name);
		print_wrapped(f, c->summary, 13, 13);
	}
	fprintf(f, "\nOptions:\n"
	           "  -h, --help       Show this help, or a command's help after the command\n"
	           "  -V, --version    Show the version\n"
	           "  --symbol-path <path>\n"
	           "                   Where to look for the files a core lacks (assemblies, PDBs, native\n"
	           "                   binaries and their debug files), matched by identity: entries\n"
	           "                   separated by ':' or ';', each a directory or a symbol server\n"
	           "                   srv*<cache-dir>*<url> (http://, https://, file://); searched before\n"
	           "                   $ASYNCDAC_SYMBOL_PATH, then debuginfod ($DEBUGINFOD_URLS)\n"
	           "  --strict         Refuse a damaged core (truncated) instead of showing what it holds\n"
	           "  --release        With --pid: copy the process's readable memory while it is\n"
	           "                   stopped, then let it run and analyse the copy (the process is\n"
	           "                   stopped only for the copy; its threads are unwound from it)\n"
	           "\n"
	           "With --pid, the process is stopped while it is read, then resumed. Stopped inside a\n"
	           "garbage collection, where its heap cannot be walked, it is let run a few milliseconds\n"
	           "and stopped (with --release: copied) again first, 8 times at most; a process that\n"
	           "was already stopped (SIGSTOP) is never run. A process in a container (its own\n"
	           "mount or pid namespace) is read with its own files, through /proc/<pid>/root, and\n"
	           "its threads are shown by this machine's ids; so are they in a core made of it here\n"
	           "(gcore), where the runtime's records are matched to them by stack.\n"
	           "\n"
	           "Exit status: 0 done, 1 the target could not be read or analysed, 2 a usage error\n"
	           "(unknown command or option, bad value, no target).\n");
}

static void command_help(const struct adac_command_info *c)
{
	char summary[512];
	snprintf(summary, sizeof summary, "%s.", c->summary);
	print_wrapped(stdout, summary, 0, 0);
	if (strcmp(c->name, "diff") == 0)
		printf("\nUsage: asyncdac diff <core-A> <core-B> %s\n       asyncdac diff <core-A> --pid <pid> %s\n", c->syntax,
		       c->syntax);
	else
		printf("\nUsage: asyncdac %s <core-file> %s\n       asyncdac %s --pid <pid> %s\n", c->name, c->syntax,
		       c->name, c->syntax);
	if (c->details[0])
		printf("\n%s", c->details);
}

/* Exit codes, one convention for every command: 0 ok, 1 the target or its analysis failed,
 * 2 the command line is wrong (usage). */
enum { EXIT_OK = 0, EXIT_TARGET = 1, EXIT_USAGE = 2 };

static int fail(const char *msg)
{
	fprintf(stderr, "asyncdac: error: %s\n", msg);
	return EXIT_TARGET;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "asyncdac: error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	return EXIT_USAGE;
}

/* A failed command's exit code: usage errors (its options) are 2, the rest 1. */
static int fail_with(const struct adac_error *err)
{
	fprintf(stderr, "asyncdac: error: %s\n", err->msg);
	return err->code == ADAC_E_USAGE ? EXIT_USAGE : EXIT_TARGET;
}

/* `ps --svg FILE`: stdout goes to Graphviz's dot, which draws the graph of `ps --format dot` into
 * FILE. Returns dot's pid and keeps the real stdout in *saved, or -1 (message printed). */
extern char **environ;

static pid_t svg_start(const char *file, int *saved)
{
	int fds[2];
	if (pipe(fds)) {
		fprintf(stderr, "asyncdac: error: --svg: pipe: %s\n", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], STDIN_FILENO);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	char *args[] = {"dot", "-Tsvg", "-o", (char *)file, NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, "dot", &fa, NULL, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	if (rc) {
		close(fds[1]);
		fprintf(stderr, "asyncdac: error: --svg: cannot run Graphviz's dot: %s\n", strerror(rc));
		return -1;
	}
	fflush(stdout);
	*saved = dup(STDOUT_FILENO);
	dup2(fds[1], STDOUT_FILENO);
	close(fds[1]);
	return pid;
}

/* Ends dot's input and waits for it: 0 when it wrote the file. */
static int svg_finish(pid_t pid, int saved, const char *file)
{
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	fprintf(stderr, "asyncdac: error: --svg: dot could not draw %s\n", file);
	return -1;
}

/* The symbol path: --symbol-path entries first, then $ASYNCDAC_SYMBOL_PATH's. */
static struct adac_symbols *make_symbols(const char *option, struct adac_error *err)
{
	const char *env = getenv("ASYNCDAC_SYMBOL_PATH");
	char *spec = NULL;
	if (asprintf(&spec, "%s%s%s", option ? option : "", option && env && *env ? ";" : "", env ? env : "") < 0) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	struct adac_symbols *s = adac_symbols_new(spec, err);
	free(spec);
	return s;
}

/* Says which files came from the symbol path, symbol servers or debuginfod. */
static void print_found(void *ctx, const char *name, const struct adac_symbol_found *f)
{
	(void)ctx;
	fprintf(stderr, "asyncdac: note: %s from %s (%s)\n", name, f->path, f->route);
}

/* Opens a core or a live process with the symbol path; NULL with the error printed. */
static struct adac_target *open_target(const char *core, long pid, const char *symbol_path, bool strict)
{
	struct adac_error err = {0};
	struct adac_symbols *symbols = make_symbols(symbol_path, &err);
	if (!symbols) {
		fail(err.msg);
		return NULL;
	}
	struct adac_core_options opt = {.strict = strict};
	struct adac_target *t = core ? adac_target_open_core_ex(core, &opt, &err) : adac_target_open_pid((int)pid, &err);
	if (!t) {
		adac_symbols_free(symbols);
		fail(err.msg);
		return NULL;
	}
	adac_target_set_symbols(t, symbols);
	if (opt.warning[0])
		fprintf(stderr, "asyncdac: warning: %s\n", opt.warning);
	return t;
}

/* asyncdac diff <core-A> <core-B> | <core-A> --pid <pid> [options]: two targets. */
static int run_diff(const struct adac_command_info *cmd, int argc, char **argv)
{
	const char *cores[2] = {NULL, NULL}, *symbol_path = NULL;
	size_t ncores = 0;
	long pid = -1;
	bool strict = false;
	char *rest[16] = {argv[1]};
	int nrest = 1;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			command_help(cmd);
			return EXIT_OK;
		}
		if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pid") == 0) {
			char *end;
			errno = 0;
			pid = i + 1 < argc ? strtol(argv[++i], &end, 10) : -1;
			if (pid <= 0 || pid > 0x7fffffff || errno || *end)
				return usage_error("invalid process id '%s'", i < argc ? argv[i] : "");
		} else if (strcmp(argv[i], "--symbol-path") == 0 && i + 1 < argc) {
			symbol_path = argv[++i];
		} else if (strcmp(argv[i], "--strict") == 0) {
			strict = true;
		} else if (argv[i][0] != '-') {
			if (ncores == 2)
				return usage_error("'diff' compares two targets: unexpected '%s'", argv[i]);
			cores[ncores++] = argv[i];
		} else if (nrest < 16) {
			rest[nrest++] = argv[i];
		} else {
			return usage_error("too many options for 'diff'");
		}
	}
	if (ncores + (pid > 0) != 2)
		return usage_error("'diff' needs two targets: <core-A> <core-B>, or <core-A> --pid <pid>");
	struct adac_error err = {0};
	if (adac_command_check_options(cmd, nrest, rest, &err))
		return fail_with(&err);
	struct adac_target *a = open_target(cores[0], -1, symbol_path, strict);
	if (!a)
		return EXIT_TARGET;
	struct adac_target *b = open_target(cores[1], pid, symbol_path, strict);
	if (!b) {
		adac_target_close(a);
		return EXIT_TARGET;
	}
	struct adac_out out = {.write = write_stdout, .vprint = vprint_stdout};
	int rc = adac_command_run_diff(a, b, nrest, rest, &out, &err);
	fflush(stdout);
	adac_target_close(b);
	adac_target_close(a);
	return rc ? fail_with(&err) : EXIT_OK;
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define HUGE_TUNABLE "glibc.malloc.hugetlb"
#define TUNABLES_WAS "ASYNCDAC_GLIBC_TUNABLES_WAS" /* "=<value>", or "" when it was unset */

/* Has glibc's malloc back large blocks with 2 MB pages (transparent huge pages, where the kernel
 * gives them on request): at a million chains `ps` touches ~190 MB of tables one 4 KB page at a
 * time, and on a virtual machine each page fault costs microseconds (ps --stats: 96,000 faults
 * become 37,000, and the wall time falls by a fifth; `scripts/bench scale` compares). glibc takes
 * the setting from GLIBC_TUNABLES at startup only, so the CLI runs itself again once with it, then
 * puts the variable back as it was for what it starts (`dot`). A user's own glibc.malloc.hugetlb
 * is left alone: GLIBC_TUNABLES=glibc.malloc.hugetlb=0 keeps 4 KB pages. */
static void restore_tunables(const char *was)
{
	if (was[0] == '=')
		setenv("GLIBC_TUNABLES", was + 1, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(TUNABLES_WAS);
}

static void prefer_huge_pages(char **argv)
{
	const char *was = getenv(TUNABLES_WAS);
	if (was) { /* run again: the tunable is read; the environment goes back */
		restore_tunables(was);
		return;
	}
	const char *tunables = getenv("GLIBC_TUNABLES");
	if (tunables && strstr(tunables, HUGE_TUNABLE))
		return;
	/* Only where pages come on request: with "always" malloc has them already, with "never" not at all. */
	char mode[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f) {
		if (!fgets(mode, sizeof mode, f))
			mode[0] = '\0';
		fclose(f);
	}
	if (!strstr(mode, "[madvise]"))
		return;
	char saved[4096], value[4096];
	int n = snprintf(saved, sizeof saved, "%s%s", tunables ? "=" : "", tunables ? tunables : "");
	int m = snprintf(value, sizeof value, "%s%s" HUGE_TUNABLE "=1", tunables ? tunables : "", tunables ? ":" : "");
	if (n < 0 || (size_t)n >= sizeof saved || m < 0 || (size_t)m >= sizeof value)
		return;
	if (setenv(TUNABLES_WAS, saved, 1) == 0 && setenv("GLIBC_TUNABLES", value, 1) == 0)
		execv("/proc/self/exe", argv);
	restore_tunables(saved); /* (not run again: on as before) */
}
#endif

int main(int argc, char **argv)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
	prefer_huge_pages(argv);
#endif
#ifdef __GLIBC__
	/* glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB): `ps`
	 * frees the heap pass's records and then grows tables of a few MiB, which would then come
	 * from the brk heap and stay in it. A fixed threshold hands them back (ps --stats at a
	 * million chains: 14 MB less peak RSS, --coalesce 26 MB). It is 2 MB (base/grow.h's ADAC_MMAP_THRESHOLD:
	 * a block of adac_block_bytes is still mapped): each block mapped alone is new 4 KB
	 * pages, a fault of ~10 us each on a virtual machine, every time one of the many blocks of
	 * 128 KB to 2 MB is made again; the brk heap reuses its pages, in huge pages where the tunable
	 * above is on (ps --stats at 100 k chains: faults 6,600 to 2,200, 3 MB more peak RSS). */
	mallopt(M_MMAP_THRESHOLD, 2 * 1024 * 1024 - 64);
#endif
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
		if (argc > 2 && adac_command_find(argv[2])) {
			command_help(adac_command_find(argv[2]));
			return 0;
		}
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("asyncdac %s\nTargets:\n%sLLDB plugin:\n%s", ASYNCDAC_VERSION, ASYNCDAC_SUPPORTED_RUNTIMES,
		       ASYNCDAC_SUPPORTED_LLDB);
		return 0;
	}
	const struct adac_command_info *cmd = adac_command_find(argv[1]);
	if (!cmd) {
		/* `asyncdac app.core ps`: the target before the command. */
		if (argc > 2 && adac_command_find(argv[2]) && access(argv[1], F_OK) == 0)
			return usage_error("'%s' is not a command; the command comes first: 'asyncdac %s %s ...'", argv[1],
			                   argv[2], argv[1]);
		return usage_error("'%s' is not a command (see 'asyncdac --help')", argv[1]);
	}
	if (strcmp(cmd->name, "diff") == 0)
		return run_diff(cmd, argc, argv);

	/* Split the target selection (<core-file> or --pid N) from the command's own options. */
	const char *core = NULL, *symbol_path = NULL, *svg = NULL;
	bool strict = false, release = false;
	long pid = -1;
	char **rest = calloc((size_t)argc + 1, sizeof *rest);
	if (!rest)
		return fail("out of memory");
	int nrest = 0;
	rest[nrest++] = argv[1];
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			command_help(cmd);
			free(rest);
			return 0;
		}
		if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pid") == 0) {
			if (i + 1 >= argc) {
				free(rest);
				return usage_error("option --pid requires a process id");
			}
			char *end;
			errno = 0;
			pid = strtol(argv[++i], &end, 10);
			if (errno || *end || pid <= 0 || pid > 0x7fffffff) {
				free(rest);
				return usage_error("invalid process id '%s'", argv[i]);
			}
		} else if (strcmp(argv[i], "--symbol-path") == 0 || strncmp(argv[i], "--symbol-path=", 14) == 0) {
			if (argv[i][13] == '=') {
				symbol_path = argv[i] + 14;
			} else if (i + 1 < argc) {
				symbol_path = argv[++i];
			} else {
				free(rest);
				return usage_error("option --symbol-path requires a path");
			}
		} else if (strcmp(argv[i], "--strict") == 0) {
			strict = true;
		} else if (strcmp(argv[i], "--release") == 0) {
			release = true;
		} else if (strcmp(argv[i], "--svg") == 0 && strcmp(cmd->name, "ps") == 0) {
			if (i + 1 >= argc) {
				free(rest);
				return usage_error("option --svg of 'ps' requires a file name");
			}
			svg = argv[++i];
			rest[nrest++] = "--format";
			rest[nrest++] = "dot";
		} else if (i + 1 < argc && adac_command_option_takes_value(cmd, argv[i])) {
			/* (Its value is no target: `ps --method Top app.core`.) */
			rest[nrest++] = argv[i];
			rest[nrest++] = argv[++i];
		} else if (argv[i][0] != '-' && !core && pid < 0) {
			core = argv[i];
		} else {
			rest[nrest++] = argv[i];
		}
	}
	if (!core && pid < 0) {
		free(rest);
		return usage_error("'%s' needs a core file or --pid <pid>", cmd->name);
	}
	if (core && pid >= 0) {
		free(rest);
		return usage_error("give either a core file or --pid, not both");
	}
	if (release && pid < 0) {
		free(rest);
		return usage_error("--release applies to a live process (--pid)");
	}
	struct adac_error err = {0};
	if (adac_command_check_options(cmd, nrest, rest, &err)) {
		free(rest);
		return fail_with(&err);
	}

	struct adac_symbols *symbols = make_symbols(symbol_path, &err);
	if (!symbols) {
		free(rest);
		return usage_error("%s", err.msg);
	}
	struct adac_core_options opt = {.strict = strict};
	struct adac_target *t = core ? adac_target_open_core_ex(core, &opt, &err)
	                             : adac_target_open_pid_ex((int)pid, release ? ADAC_PID_RELEASE : 0, &err);
	if (!t) {
		adac_symbols_free(symbols);
		/* `dumpobj 0x7f12 app.core`: an argument taken for the core file where a file follows (an
		 * option's value, `--output FILE`, is none). */
		bool swapped = false;
		for (int i = 1; core && access(core, F_OK) != 0 && i < nrest && !swapped; i++) {
			if (adac_command_option_takes_value(cmd, rest[i]))
				i++;
			else
				swapped = rest[i][0] != '-' && access(rest[i], F_OK) == 0;
		}
		free(rest);
		if (swapped) {
			char msg[sizeof err.msg + 512];
			snprintf(msg, sizeof msg, "%s (the core file comes first: 'asyncdac %s <core-file> %s')", err.msg,
			         cmd->name, cmd->syntax);
			return fail(msg);
		}
		return fail(err.msg);
	}
	adac_target_set_symbols(t, symbols);
	if (opt.warning[0])
		fprintf(stderr, "asyncdac: warning: %s\n", opt.warning);
	/* Listings can be megabytes (ps over thousands of chains): write them in large blocks. */
	static char outbuf[1 << 20];
	if (!isatty(STDOUT_FILENO)) {
		setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
		/* A pipe holds 64 KiB by default: a megabyte block would wait for the reader sixteen
		 * times. Ask for a pipe as large as the block (best effort: capped by pipe-max-size). */
		fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)sizeof outbuf);
	}
	const char *delay = getenv("ASYNCDAC_PROGRESS_DELAY");
	struct progress progress = {.command = cmd->name, .start = now(),
	                            .delay = delay && *delay ? strtod(delay, NULL) : PROGRESS_DELAY};
	struct adac_out out = {.write = write_stdout, .ctx = &progress, .vprint = vprint_stdout,
	                       .progress = isatty(STDERR_FILENO) == 1 ? show_progress : NULL};
	int saved_stdout = -1;
	pid_t dot = svg ? svg_start(svg, &saved_stdout) : 0;
	progress.stdout_terminal = isatty(STDOUT_FILENO) == 1; /* (--svg: dot's pipe) */
	int rc = dot < 0 ? 0 : adac_command_run(t, ADAC_FRONTEND_CLI, nrest, rest, &out, &err);
	show_progress(&progress, NULL, 0, 0);
	fflush(stdout);
	bool svg_failed = dot < 0 || (dot > 0 && svg_finish(dot, saved_stdout, svg));
	if (getenv("ASYNCDAC_STATS")) {
		/* For scripts/bench: how the command read the target. */
		struct adac_read_stats st;
		adac_target_stats(t, &st);
		fprintf(stderr, "asyncdac-stats: reads=%llu backend_reads=%llu backend_bytes=%llu blocks_fetched=%llu cache_hits=%llu\n",
		        (unsigned long long)st.reads, (unsigned long long)st.backend_reads,
		        (unsigned long long)st.backend_bytes, (unsigned long long)st.blocks_fetched,
		        (unsigned long long)st.cache_hits);
	}
	adac_symbols_each_found(adac_target_symbols(t), print_found, NULL);
	adac_target_close(t);
	free(rest);
	if (rc)
		return fail_with(&err);
	return svg_failed ? EXIT_TARGET : EXIT_OK;
}
