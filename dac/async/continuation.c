/* continuation.c - the Continuation class, its layout and flags; reads continuations and walks
 * their chains. */
#include "async/continuation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/task.h"
#include "base/addr_map.h"
#include "base/arena.h"
#include "base/cursor.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define MT_CACHE_SIZE 256u     /* verdicts per MethodTable; a chain uses a handful of MTs */
#define RI_CACHE_SIZE 256u     /* ResumeInfos read: one per suspension point, shared by its chains */
#define HEADER_MAX 64u         /* bytes of the fields read per continuation (checked at init) */
#define CONT_NS "System.Runtime.CompilerServices"

/* Flat layout fields, from the descriptor's ContinuationObject and AsyncResumeInfo types. */
#define FLAT_FIELDS(X)                                         \
	X(CONT_NEXT, "ContinuationObject", "Next", 8)              \
	X(CONT_RESUME_INFO, "ContinuationObject", "ResumeInfo", 8) \
	X(CONT_STATE, "ContinuationObject", "State", 4)            \
	X(RI_DIAGNOSTIC_IP, "AsyncResumeInfo", "DiagnosticIP", 8)

enum {
#define X(id, type, field, width) F_##id,
	FLAT_FIELDS(X)
#undef X
	F_COUNT
};

static const struct adac_field_spec flat_specs[F_COUNT] = {
#define X(id, type, field, width) {type, field, width, true},
	FLAT_FIELDS(X)
#undef X
};

struct mt_verdict {
	uint64_t mt;
	bool is_continuation;
};

struct cont_state {
	struct adac_cont_layout layout;
	const struct adac_object_layout *object;
	struct mt_verdict verdicts[MT_CACHE_SIZE];
	struct {                       /* a ResumeInfo's Resume and DiagnosticIP, by its address (the
	                                * runtime's data, unchanged while it is stopped; dropped with
	                                * this state when the process ran) */
		uint64_t addr, resume, diagnostic_ip;
	} infos[RI_CACHE_SIZE];
	bool flags_tried;              /* ContinuationFlags, read on first use: */
	struct adac_error flags_why;   /* why they cannot be decoded */
	struct adac_cont_flags flags;
};

static void free_state(void *p) { free(p); }

/* The Continuation class: the runtime's own record when it has made a layout subtype (flat
 * layout), else the class CoreLib has loaded. .NET 10 records none, so there CoreLib must answer;
 * on the flat layout an unreadable CoreLib only means no class (nothing is a continuation). */
static int find_class(struct adac_runtime *rt, enum adac_cont_layout_kind kind, uint64_t *mt, struct adac_error *err)
{
	*mt = 0;
	if (kind == ADAC_CONT_FLAT && adac_mt_continuation_class(rt, mt, err))
		return -1;
	if (*mt)
		return 0;
	uint64_t corelib;
	struct adac_error *e = kind == ADAC_CONT_ARRAY ? err : NULL;
	if (adac_corelib_module(rt, &corelib, e) || adac_module_type(rt, corelib, CONT_NS, "Continuation", mt, e)) {
		*mt = 0;
		return kind == ADAC_CONT_ARRAY ? -1 : 0;
	}
	return 0;
}

static void cover(struct adac_cont_layout *l, uint32_t off, uint32_t width)
{
	if (off + width > l->header_size)
		l->header_size = off + width;
}

/* .NET 10 describes no continuation: its sealed class's FieldDescs give the offsets. */
static int init_array(struct adac_runtime *rt, struct cont_state *s, struct adac_error *err)
{
	struct adac_cont_layout *l = &s->layout;
	if (find_class(rt, ADAC_CONT_ARRAY, &l->class_mt, err))
		return -1;
	if (!l->class_mt)
		return 0; /* not loaded: no continuation exists */
	static const char *const names[] = {"Next", "Resume", "State", "Flags", "Data", "GCData"};
	uint32_t *const offs[] = {&l->next, &l->resume, &l->state, &l->flags, &l->data, &l->gc_data};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (adac_mt_field_offset(rt, l->class_mt, names[i], offs[i], err))
			return -1;
		cover(l, *offs[i], offs[i] == &l->state || offs[i] == &l->flags ? 4 : 8);
	}
	l->has_flags = true;
	return 0;
}

static int init_flat(struct adac_runtime *rt, struct cont_state *s, struct adac_error *err)
{
	struct adac_cont_layout *l = &s->layout;
	const struct adac_descriptor *d = rt->desc;
	uint32_t off[F_COUNT];
	uint8_t has[F_COUNT];
	if (adac_desc_resolve(d, flat_specs, F_COUNT, off, has, err))
		return -1;
	/* ResumeInfo is {Resume, DiagnosticIP} (AsyncHelpers.CoreCLR.cs); the descriptor describes only
	 * DiagnosticIP, so Resume is the pointer-sized field before it. */
	unsigned ps = adac_desc_ptr_size(d);
	if (off[F_RI_DIAGNOSTIC_IP] < ps)
		return adac_fail(err, ADAC_E_LAYOUT, 0, "AsyncResumeInfo.DiagnosticIP at %u leaves no room for Resume",
		                 off[F_RI_DIAGNOSTIC_IP]);
	l->next = off[F_CONT_NEXT];
	l->resume_info = off[F_CONT_RESUME_INFO];
	l->state = off[F_CONT_STATE];
	l->ri_diagnostic_ip = off[F_RI_DIAGNOSTIC_IP];
	l->ri_resume = l->ri_diagnostic_ip - ps;
	cover(l, l->next, 8);
	cover(l, l->resume_info, 8);
	cover(l, l->state, 4);
	if (find_class(rt, ADAC_CONT_FLAT, &l->class_mt, err))
		return -1;
	/* Flags is not in the descriptor; the class's FieldDesc has it. */
	if (l->class_mt && adac_mt_field_offset(rt, l->class_mt, "Flags", &l->flags, NULL) == 0) {
		l->has_flags = true;
		cover(l, l->flags, 4);
	}
	/* The data area follows the fields: the descriptor's size of ContinuationObject, else the
	 * class's own instance size. */
	uint32_t size = 0;
	struct adac_mt_info cls;
	if (adac_desc_type_size(d, "ContinuationObject", &size, NULL) == 0 && size)
		l->data_start = size;
	else if (l->class_mt && adac_mt_read(rt, l->class_mt, &cls, NULL) == 0 && cls.base_size > ps)
		l->data_start = cls.base_size - ps;
	return 0;
}

static int get_state(struct adac_runtime *rt, struct cont_state **out, struct adac_error *err)
{
	struct cont_state *s = adac_runtime_slot(rt, ADAC_SLOT_CONTINUATION);
	if (s) {
		*out = s;
		return 0;
	}
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	bool flat = adac_desc_has_type(rt->desc, "ContinuationObject");
	s->layout.kind = flat ? ADAC_CONT_FLAT : ADAC_CONT_ARRAY;
	int rc = adac_object_layout(rt, &s->object, err);
	if (rc == 0 && flat)
		rc = init_flat(rt, s, err);
	else if (rc == 0 && (rc = init_array(rt, s, err)) != 0)
		adac_error_wrap(err, "Continuation class: ");
	if (rc) {
		free(s);
		return -1;
	}
	cover(&s->layout, s->object->mt_offset, 8);
	if (s->layout.header_size > HEADER_MAX) {
		uint32_t size = s->layout.header_size;
		free(s);
		return adac_fail(err, ADAC_E_LAYOUT, 0, "Continuation fields end at %u (limit %u)", size, HEADER_MAX);
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_CONTINUATION, s, free_state);
	*out = s;
	return 0;
}

int adac_cont_layout(struct adac_runtime *rt, const struct adac_cont_layout **out, struct adac_error *err)
{
	struct cont_state *s;
	if (get_state(rt, &s, err))
		return -1;
	*out = &s->layout;
	return 0;
}

int adac_cont_is_continuation_mt(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err)
{
	struct cont_state *s;
	if (get_state(rt, &s, err))
		return -1;
	*yes = false;
	if (s->layout.class_mt == 0 || mt == 0)
		return 0; /* no continuation type exists yet in this process */
	struct mt_verdict *v = &s->verdicts[(mt >> 3) % MT_CACHE_SIZE];
	if (v->mt == mt) {
		*yes = v->is_continuation;
		return 0;
	}
	if (adac_mt_derives_from(rt, mt, s->layout.class_mt, yes, err))
		return -1;
	v->mt = mt;
	v->is_continuation = *yes;
	return 0;
}

int adac_cont_read(struct adac_runtime *rt, uint64_t addr, struct adac_continuation *c, struct adac_error *err)
{
	struct cont_state *s;
	if (get_state(rt, &s, err))
		return -1;
	const struct adac_cont_layout *l = &s->layout;
	memset(c, 0, sizeof *c);
	c->addr = addr;
	c->layout = l->kind;
	unsigned ps = adac_target_ptr_size(rt->t);
	if (addr == 0 || addr % ps != 0)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "0x%llx is not an object address", (unsigned long long)addr);
	uint8_t buf[HEADER_MAX];
	if (adac_read(rt->t, addr, buf, l->header_size, err))
		return -1;
	uint64_t mt = adac_object_mt_of(s->object, adac_get_u64(buf, s->object->mt_offset));
	bool yes;
	if (adac_cont_is_continuation_mt(rt, mt, &yes, err)) {
		adac_error_wrap(err, "object 0x%llx: ", (unsigned long long)addr);
		return -1;
	}
	if (!yes)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "object 0x%llx (MethodTable 0x%llx) is not a Continuation",
		                 (unsigned long long)addr, (unsigned long long)mt);
	c->mt = mt;
	c->next = adac_get_u64(buf, l->next);
	c->state = (int32_t)adac_get_u32(buf, l->state);
	c->has_flags = l->has_flags;
	if (l->has_flags)
		c->flags = adac_get_u32(buf, l->flags);
	if (l->kind == ADAC_CONT_ARRAY) {
		c->resume = adac_get_u64(buf, l->resume);
		c->data = adac_get_u64(buf, l->data);
		c->gc_data = adac_get_u64(buf, l->gc_data);
		return 0;
	}
	c->resume_info = adac_get_u64(buf, l->resume_info);
	if (c->resume_info) {
		size_t slot = (c->resume_info >> 3) % RI_CACHE_SIZE;
		if (s->infos[slot].addr == c->resume_info) {
			c->resume = s->infos[slot].resume;
			c->diagnostic_ip = s->infos[slot].diagnostic_ip;
			return 0;
		}
		uint8_t ri[32];
		uint32_t ri_size = l->ri_diagnostic_ip + 8;
		if (ri_size > sizeof ri || adac_read(rt->t, c->resume_info, ri, ri_size, err)) {
			adac_error_wrap(err, "Continuation 0x%llx: ResumeInfo: ", (unsigned long long)addr);
			return -1;
		}
		c->resume = adac_get_u64(ri, l->ri_resume);
		c->diagnostic_ip = adac_get_u64(ri, l->ri_diagnostic_ip);
		s->infos[slot].addr = c->resume_info;
		s->infos[slot].resume = c->resume;
		s->infos[slot].diagnostic_ip = c->diagnostic_ip;
	}
	return 0;
}

/* ---- ContinuationFlags ---- */

#define FD_LITERAL 0x40u
#define FD_STATIC 0x10u

static const char *const slot_names[ADAC_CONT_SLOT_COUNT] = {"ExecutionContext", "ContinuationContext", "Exception",
                                                             "Result"};

const char *adac_cont_slot_name(enum adac_cont_slot slot)
{
	return (unsigned)slot < ADAC_CONT_SLOT_COUNT ? slot_names[slot] : "?";
}

/* The literal fields of CoreLib's ContinuationFlags: <Slot>IndexFirstBit / <Slot>IndexNumBits, and
 * the single-bit members. */
static int read_flags(struct adac_runtime *rt, struct adac_cont_flags *fl, struct adac_error *err)
{
	uint64_t corelib;
	if (adac_corelib_module(rt, &corelib, err))
		return -1;
	const struct adac_ecma *md = adac_ecma_for_module(rt, corelib, err);
	uint32_t rid;
	struct adac_ecma_typedef td;
	if (!md || adac_ecma_find_typedef(md, CONT_NS, "ContinuationFlags", 0, &rid, err) ||
	    adac_ecma_typedef(md, rid, &td, err))
		return -1;
	bool have_first[ADAC_CONT_SLOT_COUNT] = {0}, have_bits[ADAC_CONT_SLOT_COUNT] = {0};
	for (uint32_t pos = td.field_first; pos < td.field_end; pos++) {
		uint32_t frid, crid;
		struct adac_ecma_field f;
		struct adac_ecma_constant c;
		if (adac_ecma_list_item(md, ADAC_ECMA_FIELD, pos, &frid, err) || adac_ecma_field(md, frid, &f, err))
			return -1;
		if ((f.flags & (FD_LITERAL | FD_STATIC)) != (FD_LITERAL | FD_STATIC))
			continue;
		if (adac_ecma_constant_of(md, ADAC_ECMA_TOKEN(ADAC_ECMA_FIELD, frid), &crid, err) ||
		    adac_ecma_constant(md, crid, &c, err))
			return -1;
		if (c.value_len != 4)
			return adac_fail(err, ADAC_E_CORRUPT, 0, "ContinuationFlags.%s: constant of %u bytes", f.name, c.value_len);
		uint32_t v;
		memcpy(&v, c.value, 4);
		bool matched = false;
		for (int i = 0; i < ADAC_CONT_SLOT_COUNT; i++) {
			char want[64];
			snprintf(want, sizeof want, "%sIndexFirstBit", slot_names[i]);
			if (strcmp(f.name, want) == 0) {
				fl->first_bit[i] = v;
				have_first[i] = matched = true;
			}
			snprintf(want, sizeof want, "%sIndexNumBits", slot_names[i]);
			if (strcmp(f.name, want) == 0) {
				fl->num_bits[i] = v;
				have_bits[i] = matched = true;
			}
		}
		if (matched || !v || (v & (v - 1)) != 0)
			continue;
		if (fl->nnames == ADAC_MAX_FLAG_NAMES) {
			fl->names_cut = true;
			continue;
		}
		fl->name[fl->nnames] = f.name;
		fl->value[fl->nnames++] = v;
	}
	for (int i = 0; i < ADAC_CONT_SLOT_COUNT; i++) {
		if (!have_first[i] || !have_bits[i])
			return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
			                 "CoreLib's ContinuationFlags has no %sIndexFirstBit/%sIndexNumBits (an older flags layout)",
			                 slot_names[i], slot_names[i]);
		if (fl->first_bit[i] >= 32 || fl->num_bits[i] == 0 || fl->num_bits[i] > 32 - fl->first_bit[i])
			return adac_fail(err, ADAC_E_CORRUPT, 0, "ContinuationFlags: %s index at bit %u, %u bits", slot_names[i],
			                 fl->first_bit[i], fl->num_bits[i]);
	}
	return 0;
}

int adac_cont_flags(struct adac_runtime *rt, const struct adac_cont_flags **out, struct adac_error *err)
{
	struct cont_state *s;
	if (get_state(rt, &s, err))
		return -1;
	if (!s->flags_tried) {
		s->flags_tried = true;
		if (read_flags(rt, &s->flags, &s->flags_why))
			adac_error_wrap(&s->flags_why, "ContinuationFlags: ");
	}
	if (adac_failed(&s->flags_why)) {
		adac_error_copy(err, &s->flags_why);
		return -1;
	}
	*out = &s->flags;
	return 0;
}

uint32_t adac_cont_flags_index(const struct adac_cont_flags *f, uint32_t flags, enum adac_cont_slot slot)
{
	uint32_t mask = f->num_bits[slot] >= 32 ? UINT32_MAX : (1u << f->num_bits[slot]) - 1;
	return (flags >> f->first_bit[slot]) & mask;
}

/* ---- chains ---- */

#define SHORT_CHAIN 16u   /* links checked for a cycle by looking through them */

static int seen_add(struct adac_addr_map *seen, uint64_t addr, bool *added)
{
	bool a;
	if (!adac_addr_map_get(seen, addr, sizeof addr, &a))
		return -1;
	if (added)
		*added = a;
	return 0;
}

/* The chain's links with room for cap of them: from the arena when given (what the links had
 * before stays there unused until its reset), else realloc'd. */
static struct adac_continuation *grow_links(struct adac_chain *chain, struct adac_arena *arena, size_t cap)
{
	if (!arena)
		return realloc(chain->links, cap * sizeof *chain->links);
	struct adac_continuation *links = adac_arena_alloc(arena, cap * sizeof *links);
	if (links && chain->count)
		memcpy(links, chain->links, chain->count * sizeof *links);
	return links;
}

int adac_chain_walk(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_chain *chain,
                    struct adac_error *err)
{
	return adac_chain_walk_in(rt, head, max_depth, NULL, chain, err);
}

int adac_chain_walk_in(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_arena *arena,
                       struct adac_chain *chain, struct adac_error *err)
{
	/* (Not a memset: the error's message is most of the chain, and a listing walks millions.) */
	chain->links = NULL;
	chain->count = 0;
	chain->end = ADAC_CHAIN_COMPLETE;
	chain->end_addr = 0;
	chain->end_err.code = ADAC_E_OK;
	chain->end_err.addr = 0;
	chain->end_err.msg[0] = '\0';
	if (max_depth == 0 || max_depth > ADAC_MAX_CHAIN_DEPTH)
		max_depth = ADAC_MAX_CHAIN_DEPTH;
	struct adac_addr_map seen = {0}; /* the continuations visited (records: their addresses) */
	size_t cap = 0;
	uint64_t cur = head;
	int rc = 0;
	while (cur) {
		if (chain->count >= max_depth) {
			chain->end = ADAC_CHAIN_TRUNCATED;
			chain->end_addr = cur;
			break;
		}
		bool added = true;
		if (chain->count < SHORT_CHAIN) {
			/* Most chains are a few links: a look through them costs less than a table. */
			for (size_t i = 0; i < chain->count && added; i++)
				added = chain->links[i].addr != cur;
		} else {
			int bad = 0;
			if (chain->count == SHORT_CHAIN) /* the table starts with the links so far */
				for (size_t i = 0; i < chain->count && !bad; i++)
					bad = seen_add(&seen, chain->links[i].addr, NULL);
			if (bad || seen_add(&seen, cur, &added)) {
				rc = adac_fail(err, ADAC_E_NOMEM, cur, "out of memory walking a chain");
				break;
			}
		}
		if (!added) {
			chain->end = ADAC_CHAIN_CYCLE;
			chain->end_addr = cur;
			adac_fail(&chain->end_err, ADAC_E_CORRUPT, cur, "Next leads back to Continuation 0x%llx: the chain is a cycle",
			          (unsigned long long)cur);
			break;
		}
		if (chain->count == cap) {
			size_t ncap = cap ? cap * 2 : arena ? 4 : 16;
			struct adac_continuation *links = grow_links(chain, arena, ncap);
			if (!links) {
				rc = adac_fail(err, ADAC_E_NOMEM, cur, "out of memory walking a chain");
				break;
			}
			chain->links = links;
			cap = ncap;
		}
		struct adac_continuation *c = &chain->links[chain->count];
		if (adac_cont_read(rt, cur, c, &chain->end_err)) {
			if (chain->count == 0 && chain->end_err.code == ADAC_E_LAYOUT) {
				adac_error_copy(err, &chain->end_err); /* nothing can be walked on this runtime */
				rc = -1;
			}
			chain->end = ADAC_CHAIN_BROKEN;
			chain->end_addr = cur;
			if (chain->count > 0)
				adac_error_wrap(&chain->end_err, "Next of Continuation 0x%llx: ",
				                (unsigned long long)chain->links[chain->count - 1].addr);
			break;
		}
		chain->count++;
		cur = c->next;
	}
	adac_addr_map_free(&seen);
	return rc;
}

void adac_chain_free(struct adac_chain *chain)
{
	free(chain->links);
	memset(chain, 0, sizeof *chain);
}

int adac_chain_head_of(struct adac_runtime *rt, uint64_t addr, uint64_t *head, uint64_t *task, struct adac_error *err)
{
	*head = 0;
	*task = 0;
	uint64_t mt;
	bool yes;
	if (adac_object_mt(rt, addr, &mt, err) || adac_cont_is_continuation_mt(rt, mt, &yes, err))
		return -1; /* the messages name the address */
	if (yes) {
		*head = addr;
		return 0;
	}
	const struct adac_task_layout *tl;
	bool is_task;
	uint64_t state = 0, state_mt;
	if (adac_task_is_task_mt(rt, mt, &is_task, NULL) == 0 && is_task && adac_task_layout(rt, &tl, NULL) == 0 &&
	    adac_read_ptr(rt->t, addr + tl->state_object_off, &state, NULL) == 0 && state &&
	    adac_object_mt(rt, state, &state_mt, NULL) == 0 && adac_cont_is_continuation_mt(rt, state_mt, &yes, NULL) == 0 &&
	    yes) {
		*head = state;
		*task = addr;
		return 0;
	}
	const char *type = adac_type_name(rt, mt, 0, NULL);
	return adac_fail(err, ADAC_E_BAD_ARG, addr,
	                 "0x%llx (%s) is neither a Continuation nor a task whose state object is a Continuation",
	                 (unsigned long long)addr, type ? type : "unknown type");
}
