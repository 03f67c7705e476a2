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
