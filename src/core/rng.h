/* rng.h: the program's one pseudo-random generator (splitmix64).
 *
 * The state is a plain uint64_t owned by the caller (8 bytes per simulated
 * user or per storage-test thread; any value is a valid state).  The same
 * state gives the same sequence on every machine, so a seed reproduces a
 * run.  Not for secrets: passwords, salts and the data directory's secret
 * come from the operating system (RAND_bytes).  The hot functions are
 * inline; the distributions are in rng.c.
 */
#ifndef MB_CORE_RNG_H
#define MB_CORE_RNG_H

#include <stdint.h>

/* A state from a seed: nearby seeds give unrelated sequences. */
void mb_rng_seed(uint64_t *s, uint64_t seed);

/* splitmix64's output function: 64 bits that depend on every bit of x (a
 * stateless hash, e.g. an item's seed from its coordinates). */
static inline uint64_t mb_rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}
/* The next 64 random bits (splitmix64: Steele, Lea and Flood, 2014). */
static inline uint64_t mb_rng_next(uint64_t *s) { return mb_rng_mix(*s += 0x9E3779B97F4A7C15ULL); }
/* Uniform in [0, 1). */
static inline double mb_rng_unit(uint64_t *s)
{
	return (double)(mb_rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}
/* Uniform integer in [lo, hi] (lo <= hi). */
static inline int mb_rng_range(uint64_t *s, int lo, int hi)
{
	return lo + (int)(mb_rng_unit(s) * (double)(hi - lo + 1));
}
/* Uniform in [0, n); 0 when n is 0 (Lemire's multiply-shift). */
static inline uint64_t mb_rng_below(uint64_t *s, uint64_t n)
{
	return n ? (uint64_t)(((unsigned __int128)mb_rng_next(s) * n) >> 64) : 0;
}
/* Exponential with the given mean. */
double mb_rng_exp(uint64_t *s, double mean);
/* Poisson with the given mean (small means: multiplication method). */
int mb_rng_poisson(uint64_t *s, double mean);
/* A number whose expectation is x: floor(x) plus one with probability frac(x). */
int mb_rng_round(uint64_t *s, double x);

#endif
