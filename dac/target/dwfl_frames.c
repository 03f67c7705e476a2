/* dwfl_frames.c - one libdwfl frame -> struct adac_frame. */
#include "target/dwfl_frames.h"

#include <string.h>

#include "base/limits.h"

#define DWARF_REG_RSP 7  /* x86-64 DWARF register numbers */
#define DWARF_REG_RBP 6

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int adac_dwfl_walk_frame(Dwfl_Frame *state, void *arg)
{
	struct adac_dwfl_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (w->count >= ADAC_MAX_UNWIND_FRAMES) {
		w->limit_hit = true;
		return DWARF_CB_ABORT;
	}
	/* A return address points after the call; look up the call itself. */
	Dwarf_Addr lookup = activation || pc == 0 ? pc : pc - 1;
	struct adac_frame f = {.pc = pc};
	Dwarf_Word v;
	if (dwfl_frame_reg(state, DWARF_REG_RSP, &v) == 0)
		f.sp = v;
	if (dwfl_frame_reg(state, DWARF_REG_RBP, &v) == 0)
		f.fp = v;
	Dwfl_Module *m = dwfl_addrmodule(w->dwfl, lookup);
	if (m) {
		const char *name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		f.module = name ? base_name(name) : NULL;
		GElf_Off off;
		GElf_Sym sym;
		const char *s = dwfl_module_addrinfo(m, lookup, &off, &sym, NULL, NULL, NULL);
		if (s) {
			f.symbol = s;
			f.sym_offset = off + (pc - lookup);
		}
		Dwfl_Line *line = dwfl_module_getsrc(m, lookup);
		int lineno = 0;
		if (line)
			f.file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		f.line = lineno > 0 ? (uint32_t)lineno : 0;
	}
	w->count++;
	if (w->cb(w->ctx, &f)) {
		w->stopped = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* DWARF's x86-64 register numbers 0-16: rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8-r15, and the
 * return address column (rip). */
static const enum adac_reg dwarf_regs[] = {
	ADAC_REG_RAX, ADAC_REG_RDX, ADAC_REG_RCX, ADAC_REG_RBX, ADAC_REG_RSI, ADAC_REG_RDI,
	ADAC_REG_RBP, ADAC_REG_RSP, ADAC_REG_R8,  ADAC_REG_R9,  ADAC_REG_R10, ADAC_REG_R11,
	ADAC_REG_R12, ADAC_REG_R13, ADAC_REG_R14, ADAC_REG_R15, ADAC_REG_RIP,
};

bool adac_dwfl_thread_registers(Dwfl_Thread *thread, const struct adac_regs *regs)
{
	Dwarf_Word r[sizeof dwarf_regs / sizeof dwarf_regs[0]];
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
		r[i] = regs->r[dwarf_regs[i]];
	return dwfl_thread_state_registers(thread, 0, sizeof r / sizeof r[0], r);
}
