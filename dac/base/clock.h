/* clock.h - a monotonic clock in seconds, for the wall times commands report (--timings). */
#ifndef ADAC_CLOCK_H
#define ADAC_CLOCK_H

#include <time.h>

static inline double adac_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
