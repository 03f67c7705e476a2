/* report_view.h - `report`: one page for an incident ticket. Sections, findings first:
 *   Findings      deadlocks (each await cycle as one line), completed tasks whose awaiting frames
 *                 have not resumed (a starved thread pool?), objects several chains await (a
 *                 SemaphoreSlim's waiters, one promise), crashed threads (stop reason, exception)
 *   Runtime       the runtime found (as `runtime` prints it)
 *   Threads       the threads that stopped for a reason, with their frames and chains (as `bt`)
 *   Blocked       the blocked threads grouped by what they wait on, with their wait chains
 *   Thread pool   its workers and queued work items (as `threadpool`)
 *   Thread stacks the threads' stacks merged (as `pstacks`)
 *   Async stacks  every pending stack grouped by what it awaits (as `ps --coalesce`)
 *   Top frames    frames per method and await state, stacks per awaited type (as `ps --stats`) */
#ifndef ADAC_REPORT_VIEW_H
#define ADAC_REPORT_VIEW_H

#include <stdbool.h>

#include "base/error.h"

struct adac_runtime;
struct adac_out;

/* Text, or with json one document (docs/json.md, "report": the same sections as members). -1 only
 * when memory runs out or the user interrupts it; a section that cannot be made says why in its place
 * (JSON: in "warnings"). */
int adac_report_print(struct adac_runtime *rt, bool json, struct adac_out *out, struct adac_error *err);

#endif
