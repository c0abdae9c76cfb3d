/* hist.c: log-linear latency histogram (see hist.h).
 *
 * Layout: a value v (ns, clamped to [MB_HIST_LO, MB_HIST_HI] for indexing
 * only) with e = floor(log2 v) falls in sub-bucket (v >> (e - 7)) - 128 of
 * the power of two e, so every bucket is [low, low + 2^(e-7)) with
 * low >= 128 * 2^(e-7): the bucket width is at most 1/128 of its values and
 * the midpoint representative is within 0.4% of any value in the bucket.
 * Invariants: count == sum of bucket counts; min/max/sum are exact over the
 * recorded (unclamped) values; percentiles are clamped to [min, max].
 */
#include "core/hist.h"
#include "core/error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MB_HIST_SUB_BITS 7
#define MB_HIST_SUB (1u << MB_HIST_SUB_BITS) /* 128 sub-buckets per octave */
#define MB_HIST_LO 1000ull		     /* 1 us */
#define MB_HIST_HI 100000000000ull	     /* 100 s */

/* Raw index of v >= 2 * MB_HIST_SUB. */
static unsigned raw_index(uint64_t v)
{
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	unsigned sub = (unsigned)(v >> (e - MB_HIST_SUB_BITS)) - MB_HIST_SUB;

	return (e - MB_HIST_SUB_BITS - 1) * MB_HIST_SUB + sub;
}

static uint64_t raw_low(unsigned raw)
{
	unsigned e = raw / MB_HIST_SUB + MB_HIST_SUB_BITS + 1;
	unsigned sub = raw % MB_HIST_SUB;

	return (uint64_t)(MB_HIST_SUB + sub) << (e - MB_HIST_SUB_BITS);
}

static uint64_t raw_width(unsigned raw)
{
	unsigned e = raw / MB_HIST_SUB + MB_HIST_SUB_BITS + 1;

	return 1ull << (e - MB_HIST_SUB_BITS);
}

#define MB_HIST_BASE (raw_index(MB_HIST_LO))
#define MB_HIST_NBUCKETS (raw_index(MB_HIST_HI) - MB_HIST_BASE + 1)

struct mb_hist {
	uint64_t count;
	uint64_t min, max, sum;
	unsigned nbuckets;
	uint64_t bucket[];
};

static unsigned bucket_of(uint64_t ns)
{
	if (ns < MB_HIST_LO)
		ns = MB_HIST_LO;
	if (ns > MB_HIST_HI)
		ns = MB_HIST_HI;
	return raw_index(ns) - MB_HIST_BASE;
}

int mb_hist_create(struct mb_hist **out)
{
	unsigned n = MB_HIST_NBUCKETS;
	struct mb_hist *h = calloc(1, sizeof(*h) + n * sizeof(h->bucket[0]));

	if (!h)
		return MB_ENOMEM;
	h->nbuckets = n;
	*out = h;
	return 0;
}

void mb_hist_destroy(struct mb_hist *h) { free(h); }

void mb_hist_record_n(struct mb_hist *h, uint64_t ns, uint64_t count)
{
	if (count == 0)
		return;
	if (h->count == 0 || ns < h->min)
		h->min = ns;
	if (h->count == 0 || ns > h->max)
		h->max = ns;
	h->count += count;
	h->sum += ns * count;
	h->bucket[bucket_of(ns)] += count;
}

void mb_hist_record(struct mb_hist *h, uint64_t ns) { mb_hist_record_n(h, ns, 1); }

void mb_hist_merge(struct mb_hist *dst, const struct mb_hist *src)
{
	if (src->count == 0)
		return;
	if (dst->count == 0 || src->min < dst->min)
		dst->min = src->min;
	if (dst->count == 0 || src->max > dst->max)
		dst->max = src->max;
	dst->count += src->count;
	dst->sum += src->sum;
	for (unsigned i = 0; i < dst->nbuckets; i++)
		dst->bucket[i] += src->bucket[i];
}

size_t mb_hist_flat_len(void) { return 2 + MB_HIST_NBUCKETS; }

void mb_hist_flat_export(const struct mb_hist *h, uint64_t *sums, uint64_t ext[2])
{
	sums[0] = h->count;
	sums[1] = h->sum;
	memcpy(sums + 2, h->bucket, h->nbuckets * sizeof(h->bucket[0]));
	ext[0] = h->count ? ~h->min : 0;
	ext[1] = h->count ? h->max : 0;
}

void mb_hist_flat_merge(struct mb_hist *h, const uint64_t *sums, const uint64_t ext[2])
{
	if (sums[0] == 0)
		return;
	uint64_t mn = ~ext[0], mx = ext[1];
	if (h->count == 0 || mn < h->min)
		h->min = mn;
	if (h->count == 0 || mx > h->max)
		h->max = mx;
	h->count += sums[0];
	h->sum += sums[1];
	for (unsigned i = 0; i < h->nbuckets; i++)
		h->bucket[i] += sums[2 + i];
}

void mb_hist_reset(struct mb_hist *h)
{
	h->count = h->min = h->max = h->sum = 0;
	memset(h->bucket, 0, h->nbuckets * sizeof(h->bucket[0]));
}

uint64_t mb_hist_count(const struct mb_hist *h) { return h->count; }

double mb_hist_mean_ns(const struct mb_hist *h)
{
	return h->count ? (double)h->sum / (double)h->count : 0.0;
}

uint64_t mb_hist_min_ns(const struct mb_hist *h) { return h->min; }

uint64_t mb_hist_max_ns(const struct mb_hist *h) { return h->max; }

uint64_t mb_hist_percentile_ns(const struct mb_hist *h, double p)
{
	if (h->count == 0)
		return 0;
	if (!(p > 0.0))
		return h->min;
	if (p >= 100.0)
		return h->max;
	/* nearest rank: the smallest value with at least p% at or below it */
	/* the relative slack keeps p = 100 * k / count on rank k despite
	 * rounding (29 / 100 * 100 is 29.000000000000004) */
	double r = p / 100.0 * (double)h->count * (1.0 - 1e-12);
	uint64_t rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < h->nbuckets; i++) {
		seen += h->bucket[i];
		if (seen >= rank) {
			unsigned raw = i + MB_HIST_BASE;
			uint64_t v = raw_low(raw) + raw_width(raw) / 2;
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

/* Text form: "h1/128/1000/100000000000 COUNT MIN MAX SUM IDX:N IDX:N ...",
 * bucket indices strictly ascending, counts non-zero. */
#define MB_HIST_MAGIC "h1/128/1000/100000000000"

int mb_hist_encode(const struct mb_hist *h, char **out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return MB_ENOMEM;
	fprintf(f, "%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, MB_HIST_MAGIC, h->count,
		h->min, h->max, h->sum);
	for (unsigned i = 0; i < h->nbuckets; i++)
		if (h->bucket[i])
			fprintf(f, " %u:%" PRIu64, i, h->bucket[i]);
	if (fclose(f) != 0) {
		free(buf);
		return MB_ENOMEM;
	}
	*out = buf;
	return 0;
}

/* Strict unsigned decimal; advances *p. */
static int parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	char *end;

	if (*s < '0' || *s > '9')
		return MB_EPROTO;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return MB_EPROTO;
	*out = v;
	*p = end;
	return 0;
}

int mb_hist_decode_merge(struct mb_hist *h, const char *text)
{
	size_t ml = strlen(MB_HIST_MAGIC);
	const char *p = text;
	uint64_t count, min, max, sum, total = 0;
	struct mb_hist *tmp;
	int rc;

	if (!text || strncmp(p, MB_HIST_MAGIC, ml) != 0)
		return MB_EPROTO;
	p += ml;
	uint64_t *hdr[4] = {&count, &min, &max, &sum};
	for (int i = 0; i < 4; i++) {
		if (*p++ != ' ')
			return MB_EPROTO;
		if (parse_u64(&p, hdr[i]) != 0)
			return MB_EPROTO;
	}
	if ((rc = mb_hist_create(&tmp)) != 0)
		return rc;
	rc = MB_EPROTO;
	long last = -1;
	while (*p == ' ') {
		uint64_t idx, n;
		p++;
		if (parse_u64(&p, &idx) != 0 || *p++ != ':' || parse_u64(&p, &n) != 0)
			goto out;
		if (idx >= tmp->nbuckets || (long)idx <= last || n == 0 || total + n < total)
			goto out;
		last = (long)idx;
		tmp->bucket[idx] = n;
		total += n;
	}
	if (*p != '\0' || total != count)
		goto out;
	if (count > 0 && (min > max || bucket_of(min) > bucket_of(max)))
		goto out;
	if (count > 0 && (tmp->bucket[bucket_of(min)] == 0 || tmp->bucket[bucket_of(max)] == 0))
		goto out;
	if (count == 0 && (min || max || sum))
		goto out;
	tmp->count = count;
	tmp->min = min;
	tmp->max = max;
	tmp->sum = sum;
	mb_hist_merge(h, tmp);
	rc = 0;
out:
	mb_hist_destroy(tmp);
	return rc;
}
