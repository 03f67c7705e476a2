/* chain_view.h - async frames, resolved chains and what they await, as text (like LLDB's
 * backtraces) and as JSON. Shared by `bt`, `frame` and `ps`. */
#ifndef ADAC_CHAIN_VIEW_H
#define ADAC_CHAIN_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "async/async_frame.h"
#include "async/resolved_chain.h"
#include "base/limits.h"

struct adac_runtime;
struct adac_out;
struct json_t;

/* Flags for printing. */
#define ADAC_VIEW_LOCALS 0x1u   /* the awaited locals under each frame */
#define ADAC_VIEW_INTERNALS 0x2u /* with them the compiler temporaries and continuation internals */

/* Prints "  async #N: ..." lines (user frames only, numbered from first_index), the awaiting line,
 * and an error line where the chain broke. `limit` caps the frames printed (0: all; the cut is
 * stated). Returns the number of frames printed. */
size_t adac_chain_view_print(struct adac_runtime *rt, const struct adac_resolved_chain *v, struct adac_out *out,
                             size_t first_index, size_t limit, unsigned flags);

/* The text of frames remembered per suspension point (what the frame cache of resolved_chain.h
 * shares), for listings of many chains parked at the same few: each is formatted once. */
struct adac_frame_texts;
struct adac_frame_texts *adac_frame_texts_new(void);
void adac_frame_texts_free(struct adac_frame_texts *m);
/* adac_chain_view_print through texts (NULL: none). */
size_t adac_chain_view_print_ex(struct adac_runtime *rt, const struct adac_resolved_chain *v, struct adac_out *out,
                                size_t first_index, size_t limit, unsigned flags, struct adac_frame_texts *texts);

/* One frame: "<indent>async #N: <ip> <module>`<method> + <offset> at <file>:<line> [state <n>]",
 * and its note on the next line. */
void adac_async_frame_print(const struct adac_async_frame *f, size_t index, const char *indent, struct adac_out *out);
/* One frame as JSON (the objects of a chain's "frames" array). */
struct json_t *adac_async_frame_json(const struct adac_async_frame *f, size_t index);

/* What a chain waits for: "  awaiting: <address> <type> [(token <n>)] [<task status>]", and as
 * JSON {"object", "type", "field", "token"?, "status"?, "state_flags"?}. */
void adac_awaiting_print(const struct adac_awaiting *a, struct adac_out *out);
/* ... without "  awaiting: " and the newline, to f. */
void adac_awaiting_fprint(const struct adac_awaiting *a, FILE *f);
struct json_t *adac_awaiting_json(const struct adac_awaiting *a);

/* Appends the shown frames of v (at most limit; 0: all) to the array frames as
 * adac_async_frame_json objects numbered from `first`, each with its locals when flags has
 * ADAC_VIEW_LOCALS, and their IPs to the array ips unless NULL; returns how many. */
size_t adac_chain_frames_json(struct adac_runtime *rt, const struct adac_resolved_chain *v, size_t limit, unsigned flags,
                              size_t first, struct json_t *frames, struct json_t *ips);
/* Where v starts: its first continuation (the address it ended at when it has none). */
uint64_t adac_chain_view_head(const struct adac_resolved_chain *v);
/* Sets j's "end" (complete, truncated, broken, cycle) and "error" (null, or why it ended early). */
void adac_chain_end_json(const struct adac_resolved_chain *v, struct json_t *j);
/* {"head", "task", "awaiting", "ips", "frames", "end", "error"} */
struct json_t *adac_chain_view_json(struct adac_runtime *rt, const struct adac_resolved_chain *v, size_t limit,
                                    unsigned flags);


/* Where a frame (async or classic) is in its source: " at <file name>:<line>" (the PDB's path
 * without its directories), else " [IL_xxxx]" when only the IL offset is known, else "". Returns
 * buf, which ADAC_FRAME_WHERE_MAX bytes make large enough for any document name of a PDB. */
#define ADAC_FRAME_WHERE_MAX (ADAC_MAX_PATH_BYTES + 32)
const char *adac_frame_where(bool has_source, const char *file, uint32_t line, bool has_il, uint32_t il_offset,
                             char *buf, size_t size);

/* A frame as text without its addresses: "<module>`<method><where> [<tag>]" (where as
 * adac_frame_where gives it; "<unknown method><where> [<tag>]" without a method). Returns buf. */
const char *adac_frame_label(const char *module, const char *method, bool has_source, const char *file, uint32_t line,
                             bool has_il, uint32_t il_offset, const char *tag, char *buf, size_t size);

/* An async frame's label, for grouping identical frames: tag "state <n>". Returns buf. */
const char *adac_async_frame_label(const struct adac_async_frame *f, char *buf, size_t size);

#endif
