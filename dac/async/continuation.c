/* continuation.c - reads Continuation objects and walks their chains. */
#include "async/continuation.h"

#include <stdlib.h>
#include <string.h>

#include "async/task.h"
#include "base/addr_map.h"
#include "base/cursor.h"
#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"
#include "types/names.h"

#define MT_CACHE_SIZE 256u     /* verdicts per MethodTable; a chain uses a handful of MTs */

/* Flat layout fields, from the descriptor's ContinuationObject and AsyncResumeInfo types. */
#define FLAT_FIELDS(X)                                \
	X(CONT_NEXT, "ContinuationObject", "Next", 8)     \
	X(CONT_RESUME_INFO, "ContinuationObject", "ResumeInfo", 8) \
	X(CONT_STATE, "ContinuationObject", "State", 4)   \
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

/* Array layout fields, from the Continuation class's own FieldDescs (object-relative offsets). */
enum { A_NEXT, A_RESUME, A_STATE, A_FLAGS, A_DATA, A_GCDATA, A_COUNT };
static const char *const array_fields[A_COUNT] = {"Next", "Resume", "State", "Flags", "Data", "GCData"};

struct cont_state {
	enum adac_cont_layout_kind kind;
	uint32_t off[F_COUNT];
	uint32_t aoff[A_COUNT];
	bool has_flags;            /* flat: Flags found in the Continuation class's fields */
	uint32_t flags_off;
	uint32_t ri_resume;        /* ResumeInfo.Resume */
	uint32_t header_size;      /* bytes read per continuation */
	const struct adac_object_layout *object;
	uint64_t cont_mt;          /* the Continuation class MT; 0 until the runtime created a subtype */
	struct mt_verdict verdicts[MT_CACHE_SIZE];
};

static void free_state(void *p) { free(p); }

/* .NET 10 describes no continuation: its sealed Continuation class is found in CoreLib's metadata
 * and its field offsets in the class's FieldDescs. */
static int init_array_layout(struct adac_runtime *rt, struct cont_state **out, struct adac_error *err)
{
	struct cont_state *s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	s->kind = ADAC_CONT_ARRAY;
	uint64_t corelib;
	if (adac_object_layout(rt, &s->object, err) || adac_corelib_module(rt, &corelib, err) ||
	    adac_module_type(rt, corelib, "System.Runtime.CompilerServices", "Continuation", &s->cont_mt, err))
		goto fail;
	s->header_size = 8;
	if (s->cont_mt) {
		for (int i = 0; i < A_COUNT; i++) {
			if (adac_mt_field_offset(rt, s->cont_mt, array_fields[i], &s->aoff[i], err))
				goto fail;
			uint32_t end = s->aoff[i] + (i == A_STATE || i == A_FLAGS ? 4 : 8);
			if (end > s->header_size)
				s->header_size = end;
		}
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_CONTINUATION, s, free_state);
	*out = s;
	return 0;
fail:
	adac_error_wrap(err, "Continuation class: ");
	free(s);
	return -1;
}

static int init_state(struct adac_runtime *rt, struct cont_state **out, struct adac_error *err)
{
	struct cont_state *s = adac_runtime_slot(rt, ADAC_SLOT_CONTINUATION);
	if (s) {
		*out = s;
		return 0;
	}
	const struct adac_descriptor *d = rt->desc;
	if (!adac_desc_has_type(d, "ContinuationObject"))
		return init_array_layout(rt, out, err);
	s = calloc(1, sizeof *s);
	if (!s)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	uint8_t has[F_COUNT];
	if (adac_desc_resolve(d, flat_specs, F_COUNT, s->off, has, err)) {
		free(s);
		return -1;
	}
	s->kind = ADAC_CONT_FLAT;
	/* ResumeInfo is {Resume, DiagnosticIP} (AsyncHelpers.CoreCLR.cs); the descriptor describes only
	 * DiagnosticIP, so Resume is the pointer-sized field before it. */
	unsigned ps = adac_desc_ptr_size(d);
	if (s->off[F_RI_DIAGNOSTIC_IP] < ps) {
		uint32_t at = s->off[F_RI_DIAGNOSTIC_IP];
		free(s);
		return adac_fail(err, ADAC_E_LAYOUT, 0, "AsyncResumeInfo.DiagnosticIP at %u leaves no room for Resume", at);
	}
	s->ri_resume = s->off[F_RI_DIAGNOSTIC_IP] - ps;
	uint32_t size = 0;
	for (int i = F_CONT_NEXT; i <= F_CONT_STATE; i++)
		if (s->off[i] + flat_specs[i].width > size)
			size = s->off[i] + flat_specs[i].width;
	/* Flags is not in the descriptor; the Continuation class's FieldDesc has it (optional: only the
	 * well-known slots need it). */
	uint64_t corelib, base_mt;
	struct adac_field flags;
	if (adac_corelib_module(rt, &corelib, NULL) == 0 &&
	    adac_module_type(rt, corelib, "System.Runtime.CompilerServices", "Continuation", &base_mt, NULL) == 0 && base_mt &&
	    adac_mt_find_field(rt, base_mt, "Flags", &flags, NULL) == 0 && !flags.is_static) {
		s->flags_off = flags.offset + ps;
		s->has_flags = true;
		if (s->flags_off + 4 > size)
			size = s->flags_off + 4;
	}
	s->header_size = size;
	if (adac_object_layout(rt, &s->object, err)) {
		free(s);
		return -1;
	}
	uint64_t where;
	if (adac_desc_global(d, "ContinuationMethodTable", &where, err) ||
	    adac_read_ptr(rt->t, where, &s->cont_mt, err)) {
		adac_error_wrap(err, "Continuation MethodTable: ");
		free(s);
		return -1;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_CONTINUATION, s, free_state);
	*out = s;
	return 0;
}

int adac_cont_layout(struct adac_runtime *rt, enum adac_cont_layout_kind *kind, struct adac_error *err)
{
	struct cont_state *s;
	if (init_state(rt, &s, err))
		return -1;
	*kind = s->kind;
	return 0;
}

int adac_cont_is_continuation_mt(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err)
{
	struct cont_state *s;
	if (init_state(rt, &s, err))
		return -1;
	*yes = false;
	if (s->cont_mt == 0 || mt == 0)
		return 0; /* no continuation type exists yet in this process */
	struct mt_verdict *v = &s->verdicts[(mt >> 3) % MT_CACHE_SIZE];
	if (v->mt == mt) {
		*yes = v->is_continuation;
		return 0;
	}
	if (adac_mt_derives_from(rt, mt, s->cont_mt, yes, err))
		return -1;
	v->mt = mt;
	v->is_continuation = *yes;
	return 0;
}

int adac_cont_read(struct adac_runtime *rt, uint64_t addr, struct adac_continuation *c, struct adac_error *err)
{
	struct cont_state *s;
	if (init_state(rt, &s, err))
		return -1;
	memset(c, 0, sizeof *c);
	c->addr = addr;
	unsigned ps = adac_target_ptr_size(rt->t);
	if (addr == 0 || addr % ps != 0)
		return adac_fail(err, ADAC_E_CORRUPT, addr, "0x%llx is not an object address", (unsigned long long)addr);
	uint8_t buf[64];
	if (s->header_size > sizeof buf)
		return adac_fail(err, ADAC_E_LAYOUT, addr, "ContinuationObject fields end at %u (limit %zu)", s->header_size,
		                 sizeof buf);
	if (adac_read(rt->t, addr, buf, s->header_size, err))
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
	if (s->kind == ADAC_CONT_ARRAY) {
		c->next = adac_get_u64(buf, s->aoff[A_NEXT]);
		c->resume = adac_get_u64(buf, s->aoff[A_RESUME]);
		c->state = (int32_t)adac_get_u32(buf, s->aoff[A_STATE]);
		c->has_flags = true;
		c->flags = adac_get_u32(buf, s->aoff[A_FLAGS]);
		c->data = adac_get_u64(buf, s->aoff[A_DATA]);
		c->gc_data = adac_get_u64(buf, s->aoff[A_GCDATA]);
		return 0;
	}
	c->next = adac_get_u64(buf, s->off[F_CONT_NEXT]);
	c->resume_info = adac_get_u64(buf, s->off[F_CONT_RESUME_INFO]);
	if (s->has_flags) {
		c->has_flags = true;
		c->flags = adac_get_u32(buf, s->flags_off);
	}
	c->state = (int32_t)adac_get_u32(buf, s->off[F_CONT_STATE]);
	if (c->resume_info) {
		uint8_t ri[32];
		uint32_t ri_size = s->off[F_RI_DIAGNOSTIC_IP] + 8;
		if (ri_size > sizeof ri || adac_read(rt->t, c->resume_info, ri, ri_size, err)) {
			adac_error_wrap(err, "Continuation 0x%llx: ResumeInfo: ", (unsigned long long)addr);
			return -1;
		}
		c->resume = adac_get_u64(ri, s->ri_resume);
		c->diagnostic_ip = adac_get_u64(ri, s->off[F_RI_DIAGNOSTIC_IP]);
	}
	return 0;
}

int adac_chain_walk(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_chain *chain,
                    struct adac_error *err)
{
	memset(chain, 0, sizeof *chain);
	if (max_depth == 0 || max_depth > ADAC_MAX_CHAIN_DEPTH)
		max_depth = ADAC_MAX_CHAIN_DEPTH;
	struct adac_addr_map seen = {0}; /* the continuations visited (records: their addresses) */
	size_t cap = 0;
	uint64_t cur = head;
	int rc = 0;
	chain->end = ADAC_CHAIN_COMPLETE;
	while (cur) {
		if (chain->count >= max_depth) {
			chain->end = ADAC_CHAIN_TRUNCATED;
			chain->end_addr = cur;
			break;
		}
		bool added;
		if (!adac_addr_map_get(&seen, cur, sizeof cur, &added)) {
			rc = adac_fail(err, ADAC_E_NOMEM, cur, "out of memory walking a chain");
			break;
		}
		if (!added) {
			chain->end = ADAC_CHAIN_CYCLE;
			chain->end_addr = cur;
			adac_fail(&chain->end_err, ADAC_E_CORRUPT, cur, "Next leads back to Continuation 0x%llx: the chain is a cycle",
			          (unsigned long long)cur);
			break;
		}
		if (chain->count == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct adac_continuation *links = realloc(chain->links, ncap * sizeof *links);
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
