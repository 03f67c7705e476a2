/* make_image.c - records a memory image (image.h) from a core file: runs asyncdac commands on the
 * core through a backend that notes every page they read, then writes the commands, the core's
 * modules and threads, and those pages. Running the same commands on the image reads the same
 * bytes, so the image is a seed that walks what the real core walks.
 *
 *   fuzz-make-image [--dotnet-dir DIR | --bytes] <core> <image> <command> [args...] [-- <command> [args...]]...
 *
 * Pages that are a file of DIR (the .NET directory scripts/dotnet-setup fills; default
 * $ASYNCDAC_DOTNET_DIR) byte for byte, per the core's NT_FILE note, are written as 'F' records
 * naming the file, the others as 'R' records with their bytes (--bytes: every page). The recording
 * backend has no physical frames and no symbol table of its own (as the memory target the fuzzers
 * use): symbols are found through the .dynsym pages, which are recorded too. */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "asyncdac.h"
#include "base/cursor.h"

#define PAGE 4096u

/* One NT_FILE mapping whose file is in the .NET directory. */
struct mapping {
	uint64_t start, end, offset;
	char rel[512];   /* "$DOTNET/<path under the .NET directory>" */
	int fd;
};
static struct mapping maps[4096];
static size_t nmaps;

/* The NT_FILE mappings of files under dir. */
static void read_mappings(const char *core, const char *dir)
{
	size_t dlen = strlen(dir);
	elf_version(EV_CURRENT);
	int fd = open(core, O_RDONLY);
	Elf *e = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
	size_t phnum = 0;
	if (!e || elf_getphdrnum(e, &phnum) != 0)
		phnum = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *data = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		GElf_Nhdr nh;
		size_t off = 0, name_at, desc_at;
		while (data && off < data->d_size && (off = gelf_getnote(data, off, &nh, &name_at, &desc_at)) > 0) {
			if (nh.n_type != NT_FILE || nh.n_descsz < 16)
				continue;
			const uint8_t *d = (const uint8_t *)data->d_buf + desc_at;
			uint64_t count = adac_get_u64(d, 0), page = adac_get_u64(d, 8);
			if (count > (nh.n_descsz - 16) / 24)
				continue;
			const char *path = (const char *)d + 16 + count * 24, *end = (const char *)d + nh.n_descsz;
			for (uint64_t k = 0; k < count && path < end; k++, path += strlen(path) + 1) {
				if (nmaps == sizeof maps / sizeof maps[0] || !memchr(path, '\0', (size_t)(end - path)))
					break;
				if (strncmp(path, dir, dlen) != 0 || path[dlen] != '/' || strlen(path + dlen) >= 500)
					continue;
				struct mapping *m = &maps[nmaps++];
				m->start = adac_get_u64(d, 16 + k * 24);
				m->end = adac_get_u64(d, 24 + k * 24);
				m->offset = adac_get_u64(d, 32 + k * 24) * page;
				snprintf(m->rel, sizeof m->rel, "$DOTNET%s", path + dlen);
				m->fd = open(path, O_RDONLY);
			}
		}
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

/* The mapping page p is in when the page holds exactly that file's bytes there, else NULL. */
static const struct mapping *file_page(uint64_t p, const uint8_t *bytes)
{
	uint8_t in_file[PAGE];
	for (size_t i = 0; i < nmaps; i++) {
		const struct mapping *m = &maps[i];
		if (p * PAGE < m->start || p * PAGE >= m->end || m->fd < 0)
			continue;
		return pread(m->fd, in_file, PAGE, (off_t)(m->offset + p * PAGE - m->start)) == PAGE &&
		       memcmp(in_file, bytes, PAGE) == 0 ? m : NULL;
	}
	return NULL;
}

struct recorder {
	struct adac_target *core;
	uint64_t *pages;
	size_t npages, cap;
};

static void note_pages(struct recorder *r, uint64_t addr, size_t len)
{
	for (uint64_t p = addr / PAGE; len && p <= (addr + len - 1) / PAGE; p++) {
		if (r->npages == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 4096;
			r->pages = realloc(r->pages, r->cap * sizeof *r->pages);
			if (!r->pages) {
				fprintf(stderr, "make_image: out of memory\n");
				exit(1);
			}
		}
		r->pages[r->npages++] = p;
	}
}

static int64_t rec_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	(void)err;
	struct recorder *r = impl;
	size_t n = adac_read_upto(r->core, addr, buf, len);
	note_pages(r, addr, n);
	return (int64_t)n;
}

static int rec_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	struct recorder *r = impl;
	const struct adac_module *mods;
	size_t n;
	if (adac_target_modules(r->core, &mods, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (cb(ctx, &mods[i]))
			break;
	return 0;
}

static int rec_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	struct recorder *r = impl;
	const struct adac_thread *threads;
	size_t n;
	if (adac_target_threads(r->core, &threads, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (cb(ctx, &threads[i]))
			break;
	return 0;
}

static int rec_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	struct recorder *r = impl;
	return adac_target_regs(r->core, tid, regs, err);
}

static const struct adac_target_ops recorder_ops = {
	.kind = "memory",
	.read = rec_read,
	.modules = rec_modules,
	.threads = rec_threads,
	.regs = rec_regs,
};

static void put(FILE *f, const void *p, size_t n) { fwrite(p, 1, n, f); }
static void put_u16(FILE *f, uint16_t v) { put(f, &v, 2); }
static void put_u32(FILE *f, uint32_t v) { put(f, &v, 4); }
static void put_u64(FILE *f, uint64_t v) { put(f, &v, 8); }

static void show(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stdout);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("ASYNCDAC_DOTNET_DIR");
	if (argc > 2 && strcmp(argv[1], "--dotnet-dir") == 0) {
		dir = argv[2];
		argv += 2;
		argc -= 2;
	} else if (argc > 1 && strcmp(argv[1], "--bytes") == 0) {
		dir = NULL;
		argv++;
		argc--;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: fuzz-make-image [--dotnet-dir DIR | --bytes] <core> <image> <command> [args...] "
		                "[-- <command> [args...]]...\n");
		return 2;
	}
	char real[4096];
	if (dir && realpath(dir, real))
		read_mappings(argv[1], real);
	struct adac_error err = {0};
	struct recorder rec = {0};
	rec.core = adac_target_open_core(argv[1], &err);
	if (!rec.core) {
		fprintf(stderr, "make_image: %s\n", err.msg);
		return 1;
	}
	struct adac_target *t = adac_target_new(&recorder_ops, &rec, &err);
	FILE *f = t ? fopen(argv[2], "wb") : NULL;
	if (!f) {
		fprintf(stderr, "make_image: %s\n", t ? "cannot write the image" : err.msg);
		return 1;
	}
	/* The commands, each run once on the recorder. */
	for (int i = 3; i < argc;) {
		int end = i;
		while (end < argc && strcmp(argv[end], "--") != 0)
			end++;
		size_t len = 0;
		for (int k = i; k < end; k++)
			len += strlen(argv[k]) + (k + 1 < end);
		put(f, "C", 1);
		put_u16(f, (uint16_t)len);
		for (int k = i; k < end; k++)
			put(f, argv[k], strlen(argv[k]) + (k + 1 < end));
		struct adac_out out = {.write = show, .ctx = NULL};
		adac_error_clear(&err);
		if (adac_command_run(t, ADAC_FRONTEND_CLI, end - i, argv + i, &out, &err))
			fprintf(stderr, "make_image: %s: %s\n", argv[i], err.msg);
		i = end + 1;
	}
	const struct adac_module *mods;
	size_t nmods = 0;
	if (adac_target_modules(rec.core, &mods, &nmods, &err) == 0)
		for (size_t i = 0; i < nmods; i++) {
			put(f, "M", 1);
			put_u64(f, mods[i].base);
			put_u64(f, mods[i].end);
			put_u16(f, (uint16_t)strlen(mods[i].path));
			put(f, mods[i].path, strlen(mods[i].path));
		}
	const struct adac_thread *threads;
	size_t nthreads = 0;
	if (adac_target_threads(rec.core, &threads, &nthreads, &err) == 0)
		for (size_t i = 0; i < nthreads; i++) {
			struct adac_regs regs = {0};
			adac_target_regs(rec.core, threads[i].tid, &regs, &err);
			put(f, "T", 1);
			put_u64(f, threads[i].tid);
			for (unsigned r = 0; r < ADAC_REG_COUNT; r++)
				put_u64(f, regs.r[r]);
		}
	/* The pages read, distinct and in order, in runs of pages of one kind: consecutive pages of one
	 * mapped file ('F'), or consecutive pages of bytes ('R'). */
	qsort(rec.pages, rec.npages, sizeof *rec.pages, cmp_u64);
	size_t n = 0;
	for (size_t i = 0; i < rec.npages; i++)
		if (n == 0 || rec.pages[i] != rec.pages[n - 1])
			rec.pages[n++] = rec.pages[i];
	uint8_t (*bytes)[PAGE] = calloc(n ? n : 1, PAGE);
	const struct mapping **from = calloc(n ? n : 1, sizeof *from);
	size_t file_pages = 0, byte_runs = 0, file_runs = 0;
	for (size_t i = 0; i < n; i++) {
		adac_read_upto(rec.core, rec.pages[i] * PAGE, bytes[i], PAGE);
		from[i] = file_page(rec.pages[i], bytes[i]);
		file_pages += from[i] != NULL;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && rec.pages[j] == rec.pages[j - 1] + 1 && from[j] == from[i])
			j++;
		uint64_t addr = rec.pages[i] * PAGE;
		uint32_t len = (uint32_t)((j - i) * PAGE);
		if (from[i]) {
			put(f, "F", 1);
			put_u64(f, addr);
			put_u32(f, len);
			put_u64(f, from[i]->offset + addr - from[i]->start);
			put_u16(f, (uint16_t)strlen(from[i]->rel));
			put(f, from[i]->rel, strlen(from[i]->rel));
			file_runs++;
		} else {
			put(f, "R", 1);
			put_u64(f, addr);
			put_u32(f, len);
			put(f, bytes[i], len);
			byte_runs++;
		}
		i = j;
	}
	free(bytes);
	free(from);
	fclose(f);
	fprintf(stderr, "make_image: %s: %zu pages read: %zu as bytes in %zu runs, %zu from %zu runs of files; "
	        "%zu modules, %zu threads\n", argv[2], n, n - file_pages, byte_runs, file_pages, file_runs, nmods, nthreads);
	adac_target_close(t);
	adac_target_close(rec.core);
	free(rec.pages);
	return 0;
}
