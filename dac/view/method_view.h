/* method_view.h - a MethodDesc as `dumpmd` shows it (SOS dumpmd style). */
#ifndef ADAC_METHOD_VIEW_H
#define ADAC_METHOD_VIEW_H

#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;
struct json_t;

/* "Method Name: ...", its SOS name, class, MethodTable, token, module, kind, async flags and
 * code, one fact per line. Everything is read before the first line is printed: -1 prints nothing. */
int adac_method_desc_print(struct adac_runtime *rt, uint64_t md, struct adac_out *out, struct adac_error *err);
/* The same facts as a JSON object; NULL with err. */
struct json_t *adac_method_desc_json(struct adac_runtime *rt, uint64_t md, struct adac_error *err);

/* A MethodDesc that could not be shown: "MethodDesc 0x...: error: <msg>", or
 * {"method_desc", "error"}. */
void adac_method_desc_print_error(uint64_t md, const struct adac_error *e, struct adac_out *out);
struct json_t *adac_method_desc_error_json(uint64_t md, const struct adac_error *e);

#endif
