/* chain_view.h - a walked chain with its frames resolved, and how it is printed (text like LLDB's
 * backtraces, or JSON). Shared by `bt` and `ps`. */
#ifndef ADAC_CHAIN_VIEW_H
#define ADAC_CHAIN_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "async/async_frame.h"
#include "async/continuation.h"
#include "base/limits.h"

struct adac_runtime;
struct adac_out;
struct json_t;

struct adac_chain_view {
	struct adac_chain chain;
	struct adac_async_frame *frames;   /* one per chain link, in chain order */
	bool has_awaiting;
	struct adac_awaiting awaiting;     /* what the head infrastructure continuation awaits */
	uint64_t task;                     /* the task owning the chain, when known */
};

int adac_chain_view_build(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_chain_view *v,
                          struct adac_error *err);
void adac_chain_view_free(struct adac_chain_view *v);

/* Flags for printing. */
#define ADAC_VIEW_LOCALS 0x1u   /* the awaited locals under each frame */

/* Prints "  async #N: ..." lines (user frames only, numbered from first_index), the awaiting line,
 * and an error line where the chain broke. `limit` caps the frames printed (0: all). Returns the
 * number of frames printed. */
size_t adac_chain_view_print(struct adac_runtime *rt, const struct adac_chain_view *v, struct adac_out *out,
                             size_t first_index, size_t limit, unsigned flags);

/* One frame: "<indent>async #N: <ip> <module>`<method> + <offset> at <file>:<line> [state <n>]",
 * and its note on the next line. */
void adac_async_frame_print(const struct adac_async_frame *f, size_t index, const char *indent, struct adac_out *out);
/* One frame as JSON (the objects of a chain's "frames" array). */
struct json_t *adac_async_frame_json(const struct adac_async_frame *f, size_t index);

/* What a chain waits for: "  awaiting: <address> <type> [(token <n>)] [<task status>]", and as
 * JSON {"object", "type", "field", "token"?, "status"?, "state_flags"?}. */
void adac_awaiting_print(const struct adac_awaiting *a, struct adac_out *out);
struct json_t *adac_awaiting_json(const struct adac_awaiting *a);

/* {"head", "task", "awaiting", "ips", "frames", "end", "error"} */
struct json_t *adac_chain_view_json(struct adac_runtime *rt, const struct adac_chain_view *v, size_t limit,
                                    unsigned flags);

#endif

/* ---- Many chains (`ps`): frames resolved once per suspension point, and labels for grouping ---- */

/* Resolved frames kept by (DiagnosticIP, Resume, State, has ResumeInfo): everything
 * adac_async_frame_resolve derives from a continuation. Chains that share suspension points (the
 * usual case: many requests parked in the same methods) resolve each one once. */
struct adac_frame_cache;
struct adac_frame_cache *adac_frame_cache_new(void);
void adac_frame_cache_free(struct adac_frame_cache *c);
/* Frames resolved, and frames served from the cache, so far. */
void adac_frame_cache_stats(const struct adac_frame_cache *c, uint64_t *resolved, uint64_t *hits);

/* adac_chain_view_build with each frame taken from `cache` (NULL: resolved every time). */
int adac_chain_view_build_cached(struct adac_runtime *rt, uint64_t head, size_t max_depth, struct adac_frame_cache *cache,
                                 struct adac_chain_view *v, struct adac_error *err);

/* Is the frame one `bt` shows (user code, not a thunk or an infrastructure continuation)? */
bool adac_async_frame_shown(const struct adac_async_frame *f);

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

/* A frame as text without its addresses, for grouping identical frames:
 * "<module>`<method> at <file>:<line> [state <n>]" (or "[IL_xxxx]" without a source line, or
 * "<unknown method>"). Returns buf. */
const char *adac_async_frame_label(const struct adac_async_frame *f, char *buf, size_t size);
