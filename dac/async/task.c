/* task.c - System.Threading.Tasks.Task: layout, derived types, status. */
#include "async/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "target/target.h"
#include "types/corelib.h"
#include "types/fielddesc.h"
#include "types/methoddesc.h"

#define VERDICTS 256u   /* MethodTables whose "derives from Task" verdict is kept (direct-mapped) */

struct task_state {
	struct adac_task_layout layout;
	struct {
		uint64_t mt;
		bool is_task;
	} verdicts[VERDICTS];
};

static void free_state(void *p) { free(p); }

const char *adac_task_status(uint32_t f)
{
	/* Task.Status, in its order of precedence. */
	if (f & ADAC_TASK_FAULTED)
		return "Faulted";
	if (f & ADAC_TASK_CANCELED)
		return "Canceled";
	if (f & ADAC_TASK_RAN_TO_COMPLETION)
		return "RanToCompletion";
	if (f & ADAC_TASK_WAITING_ON_CHILDREN)
		return "WaitingForChildrenToComplete";
	if (f & ADAC_TASK_DELEGATE_INVOKED)
		return "Running";
	if (f & ADAC_TASK_STARTED)
		return "WaitingToRun";
	if (f & ADAC_TASK_WAITING_FOR_ACTIVATION)
		return "WaitingForActivation";
	return "Created";
}

const char *adac_task_flags_text(uint32_t f, char *buf, size_t size)
{
	/* SOS dumpasync's DescribeTaskFlags: the flags worth showing (not WaitingForActivation, the
	 * state of every pending async method's task). */
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ADAC_TASK_STARTED, "Started"},
		{ADAC_TASK_DELEGATE_INVOKED, "DelegateInvoked"},
		{ADAC_TASK_DISPOSED, "Disposed"},
		{ADAC_TASK_EXCEPTION_OBSERVED_BY_PARENT, "ExceptionObservedByParent"},
		{ADAC_TASK_CANCELLATION_ACKNOWLEDGED, "CancellationAcknowledged"},
		{ADAC_TASK_FAULTED, "Faulted"},
		{ADAC_TASK_CANCELED, "Canceled"},
		{ADAC_TASK_WAITING_ON_CHILDREN, "WaitingOnChildren"},
		{ADAC_TASK_RAN_TO_COMPLETION, "RanToCompletion"},
		{ADAC_TASK_COMPLETION_RESERVED, "CompletionReserved"},
	};
	size_t used = 0;
	if (!size)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (!(f & names[i].bit))
			continue;
		int n = snprintf(buf + used, size > used ? size - used : 0, "%s%s", used ? "|" : "", names[i].name);
		if (n < 0 || (size_t)n >= size - used) {
			buf[used] = '\0'; /* whole names only */
			break;
		}
		used += (size_t)n;
	}
	return buf;
}

static int get_state(struct adac_runtime *rt, struct task_state **out, struct adac_error *err)
{
	struct task_state *s = adac_runtime_slot(rt, ADAC_SLOT_TASK);
	if (s) {
		*out = s;
		return 0;
	}
	uint64_t corelib;
	struct adac_task_layout l = {0};
	if (adac_corelib_module(rt, &corelib, err) ||
	    adac_module_type(rt, corelib, "System.Threading.Tasks", "Task", &l.mt, err))
		return -1;
	if (!l.mt)
		return adac_fail(err, ADAC_E_NOT_FOUND, 0, "System.Threading.Tasks.Task is not loaded");
	if (adac_mt_field_offset(rt, l.mt, "m_stateObject", &l.state_object_off, err) ||
	    adac_mt_field_offset(rt, l.mt, "m_continuationObject", &l.continuation_object_off, err) ||
	    adac_mt_field_offset(rt, l.mt, "m_stateFlags", &l.state_flags_off, err)) {
		adac_error_wrap(err, "Task: ");
		return -1;
	}
	l.has_task_id = adac_mt_field_offset(rt, l.mt, "m_taskId", &l.task_id_off, NULL) == 0;
	if (!(s = calloc(1, sizeof *s)))
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory");
	s->layout = l;
	adac_runtime_set_slot(rt, ADAC_SLOT_TASK, s, free_state);
	*out = s;
	return 0;
}

int adac_task_layout(struct adac_runtime *rt, const struct adac_task_layout **out, struct adac_error *err)
{
	struct task_state *s;
	if (get_state(rt, &s, err))
		return -1;
	*out = &s->layout;
	return 0;
}

int adac_task_is_task_mt(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err)
{
	struct task_state *s;
	*yes = false;
	if (get_state(rt, &s, err))
		return -1;
	if (!mt)
		return 0;
	size_t slot = (mt >> 3) % VERDICTS;
	if (s->verdicts[slot].mt == mt) {
		*yes = s->verdicts[slot].is_task;
		return 0;
	}
	if (adac_mt_derives_from(rt, mt, s->layout.mt, yes, err))
		return -1;
	s->verdicts[slot].mt = mt;
	s->verdicts[slot].is_task = *yes;
	return 0;
}

bool adac_task_is_state_machine_box(struct adac_runtime *rt, uint64_t mt)
{
	struct adac_field f;
	return adac_mt_find_field(rt, mt, "StateMachine", &f, NULL) == 0 && !f.is_static;
}

int adac_task_exceptions(struct adac_runtime *rt, uint64_t task, uint64_t *exc, unsigned max, unsigned *n,
                         uint32_t *held, struct adac_error *err)
{
	uint64_t props = 0, holder = 0, list = 0, items = 0, first = 0;
	uint32_t count = 0, elem_size = 0;
	*n = 0;
	*held = 0;
	if (adac_object_field_ptr(rt, task, "m_contingentProperties", &props, err))
		return -1;
	if (!props)
		return 0;
	if (adac_object_field_ptr(rt, props, "m_exceptionsHolder", &holder, err))
		return -1;
	if (!holder)
		return 0;
	if (adac_object_field_ptr(rt, holder, "m_faultExceptions", &list, err))
		return -1;
	if (!list)
		return 0;
	/* A List<ExceptionDispatchInfo>: _size of the _items array are used. */
	if (adac_object_field_ptr(rt, list, "_items", &items, err) || adac_object_field_u32(rt, list, "_size", held, err))
		return -1;
	if (!items || !*held)
		return 0;
	if (adac_array_elements(rt, items, &first, &count, &elem_size, err))
		return -1;
	if (elem_size != adac_target_ptr_size(rt->t))
		return adac_fail(err, ADAC_E_CORRUPT, items, "task 0x%llx: its exception list 0x%llx is not an array of references",
		                 (unsigned long long)task, (unsigned long long)items);
	for (uint32_t i = 0; i < *held && i < count && *n < max; i++) {
		uint64_t edi = 0;
		if (adac_read_ptr(rt->t, first + (uint64_t)i * elem_size, &edi, err) ||
		    adac_object_field_ptr(rt, edi, "_exception", &exc[*n], err))
			return -1;
		(*n)++;
	}
	return 0;
}
