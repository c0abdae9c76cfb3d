/* acct.h: latency and throughput accounting of the storage test.
 *
 * Every thread that issues I/O (workers, and in transactions mode the
 * engine's own threads through the timing I/O shim) records into its own
 * slot: a count, a byte total and a latency histogram (src/core/hist.h) per
 * kind of transfer.  A slot has one writer; its small mutex is taken once
 * per record (uncontended) and by the reporter once per second when it
 * drains the slot into a window.  Draining moves the figures: each I/O is
 * counted in exactly one window, so window sums equal the totals and
 * merged percentiles are exact (histogram merge).
 *
 * The first error (I/O error or checksum mismatch) is kept with its file
 * and offset; later ones are counted.
 */
#ifndef MB_STRESS_ACCT_H
#define MB_STRESS_ACCT_H

#include <stdbool.h>
#include <stdint.h>

#include "stress/workload.h"

struct mb_hist;

enum mb_xfer { MB_XFER_DB_READ = 0, MB_XFER_DB_WRITE, MB_XFER_LOG_WRITE, MB_XFER_COUNT };

struct mb_stress_acct;
struct mb_stress_slot;
struct mb_stress_window;

int mb_stress_acct_create(struct mb_stress_acct **out);
/* Slots must no longer be in use. */
void mb_stress_acct_destroy(struct mb_stress_acct *a);
/* A new slot for the calling thread (owned by the accountant). */
int mb_stress_acct_slot(struct mb_stress_acct *a, struct mb_stress_slot **out);

void mb_stress_slot_record(struct mb_stress_slot *s, enum mb_xfer kind, uint64_t ns,
			   uint64_t bytes);
/* One committed transaction (transactions mode). */
void mb_stress_slot_txn(struct mb_stress_slot *s);
/* An I/O error or a checksum mismatch at file:offset (code: MB_E*). */
void mb_stress_slot_error(struct mb_stress_slot *s, const char *file, uint64_t offset, int code,
			  const char *what);

/* An extra source drained with the slots, under the accountant's lock
 * (transactions mode: the engine's own I/O counters and histograms). */
typedef void (*mb_stress_source_fn)(void *arg, struct mb_stress_window *w);
void mb_stress_acct_set_source(struct mb_stress_acct *a, mb_stress_source_fn fn, void *arg);

/* Move every slot's figures (and the source's) into w (adding to it). */
int mb_stress_acct_drain(struct mb_stress_acct *a, struct mb_stress_window *w);
/* Errors so far (all windows), and the first one; false when none. */
uint64_t mb_stress_acct_errors(struct mb_stress_acct *a);
bool mb_stress_acct_first_error(struct mb_stress_acct *a, char *buf, size_t len, char *file,
				size_t file_len, uint64_t *offset);

/* A window: what was recorded over some interval. */
int mb_stress_window_create(struct mb_stress_window **out);
void mb_stress_window_destroy(struct mb_stress_window *w);
void mb_stress_window_reset(struct mb_stress_window *w);
/* dst += src (exact). */
void mb_stress_window_merge(struct mb_stress_window *dst, const struct mb_stress_window *src);
uint64_t mb_stress_window_count(const struct mb_stress_window *w, enum mb_xfer kind);
/* Figures over `seconds` of wall time (rates = counts / seconds). */
void mb_stress_window_figures(const struct mb_stress_window *w, double seconds, int threads,
			      struct mb_stress_figures *out);
/* w += a histogram of one kind (count = the histogram's count) and bytes. */
void mb_stress_window_add_hist(struct mb_stress_window *w, enum mb_xfer kind,
			       const struct mb_hist *h, uint64_t bytes);
/* w += transactions and errors counted elsewhere. */
void mb_stress_window_add_counts(struct mb_stress_window *w, uint64_t txns, uint64_t errors);
/* The histogram of a kind (borrowed), for the stats stream. */
const struct mb_hist *mb_stress_window_hist(const struct mb_stress_window *w, enum mb_xfer kind);

#endif
