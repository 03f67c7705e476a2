/* elf_image.c - ELF header, program headers, notes and .dynsym of an image in target memory, read
 * through the caller's reader. */
#include "target/elf_image.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"


struct image {
	uint64_t base;
	uint64_t bias;  /* load bias: runtime address = bias + p_vaddr */
	Elf64_Phdr ph[ADAC_MAX_ELF_PHDRS];
	unsigned nph;
};

static int read_u32(const struct adac_elf_mem *m, uint64_t addr, uint32_t *out, struct adac_error *err)
{
	return m->read(m->ctx, addr, out, sizeof *out, err);
}

static int read_image(const struct adac_elf_mem *m, uint64_t base, struct image *im, struct adac_error *err)
{
	Elf64_Ehdr eh;
	if (m->read(m->ctx, base, &eh, sizeof eh, err))
		return -1;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return adac_fail(err, ADAC_E_CORRUPT, base, "no ELF header at 0x%llx", (unsigned long long)base);
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return adac_fail(err, ADAC_E_UNSUPPORTED, base, "ELF image at 0x%llx is not 64-bit little-endian",
		                 (unsigned long long)base);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > ADAC_MAX_ELF_PHDRS)
		return adac_fail(err, ADAC_E_CORRUPT, base, "ELF image at 0x%llx has %u program headers of %u bytes",
		                 (unsigned long long)base, eh.e_phnum, eh.e_phentsize);
	im->base = base;
	im->nph = eh.e_phnum;
	if (m->read(m->ctx, base + eh.e_phoff, im->ph, (size_t)im->nph * sizeof(Elf64_Phdr), err))
		return -1;
	uint64_t lowest = UINT64_MAX;
	for (unsigned i = 0; i < im->nph; i++)
		if (im->ph[i].p_type == PT_LOAD && im->ph[i].p_vaddr < lowest)
			lowest = im->ph[i].p_vaddr;
	if (lowest == UINT64_MAX)
		return adac_fail(err, ADAC_E_CORRUPT, base, "ELF image at 0x%llx has no PT_LOAD", (unsigned long long)base);
	im->bias = base - (lowest & ~(uint64_t)0xfff);
	return 0;
}

void adac_elf_build_id(const struct adac_elf_mem *m, uint64_t base, uint8_t *out, size_t *len)
{
	*len = 0;
	struct image *im = malloc(sizeof *im);
	if (!im || read_image(m, base, im, NULL)) {
		free(im);
		return;
	}
	for (unsigned i = 0; i < im->nph && *len == 0; i++) {
		if (im->ph[i].p_type != PT_NOTE || im->ph[i].p_filesz > ADAC_MAX_ELF_NOTE_BYTES)
			continue;
		size_t size = (size_t)im->ph[i].p_filesz;
		uint8_t *buf = malloc(size);
		if (!buf || m->read(m->ctx, im->bias + im->ph[i].p_vaddr, buf, size, NULL)) {
			free(buf);
			continue;
		}
		size_t off = 0;
		while (off + sizeof(Elf64_Nhdr) <= size) {
			Elf64_Nhdr nh;
			memcpy(&nh, buf + off, sizeof nh);
			size_t name_at = off + sizeof nh;
			size_t desc_at = name_at + ((nh.n_namesz + 3u) & ~3u);
			size_t next = desc_at + ((nh.n_descsz + 3u) & ~3u);
			if (next > size || next <= off)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(buf + name_at, "GNU", 4) == 0 &&
			    nh.n_descsz <= ADAC_BUILD_ID_MAX) {
				memcpy(out, buf + desc_at, nh.n_descsz);
				*len = nh.n_descsz;
				break;
			}
			off = next;
		}
		free(buf);
	}
	free(im);
}

struct dynamic_info {
	uint64_t gnu_hash, sysv_hash, symtab, strtab, strsz;
};

/* In memory, glibc has relocated the d_ptr values of .dynamic; bytes read from the file (a core
 * lacking the page) are still link-time addresses. Addresses below the image base are the latter. */
static uint64_t dyn_addr(const struct image *im, uint64_t v) { return v != 0 && v < im->base ? v + im->bias : v; }

static int read_dynamic(const struct adac_elf_mem *m, const struct image *im, struct dynamic_info *di, struct adac_error *err)
{
	memset(di, 0, sizeof *di);
	const Elf64_Phdr *dyn = NULL;
	for (unsigned i = 0; i < im->nph; i++)
		if (im->ph[i].p_type == PT_DYNAMIC)
			dyn = &im->ph[i];
	if (!dyn)
		return adac_fail(err, ADAC_E_NOT_FOUND, im->base, "ELF image at 0x%llx has no PT_DYNAMIC",
		                 (unsigned long long)im->base);
	uint64_t at = im->bias + dyn->p_vaddr;
	for (unsigned i = 0; i < ADAC_MAX_ELF_DYN_ENTRIES; i++) {
		Elf64_Dyn d;
		if (m->read(m->ctx, at + (uint64_t)i * sizeof d, &d, sizeof d, err))
			return -1;
		switch (d.d_tag) {
		case DT_NULL:
			if (!di->symtab || !di->strtab || (!di->gnu_hash && !di->sysv_hash))
				return adac_fail(err, ADAC_E_NOT_FOUND, at, "ELF image at 0x%llx has no dynamic symbol table",
				                 (unsigned long long)im->base);
			return 0;
		case DT_GNU_HASH: di->gnu_hash = dyn_addr(im, d.d_un.d_ptr); break;
		case DT_HASH: di->sysv_hash = dyn_addr(im, d.d_un.d_ptr); break;
		case DT_SYMTAB: di->symtab = dyn_addr(im, d.d_un.d_ptr); break;
		case DT_STRTAB: di->strtab = dyn_addr(im, d.d_un.d_ptr); break;
		case DT_STRSZ: di->strsz = d.d_un.d_val; break;
		default: break;
		}
	}
	return adac_fail(err, ADAC_E_LIMIT, at, "dynamic section at 0x%llx has no DT_NULL in %u entries",
	                 (unsigned long long)at, ADAC_MAX_ELF_DYN_ENTRIES);
}

/* 1: symbol idx is `name` and defined (value in *sym), 0: not, -1: read error. */
static int symbol_matches(const struct adac_elf_mem *m, const struct dynamic_info *di, uint64_t idx, const char *name,
                          Elf64_Sym *sym, struct adac_error *err)
{
	if (m->read(m->ctx, di->symtab + idx * sizeof *sym, sym, sizeof *sym, err))
		return -1;
	size_t len = strlen(name);
	if (di->strsz && (sym->st_name >= di->strsz || len >= di->strsz - sym->st_name))
		return 0;
	char buf[256];
	if (len + 1 > sizeof buf)
		return 0;
	if (m->read(m->ctx, di->strtab + sym->st_name, buf, len + 1, NULL))
		return 0;
	return memcmp(buf, name, len + 1) == 0 && sym->st_shndx != SHN_UNDEF;
}

static uint32_t gnu_hash_of(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

static int lookup_gnu(const struct adac_elf_mem *m, const struct dynamic_info *di, const char *name, Elf64_Sym *sym,
                      struct adac_error *err)
{
	uint32_t hdr[4]; /* nbuckets, symoffset, bloom_size, bloom_shift */
	if (m->read(m->ctx, di->gnu_hash, hdr, sizeof hdr, err))
		return -1;
	if (hdr[0] == 0)
		return 0;
	uint32_t h = gnu_hash_of(name);
	uint64_t buckets = di->gnu_hash + sizeof hdr + (uint64_t)hdr[2] * 8;
	uint64_t chains = buckets + (uint64_t)hdr[0] * 4;
	uint32_t idx;
	if (read_u32(m, buckets + (uint64_t)(h % hdr[0]) * 4, &idx, err))
		return -1;
	if (idx == 0 || idx < hdr[1])
		return 0;
	for (uint32_t n = 0; n < ADAC_MAX_ELF_SYMBOLS; n++, idx++) {
		uint32_t ch;
		if (read_u32(m, chains + (uint64_t)(idx - hdr[1]) * 4, &ch, err))
			return -1;
		if ((ch | 1u) == (h | 1u)) {
			int found = symbol_matches(m, di, idx, name, sym, err);
			if (found)
				return found;
		}
		if (ch & 1u)
			return 0;
	}
	return adac_fail(err, ADAC_E_LIMIT, di->gnu_hash, "GNU hash chain longer than ADAC_MAX_ELF_SYMBOLS (%u)",
	                 ADAC_MAX_ELF_SYMBOLS);
}

static int lookup_sysv(const struct adac_elf_mem *m, const struct dynamic_info *di, const char *name, Elf64_Sym *sym,
                       struct adac_error *err)
{
	uint32_t hdr[2]; /* nbucket, nchain */
	if (m->read(m->ctx, di->sysv_hash, hdr, sizeof hdr, err))
		return -1;
	if (hdr[0] == 0)
		return 0;
	uint32_t h = 0;
	for (const char *s = name; *s; s++) {
		h = (h << 4) + (uint8_t)*s;
		uint32_t g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	uint32_t idx;
	if (read_u32(m, di->sysv_hash + 8 + (uint64_t)(h % hdr[0]) * 4, &idx, err))
		return -1;
	for (uint32_t n = 0; idx != STN_UNDEF && n < hdr[1] && n < ADAC_MAX_ELF_SYMBOLS; n++) {
		int found = symbol_matches(m, di, idx, name, sym, err);
		if (found)
			return found;
		if (idx >= hdr[1] || read_u32(m, di->sysv_hash + 8 + ((uint64_t)hdr[0] + idx) * 4, &idx, err))
			return -1;
	}
	return 0;
}

int adac_elf_find_dynsym(const struct adac_elf_mem *m, uint64_t base, const char *name, uint64_t *addr,
                         struct adac_error *err)
{
	struct image *im = malloc(sizeof *im);
	if (!im)
		return adac_fail(err, ADAC_E_NOMEM, base, "out of memory reading an ELF image");
	struct dynamic_info di;
	int rc = -1;
	if (read_image(m, base, im, err) == 0 && read_dynamic(m, im, &di, err) == 0) {
		Elf64_Sym sym;
		int found = di.gnu_hash ? lookup_gnu(m, &di, name, &sym, err) : lookup_sysv(m, &di, name, &sym, err);
		if (found > 0) {
			*addr = im->bias + sym.st_value;
			rc = 0;
		} else if (found == 0) {
			adac_fail(err, ADAC_E_NOT_FOUND, base, "symbol %s is not exported by the image at 0x%llx", name,
			          (unsigned long long)base);
		}
	}
	free(im);
	return rc;
}
