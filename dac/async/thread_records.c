/* thread_records.c - see thread_records.h. */
#include "async/thread_records.h"

#include "runtime/runtime.h"
#include "runtime/threads.h"
#include "target/target.h"
#include "types/fielddesc.h"

#define SEEN_MAX 64u

int adac_thread_records(struct adac_runtime *rt, const struct adac_managed_thread *th, const struct adac_field *head,
                        uint32_t next_off, size_t max, const struct adac_thread_records_names *names,
                        adac_thread_record_cb cb, void *ctx, struct adac_error *err)
{
	unsigned long long tid = (unsigned long long)th->os_id;
	uint64_t slot, cur, seen[SEEN_MAX];
	if (max > SEEN_MAX)
		max = SEEN_MAX;
	if (adac_field_thread_static_addr(rt, th, head, &slot, err))
		return -1;
	if (!slot)
		return 0; /* the thread has not allocated the type's statics */
	if (adac_read_ptr(rt->t, slot, &cur, err)) {
		adac_error_wrap(err, "thread %llu: %s: ", tid, names->head);
		return -1;
	}
	for (size_t n = 0; cur; n++) {
		if (n >= max)
			return adac_fail(err, ADAC_E_LIMIT, cur, "thread %llu has more than %zu %s%s%s%s", tid, max, names->many,
			                 names->limit ? " (" : "", names->limit ? names->limit : "", names->limit ? ")" : "");
		for (size_t i = 0; i < n; i++)
			if (seen[i] == cur)
				return adac_fail(err, ADAC_E_CORRUPT, cur, "thread %llu: %ss loop back to 0x%llx", tid, names->record,
				                 (unsigned long long)cur);
		seen[n] = cur;
		if (cb(ctx, cur, n, err) || adac_read_ptr(rt->t, cur + next_off, &cur, err)) {
			adac_error_wrap(err, "thread %llu: %s: ", tid, names->record);
			return -1;
		}
	}
	return 0;
}
