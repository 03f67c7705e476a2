/* fuzz_managed_unwind.c - the x64 unwind-code interpreter (adac_unwind_amd64) on arbitrary
 * UNWIND_INFO bytes, code bytes and register states in a memory target (an image and a stack).
 *
 * Input (tests/fuzz/make_corpus.py writes seeds in this form):
 *   0      flags: bit 0 a lookup for jmp targets (else NULL), bit 1 a backend frame's state (pc, sp
 *          unless bit 5, fp unless bit 4) instead of all registers, bit 2 no image_end check, bit 3
 *          unwind the caller's state again at the same IP
 *   1      BeginAddress - 0x100          2  EndAddress - BeginAddress - 1
 *   3      IP - BeginAddress (may be outside the function)
 *   4..5   rsp - STACK (little endian)   6  seed of the stack contents and of the other registers
 *   7      rbp - rsp, in 8-byte units
 *   8..71  the code bytes at the IP (what the version 1 epilog scan reads)
 *   72..   the image from UNWIND_RVA on: the UNWIND_INFO, and whatever its chained entries point at
 * The lookup knows a function per 256 bytes of the image below UNWIND_RVA, whose UnwindData is one
 * of 8 places in that area. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/managed_unwind.h"
#include "target/target.h"
#include "target/target_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IMAGE 0x10000000ull
#define IMAGE_SIZE 0x2000u
#define UNWIND_RVA 0x1000u
#define STACK 0x7f0000000000ull
#define STACK_SIZE 0x4000u
#define HEADER 72u

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Stack slots and register values: addresses in the stack (some past its end), in the image, or
 * small numbers. */
static uint64_t some_value(uint64_t *x)
{
	uint64_t r = next_rand(x);
	switch (r & 3) {
	case 0:
	case 1:
		return STACK + ((r >> 8) % (STACK_SIZE + 0x100) & ~7ull);
	case 2:
		return IMAGE + (r >> 8) % IMAGE_SIZE;
	default:
		return (r >> 8) & 0xffff;
	}
}

static int lookup(void *ctx, uint64_t addr, struct adac_runtime_function *fn, bool *found, struct adac_error *err)
{
	(void)ctx;
	(void)err;
	*found = false;
	if (addr < IMAGE || addr >= IMAGE + UNWIND_RVA)
		return 0;
	uint32_t rva = (uint32_t)(addr - IMAGE);
	fn->image_base = IMAGE;
	fn->image_end = IMAGE + IMAGE_SIZE;
	fn->addr = 0;
	fn->begin = rva & ~0xffu;
	fn->end = fn->begin + 0x100;
	fn->unwind_data = UNWIND_RVA + ((rva >> 8) & 7) * 0x20;
	*found = true;
	return 0;
}

static void unwind_once(struct adac_target *t, const struct adac_runtime_function *fn, bool with_lookup,
                        struct adac_unwind_state *st, bool *ok)
{
	struct adac_unwind_state before = *st;
	struct adac_error err = {0};
	int rc = adac_unwind_amd64(t, fn, with_lookup ? lookup : NULL, NULL, st, &err);
	*ok = rc == 0;
	if (rc != 0) {
		/* A failure says why and leaves the state alone. */
		if (err.code == ADAC_E_OK || err.msg[0] == '\0' || memcmp(st, &before, sizeof *st) != 0)
			__builtin_trap();
		return;
	}
	/* The caller's rsp is known, above the frame's and aligned. */
	if (!(st->known & (1u << ADAC_REG_RSP)) || st->gpr[ADAC_REG_RSP] <= before.gpr[ADAC_REG_RSP] ||
	    (st->gpr[ADAC_REG_RSP] & 7))
		__builtin_trap();
	if (st->xmm_known & ~0xffffu)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	uint8_t flags = data[0];
	uint32_t begin = 0x100u + data[1];
	uint32_t end = begin + 1u + data[2];
	uint32_t ip_off = data[3];
	uint64_t rsp = STACK + (uint64_t)(data[4] | (data[5] << 8)) % (STACK_SIZE + 0x40);
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)data[6] << 32 | data[6]);
	uint64_t rbp = rsp + (uint64_t)data[7] * 8;

	static uint8_t image[IMAGE_SIZE];
	static uint8_t stack[STACK_SIZE];
	memset(image, 0x90, sizeof image); /* nop */
	memcpy(image + begin + ip_off, data + 8, 64);
	size_t n = size - HEADER;
	memcpy(image + UNWIND_RVA, data + HEADER, n < IMAGE_SIZE - UNWIND_RVA ? n : IMAGE_SIZE - UNWIND_RVA);
	uint64_t x = seed;
	for (size_t i = 0; i < STACK_SIZE; i += 8) {
		uint64_t v = some_value(&x);
		memcpy(stack + i, &v, 8);
	}

	struct adac_memimg *img = adac_memimg_new();
	adac_memimg_add(img, IMAGE, image, sizeof image);
	adac_memimg_add(img, STACK, stack, sizeof stack);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	if (!t)
		__builtin_trap();

	struct adac_runtime_function fn = {IMAGE, (flags & 4) ? 0 : IMAGE + IMAGE_SIZE, 0, begin, end, UNWIND_RVA};
	uint64_t ip = IMAGE + begin + ip_off;
	struct adac_unwind_state st;
	if (flags & 2) {
		adac_unwind_state_from_frame(&st, ip, (flags & 0x20) ? 0 : rsp, (flags & 0x10) ? 0 : rbp);
	} else {
		struct adac_regs regs;
		for (unsigned i = 0; i < ADAC_REG_COUNT; i++)
			regs.r[i] = some_value(&x);
		regs.r[ADAC_REG_RIP] = ip;
		regs.r[ADAC_REG_RSP] = rsp;
		regs.r[ADAC_REG_RBP] = rbp;
		adac_unwind_state_from_regs(&st, &regs);
	}
	bool ok = false;
	unwind_once(t, &fn, flags & 1, &st, &ok);
	if (ok && (flags & 8)) {
		/* The caller's state, some registers unknown now, at the same IP. */
		st.rip = ip;
		unwind_once(t, &fn, flags & 1, &st, &ok);
	}
	adac_target_close(t);
	return 0;
}
