/* rng.c: seeding and the distributions of the generator (see rng.h).
 * Invariant: every function draws only from the state it is given. */
#include "core/rng.h"

#include <math.h>

void mb_rng_seed(uint64_t *s, uint64_t seed)
{
	/* one splitmix64 step of the seed, so that seeds n and n + 1 do not
	 * give sequences one step apart */
	uint64_t t = seed;
	*s = mb_rng_next(&t);
}

double mb_rng_exp(uint64_t *s, double mean)
{
	/* 1 - u is in (0, 1], so the log is finite. */
	return -log(1.0 - mb_rng_unit(s)) * mean;
}

int mb_rng_poisson(uint64_t *s, double mean)
{
	if (!(mean > 0))
		return 0;
	if (mean > 30) {
		/* normal approximation for large means */
		double u1 = 1.0 - mb_rng_unit(s), u2 = mb_rng_unit(s);
		double z = sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
		double v = floor(mean + sqrt(mean) * z + 0.5);
		return v < 0 ? 0 : (int)v;
	}
	double limit = exp(-mean), prod = mb_rng_unit(s);
	int k = 0;
	while (prod > limit) {
		k++;
		prod *= mb_rng_unit(s);
	}
	return k;
}

int mb_rng_round(uint64_t *s, double x)
{
	if (!(x > 0))
		return 0;
	double f = floor(x);
	return (int)f + (mb_rng_unit(s) < x - f ? 1 : 0);
}
