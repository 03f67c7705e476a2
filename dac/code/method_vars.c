/* method_vars.c - a method's IL variables: kinds, names and static types. */
#include "code/method_vars.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strf.h"
#include "code/debuginfo.h"
#include "metadata/ecma_metadata.h"
#include "metadata/pdb.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/names.h"

void adac_method_vars_free(struct adac_method_vars *mv)
{
	adac_sig_free(mv->sig);
	adac_sig_free(mv->locals);
	memset(mv, 0, sizeof *mv);
}

int adac_method_vars_init(struct adac_runtime *rt, uint64_t method_desc, struct adac_method_vars *mv,
                          struct adac_error *err)
{
	memset(mv, 0, sizeof *mv);
	if (adac_md_read(rt, method_desc, &mv->mi, err))
		return -1;
	if (!mv->mi.token)
		return adac_fail(err, ADAC_E_NOT_FOUND, method_desc, "MethodDesc 0x%llx has no metadata token",
		                 (unsigned long long)method_desc);
	if (adac_type_ctx_for_method(rt, &mv->mi, 0, &mv->tctx, err))
		return -1;
	mv->md = mv->tctx.md;
	mv->this_mt = mv->mi.method_table;
	unsigned ps = adac_target_ptr_size(rt->t);
	struct adac_ecma_methoddef row;
	if (adac_ecma_methoddef(mv->md, ADAC_ECMA_TOKEN_RID(mv->mi.token), &row, err) ||
	    adac_sig_decode(row.sig, row.sig_len, ADAC_SIG_METHOD, ps, &mv->sig, err))
		goto fail;
	mv->hasthis = (mv->sig->method.callconv & ADAC_SIG_CC_HASTHIS) != 0;
	mv->nargs = mv->sig->method.nparams + (mv->hasthis ? 1u : 0u);
	if (row.rva) {
		struct adac_ecma_method_body body;
		const uint8_t *ls;
		uint32_t ls_len = 0;
		if (adac_ecma_method_body(mv->md, row.rva, &body, err))
			goto fail;
		if (body.local_sig_token &&
		    (adac_ecma_standalonesig(mv->md, ADAC_ECMA_TOKEN_RID(body.local_sig_token), &ls, &ls_len, err) ||
		     adac_sig_decode(ls, ls_len, ADAC_SIG_LOCALS, ps, &mv->locals, err)))
			goto fail;
	}
	mv->nlocals = mv->locals ? mv->locals->count : 0;
	mv->path = adac_module_path(rt, mv->mi.module, NULL);
	if (mv->path && !*mv->path)
		mv->path = NULL;
	return 0;
fail:
	adac_method_vars_free(mv);
	return -1;
}

void adac_method_var_free(struct adac_method_var *v)
{
	free(v->name);
	free(v->error);
	adac_vtype_free(&v->type);
	memset(v, 0, sizeof *v);
}

/* The type's failure, kept as the variable's error (an unknown type is not the caller's failure). */
static int type_error(struct adac_method_var *v, const struct adac_error *e, struct adac_error *err)
{
	if (!v->type.name && adac_strf(&v->type.name, err, "?"))
		return -1;
	v->type.kind = ADAC_VK_UNKNOWN;
	return adac_strf(&v->error, err, "%s", e->msg);
}

int adac_method_var(struct adac_runtime *rt, const struct adac_method_vars *mv, int32_t vn, uint32_t il_offset,
                    struct adac_method_var *v, struct adac_error *err)
{
	memset(v, 0, sizeof *v);
	if (vn < 0 || (uint32_t)vn >= mv->nargs + mv->nlocals)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "VarNumber %d is past the method's %u arguments and %u locals", vn,
		                 mv->nargs, mv->nlocals);
	struct adac_error e = {0};
	if ((uint32_t)vn < mv->nargs) {
		v->index = (uint32_t)vn;
		if (mv->hasthis && vn == 0) {
			v->kind = ADAC_VAR_THIS;
			if (adac_strf(&v->name, err, "this"))
				goto fail;
			if (adac_vtype_from_th(rt, mv->this_mt, &v->type, &e)) {
				if (type_error(v, &e, err))
					goto fail;
				return 0;
			}
			if (v->type.kind == ADAC_VK_STRUCT) {
				/* `this` of a value type's method is a byref. */
				char *name = v->type.name;
				v->type.name = NULL;
				adac_vtype_free(&v->type);
				v->type.kind = ADAC_VK_POINTER;
				v->type.elem = ADAC_ELEM_BYREF;
				v->type.size = adac_target_ptr_size(rt->t);
				int rc = adac_strf(&v->type.name, err, "%s&", name ? name : "?");
				free(name);
				if (rc)
					goto fail;
			}
			return 0;
		}
		v->kind = ADAC_VAR_ARG;
		uint32_t p = (uint32_t)vn - (mv->hasthis ? 1u : 0u);
		uint32_t prid;
		struct adac_ecma_param pr;
		if (adac_ecma_param_of(mv->md, ADAC_ECMA_TOKEN_RID(mv->mi.token), (uint16_t)(p + 1), &prid, NULL) == 0 &&
		    adac_ecma_param(mv->md, prid, &pr, NULL) == 0 && pr.name[0]) {
			if (adac_strf(&v->name, err, "%s", pr.name))
				goto fail;
		} else if (adac_strf(&v->name, err, "arg%d", vn)) {
			goto fail;
		}
		v->sig = mv->sig->method.params[p];
		if (adac_vtype_from_sig(&mv->tctx, v->sig, &v->type, &e) && type_error(v, &e, err))
			goto fail;
		return 0;
	}
	uint32_t li = (uint32_t)vn - mv->nargs;
	v->kind = ADAC_VAR_LOCAL;
	v->index = li;
	const char *name = NULL;
	if (mv->path && il_offset != ADAC_IL_NO_MAPPING)
		name = adac_pdb_local_name(rt, mv->path, mv->mi.token, li, il_offset, NULL);
	if (name ? adac_strf(&v->name, err, "%s", name) : adac_strf(&v->name, err, "V_%u", li))
		goto fail;
	/* Without a PDB no local has a name: none can be told from the compiler's own. */
	v->temporary = !name && mv->path && il_offset != ADAC_IL_NO_MAPPING;
	v->sig = mv->locals->types[li];
	if (adac_vtype_from_sig(&mv->tctx, v->sig, &v->type, &e) && type_error(v, &e, err))
		goto fail;
	return 0;
fail:
	adac_method_var_free(v);
	return -1;
}
