/* image.c - loads the memory images of image.h into a memory target, and runs commands on it. */
#include "image.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "asyncdac.h"
#include "base/cursor.h"
#include "target/target_mem.h"

#define PAGE 4096u

/* n bytes at the cursor (advanced past them). */
static int take(struct adac_cursor *c, size_t n, const uint8_t **p)
{
	*p = c->p;
	return adac_cursor_skip(c, n);
}

static int add_region(struct adac_memimg *mem, uint64_t addr, const uint8_t *bytes, uint32_t len)
{
	uint64_t start = addr & ~(uint64_t)(PAGE - 1);
	if (len == 0 || addr + len < addr || addr + len > UINT64_MAX - PAGE)
		return 0; /* nothing, or wrapping past the top of the address space: ignored */
	uint64_t end = (addr + len + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	size_t n = (size_t)(end - start);
	uint8_t *pages = calloc(1, n);
	if (!pages)
		return -1;
	memcpy(pages + (addr - start), bytes, len);
	int rc = adac_memimg_add(mem, start, pages, n);
	free(pages);
	return rc;
}

/* Files of the .NET directory, mapped once for the life of the process (inputs come by the
 * million; the files never change under them). */
#define MAX_FILES 64u
static struct {
	char *path;
	const uint8_t *data;
	size_t size;
} files[MAX_FILES];
static size_t nfiles;

static const uint8_t *dotnet_file(const char *rel, size_t *size)
{
	for (size_t i = 0; i < nfiles; i++)
		if (strcmp(files[i].path, rel) == 0) {
			*size = files[i].size;
			return files[i].data;
		}
	if (nfiles == MAX_FILES || strstr(rel, "..") || strncmp(rel, "$DOTNET/", 8) != 0)
		return NULL;
	const char *dir = getenv("ADAC_DOTNET_DIR");
	char path[2 * ADAC_MAX_PATH_BYTES];
	snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : FUZZ_DOTNET_DIR, rel + 8);
	const uint8_t *data = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		data = m == MAP_FAILED ? NULL : m;
	}
	if (fd >= 0)
		close(fd);
	files[nfiles].path = strdup(rel);
	files[nfiles].data = data;
	files[nfiles].size = data ? (size_t)st.st_size : 0;
	*size = files[nfiles].size;
	nfiles++;
	return data;
}

static int add_file_bytes(struct adac_memimg *mem, uint64_t addr, uint32_t len, uint64_t offset, const uint8_t *p,
                          uint16_t plen)
{
	char rel[ADAC_MAX_PATH_BYTES];
	size_t n = plen < sizeof rel ? plen : sizeof rel - 1;
	memcpy(rel, p, n);
	rel[n] = '\0';
	size_t size;
	const uint8_t *data = dotnet_file(rel, &size);
	if (!data || offset > size || len > size - offset)
		return 0;
	return add_region(mem, addr, data + offset, len);
}

static void add_command(struct fuzz_image *img, const uint8_t *bytes, uint16_t len)
{
	if (img->ncmds >= FUZZ_IMAGE_MAX_COMMANDS || len == 0)
		return;
	struct fuzz_command *c = &img->cmds[img->ncmds];
	c->words = malloc((size_t)len + 1);
	if (!c->words)
		return;
	memcpy(c->words, bytes, len);
	c->words[len] = '\0';
	c->argc = 0;
	for (size_t at = 0; at <= len && c->argc < (int)FUZZ_IMAGE_MAX_ARGS; at += strlen(c->words + at) + 1)
		c->argv[c->argc++] = c->words + at;
	c->argv[c->argc] = NULL;
	img->ncmds++;
}

int fuzz_image_open(const uint8_t *data, size_t size, struct fuzz_image *img)
{
	memset(img, 0, sizeof *img);
	struct adac_memimg *mem = adac_memimg_new();
	if (!mem)
		return -1;
	struct adac_cursor c = adac_cursor_make(data, size);
	size_t nregions = 0;
	uint8_t tag;
	int rc = 0;
	while (rc == 0 && adac_cursor_u8(&c, &tag) == 0) {
		uint64_t a, b;
		uint32_t len32;
		uint16_t len16;
		const uint8_t *p = NULL;
		if (tag == 'R' && adac_cursor_u64(&c, &a) == 0 && adac_cursor_u32(&c, &len32) == 0 &&
		    take(&c, len32, &p) == 0 && nregions++ < FUZZ_IMAGE_MAX_REGIONS) {
			rc = add_region(mem, a, p, len32);
		} else if (tag == 'M' && adac_cursor_u64(&c, &a) == 0 && adac_cursor_u64(&c, &b) == 0 &&
		           adac_cursor_u16(&c, &len16) == 0 && take(&c, len16, &p) == 0) {
			char path[ADAC_MAX_PATH_BYTES];
			size_t n = len16 < sizeof path ? len16 : sizeof path - 1;
			memcpy(path, p, n);
			path[n] = '\0';
			rc = adac_memimg_add_module(mem, path, a, b);
		} else if (tag == 'T' && adac_cursor_u64(&c, &a) == 0 &&
		           take(&c, ADAC_REG_COUNT * 8u, &p) == 0) {
			struct adac_regs regs;
			for (unsigned r = 0; r < ADAC_REG_COUNT; r++)
				regs.r[r] = adac_get_u64(p, r * 8u);
			rc = adac_memimg_add_thread(mem, a, &regs);
		} else if (tag == 'F' && adac_cursor_u64(&c, &a) == 0 && adac_cursor_u32(&c, &len32) == 0 &&
		           adac_cursor_u64(&c, &b) == 0 && adac_cursor_u16(&c, &len16) == 0 && take(&c, len16, &p) == 0 &&
		           nregions++ < FUZZ_IMAGE_MAX_REGIONS) {
			rc = add_file_bytes(mem, a, len32, b, p, len16);
		} else if (tag == 'C' && adac_cursor_u16(&c, &len16) == 0 && take(&c, len16, &p) == 0) {
			add_command(img, p, len16);
		} else {
			break;
		}
	}
	struct adac_error err = {0};
	img->t = adac_target_open_memory(mem, &err); /* owns mem, also on failure */
	img->mem = img->t ? mem : NULL;
	if (!img->t || rc != 0) {
		fuzz_image_close(img);
		return -1;
	}
	return 0;
}

void fuzz_image_close(struct fuzz_image *img)
{
	if (img->t)
		adac_target_close(img->t);
	for (size_t i = 0; i < img->ncmds; i++)
		free(img->cmds[i].words);
	memset(img, 0, sizeof *img);
}

struct text {
	char *p;
	size_t len, cap;
	bool overflow;
	unsigned asked;     /* times the command asked whether the user interrupted it */
	unsigned stop_at;   /* the question answered yes (0: none) */
};

#define MAX_OUTPUT (64u << 20)

static void text_write(void *ctx, const char *s, size_t len)
{
	struct text *t = ctx;
	if (t->overflow || len > MAX_OUTPUT - t->len) {
		t->overflow = true;
		return;
	}
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + len + 1)
			cap *= 2;
		char *grown = realloc(t->p, cap);
		if (!grown) {
			t->overflow = true;
			return;
		}
		t->p = grown;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, len);
	t->len += len;
	t->p[t->len] = '\0';
}

static bool text_interrupted(void *ctx)
{
	struct text *t = ctx;
	return ++t->asked == t->stop_at;
}

/* The command once into out; its return code. A failure has a code and a one-line message. */
static int run_once(struct adac_target *t, int argc, char **argv, struct text *out, struct adac_error *err)
{
	struct adac_out sink = {.write = text_write, .ctx = out, .interrupted = text_interrupted};
	int rc = adac_command_run(t, ADAC_FRONTEND_CLI, argc, argv, &sink, err);
	if (rc != 0 && (err->code == ADAC_E_OK || err->msg[0] == '\0' || strchr(err->msg, '\n')))
		__builtin_trap();
	return rc;
}

void fuzz_run_command(struct adac_target *t, int argc, char **argv)
{
	struct text out = {0};
	struct adac_error err = {0};
	int rc = run_once(t, argc, argv, &out, &err);
	/* What the command printed is text; with --json a JSON document. */
	if (out.len && strlen(out.p) != out.len)
		__builtin_trap();
	bool json = false;
	for (int i = 1; i < argc; i++)
		json |= strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0;
	if (rc == 0 && json && !out.overflow) {
		json_error_t jerr;
		json_t *doc = json_loadb(out.p ? out.p : "", out.len, 0, &jerr);
		if (!doc)
			__builtin_trap();
		json_decref(doc);
	}
	if (getenv("ADAC_FUZZ_SHOW")) /* what a seed does, when making or checking one */
		fprintf(stderr, "%s%s%s%s\n", out.p ? out.p : "", rc ? "error: " : "", rc ? err.msg : "",
		        out.overflow ? "(output cut)" : "");
	/* Interrupted at its middle question, the same command fails with ADAC_E_INTERRUPTED, and
	 * what it printed is the start of what it printed whole. */
	if (out.asked) {
		struct text cut = {.stop_at = out.asked / 2 + 1};
		struct adac_error cut_err = {0};
		int cut_rc = run_once(t, argc, argv, &cut, &cut_err);
		if (cut.asked >= cut.stop_at && (cut_rc == 0 || cut_err.code != ADAC_E_INTERRUPTED))
			__builtin_trap();
		if (rc == 0 && !out.overflow && !cut.overflow &&
		    (cut.len > out.len || (cut.len && memcmp(cut.p, out.p, cut.len) != 0)))
			__builtin_trap();
		free(cut.p);
	}
	free(out.p);
}
