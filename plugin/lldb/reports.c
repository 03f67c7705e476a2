/* reports.c - asyncdac's progress as LLDB progress reports (reports.h). */
#include "reports.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

void adac_lldb_reports_show(struct adac_lldb_reports *r, const char *phase, uint64_t done, uint64_t total)
{
	unsigned percent = total ? (unsigned)(done * 100 / total) : 0;
	if (!r->progress || (phase && strcmp(phase, r->phase) == 0 && percent == r->percent && done < total))
		return;
	snprintf(r->phase, sizeof r->phase, "%s", phase ? phase : "");
	r->percent = percent;
	if (!phase) {
		adac_lldb_progress_show(r->progress, NULL, NULL, 0, 0);
		return;
	}
	char title[sizeof r->phase];
	snprintf(title, sizeof title, "%s", phase);
	title[0] = (char)toupper((unsigned char)title[0]);
	adac_lldb_progress_show(r->progress, title, r->details, done, total);
}
