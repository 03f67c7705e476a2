/* debuginfo_format.h - the DebugInfo contract's version tag, interpreted: which encoding the
 * runtime writes its per-method debug info in. The only place that reads the tag. */
#ifndef ADAC_DEBUGINFO_FORMAT_H
#define ADAC_DEBUGINFO_FORMAT_H

#include "base/error.h"

struct adac_descriptor;

enum adac_debuginfo_format {
	ADAC_DEBUGINFO_FORMAT_NET11,  /* fat/thin header, 3 source bits, VarNumber-first vars, async chunk */
	ADAC_DEBUGINFO_FORMAT_NET10,  /* optional flag byte, 2 source bits, older vars, no async chunk */
};

/* The runtime's encoding: DebugInfo contract "c1" (or "2", its name during .NET 11 development) is
 * NET11; "1", or no DebugInfo contract in a version 0 or 1 descriptor (.NET 10), is NET10.
 * ADAC_E_UNSUPPORTED naming the tag, or its absence, otherwise. */
int adac_debuginfo_format_of(const struct adac_descriptor *d, enum adac_debuginfo_format *format,
                             struct adac_error *err);

#endif
