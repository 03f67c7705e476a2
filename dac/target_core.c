/* target_core.c - the "core" backend: an ELF core file (placeholder until implemented). */
#include "target.h"

struct adac_target *adac_target_open_core(const char *core_path, struct adac_error *err)
{
	adac_fail(err, ADAC_E_UNSUPPORTED, 0, "%s: core files are not supported yet", core_path);
	return NULL;
}
