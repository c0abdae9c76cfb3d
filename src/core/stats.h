/* stats.h: the stats stream children send to the supervisor.
 *
 * Format: JSON lines (one object, one line, '\n'-terminated), one per
 * second per child, written to an inherited file descriptor:
 *
 *   {"src":"store","pid":123,"seq":7,"t":12.004,"dt":1.001,
 *    "c":{"rpc_ops_per_s":950.5,...},      counters-table keys and values
 *    "h":{"rpc_rtt":"<mb_hist_encode>",...}, histograms of the window
 *    "x":{...}}                               anything else (free-form)
 *
 * "c" holds only counters that were measured (absent means n/a).  "h"
 * histograms cover the window only (the reader merges windows exactly).
 * A final line with "end":true may precede a clean exit.
 *
 * The reader is fed raw bytes as they arrive (any split), calls back once
 * per complete line, skips (and counts) malformed or over-long lines, and
 * reports end of stream, so a dead child never blocks or crashes it.
 */
#ifndef MB_CORE_STATS_H
#define MB_CORE_STATS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counters.h"

#define MB_STATS_MAX_LINE (4 << 20)

/* One line, decoded. */
struct mb_stats_msg {
	char src[32];
	long pid;
	uint64_t seq;
	double t;  /* sender's monotonic seconds */
	double dt; /* window length, seconds */
	double value[MB_COUNTER_COUNT];
	bool has[MB_COUNTER_COUNT];
	bool end;
	json_t *root; /* the whole object (borrowed: valid in the callback) */
};

/* ---- writer (in the child) ---- */
struct mb_stats_writer;
int mb_stats_writer_create(int fd, const char *src, struct mb_stats_writer **out);
void mb_stats_writer_destroy(struct mb_stats_writer *w);
/* Write one line: counters with has[] set, plus optional histograms object
 * ("h", may be NULL) and extra object ("x", may be NULL); the json_t
 * arguments are borrowed.  Blocking write of the whole line; MB_ECLOSED when
 * the supervisor is gone (EPIPE). */
int mb_stats_write(struct mb_stats_writer *w, double dt, const double *value, const bool *has,
		   json_t *hists, json_t *extra);
int mb_stats_write_end(struct mb_stats_writer *w);

/* ---- reader (in the supervisor) ---- */
typedef void (*mb_stats_cb)(void *arg, const struct mb_stats_msg *msg);
struct mb_stats_reader;
int mb_stats_reader_create(mb_stats_cb cb, void *arg, struct mb_stats_reader **out);
void mb_stats_reader_destroy(struct mb_stats_reader *r);
/* Feed bytes; complete lines are decoded and passed to cb. */
int mb_stats_reader_feed(struct mb_stats_reader *r, const char *buf, size_t len);
/* The stream ended (EOF or error): a trailing partial line is dropped. */
void mb_stats_reader_eof(struct mb_stats_reader *r);
uint64_t mb_stats_reader_bad_lines(const struct mb_stats_reader *r);
bool mb_stats_reader_ended(const struct mb_stats_reader *r);

#endif
