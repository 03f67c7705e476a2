/* signature.h - ECMA-335 signature blobs (II.23.2) decoded into a small type tree, and the capped
 * text buffer names are built in. Types are named from the tree by types/typename.h. */
#ifndef ADAC_SIGNATURE_H
#define ADAC_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/limits.h"

/* CorElementType values (ECMA-335 II.23.1.16, plus the runtime's INTERNAL). */
enum adac_elem {
	ADAC_ELEM_END = 0x00, ADAC_ELEM_VOID = 0x01, ADAC_ELEM_BOOLEAN = 0x02, ADAC_ELEM_CHAR = 0x03,
	ADAC_ELEM_I1 = 0x04, ADAC_ELEM_U1 = 0x05, ADAC_ELEM_I2 = 0x06, ADAC_ELEM_U2 = 0x07, ADAC_ELEM_I4 = 0x08,
	ADAC_ELEM_U4 = 0x09, ADAC_ELEM_I8 = 0x0a, ADAC_ELEM_U8 = 0x0b, ADAC_ELEM_R4 = 0x0c, ADAC_ELEM_R8 = 0x0d,
	ADAC_ELEM_STRING = 0x0e, ADAC_ELEM_PTR = 0x0f, ADAC_ELEM_BYREF = 0x10, ADAC_ELEM_VALUETYPE = 0x11,
	ADAC_ELEM_CLASS = 0x12, ADAC_ELEM_VAR = 0x13, ADAC_ELEM_ARRAY = 0x14, ADAC_ELEM_GENERICINST = 0x15,
	ADAC_ELEM_TYPEDBYREF = 0x16, ADAC_ELEM_I = 0x18, ADAC_ELEM_U = 0x19, ADAC_ELEM_FNPTR = 0x1b,
	ADAC_ELEM_OBJECT = 0x1c, ADAC_ELEM_SZARRAY = 0x1d, ADAC_ELEM_MVAR = 0x1e, ADAC_ELEM_CMOD_REQD = 0x1f,
	ADAC_ELEM_CMOD_OPT = 0x20, ADAC_ELEM_INTERNAL = 0x21, ADAC_ELEM_CMOD_INTERNAL = 0x22,
	ADAC_ELEM_SENTINEL = 0x41, ADAC_ELEM_PINNED = 0x45,
};

/* Calling-convention byte of a method signature. */
#define ADAC_SIG_CC_MASK 0x0f
#define ADAC_SIG_CC_VARARG 0x05
#define ADAC_SIG_CC_FIELD 0x06
#define ADAC_SIG_CC_LOCALS 0x07
#define ADAC_SIG_CC_PROPERTY 0x08
#define ADAC_SIG_CC_GENERICINST 0x0a
#define ADAC_SIG_CC_GENERIC 0x10
#define ADAC_SIG_CC_HASTHIS 0x20
#define ADAC_SIG_CC_EXPLICITTHIS 0x40

struct adac_sig_method;

/* One type in a signature. */
struct adac_sig_type {
	uint8_t elem;        /* enum adac_elem of this node */
	bool pinned;         /* a local marked ELEMENT_TYPE_PINNED */
	bool has_cmods;      /* had custom modifiers (not shown) */
	uint32_t token;      /* CLASS/VALUETYPE: TypeDef, TypeRef or TypeSpec token */
	uint32_t number;     /* VAR/MVAR: index; ARRAY: rank */
	uint64_t handle;     /* INTERNAL: runtime TypeHandle */
	const struct adac_sig_type *inner;        /* PTR/BYREF/SZARRAY/ARRAY element, GENERICINST type */
	uint32_t nargs;                           /* GENERICINST arguments */
	const struct adac_sig_type *const *args;
	const struct adac_sig_method *fnptr;      /* FNPTR */
};

struct adac_sig_method {
	uint8_t callconv;     /* raw calling-convention byte (ADAC_SIG_CC_*) */
	uint32_t gen_params;  /* generic parameter count (ADAC_SIG_CC_GENERIC) */
	const struct adac_sig_type *ret;
	uint32_t nparams;
	const struct adac_sig_type *const *params;
	uint32_t sentinel;    /* index of the first vararg parameter, or UINT32_MAX */
};

enum adac_sig_kind {
	ADAC_SIG_METHOD,      /* MethodDef/MemberRef/StandAloneSig method signature */
	ADAC_SIG_PROPERTY,    /* PropertySig: decoded into .method (ret = property type) */
	ADAC_SIG_FIELD,       /* FieldSig: .type */
	ADAC_SIG_LOCALS,      /* LocalVarSig: .types[count] */
	ADAC_SIG_TYPESPEC,    /* TypeSpec blob: .type */
	ADAC_SIG_METHODSPEC,  /* MethodSpec instantiation: .types[count] */
};

struct adac_sig_arena;

/* A decoded signature and the memory of its tree. */
struct adac_sig {
	enum adac_sig_kind kind;
	struct adac_sig_method method;
	const struct adac_sig_type *type;
	uint32_t count;
	const struct adac_sig_type *const *types;
	struct adac_sig_arena *arena;
};

/* Decodes one signature blob. ptr_size sizes ELEMENT_TYPE_INTERNAL handles (runtime-made
 * signatures only). Malformed blobs are ADAC_E_CORRUPT naming the byte offset; nesting deeper than
 * ADAC_MAX_SIG_DEPTH is ADAC_E_LIMIT. Trailing bytes are allowed (the runtime pads some blobs). */
int adac_sig_decode(const uint8_t *blob, size_t len, enum adac_sig_kind kind, unsigned ptr_size,
                    struct adac_sig **out, struct adac_error *err);
void adac_sig_free(struct adac_sig *s);

/* A growing, capped text buffer (ADAC_MAX_NAME_BYTES): ADAC_E_LIMIT / ADAC_E_NOMEM on failure. */
struct adac_sig_text {
	char *s;        /* NUL-terminated; NULL while empty */
	size_t len;
	size_t cap;
};
int adac_sig_text_put(struct adac_sig_text *t, const char *s, struct adac_error *err);
int adac_sig_text_putn(struct adac_sig_text *t, const char *s, size_t n, struct adac_error *err);
int adac_sig_text_putf(struct adac_sig_text *t, struct adac_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *adac_sig_text_str(const struct adac_sig_text *t); /* "" when empty */
char *adac_sig_text_take(struct adac_sig_text *t);             /* caller frees; buffer reset */
void adac_sig_text_free(struct adac_sig_text *t);

#endif
