/* hist.h: log-linear (HDR-style) latency histogram.
 *
 * Values are nanoseconds.  Buckets cover 1 us to 100 s with a fixed
 * relative error of at most 1% (128 linear sub-buckets per power of two);
 * smaller values land in the first bucket, larger ones in the last, and
 * both are still counted.  Merging adds bucket counts, so a merge is exact:
 * percentiles of a merged histogram equal those of one histogram that
 * recorded every value.  Min, max and sum are kept exactly.
 * Not thread-safe: one writer; merge copies under the caller's control.
 */
#ifndef MB_CORE_HIST_H
#define MB_CORE_HIST_H

#include <stddef.h>
#include <stdint.h>

struct mb_hist;

int mb_hist_create(struct mb_hist **out);
void mb_hist_destroy(struct mb_hist *h);

void mb_hist_record(struct mb_hist *h, uint64_t ns);
void mb_hist_record_n(struct mb_hist *h, uint64_t ns, uint64_t count);
/* dst += src (exact). */
void mb_hist_merge(struct mb_hist *dst, const struct mb_hist *src);
void mb_hist_reset(struct mb_hist *h);

uint64_t mb_hist_count(const struct mb_hist *h);
double mb_hist_mean_ns(const struct mb_hist *h);  /* exact: sum / count; 0 when empty */
uint64_t mb_hist_min_ns(const struct mb_hist *h); /* 0 when empty */
uint64_t mb_hist_max_ns(const struct mb_hist *h); /* 0 when empty */
/* Value at percentile p (0..100]: the bucket's representative value, within
 * 1% of the exact order statistic; 0 when empty. */
uint64_t mb_hist_percentile_ns(const struct mb_hist *h, double p);

/* Serialise to a compact, self-describing ASCII string (sparse buckets),
 * suitable for a JSON string; *out is malloc'd, caller frees. */
int mb_hist_encode(const struct mb_hist *h, char **out);
/* Parse what mb_hist_encode wrote and ADD it into h (so decoding several
 * children's histograms into one merges them).  MB_EPROTO on bad input. */
int mb_hist_decode_merge(struct mb_hist *h, const char *text);

/* Fixed layout for element-wise reductions (MPI_Reduce with MPI_SUM and
 * MPI_MAX across processes): mb_hist_flat_len() uint64 values that merge
 * by addition (count, sum, then every bucket), and two extremes that merge
 * by maximum (ext[0] = ~min, so the maximum of ~min is ~ the minimum;
 * ext[1] = max; both 0 when empty).  Adding the exports of several
 * histograms and importing the result equals mb_hist_merge of them all. */
size_t mb_hist_flat_len(void);
void mb_hist_flat_export(const struct mb_hist *h, uint64_t *sums, uint64_t ext[2]);
/* h += what the (summed) export describes. */
void mb_hist_flat_merge(struct mb_hist *h, const uint64_t *sums, const uint64_t ext[2]);

#endif
