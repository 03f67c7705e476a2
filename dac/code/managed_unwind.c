/* managed_unwind.c - x64 unwinding of managed frames from the runtime's Windows-x64 unwind info.
 *
 * The interpreter follows RtlVirtualUnwind as CoreCLR carries it (src/coreclr/unwinder/amd64/
 * unwinder.cpp), including CoreCLR's Unix-only UWOP_SET_FPREG_LARGE; the cDAC's AMD64Unwinder is the
 * same algorithm. Where they differ (the cDAC reads the wrong byte for `pop r0..r7` in an epilog,
 * leaves UWOP_SAVE_NONVOL_FAR out and never sets its machine-frame flag), this file does what the
 * native unwinder does. Unlike both, malformed unwind info is an error, never a guess. */
#include "code/managed_unwind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/limits.h"
#include "code/execution_manager.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "types/names.h"

enum {
	UWOP_PUSH_NONVOL = 0,
	UWOP_ALLOC_LARGE = 1,
	UWOP_ALLOC_SMALL = 2,
	UWOP_SET_FPREG = 3,
	UWOP_SAVE_NONVOL = 4,
	UWOP_SAVE_NONVOL_FAR = 5,
	UWOP_EPILOG = 6,           /* version 2 only */
	UWOP_SPARE_CODE = 7,
	UWOP_SAVE_XMM128 = 8,
	UWOP_SAVE_XMM128_FAR = 9,
	UWOP_PUSH_MACHFRAME = 10,
	UWOP_SET_FPREG_LARGE = 11, /* CoreCLR on Unix */
};

enum { UNW_FLAG_CHAININFO = 0x4 };

#define RF_BYTES 12u        /* an x64 RUNTIME_FUNCTION: BeginAddress, EndAddress, UnwindData */
#define CODE_WINDOW 64u     /* code bytes examined at the IP for an epilog */

static const char *const reg_names[16] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
};

static const char *const op_names[12] = {
	"UWOP_PUSH_NONVOL", "UWOP_ALLOC_LARGE", "UWOP_ALLOC_SMALL",     "UWOP_SET_FPREG",
	"UWOP_SAVE_NONVOL", "UWOP_SAVE_NONVOL_FAR", "UWOP_EPILOG",      "UWOP_SPARE_CODE",
	"UWOP_SAVE_XMM128", "UWOP_SAVE_XMM128_FAR", "UWOP_PUSH_MACHFRAME", "UWOP_SET_FPREG_LARGE",
};

/* System V AMD64: what a call may clobber (all XMM registers are volatile too). */
#define VOLATILE_GPRS                                                                                     \
	((1u << ADAC_REG_RAX) | (1u << ADAC_REG_RCX) | (1u << ADAC_REG_RDX) | (1u << ADAC_REG_RSI) |          \
	 (1u << ADAC_REG_RDI) | (1u << ADAC_REG_R8) | (1u << ADAC_REG_R9) | (1u << ADAC_REG_R10) |            \
	 (1u << ADAC_REG_R11))

void adac_unwind_state_from_regs(struct adac_unwind_state *st, const struct adac_regs *regs)
{
	memset(st, 0, sizeof *st);
	st->rip = regs->r[ADAC_REG_RIP];
	for (unsigned i = 0; i < 16; i++)
		st->gpr[i] = regs->r[i];
	st->known = 0xFFFF;
}

void adac_unwind_state_from_frame(struct adac_unwind_state *st, uint64_t pc, uint64_t sp, uint64_t fp)
{
	memset(st, 0, sizeof *st);
	st->rip = pc;
	st->gpr[ADAC_REG_RSP] = sp;
	st->known = sp ? 1u << ADAC_REG_RSP : 0;
	if (fp) {
		st->gpr[ADAC_REG_RBP] = fp;
		st->known |= 1u << ADAC_REG_RBP;
	}
}

/* ---- one UNWIND_INFO, read whole and validated ------------------------------------------------ */

struct uinfo {
	uint64_t addr;          /* of the UNWIND_INFO */
	uint8_t version, flags, prolog_size, count, frame_reg, frame_off;
	uint16_t code[256];
	struct adac_runtime_function chained; /* with UNW_FLAG_CHAININFO */
};

static unsigned code_op(uint16_t c) { return (c >> 8) & 0xF; }
static unsigned code_info(uint16_t c) { return c >> 12; }
static unsigned code_offset(uint16_t c) { return c & 0xFF; }

/* Slots an unwind code takes (RtlpUnwindOpSlots); 0 for operations that do not exist. */
static unsigned op_slots(unsigned op, unsigned info)
{
	switch (op) {
	case UWOP_PUSH_NONVOL: return 1;
	case UWOP_ALLOC_LARGE: return info ? 3 : 2;
	case UWOP_ALLOC_SMALL: return 1;
	case UWOP_SET_FPREG: return 1;
	case UWOP_SAVE_NONVOL: return 2;
	case UWOP_SAVE_NONVOL_FAR: return 3;
	case UWOP_EPILOG: return 2;
	case UWOP_SAVE_XMM128: return 2;
	case UWOP_SAVE_XMM128_FAR: return 3;
	case UWOP_PUSH_MACHFRAME: return 1;
	case UWOP_SET_FPREG_LARGE: return 3;
	default: return 0; /* UWOP_SPARE_CODE and 12..15 */
	}
}

static uint32_t code_u32(const struct uinfo *u, unsigned i) { return (uint32_t)u->code[i] | ((uint32_t)u->code[i + 1] << 16); }

static int validate_codes(const struct uinfo *u, struct adac_error *err)
{
	unsigned frame_codes = 0;
	for (unsigned i = 0; i < u->count;) {
		unsigned op = code_op(u->code[i]), info = code_info(u->code[i]);
		unsigned slots = op_slots(op, info);
		const char *name = op < 12 ? op_names[op] : "an undefined operation";
		if (slots == 0)
			return adac_fail(err, ADAC_E_CORRUPT, u->addr, "UNWIND_INFO at 0x%llx: unwind code %u is %s (%u)",
			                 (unsigned long long)u->addr, i, name, op);
		if (i + slots > u->count)
			return adac_fail(err, ADAC_E_CORRUPT, u->addr,
			                 "UNWIND_INFO at 0x%llx: unwind code %u (%s) takes %u slots, %u left of %u",
			                 (unsigned long long)u->addr, i, name, slots, u->count - i, u->count);
		const char *bad = NULL;
		if (op == UWOP_EPILOG && u->version < 2)
			bad = "is only defined in version 2";
		else if (op == UWOP_ALLOC_LARGE && info > 1)
			bad = "has OpInfo other than 0 or 1";
		else if (op == UWOP_PUSH_MACHFRAME && info > 1)
			bad = "has OpInfo other than 0 or 1";
		else if ((op == UWOP_SET_FPREG || op == UWOP_SET_FPREG_LARGE) && u->frame_reg == 0)
			bad = "sets a frame register, but FrameRegister is 0";
		else if (op == UWOP_SET_FPREG_LARGE && u->frame_off != 15)
			bad = "needs FrameOffset 15";
		else if (op == UWOP_SET_FPREG_LARGE && (code_u32(u, i + 1) & 0xF0000000u))
			bad = "has an offset of 2^32 bytes or more";
		else if ((op == UWOP_SET_FPREG || op == UWOP_SET_FPREG_LARGE) && frame_codes++)
			bad = "sets the frame register a second time";
		if (bad)
			return adac_fail(err, ADAC_E_CORRUPT, u->addr, "UNWIND_INFO at 0x%llx: unwind code %u (%s) %s",
			                 (unsigned long long)u->addr, i, name, bad);
		i += slots;
	}
	return 0;
}

/* Checks that [addr, addr+len) lies in fn's image range. */
static int check_range(const struct adac_runtime_function *fn, uint64_t addr, uint64_t len, const char *what,
                       struct adac_error *err)
{
	if (addr < fn->image_base || addr + len < addr || (fn->image_end && addr + len > fn->image_end))
		return adac_fail(err, ADAC_E_CORRUPT, addr, "%s at 0x%llx (+%llu bytes) is outside [0x%llx, 0x%llx)", what,
		                 (unsigned long long)addr, (unsigned long long)len, (unsigned long long)fn->image_base,
		                 (unsigned long long)fn->image_end);
	return 0;
}

static int read_uinfo(struct adac_target *t, const struct adac_runtime_function *fn, struct uinfo *u,
                      struct adac_error *err)
{
	memset(u, 0, sizeof *u);
	u->addr = fn->image_base + fn->unwind_data;
	uint8_t buf[4 + 256 * 2 + RF_BYTES];
	if (check_range(fn, u->addr, 4, "UNWIND_INFO", err))
		return -1;
	if (adac_read(t, u->addr, buf, 4, err)) {
		adac_error_wrap(err, "UNWIND_INFO at 0x%llx: ", (unsigned long long)u->addr);
		return -1;
	}
	u->version = buf[0] & 7;
	u->flags = buf[0] >> 3;
	u->prolog_size = buf[1];
	u->count = buf[2];
	u->frame_reg = buf[3] & 0xF;
	u->frame_off = buf[3] >> 4;
	if (u->version != 1 && u->version != 2)
		return adac_fail(err, ADAC_E_CORRUPT, u->addr, "UNWIND_INFO at 0x%llx: version %u (1 or 2 expected)",
		                 (unsigned long long)u->addr, u->version);
	bool chain = u->flags & UNW_FLAG_CHAININFO;
	size_t codes = (size_t)u->count * 2;
	size_t chain_at = 4 + (((size_t)u->count + 1) & ~(size_t)1) * 2; /* the chained entry is 4-aligned */
	size_t size = chain ? chain_at + RF_BYTES : 4 + codes;
	if (check_range(fn, u->addr, size, "UNWIND_INFO", err))
		return -1;
	if (size > 4 && adac_read(t, u->addr + 4, buf + 4, size - 4, err)) {
		adac_error_wrap(err, "UNWIND_INFO at 0x%llx (%u codes): ", (unsigned long long)u->addr, u->count);
		return -1;
	}
	struct adac_cursor c = adac_cursor_make(buf + 4, size - 4);
	for (unsigned i = 0; i < u->count; i++)
		adac_cursor_u16(&c, &u->code[i]); /* size covers them */
	if (chain) {
		u->chained = *fn;
		u->chained.addr = u->addr + chain_at;
		u->chained.begin = adac_get_u32(buf, chain_at);
		u->chained.end = adac_get_u32(buf, chain_at + 4);
		u->chained.unwind_data = adac_get_u32(buf, chain_at + 8);
	}
	return validate_codes(u, err);
}

/* ---- register access -------------------------------------------------------------------------- */

static int need_reg(const struct adac_unwind_state *st, unsigned reg, const char *why, struct adac_error *err)
{
	if (st->known & (1u << reg))
		return 0;
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "%s needs %s, whose value in this frame is not known", why, reg_names[reg]);
}

static int read_stack(struct adac_target *t, uint64_t addr, uint64_t *v, const char *what, struct adac_error *err)
{
	if (adac_read_u64(t, addr, v, err)) {
		adac_error_wrap(err, "%s: ", what);
		return -1;
	}
	return 0;
}

static int restore_gpr(struct adac_target *t, struct adac_unwind_state *st, unsigned reg, uint64_t addr,
                       uint16_t *restored, struct adac_error *err)
{
	char what[64];
	snprintf(what, sizeof what, "the saved %s at 0x%llx", reg_names[reg], (unsigned long long)addr);
	uint64_t v;
	if (read_stack(t, addr, &v, what, err))
		return -1;
	st->gpr[reg] = v;
	st->known |= 1u << reg;
	*restored |= 1u << reg;
	return 0;
}

static int restore_xmm(struct adac_target *t, struct adac_unwind_state *st, unsigned reg, uint64_t addr,
                       uint16_t *restored, struct adac_error *err)
{
	if (adac_read(t, addr, st->xmm[reg], 16, err)) {
		adac_error_wrap(err, "the saved xmm%u at 0x%llx: ", reg, (unsigned long long)addr);
		return -1;
	}
	st->xmm_known |= 1u << reg;
	*restored |= 1u << reg;
	return 0;
}

/* ---- the unwind proper ------------------------------------------------------------------------ */

struct unwinder {
	struct adac_target *t;
	adac_unwind_lookup_fn lookup;
	void *lookup_ctx;
	uint64_t ip;               /* ControlPc */
	unsigned frame_reg;        /* the function's frame register (0: none) */
	struct adac_unwind_state st;
	uint16_t restored, xmm_restored;
};

/* The offset of ip from the start of fn, as a ULONG, like RtlVirtualUnwind (a chained entry's
 * code may lie before or after ip: the offset is then large and every code applies). */
static uint32_t prolog_offset(const struct unwinder *u, const struct adac_runtime_function *fn)
{
	return (uint32_t)(u->ip - (fn->image_base + fn->begin));
}

/* The frame offset in bytes: FrameOffset * 16, or UWOP_SET_FPREG_LARGE's when FrameOffset is 15
 * and such a code exists (*index: the setting code, or ui->count when there is none). */
static uint64_t frame_offset(const struct uinfo *ui, bool find_code, unsigned *index)
{
	uint64_t off = (uint64_t)ui->frame_off * 16;
	unsigned i = 0;
	for (; i < ui->count; i += op_slots(code_op(ui->code[i]), code_info(ui->code[i]))) {
		unsigned op = code_op(ui->code[i]);
		if (op == UWOP_SET_FPREG_LARGE) {
			off = (uint64_t)code_u32(ui, i + 1) * 16;
			break;
		}
		if (op == UWOP_SET_FPREG && find_code)
			break;
	}
	if (index)
		*index = i;
	return off;
}

/* The establisher frame (RtlVirtualUnwind's first step). *known = false when it depends on a
 * register whose value is unknown: the codes that use it then fail. */
static void establisher_frame(const struct unwinder *u, const struct adac_runtime_function *fn, const struct uinfo *ui,
                              uint64_t *frame, bool *known)
{
	const struct adac_unwind_state *st = &u->st;
	*known = true;
	*frame = st->gpr[ADAC_REG_RSP];
	if (ui->frame_reg == 0)
		return;
	uint32_t off_in_fn = prolog_offset(u, fn);
	unsigned index;
	uint64_t off = frame_offset(ui, true, &index);
	bool established;
	if (off_in_fn >= ui->prolog_size || (ui->flags & UNW_FLAG_CHAININFO))
		established = true;
	else /* in the prologue: is the frame register set yet? */
		established = index < ui->count && off_in_fn >= code_offset(ui->code[index]);
	if (!established)
		return;
	*known = (st->known >> ui->frame_reg) & 1;
	*frame = st->gpr[ui->frame_reg] - off;
}

/* RtlpUnwindPrologue: undoes the codes whose CodeOffset <= the offset in the function, then those
 * of the chained entries, then returns (or pops a machine frame). */
static int unwind_prologue(struct unwinder *u, const struct adac_runtime_function *fn, uint64_t establisher,
                           bool establisher_known, struct adac_error *err)
{
	struct adac_unwind_state *st = &u->st;
	struct adac_runtime_function cur = *fn;
	bool machine_frame = false;
	for (unsigned chain = 0;; chain++) {
		struct uinfo ui;
		if (read_uinfo(u->t, &cur, &ui, err))
			return -1;
		uint32_t off_in_fn = prolog_offset(u, &cur);
		for (unsigned i = 0; i < ui.count;) {
			uint16_t c = ui.code[i];
			unsigned op = code_op(c), info = code_info(c), slots = op_slots(op, info);
			if (off_in_fn < code_offset(c)) {
				i += slots; /* not executed yet */
				continue;
			}
			uint64_t *rsp = &st->gpr[ADAC_REG_RSP];
			char why[96];
			snprintf(why, sizeof why, "UNWIND_INFO at 0x%llx, code %u (%s)", (unsigned long long)ui.addr, i, op_names[op]);
			bool uses_frame = op == UWOP_SAVE_NONVOL || op == UWOP_SAVE_NONVOL_FAR || op == UWOP_SAVE_XMM128 ||
			                  op == UWOP_SAVE_XMM128_FAR;
			if (uses_frame && !establisher_known)
				return need_reg(st, u->frame_reg, why, err);
			switch (op) {
			case UWOP_PUSH_NONVOL:
				if (restore_gpr(u->t, st, info, *rsp, &u->restored, err))
					return -1;
				*rsp += 8;
				break;
			case UWOP_ALLOC_LARGE:
				*rsp += info ? code_u32(&ui, i + 1) : (uint64_t)ui.code[i + 1] * 8;
				break;
			case UWOP_ALLOC_SMALL:
				*rsp += (uint64_t)info * 8 + 8;
				break;
			case UWOP_SET_FPREG:
			case UWOP_SET_FPREG_LARGE:
				if (need_reg(st, ui.frame_reg, why, err))
					return -1;
				*rsp = st->gpr[ui.frame_reg] -
				       (op == UWOP_SET_FPREG ? (uint64_t)ui.frame_off * 16 : (uint64_t)code_u32(&ui, i + 1) * 16);
				break;
			case UWOP_SAVE_NONVOL:
				if (restore_gpr(u->t, st, info, establisher + (uint64_t)ui.code[i + 1] * 8, &u->restored, err))
					return -1;
				break;
			case UWOP_SAVE_NONVOL_FAR:
				if (restore_gpr(u->t, st, info, establisher + code_u32(&ui, i + 1), &u->restored, err))
					return -1;
				break;
			case UWOP_SAVE_XMM128:
				if (restore_xmm(u->t, st, info, establisher + (uint64_t)ui.code[i + 1] * 16, &u->xmm_restored, err))
					return -1;
				break;
			case UWOP_SAVE_XMM128_FAR:
				if (restore_xmm(u->t, st, info, establisher + code_u32(&ui, i + 1), &u->xmm_restored, err))
					return -1;
				break;
			case UWOP_EPILOG:
				break; /* describes epilogs, not the prologue */
			case UWOP_PUSH_MACHFRAME: {
				uint64_t at = *rsp + (info ? 8 : 0), ret, sp;
				if (read_stack(u->t, at, &ret, "the machine frame's return address", err) ||
				    read_stack(u->t, at + 24, &sp, "the machine frame's stack pointer", err))
					return -1;
				st->rip = ret;
				*rsp = sp;
				machine_frame = true;
				break;
			}
			}
			i += slots;
		}
		if (!(ui.flags & UNW_FLAG_CHAININFO))
			break;
		if (chain + 1 >= ADAC_MAX_UNWIND_CHAIN)
			return adac_fail(err, ADAC_E_LIMIT, ui.addr,
			                 "UNWIND_INFO at 0x%llx: more than ADAC_MAX_UNWIND_CHAIN (%u) chained entries",
			                 (unsigned long long)fn->image_base + fn->unwind_data, ADAC_MAX_UNWIND_CHAIN);
		cur = ui.chained;
	}
	if (!machine_frame) {
		uint64_t *rsp = &st->gpr[ADAC_REG_RSP];
		if (read_stack(u->t, *rsp, &st->rip, "the return address", err))
			return -1;
		*rsp += 8;
	}
	return 0;
}

/* The entry a chain of UNW_FLAG_CHAININFO entries ends at (RtlpLookupPrimaryFunctionEntry). */
static int primary_entry(struct adac_target *t, const struct adac_runtime_function *fn,
                         struct adac_runtime_function *primary, struct adac_error *err)
{
	*primary = *fn;
	for (unsigned chain = 0;; chain++) {
		struct uinfo ui;
		if (read_uinfo(t, primary, &ui, err))
			return -1;
		if (!(ui.flags & UNW_FLAG_CHAININFO))
			return 0;
		if (chain + 1 >= ADAC_MAX_UNWIND_CHAIN)
			return adac_fail(err, ADAC_E_LIMIT, ui.addr,
			                 "UNWIND_INFO at 0x%llx: more than ADAC_MAX_UNWIND_CHAIN (%u) chained entries",
			                 (unsigned long long)fn->image_base + fn->unwind_data, ADAC_MAX_UNWIND_CHAIN);
		*primary = ui.chained;
	}
}

/* ---- version 1: epilogs recognised by their code --------------------------------------------- */

struct code_window {
	uint64_t addr;
	uint8_t b[CODE_WINDOW];
	size_t n;          /* bytes readable from addr */
	bool past_end;     /* the decision needed a byte past n */
};

static uint8_t cw(struct code_window *w, size_t i)
{
	if (i >= w->n) {
		w->past_end = true;
		return 0;
	}
	return w->b[i];
}

static bool is_rex(uint8_t b) { return (b & 0xF0) == 0x40; }

static int32_t s32(struct code_window *w, size_t i)
{
	uint32_t v = (uint32_t)cw(w, i) | ((uint32_t)cw(w, i + 1) << 8) | ((uint32_t)cw(w, i + 2) << 16) |
	             ((uint32_t)cw(w, i + 3) << 24);
	return (int32_t)v;
}

static int short_code(const struct code_window *w, struct adac_error *err)
{
	return adac_fail(err, ADAC_E_READ, w->addr + w->n,
	                 "the code at 0x%llx is readable for %zu bytes only, too few to tell whether it is an epilog",
	                 (unsigned long long)w->addr, w->n);
}

/* What an epilog at the IP still has to do. */
struct epilog {
	enum { ADJ_NONE, ADJ_ADD, ADJ_LEA } adjust;
	int64_t disp;
	unsigned npops;
	uint8_t pops[ADAC_MAX_EPILOG_POPS];
};

/* RtlVirtualUnwind's instruction scan: `add rsp, imm` or `lea rsp, disp[frame register]`, pops,
 * then ret, a jump out of the function, or an indirect tail jump. *in = whether that is an epilog. */
static int scan_epilog(struct unwinder *u, const struct adac_runtime_function *fn, const struct uinfo *ui,
                       struct code_window *w, struct epilog *e, bool *in, struct adac_error *err)
{
	memset(e, 0, sizeof *e);
	*in = false;
	size_t i = 0;
	if (cw(w, 0) == 0x48 && cw(w, 1) == 0x83 && cw(w, 2) == 0xC4) { /* add rsp, imm8 */
		e->adjust = ADJ_ADD;
		e->disp = (int8_t)cw(w, 3);
		i = 4;
	} else if (cw(w, 0) == 0x48 && cw(w, 1) == 0x81 && cw(w, 2) == 0xC4) { /* add rsp, imm32 */
		e->adjust = ADJ_ADD;
		e->disp = s32(w, 3);
		i = 7;
	} else if ((cw(w, 0) & 0xFE) == 0x48 && cw(w, 1) == 0x8D) { /* lea rsp, disp[fp] */
		unsigned reg = ((cw(w, 0) & 1u) << 3) | (cw(w, 2) & 7u);
		if (reg != 0 && reg == ui->frame_reg) {
			if ((cw(w, 2) & 0xF8) == 0x60) {
				e->adjust = ADJ_LEA;
				e->disp = (int8_t)cw(w, 3);
				i = 4;
			} else if ((cw(w, 2) & 0xF8) == 0xA0) {
				e->adjust = ADJ_LEA;
				e->disp = s32(w, 3);
				i = 7;
			}
		}
	}
	for (;;) {
		unsigned reg;
		size_t len;
		if ((cw(w, i) & 0xF8) == 0x58) {
			reg = cw(w, i) & 7u;
			len = 1;
		} else if (is_rex(cw(w, i)) && (cw(w, i + 1) & 0xF8) == 0x58) {
			reg = ((cw(w, i) & 1u) << 3) | (cw(w, i + 1) & 7u);
			len = 2;
		} else {
			break;
		}
		if (e->npops == ADAC_MAX_EPILOG_POPS)
			return 0; /* more pops than registers: not an epilog */
		e->pops[e->npops++] = (uint8_t)reg;
		i += len;
	}
	if (cw(w, i) == 0xF2) /* REPNE before a control transfer */
		i++;
	uint8_t b = cw(w, i);
	if (b == 0xC3 || b == 0xC2 || (b == 0xF3 && cw(w, i + 1) == 0xC3)) {
		*in = true; /* ret */
	} else if (b == 0xEB || b == 0xE9) {
		/* A jump to the start of this function or out of it is a tail call. */
		int64_t rel = b == 0xEB ? 2 + (int8_t)cw(w, i + 1) : 5 + (int64_t)s32(w, i + 1);
		uint64_t target = w->addr + i + (uint64_t)rel;
		uint64_t begin = fn->image_base + fn->begin, end = fn->image_base + fn->end;
		if (w->past_end)
			return short_code(w, err);
		if (target < begin || target >= end) {
			/* Outside this entry: another part of the same function (hot/cold, chained) is not. */
			struct adac_runtime_function mine, other, other_primary;
			bool found = false;
			if (primary_entry(u->t, fn, &mine, err))
				return -1;
			if (u->lookup && u->lookup(u->lookup_ctx, target, &other, &found, err))
				return -1;
			bool same = false;
			if (found) {
				if (primary_entry(u->t, &other, &other_primary, err))
					return -1;
				same = other_primary.image_base == mine.image_base && other_primary.begin == mine.begin;
			}
			*in = !same || target == mine.image_base + mine.begin;
		} else if (target == begin && !(ui->flags & UNW_FLAG_CHAININFO)) {
			*in = true; /* a recursive tail call */
		}
	} else if (b == 0xFF && cw(w, i + 1) == 0x25) {
		*in = true; /* jmp [rip+disp32]: a tail call through an indirection cell */
	} else if ((b & 0xF8) == 0x48 && cw(w, i + 1) == 0xFF && (cw(w, i + 2) & 0x38) == 0x20) {
		*in = true; /* REX.W jmp r/m64: the JIT marks tail jumps with a redundant REX.W */
	}
	return w->past_end ? short_code(w, err) : 0;
}

static int emulate_epilog(struct unwinder *u, const struct uinfo *ui, const struct epilog *e, struct adac_error *err)
{
	struct adac_unwind_state *st = &u->st;
	uint64_t *rsp = &st->gpr[ADAC_REG_RSP];
	if (e->adjust == ADJ_ADD) {
		*rsp += (uint64_t)e->disp;
	} else if (e->adjust == ADJ_LEA) {
		if (need_reg(st, ui->frame_reg, "the epilog's lea rsp", err))
			return -1;
		*rsp = st->gpr[ui->frame_reg] + (uint64_t)e->disp;
	}
	for (unsigned i = 0; i < e->npops; i++) {
		if (restore_gpr(u->t, st, e->pops[i], *rsp, &u->restored, err))
			return -1;
		*rsp += 8;
	}
	if (read_stack(u->t, *rsp, &st->rip, "the return address", err))
		return -1;
	*rsp += 8;
	return 0;
}

/* ---- version 2: epilogs described by UWOP_EPILOG codes ---------------------------------------- */

/* *in and *epilog_rva (the epilog's start) from the UWOP_EPILOG records of the first codes. */
static void find_v2_epilog(const struct unwinder *u, const struct adac_runtime_function *fn, const struct uinfo *ui,
                           bool *in, uint32_t *epilog_rva)
{
	*in = false;
	if (ui->count == 0 || code_op(ui->code[0]) != UWOP_EPILOG)
		return;
	uint32_t size = code_offset(ui->code[0]);
	uint32_t rel = (uint32_t)(u->ip - fn->image_base);
	if (code_info(ui->code[0]) & 1) { /* one epilog, at the end */
		*epilog_rva = fn->end - size;
		if (rel - *epilog_rva < size) {
			*in = true;
			return;
		}
	}
	for (unsigned i = 1; i < ui->count; i++) {
		if (code_op(ui->code[i]) != UWOP_EPILOG)
			break;
		uint32_t from_end = code_offset(ui->code[i]) + code_info(ui->code[i]) * 256u;
		if (from_end == 0)
			break; /* padding */
		*epilog_rva = fn->end - from_end;
		if (rel - *epilog_rva < size) {
			*in = true;
			return;
		}
	}
}

/* RtlpUnwindEpilogue: pops the pushes the epilog has not undone yet, then returns. */
static int unwind_v2_epilog(struct unwinder *u, const struct adac_runtime_function *fn, uint32_t epilog_rva,
                            struct adac_error *err)
{
	struct adac_unwind_state *st = &u->st;
	uint64_t *rsp = &st->gpr[ADAC_REG_RSP];
	uint32_t into = (uint32_t)(u->ip - fn->image_base) - epilog_rva;
	struct adac_runtime_function cur = *fn;
	struct uinfo ui;
	unsigned first = 0;
	for (unsigned chain = 0;; chain++) {
		if (read_uinfo(u->t, &cur, &ui, err))
			return -1;
		for (first = 0; first < ui.count; first += op_slots(code_op(ui.code[first]), code_info(ui.code[first]))) {
			unsigned op = code_op(ui.code[first]);
			if (op == UWOP_PUSH_NONVOL || op == UWOP_PUSH_MACHFRAME)
				break;
		}
		if (first < ui.count || !(ui.flags & UNW_FLAG_CHAININFO))
			break;
		if (chain + 1 >= ADAC_MAX_UNWIND_CHAIN)
			return adac_fail(err, ADAC_E_LIMIT, ui.addr,
			                 "UNWIND_INFO at 0x%llx: more than ADAC_MAX_UNWIND_CHAIN (%u) chained entries",
			                 (unsigned long long)fn->image_base + fn->unwind_data, ADAC_MAX_UNWIND_CHAIN);
		cur = ui.chained;
	}
	uint32_t at = 0; /* bytes of pops before this one */
	unsigned i = first;
	for (; i < ui.count && code_op(ui.code[i]) == UWOP_PUSH_NONVOL; i++) {
		unsigned reg = code_info(ui.code[i]);
		if (at >= into) {
			if (restore_gpr(u->t, st, reg, *rsp, &u->restored, err))
				return -1;
			*rsp += 8;
		}
		at += reg >= 8 ? 2 : 1; /* pop r64, or REX pop r8..r15 */
	}
	if (i < ui.count && code_op(ui.code[i]) == UWOP_ALLOC_SMALL && code_info(ui.code[i]) == 0) {
		if (at >= into)
			*rsp += 8; /* the pop of a pushfq */
		i++;
	}
	if (i < ui.count && code_op(ui.code[i]) == UWOP_PUSH_MACHFRAME) {
		uint64_t ret, sp;
		if (read_stack(u->t, *rsp, &ret, "the machine frame's return address", err) ||
		    read_stack(u->t, *rsp + 24, &sp, "the machine frame's stack pointer", err))
			return -1;
		st->rip = ret;
		*rsp = sp;
		return 0;
	}
	if (i < ui.count)
		return adac_fail(err, ADAC_E_CORRUPT, ui.addr,
		                 "UNWIND_INFO at 0x%llx: code %u (%s) follows the pushes, where an epilog allows only a machine frame",
		                 (unsigned long long)ui.addr, i, op_names[code_op(ui.code[i])]);
	if (read_stack(u->t, *rsp, &st->rip, "the return address", err))
		return -1;
	*rsp += 8;
	return 0;
}

int adac_unwind_amd64(struct adac_target *t, const struct adac_runtime_function *fn, adac_unwind_lookup_fn lookup,
                      void *lookup_ctx, struct adac_unwind_state *st, struct adac_error *err)
{
	struct unwinder u = {t, lookup, lookup_ctx, st->rip, 0, *st, 0, 0};
	uint64_t begin = fn->image_base + fn->begin, end = fn->image_base + fn->end;
	if (!(st->known & (1u << ADAC_REG_RSP)))
		return need_reg(st, ADAC_REG_RSP, "unwinding", err);
	if (fn->begin >= fn->end || st->rip < begin || st->rip >= end)
		return adac_fail(err, ADAC_E_CORRUPT, fn->addr, "RUNTIME_FUNCTION%s [0x%llx, 0x%llx) does not contain 0x%llx",
		                 fn->addr ? " (at the address in this error)" : "", (unsigned long long)begin,
		                 (unsigned long long)end, (unsigned long long)st->rip);
	struct uinfo ui;
	if (read_uinfo(t, fn, &ui, err))
		return -1;
	uint64_t establisher;
	bool establisher_known;
	u.frame_reg = ui.frame_reg;
	establisher_frame(&u, fn, &ui, &establisher, &establisher_known);

	bool in_epilog = false;
	int rc;
	if (ui.version < 2) {
		struct code_window w = {.addr = st->rip};
		w.n = adac_read_upto(t, st->rip, w.b, sizeof w.b);
		if (w.n == 0)
			return adac_fail(err, ADAC_E_READ, st->rip, "the code at 0x%llx is not readable (to look for an epilog)",
			                 (unsigned long long)st->rip);
		struct epilog e;
		if (scan_epilog(&u, fn, &ui, &w, &e, &in_epilog, err))
			return -1;
		rc = in_epilog ? emulate_epilog(&u, &ui, &e, err) : 0;
	} else {
		uint32_t epilog_rva = 0;
		find_v2_epilog(&u, fn, &ui, &in_epilog, &epilog_rva);
		rc = in_epilog ? unwind_v2_epilog(&u, fn, epilog_rva, err) : 0;
	}
	if (rc == 0 && !in_epilog)
		rc = unwind_prologue(&u, fn, establisher, establisher_known, err);
	if (rc)
		return -1;
	uint64_t old_sp = st->gpr[ADAC_REG_RSP], new_sp = u.st.gpr[ADAC_REG_RSP];
	if (new_sp <= old_sp || (new_sp & 7))
		return adac_fail(err, ADAC_E_CORRUPT, new_sp,
		                 "the caller's rsp would be 0x%llx, %s the frame's 0x%llx (the unwind info does not match the stack)",
		                 (unsigned long long)new_sp, new_sp <= old_sp ? "not above" : "misaligned, from",
		                 (unsigned long long)old_sp);
	u.st.known &= (uint16_t)(~VOLATILE_GPRS | u.restored);
	u.st.xmm_known &= u.xmm_restored;
	*st = u.st;
	return 0;
}

/* ---- the runtime: which RUNTIME_FUNCTION ------------------------------------------------------ */

#define W_PTR 0xFF

/* id, type, field, width, required */
#define MU_FIELDS(X)                                                  \
	X(RCH_NUM, "RealCodeHeader", "NumUnwindInfos", 4, 1)              \
	X(RCH_INFOS, "RealCodeHeader", "UnwindInfos", 0, 1)               \
	X(RF_SIZE, "RuntimeFunction", NULL, 0, 1)                         \
	X(RF_BEGIN, "RuntimeFunction", "BeginAddress", 4, 1)              \
	X(RF_END, "RuntimeFunction", "EndAddress", 4, 1)                  \
	X(RF_UNWIND, "RuntimeFunction", "UnwindData", 4, 1)               \
	X(RS_BEGIN, "RangeSection", "RangeBegin", W_PTR, 1)               \
	X(RS_END, "RangeSection", "RangeEndOpen", W_PTR, 1)               \
	X(MODULE_R2R, "Module", "ReadyToRunInfo", W_PTR, 0)               \
	X(INFO_NRF, "ReadyToRunInfo", "NumRuntimeFunctions", 4, 0)        \
	X(INFO_RF, "ReadyToRunInfo", "RuntimeFunctions", W_PTR, 0)

#define X_ENUM(id, type, field, width, req) F_##id,
enum { MU_FIELDS(X_ENUM) MU_F_COUNT };
#define X_SPEC(id, type, field, width, req) {type, field, width, req},
static const struct adac_field_spec mu_specs[] = {MU_FIELDS(X_SPEC)};
_Static_assert(sizeof mu_specs / sizeof mu_specs[0] == MU_F_COUNT, "managed unwind field table");

struct mu_layout {
	uint32_t off[MU_F_COUNT];
	uint8_t has[MU_F_COUNT];
};

static int resolve_layout(struct adac_runtime *rt, struct mu_layout *l, struct adac_error *err)
{
	const char *arch = adac_desc_global_string(rt->desc, "Architecture");
	if ((arch && strcmp(arch, "x64") != 0) || adac_target_ptr_size(rt->t) != 8)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "unwinding managed frames is implemented for x64 only (the runtime is %s)",
		                 arch ? arch : "not 64-bit");
	struct adac_field_spec specs[MU_F_COUNT];
	memcpy(specs, mu_specs, sizeof specs);
	for (size_t i = 0; i < MU_F_COUNT; i++)
		if (specs[i].width == W_PTR)
			specs[i].width = 8;
	if (adac_desc_resolve(rt->desc, specs, MU_F_COUNT, l->off, l->has, err))
		return -1;
	if (l->off[F_RF_SIZE] < RF_BYTES)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's RuntimeFunction is %u bytes (at least %u expected)",
		                 l->off[F_RF_SIZE], RF_BYTES);
	return 0;
}

static int read_rf(struct adac_target *t, const struct mu_layout *l, uint64_t addr, struct adac_runtime_function *fn,
                   struct adac_error *err)
{
	uint8_t b[ADAC_MAX_TYPE_SIZE];
	uint32_t size = l->off[F_RF_SIZE];
	if (adac_read(t, addr, b, size, err)) {
		adac_error_wrap(err, "RuntimeFunction at 0x%llx: ", (unsigned long long)addr);
		return -1;
	}
	fn->addr = addr;
	fn->begin = adac_get_u32(b, l->off[F_RF_BEGIN]);
	fn->end = adac_get_u32(b, l->off[F_RF_END]);
	fn->unwind_data = adac_get_u32(b, l->off[F_RF_UNWIND]);
	return 0;
}

/* JIT code: the RUNTIME_FUNCTIONs inline in the RealCodeHeader, one per funclet and the body. */
static int jit_function(struct adac_runtime *rt, const struct mu_layout *l, const struct adac_code_info *code,
                        uint64_t ip, struct adac_runtime_function *fn, struct adac_error *err)
{
	uint32_t n;
	if (adac_read_u32(rt->t, code->code_header + l->off[F_RCH_NUM], &n, err)) {
		adac_error_wrap(err, "RealCodeHeader at 0x%llx: ", (unsigned long long)code->code_header);
		return -1;
	}
	if (n == 0 || n > ADAC_MAX_METHOD_UNWIND_INFOS)
		return adac_fail(err, n ? ADAC_E_LIMIT : ADAC_E_CORRUPT, code->code_header,
		                 "RealCodeHeader at 0x%llx has %u unwind infos (1 to ADAC_MAX_METHOD_UNWIND_INFOS %u expected)",
		                 (unsigned long long)code->code_header, n, ADAC_MAX_METHOD_UNWIND_INFOS);
	uint64_t rva = ip - fn->image_base;
	uint64_t array = code->code_header + l->off[F_RCH_INFOS];
	for (uint32_t i = 0; i < n; i++) {
		struct adac_runtime_function rf = *fn;
		if (read_rf(rt->t, l, array + (uint64_t)i * l->off[F_RF_SIZE], &rf, err))
			return -1;
		if (rf.begin <= rva && rva < rf.end) {
			*fn = rf;
			return 0;
		}
	}
	return adac_fail(err, ADAC_E_CORRUPT, code->code_header,
	                 "none of the %u RUNTIME_FUNCTIONs of RealCodeHeader 0x%llx contains 0x%llx (RVA 0x%llx from 0x%llx)", n,
	                 (unsigned long long)code->code_header, (unsigned long long)ip, (unsigned long long)rva,
	                 (unsigned long long)fn->image_base);
}

/* The RuntimeFunctions table of a ReadyToRun image: its address and entry count. */
static int r2r_table(struct adac_runtime *rt, const struct mu_layout *l, const struct adac_code_info *code, uint64_t ip,
                     uint64_t *table, uint32_t *n, struct adac_error *err)
{
	if (!l->has[F_MODULE_R2R] || !l->has[F_INFO_NRF] || !l->has[F_INFO_RF])
		return adac_fail(err, ADAC_E_LAYOUT, ip, "the runtime does not describe ReadyToRunInfo.RuntimeFunctions");
	uint64_t info;
	if (adac_read_ptr(rt->t, code->r2r_module + l->off[F_MODULE_R2R], &info, err)) {
		adac_error_wrap(err, "Module at 0x%llx: ", (unsigned long long)code->r2r_module);
		return -1;
	}
	if (info == 0)
		return adac_fail(err, ADAC_E_CORRUPT, code->r2r_module, "Module 0x%llx has no ReadyToRunInfo",
		                 (unsigned long long)code->r2r_module);
	if (adac_read_ptr(rt->t, info + l->off[F_INFO_RF], table, err) ||
	    adac_read_u32(rt->t, info + l->off[F_INFO_NRF], n, err)) {
		adac_error_wrap(err, "ReadyToRunInfo at 0x%llx: ", (unsigned long long)info);
		return -1;
	}
	if (*n == 0 || *table == 0 || *n > ADAC_MAX_RUNTIME_FUNCTIONS)
		return adac_fail(err, *n > ADAC_MAX_RUNTIME_FUNCTIONS ? ADAC_E_LIMIT : ADAC_E_CORRUPT, info,
		                 "ReadyToRunInfo at 0x%llx has %u RuntimeFunctions at 0x%llx (ADAC_MAX_RUNTIME_FUNCTIONS %u)",
		                 (unsigned long long)info, *n, (unsigned long long)*table, ADAC_MAX_RUNTIME_FUNCTIONS);
	return 0;
}

/* ReadyToRun code: binary search of the image's sorted RuntimeFunctions (the cold part of a split
 * method has its own entry, chained to the hot one). *index (may be NULL) receives its position. */
static int r2r_function(struct adac_runtime *rt, const struct mu_layout *l, const struct adac_code_info *code,
                        uint64_t ip, struct adac_runtime_function *fn, uint32_t *index, struct adac_error *err)
{
	uint64_t table;
	uint32_t n;
	if (r2r_table(rt, l, code, ip, &table, &n, err))
		return -1;
	uint64_t rva = ip - fn->image_base;
	uint32_t size = l->off[F_RF_SIZE];
	/* The last entry whose BeginAddress <= rva. */
	uint32_t lo = 0, hi = n; /* answer in [lo, hi) */
	struct adac_runtime_function rf = *fn;
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (read_rf(rt->t, l, table + (uint64_t)mid * size, &rf, err))
			return -1;
		if (rf.begin <= rva)
			lo = mid;
		else
			hi = mid;
	}
	if (read_rf(rt->t, l, table + (uint64_t)lo * size, &rf, err))
		return -1;
	if (rf.begin <= rva && rva < rf.end) {
		*fn = rf;
		if (index)
			*index = lo;
		return 0;
	}
	return adac_fail(err, ADAC_E_CORRUPT, table,
	                 "no RuntimeFunction of the table at 0x%llx contains 0x%llx (RVA 0x%llx; nearest [0x%x, 0x%x))",
	                 (unsigned long long)table, (unsigned long long)ip, (unsigned long long)rva, rf.begin, rf.end);
}

/* The code and RangeSection bounds of ip (JIT or ReadyToRun code only). */
static int managed_code(struct adac_runtime *rt, uint64_t ip, struct mu_layout *l, struct adac_code_info *code,
                        struct adac_runtime_function *fn, struct adac_error *err)
{
	memset(fn, 0, sizeof *fn);
	if (resolve_layout(rt, l, err) || adac_em_find_code(rt, ip, code, err))
		return -1;
	if (code->kind != ADAC_CODE_JIT && code->kind != ADAC_CODE_R2R)
		return adac_fail(err, ADAC_E_UNSUPPORTED, ip, "0x%llx is in %s, which has no unwind info here",
		                 (unsigned long long)ip, code->kind == ADAC_CODE_STUB ? "a stub" : "interpreted code");
	if (adac_read_u64(rt->t, code->range_section + l->off[F_RS_BEGIN], &fn->image_base, err) ||
	    adac_read_u64(rt->t, code->range_section + l->off[F_RS_END], &fn->image_end, err)) {
		adac_error_wrap(err, "RangeSection at 0x%llx: ", (unsigned long long)code->range_section);
		return -1;
	}
	if (ip < fn->image_base || ip >= fn->image_end)
		return adac_fail(err, ADAC_E_CORRUPT, code->range_section, "RangeSection 0x%llx [0x%llx, 0x%llx) does not contain 0x%llx",
		                 (unsigned long long)code->range_section, (unsigned long long)fn->image_base,
		                 (unsigned long long)fn->image_end, (unsigned long long)ip);
	return 0;
}

int adac_managed_function(struct adac_runtime *rt, uint64_t ip, struct adac_runtime_function *fn, uint64_t *md,
                          struct adac_error *err)
{
	struct mu_layout l;
	struct adac_code_info code;
	if (md)
		*md = 0;
	if (managed_code(rt, ip, &l, &code, fn, err))
		return -1;
	if (md)
		*md = code.method_desc;
	if (code.kind == ADAC_CODE_JIT)
		return jit_function(rt, &l, &code, ip, fn, err);
	return r2r_function(rt, &l, &code, ip, fn, NULL, err);
}

/* Adds fn to the list (fns[*n], at most max). */
static int add_function(const struct adac_runtime_function *fn, struct adac_runtime_function *fns, size_t max,
                        size_t *n, struct adac_error *err)
{
	if (*n >= max)
		return adac_fail(err, ADAC_E_LIMIT, fn->image_base + fn->begin,
		                 "the code at 0x%llx has more than %zu RUNTIME_FUNCTIONs (ADAC_MAX_METHOD_UNWIND_INFOS)",
		                 (unsigned long long)(fn->image_base + fn->begin), max);
	fns[(*n)++] = *fn;
	return 0;
}

int adac_managed_code_functions(struct adac_runtime *rt, uint64_t ip, uint32_t funclets_below,
                                struct adac_runtime_function *fns, size_t max, size_t *n, struct adac_error *err)
{
	struct mu_layout l;
	struct adac_code_info code;
	struct adac_runtime_function fn;
	*n = 0;
	if (managed_code(rt, ip, &l, &code, &fn, err))
		return -1;
	uint32_t size = l.off[F_RF_SIZE];
	if (code.kind == ADAC_CODE_JIT) {
		/* Every RUNTIME_FUNCTION of the code header: the body, then its funclets. */
		uint32_t count;
		uint64_t array = code.code_header + l.off[F_RCH_INFOS];
		if (adac_read_u32(rt->t, code.code_header + l.off[F_RCH_NUM], &count, err))
			return -1;
		if (count == 0 || count > ADAC_MAX_METHOD_UNWIND_INFOS)
			return adac_fail(err, count ? ADAC_E_LIMIT : ADAC_E_CORRUPT, code.code_header,
			                 "RealCodeHeader at 0x%llx has %u unwind infos (1 to ADAC_MAX_METHOD_UNWIND_INFOS %u expected)",
			                 (unsigned long long)code.code_header, count, ADAC_MAX_METHOD_UNWIND_INFOS);
		for (uint32_t i = 0; i < count; i++) {
			struct adac_runtime_function rf = fn;
			if (read_rf(rt->t, &l, array + (uint64_t)i * size, &rf, err))
				return -1;
			if (rf.begin < rf.end && add_function(&rf, fns, max, n, err))
				return -1;
		}
		return 0;
	}
	/* ReadyToRun: the method's RUNTIME_FUNCTION, then the funclets that follow it: entries the code
	 * map gives the same method and start (as it does for a neighbour whose entry point the runtime
	 * has not recorded), starting below funclets_below. A cold part of a split method is not
	 * included. */
	uint32_t index, count;
	uint64_t table;
	if (r2r_function(rt, &l, &code, code.code_start, &fn, &index, err) || r2r_table(rt, &l, &code, ip, &table, &count, err) ||
	    add_function(&fn, fns, max, n, err))
		return -1;
	uint64_t start = fn.image_base + fn.begin;
	for (uint32_t i = index + 1, steps = 0; i < count && steps < ADAC_MAX_R2R_FUNCLETS; i++, steps++) {
		struct adac_runtime_function rf = fn;
		struct adac_code_info next;
		if (read_rf(rt->t, &l, table + (uint64_t)i * size, &rf, err))
			return -1;
		if (rf.begin >= rf.end || fn.image_base + rf.begin >= start + funclets_below ||
		    adac_em_find_code(rt, fn.image_base + rf.begin, &next, NULL) || next.method_desc != code.method_desc ||
		    next.code_start != code.code_start)
			break;
		if (add_function(&rf, fns, max, n, err))
			return -1;
	}
	return 0;
}

/* ---- the prologue as call-frame rows ------------------------------------------------------------ */

/* The codes of one UNWIND_INFO in the order their instructions run (the array lists them last
 * first). */
static unsigned codes_in_order(const struct uinfo *ui, unsigned *order)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ui->count; i += op_slots(code_op(ui->code[i]), code_info(ui->code[i])))
		order[n++] = i;
	for (unsigned a = 0, b = n ? n - 1 : 0; a < b; a++, b--) {
		unsigned t = order[a];
		order[a] = order[b];
		order[b] = t;
	}
	return n;
}

/* Applies one unwind code to the state (CFA = cfa_reg + cfa_offset; saves relative to the CFA).
 * establisher: CFA minus the establisher frame (what UWOP_SAVE_* offsets count from). */
static void apply_code(const struct uinfo *ui, unsigned i, int64_t establisher, struct adac_cfi_row *r)
{
	uint16_t c = ui->code[i];
	unsigned op = code_op(c), info = code_info(c);
	bool on_rsp = r->cfa_reg == ADAC_REG_RSP;
	switch (op) {
	case UWOP_PUSH_NONVOL:
		if (on_rsp) { /* pushes come before the frame register is set */
			r->cfa_offset += 8;
			r->gpr_saved |= (uint16_t)(1u << info);
			r->gpr_at[info] = -r->cfa_offset; /* at the new rsp */
		}
		break;
	case UWOP_ALLOC_LARGE:
		if (on_rsp)
			r->cfa_offset += (int32_t)(info ? code_u32(ui, i + 1) : (uint32_t)ui->code[i + 1] * 8);
		break;
	case UWOP_ALLOC_SMALL:
		if (on_rsp)
			r->cfa_offset += (int32_t)(info * 8 + 8);
		break;
	case UWOP_SET_FPREG:
	case UWOP_SET_FPREG_LARGE: {
		int64_t off = op == UWOP_SET_FPREG ? (int64_t)ui->frame_off * 16 : (int64_t)code_u32(ui, i + 1) * 16;
		r->cfa_reg = ui->frame_reg;
		r->cfa_offset = (int32_t)(r->cfa_offset - off); /* frame register = rsp + off */
		break;
	}
	case UWOP_SAVE_NONVOL:
	case UWOP_SAVE_NONVOL_FAR:
		r->gpr_saved |= (uint16_t)(1u << info);
		r->gpr_at[info] = (int32_t)(-establisher + (op == UWOP_SAVE_NONVOL ? (int64_t)ui->code[i + 1] * 8
		                                                                      : (int64_t)code_u32(ui, i + 1)));
		break;
	case UWOP_SAVE_XMM128:
	case UWOP_SAVE_XMM128_FAR:
		r->xmm_saved |= (uint16_t)(1u << info);
		r->xmm_at[info] = (int32_t)(-establisher + (op == UWOP_SAVE_XMM128 ? (int64_t)ui->code[i + 1] * 16
		                                                                    : (int64_t)code_u32(ui, i + 1)));
		break;
	default:
		break; /* epilog descriptions, machine frames: not in a method's prologue */
	}
}

/* CFA minus the establisher frame of ui's function, once its prologue has run from `start`
 * (cfa_offset so far on rsp): the stack pointer when the frame register is set, else at the end. */
static int64_t establisher_of(const struct uinfo *ui, const unsigned *order, unsigned n, int32_t start)
{
	struct adac_cfi_row r = {.cfa_reg = ADAC_REG_RSP, .cfa_offset = start};
	for (unsigned k = 0; k < n; k++) {
		unsigned op = code_op(ui->code[order[k]]);
		if (op == UWOP_SET_FPREG || op == UWOP_SET_FPREG_LARGE)
			return r.cfa_offset;
		apply_code(ui, order[k], 0, &r);
	}
	return r.cfa_offset;
}

int adac_unwind_cfi(struct adac_target *t, const struct adac_runtime_function *fn, struct adac_cfi_row *rows,
                    size_t max, size_t *n, struct adac_error *err)
{
	*n = 0;
	/* The chain from fn to its primary entry: a chained entry starts where its primary's whole
	 * prologue has run. */
	struct uinfo chain[ADAC_MAX_UNWIND_CHAIN];
	unsigned depth = 0;
	struct adac_runtime_function cur = *fn;
	for (;;) {
		if (depth >= ADAC_MAX_UNWIND_CHAIN)
			return adac_fail(err, ADAC_E_LIMIT, fn->image_base + fn->unwind_data,
			                 "UNWIND_INFO at 0x%llx: more than ADAC_MAX_UNWIND_CHAIN (%u) chained entries",
			                 (unsigned long long)(fn->image_base + fn->unwind_data), ADAC_MAX_UNWIND_CHAIN);
		if (read_uinfo(t, &cur, &chain[depth], err))
			return -1;
		if (!(chain[depth].flags & UNW_FLAG_CHAININFO))
			break;
		cur = chain[depth++].chained;
	}
	struct adac_cfi_row r = {.cfa_reg = ADAC_REG_RSP, .cfa_offset = 8}; /* at a call: the return address */
	unsigned order[256];
	for (unsigned d = depth; d > 0; d--) {
		const struct uinfo *ui = &chain[d];
		unsigned nc = codes_in_order(ui, order);
		int64_t est = establisher_of(ui, order, nc, r.cfa_offset);
		for (unsigned k = 0; k < nc; k++)
			apply_code(ui, order[k], est, &r);
	}
	const struct uinfo *ui = &chain[0];
	unsigned nc = codes_in_order(ui, order);
	int64_t est = establisher_of(ui, order, nc, r.cfa_offset);
	if (max < 1)
		return adac_fail(err, ADAC_E_LIMIT, ui->addr, "no room for call-frame rows");
	rows[(*n)++] = r;
	for (unsigned k = 0; k < nc; k++) {
		apply_code(ui, order[k], est, &r);
		r.offset = code_offset(ui->code[order[k]]);
		if (*n && rows[*n - 1].offset == r.offset) {
			rows[*n - 1] = r; /* one instruction, several codes (a large allocation) */
			continue;
		}
		if (*n >= max)
			return adac_fail(err, ADAC_E_LIMIT, ui->addr, "UNWIND_INFO at 0x%llx: more than %zu call-frame rows",
			                 (unsigned long long)ui->addr, max);
		rows[(*n)++] = r;
	}
	return 0;
}

static int lookup_managed(void *ctx, uint64_t addr, struct adac_runtime_function *fn, bool *found, struct adac_error *err)
{
	struct adac_error e = {0};
	*found = false;
	if (adac_managed_function(ctx, addr, fn, NULL, &e) == 0) {
		*found = true;
		return 0;
	}
	if (e.code == ADAC_E_NOT_FOUND || e.code == ADAC_E_UNSUPPORTED)
		return 0; /* not managed code: a jump there leaves the function */
	adac_error_copy(err, &e);
	return -1;
}

int adac_managed_unwind(struct adac_runtime *rt, struct adac_unwind_state *st, struct adac_error *err)
{
	uint64_t ip = st->rip, md = 0;
	struct adac_runtime_function fn;
	if (adac_managed_function(rt, ip, &fn, &md, err) == 0 && adac_unwind_amd64(rt->t, &fn, lookup_managed, rt, st, err) == 0)
		return 0;
	const char *name = md ? adac_method_name(rt, md, ADAC_NAME_PARAMS, NULL) : NULL;
	adac_error_wrap(err, "unwinding %s at 0x%llx: ", name ? name : "managed code", (unsigned long long)ip);
	return -1;
}
