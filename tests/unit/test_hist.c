/* test_hist.c: unit tests of the latency histogram (core/hist.h).
 * Percentiles are checked against the exact order statistics of the same
 * samples sorted (within 1%), merges against one histogram that saw every
 * value, and the text form against a round trip and against garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hist.h"

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest-rank order statistic of sorted v[n]. */
static uint64_t exact_pct(const uint64_t *v, size_t n, double p)
{
	size_t rank = (size_t)ceil(p / 100.0 * (double)n * (1.0 - 1e-12));
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return v[rank - 1];
}

static void check_within(uint64_t got, uint64_t want, double rel)
{
	double d = fabs((double)got - (double)want);
	if (d > rel * (double)want) {
		fprintf(stderr, "got %llu want %llu\n", (unsigned long long)got,
			(unsigned long long)want);
		fail();
	}
}

/* Log-uniform samples between 1 us and 10 s. */
static uint64_t sample(void)
{
	double u = (double)(rng() >> 11) / 9007199254740992.0;
	return (uint64_t)(1000.0 * pow(1e7, u));
}

static void test_percentiles(void **state)
{
	(void)state;
	enum { N = 100000 };
	uint64_t *v = malloc(N * sizeof(*v));
	struct mb_hist *h;
	double sum = 0;

	assert_non_null(v);
	assert_int_equal(mb_hist_create(&h), 0);
	for (size_t i = 0; i < N; i++) {
		v[i] = sample();
		sum += (double)v[i];
		mb_hist_record(h, v[i]);
	}
	qsort(v, N, sizeof(*v), cmp_u64);
	assert_int_equal(mb_hist_count(h), N);
	assert_int_equal(mb_hist_min_ns(h), v[0]);
	assert_int_equal(mb_hist_max_ns(h), v[N - 1]);
	assert_true(fabs(mb_hist_mean_ns(h) - sum / N) <= 1e-9 * sum / N + 1);
	static const double ps[] = {0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100};
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		check_within(mb_hist_percentile_ns(h, ps[i]), exact_pct(v, N, ps[i]), 0.01);
	/* every rank of a small sample, too */
	mb_hist_reset(h);
	assert_int_equal(mb_hist_count(h), 0);
	for (size_t i = 0; i < 37; i++) {
		v[i] = sample();
		mb_hist_record(h, v[i]);
	}
	qsort(v, 37, sizeof(*v), cmp_u64);
	for (int p = 1; p <= 100; p++)
		check_within(mb_hist_percentile_ns(h, p), exact_pct(v, 37, p), 0.01);
	/* p = 100 * k / n lands exactly on rank k */
	mb_hist_reset(h);
	for (int i = 1; i <= 100; i++)
		mb_hist_record(h, (uint64_t)i * 1000000); /* 1..100 ms, one per bucket */
	for (int k = 1; k <= 100; k++)
		check_within(mb_hist_percentile_ns(h, k), (uint64_t)k * 1000000, 0.01);
	mb_hist_destroy(h);
	free(v);
}

static void test_empty(void **state)
{
	(void)state;
	struct mb_hist *h;
	assert_int_equal(mb_hist_create(&h), 0);
	assert_int_equal(mb_hist_count(h), 0);
	assert_true(mb_hist_mean_ns(h) == 0.0);
	assert_int_equal(mb_hist_min_ns(h), 0);
	assert_int_equal(mb_hist_max_ns(h), 0);
	assert_int_equal(mb_hist_percentile_ns(h, 50), 0);
	mb_hist_destroy(h);
}

static void test_edges(void **state)
{
	(void)state;
	struct mb_hist *h;
	assert_int_equal(mb_hist_create(&h), 0);
	/* values below 1 us and above 100 s are counted, extremes exact */
	mb_hist_record(h, 0);
	mb_hist_record(h, 500);
	mb_hist_record(h, 999);
	mb_hist_record(h, 250000000000ull); /* 250 s */
	assert_int_equal(mb_hist_count(h), 4);
	assert_int_equal(mb_hist_min_ns(h), 0);
	assert_int_equal(mb_hist_max_ns(h), 250000000000ull);
	assert_int_equal(mb_hist_percentile_ns(h, 100), 250000000000ull);
	/* the first bucket holds everything <= 1 us: reported at most ~1 us */
	assert_true(mb_hist_percentile_ns(h, 25) <= 1010);
	assert_true(mb_hist_percentile_ns(h, 75) <= 1010);
	/* the last bucket: at least ~100 s */
	mb_hist_reset(h);
	mb_hist_record(h, 100000000000ull);
	mb_hist_record(h, 300000000000ull);
	assert_true(mb_hist_percentile_ns(h, 50) >= 99000000000ull);
	assert_true(fabs(mb_hist_mean_ns(h) - 200000000000.0) < 1.0);
	/* exact 1 us and 100 s within 1% */
	mb_hist_reset(h);
	mb_hist_record(h, 1000);
	check_within(mb_hist_percentile_ns(h, 50), 1000, 0.01);
	mb_hist_reset(h);
	mb_hist_record_n(h, 100000000000ull, 3);
	mb_hist_record_n(h, 5, 0); /* no-op */
	assert_int_equal(mb_hist_count(h), 3);
	check_within(mb_hist_percentile_ns(h, 50), 100000000000ull, 0.01);
	mb_hist_destroy(h);
}

static void assert_same(const struct mb_hist *a, const struct mb_hist *b)
{
	assert_int_equal(mb_hist_count(a), mb_hist_count(b));
	assert_int_equal(mb_hist_min_ns(a), mb_hist_min_ns(b));
	assert_int_equal(mb_hist_max_ns(a), mb_hist_max_ns(b));
	assert_true(mb_hist_mean_ns(a) == mb_hist_mean_ns(b));
	for (double p = 0.5; p <= 100.0; p += 0.5)
		assert_int_equal(mb_hist_percentile_ns(a, p), mb_hist_percentile_ns(b, p));
	char *ea, *eb;
	assert_int_equal(mb_hist_encode(a, &ea), 0);
	assert_int_equal(mb_hist_encode(b, &eb), 0);
	assert_string_equal(ea, eb);
	free(ea);
	free(eb);
}

static void test_merge(void **state)
{
	(void)state;
	struct mb_hist *all, *part[4], *merged;
	assert_int_equal(mb_hist_create(&all), 0);
	assert_int_equal(mb_hist_create(&merged), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mb_hist_create(&part[i]), 0);
	for (int i = 0; i < 50000; i++) {
		uint64_t v = sample();
		if (i % 1000 == 0)
			v = i % 3000 ? 10 : 200000000000ull; /* edge values too */
		mb_hist_record(all, v);
		/* uneven split: part 3 stays empty */
		mb_hist_record(part[(rng() % 7) % 3], v);
	}
	for (int i = 0; i < 4; i++)
		mb_hist_merge(merged, part[i]);
	assert_same(merged, all);
	/* merging into an empty one copies; merging empties changes nothing */
	struct mb_hist *copy;
	assert_int_equal(mb_hist_create(&copy), 0);
	mb_hist_merge(copy, all);
	mb_hist_merge(copy, part[3]);
	assert_same(copy, all);
	mb_hist_destroy(copy);
	for (int i = 0; i < 4; i++)
		mb_hist_destroy(part[i]);
	mb_hist_destroy(merged);
	mb_hist_destroy(all);
}

/* The flat export, added element-wise (sums) and combined by maximum
 * (extremes) as an MPI reduction does, equals the merge of the parts. */
static void test_flat(void **state)
{
	(void)state;
	size_t n = mb_hist_flat_len();
	assert_true(n > 2);
	uint64_t *sum = calloc(n, sizeof(*sum)), *one = calloc(n, sizeof(*one));
	uint64_t ext[2] = {0, 0}, e1[2];
	assert_non_null(sum);
	assert_non_null(one);
	struct mb_hist *all, *part[3], *got;
	assert_int_equal(mb_hist_create(&all), 0);
	assert_int_equal(mb_hist_create(&got), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(mb_hist_create(&part[i]), 0);
	for (int i = 0; i < 30000; i++) {
		uint64_t v = i == 7 ? 3 : i == 8 ? 500000000000ull : sample();
		mb_hist_record(all, v);
		mb_hist_record(part[i % 2], v); /* part 2 stays empty */
	}
	for (int p = 0; p < 3; p++) {
		mb_hist_flat_export(part[p], one, e1);
		for (size_t i = 0; i < n; i++)
			sum[i] += one[i];
		for (int k = 0; k < 2; k++)
			ext[k] = e1[k] > ext[k] ? e1[k] : ext[k];
	}
	mb_hist_flat_merge(got, sum, ext);
	assert_same(got, all);
	/* an empty export changes nothing */
	mb_hist_flat_export(part[2], one, e1);
	mb_hist_flat_merge(got, one, e1);
	assert_same(got, all);
	for (int i = 0; i < 3; i++)
		mb_hist_destroy(part[i]);
	mb_hist_destroy(all);
	mb_hist_destroy(got);
	free(sum);
	free(one);
}

static void test_encode_roundtrip(void **state)
{
	(void)state;
	struct mb_hist *a, *b, *twice;
	char *text;
	assert_int_equal(mb_hist_create(&a), 0);
	assert_int_equal(mb_hist_create(&b), 0);
	assert_int_equal(mb_hist_create(&twice), 0);

	/* empty */
	assert_int_equal(mb_hist_encode(a, &text), 0);
	assert_int_equal(mb_hist_decode_merge(b, text), 0);
	free(text);
	assert_int_equal(mb_hist_count(b), 0);

	for (int i = 0; i < 20000; i++) {
		uint64_t v = sample();
		mb_hist_record(a, v);
		mb_hist_record_n(twice, v, 2);
	}
	mb_hist_record(a, 0);
	mb_hist_record_n(twice, 0, 2);
	assert_int_equal(mb_hist_encode(a, &text), 0);
	assert_non_null(strchr(text, ' '));
	assert_null(strchr(text, '"'));
	assert_null(strchr(text, '\n'));
	assert_int_equal(mb_hist_decode_merge(b, text), 0);
	assert_same(a, b);
	/* decoding adds: two decodes == every value twice */
	assert_int_equal(mb_hist_decode_merge(b, text), 0);
	assert_same(b, twice);
	free(text);
	mb_hist_destroy(a);
	mb_hist_destroy(b);
	mb_hist_destroy(twice);
}

static void test_decode_garbage(void **state)
{
	(void)state;
	struct mb_hist *h, *ref;
	char *text;
	assert_int_equal(mb_hist_create(&h), 0);
	assert_int_equal(mb_hist_create(&ref), 0);
	mb_hist_record(h, 5000);
	mb_hist_record(h, 7000);
	assert_int_equal(mb_hist_encode(h, &text), 0);
	mb_hist_merge(ref, h);

	static const char *bad[] = {
	    "",
	    "garbage",
	    "h1/128/1000/100000000000",
	    "h1/128/1000/100000000000 1 5 5",
	    "h1/128/1000/100000000000 1 5 5 5 0:2",	 /* count mismatch */
	    "h1/128/1000/100000000000 1 5 5 5 0:1 ",	 /* trailing space */
	    "h1/128/1000/100000000000 2 5 5 5 0:1 0:1",	 /* index not ascending */
	    "h1/128/1000/100000000000 1 5 5 5 999999:1", /* index out of range */
	    "h1/128/1000/100000000000 1 5 5 5 0:0",	 /* zero count */
	    "h1/128/1000/100000000000 1 5 5 5 0:-1",
	    "h1/128/1000/100000000000 1 9 5 5 0:1",		/* min > max */
	    "h1/128/1000/100000000000 1 5000000 5000000 5 0:1", /* min not in its bucket */
	    "h1/128/1000/100000000000 0 1 1 1",			/* empty with min */
	    "h1/128/1000/100000000000 1 5 5 5 0:1x",
	    "h1/128/1000/100000000000 99999999999999999999 5 5 5 0:1",
	    "h1/64/1000/100000000000 1 5 5 5 0:1", /* other layout */
	    "h1/128/1000/100000000000 18446744073709551615 5 5 5 0:18446744073709551615 1:1",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mb_hist_decode_merge(h, bad[i]), MB_EPROTO);
	}
	/* truncations of a valid text fail (except at a bucket boundary,
	 * which is caught by the count check) and never change h */
	size_t n = strlen(text);
	for (size_t cut = 0; cut < n; cut++) {
		char *t = strndup(text, cut);
		assert_int_equal(mb_hist_decode_merge(h, t), MB_EPROTO);
		free(t);
	}
	assert_same(h, ref);
	free(text);
	mb_hist_destroy(h);
	mb_hist_destroy(ref);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_percentiles),	   cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_edges),	   cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_flat),	   cmocka_unit_test(test_encode_roundtrip),
	    cmocka_unit_test(test_decode_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
