/* pending_diff.h - `diff`: the pending stacks of two targets (two dumps of one process, or a dump
 * and the live process), matched by their owning task (else their innermost Continuation):
 * progressed (a frame or its await state changed), new, finished, unchanged. The first question
 * about a hang: does anything move? */
#ifndef ADAC_PENDING_DIFF_H
#define ADAC_PENDING_DIFF_H

#include <stdbool.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

/* Text: a summary line, then the stacks that progressed (their frames in A and in B), the new and
 * the finished ones (their innermost frames), and with `all` the unchanged ones; or JSON
 * {"schema": 1, "diff": {...}} (docs/json.md). */
int adac_pending_diff_print(struct adac_runtime *a, struct adac_runtime *b, bool all, bool json, struct adac_out *out,
                            struct adac_error *err);

#endif
