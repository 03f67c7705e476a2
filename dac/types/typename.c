/* typename.c - the type-name engine: signature types and TypeHandles spelled in the SOS, C# or DAC
 * style (the rules are in typename.h). */
#include "types/typename.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "metadata/ecma_metadata.h"
#include "runtime/descriptor.h"
#include "runtime/loader.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/methoddesc.h"

static int put(struct adac_sig_text *out, const char *s, struct adac_error *err) { return adac_sig_text_put(out, s, err); }

/* ---- Primitive types ---- */

static bool is_prim_elem(uint8_t e)
{
	return (e >= ADAC_ELEM_VOID && e <= ADAC_ELEM_R8) || e == ADAC_ELEM_I || e == ADAC_ELEM_U;
}

const char *adac_tn_prim(uint8_t elem, enum adac_name_style style)
{
	bool cs = style == ADAC_STYLE_CSHARP;
	switch (elem) {
	case ADAC_ELEM_VOID: return cs ? "void" : "Void";
	case ADAC_ELEM_BOOLEAN: return cs ? "bool" : "Boolean";
	case ADAC_ELEM_CHAR: return cs ? "char" : "Char";
	case ADAC_ELEM_I1: return cs ? "sbyte" : "SByte";
	case ADAC_ELEM_U1: return cs ? "byte" : "Byte";
	case ADAC_ELEM_I2: return cs ? "short" : "Int16";
	case ADAC_ELEM_U2: return cs ? "ushort" : "UInt16";
	case ADAC_ELEM_I4: return cs ? "int" : "Int32";
	case ADAC_ELEM_U4: return cs ? "uint" : "UInt32";
	case ADAC_ELEM_I8: return cs ? "long" : "Int64";
	case ADAC_ELEM_U8: return cs ? "ulong" : "UInt64";
	case ADAC_ELEM_R4: return cs ? "float" : "Single";
	case ADAC_ELEM_R8: return cs ? "double" : "Double";
	case ADAC_ELEM_I: return cs ? "nint" : "IntPtr";
	case ADAC_ELEM_U: return cs ? "nuint" : "UIntPtr";
	case ADAC_ELEM_TYPEDBYREF: return cs ? "System.TypedReference" : "TypedReference";
	case ADAC_ELEM_STRING: return cs ? "string" : "System.String";
	case ADAC_ELEM_OBJECT: return cs ? "object" : "System.Object";
	default: return NULL;
	}
}

static int put_prim(const char *name, enum adac_name_style style, unsigned flags, struct adac_sig_text *out,
                    struct adac_error *err)
{
	if (style != ADAC_STYLE_DAC && (flags & ADAC_TN_NO_NAMESPACE) && strncmp(name, "System.", 7) == 0)
		name += 7;
	return put(out, name, err);
}

/* ---- Names of TypeDef and TypeRef rows ---- */

enum nesting {
	NEST_NONE,    /* the row's own name (SigFormat) */
	NEST_ALL,     /* Outer+Inner through NestedClass rows or TypeRef resolution scopes */
	NEST_FLAGGED, /* the same for TypeDefs with a nested visibility only (TypeString) */
};

struct row_opts {
	enum nesting nest;
	bool ns;       /* the outermost type's namespace */
	bool strip;    /* drop "`1" arity suffixes */
	bool escape;   /* TypeString escaping of ",[]&*+\" */
};

static int row_names(const struct adac_ecma *md, bool ref, uint32_t rid, const char **ns, const char **name,
                     uint32_t *scope, struct adac_error *err)
{
	if (ref) {
		struct adac_ecma_typeref tr;
		if (adac_ecma_typeref(md, rid, &tr, err))
			return -1;
		*ns = tr.ns;
		*name = tr.name;
		*scope = tr.scope;
		return 0;
	}
	struct adac_ecma_typedef td;
	if (adac_ecma_typedef(md, rid, &td, err))
		return -1;
	*ns = td.ns;
	*name = td.name;
	*scope = td.flags; /* TypeAttributes: the visibility says whether it is nested */
	return 0;
}

/* The row enclosing TypeDef or TypeRef `rid`, 0 when none. */
static int row_outer(const struct adac_ecma *md, bool ref, uint32_t rid, enum nesting nest, uint32_t *outer,
                     struct adac_error *err)
{
	*outer = 0;
	if (nest == NEST_NONE)
		return 0;
	const char *ns, *name;
	uint32_t scope;
	if ((ref || nest == NEST_FLAGGED) && row_names(md, ref, rid, &ns, &name, &scope, err))
		return -1;
	if (ref) {
		if (ADAC_ECMA_TOKEN_TABLE(scope) == ADAC_ECMA_TYPEREF)
			*outer = ADAC_ECMA_TOKEN_RID(scope);
		return 0;
	}
	if (nest == NEST_FLAGGED && (scope & 7) < 2) /* tdNestedPublic and up are nested */
		return 0;
	return adac_ecma_enclosing_type(md, rid, outer, err);
}

static int put_part(struct adac_sig_text *out, const char *s, bool strip, bool escape, struct adac_error *err)
{
	size_t n = strip ? adac_tn_strip_arity(s) : strlen(s);
	for (size_t i = 0; escape && i < n; i++)
		if ((strchr(",[]&*+\\", s[i]) && adac_sig_text_putn(out, "\\", 1, err)) || adac_sig_text_putn(out, s + i, 1, err))
			return -1;
	return escape ? 0 : adac_sig_text_putn(out, s, n, err);
}

/* "Ns.Outer+Inner" of a TypeDef or TypeRef row. */
static int put_row(const struct adac_ecma *md, bool ref, uint32_t rid, struct row_opts o, struct adac_sig_text *out,
                   struct adac_error *err)
{
	uint32_t chain[ADAC_MAX_TYPE_NESTING];
	unsigned n = 0;
	uint32_t cur = rid;
	do {
		if (n == ADAC_MAX_TYPE_NESTING)
			return adac_fail(err, ADAC_E_LIMIT, 0, "%s row %u is nested more than %u deep", ref ? "TypeRef" : "TypeDef",
			                 rid, ADAC_MAX_TYPE_NESTING);
		chain[n++] = cur;
		if (row_outer(md, ref, cur, o.nest, &cur, err))
			return -1;
	} while (cur);
	for (unsigned i = n; i-- > 0;) {
		const char *ns, *name;
		uint32_t scope;
		if (row_names(md, ref, chain[i], &ns, &name, &scope, err))
			return -1;
		if (i != n - 1 && put(out, "+", err))
			return -1;
		if (i == n - 1 && o.ns && ns[0] && (put_part(out, ns, false, o.escape, err) || put(out, ".", err)))
			return -1;
		if (put_part(out, name, o.strip, o.escape, err))
			return -1;
	}
	return 0;
}

/* ---- Names as users type them ---- */

struct norm {
	const char *s;
	char *out;
	size_t size, w;
	bool fit;
};

static void norm_put(struct norm *n, const char *text, size_t len)
{
	if (n->w + len >= n->size) {
		n->fit = false;
		return;
	}
	memcpy(n->out + n->w, text, len);
	n->w += len;
}

static bool norm_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
	       c == '+';
}

/* One name token, a C# keyword or a primitive's full name mapped to its SOS name. */
static void norm_token(struct norm *n, const char *tok, size_t len)
{
	static const uint8_t prims[] = {ADAC_ELEM_VOID, ADAC_ELEM_BOOLEAN, ADAC_ELEM_CHAR, ADAC_ELEM_I1, ADAC_ELEM_U1,
	                                ADAC_ELEM_I2, ADAC_ELEM_U2, ADAC_ELEM_I4, ADAC_ELEM_U4, ADAC_ELEM_I8,
	                                ADAC_ELEM_U8, ADAC_ELEM_R4, ADAC_ELEM_R8, ADAC_ELEM_I, ADAC_ELEM_U,
	                                ADAC_ELEM_TYPEDBYREF, ADAC_ELEM_STRING, ADAC_ELEM_OBJECT};
	for (size_t i = 0; i < sizeof prims; i++) {
		const char *cs = adac_tn_prim(prims[i], ADAC_STYLE_CSHARP), *sos = adac_tn_prim(prims[i], ADAC_STYLE_SOS);
		bool keyword = strlen(cs) == len && strncmp(tok, cs, len) == 0;
		bool full = strncmp(sos, "System.", 7) != 0 && len == 7 + strlen(sos) && strncmp(tok, "System.", 7) == 0 &&
		            strncmp(tok + 7, sos, len - 7) == 0;
		if (keyword || full) {
			norm_put(n, sos, strlen(sos));
			return;
		}
	}
	norm_put(n, tok, len);
}

/* A type at n->s: its name, then its arity and arguments, in either spelling. */
static void norm_type(struct norm *n, unsigned depth)
{
	while (*n->s == ' ')
		n->s++;
	const char *tok = n->s;
	while (norm_name_char(*n->s))
		n->s++;
	norm_token(n, tok, (size_t)(n->s - tok));
	if (depth >= ADAC_MAX_SIG_DEPTH)
		return;
	if (*n->s == '`') {
		n->s++;
		while (*n->s >= '0' && *n->s <= '9')
			n->s++;
		norm_put(n, "<", 1);
		if (n->s[0] != '[' || n->s[1] != '[')
			return; /* no arguments: any instantiation */
		/* [[A, Assembly],[B, Assembly]] */
		n->s++;
		for (bool first = true; *n->s == '['; first = false) {
			n->s++;
			if (!first)
				norm_put(n, ", ", 2);
			norm_type(n, depth + 1);
			for (unsigned d = 0; *n->s && (d || *n->s != ']'); n->s++)
				d += *n->s == '[' ? 1 : *n->s == ']' ? -1u : 0;
			if (*n->s == ']')
				n->s++;
			if (*n->s == ',')
				n->s++;
		}
		if (*n->s == ']')
			n->s++;
		norm_put(n, ">", 1);
	} else if (*n->s == '<') {
		n->s++;
		norm_put(n, "<", 1);
		while (*n->s && *n->s != '>') {
			const char *at = n->s;
			norm_type(n, depth + 1);
			while (*n->s == ' ')
				n->s++;
			if (*n->s == ',') {
				n->s++;
				norm_put(n, ", ", 2);
			} else if (n->s == at) {
				break; /* not a type: keep the rest as it is */
			}
		}
		if (*n->s == '>') {
			n->s++;
			norm_put(n, ">", 1);
		}
	}
}

bool adac_tn_normalize(const char *in, char *out, size_t size)
{
	struct norm n = {.s = in, .out = out, .size = size, .fit = size > 0};
	if (!size)
		return false;
	while (*n.s && n.fit) {
		if (norm_name_char(*n.s)) {
			norm_type(&n, 0);
		} else {
			norm_put(&n, n.s, 1);
			n.s++;
		}
	}
	out[n.w < size ? n.w : size - 1] = '\0';
	return n.fit;
}

int adac_type_filter_init(struct adac_type_filter *f, const char *text, struct adac_error *err)
{
	f->text = text;
	f->norm = NULL;
	if (!text)
		return 0;
	size_t size = strlen(text) * 4 + 16;
	char *norm = malloc(size);
	if (!norm)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	if (adac_tn_normalize(text, norm, size) && strcmp(norm, text) != 0)
		f->norm = norm;
	else
		free(norm);
	return 0;
}

bool adac_contains_nocase(const char *s, const char *text)
{
	size_t n = strlen(text);
	for (; s && *s; s++) {
		size_t i = 0;
		while (i < n && s[i] && tolower((unsigned char)s[i]) == tolower((unsigned char)text[i]))
			i++;
		if (i == n)
			return true;
	}
	return n == 0 && s;
}

bool adac_type_filter_match(const struct adac_type_filter *f, const char *name)
{
	if (!f->text)
		return true;
	return adac_contains_nocase(name, f->text) || (f->norm && adac_contains_nocase(name, f->norm));
}

void adac_type_filter_free(struct adac_type_filter *f)
{
	free(f->norm);
	f->norm = NULL;
}

size_t adac_tn_strip_arity(const char *name)
{
	size_t n = strlen(name), i = n;
	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	if (i < n && i > 0 && name[i - 1] == '`')
		return i - 1;
	return n;
}

/* ---- TypeHandles ---- */

/* How a TypeHandle is spelled: readably (SOS or C# style), or as the DAC's TypeString (the name of
 * a type) or SigFormat (a type in a parameter list) spells it. */
enum th_form { FORM_READABLE, FORM_TYPESTRING, FORM_SIGFORMAT };
struct th_fmt {
	enum th_form form;
	enum adac_name_style style; /* READABLE: SOS or C# */
	unsigned flags;             /* READABLE: ADAC_TN_NO_NAMESPACE */
	bool assembly;              /* TYPESTRING: ", Assembly" after the name */
};

static int fmt_th(struct adac_runtime *rt, uint64_t th, struct th_fmt f, unsigned depth, struct adac_sig_text *out,
                  struct adac_error *err);

static int read_th(struct adac_runtime *rt, uint64_t th, unsigned depth, struct adac_th_info *ti,
                   struct adac_error *err)
{
	if (depth >= ADAC_MAX_TYPE_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, th, "type 0x%llx nests types deeper than %u", (unsigned long long)th,
		                 ADAC_MAX_TYPE_DEPTH);
	return adac_th_read(rt, th, ti, err);
}

/* The i-th of an array of TypeHandles, read one at a time: the block cache makes that cheap, and
 * deep nesting costs no stack. */
static int th_at(struct adac_runtime *rt, uint64_t addr, uint32_t i, uint64_t *th, struct adac_error *err)
{
	return adac_read_ptr(rt->t, addr + (uint64_t)i * adac_target_ptr_size(rt->t), th, err);
}

/* `count` TypeHandles of the array at arr from index `first`, one level deeper, sep between them. */
static int put_th_list(struct adac_runtime *rt, uint64_t arr, uint32_t first, uint32_t count, const char *sep,
                       struct th_fmt f, unsigned depth, struct adac_sig_text *out, struct adac_error *err)
{
	for (uint32_t k = 0; k < count; k++) {
		uint64_t a;
		if ((k && put(out, sep, err)) || th_at(rt, arr, first + k, &a, err) || fmt_th(rt, a, f, depth + 1, out, err))
			return -1;
	}
	return 0;
}

/* A function pointer type: its return type, `open`, its parameter types, ")"; a vararg signature
 * gets ", ..." when `vararg`. */
static int put_fnptr(struct adac_runtime *rt, const struct adac_th_info *ti, const char *open, bool vararg,
                     struct th_fmt f, unsigned depth, struct adac_sig_text *out, struct adac_error *err)
{
	if (put_th_list(rt, ti->ret_and_args, 0, 1, "", f, depth, out, err) || put(out, open, err) ||
	    put_th_list(rt, ti->ret_and_args, 1, ti->num_args, ", ", f, depth, out, err))
		return -1;
	if (vararg && (ti->callconv & ADAC_SIG_CC_MASK) == ADAC_SIG_CC_VARARG && put(out, ", ...", err))
		return -1;
	return put(out, ")", err);
}

/* "[]", "[,]", and "[*]" for a rank-1 array that is not an SZArray (SigFormat: "[]"). */
static int put_array_suffix(struct adac_sig_text *out, bool szarray, uint32_t rank, bool star,
                            struct adac_error *err)
{
	if (szarray)
		return put(out, "[]", err);
	if (put(out, "[", err) || (rank == 1 && star && put(out, "*", err)))
		return -1;
	for (uint32_t i = 1; i < rank; i++)
		if (put(out, ",", err))
			return -1;
	return put(out, "]", err);
}

/* The generic parameter name of a TypeVarTypeDesc (a GenericParam token in its module). */
static int typevar_name(struct adac_runtime *rt, const struct adac_th_info *ti, struct adac_sig_text *out,
                        struct adac_error *err)
{
	const struct adac_ecma *md = adac_ecma_for_module(rt, ti->module, err);
	if (!md)
		return -1;
	if (ADAC_ECMA_TOKEN_TABLE(ti->token) != ADAC_ECMA_GENERICPARAM)
		return adac_fail(err, ADAC_E_CORRUPT, ti->type_handle, "TypeVarTypeDesc 0x%llx has token 0x%08x",
		                 (unsigned long long)ti->type_handle, ti->token);
	struct adac_ecma_genericparam gp;
	if (adac_ecma_genericparam(md, ADAC_ECMA_TOKEN_RID(ti->token), &gp, err))
		return -1;
	return put(out, gp.name, err);
}

static bool is_object_mt(struct adac_runtime *rt, const struct adac_mt_info *mi)
{
	uint64_t where = 0, mt = 0;
	return mi->parent == 0 && !mi->is_interface && !mi->is_value_type &&
	       adac_desc_global(rt->desc, "ObjectMethodTable", &where, NULL) == 0 &&
	       adac_read_ptr(rt->t, where, &mt, NULL) == 0 && mt == mi->method_table;
}

static int readable_mt(struct adac_runtime *rt, const struct adac_mt_info *mt, struct th_fmt f, unsigned depth,
                       struct adac_sig_text *out, struct adac_error *err)
{
	if (mt->is_array)
		return fmt_th(rt, mt->element_type, f, depth + 1, out, err) ||
		       put_array_suffix(out, mt->is_szarray, mt->rank, true, err);
	if (is_prim_elem(mt->signature_elem))
		return put(out, adac_tn_prim(mt->signature_elem, f.style), err);
	if (f.style == ADAC_STYLE_CSHARP && (mt->is_string || is_object_mt(rt, mt)))
		return put(out, adac_tn_prim(mt->is_string ? ADAC_ELEM_STRING : ADAC_ELEM_OBJECT, f.style), err);
	if (mt->is_continuation_without_metadata)
		return fmt_th(rt, mt->parent, f, depth + 1, out, err);
	uint32_t rid = ADAC_ECMA_TOKEN_RID(mt->typedef_token);
	if (rid == 0)
		return put(out, "(dynamicClass)", err);
	const struct adac_ecma *md = adac_ecma_for_module(rt, mt->module, err);
	struct row_opts o = {NEST_ALL, !(f.flags & ADAC_TN_NO_NAMESPACE), mt->num_generic_args != 0, false};
	if (!md || put_row(md, false, rid, o, out, err))
		return -1;
	if (mt->num_generic_args == 0)
		return 0;
	return put(out, "<", err) || put_th_list(rt, mt->instantiation, 0, mt->num_generic_args, ", ", f, depth, out, err) ||
	       put(out, ">", err);
}

/* SOS and C# styles. */
static int readable_th(struct adac_runtime *rt, uint64_t th, struct th_fmt f, unsigned depth, struct adac_sig_text *out,
                       struct adac_error *err)
{
	struct adac_th_info ti;
	if (read_th(rt, th, depth, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE: {
		struct adac_mt_info mt;
		return adac_mt_read(rt, th, &mt, err) || readable_mt(rt, &mt, f, depth, out, err);
	}
	case ADAC_TH_PARAM:
		if (fmt_th(rt, ti.type_arg, f, depth + 1, out, err))
			return -1;
		return ti.elem == ADAC_ELEM_BYREF ? put(out, "&", err) : ti.elem == ADAC_ELEM_PTR ? put(out, "*", err) : 0;
	case ADAC_TH_TYPEVAR:
		return typevar_name(rt, &ti, out, err);
	case ADAC_TH_FNPTR:
		return put_fnptr(rt, &ti, " (", false, f, depth, out, err);
	}
	return 0;
}

/* Module of a TypeHandle, for its assembly name (TypeHandle::GetAssembly); 0 when none. */
static int th_module(struct adac_runtime *rt, uint64_t th, unsigned depth, uint64_t *module, struct adac_error *err)
{
	struct adac_th_info ti;
	*module = 0;
	if (read_th(rt, th, depth, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE: {
		struct adac_mt_info mt;
		if (adac_mt_read(rt, th, &mt, err))
			return -1;
		*module = mt.module;
		return 0;
	}
	case ADAC_TH_PARAM:
		return th_module(rt, ti.type_arg, depth + 1, module, err);
	case ADAC_TH_TYPEVAR:
		*module = ti.module;
		return 0;
	default:
		return 0;
	}
}

/* ", Assembly" (TypeString escapes ']' in it). */
static int put_assembly(struct adac_runtime *rt, uint64_t th, unsigned depth, struct adac_sig_text *out,
                        struct adac_error *err)
{
	uint64_t module = 0;
	if (th_module(rt, th, depth, &module, err))
		return -1;
	if (module == 0)
		return 0;
	const struct adac_loader_module *m = adac_loader_module(rt, module, err);
	if (!m)
		return -1;
	if (!m->simple_name[0])
		return 0;
	if (put(out, ", ", err))
		return -1;
	for (const char *p = m->simple_name; *p; p++)
		if ((*p == ']' && put(out, "\\", err)) || adac_sig_text_putn(out, p, 1, err))
			return -1;
	return 0;
}

static bool th_is_typevar(struct adac_runtime *rt, uint64_t th)
{
	struct adac_th_info ti;
	return adac_th_read(rt, th, &ti, NULL) == 0 && ti.kind == ADAC_TH_TYPEVAR;
}

static int typestring_th(struct adac_runtime *rt, uint64_t th, bool assembly, unsigned depth,
                         struct adac_sig_text *out, struct adac_error *err);

/* TypeString::AppendInst: "[" then per argument "[Type, Assembly]" (a generic variable: "Type"),
 * "," between, then "]". */
static int typestring_inst(struct adac_runtime *rt, uint64_t args, uint32_t n, unsigned depth,
                           struct adac_sig_text *out, struct adac_error *err)
{
	if (put(out, "[", err))
		return -1;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a;
		if ((i && put(out, ",", err)) || th_at(rt, args, i, &a, err))
			return -1;
		if (th_is_typevar(rt, a)) {
			if (typestring_th(rt, a, false, depth + 1, out, err))
				return -1;
		} else if (put(out, "[", err) || typestring_th(rt, a, true, depth + 1, out, err) || put(out, "]", err)) {
			return -1;
		}
	}
	return put(out, "]", err);
}

/* The DAC's TypeString with FormatNamespace | FormatFullInst (| FormatAssembly when `assembly`). */
static int typestring_th(struct adac_runtime *rt, uint64_t th, bool assembly, unsigned depth,
                         struct adac_sig_text *out, struct adac_error *err)
{
	struct adac_th_info ti;
	if (read_th(rt, th, depth, &ti, err))
		return -1;
	struct adac_mt_info mt = {0};
	if (ti.kind == ADAC_TH_METHODTABLE && adac_mt_read(rt, th, &mt, err))
		return -1;
	if (ti.kind == ADAC_TH_METHODTABLE && mt.is_array) {
		if (typestring_th(rt, mt.element_type, false, depth + 1, out, err) ||
		    put_array_suffix(out, mt.is_szarray, mt.rank, true, err))
			return -1;
	} else if (ti.kind == ADAC_TH_PARAM) {
		if ((ti.elem == ADAC_ELEM_VALUETYPE && put(out, "VALUETYPE", err)) ||
		    typestring_th(rt, ti.type_arg, false, depth + 1, out, err) ||
		    (ti.elem == ADAC_ELEM_BYREF && put(out, "&", err)) || (ti.elem == ADAC_ELEM_PTR && put(out, "*", err)))
			return -1;
	} else if (ti.kind == ADAC_TH_TYPEVAR) {
		return typevar_name(rt, &ti, out, err); /* no assembly for generic variables */
	} else if (ti.kind == ADAC_TH_FNPTR) {
		struct th_fmt f = {FORM_TYPESTRING, ADAC_STYLE_DAC, 0, assembly};
		if (put_fnptr(rt, &ti, "(", false, f, depth, out, err))
			return -1;
	} else {
		uint32_t rid = ADAC_ECMA_TOKEN_RID(mt.typedef_token);
		if (mt.is_continuation_without_metadata || rid == 0) {
			if (put(out, "(dynamicClass)", err))
				return -1;
		} else {
			const struct adac_ecma *md = adac_ecma_for_module(rt, mt.module, err);
			if (!md || put_row(md, false, rid, (struct row_opts){NEST_FLAGGED, true, false, true}, out, err))
				return -1;
		}
		if (mt.num_generic_args && !mt.is_generic_definition &&
		    typestring_inst(rt, mt.instantiation, mt.num_generic_args, depth, out, err))
			return -1;
	}
	return assembly ? put_assembly(rt, th, depth, out, err) : 0;
}

/* The DAC's SigFormat::AddType for a runtime TypeHandle in a parameter list. */
static int sigformat_th(struct adac_runtime *rt, uint64_t th, unsigned depth, struct adac_sig_text *out,
                        struct adac_error *err)
{
	struct adac_th_info ti;
	struct th_fmt f = {FORM_SIGFORMAT, ADAC_STYLE_DAC, 0, false};
	if (read_th(rt, th, depth, &ti, err))
		return -1;
	switch (ti.kind) {
	case ADAC_TH_METHODTABLE: {
		struct adac_mt_info mt;
		if (adac_mt_read(rt, th, &mt, err))
			return -1;
		if (mt.is_array)
			return sigformat_th(rt, mt.element_type, depth + 1, out, err) ||
			       put_array_suffix(out, mt.is_szarray, mt.rank, false, err);
		if (is_prim_elem(mt.signature_elem))
			return put(out, adac_tn_prim(mt.signature_elem, ADAC_STYLE_DAC), err);
		uint32_t rid = ADAC_ECMA_TOKEN_RID(mt.typedef_token);
		const struct adac_ecma *md = adac_ecma_for_module(rt, mt.module, err);
		struct adac_ecma_typedef td;
		if (!md)
			return -1;
		if (rid == 0 || mt.is_continuation_without_metadata || adac_ecma_typedef(md, rid, &td, NULL)) {
			if (put(out, "Invalid TypeDef record", err))
				return -1;
		} else if (put_row(md, false, rid, (struct row_opts){NEST_NONE, true, false, false}, out, err)) {
			return -1;
		}
		if (mt.num_generic_args == 0)
			return 0;
		return put(out, "<", err) || put_th_list(rt, mt.instantiation, 0, mt.num_generic_args, ",", f, depth, out, err) ||
		       put(out, ">", err);
	}
	case ADAC_TH_PARAM:
		if (sigformat_th(rt, ti.type_arg, depth + 1, out, err))
			return -1;
		return ti.elem == ADAC_ELEM_VALUETYPE ? 0 : put(out, ti.elem == ADAC_ELEM_BYREF ? " ByRef" : "*", err);
	case ADAC_TH_TYPEVAR:
		return typevar_name(rt, &ti, out, err);
	case ADAC_TH_FNPTR:
		return put_fnptr(rt, &ti, " (", true, f, depth, out, err);
	}
	return 0;
}

static int fmt_th(struct adac_runtime *rt, uint64_t th, struct th_fmt f, unsigned depth, struct adac_sig_text *out,
                  struct adac_error *err)
{
	if (th == 0)
		return put(out, "?", err);
	switch (f.form) {
	case FORM_READABLE:
		return readable_th(rt, th, f, depth, out, err);
	case FORM_TYPESTRING:
		return typestring_th(rt, th, f.assembly, depth, out, err);
	default:
		return sigformat_th(rt, th, depth, out, err);
	}
}

/* How a style spells TypeHandles met inside a signature (instantiations, INTERNAL handles). */
static struct th_fmt sig_th_fmt(enum adac_name_style style, unsigned flags)
{
	if (style == ADAC_STYLE_DAC)
		return (struct th_fmt){FORM_SIGFORMAT, style, 0, false};
	return (struct th_fmt){FORM_READABLE, style, flags, false};
}

int adac_tn_handle(struct adac_runtime *rt, uint64_t type_handle, enum adac_name_style style, unsigned flags,
                   struct adac_sig_text *out, struct adac_error *err)
{
	if (style == ADAC_STYLE_DAC)
		return fmt_th(rt, type_handle, (struct th_fmt){FORM_TYPESTRING, style, 0, false}, 0, out, err);
	return fmt_th(rt, type_handle, sig_th_fmt(style, flags), 0, out, err);
}

int adac_tn_inst(struct adac_runtime *rt, uint64_t inst, uint32_t n, enum adac_name_style style, unsigned flags,
                 struct adac_sig_text *out, struct adac_error *err)
{
	if (style == ADAC_STYLE_DAC)
		return typestring_inst(rt, inst, n, 0, out, err);
	return put(out, "<", err) || put_th_list(rt, inst, 0, n, ", ", sig_th_fmt(style, flags), 0, out, err) ||
	       put(out, ">", err);
}

/* ---- Signature types in a context ---- */

struct sig_fmt {
	const struct adac_type_ctx *ctx;
	enum adac_name_style style;
	unsigned flags;
};

static int fmt_sig(const struct sig_fmt *f, const struct adac_sig_type *ty, unsigned depth, struct adac_sig_text *out,
                   struct adac_error *err);
static int fmt_params(const struct sig_fmt *f, const struct adac_sig_method *m, unsigned depth,
                      struct adac_sig_text *out, struct adac_error *err);

int adac_type_ctx_arg(const struct adac_type_ctx *ctx, bool method_var, uint32_t index, uint64_t *th,
                      struct adac_error *err)
{
	*th = 0;
	uint32_t n = method_var ? ctx->nmethod : ctx->nclass;
	uint64_t at = method_var ? ctx->method_inst : ctx->class_inst;
	if (!ctx->rt || index >= n)
		return 0;
	if (!at) {
		if (!method_var)
			*th = ctx->class_one;
		return 0;
	}
	return th_at(ctx->rt, at, index, th, err);
}

static unsigned ctx_ptr_size(const struct adac_type_ctx *ctx)
{
	return ctx->rt ? adac_target_ptr_size(ctx->rt->t) : 8;
}

/* A TypeDef/TypeRef name, a TypeSpec decoded. strip: drop the arity (a GENERICINST's type). */
static int fmt_token(const struct sig_fmt *f, uint32_t token, bool strip, unsigned depth, struct adac_sig_text *out,
                     struct adac_error *err)
{
	const struct adac_type_ctx *c = f->ctx;
	if (!c->md)
		return adac_sig_text_putf(out, err, "0x%08x", token);
	bool dac = f->style == ADAC_STYLE_DAC;
	/* SigFormat prints the row's own name as it is ("Task`1<Int32>"), with its namespace. */
	struct row_opts o = {dac ? NEST_NONE : NEST_ALL, dac || !(f->flags & ADAC_TN_NO_NAMESPACE), strip && !dac, false};
	uint32_t rid = ADAC_ECMA_TOKEN_RID(token);
	switch (ADAC_ECMA_TOKEN_TABLE(token)) {
	case ADAC_ECMA_TYPEDEF:
	case ADAC_ECMA_TYPEREF:
		return put_row(c->md, ADAC_ECMA_TOKEN_TABLE(token) == ADAC_ECMA_TYPEREF, rid, o, out, err);
	case ADAC_ECMA_TYPESPEC: {
		if (dac)
			return 0; /* SigFormat prints nothing for a TypeSpec in a CLASS position */
		const uint8_t *blob;
		uint32_t len = 0;
		struct adac_sig *s;
		if (depth >= ADAC_MAX_SIG_DEPTH)
			return adac_fail(err, ADAC_E_LIMIT, 0, "signature types nest deeper than %u", ADAC_MAX_SIG_DEPTH);
		if (adac_ecma_typespec(c->md, rid, &blob, &len, err) ||
		    adac_sig_decode(blob, len, ADAC_SIG_TYPESPEC, ctx_ptr_size(c), &s, err))
			return -1;
		int rc = fmt_sig(f, s->type, depth + 1, out, err);
		adac_sig_free(s);
		return rc;
	}
	default:
		return adac_fail(err, ADAC_E_CORRUPT, 0, "token 0x%08x is not a type", token);
	}
}

/* VAR / MVAR: the instantiation's argument, else the parameter's name (not in the DAC style), else
 * !n / !!n. */
static int fmt_var(const struct sig_fmt *f, bool mvar, uint32_t index, unsigned depth, struct adac_sig_text *out,
                   struct adac_error *err)
{
	const struct adac_type_ctx *c = f->ctx;
	uint64_t th;
	if (adac_type_ctx_arg(c, mvar, index, &th, err))
		return -1;
	if (th)
		return fmt_th(c->rt, th, sig_th_fmt(f->style, f->flags), depth + 1, out, err);
	uint32_t owner = mvar ? c->method_token : c->type_token;
	if (f->style != ADAC_STYLE_DAC && c->md && owner) {
		uint32_t rid = 0;
		struct adac_error e = {0};
		struct adac_ecma_genericparam gp;
		if (adac_ecma_generic_param(c->md, owner, index, &rid, &e) == 0)
			return adac_ecma_genericparam(c->md, rid, &gp, err) || put(out, gp.name, err);
		if (e.code != ADAC_E_NOT_FOUND) {
			adac_error_copy(err, &e);
			return -1;
		}
	}
	return adac_sig_text_putf(out, err, "%s%u", mvar ? "!!" : "!", index);
}

/* ELEMENT_TYPE_INTERNAL: a runtime TypeHandle (SigFormat: its TypeDef's name, no instantiation). */
static int fmt_internal(const struct sig_fmt *f, uint64_t th, unsigned depth, struct adac_sig_text *out,
                        struct adac_error *err)
{
	struct adac_runtime *rt = f->ctx->rt;
	if (!rt)
		return adac_sig_text_putf(out, err, "0x%llx", (unsigned long long)th);
	if (f->style != ADAC_STYLE_DAC)
		return fmt_th(rt, th, sig_th_fmt(f->style, f->flags), depth + 1, out, err);
	struct adac_mt_info mt;
	if (adac_mt_read(rt, th, &mt, err))
		return -1;
	const struct adac_ecma *md = adac_ecma_for_module(rt, mt.module, err);
	return !md || put_row(md, false, ADAC_ECMA_TOKEN_RID(mt.typedef_token), (struct row_opts){NEST_NONE, true, false, false},
	                      out, err);
}

static int fmt_sig(const struct sig_fmt *f, const struct adac_sig_type *ty, unsigned depth, struct adac_sig_text *out,
                   struct adac_error *err)
{
	if (depth > ADAC_MAX_SIG_DEPTH)
		return adac_fail(err, ADAC_E_LIMIT, 0, "signature types nest deeper than %u", ADAC_MAX_SIG_DEPTH);
	bool dac = f->style == ADAC_STYLE_DAC;
	const char *prim = adac_tn_prim(ty->elem, f->style);
	int rc = 0;
	if (prim) {
		rc = put_prim(prim, f->style, f->flags, out, err);
	} else {
		switch (ty->elem) {
		case ADAC_ELEM_CLASS:
		case ADAC_ELEM_VALUETYPE:
			rc = fmt_token(f, ty->token, false, depth, out, err);
			break;
		case ADAC_ELEM_GENERICINST:
			if (!ty->inner)
				return adac_fail(err, ADAC_E_CORRUPT, 0, "generic instantiation without a type");
			rc = fmt_token(f, ty->inner->token, true, depth, out, err) || put(out, "<", err);
			for (uint32_t i = 0; rc == 0 && i < ty->nargs; i++)
				rc = (i && put(out, dac ? "," : ", ", err)) || fmt_sig(f, ty->args[i], depth + 1, out, err);
			rc = rc || put(out, ">", err);
			break;
		case ADAC_ELEM_SZARRAY:
		case ADAC_ELEM_ARRAY:
			rc = fmt_sig(f, ty->inner, depth + 1, out, err) ||
			     put_array_suffix(out, ty->elem == ADAC_ELEM_SZARRAY, ty->number, !dac, err);
			break;
		case ADAC_ELEM_BYREF:
			rc = fmt_sig(f, ty->inner, depth + 1, out, err) || put(out, dac ? " ByRef" : "&", err);
			break;
		case ADAC_ELEM_PTR:
			rc = fmt_sig(f, ty->inner, depth + 1, out, err) || put(out, "*", err);
			break;
		case ADAC_ELEM_VAR:
		case ADAC_ELEM_MVAR:
			rc = fmt_var(f, ty->elem == ADAC_ELEM_MVAR, ty->number, depth, out, err);
			break;
		case ADAC_ELEM_FNPTR:
			rc = fmt_sig(f, ty->fnptr->ret, depth + 1, out, err) || put(out, " ", err) ||
			     fmt_params(f, ty->fnptr, depth + 1, out, err);
			break;
		case ADAC_ELEM_INTERNAL:
			rc = fmt_internal(f, ty->handle, depth, out, err);
			break;
		default:
			rc = adac_sig_text_putf(out, err, "<element type 0x%02x>", ty->elem);
			break;
		}
	}
	if (rc == 0 && ty->pinned && f->style == ADAC_STYLE_SOS)
		rc = put(out, " pinned", err);
	return rc ? -1 : 0;
}

/* "(A, B)" with ", ..." for varargs (at the sentinel, or at the end of a vararg definition). */
static int fmt_params(const struct sig_fmt *f, const struct adac_sig_method *m, unsigned depth,
                      struct adac_sig_text *out, struct adac_error *err)
{
	if (put(out, "(", err))
		return -1;
	for (uint32_t i = 0; i < m->nparams; i++)
		if ((i && put(out, ", ", err)) || (i == m->sentinel && put(out, "..., ", err)) ||
		    fmt_sig(f, m->params[i], depth, out, err))
			return -1;
	if ((m->callconv & ADAC_SIG_CC_MASK) == ADAC_SIG_CC_VARARG && m->sentinel == UINT32_MAX &&
	    put(out, m->nparams ? ", ..." : "...", err))
		return -1;
	return put(out, ")", err);
}

int adac_tn_sig(const struct adac_type_ctx *ctx, const struct adac_sig_type *ty, enum adac_name_style style,
                unsigned flags, struct adac_sig_text *out, struct adac_error *err)
{
	struct sig_fmt f = {ctx, style, flags};
	return fmt_sig(&f, ty, 0, out, err);
}

int adac_tn_params(const struct adac_type_ctx *ctx, const struct adac_sig_method *m, enum adac_name_style style,
                   unsigned flags, struct adac_sig_text *out, struct adac_error *err)
{
	struct sig_fmt f = {ctx, style, flags};
	return fmt_params(&f, m, 0, out, err);
}

int adac_tn_token(const struct adac_type_ctx *ctx, uint32_t token, enum adac_name_style style, unsigned flags,
                  struct adac_sig_text *out, struct adac_error *err)
{
	struct sig_fmt f = {ctx, style, flags};
	return fmt_token(&f, token, (flags & ADAC_TN_NO_ARITY) != 0, 0, out, err);
}

/* ---- Contexts ---- */

static void ctx_from_mt(struct adac_type_ctx *ctx, const struct adac_mt_info *mi)
{
	ctx->type_token = ADAC_ECMA_TOKEN_RID(mi->typedef_token) ? mi->typedef_token : 0;
	ctx->nclass = mi->num_generic_args;
	ctx->class_inst = mi->instantiation;
	if (mi->is_array) {
		/* An array type's class instantiation is its element type (SigTypeContext for arrays). */
		ctx->nclass = 1;
		ctx->class_one = mi->element_type;
	}
}

int adac_type_ctx_for_mt(struct adac_runtime *rt, uint64_t mt, struct adac_type_ctx *ctx, struct adac_error *err)
{
	memset(ctx, 0, sizeof *ctx);
	struct adac_mt_info mi;
	if (adac_mt_read(rt, mt, &mi, err))
		return -1;
	ctx->rt = rt;
	ctx->module = mi.module;
	ctx_from_mt(ctx, &mi);
	ctx->md = adac_ecma_for_module(rt, mi.module, err);
	return ctx->md ? 0 : -1;
}

int adac_type_ctx_for_method(struct adac_runtime *rt, const struct adac_method_info *mi, uint64_t exact_mt,
                             struct adac_type_ctx *ctx, struct adac_error *err)
{
	memset(ctx, 0, sizeof *ctx);
	struct adac_mt_info mt;
	if (adac_mt_read(rt, exact_mt ? exact_mt : mi->method_table, &mt, err))
		return -1;
	ctx->rt = rt;
	ctx->module = mi->module;
	ctx_from_mt(ctx, &mt);
	ctx->method_token = mi->token;
	ctx->nmethod = mi->num_generic_args;
	ctx->method_inst = mi->generic_args_addr;
	ctx->md = adac_ecma_for_module(rt, mi->module, err);
	return ctx->md ? 0 : -1;
}

void adac_type_ctx_for_metadata(struct adac_type_ctx *ctx, const struct adac_ecma *md, uint32_t type_token,
                                uint32_t method_token)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->md = md;
	ctx->type_token = type_token;
	ctx->method_token = method_token;
}
