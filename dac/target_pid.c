/* target_pid.c - the "pid" backend: a live process (placeholder until implemented). */
#include "target.h"

struct adac_target *adac_target_open_pid(int pid, struct adac_error *err)
{
	adac_fail(err, ADAC_E_UNSUPPORTED, 0, "process %d: live processes are not supported yet", pid);
	return NULL;
}
