/* task.h - System.Threading.Tasks.Task: its layout in the target (the Task class's FieldDescs),
 * which types derive from it, and what its m_stateFlags say. Used by `ps` (the heap's tasks) and
 * by async frames (the status of an awaited task). */
#ifndef ADAC_TASK_H
#define ADAC_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct adac_runtime;

/* Task.m_stateFlags bits (TaskStateFlags). */
#define ADAC_TASK_STARTED 0x10000u
#define ADAC_TASK_DELEGATE_INVOKED 0x20000u
#define ADAC_TASK_DISPOSED 0x40000u
#define ADAC_TASK_EXCEPTION_OBSERVED_BY_PARENT 0x80000u
#define ADAC_TASK_CANCELLATION_ACKNOWLEDGED 0x100000u
#define ADAC_TASK_FAULTED 0x200000u
#define ADAC_TASK_CANCELED 0x400000u
#define ADAC_TASK_WAITING_ON_CHILDREN 0x800000u
#define ADAC_TASK_RAN_TO_COMPLETION 0x1000000u
#define ADAC_TASK_WAITING_FOR_ACTIVATION 0x2000000u
#define ADAC_TASK_COMPLETION_RESERVED 0x4000000u
#define ADAC_TASK_COMPLETED_MASK 0x1600000u   /* RanToCompletion | Faulted | Canceled (SOS) */

/* The TaskStatus the Task.Status getter derives from m_stateFlags ("WaitingForActivation", ...). */
const char *adac_task_status(uint32_t state_flags);
/* SOS dumpasync's flag list ("Started|DelegateInvoked"; "" when none of its flags is set) into buf. */
const char *adac_task_flags_text(uint32_t state_flags, char *buf, size_t size);

/* The Task class as loaded in the target; field offsets are object-relative. */
struct adac_task_layout {
	uint64_t mt;                     /* System.Threading.Tasks.Task */
	uint32_t state_object_off;       /* m_stateObject */
	uint32_t continuation_object_off; /* m_continuationObject */
	uint32_t state_flags_off;        /* m_stateFlags */
	bool has_task_id;
	uint32_t task_id_off;            /* m_taskId: Task.Id, assigned when first read (0: none yet) */
};

/* Found once per runtime. ADAC_E_NOT_FOUND when CoreLib has not loaded Task. */
int adac_task_layout(struct adac_runtime *rt, const struct adac_task_layout **out, struct adac_error *err);

/* Is mt Task or a type derived from it? Decided once per MethodTable. */
int adac_task_is_task_mt(struct adac_runtime *rt, uint64_t mt, bool *yes, struct adac_error *err);

/* Is mt a classic state-machine box (AsyncStateMachineBox: a Task-derived type with an instance
 * field StateMachine)? The caller has checked that it derives from Task. */
bool adac_task_is_state_machine_box(struct adac_runtime *rt, uint64_t mt);

/* The exceptions a faulted task holds (m_contingentProperties.m_exceptionsHolder.m_faultExceptions,
 * each an ExceptionDispatchInfo's _exception): up to max into exc, *n of them; *held is how many
 * the task holds (0 when it holds none). */
int adac_task_exceptions(struct adac_runtime *rt, uint64_t task, uint64_t *exc, unsigned max, unsigned *n,
                         uint32_t *held, struct adac_error *err);

#endif
