/* exception_view.h - an Exception object as text and JSON: its type and message (read through
 * types/exception.h), for thread lines (a crashed thread's last thrown exception) and `pe`. */
#ifndef ADAC_EXCEPTION_VIEW_H
#define ADAC_EXCEPTION_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "metadata/signature.h"

struct adac_runtime;
struct json_t;

/* Appends `0x<obj> <Type>: "<message>"` (no message: just the type) to text; parts that cannot be
 * read are shown as errors in place. -1 only when the text cannot be built. */
int adac_exception_summary(struct adac_runtime *rt, uint64_t obj, struct adac_sig_text *text, struct adac_error *err);

/* {"address", "type", "message"} (message null when there is none). */
struct json_t *adac_exception_summary_json(struct adac_runtime *rt, uint64_t obj);

struct adac_out;

/* `pe`: an exception as SOS pe shows it ("Exception object:", "Exception type:", "Message:",
 * "InnerException:", "StackTrace (generated):" decoded from _stackTrace, "StackTraceString:",
 * "HResult:"), then its inner exceptions the same way. For a task: its status and each exception
 * it holds (m_contingentProperties.m_exceptionsHolder.m_faultExceptions). -1 prints nothing when
 * obj is neither an exception nor a task, and fails for a task that holds no exception. */
int adac_exception_print(struct adac_runtime *rt, uint64_t obj, struct adac_out *out, struct adac_error *err);

#endif
