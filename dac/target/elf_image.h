/* elf_image.h - reads a loaded ELF image through a memory reader: build-id and exported symbols. */
#ifndef ADAC_ELF_IMAGE_H
#define ADAC_ELF_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Where the image's bytes come from: read fills all len bytes or fails with err set (adac_read's
 * contract; target.c passes its cached reads). */
struct adac_elf_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len, struct adac_error *err);
	void *ctx;
};

/* GNU build-id of the image whose ELF header is at base; *len = 0 when there is none. */
void adac_elf_build_id(const struct adac_elf_mem *m, uint64_t base, uint8_t *out, size_t *len);

/* Address of the defined dynamic symbol `name` of the image at base, through its GNU or SysV hash
 * table (the same lookup the dynamic linker does). ADAC_E_NOT_FOUND when it is not exported. */
int adac_elf_find_dynsym(const struct adac_elf_mem *m, uint64_t base, const char *name, uint64_t *addr,
                         struct adac_error *err);

#endif
