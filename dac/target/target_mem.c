/* target_mem.c - the "memory" backend: regions of host buffers at chosen target addresses. */
#include "target/target_mem.h"

#include <stdlib.h>
#include <string.h>

struct region {
	uint64_t addr;
	size_t len;
	uint8_t *data;
};

struct mem_thread {
	uint64_t tid;
	struct adac_regs regs;
};

struct adac_memimg {
	struct region *regions;
	size_t nregions;
	struct adac_module *mods;
	size_t nmods;
	struct mem_thread *threads;
	size_t nthreads;
	bool no_view;
};

struct adac_memimg *adac_memimg_new(void) { return calloc(1, sizeof(struct adac_memimg)); }

int adac_memimg_add(struct adac_memimg *img, uint64_t addr, const void *data, size_t len)
{
	struct region *grown = realloc(img->regions, (img->nregions + 1) * sizeof *grown);
	if (!grown)
		return -1;
	img->regions = grown;
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		return -1;
	memcpy(copy, data, len);
	img->regions[img->nregions++] = (struct region){addr, len, copy};
	return 0;
}

void adac_memimg_set_view(struct adac_memimg *img, bool view) { img->no_view = !view; }

int adac_memimg_add_module(struct adac_memimg *img, const char *path, uint64_t base, uint64_t end)
{
	struct adac_module *grown = realloc(img->mods, (img->nmods + 1) * sizeof *grown);
	if (!grown)
		return -1;
	img->mods = grown;
	memset(&img->mods[img->nmods], 0, sizeof *grown);
	img->mods[img->nmods].path = strdup(path);
	img->mods[img->nmods].base = base;
	img->mods[img->nmods].end = end;
	img->nmods++;
	return 0;
}

int adac_memimg_add_thread(struct adac_memimg *img, uint64_t tid, const struct adac_regs *regs)
{
	struct mem_thread *grown = realloc(img->threads, (img->nthreads + 1) * sizeof *grown);
	if (!grown)
		return -1;
	img->threads = grown;
	img->threads[img->nthreads].tid = tid;
	img->threads[img->nthreads].regs = *regs;
	img->nthreads++;
	return 0;
}

/* The newest region containing addr, or NULL. */
static const struct region *region_at(const struct adac_memimg *img, uint64_t addr)
{
	for (size_t i = img->nregions; i-- > 0;) {
		const struct region *r = &img->regions[i];
		if (addr >= r->addr && addr - r->addr < r->len)
			return r;
	}
	return NULL;
}

static int64_t mem_read(void *impl, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	(void)err;
	struct adac_memimg *img = impl;
	size_t done = 0;
	while (done < len) {
		const struct region *r = region_at(img, addr + done);
		if (!r)
			break;
		size_t off = (size_t)(addr + done - r->addr);
		size_t n = r->len - off;
		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)buf + done, r->data + off, n);
		done += n;
	}
	return (int64_t)done;
}

/* The image is read-only once made: reads are safe on several threads. */
static size_t mem_read_concurrent(void *impl, uint64_t addr, void *buf, size_t len)
{
	return (size_t)mem_read(impl, addr, buf, len, NULL);
}

/* view: a region's bytes where they lie, up to the first newer region over them. */
static int mem_view(void *impl, uint64_t addr, size_t len, struct adac_target_view *v)
{
	const struct adac_memimg *img = impl;
	const struct region *r = img->no_view ? NULL : region_at(img, addr);
	if (!r)
		return -1;
	size_t off = (size_t)(addr - r->addr);
	if (len > r->len - off)
		len = r->len - off;
	for (const struct region *n = r + 1; n < img->regions + img->nregions; n++)
		if (n->addr > addr && n->addr - addr < len)
			len = (size_t)(n->addr - addr);
	v->bytes = r->data + off;
	v->len = len;
	return 0;
}

static int mem_modules(void *impl, adac_module_cb cb, void *ctx, struct adac_error *err)
{
	(void)err;
	struct adac_memimg *img = impl;
	for (size_t i = 0; i < img->nmods; i++)
		if (cb(ctx, &img->mods[i]))
			break;
	return 0;
}

static int mem_threads(void *impl, adac_thread_cb cb, void *ctx, struct adac_error *err)
{
	(void)err;
	struct adac_memimg *img = impl;
	for (size_t i = 0; i < img->nthreads; i++) {
		struct adac_thread th = {.tid = img->threads[i].tid, .index = (uint32_t)i + 1};
		if (cb(ctx, &th))
			break;
	}
	return 0;
}

static int mem_regs(void *impl, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	struct adac_memimg *img = impl;
	for (size_t i = 0; i < img->nthreads; i++)
		if (img->threads[i].tid == tid) {
			*regs = img->threads[i].regs;
			return 0;
		}
	return adac_fail(err, ADAC_E_NOT_FOUND, 0, "no thread %llu", (unsigned long long)tid);
}

static void mem_close(void *impl)
{
	struct adac_memimg *img = impl;
	if (!img)
		return;
	for (size_t i = 0; i < img->nregions; i++)
		free(img->regions[i].data);
	for (size_t i = 0; i < img->nmods; i++)
		free(img->mods[i].path);
	free(img->regions);
	free(img->mods);
	free(img->threads);
	free(img);
}

static const struct adac_target_ops mem_ops = {
	.kind = "memory",
	.read = mem_read,
	.read_concurrent = mem_read_concurrent,
	.view = mem_view,
	.modules = mem_modules,
	.threads = mem_threads,
	.regs = mem_regs,
	.close = mem_close,
};

struct adac_target *adac_target_open_memory(struct adac_memimg *img, struct adac_error *err)
{
	if (!img) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory creating a memory target");
		return NULL;
	}
	return adac_target_new(&mem_ops, img, err);
}
