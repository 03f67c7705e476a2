/* managed_unwind.h - unwinding managed frames on x64 from the runtime's own unwind info.
 *
 * The runtime records Windows-x64 unwind info (RUNTIME_FUNCTION -> UNWIND_INFO with unwind codes)
 * for every method it runs, on Linux too: the JIT's RUNTIME_FUNCTIONs are inline in the code
 * header (RealCodeHeader.UnwindInfos, one per funclet, RVAs relative to the code heap's
 * RangeSection.RangeBegin), ReadyToRun images have a sorted RuntimeFunctions table (RVAs relative
 * to the image). There is no DWARF CFI for that code, so a native unwinder falls back to frame
 * pointers there and skips frames; this file does what RtlVirtualUnwind does instead.
 *
 * Three layers:
 *   adac_unwind_amd64      interprets one function's unwind info (all unwind codes, chained info,
 *                          epilogs, prologue offsets), given where it is: no runtime needed
 *   adac_managed_function  the RUNTIME_FUNCTION of managed code at an address (ExecutionManager)
 *   adac_managed_unwind    both: the caller of a managed frame, errors naming the method and IP */
#ifndef ADAC_MANAGED_UNWIND_H
#define ADAC_MANAGED_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"
#include "target/target.h"

struct adac_runtime;

/* Register state of one frame. gpr[] is indexed by the AMD64 register number that unwind codes
 * use, which is also enum adac_reg for 0..15 (RAX RCX RDX RBX RSP RBP RSI RDI R8..R15). */
struct adac_unwind_state {
	uint64_t rip;
	uint64_t gpr[16];
	uint16_t known;        /* bit n: gpr[n] is the register's value in this frame (RSP must be) */
	uint16_t xmm_known;    /* bit n: xmm[n] was restored by UWOP_SAVE_XMM128(_FAR) */
	uint8_t xmm[16][16];
};

/* One RUNTIME_FUNCTION and where its RVAs point. */
struct adac_runtime_function {
	uint64_t image_base;   /* the RVAs are relative to it */
	uint64_t image_end;    /* end (exclusive) of the range unwind info must lie in; 0: unchecked */
	uint64_t addr;         /* where the RUNTIME_FUNCTION is (for messages); 0 if not in the target */
	uint32_t begin;        /* BeginAddress */
	uint32_t end;          /* EndAddress (exclusive) */
	uint32_t unwind_data;  /* UnwindData: RVA of the UNWIND_INFO */
};

/* How the interpreter finds the RUNTIME_FUNCTION containing another address (the target of a jmp
 * that may end an epilog: a jump out of the function is a tail call, one into another part of the
 * same function is not). Returns 0 with *found set (false: no function contains addr), or -1. */
typedef int (*adac_unwind_lookup_fn)(void *ctx, uint64_t addr, struct adac_runtime_function *fn, bool *found,
                                     struct adac_error *err);

/* Fills st from a thread's registers (everything known) or from a backend's frame (pc; sp and fp
 * unless they are 0, which backends give for "not known"). */
void adac_unwind_state_from_regs(struct adac_unwind_state *st, const struct adac_regs *regs);
void adac_unwind_state_from_frame(struct adac_unwind_state *st, uint64_t pc, uint64_t sp, uint64_t fp);

/* Unwinds the frame at st->rip, which fn must contain, to its caller's state, as RtlVirtualUnwind
 * does (with CoreCLR's Unix UWOP_SET_FPREG_LARGE): in an epilog (version 1: the code bytes at rip
 * are `add rsp`/`lea rsp`, pops, then ret or a jump out; version 2: UWOP_EPILOG records) the rest
 * of the epilog is emulated; otherwise the unwind codes whose CodeOffset <= the prologue offset
 * are undone, then those of the chained entries. Volatile registers the unwind does not restore
 * become unknown. lookup may be NULL (then every jmp out of [begin, end) ends an epilog).
 * Fails with ADAC_E_CORRUPT for malformed unwind info (naming the UNWIND_INFO and the code),
 * ADAC_E_LIMIT past ADAC_MAX_UNWIND_CHAIN, ADAC_E_READ for unreadable stack, code or unwind info,
 * ADAC_E_NOT_FOUND when a register the unwind needs (rsp always) is unknown; st is unchanged then. */
int adac_unwind_amd64(struct adac_target *t, const struct adac_runtime_function *fn, adac_unwind_lookup_fn lookup,
                      void *lookup_ctx, struct adac_unwind_state *st, struct adac_error *err);

/* The RUNTIME_FUNCTION of the JIT-compiled or ReadyToRun code containing ip, and its MethodDesc
 * (md may be NULL). ADAC_E_NOT_FOUND when ip is not in managed code, ADAC_E_UNSUPPORTED for code
 * without unwind info here (stubs, interpreter), ADAC_E_CORRUPT when no RUNTIME_FUNCTION of the
 * method contains ip. */
int adac_managed_function(struct adac_runtime *rt, uint64_t ip, struct adac_runtime_function *fn, uint64_t *md,
                          struct adac_error *err);

/* The RUNTIME_FUNCTIONs of the code version (JIT-compiled or ReadyToRun) containing ip: the body
 * first, then its funclets (of a ReadyToRun method split into hot and cold parts, the hot part).
 * A ReadyToRun image does not mark funclets, and the runtime's code map gives a funclet and a
 * neighbouring method it has not prepared alike: funclets are taken only when they start below
 * code start + funclets_below (the debug info's last native offset + 1 covers them; 0: the body
 * only). At most max (ADAC_MAX_METHOD_UNWIND_INFOS); errors as adac_managed_function's. */
int adac_managed_code_functions(struct adac_runtime *rt, uint64_t ip, uint32_t funclets_below,
                                struct adac_runtime_function *fns, size_t max, size_t *n, struct adac_error *err);

/* The prologue of one function as the rows of a call-frame table (DWARF CFI's model, for debuggers
 * that unwind with it): after the instruction ending at `offset` (from the function's start), the
 * caller's stack pointer (the CFA) is cfa_reg + cfa_offset, and the saved registers are at CFA +
 * gpr_at[n] / xmm_at[n]. Row 0 is the state at the start (a chained entry's: its primary's
 * prologue done), then a row per instruction of the prologue. Epilogs are not described: past the
 * prologue, the last row holds. Registers are the AMD64 numbers (enum adac_reg). */
struct adac_cfi_row {
	uint32_t offset;
	uint8_t cfa_reg;
	int32_t cfa_offset;
	uint16_t gpr_saved;       /* bit n: gpr n is saved */
	int32_t gpr_at[16];
	uint16_t xmm_saved;
	int32_t xmm_at[16];
};
int adac_unwind_cfi(struct adac_target *t, const struct adac_runtime_function *fn, struct adac_cfi_row *rows,
                    size_t max, size_t *n, struct adac_error *err);

/* Replaces st (a frame in JIT-compiled or ReadyToRun code) with its caller's. Errors are prefixed
 * with the method's name and the IP. */
int adac_managed_unwind(struct adac_runtime *rt, struct adac_unwind_state *st, struct adac_error *err);

#endif
