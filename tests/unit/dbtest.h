/* dbtest.h: helpers shared by the storage engine's unit tests: a private
 * temporary directory per test (removed afterwards), deterministic values,
 * and a small PRNG.  Header-only (static functions) so each test binary
 * stays one module. */
#ifndef MB_TEST_DBTEST_H
#define MB_TEST_DBTEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline char *dbt_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char tmpl[4096];
	snprintf(tmpl, sizeof(tmpl), "%s/mbdbtest.XXXXXX", base && *base ? base : "/tmp");
	char *d = mkdtemp(tmpl);
	return d ? strdup(d) : NULL;
}

static inline void dbt_rmrf(const char *dir)
{
	if (!dir || !*dir || strstr(dir, "mbdbtest") == NULL)
		return;
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static inline uint64_t dbt_rand(uint64_t *s)
{
	/* splitmix64 */
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* deterministic value bytes for (id, version) */
static inline void dbt_fill(uint8_t *p, size_t n, uint64_t id, uint64_t ver)
{
	uint64_t s = id * 1000003u + ver * 7919u + 1;
	size_t i = 0;
	while (i < n) {
		uint64_t r = dbt_rand(&s);
		for (int k = 0; k < 8 && i < n; k++, i++)
			p[i] = (uint8_t)(r >> (8 * k));
	}
}

#endif
