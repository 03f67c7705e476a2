/* fuzz_core.c - the ELF core reader (target/target_core.c) on arbitrary files: the ELF header,
 * program headers, PT_LOAD segments (p_filesz < p_memsz, overlaps), and the notes: NT_PRSTATUS
 * threads and registers, NT_FILE mappings and the modules made of them, and the mapped-file
 * fallback for pages a core lacks. The input is written to a memfd and opened by its
 * /proc/self/fd path (the backend opens a path). An opened core is asked for its modules, threads
 * and registers, the first threads are unwound, memory is read at and across the ends of every
 * PT_LOAD and module, and the runtime is looked for (module ELF headers and .dynsym through core
 * memory). Bytes a PT_LOAD holds that no
 * other PT_LOAD overlaps must read back as the file's bytes, read or lent in place (a view, the
 * heap walk's way: every byte of one must be there); no file descriptor may stay open.
 * Seeds: tests/fuzz/corpus/core (a small real gcore, and cores make_corpus.py writes). */
#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/cursor.h"
#include "runtime/runtime.h"
#include "target/target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CHECKED_PHDRS 64u
#define MAX_UNWOUND 4u
#define MAX_FRAMES 64u

static int count_frame(void *ctx, const struct adac_frame *f)
{
	(void)f;
	unsigned *n = ctx;
	return ++*n >= MAX_FRAMES; /* non-zero: stop */
}

/* The lowest descriptor number free now (a leaked descriptor raises it). */
static int lowest_free_fd(void)
{
	int fd = dup(0);
	if (fd >= 0)
		close(fd);
	return fd;
}

struct load {
	uint64_t vaddr, memsz, offset, filesz;
};

/* The PT_LOAD headers as the file has them (at most MAX_CHECKED_PHDRS). */
static size_t loads_of(const uint8_t *data, size_t size, struct load *out)
{
	if (size < sizeof(Elf64_Ehdr))
		return 0;
	uint64_t phoff = adac_get_u64(data, 32), shoff = adac_get_u64(data, 40);
	uint32_t phnum = adac_get_u16(data, 56);
	if (adac_get_u16(data, 54) != sizeof(Elf64_Phdr) || phoff == 0)
		return 0; /* e_phoff 0: no program header table */
	if (phnum == PN_XNUM) { /* the count is section header 0's sh_info */
		if (shoff > size || size - shoff < sizeof(Elf64_Shdr))
			return 0;
		phnum = adac_get_u32(data, shoff + 44);
	}
	size_t n = 0;
	for (uint32_t i = 0; i < phnum && n < MAX_CHECKED_PHDRS; i++) {
		uint64_t at = phoff + (uint64_t)i * sizeof(Elf64_Phdr);
		if (at < phoff || at > size || size - at < sizeof(Elf64_Phdr))
			break;
		if (adac_get_u32(data, at) != PT_LOAD)
			continue;
		out[n++] = (struct load){adac_get_u64(data, at + 16), adac_get_u64(data, at + 40), adac_get_u64(data, at + 8),
		                         adac_get_u64(data, at + 32)};
	}
	return n;
}

static bool overlaps(const struct load *l, size_t n, size_t i, uint64_t a, uint64_t len)
{
	for (size_t k = 0; k < n; k++)
		if (k != i && a < l[k].vaddr + l[k].memsz && l[k].vaddr < a + len)
			return true;
	return false;
}

static void read_around(struct adac_target *t, uint64_t addr)
{
	uint8_t buf[64];
	for (int d = -32; d <= 32; d += 32)
		if ((d >= 0 || addr >= (uint64_t)-d) && adac_read_upto(t, addr + (uint64_t)d, buf, sizeof buf) > sizeof buf)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int before = lowest_free_fd();
	int fd = memfd_create("core", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_core(path, &err);
	close(fd);
	if (!t) {
		if (err.code == ADAC_E_OK || err.msg[0] == '\0')
			__builtin_trap();
	} else {
		const struct adac_module *mods;
		size_t nmods = 0;
		if (adac_target_modules(t, &mods, &nmods, &err) == 0)
			for (size_t i = 0; i < nmods; i++) {
				if (!mods[i].path || mods[i].build_id_len > ADAC_BUILD_ID_MAX)
					__builtin_trap();
				read_around(t, mods[i].base);
				read_around(t, mods[i].end);
			}
		const struct adac_thread *threads;
		size_t nthreads = 0;
		if (adac_target_threads(t, &threads, &nthreads, &err) == 0)
			for (size_t i = 0; i < nthreads; i++) {
				struct adac_regs regs;
				adac_error_clear(&err);
				if (adac_target_regs(t, threads[i].tid, &regs, &err) != 0)
					__builtin_trap(); /* every listed thread has registers */
				read_around(t, regs.r[ADAC_REG_RSP]);
				/* The first threads unwound (libdwfl over these registers and this memory): frames,
				 * or one error with its message. */
				unsigned frames = 0;
				adac_error_clear(&err);
				if (i < MAX_UNWOUND && adac_target_frames(t, threads[i].tid, count_frame, &frames, &err) != 0 &&
				    (err.code == ADAC_E_OK || err.msg[0] == '\0'))
					__builtin_trap();
			}
		struct load loads[MAX_CHECKED_PHDRS];
		size_t nloads = loads_of(data, size, loads);
		for (size_t i = 0; i < nloads; i++) {
			const struct load *l = &loads[i];
			read_around(t, l->vaddr);
			read_around(t, l->vaddr + l->filesz);
			read_around(t, l->vaddr + l->memsz);
			/* The first bytes the file holds for this segment, when nothing else claims them. Only
			 * for a segment that starts a page: readability is per page (target.h), and real cores
			 * have page-aligned segments; a page whose first byte no segment holds is unreadable. */
			uint64_t n = l->filesz < l->memsz ? l->filesz : l->memsz;
			n = n < 64 ? n : 64;
			uint8_t buf[64];
			if (n && l->vaddr % 4096 == 0 && l->vaddr + n > l->vaddr && l->offset < size && size - l->offset >= n &&
			    !overlaps(loads, nloads, i, l->vaddr, n)) {
				adac_error_clear(&err);
				if (adac_read(t, l->vaddr, buf, (size_t)n, &err) != 0 || memcmp(buf, data + l->offset, (size_t)n) != 0)
					__builtin_trap();
				/* Lent in place (the heap walk's way): the same bytes. */
				struct adac_target_view v;
				if (adac_target_view(t, l->vaddr, (size_t)n, &v) &&
				    (v.len == 0 || v.len > n || memcmp(v.bytes, data + l->offset, v.len) != 0))
					__builtin_trap();
				adac_target_unview(t, &v);
			}
			/* A view anywhere is within what was asked, every byte of it readable. */
			uint64_t ends[3] = {l->vaddr, l->vaddr + l->filesz - 1, l->vaddr + l->memsz - 1};
			for (int k = 0; k < 3; k++) {
				struct adac_target_view v;
				if (adac_target_view(t, ends[k], 4096, &v)) {
					volatile uint8_t sum = 0;
					if (v.len == 0 || v.len > 4096)
						__builtin_trap();
					for (size_t b = 0; b < v.len; b++)
						sum += v.bytes[b];
					(void)sum;
				}
				adac_target_unview(t, &v);
			}
		}
		adac_error_clear(&err);
		struct adac_runtime *rt = adac_runtime_open(t, &err);
		if (!rt && (err.code == ADAC_E_OK || err.msg[0] == '\0'))
			__builtin_trap();
		adac_runtime_close(rt);
		adac_target_close(t);
	}
	if (lowest_free_fd() != before)
		__builtin_trap(); /* a descriptor was leaked */
	return 0;
}
