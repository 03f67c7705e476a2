/* debuginfo_format.c - DebugInfo contract tag -> debug-info encoding. */
#include "code/debuginfo_format.h"

#include <string.h>

#include "runtime/descriptor.h"

int adac_debuginfo_format_of(const struct adac_descriptor *d, enum adac_debuginfo_format *format,
                             struct adac_error *err)
{
	const char *tag = adac_desc_contract(d, "DebugInfo");
	const char *dver = adac_desc_version(d);
	if (tag && (strcmp(tag, "c1") == 0 || strcmp(tag, "2") == 0))
		*format = ADAC_DEBUGINFO_FORMAT_NET11;
	else if (tag && strcmp(tag, "1") == 0)
		*format = ADAC_DEBUGINFO_FORMAT_NET10;
	else if (!tag && dver && (strcmp(dver, "0") == 0 || strcmp(dver, "1") == 0))
		*format = ADAC_DEBUGINFO_FORMAT_NET10; /* .NET 10 GA describes no DebugInfo contract */
	else if (tag)
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
		                 "the runtime's DebugInfo contract version %s is not supported (known: c1, 2, 1)", tag);
	else
		return adac_fail(err, ADAC_E_UNSUPPORTED, 0,
		                 "the runtime (descriptor version %s) describes no DebugInfo contract", dver ? dver : "?");
	return 0;
}
