/* target_mem.h - a target made of host buffers, for unit tests of everything above the backends. */
#ifndef ADAC_TARGET_MEM_H
#define ADAC_TARGET_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/target.h"

struct adac_memimg;

struct adac_memimg *adac_memimg_new(void);
/* Copies len bytes to appear at target address addr. Later regions win where they overlap. */
int adac_memimg_add(struct adac_memimg *img, uint64_t addr, const void *data, size_t len);
int adac_memimg_add_module(struct adac_memimg *img, const char *path, uint64_t base, uint64_t end);
int adac_memimg_add_thread(struct adac_memimg *img, uint64_t tid, const struct adac_regs *regs);
/* Whether the target lends its bytes in place (ops->view, as a mapped core: the default) or only
 * reads them (as a live process): tests take both ways through what reads the target. */
void adac_memimg_set_view(struct adac_memimg *img, bool view);
/* Takes ownership of img (also on failure). */
struct adac_target *adac_target_open_memory(struct adac_memimg *img, struct adac_error *err);

#endif
