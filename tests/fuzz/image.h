/* image.h - a target made of bytes: the memory images the runtime fuzz targets (discovery, heap,
 * chain) take as input, and tests/fuzz/make_image.c records from real cores.
 *
 * An image is a sequence of records, each a tag byte and its fields (integers little endian):
 *   'R' addr:u64 len:u32 bytes[len]              memory at addr; the loader widens it to whole
 *                                                4 KiB pages (zeros around), as readability is
 *                                                per page in real targets; later records win
 *   'M' base:u64 end:u64 len:u16 path[len]       a module (its ELF header is at base)
 *   'T' tid:u64 regs:u64[ADAC_REG_COUNT]         a thread and its registers (enum adac_reg order)
 *   'F' addr:u64 len:u32 offset:u64 plen:u16 path[plen]
 *                                                memory at addr: len bytes of a file of the .NET
 *                                                directory (path "$DOTNET/<relative path>", without
 *                                                ".."; ADAC_DOTNET_DIR, else the build's
 *                                                ASYNCDAC_DOTNET_DIR) from offset; as 'R' otherwise,
 *                                                nothing when the file is missing or too short
 *   'C' len:u16 args[len]                        a command to run, its words NUL-separated
 *                                                ("bt\0--address\00x7f..."), without the target
 * A truncated record, or an unknown tag, ends the image. 'F' keeps the images small: the pages of
 * mapped assemblies (CoreLib's metadata is 4 MB) come from the runtime pack and the samples, which
 * scripts/dotnet-setup makes byte for byte the same everywhere (deterministic builds), so the
 * fuzzer mutates the runtime's own data. */
#ifndef ADAC_FUZZ_IMAGE_H
#define ADAC_FUZZ_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "target/target.h"

#define FUZZ_IMAGE_MAX_REGIONS 65536u
#define FUZZ_IMAGE_MAX_COMMANDS 8u
#define FUZZ_IMAGE_MAX_ARGS 16u

struct fuzz_command {
	int argc;
	char *argv[FUZZ_IMAGE_MAX_ARGS + 1];
	char *words;  /* the NUL-separated words argv points into */
};

struct fuzz_image {
	struct adac_target *t;
	struct adac_memimg *mem;  /* t's (it owns it): whether t lends its bytes (adac_memimg_set_view) */
	struct fuzz_command cmds[FUZZ_IMAGE_MAX_COMMANDS];
	size_t ncmds;
};

/* Loads an image into a memory target. 0, or -1 when the target could not be made (out of memory). */
int fuzz_image_open(const uint8_t *data, size_t size, struct fuzz_image *img);
void fuzz_image_close(struct fuzz_image *img);

/* Runs one command of the image (or any argv) and checks what every command owes its caller:
 * success, or a failure with a code and a one-line message; JSON output (--json) that parses.
 * A command that asks whether the user interrupted it (a heap walk, a listing) is run again,
 * told yes at its middle question: it must fail with ADAC_E_INTERRUPTED, having printed the start
 * of its whole output. With ADAC_FUZZ_SHOW set, prints the output and error to stderr. */
void fuzz_run_command(struct adac_target *t, int argc, char **argv);

#endif
