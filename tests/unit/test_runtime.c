/* test_runtime.c - adac_runtime_acquire/release (runtime/runtime.c): a runtime of a command's own
 * without a runtime source (the CLI), the front end's kept one with it (the LLDB plugin), and every
 * command taking its runtime that way. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "asyncdac.h"
#include "runtime/runtime.h"
#include "target/target_mem.h"

static struct adac_runtime *kept;
static unsigned asked;

static struct adac_runtime *give_kept(struct adac_target *t, struct adac_error *err)
{
	(void)t;
	(void)err;
	asked++;
	return kept;
}

static struct adac_runtime *give_none(struct adac_target *t, struct adac_error *err)
{
	(void)t;
	asked++;
	adac_fail(err, ADAC_E_NO_RUNTIME, 0, "the front end's runtime: none");
	return NULL;
}

static struct adac_target *empty_target(void)
{
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(adac_memimg_new(), &err);
	CHECK(t != NULL);
	return t;
}

static void test_acquire_release(void)
{
	struct adac_target *t = empty_target();
	struct adac_error err = {0};
	/* No source: opened for the command (here, none to find), as adac_runtime_open. */
	CHECK(adac_target_runtime_source(t) == NULL);
	CHECK_ERR(adac_runtime_acquire(t, &err) != NULL ? 0 : -1, &err, ADAC_E_NO_RUNTIME, "the target has no modules");
	adac_runtime_release(NULL);

	/* A source: its runtime, every time, and release leaves it open (closed once, below). */
	kept = calloc(1, sizeof *kept);
	adac_target_set_runtime_source(t, give_kept);
	asked = 0;
	for (int i = 0; i < 3; i++) {
		struct adac_runtime *rt = adac_runtime_acquire(t, &err);
		CHECK(rt == kept);
		adac_runtime_release(rt);
	}
	CHECK_EQ_U64(asked, 3);
	CHECK(!kept->transient);
	adac_runtime_close(kept);
	kept = NULL;

	/* A source without a runtime: its error, no runtime opened instead. */
	adac_error_clear(&err);
	adac_target_set_runtime_source(t, give_none);
	CHECK_ERR(adac_runtime_acquire(t, &err) != NULL ? 0 : -1, &err, ADAC_E_NO_RUNTIME, "the front end's runtime: none");
	adac_target_close(t);
}

static void discard(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

/* Each command, with the arguments it needs to get that far, asks the target's source. */
static void test_commands_use_the_source(void)
{
	static const char *const lines[][4] = {
		{"bt"}, {"runtime"}, {"ip2md", "0x1000"}, {"dumpmd", "0x1000"}, {"frame", "info"}, {"dumpheap"},
		{"ps"}, {"symbols", "-o", "/nonexistent/x.debug"}, {"dumpobj", "0x1000"}, {"pe", "0x1000"},
		{"report"}, {"refs", "0x1000"}, {"gcroot", "0x1000"}, {"locks"}, {"threadpool"}, {"clrthreads"},
		{"pstacks"},
	};
	struct adac_target *t = empty_target();
	adac_target_set_runtime_source(t, give_none);
	struct adac_out out = {.write = discard};
	size_t commands = 0;
	for (const struct adac_command_info *c = adac_commands(); c->name; c++)
		commands++;
	CHECK_EQ_U64(sizeof lines / sizeof lines[0] + 1, commands); /* + diff, below */
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		char *argv[4] = {0};
		int argc = 0;
		while (argc < 4 && lines[i][argc]) {
			argv[argc] = (char *)lines[i][argc];
			argc++;
		}
		struct adac_error err = {0};
		asked = 0;
		int rc = adac_command_run(t, ADAC_FRONTEND_CLI, argc, argv, &out, &err);
		CHECK_ERR(rc, &err, ADAC_E_NO_RUNTIME, "the front end's runtime: none");
		if (asked != 1)
			fprintf(stderr, "%s: the runtime source was asked %u times\n", argv[0], asked);
		CHECK_EQ_U64(asked, 1);
	}
	struct adac_target *b = empty_target();
	char *diff[] = {"diff"};
	struct adac_error err = {0};
	asked = 0;
	int rc = adac_command_run_diff(b, t, 1, diff, &out, &err);
	CHECK_ERR(rc, &err, ADAC_E_NO_RUNTIME, "A: the target has no modules");
	CHECK_EQ_U64(asked, 0);
	adac_error_clear(&err);
	rc = adac_command_run_diff(t, b, 1, diff, &out, &err);
	CHECK_ERR(rc, &err, ADAC_E_NO_RUNTIME, "A: the front end's runtime: none");
	CHECK_EQ_U64(asked, 1);
	adac_target_close(b);
	adac_target_close(t);
}

int main(void)
{
	test_acquire_release();
	test_commands_use_the_source();
	return check_report("test_runtime");
}
