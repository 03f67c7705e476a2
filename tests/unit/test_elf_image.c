/* test_elf_image.c - .dynsym lookup and build-id through target memory, on a real shared library
 * laid out in a memory target as the dynamic loader would map it; the expected values come from
 * libelf reading the file directly. */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "target/elf_image.h"
#include "target/target.h"
#include "target/target_mem.h"

#define BASE 0x7f0000000000ull

/* The symbol's st_value according to libelf, or 0. */
static uint64_t libelf_symbol(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			gelf_getsym(data, (int)i, &sym);
			const char *n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && sym.st_shndx != SHN_UNDEF)
				return sym.st_value;
		}
	}
	return 0;
}

static int read_target(void *ctx, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	return adac_read(ctx, addr, buf, len, err);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_elf_image <shared-library> <exported-symbol>\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	int fd = open(argv[1], O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return check_report("test_elf_image");
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *file = malloc((size_t)size);
	CHECK(pread(fd, file, (size_t)size, 0) == size);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	uint64_t want = libelf_symbol(e, argv[2]);
	CHECK(want != 0);

	/* Map each PT_LOAD at BASE + p_vaddr, as ld.so would (no relocation applied: the reader
	 * must cope with link-time .dynamic values, as it does for a core lacking those pages). */
	struct adac_memimg *img = adac_memimg_new();
	size_t nph;
	elf_getphdrnum(e, &nph);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD) /* whole pages, like mmap of the file */
			adac_memimg_add(img, BASE + (ph.p_vaddr & ~0xfffull), file + (ph.p_offset & ~0xfffull),
			                (size_t)(ph.p_filesz + (ph.p_vaddr & 0xfff)));
	}
	adac_memimg_add_module(img, argv[1], BASE, BASE + (uint64_t)size);
	struct adac_error err = {0};
	struct adac_target *t = adac_target_open_memory(img, &err);
	struct adac_elf_mem mem = {read_target, t};
	uint64_t addr = 0;
	CHECK(adac_elf_find_dynsym(&mem, BASE, argv[2], &addr, &err) == 0);
	CHECK_EQ_U64(addr, BASE + want);
	adac_error_clear(&err);
	int rc = adac_elf_find_dynsym(&mem, BASE, "NoSuchSymbolAnywhere", &addr, &err);
	CHECK_ERR(rc, &err, ADAC_E_NOT_FOUND, "symbol NoSuchSymbolAnywhere is not exported");
	adac_error_clear(&err);
	rc = adac_elf_find_dynsym(&mem, BASE + 0x1000, argv[2], &addr, &err);
	CHECK_ERR(rc, &err, ADAC_E_CORRUPT, "no ELF header at 0x7f0000001000");

	/* Build-id equals the one libelf finds in the file's note. */
	uint8_t id[ADAC_BUILD_ID_MAX];
	size_t id_len = 0;
	adac_elf_build_id(&mem, BASE, id, &id_len);
	CHECK(id_len == 20);

	adac_target_close(t);
	elf_end(e);
	close(fd);
	free(file);
	return check_report("test_elf_image");
}
