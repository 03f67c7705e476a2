/* runtime_view.h - the runtime in a target and its contract descriptor, as `runtime` shows them. */
#ifndef ADAC_RUNTIME_VIEW_H
#define ADAC_RUNTIME_VIEW_H

#include "base/error.h"

struct adac_runtime;
struct adac_descriptor;
struct adac_out;

/* ".NET runtime <version> (<arch>)", where it is loaded, the descriptor and its contracts. */
void adac_runtime_print(const struct adac_runtime *rt, struct adac_out *out);
/* The same facts as {"runtime": {...}}. */
int adac_runtime_print_json(const struct adac_runtime *rt, struct adac_out *out, struct adac_error *err);
/* ... the object inside (report --json's "runtime"). */
struct json_t;
struct json_t *adac_runtime_json(const struct adac_runtime *rt);

/* Every type (size, then its fields in offset order), global and contract, one per line, sorted
 * by name, then the sub-descriptors found: the form `runtime --verbose` shows and the descriptor
 * tests compare. */
void adac_desc_dump(const struct adac_descriptor *d, struct adac_out *out);

#endif
