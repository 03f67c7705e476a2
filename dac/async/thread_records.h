/* thread_records.h - the records CoreLib keeps on a thread's stack for debuggers, linked from a
 * [ThreadStatic] pointer, innermost first: AsyncDispatcherInfo.t_current (dispatcher.h) and
 * ThreadBlockingInfo.t_first (blocking_info.h). */
#ifndef ADAC_THREAD_RECORDS_H
#define ADAC_THREAD_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;
struct adac_managed_thread;
struct adac_field;

/* What a list of records is, for its errors: "thread T has more than <max> <many>[ (<limit>)]",
 * "thread T: <record>s loop back to 0x...", "thread T: <record>: ...", "thread T: <head>: ...". */
struct adac_thread_records_names {
	const char *head, *record, *many, *limit;
};

typedef int (*adac_thread_record_cb)(void *ctx, uint64_t record, size_t index, struct adac_error *err);

/* cb for each record of thread th's list (the thread-static pointer `head`, each record's next pointer
 * at next_off), at most max (no more than 64; more records are ADAC_E_LIMIT); a record met twice is
 * ADAC_E_CORRUPT. Nothing when the thread has not allocated the statics or the list is empty. cb
 * returns non-zero to fail (with err). */
int adac_thread_records(struct adac_runtime *rt, const struct adac_managed_thread *th, const struct adac_field *head,
                        uint32_t next_off, size_t max, const struct adac_thread_records_names *names,
                        adac_thread_record_cb cb, void *ctx, struct adac_error *err);

#endif
