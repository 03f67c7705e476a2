/* test_thread_stack.c - a thread's physical frames through async/thread_stack.h, over a backend
 * whose unwinder gives fixed frames, in a runtime without managed code (real .NET 11.0.0
 * descriptor, argv[1]): the backend's frames pass through unchanged, the visitor can stop the walk,
 * and the backend's own failure comes back after the frames it gave. */
#include "async/thread_stack.h"

#include "../check.h"
#include "testmem.h"

static const struct adac_frame backend_frames[] = {
	{.pc = 0x7f0000001010, .sp = 0x7ffc00001000, .module = "libc.so.6", .symbol = "__futex_wait", .sym_offset = 0x10},
	{.pc = 0x7f0000002020, .sp = 0x7ffc00001100, .module = "libcoreclr.so", .symbol = "WaitForSingleObject",
	 .sym_offset = 32, .file = "/src/pal/wait.cpp", .line = 77},
	{.pc = 0x7f0000003030, .sp = 0x7ffc00001200, .module = "libcoreclr.so"},
	{.pc = 0x7f0000004040, .sp = 0},
};
#define NFRAMES (sizeof backend_frames / sizeof backend_frames[0])

static size_t fail_after = NFRAMES; /* the backend fails after this many frames */

static int64_t nothing_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	(void)impl, (void)addr, (void)buf, (void)len, (void)err;
	return 0;
}

static int no_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl, (void)cb, (void)ctx, (void)err;
	return 0;
}

static int one_thread(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl, (void)err;
	struct adac_thread th = {.tid = 100, .index = 1};
	cb(ctx, &th);
	return 0;
}

static int no_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	(void)impl, (void)regs;
	return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "no registers of thread %llu", (unsigned long long)tid);
}

static int fixed_frames(void *impl, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err)
{
	(void)impl;
	for (size_t i = 0; i < NFRAMES; i++) {
		if (i == fail_after)
			return adac_fail(err, ADAC_E_READ, 0x7ffc00001300, "thread %llu: cannot read the stack at 0x7ffc00001300",
			                 (unsigned long long)tid);
		if (cb(ctx, &backend_frames[i]))
			return 0;
	}
	return 0;
}

static const struct adac_target_ops ops = {
	.kind = "test", .read = nothing_read, .modules = no_modules, .threads = one_thread, .regs = no_regs,
	.frames = fixed_frames,
};

struct seen {
	struct buf text;
	size_t frames, errors, stop_at;
};

static int on_frame(void *ctx, const struct adac_stack_frame *f)
{
	struct seen *s = ctx;
	if (s->stop_at && s->frames == s->stop_at)
		return 1;
	s->frames++;
	char line[256];
	snprintf(line, sizeof line, "%llx %llx %s %s %llu %d %s:%u %d\n", (unsigned long long)f->pc,
	         (unsigned long long)f->sp, f->module ? f->module : "-", f->symbol ? f->symbol : "-",
	         (unsigned long long)f->offset, f->managed, f->file ? f->file : "-", f->line, f->recovered);
	buf_write(&s->text, line, strlen(line));
	return 0;
}

static void on_error(void *ctx, const struct adac_error *err)
{
	struct seen *s = ctx;
	s->errors++;
	buf_write(&s->text, err->msg, strlen(err->msg));
}

static const char all_frames[] = "7f0000001010 7ffc00001000 libc.so.6 __futex_wait 16 0 -:0 0\n"
                                 "7f0000002020 7ffc00001100 libcoreclr.so WaitForSingleObject 32 0 /src/pal/wait.cpp:77 0\n"
                                 "7f0000003030 7ffc00001200 libcoreclr.so - 0 0 -:0 0\n"
                                 "7f0000004040 0 - - 0 0 -:0 0\n";

static void walk(struct adac_runtime *rt, struct seen *s, int want_rc, struct adac_error *err)
{
	struct adac_stack_visitor v = {on_frame, on_error, s};
	s->text.p = calloc(1, 1);
	s->text.n = 0;
	CHECK(adac_thread_stack_walk(rt, 100, &v, err) == want_rc);
}

int main(int argc, char **argv)
{
	int rc = layout_from_args(argc, argv);
	if (rc)
		return rc;
	struct adac_error err = {0};
	struct adac_target *t = adac_target_new(&ops, NULL, &err);
	CHECK(t != NULL);
	uint64_t pdata[P_COUNT] = {0};
	struct adac_runtime *rt = runtime_with(t, real_descriptor(pdata, NULL, NULL));

	/* Native frames only: the backend's, unchanged. */
	struct seen s = {0};
	walk(rt, &s, 0, &err);
	CHECK_EQ_STR(s.text.p, all_frames);
	CHECK_EQ_U64(s.errors, 0);
	free(s.text.p);

	/* The visitor stops the walk: the frames after it are not asked for. */
	s = (struct seen){.stop_at = 2};
	walk(rt, &s, 0, &err);
	CHECK_EQ_U64(s.frames, 2);
	CHECK(strncmp(s.text.p, all_frames, strlen(s.text.p)) == 0 && strlen(s.text.p) > 0);
	free(s.text.p);

	/* The backend's unwinder fails after two frames: those stay given, its error comes back. */
	fail_after = 2;
	s = (struct seen){0};
	adac_error_clear(&err);
	walk(rt, &s, -1, &err);
	CHECK_EQ_U64(s.frames, 2);
	CHECK_ERR(-1, &err, ADAC_E_READ, "thread 100: cannot read the stack at 0x7ffc00001300");
	free(s.text.p);

	adac_runtime_close(rt);
	adac_target_close(t);
	adac_desc_free(layout);
	mem_reset();
	return check_report("test_thread_stack");
}
