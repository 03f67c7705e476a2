/* dwfl_frames.h - physical frames through libdwfl, shared by the core and pid backends. */
#ifndef ADAC_DWFL_FRAMES_H
#define ADAC_DWFL_FRAMES_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>

#include "target/target.h"

struct adac_dwfl_walk {
	Dwfl *dwfl;
	adac_frame_cb cb;
	void *ctx;
	unsigned count;
	bool stopped;    /* the caller's callback asked to stop */
	bool limit_hit;  /* more than ADAC_MAX_UNWIND_FRAMES frames */
};

/* dwfl_thread_getframes callback: turns each frame into a struct adac_frame (module, symbol,
 * source line) and passes it to walk->cb. arg is a struct adac_dwfl_walk. */
int adac_dwfl_walk_frame(Dwfl_Frame *state, void *arg);

/* A thread's initial registers for libdwfl (its set_initial_registers callback), from regs. */
bool adac_dwfl_thread_registers(Dwfl_Thread *thread, const struct adac_regs *regs);

#endif
