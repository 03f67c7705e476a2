/* json.h - the JSON conventions shared by every printer: target addresses as strings, and a value
 * printed to an output sink. */
#ifndef ADAC_JSON_H
#define ADAC_JSON_H

#include <stdint.h>

#include "base/error.h"

struct adac_arena;
struct adac_out;
struct json_t;

/* The version of the JSON documents commands print (docs/json.md): raised when a member changes
 * meaning or goes away, not when one is added. */
#define ADAC_JSON_SCHEMA 1

/* A target address as a JSON string: "0x00007f0000001000" (16 hex digits). */
struct json_t *adac_json_addr(uint64_t v);

/* A JSON string of text read from the target (a name, a path, a message): json_string's, with each
 * byte that starts no UTF-8 sequence as U+FFFD (json_string returns NULL for such text, and the
 * member it was set to would be missing). NULL for NULL, and when memory runs out. */
struct json_t *adac_json_text(const char *s);

/* Prints value with two-space indentation and a newline, then releases it (value may be NULL:
 * jansson's constructors return NULL when out of memory). */
int adac_json_print(struct adac_out *out, struct json_t *value, struct adac_error *err);

/* Prints the one top-level shape of every command's JSON, {"schema": ADAC_JSON_SCHEMA,
 * "<command>": payload}, as adac_json_print does (payload is released; NULL: out of memory). */
int adac_json_print_document(struct adac_out *out, const char *command, struct json_t *payload,
                             struct adac_error *err);

/* The start of such a document printed a member at a time, up to the payload:
 * "{\n  \"schema\": 1,\n  \"<command>\": "; the caller prints the payload indented by 2 and "\n}\n". */
void adac_json_document_open(struct adac_out *out, const char *command);

/* The end of such a document, after the payload's members printed so far: rest's members (after
 * a comma; rest may be NULL or empty, and is released), the payload's closing brace and the
 * document's. */
int adac_json_document_close(struct adac_out *out, struct json_t *rest, struct adac_error *err);

/* Prints `before`, value as adac_json_print formats it with every line indented by `indent`
 * spaces, then `after`, in one write; for documents printed a member at a time. value stays the
 * caller's. */
int adac_json_print_indented(struct adac_out *out, const char *before, struct json_t *value, unsigned indent,
                             const char *after, struct adac_error *err);

/* Prints the members of object value as adac_json_print_indented would print them between the
 * braces: each line after the opening brace's, up to the closing brace's, as "\n", `indent`
 * spaces, the line (so nothing for an empty object). For a member list streamed after others.
 * value stays the caller's. */
int adac_json_print_members(struct adac_out *out, struct json_t *value, unsigned indent, struct adac_error *err);

/* jansson values made on this thread between begin and end come from arena a, and are all taken
 * back at the end (a million-stack `ps --json` made and released ~50 of them per frame with malloc
 * and free): what is made there must be released there. setup (once, before other threads make
 * values) routes jansson's memory through here; outside a begin/end, it is malloc's. */
void adac_json_scratch_setup(void);
void adac_json_scratch_begin(struct adac_arena *a);
void adac_json_scratch_end(void);

#endif
