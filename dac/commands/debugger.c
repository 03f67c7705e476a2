/* debugger.c - what a debugger that keeps frames and threads of its own shows for .NET code (the
 * LLDB 22 plugin's frame provider and OS plugin, plugin/lldb/asyncdac_lldb.py): a thread's frames,
 * the pending chains as threads, one awaited local as a value. JSON shapes in asyncdac.h.
 *
 * A thread's frames are the debugger's own (which it names itself), managed frames it cannot name,
 * named here (unless asyncdac's symbol file is loaded: then the debugger names them), and the async frames of the chains the thread runs: each chain right after the frame
 * of the dispatch loop that resumed it (the frame holding the loop's AsyncDispatcherInfo on its
 * stack), as Visual Studio shows an async call stack. The frames between the resumed method and
 * that loop (the resume stub, the loop itself) stay, marked artificial: they are what the thread
 * really runs, and hiding them would hide where the chain is resumed. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asyncdac.h"
#include "async/async_scan.h"
#include "async/continuation.h"
#include "async/thread_stack.h"
#include "async/task.h"
#include "base/json.h"
#include "base/grow.h"
#include "base/labels.h"
#include "base/limits.h"
#include "base/line.h"
#include "base/output.h"
#include "code/debuginfo.h"
#include "code/execution_manager.h"
#include "metadata/pdb.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "types/methoddesc.h"
#include "types/names.h"
#include "types/vtype.h"
#include "view/chain_view.h"
#include "async/locals.h"
#include "view/locals_view.h"
#include "view/value_format.h"
#include "view/value_path.h"

#define TEXT_MAX 1536u  /* one frame's display text */

/* ---- one physical frame ---- */

struct phys_list {
	struct adac_frame_sps f;
	bool failed, limit;
};

static int collect_frame(void *ctx, const struct adac_frame *f)
{
	struct phys_list *l = ctx;
	if (l->f.n == ADAC_MAX_UNWIND_FRAMES) {
		l->limit = true;
		return 1;
	}
	if (adac_frame_sps_push(&l->f, f->pc, f->sp)) {
		l->failed = true;
		return 1;
	}
	return 0;
}

/* The source line of a managed frame: the IL offset of its native offset (a caller's pc is a
 * return address: the call is the byte before it), then the PDB. false when either is unknown. */
static bool source_of(struct adac_runtime *rt, const struct adac_code_info *code, bool caller,
                      struct adac_source_line *src)
{
	const struct adac_debug_info *di;
	struct adac_method_info mi;
	if (adac_debuginfo_get(rt, code, &di, NULL) || adac_md_read(rt, code->method_desc, &mi, NULL) || !mi.token)
		return false;
	uint32_t off = (uint32_t)code->offset;
	if (caller && off > 0)
		off--;
	uint32_t source;
	uint32_t il = adac_debuginfo_il_offset(di, off, &source);
	if (il == ADAC_IL_NO_MAPPING)
		return false;
	const char *path = adac_module_path(rt, mi.module, NULL);
	return path && *path && adac_pdb_source_line(rt, path, mi.token, il, src, NULL) == 0;
}

static const char *file_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *bslash = strrchr(path, '\\');
	if (bslash && (!slash || bslash > slash))
		slash = bslash;
	return slash ? slash + 1 : path;
}

/* A managed physical frame as an entry, or NULL when pc is not managed code with a method. */
static json_t *managed_entry(struct adac_runtime *rt, uint64_t pc, bool caller)
{
	struct adac_code_info code;
	if (adac_em_find_code(rt, pc, &code, NULL) || !code.method_desc ||
	    (code.kind != ADAC_CODE_JIT && code.kind != ADAC_CODE_R2R))
		return NULL;
	const char *method = adac_method_name(rt, code.method_desc, ADAC_NAME_PARAMS, NULL);
	struct adac_method_info mi;
	if (!method || adac_md_read(rt, code.method_desc, &mi, NULL))
		return NULL;
	const char *module = adac_module_file_name(rt, mi.module, NULL);
	char text[TEXT_MAX];
	int len = snprintf(text, sizeof text, "%s`%s + 0x%llx", module ? module : "?", method,
	                   (unsigned long long)code.offset);
	struct adac_source_line src;
	if (len > 0 && (size_t)len < sizeof text && source_of(rt, &code, caller, &src))
		snprintf(text + len, sizeof text - (size_t)len, " at %s:%u", file_base(src.file), src.line);
	json_t *e = json_object();
	json_object_set_new(e, "pc", json_integer((json_int_t)pc));
	json_object_set_new(e, "function", adac_json_text(method));
	json_object_set_new(e, "display", adac_json_text(text));
	json_object_set_new(e, "kind", json_string("managed"));
	if (mi.diagnostics_hidden)
		json_object_set_new(e, "artificial", json_true());
	return e;
}

/* ---- frame identity ----
 *
 * LLDB 22.1.8 identifies a frame by (pc, CFA), and every frame it gets from a provider has CFA 0:
 * two such frames with one pc are one frame to it (a recursion: `v` after `up` reads another
 * frame's variables, and lldb-dap gives them one id). So within a thread, a pc that an earlier
 * made frame already has is shown as the next free byte after it (pc + 1, + 2, ...); the frame's
 * text keeps the true offset. */

struct pcs {
	uint64_t *key;     /* open addressing; 0: empty */
	size_t cap, n;
};

static void pcs_free(struct pcs *p)
{
	free(p->key);
	memset(p, 0, sizeof *p);
}

static bool pcs_insert(struct pcs *p, uint64_t pc)
{
	if (2 * (p->n + 1) > p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		uint64_t *key = calloc(cap, sizeof *key);
		if (!key)
			return false;
		for (size_t i = 0; i < p->cap; i++)
			for (size_t j = (p->key[i] * 0x9e3779b97f4a7c15ull) % cap; p->key[i]; j = (j + 1) % cap)
				if (!key[j]) {
					key[j] = p->key[i];
					break;
				}
		free(p->key);
		p->key = key;
		p->cap = cap;
	}
	for (size_t j = (pc * 0x9e3779b97f4a7c15ull) % p->cap;; j = (j + 1) % p->cap) {
		if (p->key[j] == pc)
			return false;
		if (!p->key[j]) {
			p->key[j] = pc;
			p->n++;
			return true;
		}
	}
}

/* The pc a made frame is given: pc itself, or the next one no earlier frame of the thread has. */
static uint64_t unique_pc(struct pcs *p, uint64_t pc)
{
	for (uint64_t u = pc; u; u++)
		if (pcs_insert(p, u))
			return u;
	return pc;  /* out of memory: shown as LLDB would, identity shared */
}

static void set_unique_pc(struct pcs *p, json_t *e)
{
	uint64_t pc = (uint64_t)json_integer_value(json_object_get(e, "pc"));
	json_object_set_new(e, "pc", json_integer((json_int_t)unique_pc(p, pc)));
}

/* ---- async frames ---- */

/* The pc an async frame is shown at: its DiagnosticIP, else its resume stub. */
static uint64_t async_pc(const struct adac_async_frame *f)
{
	return f->cont.diagnostic_ip ? f->cont.diagnostic_ip : f->cont.resume;
}

/* What the debugger shows for an async frame: "<module>`<method> + 0x<offset><where> [async]". */
#define DISPLAY_MAX (ADAC_FRAME_WHERE_MAX + TEXT_MAX)
static void async_display(const struct adac_async_frame *f, char text[DISPLAY_MAX])
{
	char where[ADAC_FRAME_WHERE_MAX];
	adac_frame_where(f->has_source, f->file, f->line, f->has_il, f->il_offset, where, sizeof where);
	if (f->method)
		snprintf(text, DISPLAY_MAX, "%s`%s + 0x%llx%s [async]", f->module ? f->module : "?", f->method,
		         (unsigned long long)(f->has_code ? f->code.offset : 0), where);
	else
		snprintf(text, DISPLAY_MAX, "<unknown method>%s [async]", where);
}

static json_t *async_entry(const struct adac_async_frame *f)
{
	char text[DISPLAY_MAX];
	async_display(f, text);
	json_t *e = json_object();
	json_object_set_new(e, "pc", json_integer((json_int_t)async_pc(f)));
	json_object_set_new(e, "function", adac_json_text(f->method ? f->method : "<unknown method>"));
	json_object_set_new(e, "display", adac_json_text(text));
	json_object_set_new(e, "kind", json_string("async"));
	json_object_set_new(e, "frame", adac_json_addr(f->cont.addr));
	return e;
}

/* Appends the shown frames of the chain at head to arr. A chain that cannot be walked adds what
 * was resolved before the problem. */
static void append_chain(struct adac_runtime *rt, uint64_t head, struct adac_frame_cache *cache, struct pcs *pcs,
                         json_t *arr)
{
	struct adac_resolved_chain v;
	if (adac_resolved_chain_build(rt, head, ADAC_MAX_CHAIN_DEPTH, cache, &v, NULL))
		return;
	for (size_t i = 0; i < v.chain.count; i++) {
		if (!adac_async_frame_shown(&v.frames[i]))
			continue;
		json_t *e = async_entry(&v.frames[i]);
		set_unique_pc(pcs, e);
		json_array_append_new(arr, e);
	}
	adac_resolved_chain_free(&v);
}

/* ---- a thread ---- */

int adac_debugger_thread(struct adac_runtime *rt, uint64_t tid, char **json, struct adac_error *err)
{
	struct phys_list l = {0};
	int rc = adac_target_frames(rt->t, tid, collect_frame, &l, err);
	if (l.failed)
		rc = adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	else if (l.limit)  /* the debugger then shows its own frames */
		rc = adac_fail(err, ADAC_E_LIMIT, 0, "thread %llu has more than ADAC_MAX_UNWIND_FRAMES (%u) frames",
		               (unsigned long long)tid, ADAC_MAX_UNWIND_FRAMES);
	if (rc) {
		adac_frame_sps_free(&l.f);
		return -1;
	}
	/* Stopped in managed code: the innermost frame is unwound from the thread's registers, which
	 * the backend reads only then (reading them costs the debugger more than the frames). Without
	 * them the debugger shows its own frames. */
	struct adac_regs regs;
	struct adac_code_info code0;
	if (l.f.n && adac_em_find_code(rt, l.f.pc[0], &code0, NULL) == 0 && code0.method_desc &&
	    adac_target_regs(rt->t, tid, &regs, err)) {
		adac_frame_sps_free(&l.f);
		adac_error_wrap(err, "thread %llu is stopped in managed code: ", (unsigned long long)tid);
		return -1;
	}
	/* The chains the thread runs, innermost dispatch loop first, each after its loop's frame. */
	struct adac_managed_thread mth;
	struct adac_thread_chain chains[ADAC_MAX_DISPATCHERS];
	size_t nchains = 0;
	if (adac_managed_thread_of(rt, tid, &mth, NULL) == 0)
		adac_thread_chains(rt, &mth, chains, &nchains, NULL); /* (those read before a problem) */
	size_t after[ADAC_MAX_DISPATCHERS];
	for (size_t d = 0; d < nchains; d++)
		after[d] = adac_thread_chain_after(&chains[d], l.f.sp, l.f.n);

	json_t *frames = json_array();
	struct adac_frame_cache *cache = adac_frame_cache_new();
	struct pcs pcs = {0};
	/* With asyncdac's symbol file loaded the debugger names managed frames itself, and its own
	 * frames keep their registers (their variables, from the file): they pass through. */
	bool named = adac_target_symbol_file_loaded(rt->t);
	for (size_t i = 0; i < l.f.n; i++) {
		json_t *e = named ? NULL : managed_entry(rt, l.f.pc[i], i > 0);
		bool loop = false;
		for (size_t d = 0; d < nchains; d++)
			loop = loop || after[d] == i;
		if (!e) {
			e = json_object();
			json_object_set_new(e, "input", json_integer((json_int_t)i));
		} else {
			set_unique_pc(&pcs, e);
			if (loop)
				json_object_set_new(e, "artificial", json_true());
		}
		json_array_append_new(frames, e);
		for (size_t d = 0; d < nchains; d++)
			if (after[d] == i)
				append_chain(rt, chains[d].head, cache, &pcs, frames);
	}
	pcs_free(&pcs);
	adac_frame_cache_free(cache);
	adac_frame_sps_free(&l.f);
	json_t *root = json_object();
	json_object_set_new(root, "frames", frames);
	*json = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	if (!*json)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return 0;
}

/* ---- pending chains as threads ---- */

/* A thread's name: its innermost method and its task's status. */
static void thread_name(const struct adac_async_frame *top, const char *status, char *buf, size_t size)
{
	snprintf(buf, size, "async: %s [%s]", top->method ? top->method : "<unknown method>", status);
}

/* The chains' table: each distinct async frame once (a reply for ten thousand requests parked in
 * the same few methods keeps one copy of each), its JSON made without jansson. An entry is found by
 * what its text is made of (formatted once), else by its text. */
struct entry_key {
	uint64_t pc, offset;
	const char *method, *module, *file;  /* runtime-owned: the same text at the same address */
	uint32_t line, il_offset;
	bool has_code, has_source, has_il;
};

struct entry_slot {
	bool used;
	uint64_t hash;
	struct entry_key key;  /* by_key: what it is made of */
	char *text;            /* by_text: its JSON (owned) */
	uint32_t id;
};

struct entries {
	struct entry_slot *by_key, *by_text;
	size_t cap_key, used_key, cap_text, used_text;
	struct adac_line table;  /* "[entry,entry,..." */
	uint32_t count;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
	return h ^ h >> 29;
}

/* The slot of (hash, match) in *slots, grown to keep it half empty; NULL when memory runs out. */
static struct entry_slot *entry_slot(struct entry_slot **slots, size_t *cap, size_t used, uint64_t hash,
                                     bool (*same)(const struct entry_slot *, const void *), const void *what)
{
	if ((used + 1) * 2 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct entry_slot *n = calloc(ncap, sizeof *n);
		if (!n)
			return NULL;
		for (size_t i = 0; i < *cap; i++) {
			if (!(*slots)[i].used)
				continue;
			size_t j = (*slots)[i].hash & (ncap - 1);
			while (n[j].used)
				j = (j + 1) & (ncap - 1);
			n[j] = (*slots)[i];
		}
		free(*slots);
		*slots = n;
		*cap = ncap;
	}
	size_t j = hash & (*cap - 1);
	while ((*slots)[j].used && !((*slots)[j].hash == hash && same(&(*slots)[j], what)))
		j = (j + 1) & (*cap - 1);
	return &(*slots)[j];
}

static bool same_key(const struct entry_slot *e, const void *k) { return memcmp(&e->key, k, sizeof e->key) == 0; }
static bool same_text(const struct entry_slot *e, const void *t) { return strcmp(e->text, t) == 0; }

/* An async frame's entry as JSON: {"pc":..,"function":..,"display":..,"kind":"async"}. */
static void entry_text(const struct adac_async_frame *f, struct adac_line *b)
{
	char text[DISPLAY_MAX];
	async_display(f, text);
	adac_line_put(b, "{\"pc\":");
	adac_line_u64(b, async_pc(f));
	adac_line_put(b, ",\"function\":");
	adac_line_json_str(b, f->method ? f->method : "<unknown method>");
	adac_line_put(b, ",\"display\":");
	adac_line_json_str(b, text);
	adac_line_put(b, ",\"kind\":\"async\"}");
}

/* The id of frame f's entry, added to the table when new; UINT32_MAX when memory runs out. */
static uint32_t entry_id(struct entries *t, const struct adac_async_frame *f)
{
	struct entry_key k;
	memset(&k, 0, sizeof k); /* (padding too: keys are compared whole) */
	k.pc = async_pc(f);
	k.offset = f->has_code ? f->code.offset : 0;
	k.method = f->method;
	k.module = f->module;
	k.file = f->file;
	k.line = f->line;
	k.il_offset = f->il_offset;
	k.has_code = f->has_code;
	k.has_source = f->has_source;
	k.has_il = f->has_il;
	/* A name kept in the frame itself is not at a lasting address: found by its text. */
	bool keyed = f->method != f->name_buf;
	uint64_t hk = hash_bytes(&k, sizeof k);
	struct entry_slot *ek = keyed ? entry_slot(&t->by_key, &t->cap_key, t->used_key, hk, same_key, &k) : NULL;
	if (keyed && !ek)
		return UINT32_MAX;
	if (ek && ek->used)
		return ek->id;
	char buf[1024];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	entry_text(f, &b);
	adac_line_put_n(&b, "", 0);
	uint32_t id = UINT32_MAX;
	if (!b.nomem) {
		b.p[b.len] = '\0';
		uint64_t ht = hash_bytes(b.p, b.len);
		struct entry_slot *et = entry_slot(&t->by_text, &t->cap_text, t->used_text, ht, same_text, b.p);
		if (et && et->used) {
			id = et->id;
		} else if (et && (et->text = strdup(b.p))) {
			et->used = true;
			et->hash = ht;
			et->id = id = t->count++;
			t->used_text++;
			adac_line_put(&t->table, id ? "," : "");
			adac_line_put_n(&t->table, b.p, b.len);
		}
	}
	adac_line_free(&b);
	if (ek && id != UINT32_MAX) {
		*ek = (struct entry_slot){.used = true, .hash = hk, .key = k, .id = id};
		t->used_key++;
	}
	return id;
}

static void entries_free(struct entries *t)
{
	for (size_t i = 0; i < t->cap_text; i++)
		free(t->by_text[i].text);
	free(t->by_text);
	free(t->by_key);
	adac_line_free(&t->table);
}

/* The chains made threads: their frames' entries (each once) and the threads' text. */
struct chain_threads {
	struct adac_async_scan scan;
	struct adac_frame_cache *cache;
	struct entries t;
	struct adac_line threads;
	size_t shown;
	bool failed;
};

static const char *chain_status(const struct adac_async_scan *scan, const struct adac_scan_chain *ch)
{
	return ch->task_index != ADAC_SCAN_NONE ? adac_task_status(scan->tasks[ch->task_index].state_flags) : "no task";
}

/* Chain c's stack (resolved in v) as text in shape: its task's status and its shown frames' pcs (a
 * frame's pc determines its entry), what tells distinct stacks apart. false when it shows no frame. */
static bool chain_shape(const struct chain_threads *ct, size_t c, const struct adac_resolved_chain *v,
                        struct adac_line *shape)
{
	shape->len = 0;
	adac_line_put(shape, chain_status(&ct->scan, &ct->scan.chains[c]));
	bool any = false;
	for (size_t i = 0; i < v->chain.count; i++) {
		if (!adac_async_frame_shown(&v->frames[i]))
			continue;
		adac_line_put(shape, ",");
		adac_line_u64(shape, async_pc(&v->frames[i]));
		any = true;
	}
	adac_line_put_n(shape, "", 0);  /* (room for the NUL) */
	if (!shape->nomem)
		shape->p[shape->len] = '\0';
	return any;
}

/* Chain c (resolved in v) as a thread, appended to ct->threads; false when it shows no frame. Running
 * chains are on their threads, stale ones were left behind by a chain that resumed: neither is a
 * thread (resolve_chain). */
static bool chain_thread(struct chain_threads *ct, size_t c, const struct adac_resolved_chain *v)
{
	const struct adac_scan_chain *ch = &ct->scan.chains[c];
	struct adac_line *b = &ct->threads;
	size_t mark = b->len;
	const struct adac_async_frame *top = NULL;
	struct pcs pcs = {0};
	for (size_t i = 0; i < v->chain.count && !ct->failed; i++) {
		const struct adac_async_frame *f = &v->frames[i];
		if (!adac_async_frame_shown(f))
			continue;
		uint32_t id = entry_id(&ct->t, f);
		ct->failed = id == UINT32_MAX;
		adac_line_put(b, top ? ",[" : b->len ? ",{\"frames\":[[" : "{\"frames\":[[");
		top = top ? top : f;
		adac_line_u64(b, id);
		adac_line_put(b, ",\"");
		adac_line_addr(b, f->cont.addr);
		adac_line_put(b, "\",");
		adac_line_u64(b, unique_pc(&pcs, async_pc(f)));
		adac_line_put(b, "]");
	}
	pcs_free(&pcs);
	if (!top) {
		b->len = mark;
		return false;
	}
	char name[TEXT_MAX];
	thread_name(top, chain_status(&ct->scan, ch), name, sizeof name);
	uint64_t task = adac_scan_chain_task(&ct->scan, (uint32_t)c);
	adac_line_put(b, "],\"tid\":");
	adac_line_u64(b, task ? task : ch->head);
	adac_line_put(b, ",\"name\":");
	adac_line_json_str(b, name);
	adac_line_put(b, "}");
	ct->shown++;
	return true;
}

/* Chain c resolved into v; false when it is no thread's (running, stale, unreadable). */
static bool resolve_chain(struct chain_threads *ct, size_t c, struct adac_runtime *rt, struct adac_resolved_chain *v)
{
	const struct adac_scan_chain *ch = &ct->scan.chains[c];
	if (ch->root == ADAC_ROOT_RUNNING || ch->root == ADAC_ROOT_STALE)
		return false;
	return adac_resolved_chain_build(rt, ch->head, ADAC_MAX_CHAIN_DEPTH, ct->cache, v, NULL) == 0;
}

/* What was left out, said where it would have been: a thread among the debugger's, its one frame
 * telling what to do. It has no pc (null; the adapter gives LLDB its invalid address: no address is
 * shown for it, nothing disassembled there). */
static void more_thread(struct chain_threads *ct, size_t more, size_t max_threads, size_t stacks)
{
	char name[TEXT_MAX], text[TEXT_MAX], which[128];
	if (stacks <= max_threads)
		snprintf(which, sizeof which, "one of each of the %zu distinct stacks among them", stacks);
	else
		snprintf(which, sizeof which, "one of each of the first %zu of the %zu distinct stacks", max_threads, stacks);
	snprintf(name, sizeof name, "async: %zu more pending chains, not shown as threads", more);
	snprintf(text, sizeof text,
	         "%zu more pending chains are not shown as threads: %zu are, %s ('async threads enable --max <n>' "
	         "changes that; 'async ps --coalesce' groups every chain)",
	         more, max_threads, which);
	struct entries *t = &ct->t;
	adac_line_put(&t->table, t->count ? "," : "");
	adac_line_put(&t->table, "{\"pc\":null,\"function\":");
	adac_line_json_str(&t->table, text);
	adac_line_put(&t->table, ",\"kind\":\"note\",\"artificial\":true}");
	struct adac_line *b = &ct->threads;
	adac_line_put(b, b->len ? ",{\"frames\":[[" : "{\"frames\":[[");
	adac_line_u64(b, t->count++);
	adac_line_put(b, ",null,null]],\"tid\":");
	adac_line_u64(b, ADAC_DEBUGGER_MORE_TID);
	adac_line_put(b, ",\"name\":");
	adac_line_json_str(b, name);
	adac_line_put(b, "}");
}

int adac_debugger_chains(struct adac_runtime *rt, size_t max_threads, struct adac_out *out, char **json,
                         struct adac_error *err)
{
	struct chain_threads ct = {0};
	if (adac_async_scan(rt, out, 0, &ct.scan, err))
		return -1;
	ct.cache = adac_frame_cache_new();
	ct.failed = !ct.cache;
	adac_line_put(&ct.t.table, "{\"table\":[");
	/* Every chain with a frame is counted, and the first of each distinct stack kept (reps): past
	 * the cap those are threads first, so that no stack is left out for being rare. The first
	 * chains up to the cap are threads meanwhile: when they hold one of each stack, that is all. */
	struct adac_labels shapes = {0};
	size_t *reps = NULL, nreps = 0, cap_reps = 0, with_frames = 0, last_shown = 0;
	struct adac_line shape = {0};
	for (size_t c = 0; c < ct.scan.chain_count && !ct.failed; c++) {
		if (c % 1024 == 0)
			adac_progress(out, "resolving frames", c, ct.scan.chain_count);
		struct adac_resolved_chain v;
		if (!resolve_chain(&ct, c, rt, &v))
			continue;
		if (chain_shape(&ct, c, &v, &shape)) {
			with_frames++;
			uint32_t id = shape.nomem ? UINT32_MAX : adac_label_id(&shapes, shape.p);
			ct.failed = ct.failed || id == UINT32_MAX ||
			            (id == nreps && adac_grow((void **)&reps, &cap_reps, nreps + 1, sizeof *reps, 64));
			if (!ct.failed && id == nreps)
				reps[nreps++] = c;
			if (!max_threads || ct.shown < max_threads) {
				chain_thread(&ct, c, &v);
				last_shown = c;
			}
		}
		adac_resolved_chain_free(&v);
	}
	adac_line_free(&shape);
	adac_labels_free(&shapes);
	size_t more = with_frames - ct.shown;
	if (more && !ct.failed && nreps && reps[nreps - 1] > last_shown) {
		/* A stack the first chains do not hold: one chain of each stack (of the first max_threads
		 * stacks), the first chains besides them up to the cap, in the chains' order. */
		ct.threads.len = 0;
		ct.shown = 0;
		size_t take = nreps < max_threads ? nreps : max_threads, fill = max_threads - take, r = 0;
		for (size_t c = 0; c < ct.scan.chain_count && !ct.failed && (r < take || fill); c++) {
			bool rep = r < take && reps[r] == c;
			if (!rep && !fill)
				continue;
			struct adac_resolved_chain v;
			if (!resolve_chain(&ct, c, rt, &v))
				continue;
			if (chain_thread(&ct, c, &v)) {
				r += rep;
				fill -= !rep;
			}
			adac_resolved_chain_free(&v);
		}
	}
	free(reps);
	adac_progress(out, NULL, 0, 0);
	adac_frame_cache_free(ct.cache);
	adac_async_scan_free(&ct.scan);
	if (more && !ct.failed)
		more_thread(&ct, more, max_threads, nreps);
	struct entries *t = &ct.t;
	adac_line_put(&t->table, "],\"more\":");
	adac_line_u64(&t->table, more);
	adac_line_put(&t->table, ",\"threads\":[");
	adac_line_put_n(&t->table, ct.threads.p ? ct.threads.p : "", ct.threads.len);
	adac_line_put(&t->table, "]}");
	adac_line_put_n(&t->table, "", 0);
	bool failed = ct.failed || t->table.nomem || ct.threads.nomem;
	if (!failed)
		t->table.p[t->table.len] = '\0';
	*json = failed ? NULL : t->table.p;
	if (!failed)
		t->table.p = NULL;
	adac_line_free(&ct.threads);
	entries_free(t);
	if (!*json)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	return 0;
}

/* ---- a variable of an async frame ---- */

/* The LLDB basic type a primitive is shown as (LP64: long is 64-bit), NULL for none. */
static const char *basic_type(uint8_t elem)
{
	switch (elem) {
	case ADAC_ELEM_BOOLEAN: return "Bool";
	case ADAC_ELEM_CHAR: return "Char16";
	case ADAC_ELEM_I1: return "SignedChar";
	case ADAC_ELEM_U1: return "UnsignedChar";
	case ADAC_ELEM_I2: return "Short";
	case ADAC_ELEM_U2: return "UnsignedShort";
	case ADAC_ELEM_I4: return "Int";
	case ADAC_ELEM_U4: return "UnsignedInt";
	case ADAC_ELEM_I8: case ADAC_ELEM_I: return "Long";
	case ADAC_ELEM_U8: case ADAC_ELEM_U: return "UnsignedLong";
	case ADAC_ELEM_R4: return "Float";
	case ADAC_ELEM_R8: return "Double";
	default: return NULL;
	}
}

static json_t *hex_bytes(const uint8_t *b, size_t n)
{
	char *hex = malloc(2 * n + 1);
	if (!hex)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	json_t *j = json_stringn(hex, 2 * n);
	free(hex);
	return j;
}

static json_t *basic_reply(const char *name, const char *type, const char *basic, const uint8_t *bytes, size_t size,
                           uint64_t address, uint32_t count)
{
	json_t *r = json_object();
	json_object_set_new(r, "name", adac_json_text(name));
	json_object_set_new(r, "type", adac_json_text(type ? type : "?"));
	json_object_set_new(r, "basic", adac_json_text(basic));
	if (bytes)
		json_object_set_new(r, "bytes", hex_bytes(bytes, size));
	if (address)
		json_object_set_new(r, "address", json_integer((json_int_t)address));
	if (count)
		json_object_set_new(r, "count", json_integer(count));
	return r;
}

/* The object a reference value refers to, 0 for null. */
static uint64_t referent(struct adac_runtime *rt, const struct adac_value_part *p)
{
	unsigned ps = adac_target_ptr_size(rt->t);
	uint64_t obj = 0;
	memcpy(&obj, p->bytes, ps < sizeof obj ? ps : sizeof obj);
	return obj;
}

/* A string, or a one-dimensional array of primitives, as an array of an LLDB basic type where its
 * elements are in the target (LLDB reads and shows them itself: u"text", {1, 2, 3}); NULL when the
 * reference is not one, null, empty or too large to show so. */
static json_t *elements_reply(struct adac_runtime *rt, const char *name, const struct adac_value_part *p)
{
	uint64_t obj = referent(rt, p), first;
	uint32_t count;
	struct adac_vtype et;
	if (!obj || adac_value_elements(rt, obj, &first, &count, &et, NULL))
		return NULL;
	const char *basic = et.kind == ADAC_VK_PRIM && !et.is_enum ? basic_type(et.elem) : NULL;
	json_t *r = NULL;
	if (basic && count && (uint64_t)count * et.size <= ADAC_MAX_VALUE_BYTES)
		r = basic_reply(name, p->type.name, basic, NULL, 0, first, count);
	adac_vtype_free(&et);
	return r;
}

/* Whether the object at obj is of class t exactly: an object of another class (a derived one, a
 * boxed value in an object) has fields t does not describe, and null has none; their text says
 * more. */
static bool of_static_type(struct adac_runtime *rt, uint64_t obj, const struct adac_vtype *t)
{
	uint64_t mt;
	if (!obj || adac_object_mt(rt, obj, &mt, NULL))
		return false;
	if (t->mt)
		return mt == t->mt;
	struct adac_vtype exact;
	if (adac_vtype_from_th(rt, mt, &exact, NULL))
		return false;
	bool same = exact.name && strcmp(exact.name, t->name) == 0;
	adac_vtype_free(&exact);
	return same;
}

/* Gives reply r what a debugger needs to build the value from target memory with the type the
 * loaded symbol file has for it (sym_types.h names types like `frame variable`; their fields then
 * expand): "symbol_type", the name, and "slot", where the value is (a reference: the reference
 * itself). A one-dimensional array whose elements are not primitives is rather its elements:
 * "elements" of "symbol_type" from "slot", as LLDB shows arrays of primitives. Enums, structs and
 * objects only, and only when their bytes are in one piece in the target (a Continuation of the
 * array layout keeps values apart). */
static int add_symbol_type(struct adac_runtime *rt, json_t *r, const struct adac_value_part *p)
{
	const struct adac_vtype *t = &p->type;
	if (!adac_target_symbol_file_loaded(rt->t) || !(t->is_enum || t->kind == ADAC_VK_STRUCT || t->kind == ADAC_VK_REF))
		return 0;
	uint64_t obj = t->kind == ADAC_VK_REF ? referent(rt, p) : 0, first;
	uint32_t count;
	struct adac_vtype et;
	if (obj && adac_value_elements(rt, obj, &first, &count, &et, NULL) == 0) {
		int rc = 0;
		if (et.name && et.name[0] && count && (uint64_t)count * et.size <= ADAC_MAX_VALUE_BYTES)
			rc = json_object_set_new(r, "symbol_type", adac_json_text(et.name)) ||
			     json_object_set_new(r, "slot", json_integer((json_int_t)first)) ||
			     json_object_set_new(r, "elements", json_integer(count));
		adac_vtype_free(&et);
		return rc;
	}
	if (!p->address || !t->name || !t->name[0] || (t->kind == ADAC_VK_REF && !of_static_type(rt, obj, t)))
		return 0;
	return json_object_set_new(r, "symbol_type", adac_json_text(t->name)) ||
	       json_object_set_new(r, "slot", json_integer((json_int_t)p->address));
}

/* A value as LLDB can build it: a primitive as an LLDB basic type (read from target memory when it
 * lives there: a value LLDB reads from memory stays right when an expression copies it), strings
 * and arrays of primitives as arrays of one; anything else (enums, structs, objects, null) as the
 * text asyncdac prints for it, an array of char, which a debugger with the symbol file's types
 * shows rather from memory with its type (add_symbol_type). */
static json_t *value_reply(struct adac_runtime *rt, const char *name, const struct adac_value_part *p,
                           struct adac_error *err)
{
	const struct adac_vtype *t = &p->type;
	const char *basic = t->kind == ADAC_VK_PRIM && !t->is_enum ? basic_type(t->elem) : NULL;
	if (basic)
		return basic_reply(name, t->name, basic, p->bytes, t->size, p->address, 0);
	json_t *r = t->kind == ADAC_VK_REF ? elements_reply(rt, name, p) : NULL;
	if (r)
		return r;
	struct adac_value_opts o;
	adac_value_opts_default(&o);
	struct adac_sig_text text = {0};
	if (adac_value_format(rt, t, p->bytes, &o, &text, NULL, err)) {
		adac_sig_text_free(&text);
		return NULL;
	}
	const char *s = adac_sig_text_str(&text);
	size_t len = strlen(s);
	r = basic_reply(name, t->name, "Char", (const uint8_t *)s, len + 1, 0, (uint32_t)len + 1);
	adac_sig_text_free(&text);
	if (r && add_symbol_type(rt, r, p)) {
		json_decref(r);
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	return r;
}

int adac_debugger_value(struct adac_runtime *rt, uint64_t frame, const char *path, char **json, struct adac_error *err)
{
	size_t name_len = path ? strcspn(path, ".[") : 0;
	if (!path || name_len == 0 || name_len >= 256)
		return adac_fail(err, ADAC_E_BAD_ARG, 0, "'%s' does not start with a variable name", path ? path : "");
	char name[256];
	memcpy(name, path, name_len);
	name[name_len] = '\0';
	struct adac_continuation c;
	if (adac_cont_read(rt, frame, &c, err))
		return -1;
	struct adac_async_frame f;
	adac_async_frame_resolve(rt, &c, &f);
	struct adac_locals l;
	if (adac_frame_locals_collect(rt, &f, &l, err))
		return -1;
	const struct adac_local *v = NULL;
	for (size_t i = 0; i < l.n && !v; i++)
		if (l.v[i].name && strcmp(l.v[i].name, name) == 0 && l.v[i].kind <= ADAC_LOCAL_LOCAL)
			v = &l.v[i];
	int rc = 0;
	json_t *r = NULL;
	struct adac_value_part part = {0};
	if (!v)
		rc = adac_fail(err, ADAC_E_NOT_FOUND, frame, "no variable named '%s' in this async frame", name);
	else if (v->error || !v->bytes)
		rc = adac_fail(err, ADAC_E_READ, v->address, "%s: %s", name, v->error ? v->error : "not readable");
	else if (adac_value_path(rt, name, &v->type, v->bytes, l.layout == ADAC_CONT_FLAT ? v->address : 0,
	                         path + name_len, &part, err) ||
	         !(r = value_reply(rt, path, &part, err)))
		rc = -1;
	adac_value_part_free(&part);
	adac_locals_free(&l);
	if (rc)
		return -1;
	*json = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	return *json ? 0 : adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
}
