/* target.c - wraps a backend with a block cache, typed reads and per-stop snapshots. */
#include "target/target.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "target/elf_image.h"
#include "target/symbols.h"

#define CACHE_BLOCK 4096u                 /* bytes per cache block (one page) */
#define CACHE_SETS 512u                   /* 4-way sets: 2048 blocks, 8 MiB at most */
#define CACHE_SETS_REOPENED 64u           /* a reopened target's (1 MiB): one thread's share of a walk */
#define CACHE_WAYS 4u
#define CACHE_RUN_MAX 16u                 /* consecutive missing blocks fetched in one backend read */
#define CACHE_BYPASS (16u * CACHE_BLOCK)  /* reads this large go straight to the backend */

struct cache_slot {
	uint64_t block;     /* block address, or UINT64_MAX when empty */
	uint32_t valid;     /* readable bytes from the block start (0..CACHE_BLOCK) */
	uint8_t *data;
};

struct adac_target {
	const struct adac_target_ops *ops;
	void *impl;
	unsigned ptr_size;
	uint64_t last_stop_id;
	struct cache_slot *slots;   /* CACHE_SETS * CACHE_WAYS */
	size_t sets;                /* of them in use (a power of two) */
	uint8_t *evict_next;        /* per set: next way to evict */
	uint8_t *run;               /* cache_fill's buffer (CACHE_RUN_MAX blocks), made on first use: the
	                             * target's own, as a backend may read through another target (the
	                             * LLDB plugin's core reader) whose fill would reuse a shared one
	                             * while this one's is being filled */
	struct adac_read_stats stats;
	struct adac_selection selection;
	struct adac_symbols *symbols;
	uint64_t symbols_generation; /* adac_target_set_symbols calls */
	unsigned runs;              /* adac_target_run_briefly calls that ran it */
	bool symbol_file_loaded;    /* the front end loaded a symbol file of managed code */
	uint64_t symbol_file_digest[2];
	char *symbol_file_said;     /* what making the loaded file said; NULL: nothing noted */
	adac_runtime_source runtime_source;  /* the front end's kept runtime, or NULL */

	struct adac_module *mods;
	size_t nmods;
	int mods_valid;

	struct adac_thread *threads;
	size_t nthreads;
	int threads_valid;
};

static void drop_snapshots(struct adac_target *t)
{
	for (size_t i = 0; i < t->nmods; i++)
		free(t->mods[i].path);
	free(t->mods);
	t->mods = NULL;
	t->nmods = 0;
	t->mods_valid = 0;
	free(t->threads);
	t->threads = NULL;
	t->nthreads = 0;
	t->threads_valid = 0;
}

void adac_target_invalidate(struct adac_target *t)
{
	memset(&t->selection, 0, sizeof t->selection);
	for (size_t i = 0; i < (size_t)CACHE_SETS * CACHE_WAYS; i++)
		t->slots[i].block = UINT64_MAX;
	drop_snapshots(t);
}

int adac_target_run_briefly(struct adac_target *t, unsigned ms, struct adac_error *err)
{
	if (!t->ops->run_briefly)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "a %s target cannot be run", t->ops->kind);
	int rc = t->ops->run_briefly(t->impl, ms, err);
	adac_target_invalidate(t); /* (after a failure too: it may have run) */
	if (rc == 0)
		t->runs++;
	return rc;
}

bool adac_target_can_run(const struct adac_target *t) { return t->ops->run_briefly != NULL; }
unsigned adac_target_runs(const struct adac_target *t) { return t->runs; }

/* Drops caches when the backend says the target ran since we last looked. */
static void sync_stop(struct adac_target *t)
{
	if (!t->ops->stop_id)
		return;
	uint64_t id = t->ops->stop_id(t->impl);
	if (id != t->last_stop_id) {
		t->last_stop_id = id;
		adac_target_invalidate(t);
	}
}

struct adac_target *adac_target_new(const struct adac_target_ops *ops, void *impl, struct adac_error *err)
{
	if (!ops || !ops->read || !ops->modules || !ops->threads || !ops->regs) {
		adac_fail(err, ADAC_E_BAD_ARG, 0, "target backend lacks a required operation");
		if (ops && ops->close)
			ops->close(impl);
		return NULL;
	}
	struct adac_target *t = calloc(1, sizeof *t);
	if (t)
		t->slots = calloc((size_t)CACHE_SETS * CACHE_WAYS, sizeof *t->slots);
	if (t)
		t->evict_next = calloc(CACHE_SETS, 1);
	if (!t || !t->slots || !t->evict_next) {
		if (t) {
			free(t->slots);
			free(t->evict_next);
		}
		free(t);
		if (ops->close)
			ops->close(impl);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory creating the target");
		return NULL;
	}
	t->ops = ops;
	t->impl = impl;
	t->ptr_size = 8;
	t->sets = CACHE_SETS;
	for (size_t i = 0; i < (size_t)CACHE_SETS * CACHE_WAYS; i++)
		t->slots[i].block = UINT64_MAX;
	if (ops->stop_id)
		t->last_stop_id = ops->stop_id(impl);
	return t;
}

void adac_target_close(struct adac_target *t)
{
	if (!t)
		return;
	drop_snapshots(t);
	for (size_t i = 0; i < (size_t)CACHE_SETS * CACHE_WAYS; i++)
		free(t->slots[i].data);
	free(t->slots);
	free(t->run);
	free(t->evict_next);
	if (t->ops->close)
		t->ops->close(t->impl);
	adac_symbols_free(t->symbols);
	free(t->symbol_file_said);
	free(t);
}

struct adac_target *adac_target_reopen(struct adac_target *t, struct adac_error *err)
{
	if (!t->ops->reopen) {
		adac_fail(err, ADAC_E_UNSUPPORTED, 0, "a %s target cannot be opened twice", t->ops->kind);
		return NULL;
	}
	struct adac_symbols *symbols = NULL;
	if (t->symbols && !(symbols = adac_symbols_new(adac_symbols_spec(t->symbols), err)))
		return NULL;
	void *impl = t->ops->reopen(t->impl, err);
	struct adac_target *n = impl ? adac_target_new(t->ops, impl, err) : NULL;
	if (!n) {
		adac_symbols_free(symbols);
		return NULL;
	}
	n->ptr_size = t->ptr_size;
	n->sets = CACHE_SETS_REOPENED;
	if (symbols)
		adac_target_set_symbols(n, symbols);
	return n;
}

void adac_target_set_symbols(struct adac_target *t, struct adac_symbols *s)
{
	if (t->ops->set_symbols)
		t->ops->set_symbols(t->impl, s);
	adac_symbols_free(t->symbols);
	t->symbols = s;
	t->symbols_generation++;
	/* Bytes that were missing may now be found. */
	for (size_t i = 0; i < (size_t)CACHE_SETS * CACHE_WAYS; i++)
		t->slots[i].block = UINT64_MAX;
}

struct adac_symbols *adac_target_symbols(const struct adac_target *t) { return t->symbols; }
uint64_t adac_target_symbols_generation(const struct adac_target *t) { return t->symbols_generation; }

const char *adac_target_origin(struct adac_target *t, uint64_t addr)
{
	return t->ops->origin ? t->ops->origin(t->impl, addr) : NULL;
}

const char *adac_target_local_path(struct adac_target *t, const char *path, char *buf, size_t size)
{
	if (t && path && t->ops->local_path && t->ops->local_path(t->impl, path, buf, size) == 0)
		return buf;
	return path;
}

const char *adac_target_module_file(struct adac_target *t, const struct adac_module *m, char *buf, size_t size)
{
	if (t->ops->module_file && t->ops->module_file(t->impl, m->base, buf, size) == 0)
		return buf;
	return adac_target_local_path(t, m->path, buf, size);
}

uint64_t adac_target_thread_of_process_tid(struct adac_target *t, uint64_t process_tid, uint64_t stack_limit,
                                           uint64_t stack_base)
{
	return t->ops->thread_of_process_tid && process_tid
	               ? t->ops->thread_of_process_tid(t->impl, process_tid, stack_limit, stack_base)
	               : process_tid;
}

const char *adac_target_kind(const struct adac_target *t) { return t->ops->kind; }
unsigned adac_target_ptr_size(const struct adac_target *t) { return t->ptr_size; }
void adac_target_set_ptr_size(struct adac_target *t, unsigned ptr_size) { t->ptr_size = ptr_size == 4 ? 4 : 8; }

static size_t set_of(const struct adac_target *t, uint64_t block)
{
	return (size_t)((block / CACHE_BLOCK) * 0x9E3779B97F4A7C15ull >> 53) & (t->sets - 1);
}

static struct cache_slot *cache_find(struct adac_target *t, uint64_t block)
{
	struct cache_slot *set = &t->slots[set_of(t, block) * CACHE_WAYS];
	for (unsigned w = 0; w < CACHE_WAYS; w++)
		if (set[w].block == block)
			return &set[w];
	return NULL;
}

static struct cache_slot *cache_claim(struct adac_target *t, uint64_t block)
{
	size_t s = set_of(t, block);
	struct cache_slot *set = &t->slots[s * CACHE_WAYS];
	struct cache_slot *slot = NULL;
	for (unsigned w = 0; w < CACHE_WAYS && !slot; w++)
		if (set[w].block == UINT64_MAX)
			slot = &set[w];
	if (!slot) {
		slot = &set[t->evict_next[s]];
		t->evict_next[s] = (uint8_t)((t->evict_next[s] + 1) % CACHE_WAYS);
	}
	if (!slot->data) {
		slot->data = malloc(CACHE_BLOCK);
		if (!slot->data)
			return NULL;
	}
	slot->block = block;
	slot->valid = 0;
	return slot;
}

static int64_t backend_read(struct adac_target *t, uint64_t addr, void *buf, size_t len)
{
	struct adac_error ignored = {0};
	t->stats.backend_reads++;
	t->stats.backend_bytes += len;
	int64_t n = t->ops->read(t->impl, addr, buf, len, &ignored);
	if (n < 0)
		return 0;
	return n > (int64_t)len ? (int64_t)len : n;
}

/* Loads `count` consecutive missing blocks starting at `block` with as few backend reads as
 * possible, the first `needed` of them whatever the run gives (the others are read ahead: kept only
 * when the run holds them whole); returns the slot of the first one (claimed last, so the run
 * cannot evict it). */
static struct cache_slot *cache_fill(struct adac_target *t, uint64_t block, unsigned count, unsigned needed)
{
	if (!t->run && !(t->run = malloc((size_t)CACHE_RUN_MAX * CACHE_BLOCK)))
		return NULL;
	uint8_t *run = t->run;
	size_t got = 0;
	if (count > needed) {
		/* Pages read ahead come only from the backend's own bytes (a core's, read_concurrent),
		 * never from where it would go for missing ones (a module file, a symbol server): when
		 * those do not hold the needed pages, the needed pages alone are read. */
		t->stats.backend_reads++;
		t->stats.backend_bytes += (size_t)count * CACHE_BLOCK;
		got = t->ops->read_concurrent(t->impl, block, run, (size_t)count * CACHE_BLOCK);
		if (got < (size_t)needed * CACHE_BLOCK)
			count = needed;
	}
	if (count == needed)
		got = (size_t)backend_read(t, block, run, (size_t)count * CACHE_BLOCK);
	struct cache_slot *slot = NULL;
	for (unsigned i = count; i-- > 0;) {
		uint64_t b = block + (uint64_t)i * CACHE_BLOCK;
		if (i >= needed && got < (size_t)(i + 1) * CACHE_BLOCK)
			continue;
		slot = cache_claim(t, b);
		if (!slot)
			return NULL;
		t->stats.blocks_fetched++;
		size_t start = (size_t)i * CACHE_BLOCK;
		if (got >= start + CACHE_BLOCK) {
			memcpy(slot->data, run + start, CACHE_BLOCK);
			slot->valid = CACHE_BLOCK;
		} else if (got >= start) {
			memcpy(slot->data, run + start, got - start);
			slot->valid = (uint32_t)(got - start);
		} else {
			/* Past the short read: this block may still be readable (a gap ended the run). */
			size_t n = (size_t)backend_read(t, b, slot->data, CACHE_BLOCK);
			slot->valid = (uint32_t)n;
		}
	}
	return slot;
}

size_t adac_read_upto(struct adac_target *t, uint64_t addr, void *buf, size_t len)
{
	sync_stop(t);
	t->stats.reads++;
	if (len == 0)
		return 0;
	if (addr + len < addr)
		len = (size_t)(UINT64_MAX - addr) + 1;
	if (len >= CACHE_BYPASS)
		return (size_t)backend_read(t, addr, buf, len);

	uint8_t *out = buf;
	size_t done = 0;
	while (done < len) {
		uint64_t a = addr + done;
		uint64_t block = a & ~(uint64_t)(CACHE_BLOCK - 1);
		struct cache_slot *slot = cache_find(t, block);
		if (slot) {
			t->stats.cache_hits++;
		} else {
			/* Gather the run of missing blocks that this read still needs, and those the backend
			 * reads ahead. */
			uint64_t last = (addr + len - 1) & ~(uint64_t)(CACHE_BLOCK - 1);
			unsigned count = 1, needed,
			         ahead = !t->ops->read_concurrent ? 0 : t->ops->read_ahead < CACHE_RUN_MAX ? t->ops->read_ahead : CACHE_RUN_MAX;
			while (count < CACHE_RUN_MAX && block + (uint64_t)count * CACHE_BLOCK <= last &&
			       !cache_find(t, block + (uint64_t)count * CACHE_BLOCK))
				count++;
			needed = count;
			while (count < ahead && block + (uint64_t)count * CACHE_BLOCK > block &&
			       !cache_find(t, block + (uint64_t)count * CACHE_BLOCK))
				count++;
			slot = cache_fill(t, block, count, needed);
			if (!slot)
				return done;
		}
		size_t in_block = (size_t)(a - block);
		if (slot->valid <= in_block)
			return done;
		size_t n = slot->valid - in_block;
		if (n > len - done)
			n = len - done;
		memcpy(out + done, slot->data + in_block, n);
		done += n;
		if (slot->valid < CACHE_BLOCK && done < len)
			return done;
	}
	return done;
}

int adac_read(struct adac_target *t, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	size_t n = adac_read_upto(t, addr, buf, len);
	if (n == len)
		return 0;
	return adac_fail(err, ADAC_E_READ, addr + n, "cannot read %zu bytes at 0x%llx (got %zu)", len,
	                 (unsigned long long)addr, n);
}

bool adac_target_concurrent_reads(const struct adac_target *t) { return t->ops->read_concurrent != NULL; }

size_t adac_read_concurrent(struct adac_target *t, uint64_t addr, void *buf, size_t len)
{
	if (!t->ops->read_concurrent || addr + len < addr)
		return 0;
	size_t got = t->ops->read_concurrent(t->impl, addr, buf, len);
	return got < len ? got : len;
}

bool adac_target_view(struct adac_target *t, uint64_t addr, size_t len, struct adac_target_view *v)
{
	memset(v, 0, sizeof *v);
	if (!t->ops->view || !len || addr + len < addr || t->ops->view(t->impl, addr, len, v))
		return false;
	return true;
}

bool adac_target_view_maps(const struct adac_target *t) { return t->ops->view && t->ops->view_maps; }

void adac_target_unview(struct adac_target *t, struct adac_target_view *v)
{
	if (v->map && t->ops->unview)
		t->ops->unview(t->impl, v);
	memset(v, 0, sizeof *v);
}

#define ADAC_TYPED_READ(name, type)                                                             \
	int adac_read_##name(struct adac_target *t, uint64_t addr, type *out, struct adac_error *err) \
	{                                                                                           \
		return adac_read(t, addr, out, sizeof *out, err);                                       \
	}
ADAC_TYPED_READ(u8, uint8_t)
ADAC_TYPED_READ(u16, uint16_t)
ADAC_TYPED_READ(u32, uint32_t)
ADAC_TYPED_READ(u64, uint64_t)
#undef ADAC_TYPED_READ

int adac_read_ptr(struct adac_target *t, uint64_t addr, uint64_t *out, struct adac_error *err)
{
	if (t->ptr_size == 4) {
		uint32_t v;
		if (adac_read_u32(t, addr, &v, err))
			return -1;
		*out = v;
		return 0;
	}
	return adac_read_u64(t, addr, out, err);
}

char *adac_read_cstring(struct adac_target *t, uint64_t addr, size_t max, struct adac_error *err)
{
	char *s = malloc(max + 1);
	if (!s) {
		adac_fail(err, ADAC_E_NOMEM, addr, "out of memory reading a string at 0x%llx", (unsigned long long)addr);
		return NULL;
	}
	size_t done = 0;
	while (done < max) {
		size_t chunk = max - done < 256 ? max - done : 256;
		size_t n = adac_read_upto(t, addr + done, s + done, chunk);
		void *nul = memchr(s + done, '\0', n);
		if (nul)
			return s;
		done += n;
		if (n < chunk) {
			free(s);
			adac_fail(err, ADAC_E_READ, addr + done, "cannot read the string at 0x%llx", (unsigned long long)addr);
			return NULL;
		}
	}
	free(s);
	adac_fail(err, ADAC_E_LIMIT, addr, "string at 0x%llx is longer than %zu bytes", (unsigned long long)addr, max);
	return NULL;
}

/* ---- modules ---- */

static int cmp_map_path(const void *a, const void *b)
{
	const struct adac_file_map *x = *(const struct adac_file_map *const *)a, *y = *(const struct adac_file_map *const *)b;
	return strcmp(x->path, y->path);
}

int64_t adac_file_maps_number(struct adac_file_map *maps, size_t n)
{
	struct adac_file_map **by_path = malloc((n ? n : 1) * sizeof *by_path);
	if (!by_path)
		return -1;
	for (size_t i = 0; i < n; i++)
		by_path[i] = &maps[i];
	qsort(by_path, n, sizeof *by_path, cmp_map_path);
	size_t files = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(by_path[i]->path, by_path[i - 1]->path) != 0)
			files++;
		by_path[i]->file = files;
	}
	free(by_path);
	return n ? (int64_t)files + 1 : 0;
}

void adac_file_modules(const struct adac_file_map *maps, size_t n, size_t nfiles, uint64_t *base, uint64_t *end)
{
	for (size_t f = 0; f < nfiles; f++) {
		base[f] = UINT64_MAX;
		end[f] = 0;
	}
	for (size_t i = 0; i < n; i++) {
		size_t f = maps[i].file;
		if (maps[i].offset != 0 || base[f] != UINT64_MAX)
			continue; /* (in address order: the first offset-0 mapping is the lowest) */
		base[f] = maps[i].start;
		size_t last = i;
		while (last + 1 < n && maps[last + 1].file == f)
			last++;
		end[f] = maps[last].end;
	}
}

struct mod_collect {
	struct adac_target *t;
	struct adac_error *err;
	int failed;
};

static int collect_module(void *ctx, const struct adac_module *m)
{
	struct mod_collect *c = ctx;
	struct adac_target *t = c->t;
	if (t->nmods >= ADAC_MAX_MODULES) {
		adac_fail(c->err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_MODULES (%u) modules", ADAC_MAX_MODULES);
		c->failed = 1;
		return 1;
	}
	struct adac_module *grown = realloc(t->mods, (t->nmods + 1) * sizeof *grown);
	if (!grown) {
		adac_fail(c->err, ADAC_E_NOMEM, 0, "out of memory listing modules");
		c->failed = 1;
		return 1;
	}
	t->mods = grown;
	struct adac_module *dst = &t->mods[t->nmods];
	*dst = *m;
	dst->path = strdup(m->path ? m->path : "");
	if (!dst->path) {
		adac_fail(c->err, ADAC_E_NOMEM, 0, "out of memory listing modules");
		c->failed = 1;
		return 1;
	}
	t->nmods++;
	return 0;
}

static int cmp_module(const void *a, const void *b)
{
	const struct adac_module *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

static int elf_read(void *ctx, uint64_t addr, void *buf, size_t len, struct adac_error *err)
{
	return adac_read(ctx, addr, buf, len, err);
}

int adac_target_modules(struct adac_target *t, const struct adac_module **mods, size_t *count,
                        struct adac_error *err)
{
	sync_stop(t);
	if (!t->mods_valid) {
		for (size_t i = 0; i < t->nmods; i++)
			free(t->mods[i].path);
		t->nmods = 0;
		struct mod_collect c = {t, err, 0};
		if (t->ops->modules(t->impl, collect_module, &c, err) || c.failed)
			return adac_fail(err, ADAC_E_IO, 0, "cannot list the target's modules");
		if (t->nmods)
			qsort(t->mods, t->nmods, sizeof *t->mods, cmp_module);
		struct adac_elf_mem mem = {elf_read, t};
		for (size_t i = 0; i < t->nmods; i++)
			if (t->mods[i].build_id_len == 0)
				adac_elf_build_id(&mem, t->mods[i].base, t->mods[i].build_id, &t->mods[i].build_id_len);
		t->mods_valid = 1;
	}
	*mods = t->mods;
	*count = t->nmods;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

const struct adac_module *adac_target_find_module(struct adac_target *t, const char *basename,
                                                  struct adac_error *err)
{
	const struct adac_module *mods;
	size_t n;
	if (adac_target_modules(t, &mods, &n, err))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strcmp(base_name(mods[i].path), basename) == 0)
			return &mods[i];
	adac_fail(err, ADAC_E_NOT_FOUND, 0, "no module named %s in the target", basename);
	return NULL;
}

const struct adac_module *adac_target_module_at(struct adac_target *t, uint64_t addr)
{
	const struct adac_module *mods;
	size_t n;
	if (adac_target_modules(t, &mods, &n, NULL))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (addr >= mods[i].base && addr < mods[i].end)
			return &mods[i];
	return NULL;
}

int adac_target_find_symbol(struct adac_target *t, const struct adac_module *m, const char *name,
                            uint64_t *addr, struct adac_error *err)
{
	if (t->ops->find_symbol)
		return t->ops->find_symbol(t->impl, m, name, addr, err);
	struct adac_elf_mem mem = {elf_read, t};
	return adac_elf_find_dynsym(&mem, m->base, name, addr, err);
}

/* ---- threads ---- */

struct thread_collect {
	struct adac_target *t;
	struct adac_error *err;
	int failed;
};

static int collect_thread(void *ctx, const struct adac_thread *th)
{
	struct thread_collect *c = ctx;
	struct adac_target *t = c->t;
	if (t->nthreads >= ADAC_MAX_THREADS) {
		adac_fail(c->err, ADAC_E_LIMIT, 0, "more than ADAC_MAX_THREADS (%u) threads", ADAC_MAX_THREADS);
		c->failed = 1;
		return 1;
	}
	struct adac_thread *grown = realloc(t->threads, (t->nthreads + 1) * sizeof *grown);
	if (!grown) {
		adac_fail(c->err, ADAC_E_NOMEM, 0, "out of memory listing threads");
		c->failed = 1;
		return 1;
	}
	t->threads = grown;
	t->threads[t->nthreads++] = *th;
	return 0;
}

int adac_target_threads(struct adac_target *t, const struct adac_thread **threads, size_t *count,
                        struct adac_error *err)
{
	sync_stop(t);
	if (!t->threads_valid) {
		t->nthreads = 0;
		struct thread_collect c = {t, err, 0};
		if (t->ops->threads(t->impl, collect_thread, &c, err) || c.failed)
			return adac_fail(err, ADAC_E_IO, 0, "cannot list the target's threads");
		t->threads_valid = 1;
	}
	*threads = t->threads;
	*count = t->nthreads;
	return 0;
}

const char *adac_reg_name(unsigned reg)
{
	static const char *const names[ADAC_REG_COUNT] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
		"rip", "fs_base",
	};
	return reg < ADAC_REG_COUNT ? names[reg] : "?";
}

int adac_target_regs(struct adac_target *t, uint64_t tid, struct adac_regs *regs, struct adac_error *err)
{
	sync_stop(t);
	memset(regs, 0, sizeof *regs);
	return t->ops->regs(t->impl, tid, regs, err);
}

int adac_target_frames(struct adac_target *t, uint64_t tid, adac_frame_cb cb, void *ctx, struct adac_error *err)
{
	sync_stop(t);
	if (!t->ops->frames)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "the %s target cannot unwind threads", t->ops->kind);
	return t->ops->frames(t->impl, tid, cb, ctx, err);
}

struct adac_selection *adac_target_selection(struct adac_target *t)
{
	sync_stop(t);
	return &t->selection;
}

void adac_target_set_runtime_source(struct adac_target *t, adac_runtime_source source) { t->runtime_source = source; }
adac_runtime_source adac_target_runtime_source(const struct adac_target *t) { return t->runtime_source; }

uint64_t adac_target_selected_thread(struct adac_target *t)
{
	return t->ops->selected_thread ? t->ops->selected_thread(t->impl) : 0;
}

bool adac_target_can_load_symbols(const struct adac_target *t)
{
	return t->ops->load_symbols != NULL && t->ops->symbols_path != NULL;
}

int adac_target_symbols_path(struct adac_target *t, char *buf, size_t size, struct adac_error *err)
{
	if (!adac_target_can_load_symbols(t))
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "this front end cannot load symbol files (write one with -o)");
	return t->ops->symbols_path(t->impl, buf, size, err);
}

int adac_target_load_symbols(struct adac_target *t, char *path, size_t size, struct adac_error *err)
{
	if (!adac_target_can_load_symbols(t))
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0, "this front end cannot load symbol files (write one with -o)");
	free(t->symbol_file_said);
	t->symbol_file_said = NULL;
	if (t->ops->load_symbols(t->impl, path, size, err))
		return -1;
	t->symbol_file_loaded = true;
	return 0;
}

bool adac_target_symbol_file_loaded(const struct adac_target *t) { return t->symbol_file_loaded; }

void adac_target_note_symbol_file(struct adac_target *t, const uint64_t digest[2], const char *said)
{
	free(t->symbol_file_said);
	t->symbol_file_said = t->symbol_file_loaded ? strdup(said) : NULL;
	memcpy(t->symbol_file_digest, digest, sizeof t->symbol_file_digest);
}

const char *adac_target_symbol_file_noted(const struct adac_target *t, const uint64_t digest[2])
{
	return t->symbol_file_said && memcmp(t->symbol_file_digest, digest, sizeof t->symbol_file_digest) == 0
	           ? t->symbol_file_said
	           : NULL;
}

void adac_target_stats(const struct adac_target *t, struct adac_read_stats *out) { *out = t->stats; }
void adac_target_reset_stats(struct adac_target *t) { memset(&t->stats, 0, sizeof t->stats); }
