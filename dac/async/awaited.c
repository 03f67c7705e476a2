/* awaited.c - see awaited.h. CoreLib's names (System.Private.CoreLib 11.0): Task.m_action,
 * Task+DelayPromise._timer -> TimerQueueTimer._dueTime, Task+WhenAllPromise._tasks and
 * _remainingToComplete (WhenAllPromise<T>: m_tasks and m_count), SemaphoreSlim+TaskNode. */
#include "async/awaited.h"

#include <stdio.h>
#include <string.h>

#include "async/task.h"
#include "runtime/descriptor.h"
#include "runtime/object.h"
#include "runtime/runtime.h"
#include "target/target.h"
#include "types/fielddesc.h"

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A field of the object at obj (its MethodTable mt) by name: a pointer, or 4 bytes. */
static bool field_ptr(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *name, uint64_t *v)
{
	uint32_t off;
	return adac_mt_field_offset(rt, mt, name, &off, NULL) == 0 && adac_read_ptr(rt->t, obj + off, v, NULL) == 0;
}

static bool field_u32(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *name, uint32_t *v)
{
	uint32_t off;
	return adac_mt_field_offset(rt, mt, name, &off, NULL) == 0 && adac_read_u32(rt->t, obj + off, v, NULL) == 0;
}

static bool array_length(struct adac_runtime *rt, uint64_t arr, uint32_t *n)
{
	return arr && adac_object_array_length(rt, arr, n, NULL) == 0;
}

static void describe_delay(struct adac_runtime *rt, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	uint64_t timer = 0, timer_mt = 0;
	uint32_t due;
	if (field_ptr(rt, obj, mt, "_timer", &timer) && timer && adac_object_mt(rt, timer, &timer_mt, NULL) == 0 &&
	    field_u32(rt, timer, timer_mt, "_dueTime", &due)) {
		if (due == UINT32_MAX)
			snprintf(buf, size, "Task.Delay timer 0x%llx, never due", (unsigned long long)timer);
		else
			snprintf(buf, size, "Task.Delay timer 0x%llx, due %u ms after it started", (unsigned long long)timer, due);
	} else {
		snprintf(buf, size, "Task.Delay timer");
	}
}

static void describe_when_all(struct adac_runtime *rt, uint64_t obj, uint64_t mt, char *buf, size_t size)
{
	uint64_t tasks = 0;
	uint32_t n = 0, remaining = 0;
	/* WhenAllPromise (of Tasks) and WhenAllPromise<T> name them differently. */
	bool plain = field_ptr(rt, obj, mt, "_tasks", &tasks) && field_u32(rt, obj, mt, "_remainingToComplete", &remaining);
	bool generic = !plain && field_ptr(rt, obj, mt, "m_tasks", &tasks) && field_u32(rt, obj, mt, "m_count", &remaining);
	if ((plain || generic) && array_length(rt, tasks, &n) && remaining <= n)
		snprintf(buf, size, "Task.WhenAll: %u of %u done", n - remaining, n);
	else
		snprintf(buf, size, "Task.WhenAll");
}

void adac_awaited_describe(struct adac_runtime *rt, uint64_t obj, uint64_t mt, const char *type, bool has_flags,
                           uint32_t flags, char *buf, size_t size)
{
	if (!size)
		return;
	buf[0] = '\0';
	if (!obj || !mt || !type)
		return;
	if (has_flags && (flags & ADAC_TASK_COMPLETED_MASK)) {
		snprintf(buf, size, "completed, but the continuation awaiting it has not run: a starved thread pool?");
		return;
	}
	if (starts_with(type, "System.Threading.Tasks.Task+DelayPromise"))
		describe_delay(rt, obj, mt, buf, size);
	else if (starts_with(type, "System.Threading.Tasks.Task+WhenAllPromise"))
		describe_when_all(rt, obj, mt, buf, size);
	else if (starts_with(type, "System.Threading.Tasks.Task+TwoTaskWhenAnyPromise") ||
	         starts_with(type, "System.Threading.Tasks.Task+WhenAnyPromise"))
		snprintf(buf, size, "Task.WhenAny: none done");
	else if (strcmp(type, "System.Threading.SemaphoreSlim+TaskNode") == 0)
		snprintf(buf, size, "SemaphoreSlim.WaitAsync waiter");
	else if (has_flags && (strcmp(type, "System.Threading.Tasks.Task") == 0 ||
	                       starts_with(type, "System.Threading.Tasks.Task<"))) {
		/* A plain task with no delegate is a promise: only its owner (a TaskCompletionSource, ...)
		 * completes it. */
		uint64_t action = 1;
		if (field_ptr(rt, obj, mt, "m_action", &action) && !action)
			snprintf(buf, size, "never completed: a promise, such as a TaskCompletionSource's task");
	}
}
