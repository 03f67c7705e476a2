/* wait_cycle.c - see wait_cycle.h. */
#include "async/wait_cycle.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "async/lock_wait.h"
#include "async/sync_wait.h"
#include "base/grow.h"
#include "base/limits.h"
#include "types/locks.h"

struct waits {
	const struct adac_held_locks *locks;
	const struct adac_lock_waits *lw;
	const struct adac_sync_waits *sw;
	const struct adac_task_runner *runners;
	size_t nrunners;
};

#define NO_SYNC ((size_t)-1)

/* What the thread with managed id `id` waits for, as a step, and the managed id of the thread that
 * holds or runs it (*next): a lock first (a thread blocked on one waits for nothing else), else a
 * task some thread runs (*sync: its index in the synchronous waits, else NO_SYNC). False when it
 * waits for neither. */
static bool step_of(const struct waits *c, uint32_t id, struct adac_wait_step *step, uint32_t *next, size_t *sync)
{
	for (size_t i = 0; c->lw && i < c->lw->count; i++)
		if (c->lw->waits[i].managed_id == id) {
			const struct adac_lock_wait *w = &c->lw->waits[i];
			*step = (struct adac_wait_step){w->os_tid, id, 0, w->lock};
			*next = c->locks->locks[w->lock].owner;
			*sync = NO_SYNC;
			return true;
		}
	for (size_t k = 0; k < c->sw->count; k++) {
		const struct adac_sync_wait *w = &c->sw->waits[k];
		if (!w->os_tid || w->managed_id != id)
			continue;
		for (size_t r = 0; r < c->nrunners; r++)
			if (c->runners[r].task == w->task) {
				*step = (struct adac_wait_step){w->os_tid, id, w->task, 0};
				*next = c->runners[r].managed_id;
				*sync = k;
				return true;
			}
	}
	return false;
}

int adac_wait_cycles_find(const struct adac_held_locks *locks, const struct adac_lock_waits *lw,
                          const struct adac_sync_waits *sw, const struct adac_task_runner *runners, size_t nrunners,
                          struct adac_wait_cycles *out, struct adac_error *err)
{
	memset(out, 0, sizeof *out);
	const struct waits c = {locks, locks ? lw : NULL, sw, runners, nrunners};
	size_t bound = sw->count + (c.lw ? c.lw->count : 0) + 1, step_cap = 0, end_cap = 0, used = 0;
	struct adac_wait_step cycle[ADAC_MAX_WAIT_CYCLE];
	for (size_t i = 0; i < sw->count && nrunners; i++) {
		/* From synchronous wait i, the thread it waits for, what that one waits for, ...: each
		 * thread waits for one thing at most, so the walk ends or comes round; a cycle is
		 * reported from its first synchronous wait only. */
		uint32_t first = sw->waits[i].managed_id, next;
		size_t sync, len = 0;
		if (!sw->waits[i].os_tid || !step_of(&c, first, &cycle[0], &next, &sync) || sync != i)
			continue;
		len = 1;
		for (size_t steps = 0; steps < bound && next != first; steps++) {
			struct adac_wait_step s;
			if (!step_of(&c, next, &s, &next, &sync) || (sync != NO_SYNC && sync < i)) {
				len = 0;
				break;
			}
			if (len < ADAC_MAX_WAIT_CYCLE)
				cycle[len] = s;
			len++;
		}
		if (next != first || !len || len > ADAC_MAX_WAIT_CYCLE)
			continue;
		if (adac_grow((void **)&out->steps, &step_cap, used + len, sizeof *out->steps, 16) ||
		    adac_grow((void **)&out->ends, &end_cap, out->count + 1, sizeof *out->ends, 4)) {
			adac_wait_cycles_free(out);
			return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory finding deadlocks");
		}
		memcpy(out->steps + used, cycle, len * sizeof *cycle);
		used += len;
		out->ends[out->count++] = used;
	}
	return 0;
}

void adac_wait_cycles_free(struct adac_wait_cycles *c)
{
	free(c->steps);
	free(c->ends);
	memset(c, 0, sizeof *c);
}

const struct adac_wait_step *adac_wait_cycle_with(const struct adac_wait_cycles *c, const struct adac_wait_step *like,
                                                  size_t *n)
{
	for (size_t k = 0, at = 0; (like->task || like->os_tid) && k < c->count; at = c->ends[k++])
		for (size_t s = at; s < c->ends[k]; s++)
			if ((!like->task || c->steps[s].task == like->task) && (!like->os_tid || c->steps[s].os_tid == like->os_tid)) {
				*n = c->ends[k] - at;
				return &c->steps[at];
			}
	return NULL;
}
