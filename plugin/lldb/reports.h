/* reports.h - asyncdac's progress (struct adac_out's progress) as LLDB progress reports: one per
 * phase ("Scanning the heap", details "async ps"), updated when its percentage changes (progress
 * points come far more often: each LLDB update is an event to its listeners). */
#ifndef ADAC_LLDB_REPORTS_H
#define ADAC_LLDB_REPORTS_H

#include <stdint.h>

struct adac_lldb_progress;

struct adac_lldb_reports {
	struct adac_lldb_progress *progress;  /* where they go (shim.h); NULL: nowhere */
	char details[64];                     /* what does the work: "async ps", "async threads" */
	char phase[64];                       /* the phase shown, "" when none */
	unsigned percent;
};

/* struct adac_out's progress for r (phase NULL ends the report shown). */
void adac_lldb_reports_show(struct adac_lldb_reports *r, const char *phase, uint64_t done, uint64_t total);

#endif
