/* precode.c - PrecodeStubs contract: precode entry point -> kind -> MethodDesc.
 *
 * Two ways to recognise a precode, chosen from what the runtime describes:
 *  - byte templates (PrecodeStubs 3 of .NET 10, "c1" of .NET 11): PrecodeMachineDescriptor gives
 *    the stub and fixup precode code bytes and which bytes to ignore; a stub precode's exact kind
 *    is StubPrecodeData.Type in the data page that follows the code page;
 *  - a type immediate (PrecodeStubs 1/2 of .NET 9/10): OffsetOfPrecodeType, ReadWidthOfPrecodeType,
 *    ShiftOfPrecodeType locate a type byte in the code.
 * The data of a precode lives StubCodePageSize bytes after its code (interleaved loader heaps). */
#include "code/precode.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "runtime/descriptor.h"
#include "runtime/runtime.h"
#include "target/target.h"

#define W_PTR ADAC_WIDTH_PTR

#define PC_TYPES(T)                                \
	T(PLATFORM, "PlatformMetadata")                \
	T(PMD, "PrecodeMachineDescriptor")             \
	T(SPD, "StubPrecodeData")                      \
	T(FPD, "FixupPrecodeData")                     \
	T(TPD, "ThisPtrRetBufPrecodeData")

/* id, type, field, width, required */
#define PC_FIELDS(X)                                                   \
	X(PLAT_PMD, PLATFORM, "PrecodeMachineDescriptor", 0, 0)            \
	X(PLAT_CPFLAGS, PLATFORM, "CodePointerFlags", 1, 0)                \
	X(PAGE, PMD, "StubCodePageSize", 4, 1)                             \
	X(STUB_TYPE, PMD, "StubPrecodeType", 1, 1)                         \
	X(STUB_SIZE, PMD, "StubPrecodeSize", 1, 0)                         \
	X(STUB_BYTES, PMD, "StubBytes", 0, 0)                              \
	X(STUB_IGNORED, PMD, "StubIgnoredBytes", 0, 0)                     \
	X(FIXUP_TYPE, PMD, "FixupPrecodeType", 1, 0)                       \
	X(FIXUP_OFFSET, PMD, "FixupCodeOffset", 1, 0)                      \
	X(FIXUP_SIZE, PMD, "FixupStubPrecodeSize", 1, 0)                   \
	X(FIXUP_BYTES, PMD, "FixupBytes", 0, 0)                            \
	X(FIXUP_IGNORED, PMD, "FixupIgnoredBytes", 0, 0)                   \
	X(PINVOKE_TYPE, PMD, "PInvokeImportPrecodeType", 1, 0)             \
	X(THISPTR_TYPE, PMD, "ThisPointerRetBufPrecodeType", 1, 0)         \
	X(UMENTRY_TYPE, PMD, "UMEntryPrecodeType", 1, 0)                   \
	X(INTERP_TYPE, PMD, "InterpreterPrecodeType", 1, 0)                \
	X(DYNHELPER_TYPE, PMD, "DynamicHelperPrecodeType", 1, 0)           \
	X(TYPE_OFFSET, PMD, "OffsetOfPrecodeType", 1, 0)                   \
	X(TYPE_WIDTH, PMD, "ReadWidthOfPrecodeType", 1, 0)                 \
	X(TYPE_SHIFT, PMD, "ShiftOfPrecodeType", 1, 0)                     \
	X(INSTR_MASK, PMD, "CodePointerToInstrPointerMask", W_PTR, 0)      \
	X(SPD_SECRET, SPD, "SecretParam", W_PTR, 0)                        \
	X(SPD_MD, SPD, "MethodDesc", W_PTR, 0)                             \
	X(SPD_TYPE, SPD, "Type", 1, 1)                                     \
	X(FPD_MD, FPD, "MethodDesc", W_PTR, 0)                             \
	X(TPD_MD, TPD, "MethodDesc", W_PTR, 0)

#define X_TYPE_ENUM(id, name) T_##id,
#define X_TYPE_NAME(id, name) name,
#define X_FIELD_ENUM(id, type, field, width, req) F_##id,
#define X_FIELD_SPEC(id, type, field, width, req) {T_##type, field, width, req},
enum { PC_TYPES(X_TYPE_ENUM) PC_T_COUNT };
enum { PC_FIELDS(X_FIELD_ENUM) PC_F_COUNT };
static const char *const pc_type_names[] = {PC_TYPES(X_TYPE_NAME)};
static const struct adac_field_def pc_fields[] = {PC_FIELDS(X_FIELD_SPEC)};
_Static_assert(sizeof pc_fields / sizeof pc_fields[0] == PC_F_COUNT, "precode field table");

struct template {
	uint8_t size;
	uint8_t bytes[ADAC_MAX_PRECODE_BYTES];
	uint8_t ignored[ADAC_MAX_PRECODE_BYTES];
};

struct precode_state {
	uint32_t off[PC_F_COUNT];
	uint8_t has[PC_F_COUNT];
	unsigned ptr;
	uint64_t instr_mask;      /* applied to code pointers (clears the arm32 Thumb bit) */
	uint32_t page;            /* StubCodePageSize */
	bool templates;           /* byte templates (else a type immediate) */
	struct template stub, fixup;
	uint8_t fixup_code_offset;
	uint8_t type_offset, type_width, type_shift;
	/* Precode type bytes; 0 when the runtime has no such kind (0 is never a valid type). */
	uint8_t stub_type, pinvoke_type, fixup_type, thisptr_type, umentry_type, interp_type, dynhelper_type;
};

static void free_state(void *p) { free(p); }

static int read_byte_field(struct adac_target *t, const struct precode_state *st, uint64_t pmd, int f, uint8_t *v,
                           struct adac_error *err)
{
	*v = 0;
	if (!st->has[f])
		return 0;
	if (adac_read_u8(t, pmd + st->off[f], v, err)) {
		adac_error_wrap(err, "PrecodeMachineDescriptor.%s at 0x%llx: ", pc_fields[f].field, (unsigned long long)pmd);
		return -1;
	}
	return 0;
}

static int read_template(struct adac_target *t, const struct precode_state *st, uint64_t pmd, int f_size,
                         int f_bytes, int f_ignored, struct template *tp, struct adac_error *err)
{
	tp->size = 0;
	if (!st->has[f_size] || !st->has[f_bytes] || !st->has[f_ignored])
		return 0;
	if (read_byte_field(t, st, pmd, f_size, &tp->size, err))
		return -1;
	if (tp->size > ADAC_MAX_PRECODE_BYTES)
		return adac_fail(err, ADAC_E_LIMIT, pmd, "PrecodeMachineDescriptor.%s is %u (ADAC_MAX_PRECODE_BYTES %u)",
		                 pc_fields[f_size].field, tp->size, ADAC_MAX_PRECODE_BYTES);
	if (adac_read(t, pmd + st->off[f_bytes], tp->bytes, tp->size, err) ||
	    adac_read(t, pmd + st->off[f_ignored], tp->ignored, tp->size, err)) {
		adac_error_wrap(err, "PrecodeMachineDescriptor at 0x%llx: ", (unsigned long long)pmd);
		return -1;
	}
	return 0;
}

static struct precode_state *precode_state(struct adac_runtime *rt, struct adac_error *err)
{
	struct precode_state *st = adac_runtime_slot(rt, ADAC_SLOT_PRECODE);
	if (st)
		return st;
	st = calloc(1, sizeof *st);
	if (!st) {
		adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
		return NULL;
	}
	struct adac_target *t = rt->t;
	const struct adac_descriptor *d = rt->desc;
	st->ptr = adac_target_ptr_size(t);
	if (adac_desc_resolve_defs(d, pc_fields, PC_F_COUNT, pc_type_names, st->ptr, st->off, st->has, NULL, err))
		goto fail;
	/* The machine descriptor: embedded in PlatformMetadata (the global points directly at the
	 * struct, g_cdacPlatformMetadata), or, in .NET 9, the PrecodeMachineDescriptor global. */
	uint64_t pmd = 0, platform = 0;
	uint8_t cpflags = 0;
	if (adac_desc_global(d, "PlatformMetadata", &platform, NULL) == 0 && platform && st->has[F_PLAT_PMD]) {
		pmd = platform + st->off[F_PLAT_PMD];
		if (st->has[F_PLAT_CPFLAGS] && adac_read_u8(t, platform + st->off[F_PLAT_CPFLAGS], &cpflags, err)) {
			adac_error_wrap(err, "PlatformMetadata at 0x%llx: ", (unsigned long long)platform);
			goto fail;
		}
	} else if (adac_desc_global(d, "PrecodeMachineDescriptor", &pmd, NULL) != 0 || pmd == 0) {
		adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime describes neither PlatformMetadata.PrecodeMachineDescriptor nor a "
		                                 "PrecodeMachineDescriptor global");
		goto fail;
	}
	if (cpflags & 2) {
		adac_fail(err, ADAC_E_UNSUPPORTED, 0, "code pointers with arm64e pointer authentication are not supported");
		goto fail;
	}
	st->instr_mask = (cpflags & 1) ? ~(uint64_t)1 : ~(uint64_t)0;
	if (st->has[F_INSTR_MASK]) {
		uint64_t m;
		if (adac_read_ptr(t, pmd + st->off[F_INSTR_MASK], &m, err)) {
			adac_error_wrap(err, "PrecodeMachineDescriptor at 0x%llx: ", (unsigned long long)pmd);
			goto fail;
		}
		st->instr_mask &= m;
	}
	if (adac_read_u32(t, pmd + st->off[F_PAGE], &st->page, err)) {
		adac_error_wrap(err, "PrecodeMachineDescriptor at 0x%llx: ", (unsigned long long)pmd);
		goto fail;
	}
	if (read_byte_field(t, st, pmd, F_STUB_TYPE, &st->stub_type, err) ||
	    read_byte_field(t, st, pmd, F_PINVOKE_TYPE, &st->pinvoke_type, err) ||
	    read_byte_field(t, st, pmd, F_FIXUP_TYPE, &st->fixup_type, err) ||
	    read_byte_field(t, st, pmd, F_THISPTR_TYPE, &st->thisptr_type, err) ||
	    read_byte_field(t, st, pmd, F_UMENTRY_TYPE, &st->umentry_type, err) ||
	    read_byte_field(t, st, pmd, F_INTERP_TYPE, &st->interp_type, err) ||
	    read_byte_field(t, st, pmd, F_DYNHELPER_TYPE, &st->dynhelper_type, err) ||
	    read_byte_field(t, st, pmd, F_FIXUP_OFFSET, &st->fixup_code_offset, err) ||
	    read_byte_field(t, st, pmd, F_TYPE_OFFSET, &st->type_offset, err) ||
	    read_byte_field(t, st, pmd, F_TYPE_WIDTH, &st->type_width, err) ||
	    read_byte_field(t, st, pmd, F_TYPE_SHIFT, &st->type_shift, err) ||
	    read_template(t, st, pmd, F_STUB_SIZE, F_STUB_BYTES, F_STUB_IGNORED, &st->stub, err) ||
	    read_template(t, st, pmd, F_FIXUP_SIZE, F_FIXUP_BYTES, F_FIXUP_IGNORED, &st->fixup, err))
		goto fail;
	st->templates = st->stub.size != 0;
	if (!st->templates && !(st->has[F_TYPE_OFFSET] && st->has[F_TYPE_WIDTH] && st->has[F_TYPE_SHIFT])) {
		adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's PrecodeMachineDescriptor has neither StubBytes nor "
		                                 "OffsetOfPrecodeType (PrecodeStubs %s)",
		          adac_desc_contract(d, "PrecodeStubs") ? adac_desc_contract(d, "PrecodeStubs") : "absent");
		goto fail;
	}
	if (!st->templates && st->type_width != 1 && st->type_width != 2) {
		adac_fail(err, ADAC_E_LAYOUT, pmd, "PrecodeMachineDescriptor.ReadWidthOfPrecodeType is %u", st->type_width);
		goto fail;
	}
	if (!st->has[F_SPD_SECRET] && !st->has[F_SPD_MD]) {
		adac_fail(err, ADAC_E_LAYOUT, 0, "the runtime's StubPrecodeData has neither SecretParam nor MethodDesc");
		goto fail;
	}
	adac_runtime_set_slot(rt, ADAC_SLOT_PRECODE, st, free_state);
	return st;
fail:
	free(st);
	return NULL;
}

static int matches(struct adac_target *t, uint64_t ip, const struct template *tp, bool *ok, struct adac_error *err)
{
	uint8_t code[ADAC_MAX_PRECODE_BYTES];
	*ok = false;
	if (tp->size == 0)
		return 0;
	if (adac_read(t, ip, code, tp->size, err)) {
		adac_error_wrap(err, "precode at 0x%llx: ", (unsigned long long)ip);
		return -1;
	}
	for (unsigned i = 0; i < tp->size; i++)
		if (!tp->ignored[i] && code[i] != tp->bytes[i])
			return 0;
	*ok = true;
	return 0;
}

static enum adac_precode_kind kind_of_type(const struct precode_state *st, uint8_t type)
{
	if (type == 0)
		return ADAC_PRECODE_NONE;
	if (type == st->stub_type)
		return ADAC_PRECODE_STUB;
	if (type == st->pinvoke_type)
		return ADAC_PRECODE_PINVOKE_IMPORT;
	if (type == st->fixup_type)
		return ADAC_PRECODE_FIXUP;
	if (type == st->thisptr_type)
		return ADAC_PRECODE_THISPTR_RETBUF;
	if (type == st->umentry_type)
		return ADAC_PRECODE_UMENTRY;
	if (type == st->interp_type)
		return ADAC_PRECODE_INTERPRETER;
	if (type == st->dynhelper_type)
		return ADAC_PRECODE_DYNAMIC_HELPER;
	return ADAC_PRECODE_NONE;
}

static int stub_data_type(struct adac_target *t, const struct precode_state *st, uint64_t ip, uint8_t *type,
                          struct adac_error *err)
{
	uint64_t data = ip + st->page;
	if (adac_read_u8(t, data + st->off[F_SPD_TYPE], type, err)) {
		adac_error_wrap(err, "StubPrecodeData of 0x%llx at 0x%llx: ", (unsigned long long)ip, (unsigned long long)data);
		return -1;
	}
	return 0;
}

/* Precode::GetType at an (aligned) instruction pointer. */
static int classify(struct adac_target *t, const struct precode_state *st, uint64_t ip, enum adac_precode_kind *kind,
                    struct adac_error *err)
{
	*kind = ADAC_PRECODE_NONE;
	if (ip % st->ptr)
		return 0;
	uint8_t type;
	if (st->templates) {
		bool ok;
		if (matches(t, ip, &st->stub, &ok, err))
			return -1;
		if (ok) {
			if (stub_data_type(t, st, ip, &type, err))
				return -1;
			*kind = kind_of_type(st, type);
			/* The code of a stub precode never carries the fixup type. */
			if (*kind == ADAC_PRECODE_FIXUP)
				*kind = ADAC_PRECODE_NONE;
			return 0;
		}
		if (matches(t, ip, &st->fixup, &ok, err))
			return -1;
		if (ok)
			*kind = ADAC_PRECODE_FIXUP;
		return 0;
	}
	uint64_t at = ip + st->type_offset;
	uint16_t raw;
	if (st->type_width == 1) {
		uint8_t b;
		if (adac_read_u8(t, at, &b, err))
			goto read_failed;
		raw = b;
	} else if (adac_read_u16(t, at, &raw, err)) {
		goto read_failed;
	}
	type = (uint8_t)(raw >> st->type_shift);
	if (type == st->stub_type && stub_data_type(t, st, ip, &type, err))
		return -1;
	*kind = kind_of_type(st, type);
	return 0;
read_failed:
	adac_error_wrap(err, "precode at 0x%llx: ", (unsigned long long)ip);
	return -1;
}

const char *adac_precode_kind_name(int k)
{
	switch (k) {
	case ADAC_PRECODE_STUB: return "stub";
	case ADAC_PRECODE_PINVOKE_IMPORT: return "PInvokeImport";
	case ADAC_PRECODE_FIXUP: return "fixup";
	case ADAC_PRECODE_THISPTR_RETBUF: return "ThisPtrRetBuf";
	case ADAC_PRECODE_UMENTRY: return "UMEntry";
	case ADAC_PRECODE_INTERPRETER: return "interpreter";
	case ADAC_PRECODE_DYNAMIC_HELPER: return "dynamic helper";
	default: return "unknown";
	}
}

static int read_md(struct adac_target *t, uint64_t addr, const char *what, uint64_t ip, uint64_t *md,
                   struct adac_error *err)
{
	if (adac_read_ptr(t, addr, md, err)) {
		adac_error_wrap(err, "%s of precode 0x%llx: ", what, (unsigned long long)ip);
		return -1;
	}
	return 0;
}

static int method_desc_of(struct adac_target *t, const struct precode_state *st, uint64_t ip,
                          enum adac_precode_kind kind, uint64_t *md, struct adac_error *err)
{
	uint64_t data = ip + st->page;
	*md = 0;
	switch (kind) {
	case ADAC_PRECODE_STUB:
	case ADAC_PRECODE_PINVOKE_IMPORT:
		/* PrecodeStubs 1 named the field MethodDesc; later versions SecretParam. */
		if (read_md(t, data + st->off[st->has[F_SPD_SECRET] ? F_SPD_SECRET : F_SPD_MD], "StubPrecodeData", ip, md, err))
			return -1;
		break;
	case ADAC_PRECODE_FIXUP:
		if (!st->has[F_FPD_MD])
			return adac_fail(err, ADAC_E_LAYOUT, ip, "0x%llx is a fixup precode, but the runtime does not describe "
			                                         "FixupPrecodeData.MethodDesc", (unsigned long long)ip);
		if (read_md(t, data + st->off[F_FPD_MD], "FixupPrecodeData", ip, md, err))
			return -1;
		break;
	case ADAC_PRECODE_THISPTR_RETBUF: {
		if (!st->has[F_TPD_MD] || !st->has[F_SPD_SECRET])
			return adac_fail(err, ADAC_E_LAYOUT, ip, "0x%llx is a ThisPtrRetBuf precode, but the runtime does not describe "
			                                         "ThisPtrRetBufPrecodeData.MethodDesc", (unsigned long long)ip);
		uint64_t inner;
		if (read_md(t, data + st->off[F_SPD_SECRET], "StubPrecodeData", ip, &inner, err) ||
		    read_md(t, inner + st->off[F_TPD_MD], "ThisPtrRetBufPrecodeData", ip, md, err))
			return -1;
		break;
	}
	case ADAC_PRECODE_NONE:
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is not a precode the runtime describes", (unsigned long long)ip);
	default:
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "0x%llx is a %s precode, which carries no MethodDesc",
		                 (unsigned long long)ip, adac_precode_kind_name(kind));
	}
	if (*md == 0)
		return adac_fail(err, ADAC_E_NOT_FOUND, ip, "%s precode at 0x%llx has a null MethodDesc", adac_precode_kind_name(kind),
		                 (unsigned long long)ip);
	return 0;
}

int adac_precode_kind(struct adac_runtime *rt, uint64_t entry, enum adac_precode_kind *kind, struct adac_error *err)
{
	struct precode_state *st = precode_state(rt, err);
	if (!st)
		return -1;
	return classify(rt->t, st, entry & st->instr_mask, kind, err);
}

int adac_precode_method_desc(struct adac_runtime *rt, uint64_t entry, uint64_t *method_desc, struct adac_error *err)
{
	*method_desc = 0;
	struct precode_state *st = precode_state(rt, err);
	if (!st)
		return -1;
	uint64_t ip = entry & st->instr_mask;
	enum adac_precode_kind kind;
	if (classify(rt->t, st, ip, &kind, err))
		return -1;
	return method_desc_of(rt->t, st, ip, kind, method_desc, err);
}

int adac_precode_find(struct adac_runtime *rt, uint64_t addr, struct adac_precode_match *m, struct adac_error *err)
{
	memset(m, 0, sizeof *m);
	struct precode_state *st = precode_state(rt, err);
	if (!st)
		return -1;
	uint64_t ip = addr & st->instr_mask;
	uint64_t cand[3];
	unsigned n = 0;
	cand[n++] = ip;
	/* Interleaved heaps put precodes of one size back to back from the start of a code page. */
	if (st->page && (st->page & (st->page - 1)) == 0) {
		uint64_t page_base = ip & ~(uint64_t)(st->page - 1), off = ip - page_base;
		const struct template *sizes[2] = {&st->stub, &st->fixup};
		for (int i = 0; i < 2; i++) {
			uint64_t c = sizes[i]->size ? page_base + off / sizes[i]->size * sizes[i]->size : ip;
			if (c != ip && (n < 2 || c != cand[1]))
				cand[n++] = c;
		}
	}
	for (unsigned i = 0; i < n; i++) {
		enum adac_precode_kind kind;
		if (classify(rt->t, st, cand[i], &kind, err))
			return -1;
		if (kind == ADAC_PRECODE_NONE)
			continue;
		m->entry = cand[i];
		m->kind = kind;
		return method_desc_of(rt->t, st, cand[i], kind, &m->method_desc, err);
	}
	return adac_fail(err, ADAC_E_NOT_FOUND, addr, "0x%llx is not inside a precode the runtime describes",
	                 (unsigned long long)addr);
}
