/* elf_write.c - the ELF container of a symbol file: an x86-64 ELF shared object whose addresses are
 * the code's own (load it with slide 0). Its code sections hold no bytes (SHT_NOBITS: the code is
 * in the process or core), one per cluster of nearby methods, each with a PT_LOAD so that tools
 * that map segments (libdwfl, LLDB) place it too. A GNU build-id hashed from the contents lets a
 * debugger tell one generation of the file from the next. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/limits.h"
#include "symfile/dwarf_write.h"

#define BUILD_ID_BYTES 16u

struct cluster {
	uint64_t start, end;
};

struct section {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, size, align, entsize;
	uint32_t link, info;
	const struct adac_bytebuf *data;  /* NULL for NOBITS */
	uint64_t offset;                  /* in the file, set while laying out */
	uint32_t name_off;
};

static int cmp_start(const void *a, const void *b)
{
	const struct adac_sym_method *x = *(const struct adac_sym_method *const *)a;
	const struct adac_sym_method *y = *(const struct adac_sym_method *const *)b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts methods by address into *sorted and groups them into clusters; each method's cluster
 * index goes to cluster_of (parallel to sorted). Fails on overlapping methods. */
static int make_clusters(const struct adac_symfile *sf, const struct adac_sym_method ***sorted, uint32_t **cluster_of,
                         struct cluster **clusters, uint32_t *n, struct adac_error *err)
{
	size_t nm = sf->nmethods;
	*sorted = calloc(nm + 1, sizeof **sorted);
	*cluster_of = calloc(nm + 1, sizeof **cluster_of);
	*clusters = calloc(nm + 1, sizeof **clusters);
	*n = 0;
	if (!*sorted || !*cluster_of || !*clusters)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory writing a symbol file");
	for (size_t i = 0; i < nm; i++)
		(*sorted)[i] = &sf->methods[i];
	qsort(*sorted, nm, sizeof **sorted, cmp_start);
	for (size_t i = 0; i < nm; i++) {
		const struct adac_sym_method *m = (*sorted)[i];
		struct cluster *c = *n ? &(*clusters)[*n - 1] : NULL;
		if (c && m->start < c->end)
			return adac_fail(err, ADAC_E_BAD_ARG, m->start, "%s at 0x%llx overlaps %s (which ends at 0x%llx)", m->name,
			                 (unsigned long long)m->start, (*sorted)[i - 1]->name, (unsigned long long)c->end);
		if (c && m->start - c->end < ADAC_SYMFILE_CLUSTER_GAP) {
			c->end = m->start + m->size;
		} else {
			if (*n >= ADAC_MAX_SYM_SECTIONS)
				return adac_fail(err, ADAC_E_LIMIT, m->start, "more than ADAC_MAX_SYM_SECTIONS (%u) code sections",
				                 ADAC_MAX_SYM_SECTIONS);
			(*clusters)[(*n)++] = (struct cluster){m->start, m->start + m->size};
		}
		(*cluster_of)[i] = *n - 1;
	}
	return 0;
}

static uint64_t fnv(const uint8_t *p, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static void put_shdr(struct adac_bytebuf *b, const struct section *s)
{
	adac_bytebuf_u32(b, s->name_off);
	adac_bytebuf_u32(b, s->type);
	adac_bytebuf_u64(b, s->flags);
	adac_bytebuf_u64(b, s->addr);
	adac_bytebuf_u64(b, s->offset);
	adac_bytebuf_u64(b, s->size);
	adac_bytebuf_u32(b, s->link);
	adac_bytebuf_u32(b, s->info);
	adac_bytebuf_u64(b, s->align);
	adac_bytebuf_u64(b, s->entsize);
}

int adac_symfile_image(const struct adac_symfile *sf, const struct adac_symfile_opts *o, uint8_t **image, size_t *len,
                       struct adac_error *err)
{
	*image = NULL;
	*len = 0;
	const struct adac_sym_method **sorted = NULL;
	uint32_t *cluster_of = NULL, nclusters = 0;
	struct cluster *clusters = NULL;
	struct section *secs = NULL;
	struct adac_dwarf_out dw;
	struct adac_bytebuf symtab = {0}, strtab = {0}, shstrtab = {0}, note = {0}, file = {0};
	char (*text_names)[24] = NULL;
	int rc = -1;
	memset(&dw, 0, sizeof dw);

	if (make_clusters(sf, &sorted, &cluster_of, &clusters, &nclusters, err) || adac_dwarf_write(sf, o, &dw, err))
		goto out;

	/* Symbols: the null symbol, then one global function per method. */
	adac_bytebuf_u8(&strtab, 0);
	adac_bytebuf_zeros(&symtab, 24);
	for (size_t i = 0; i < sf->nmethods; i++) {
		const struct adac_sym_method *m = sorted[i];
		adac_bytebuf_u32(&symtab, (uint32_t)strtab.len);
		adac_bytebuf_str(&strtab, m->name);
		adac_bytebuf_u8(&symtab, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC));
		adac_bytebuf_u8(&symtab, STV_DEFAULT);
		adac_bytebuf_u16(&symtab, (uint16_t)(1 + cluster_of[i])); /* the code sections come first */
		adac_bytebuf_u64(&symtab, m->start);
		adac_bytebuf_u64(&symtab, m->size);
	}

	/* Sections: null, code clusters, build-id, DWARF, .symtab, .strtab, .shstrtab. */
	size_t nsecs = 1 + nclusters + 1 + ADAC_DW_COUNT + 3;
	secs = calloc(nsecs, sizeof *secs);
	text_names = calloc(nclusters + 1, sizeof *text_names);
	if (!secs || !text_names) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory writing a symbol file");
		goto out;
	}
	size_t k = 1;
	for (uint32_t i = 0; i < nclusters; i++, k++) {
		if (i)
			snprintf(text_names[i], sizeof text_names[i], ".text.%u", i);
		else
			snprintf(text_names[i], sizeof text_names[i], ".text");
		secs[k] = (struct section){.name = text_names[i], .type = SHT_NOBITS, .flags = SHF_ALLOC | SHF_EXECINSTR,
		                           .addr = clusters[i].start, .size = clusters[i].end - clusters[i].start, .align = 1};
	}
	size_t note_sec = k++;
	size_t dw_first = k;
	for (int s = 0; s < ADAC_DW_COUNT; s++, k++)
		secs[k] = (struct section){.name = dw.name[s], .type = SHT_PROGBITS, .align = 1, .data = &dw.sec[s]};
	size_t symtab_sec = k++, strtab_sec = k++, shstrtab_sec = k++;
	secs[symtab_sec] = (struct section){.name = ".symtab", .type = SHT_SYMTAB, .align = 8, .entsize = 24,
	                                    .link = (uint32_t)strtab_sec, .info = 1, .data = &symtab};
	secs[strtab_sec] = (struct section){.name = ".strtab", .type = SHT_STRTAB, .align = 1, .data = &strtab};
	secs[shstrtab_sec] = (struct section){.name = ".shstrtab", .type = SHT_STRTAB, .align = 1, .data = &shstrtab};

	/* The build-id: two FNV-1a hashes of everything the file describes. */
	uint64_t h1 = 0xcbf29ce484222325ull, h2 = 0x84222325cbf29ce4ull;
	for (size_t s = dw_first; s < strtab_sec + 1; s++) {
		h1 = fnv(secs[s].data->p, secs[s].data->len, h1);
		h2 = fnv(secs[s].data->p, secs[s].data->len, h2 ^ s);
	}
	for (uint32_t i = 0; i < nclusters; i++) {
		h1 = fnv((const uint8_t *)&clusters[i], sizeof clusters[i], h1);
		h2 = fnv((const uint8_t *)&clusters[i], sizeof clusters[i], h2);
	}
	adac_bytebuf_u32(&note, 4);
	adac_bytebuf_u32(&note, BUILD_ID_BYTES);
	adac_bytebuf_u32(&note, NT_GNU_BUILD_ID);
	adac_bytebuf_put(&note, "GNU", 4);
	adac_bytebuf_u64(&note, h1);
	adac_bytebuf_u64(&note, h2);
	secs[note_sec] = (struct section){.name = ".note.gnu.build-id", .type = SHT_NOTE, .align = 4, .data = &note};

	adac_bytebuf_u8(&shstrtab, 0);
	for (size_t s = 1; s < nsecs; s++) {
		secs[s].name_off = (uint32_t)shstrtab.len;
		adac_bytebuf_str(&shstrtab, secs[s].name);
	}

	/* Layout: header, program headers, section contents, section headers. */
	uint64_t off = 64 + 56ull * nclusters;
	for (size_t s = 1; s < nsecs; s++) {
		if (!secs[s].data) {
			secs[s].offset = off;
			continue;
		}
		off = (off + secs[s].align - 1) / secs[s].align * secs[s].align;
		secs[s].offset = off;
		secs[s].size = secs[s].data->len;
		off += secs[s].size;
	}
	off = (off + 7) & ~7ull;

	adac_bytebuf_put(&file, ELFMAG, SELFMAG);
	adac_bytebuf_u8(&file, ELFCLASS64);
	adac_bytebuf_u8(&file, ELFDATA2LSB);
	adac_bytebuf_u8(&file, EV_CURRENT);
	adac_bytebuf_u8(&file, ELFOSABI_NONE);
	adac_bytebuf_zeros(&file, EI_NIDENT - 8);
	adac_bytebuf_u16(&file, ET_DYN);
	adac_bytebuf_u16(&file, EM_X86_64);
	adac_bytebuf_u32(&file, EV_CURRENT);
	adac_bytebuf_u64(&file, 0);                            /* e_entry */
	adac_bytebuf_u64(&file, nclusters ? 64 : 0);           /* e_phoff */
	adac_bytebuf_u64(&file, off);                          /* e_shoff */
	adac_bytebuf_u32(&file, 0);                            /* e_flags */
	adac_bytebuf_u16(&file, 64);
	adac_bytebuf_u16(&file, 56);
	adac_bytebuf_u16(&file, (uint16_t)nclusters);
	adac_bytebuf_u16(&file, 64);
	adac_bytebuf_u16(&file, (uint16_t)nsecs);
	adac_bytebuf_u16(&file, (uint16_t)shstrtab_sec);
	for (uint32_t i = 0; i < nclusters; i++) {
		adac_bytebuf_u32(&file, PT_LOAD);
		adac_bytebuf_u32(&file, PF_R | PF_X);
		adac_bytebuf_u64(&file, 0);                        /* p_offset: no file bytes */
		adac_bytebuf_u64(&file, clusters[i].start);        /* p_vaddr */
		adac_bytebuf_u64(&file, clusters[i].start);        /* p_paddr */
		adac_bytebuf_u64(&file, 0);                        /* p_filesz */
		adac_bytebuf_u64(&file, clusters[i].end - clusters[i].start);
		adac_bytebuf_u64(&file, 1);                        /* p_align */
	}
	for (size_t s = 1; s < nsecs; s++) {
		if (!secs[s].data)
			continue;
		adac_bytebuf_zeros(&file, secs[s].offset - file.len);
		adac_bytebuf_put(&file, secs[s].data->p, secs[s].data->len);
	}
	adac_bytebuf_zeros(&file, off - file.len);
	for (size_t s = 0; s < nsecs; s++)
		put_shdr(&file, &secs[s]);

	if (file.failed || symtab.failed || strtab.failed || shstrtab.failed || note.failed) {
		adac_fail(err, ADAC_E_LIMIT, 0, "a symbol file past ADAC_MAX_SYMFILE_BYTES (%u) bytes, or out of memory",
		          ADAC_MAX_SYMFILE_BYTES);
		goto out;
	}
	*image = file.p;
	*len = file.len;
	file.p = NULL;
	rc = 0;
out:
	adac_dwarf_out_free(&dw);
	adac_bytebuf_free(&symtab);
	adac_bytebuf_free(&strtab);
	adac_bytebuf_free(&shstrtab);
	adac_bytebuf_free(&note);
	adac_bytebuf_free(&file);
	free(sorted);
	free(cluster_of);
	free(clusters);
	free(secs);
	free(text_names);
	return rc;
}

int adac_symfile_write(const struct adac_symfile *sf, const struct adac_symfile_opts *o, const char *path, size_t *len,
                       struct adac_error *err)
{
	uint8_t *image;
	size_t n;
	if (adac_symfile_image(sf, o, &image, &n, err))
		return -1;
	size_t plen = strlen(path);
	char *tmp = malloc(plen + 16);
	if (!tmp) {
		free(image);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory writing %s", path);
	}
	snprintf(tmp, plen + 16, "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int rc = -1;
	if (fd < 0) {
		adac_fail(err, ADAC_E_IO, 0, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t done = 0; done < n;) {
		ssize_t w = write(fd, image + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			adac_fail(err, ADAC_E_IO, 0, "cannot write %s: %s", tmp, w < 0 ? strerror(errno) : "no progress");
			close(fd);
			unlink(tmp);
			goto out;
		}
		done += (size_t)w;
	}
	if (close(fd) != 0 || rename(tmp, path) != 0) {
		adac_fail(err, ADAC_E_IO, 0, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (len)
		*len = n;
	rc = 0;
out:
	free(tmp);
	free(image);
	return rc;
}
