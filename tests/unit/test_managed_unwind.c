/* test_managed_unwind.c - the x64 unwind-code interpreter (adac_unwind_amd64) on hand-built
 * UNWIND_INFO blobs, code bytes and stacks in a memory target: every unwind operation, prologue
 * offsets, frame registers (with offset, and CoreCLR's UWOP_SET_FPREG_LARGE), machine frames,
 * chained entries, version 1 epilogs (recognised by their code) and version 2 ones (UWOP_EPILOG),
 * and malformed blobs. Expected registers are exact. */
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "code/managed_unwind.h"
#include "target/target.h"
#include "target/target_mem.h"

#define IMAGE 0x10000000ull     /* image base: RVAs are relative to it */
#define IMAGE_SIZE 0x2000u
#define STACK 0x7f0000000000ull
#define STACK_SIZE (2u << 20)

static uint8_t image[IMAGE_SIZE];
static uint8_t *stack;

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11, R12, R13, R14, R15 };
enum {
	PUSH_NONVOL, ALLOC_LARGE, ALLOC_SMALL, SET_FPREG, SAVE_NONVOL, SAVE_NONVOL_FAR, EPILOG, SPARE,
	SAVE_XMM128, SAVE_XMM128_FAR, PUSH_MACHFRAME, SET_FPREG_LARGE,
};
#define CODE(off, op, info) ((uint16_t)((off) | ((op) << 8) | ((info) << 12)))
#define CHAININFO 4

static void reset(void)
{
	memset(image, 0x90, sizeof image); /* nop: no epilog anywhere unless a test writes one */
	memset(stack, 0, STACK_SIZE);
}

static void put_code(uint32_t rva, const char *hex)
{
	for (const char *p = hex; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		unsigned v;
		sscanf(p, "%2x", &v);
		image[rva++] = (uint8_t)v;
		p += 2;
	}
}

static void put_stack(uint64_t addr, uint64_t v)
{
	if (addr < STACK || addr + 8 > STACK + STACK_SIZE) {
		fprintf(stderr, "test bug: stack address 0x%llx\n", (unsigned long long)addr);
		abort();
	}
	memcpy(stack + (addr - STACK), &v, 8);
}

/* An UNWIND_INFO at rva; chained != NULL adds UNW_FLAG_CHAININFO and the entry. */
static void put_uinfo(uint32_t rva, unsigned version, unsigned flags, unsigned prolog, unsigned frame_reg,
                      unsigned frame_off, const uint16_t *codes, unsigned n, const struct adac_runtime_function *chained)
{
	image[rva] = (uint8_t)(version | ((flags | (chained ? CHAININFO : 0)) << 3));
	image[rva + 1] = (uint8_t)prolog;
	image[rva + 2] = (uint8_t)n;
	image[rva + 3] = (uint8_t)(frame_reg | (frame_off << 4));
	if (n)
		memcpy(image + rva + 4, codes, n * 2u);
	if (chained) {
		uint32_t at = rva + 4 + ((n + 1) & ~1u) * 2;
		memcpy(image + at, &chained->begin, 4);
		memcpy(image + at + 4, &chained->end, 4);
		memcpy(image + at + 8, &chained->unwind_data, 4);
	}
}

static struct adac_runtime_function fn_at(uint32_t begin, uint32_t end, uint32_t unwind)
{
	struct adac_runtime_function f = {IMAGE, IMAGE + IMAGE_SIZE, 0, begin, end, unwind};
	return f;
}

static struct adac_target *target(void)
{
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, IMAGE, image, sizeof image);
	adac_memimg_add(img, STACK, stack, STACK_SIZE);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	CHECK(t != NULL);
	return t;
}

/* Registers with recognisable values, all known. */
static struct adac_unwind_state regs_at(uint64_t rip, uint64_t rsp)
{
	struct adac_regs r;
	for (unsigned i = 0; i < ADAC_REG_COUNT; i++)
		r.r[i] = 0x1000 + i;
	r.r[ADAC_REG_RIP] = rip;
	r.r[ADAC_REG_RSP] = rsp;
	struct adac_unwind_state st;
	adac_unwind_state_from_regs(&st, &r);
	return st;
}

/* A lookup over a table of functions (jmp targets in epilog detection). */
static struct adac_runtime_function table[8];
static size_t ntable;

static int lookup(void *ctx, uint64_t addr, struct adac_runtime_function *fn, bool *found, struct adac_error *err)
{
	(void)ctx;
	(void)err;
	*found = false;
	for (size_t i = 0; i < ntable; i++)
		if (addr >= table[i].image_base + table[i].begin && addr < table[i].image_base + table[i].end) {
			*fn = table[i];
			*found = true;
		}
	return 0;
}

static int unwind(const struct adac_runtime_function *fn, struct adac_unwind_state *st, struct adac_error *err)
{
	struct adac_target *t = target();
	adac_error_clear(err);
	int rc = adac_unwind_amd64(t, fn, lookup, NULL, st, err);
	adac_target_close(t);
	return rc;
}

#define CHECK_OK(rc, err)                                                                          \
	do {                                                                                           \
		if ((rc) != 0) {                                                                           \
			fprintf(stderr, "%s:%d: unwind failed: %s\n", __FILE__, __LINE__, (err)->msg);        \
			check_failures++;                                                                      \
		}                                                                                          \
	} while (0)

#define KNOWN(st, r) (((st).known >> (r)) & 1)

/* ---- the frame of test 1: push rbp; push rbx; sub rsp, 0x28 --------------------------------- */

#define F1_BEGIN 0x100u
#define F1_END 0x180u
#define F1_UNWIND 0x1000u
static const uint16_t f1_codes[] = {CODE(6, ALLOC_SMALL, 4), CODE(2, PUSH_NONVOL, RBX), CODE(1, PUSH_NONVOL, RBP)};

static void setup_f1(void)
{
	put_code(F1_BEGIN, "55 53 48 83 ec 28");
	put_uinfo(F1_UNWIND, 1, 0, 6, 0, 0, f1_codes, 3, NULL);
}

static void test_push_alloc_small(void)
{
	reset();
	setup_f1();
	struct adac_runtime_function fn = fn_at(F1_BEGIN, F1_END, F1_UNWIND);
	uint64_t s = STACK + 0x1000;
	put_stack(s + 0x28, 0xB0B0);     /* rbx */
	put_stack(s + 0x30, 0xBEBE);     /* rbp */
	put_stack(s + 0x38, 0x7777);     /* return address */
	struct adac_unwind_state st = regs_at(IMAGE + 0x120, s);
	struct adac_error err = {0};
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x7777);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x40);
	CHECK_EQ_U64(st.gpr[RBX], 0xB0B0);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEBE);
	/* Nonvolatiles the unwind leaves alone keep their values; volatiles become unknown. */
	CHECK_EQ_U64(st.gpr[R12], 0x1000 + R12);
	CHECK(KNOWN(st, R12) && KNOWN(st, R15) && KNOWN(st, RBX) && KNOWN(st, RBP) && KNOWN(st, RSP));
	CHECK(!KNOWN(st, RAX) && !KNOWN(st, RCX) && !KNOWN(st, RDX) && !KNOWN(st, RSI) && !KNOWN(st, RDI));
	CHECK(!KNOWN(st, R8) && !KNOWN(st, R11));
	CHECK_EQ_U64(st.xmm_known, 0);

	/* Without rsp (a backend frame whose sp is not known), nothing can be unwound. */
	adac_unwind_state_from_frame(&st, IMAGE + 0x120, 0, s);
	int rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "unwinding needs rsp, whose value in this frame is not known");

	/* A state from a backend frame: pc, sp and fp only. */
	adac_unwind_state_from_frame(&st, IMAGE + 0x120, s, 0);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.known, (1u << RSP) | (1u << RBX) | (1u << RBP));
	CHECK_EQ_U64(st.rip, 0x7777);
}

/* Only the codes whose CodeOffset <= the IP's offset in the function have run. */
static void test_prologue_offsets(void)
{
	reset();
	setup_f1();
	struct adac_runtime_function fn = fn_at(F1_BEGIN, F1_END, F1_UNWIND);
	uint64_t s = STACK + 0x1000;
	for (uint64_t i = 0; i < 8; i++)
		put_stack(s + i * 8, 0xA000 + i);
	struct adac_error err = {0};
	struct {
		uint32_t off;
		uint64_t rip, rsp, rbx, rbp;
	} cases[] = {
		{0, 0xA000, s + 8, 0x1000 + RBX, 0x1000 + RBP},           /* nothing pushed yet */
		{1, 0xA001, s + 16, 0x1000 + RBX, 0xA000},                /* after push rbp */
		{2, 0xA002, s + 24, 0xA000, 0xA001},                      /* after push rbx */
		{5, 0xA002, s + 24, 0xA000, 0xA001},                      /* inside sub rsp (offset 2..5) */
		{6, 0xA007, s + 0x40, 0xA005, 0xA006},                    /* prologue done */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct adac_unwind_state st = regs_at(IMAGE + F1_BEGIN + cases[i].off, s);
		CHECK_OK(unwind(&fn, &st, &err), &err);
		CHECK_EQ_U64(st.rip, cases[i].rip);
		CHECK_EQ_U64(st.gpr[RSP], cases[i].rsp);
		CHECK_EQ_U64(st.gpr[RBX], cases[i].rbx);
		CHECK_EQ_U64(st.gpr[RBP], cases[i].rbp);
	}
}

/* ---- frame registers ---------------------------------------------------------------------- */

/* push rbp; sub rsp, 0x40; lea rbp, [rsp+0x20]: FrameRegister rbp, FrameOffset 2 (0x20 bytes). */
#define F2_BEGIN 0x200u
#define F2_END 0x280u
#define F2_UNWIND 0x1100u

static void setup_f2(void)
{
	static const uint16_t codes[] = {CODE(10, SET_FPREG, 0), CODE(5, ALLOC_SMALL, 7), CODE(1, PUSH_NONVOL, RBP)};
	put_code(F2_BEGIN, "55 48 83 ec 40 48 8d 6c 24 20");
	put_uinfo(F2_UNWIND, 1, 0, 10, RBP, 2, codes, 3, NULL);
}

static void test_set_fpreg(void)
{
	reset();
	setup_f2();
	struct adac_runtime_function fn = fn_at(F2_BEGIN, F2_END, F2_UNWIND);
	uint64_t c = STACK + 0x2000; /* the caller's rsp */
	put_stack(c - 8, 0x5151);    /* return address */
	put_stack(c - 16, 0xBEEF);   /* saved rbp */
	struct adac_error err = {0};
	/* In the body, after a dynamic allocation moved rsp: only rbp locates the frame. */
	struct adac_unwind_state st = regs_at(IMAGE + 0x230, c - 0x50 - 0x300);
	st.gpr[RBP] = c - 0x30;
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x5151);
	CHECK_EQ_U64(st.gpr[RSP], c);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEEF);

	/* In the prologue before the lea: rsp locates it, rbp is not needed. */
	adac_unwind_state_from_frame(&st, IMAGE + F2_BEGIN + 5, c - 0x50, 0);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x5151);
	CHECK_EQ_U64(st.gpr[RSP], c);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEEF);

	/* In the body, rbp unknown: an error, never a guess. */
	adac_unwind_state_from_frame(&st, IMAGE + 0x230, c - 0x50, 0);
	struct adac_unwind_state before = st;
	int rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "(UWOP_SET_FPREG) needs rbp, whose value in this frame is not known");
	CHECK(memcmp(&st, &before, sizeof st) == 0);

	/* A frame register that puts the caller's rsp below the frame's: corrupt. */
	st = regs_at(IMAGE + 0x230, c - 0x50);
	st.gpr[RBP] = c - 0x1000;
	put_stack(c - 0x1000 + 0x10, 0x9999);
	rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "not above the frame's");
}

/* CoreCLR's Unix extension: FrameOffset 15 and a 32-bit offset (scaled by 16) in two slots. */
static void test_set_fpreg_large(void)
{
	reset();
	const uint32_t units = 0x10002; /* 0x100020 bytes: the high half matters */
	const uint16_t codes[] = {CODE(12, SET_FPREG_LARGE, 0), (uint16_t)(units & 0xFFFF), (uint16_t)(units >> 16),
	                          CODE(5, ALLOC_SMALL, 1), CODE(1, PUSH_NONVOL, RBP)};
	put_uinfo(0x1100, 1, 0, 12, RBP, 15, codes, 5, NULL);
	struct adac_runtime_function fn = fn_at(0x200, 0x280, 0x1100);
	uint64_t frame = STACK + 0x1000; /* rsp when the frame pointer was set */
	put_stack(frame + 0x10, 0xBEEF);
	put_stack(frame + 0x18, 0x4242);
	struct adac_unwind_state st = regs_at(IMAGE + 0x240, frame - 0x100);
	st.gpr[RBP] = frame + 0x100020;
	struct adac_error err = {0};
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x4242);
	CHECK_EQ_U64(st.gpr[RSP], frame + 0x20);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEEF);
}

static void test_alloc_large(void)
{
	reset();
	/* sub rsp, 0x180 (16-bit count of 8-byte units); sub rsp, 0x10008 (32-bit, unscaled). */
	const uint16_t codes[] = {CODE(14, ALLOC_LARGE, 1), 0x0008, 0x0001, CODE(7, ALLOC_LARGE, 0), 0x30};
	put_uinfo(0x1100, 1, 0, 14, 0, 0, codes, 5, NULL);
	struct adac_runtime_function fn = fn_at(0x200, 0x280, 0x1100);
	uint64_t s = STACK + 0x1000;
	put_stack(s + 0x10008 + 0x180, 0x6060);
	struct adac_unwind_state st = regs_at(IMAGE + 0x240, s);
	struct adac_error err = {0};
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x6060);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x10008 + 0x188);
	/* When only the first (16-bit) one has run. */
	put_stack(s + 0x180, 0x6262);
	st = regs_at(IMAGE + 0x200 + 10, s);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x6262);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x188);
}

static void test_save_nonvol(void)
{
	reset();
	/* sub rsp, 0x40; mov [rsp+0x28], r13; mov [rsp+0x18], r12: establisher = rsp. */
	const uint16_t codes[] = {CODE(14, SAVE_NONVOL, R12), 3, CODE(9, SAVE_NONVOL_FAR, R13), 0x28, 0,
	                          CODE(4, ALLOC_SMALL, 7)};
	put_uinfo(0x1100, 1, 0, 14, 0, 0, codes, 6, NULL);
	struct adac_runtime_function fn = fn_at(0x200, 0x280, 0x1100);
	uint64_t s = STACK + 0x1000;
	put_stack(s + 0x18, 0x1212);
	put_stack(s + 0x28, 0x1313);
	put_stack(s + 0x40, 0x4040);
	struct adac_unwind_state st = regs_at(IMAGE + 0x240, s);
	struct adac_error err = {0};
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x4040);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x48);
	CHECK_EQ_U64(st.gpr[R12], 0x1212);
	CHECK_EQ_U64(st.gpr[R13], 0x1313);
	/* Between the two saves only r13's has happened: r12 keeps its value. */
	st = regs_at(IMAGE + 0x200 + 9, s);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.gpr[R12], 0x1000 + R12);
	CHECK_EQ_U64(st.gpr[R13], 0x1313);

	/* With a frame register: saves are relative to the establisher frame rbp - FrameOffset*16,
	 * wherever rsp is now. push rbp; sub rsp, 0x30; lea rbp, [rsp+0x10]; mov [rbp-0x10+8], rbx. */
	const uint16_t codes2[] = {CODE(14, SAVE_NONVOL, RBX), 1, CODE(10, SET_FPREG, 0), CODE(5, ALLOC_SMALL, 5),
	                           CODE(1, PUSH_NONVOL, RBP)};
	put_uinfo(0x1200, 1, 0, 14, RBP, 1, codes2, 5, NULL);
	fn = fn_at(0x300, 0x380, 0x1200);
	uint64_t est = STACK + 0x3000; /* rsp after the sub */
	put_stack(est + 8, 0xB0B0);
	put_stack(est + 0x30, 0xBEBE);
	put_stack(est + 0x38, 0x3838);
	st = regs_at(IMAGE + 0x340, est - 0x500);
	st.gpr[RBP] = est + 0x10;
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.gpr[RBX], 0xB0B0);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEBE);
	CHECK_EQ_U64(st.rip, 0x3838);
	CHECK_EQ_U64(st.gpr[RSP], est + 0x40);
	/* The save needs the establisher frame, hence rbp. */
	adac_unwind_state_from_frame(&st, IMAGE + 0x340, est - 0x500, 0);
	int rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "(UWOP_SAVE_NONVOL) needs rbp");
}

static void test_save_xmm(void)
{
	reset();
	const uint16_t codes[] = {CODE(16, SAVE_XMM128, 6), 2, CODE(10, SAVE_XMM128_FAR, 15), 0x30, 0,
	                          CODE(4, ALLOC_SMALL, 7)};
	put_uinfo(0x1100, 1, 0, 16, 0, 0, codes, 6, NULL);
	struct adac_runtime_function fn = fn_at(0x200, 0x280, 0x1100);
	uint64_t s = STACK + 0x1000;
	put_stack(s + 0x20, 0x0606060606060606ull);
	put_stack(s + 0x28, 0x1616161616161616ull);
	put_stack(s + 0x30, 0x0f0f0f0f0f0f0f0full);
	put_stack(s + 0x38, 0x1f1f1f1f1f1f1f1full);
	put_stack(s + 0x40, 0x4040);
	struct adac_unwind_state st = regs_at(IMAGE + 0x240, s);
	struct adac_error err = {0};
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x4040);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x48);
	CHECK_EQ_U64(st.xmm_known, (1u << 6) | (1u << 15));
	uint64_t lo, hi;
	memcpy(&lo, st.xmm[6], 8);
	memcpy(&hi, st.xmm[6] + 8, 8);
	CHECK_EQ_U64(lo, 0x0606060606060606ull);
	CHECK_EQ_U64(hi, 0x1616161616161616ull);
	memcpy(&lo, st.xmm[15], 8);
	memcpy(&hi, st.xmm[15] + 8, 8);
	CHECK_EQ_U64(lo, 0x0f0f0f0f0f0f0f0full);
	CHECK_EQ_U64(hi, 0x1f1f1f1f1f1f1f1full);
}

static void test_machine_frame(void)
{
	reset();
	uint64_t s = STACK + 0x1000;
	for (uint64_t i = 0; i < 6; i++)
		put_stack(s + i * 8, 0xC000 + i);
	put_stack(s + 24, s + 0x800);      /* RSP of the interrupted frame */
	put_stack(s + 32, s + 0x900);      /* ... with an error code pushed first */
	struct adac_error err = {0};
	for (unsigned info = 0; info < 2; info++) {
		const uint16_t codes[] = {CODE(0, PUSH_MACHFRAME, info)};
		put_uinfo(0x1100, 1, 0, 0, 0, 0, codes, 1, NULL);
		struct adac_runtime_function fn = fn_at(0x200, 0x280, 0x1100);
		struct adac_unwind_state st = regs_at(IMAGE + 0x240, s);
		CHECK_OK(unwind(&fn, &st, &err), &err);
		CHECK_EQ_U64(st.rip, info ? 0xC001 : 0xC000);        /* no return pops after it */
		CHECK_EQ_U64(st.gpr[RSP], info ? s + 0x900 : s + 0x800);
	}
}

/* ---- chained entries ---------------------------------------------------------------------- */

static void test_chained(void)
{
	reset();
	setup_f1();
	struct adac_runtime_function primary = fn_at(F1_BEGIN, F1_END, F1_UNWIND);
	/* A cold part: an odd number of codes of its own (sub rsp, 0x10), then the chained entry
	 * (4-byte aligned after the padding slot). The primary's codes all apply. */
	const uint16_t codes[] = {CODE(4, ALLOC_SMALL, 1)};
	put_uinfo(0x1200, 1, 0, 4, 0, 0, codes, 1, &primary);
	struct adac_runtime_function cold = fn_at(0x600, 0x640, 0x1200);
	uint64_t s = STACK + 0x1000;
	put_stack(s + 0x10 + 0x28, 0xB0B0);
	put_stack(s + 0x10 + 0x30, 0xBEBE);
	put_stack(s + 0x10 + 0x38, 0x7777);
	struct adac_unwind_state st = regs_at(IMAGE + 0x620, s);
	struct adac_error err = {0};
	CHECK_OK(unwind(&cold, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x7777);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x50);
	CHECK_EQ_U64(st.gpr[RBX], 0xB0B0);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEBE);

	/* Without codes of its own. */
	put_uinfo(0x1300, 1, 0, 0, 0, 0, NULL, 0, &primary);
	cold = fn_at(0x600, 0x640, 0x1300);
	st = regs_at(IMAGE + 0x620, s + 0x10);
	CHECK_OK(unwind(&cold, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x7777);
	CHECK_EQ_U64(st.gpr[RSP], s + 0x50);

	/* A chain that loops stops at ADAC_MAX_UNWIND_CHAIN. */
	struct adac_runtime_function self = fn_at(0x600, 0x640, 0x1400);
	put_uinfo(0x1400, 1, 0, 0, 0, 0, NULL, 0, &self);
	st = regs_at(IMAGE + 0x620, s);
	int rc = unwind(&self, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_LIMIT, "more than ADAC_MAX_UNWIND_CHAIN (32) chained entries");

	/* A chained entry pointing out of the image. */
	struct adac_runtime_function bad = fn_at(0x100, 0x180, 0x7000);
	put_uinfo(0x1500, 1, 0, 0, 0, 0, NULL, 0, &bad);
	cold = fn_at(0x600, 0x640, 0x1500);
	rc = unwind(&cold, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "UNWIND_INFO at 0x10007000 (+4 bytes) is outside [0x10000000, 0x10002000)");
}

/* ---- version 1 epilogs -------------------------------------------------------------------- */

struct epilog_case {
	const char *code;       /* at the IP */
	uint64_t rip, rsp, rbx, rbp, r12;
};

static void test_epilog_v1(void)
{
	reset();
	setup_f1();
	struct adac_runtime_function fn = fn_at(F1_BEGIN, F1_END, F1_UNWIND);
	ntable = 0;
	table[ntable++] = fn;
	uint64_t s = STACK + 0x1000;
	for (uint64_t i = 0; i < 16; i++)
		put_stack(s + i * 8, 0xE000 + i);
	const uint64_t r12 = 0x1000 + R12, rbx = 0x1000 + RBX, rbp = 0x1000 + RBP;
	/* The prologue unwind would give rip 0xE007, rsp s+0x40: the epilog emulation differs. */
	struct epilog_case cases[] = {
		{"48 83 c4 28 5b 5d c3", 0xE007, s + 0x40, 0xE005, 0xE006, r12},  /* add rsp, imm8 */
		{"48 83 c4 f8 5d c3", 0xE000, s + 8, rbx, 0xDFFF, r12},           /* add rsp, -8 (signed) */
		{"48 81 c4 10 00 00 00 5b c3", 0xE003, s + 0x20, 0xE002, rbp, r12}, /* add rsp, imm32 */
		{"5b 5d c3", 0xE002, s + 0x18, 0xE000, 0xE001, r12},              /* pop rbx; pop rbp; ret */
		{"41 5c 5d c3", 0xE002, s + 0x18, rbx, 0xE001, 0xE000},           /* pop r12 (REX) */
		{"c3", 0xE000, s + 8, rbx, rbp, r12},                             /* ret */
		{"f3 c3", 0xE000, s + 8, rbx, rbp, r12},                          /* rep ret */
		{"f2 c3", 0xE000, s + 8, rbx, rbp, r12},                          /* repne ret */
		{"c2 08 00", 0xE000, s + 8, rbx, rbp, r12},                       /* ret imm16 */
		{"5d e9 00 10 00 00", 0xE001, s + 0x10, rbx, 0xE000, r12},        /* tail jmp to no function */
		{"5d eb 80", 0xE001, s + 0x10, rbx, 0xE000, r12},                 /* jmp rel8 before the function */
		{"5d ff 25 00 00 00 00", 0xE001, s + 0x10, rbx, 0xE000, r12},     /* jmp [rip+disp32] */
		{"5d 48 ff e0", 0xE001, s + 0x10, rbx, 0xE000, r12},              /* rex.w jmp rax */
	};
	struct adac_error err = {0};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		reset();
		setup_f1();
		for (uint64_t k = 0; k < 16; k++)
			put_stack(s + k * 8, 0xE000 + k);
		put_stack(s - 8, 0xDFFF);
		put_code(0x140, cases[i].code);
		struct adac_unwind_state st = regs_at(IMAGE + 0x140, s);
		CHECK_OK(unwind(&fn, &st, &err), &err);
		if (st.rip != cases[i].rip || st.gpr[RSP] != cases[i].rsp || st.gpr[RBX] != cases[i].rbx ||
		    st.gpr[RBP] != cases[i].rbp || st.gpr[R12] != cases[i].r12) {
			fprintf(stderr, "%s:%d: epilog \"%s\": rip 0x%llx rsp 0x%llx rbx 0x%llx rbp 0x%llx r12 0x%llx\n", __FILE__,
			        __LINE__, cases[i].code, (unsigned long long)st.rip, (unsigned long long)st.gpr[RSP],
			        (unsigned long long)st.gpr[RBX], (unsigned long long)st.gpr[RBP], (unsigned long long)st.gpr[R12]);
			check_failures++;
		}
	}

	/* Not epilogs: the prologue is unwound (rip 0xE007, rsp s+0x40). */
	const char *not_epilogs[] = {
		"5d eb d0",              /* jmp back into the function body */
		"5d e9 00 00 00 00 90",  /* jmp to the next instruction, inside the function */
		"5d 90 c3",              /* something between the pop and the ret */
		"48 83 c5 28 c3",        /* add rbp, not rsp */
		"ff e0",                 /* jmp rax without REX.W: a jump table */
	};
	for (size_t i = 0; i < sizeof not_epilogs / sizeof not_epilogs[0]; i++) {
		reset();
		setup_f1();
		for (uint64_t k = 0; k < 16; k++)
			put_stack(s + k * 8, 0xE000 + k);
		put_code(0x140, not_epilogs[i]);
		struct adac_unwind_state st = regs_at(IMAGE + 0x140, s);
		CHECK_OK(unwind(&fn, &st, &err), &err);
		if (st.rip != 0xE007 || st.gpr[RSP] != s + 0x40) {
			fprintf(stderr, "%s:%d: \"%s\" taken for an epilog: rip 0x%llx rsp 0x%llx\n", __FILE__, __LINE__,
			        not_epilogs[i], (unsigned long long)st.rip, (unsigned long long)st.gpr[RSP]);
			check_failures++;
		}
	}

	/* A jump to the start of the function is a recursive tail call: an epilog. */
	reset();
	setup_f1();
	for (uint64_t k = 0; k < 16; k++)
		put_stack(s + k * 8, 0xE000 + k);
	put_code(0x140, "e9 bb ff ff ff"); /* 0x145 - 0x45 = 0x100 */
	struct adac_unwind_state st = regs_at(IMAGE + 0x140, s);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0xE000);
	CHECK_EQ_U64(st.gpr[RSP], s + 8);

	/* A jump into another part of the same function (its chained cold part) is not an epilog;
	 * to another function it is. */
	struct adac_runtime_function cold = fn_at(0x600, 0x640, 0x1200);
	put_uinfo(0x1200, 1, 0, 0, 0, 0, NULL, 0, &fn);
	struct adac_runtime_function other = fn_at(0x700, 0x740, 0x1300);
	put_uinfo(0x1300, 1, 0, 0, 0, 0, NULL, 0, NULL);
	table[ntable++] = cold;
	table[ntable++] = other;
	put_code(0x140, "e9 bb 04 00 00"); /* 0x145 + 0x4bb = 0x600 */
	st = regs_at(IMAGE + 0x140, s);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0xE007);
	put_code(0x140, "e9 bb 05 00 00"); /* 0x700 */
	st = regs_at(IMAGE + 0x140, s);
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0xE000);
	ntable = 0;

	/* lea rsp, disp[frame register]: only with the function's frame register. */
	reset();
	setup_f2();
	fn = fn_at(F2_BEGIN, F2_END, F2_UNWIND);
	uint64_t r = STACK + 0x4000;
	put_stack(r + 0x10, 0xBEEF);
	put_stack(r + 0x18, 0x1818);
	put_code(0x260, "48 8d 65 10 5d c3"); /* lea rsp, [rbp+0x10]; pop rbp; ret */
	st = regs_at(IMAGE + 0x260, r - 0x200);
	st.gpr[RBP] = r;
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x1818);
	CHECK_EQ_U64(st.gpr[RSP], r + 0x20);
	CHECK_EQ_U64(st.gpr[RBP], 0xBEEF);
	put_code(0x260, "48 8d a5 10 00 00 00 5d c3"); /* lea rsp, [rbp+disp32] */
	st = regs_at(IMAGE + 0x260, r - 0x200);
	st.gpr[RBP] = r;
	CHECK_OK(unwind(&fn, &st, &err), &err);
	CHECK_EQ_U64(st.rip, 0x1818);
	CHECK_EQ_U64(st.gpr[RSP], r + 0x20);

	/* Code too short to decide (the readable image ends in the middle of an `add rsp`). */
	reset();
	setup_f1();
	fn = fn_at(0x1f00, IMAGE_SIZE, F1_UNWIND);
	put_code(IMAGE_SIZE - 2, "48 83");
	st = regs_at(IMAGE + IMAGE_SIZE - 2, s);
	int rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "readable for 2 bytes only, too few to tell whether it is an epilog");
}

/* ---- version 2 epilogs -------------------------------------------------------------------- */

static void test_epilog_v2(void)
{
	reset();
	/* push rbp; push rbx; sub rsp, 0x28 at 0x400..0x440; one epilog (3 bytes: pop rbx; pop rbp;
	 * ret) at the end and one 0x10 bytes before the end. */
	const uint16_t codes[] = {CODE(3, EPILOG, 1), CODE(0x10, EPILOG, 0), CODE(6, ALLOC_SMALL, 4),
	                          CODE(2, PUSH_NONVOL, RBX), CODE(1, PUSH_NONVOL, RBP)};
	put_uinfo(0x1100, 2, 0, 6, 0, 0, codes, 5, NULL);
	struct adac_runtime_function fn = fn_at(0x400, 0x440, 0x1100);
	uint64_t s = STACK + 0x1000;
	for (uint64_t i = 0; i < 16; i++)
		put_stack(s + i * 8, 0xF000 + i);
	struct {
		uint32_t rva;
		uint64_t rip, rsp, rbx, rbp;
	} cases[] = {
		{0x43d, 0xF002, s + 0x18, 0xF000, 0xF001},               /* at the last epilog's pop rbx */
		{0x43e, 0xF001, s + 0x10, 0x1000 + RBX, 0xF000},         /* at its pop rbp */
		{0x43f, 0xF000, s + 8, 0x1000 + RBX, 0x1000 + RBP},      /* at its ret */
		{0x431, 0xF001, s + 0x10, 0x1000 + RBX, 0xF000},         /* in the other epilog */
		{0x420, 0xF007, s + 0x40, 0xF005, 0xF006},               /* in the body */
	};
	struct adac_error err = {0};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct adac_unwind_state st = regs_at(IMAGE + cases[i].rva, s);
		CHECK_OK(unwind(&fn, &st, &err), &err);
		CHECK_EQ_U64(st.rip, cases[i].rip);
		CHECK_EQ_U64(st.gpr[RSP], cases[i].rsp);
		CHECK_EQ_U64(st.gpr[RBX], cases[i].rbx);
		CHECK_EQ_U64(st.gpr[RBP], cases[i].rbp);
	}
}

/* ---- malformed unwind info ---------------------------------------------------------------- */

static void test_corrupt(void)
{
	struct bad {
		unsigned version, prolog, frame_reg, frame_off, n;
		uint16_t codes[4];
		enum adac_errcode code;
		const char *msg;
	} cases[] = {
		{3, 0, 0, 0, 0, {0}, ADAC_E_CORRUPT, "UNWIND_INFO at 0x10001100: version 3 (1 or 2 expected)"},
		{0, 0, 0, 0, 0, {0}, ADAC_E_CORRUPT, "version 0 (1 or 2 expected)"},
		{1, 4, 0, 0, 1, {CODE(4, ALLOC_LARGE, 0)}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_ALLOC_LARGE) takes 2 slots, 1 left of 1"},
		{1, 4, 0, 0, 2, {CODE(4, PUSH_NONVOL, RBX), CODE(4, SAVE_NONVOL_FAR, RBX)}, ADAC_E_CORRUPT,
		 "unwind code 1 (UWOP_SAVE_NONVOL_FAR) takes 3 slots, 1 left of 2"},
		{1, 4, 0, 0, 1, {CODE(4, SPARE, 0)}, ADAC_E_CORRUPT, "unwind code 0 is UWOP_SPARE_CODE (7)"},
		{1, 4, 0, 0, 1, {CODE(4, 12, 0)}, ADAC_E_CORRUPT, "unwind code 0 is an undefined operation (12)"},
		{1, 4, 0, 0, 3, {CODE(4, ALLOC_LARGE, 2), 1, 0}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_ALLOC_LARGE) has OpInfo other than 0 or 1"},
		{1, 4, 0, 0, 1, {CODE(4, SET_FPREG, 0)}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_SET_FPREG) sets a frame register, but FrameRegister is 0"},
		{1, 4, RBP, 3, 3, {CODE(4, SET_FPREG_LARGE, 0), 1, 0}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_SET_FPREG_LARGE) needs FrameOffset 15"},
		{1, 4, RBP, 15, 3, {CODE(4, SET_FPREG_LARGE, 0), 0, 0x1000}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_SET_FPREG_LARGE) has an offset of 2^32 bytes or more"},
		{1, 4, 0, 0, 2, {CODE(4, EPILOG, 1), 0}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_EPILOG) is only defined in version 2"},
		{1, 4, RBP, 15, 4, {CODE(4, SET_FPREG, 0), CODE(4, SET_FPREG_LARGE, 0), 1, 0}, ADAC_E_CORRUPT,
		 "unwind code 1 (UWOP_SET_FPREG_LARGE) sets the frame register a second time"},
		{1, 4, 0, 0, 1, {CODE(4, PUSH_MACHFRAME, 2)}, ADAC_E_CORRUPT,
		 "unwind code 0 (UWOP_PUSH_MACHFRAME) has OpInfo other than 0 or 1"},
	};
	struct adac_error err = {0};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		reset();
		put_uinfo(0x1100, cases[i].version, 0, cases[i].prolog, cases[i].frame_reg, cases[i].frame_off, cases[i].codes,
		          cases[i].n, NULL);
		struct adac_runtime_function fn = fn_at(0x200, 0x280, 0x1100);
		struct adac_unwind_state st = regs_at(IMAGE + 0x240, STACK + 0x1000), before = st;
		int rc = unwind(&fn, &st, &err);
		CHECK_ERR(rc, &err, cases[i].code, cases[i].msg);
		CHECK(memcmp(&st, &before, sizeof st) == 0);
	}

	reset();
	setup_f1();
	struct adac_unwind_state st = regs_at(IMAGE + 0x120, STACK + 0x1000);
	/* The codes run past the end of the image. */
	struct adac_runtime_function fn = fn_at(F1_BEGIN, F1_END, IMAGE_SIZE - 6);
	image[IMAGE_SIZE - 6] = 1;
	image[IMAGE_SIZE - 4] = 8; /* 8 codes: 16 bytes */
	int rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "UNWIND_INFO at 0x10001ffa (+20 bytes) is outside [0x10000000, 0x10002000)");
	/* Without a limit, the same is a read error. */
	fn.image_end = 0;
	rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "UNWIND_INFO at 0x10001ffa (8 codes)");
	/* The IP outside the RUNTIME_FUNCTION. */
	fn = fn_at(F1_BEGIN, F1_END, F1_UNWIND);
	st.rip = IMAGE + F1_END;
	rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "RUNTIME_FUNCTION [0x10000100, 0x10000180) does not contain 0x10000180");
	/* An empty RUNTIME_FUNCTION. */
	fn = fn_at(F1_BEGIN, F1_BEGIN, F1_UNWIND);
	st.rip = IMAGE + F1_BEGIN;
	rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "does not contain");
	/* The return address is not readable. */
	fn = fn_at(F1_BEGIN, F1_END, F1_UNWIND);
	st = regs_at(IMAGE + 0x120, STACK + STACK_SIZE - 0x38);
	rc = unwind(&fn, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "the return address: ");
	/* The code at the IP is not readable at all. */
	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, IMAGE + 0x1000, image + 0x1000, 0x1000); /* the unwind info, not the code */
	struct adac_target *t = adac_target_open_memory(img, &err);
	st = regs_at(IMAGE + 0x120, STACK + 0x1000);
	adac_error_clear(&err);
	rc = adac_unwind_amd64(t, &fn, NULL, NULL, &st, &err);
	CHECK_ERR(rc, &err, ADAC_E_READ, "the code at 0x10000120 is not readable (to look for an epilog)");
	adac_target_close(t);
}

int main(void)
{
	stack = malloc(STACK_SIZE);
	test_push_alloc_small();
	test_prologue_offsets();
	test_set_fpreg();
	test_set_fpreg_large();
	test_alloc_large();
	test_save_nonvol();
	test_save_xmm();
	test_machine_frame();
	test_chained();
	test_epilog_v1();
	test_epilog_v2();
	test_corrupt();
	free(stack);
	return check_report("test_managed_unwind");
}
