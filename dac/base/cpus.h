/* cpus.h - how many threads work that splits may use: the CPUs this process may run on, or the
 * number an environment variable asks for (the tests compare runs in different numbers of parts). */
#ifndef ADAC_CPUS_H
#define ADAC_CPUS_H

#include <stdbool.h>

/* CPUs in this process's affinity mask, at least 1. */
unsigned adac_cpus(void);

/* true with *n when environment variable name is a decimal number in [lo, hi]; false when it is
 * unset, empty or anything else. */
bool adac_env_count(const char *name, unsigned lo, unsigned hi, unsigned *n);

#endif
