/* json.h - the JSON conventions shared by every printer: target addresses as strings, and a value
 * printed to an output sink. */
#ifndef ADAC_JSON_H
#define ADAC_JSON_H

#include <stdint.h>

#include "base/error.h"

struct adac_out;
struct json_t;

/* A target address as a JSON string: "0x00007f0000001000" (16 hex digits). */
struct json_t *adac_json_addr(uint64_t v);

/* Prints value with two-space indentation and a newline, then releases it (value may be NULL:
 * jansson's constructors return NULL when out of memory). */
int adac_json_print(struct adac_out *out, struct json_t *value, struct adac_error *err);

/* Prints `before`, value as adac_json_print formats it with every line indented by `indent`
 * spaces, then `after`, in one write; for documents printed a member at a time. value stays the
 * caller's. */
int adac_json_print_indented(struct adac_out *out, const char *before, struct json_t *value, unsigned indent,
                             const char *after, struct adac_error *err);

#endif
