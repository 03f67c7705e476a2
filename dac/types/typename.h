/* typename.h - where the types of a signature get their names and instantiations. (On this branch
 * only the context; the type-name engine itself is still in view/value_format.c.) */
#ifndef ADAC_TYPENAME_H
#define ADAC_TYPENAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "metadata/signature.h"

struct adac_runtime;
struct adac_ecma;

/* Where the types of a signature get their names: a module's metadata and the instantiations of a
 * type (nclass TypeHandles at class_inst, or the single class_one: an array type's element) and of
 * a method (nmethod at method_inst). type_token / method_token name the generic parameters that
 * have no instantiation. */
struct adac_type_ctx {
	struct adac_runtime *rt;
	uint64_t module;
	const struct adac_ecma *md;
	uint32_t nclass;
	uint64_t class_inst;
	uint64_t class_one;
	uint32_t nmethod;
	uint64_t method_inst;
	uint32_t type_token;
	uint32_t method_token;
};

/* The context of a type's own fields: its module and instantiation. */
int adac_type_ctx_for_mt(struct adac_runtime *rt, uint64_t mt, struct adac_type_ctx *ctx, struct adac_error *err);

#endif
