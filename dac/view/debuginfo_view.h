/* debuginfo_view.h - decoded debug info as text. */
#ifndef ADAC_DEBUGINFO_VIEW_H
#define ADAC_DEBUGINFO_VIEW_H

struct adac_debug_info;
struct adac_out;

/* One item per line ("header ...", "bounds N", "  native=0x.. il=.. source=..", "vars N", "async
 * points=N vars=M", ...): the form the data-driven tests (tests/data/debuginfo) compare. */
void adac_debuginfo_dump(const struct adac_debug_info *di, struct adac_out *out);

#endif
