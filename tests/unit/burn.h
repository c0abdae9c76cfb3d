/* burn.h: a test's own CPU time and a loop that burns a given amount of
 * it (sampler and server-monitor tests measure it back from /proc).
 * Header-only, included by one test file each. */
#ifndef MB_TESTS_UNIT_BURN_H
#define MB_TESTS_UNIT_BURN_H

#include <stdint.h>
#include <time.h>

static inline double process_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;
static inline void burn(double cpu_seconds)
{
	double start = process_cpu_s();
	uint64_t x = 1;
	while (process_cpu_s() - start < cpu_seconds)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

#endif
