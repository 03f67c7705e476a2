/* cpus.c - CPUs this process may run on, and thread counts asked for in the environment. */
#include "base/cpus.h"

#include <sched.h>
#include <stdlib.h>

unsigned adac_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 1;
	int n = CPU_COUNT(&set);
	return n > 1 ? (unsigned)n : 1u;
}

bool adac_env_count(const char *name, unsigned lo, unsigned hi, unsigned *n)
{
	const char *asked = getenv(name);
	if (!asked || !*asked)
		return false;
	char *end;
	unsigned long v = strtoul(asked, &end, 10);
	if (*end || v < lo || v > hi)
		return false;
	*n = (unsigned)v;
	return true;
}
