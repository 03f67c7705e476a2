/* method_vars.h - what a method's IL variables are: for the variable numbers of its debug info
 * (this = 0 for instance methods, the arguments, then the locals), their kind, name and static
 * type, from the method's signature, its local signature and instantiation, the Param table and
 * the portable PDB's local scopes. */
#ifndef ADAC_METHOD_VARS_H
#define ADAC_METHOD_VARS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "metadata/signature.h"
#include "types/methoddesc.h"
#include "types/typename.h"
#include "types/vtype.h"

struct adac_runtime;

enum adac_var_kind { ADAC_VAR_THIS, ADAC_VAR_ARG, ADAC_VAR_LOCAL };

struct adac_method_vars {
	struct adac_method_info mi;
	const struct adac_ecma *md;
	const char *path;               /* the assembly, for its PDB; NULL when unknown */
	struct adac_sig *sig;           /* method signature */
	struct adac_sig *locals;        /* local signature, NULL when none */
	bool hasthis;
	uint32_t nargs;                 /* IL arguments, `this` included */
	uint32_t nlocals;
	struct adac_type_ctx tctx;      /* instantiation in effect */
	uint64_t this_mt;               /* the type of `this` */
};

/* Reads the signatures of method_desc (which needs a metadata token). */
int adac_method_vars_init(struct adac_runtime *rt, uint64_t method_desc, struct adac_method_vars *mv,
                          struct adac_error *err);
void adac_method_vars_free(struct adac_method_vars *mv);

struct adac_method_var {
	enum adac_var_kind kind;
	uint32_t index;       /* ARG/THIS: IL argument number; LOCAL: local slot */
	char *name;           /* owned: the Param table's or the PDB's (scopes at il_offset); else arg<n> / V_<n> */
	struct adac_vtype type;
	const struct adac_sig_type *sig; /* its signature type in mv->tctx (NULL for `this`) */
	char *error;          /* owned: why the type is unknown (type.kind is then ADAC_VK_UNKNOWN) */
	bool temporary;       /* a local the method's PDB gives no name: the compiler's, not the source's */
};

/* IL variable var_number (>= 0) at il_offset (ADAC_IL_NO_MAPPING: no scope known). A value type's
 * `this` is a byref. ADAC_E_NOT_FOUND when the number is past the method's variables. */
int adac_method_var(struct adac_runtime *rt, const struct adac_method_vars *mv, int32_t var_number, uint32_t il_offset,
                    struct adac_method_var *out, struct adac_error *err);
void adac_method_var_free(struct adac_method_var *v);

#endif
