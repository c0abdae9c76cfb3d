/* threshold.h: a pass/fail threshold on one counter, its text forms and
 * its verdict: the one implementation the scenario loader, the option
 * table, the run report, the comparisons and the console use.
 *
 * A threshold is a comparison and a value ("<= 80"); MB_CMP_NONE is "no
 * threshold".  Invariant: a counter without a threshold, or without a
 * measurement, has no verdict (MB_VERDICT_NONE), never a pass.
 * Threshold sets (scenario + DATA/thresholds.cfg) are report/thresholds.h.
 */
#ifndef MB_CORE_THRESHOLD_H
#define MB_CORE_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/counters.h"

enum mb_cmp { MB_CMP_NONE = 0, MB_CMP_LT, MB_CMP_LE, MB_CMP_GT, MB_CMP_GE };
struct mb_threshold {
	enum mb_cmp cmp;
	double value;
};

enum mb_verdict { MB_VERDICT_NONE = 0, MB_VERDICT_PASS, MB_VERDICT_FAIL };

/* "<", "<=", ">", ">="; "" for MB_CMP_NONE. */
const char *mb_cmp_str(enum mb_cmp c);
/* The inverse, also accepting "none" and "" (MB_CMP_NONE); MB_EINVAL otherwise. */
int mb_cmp_parse(const char *s, enum mb_cmp *out);

/* Parse "< 80", ">=0.5" (spaces optional); MB_EINVAL on anything else. */
int mb_threshold_parse(const char *text, struct mb_threshold *out);
/* A limit as a command line gives it: a threshold ("<= 5"), "none", or a
 * bare number X in (lo, hi] meaning "< X".  MB_EINVAL on anything else. */
int mb_threshold_parse_limit(const char *text, double lo, double hi, struct mb_threshold *out);
/* "< 80" etc. (every digit of the value, so it parses back) into buf;
 * "" for MB_CMP_NONE. */
void mb_threshold_format(const struct mb_threshold *t, char *buf, size_t len);
/* The same with the counter's decimals, unless they would hide the value. */
void mb_threshold_text(const struct mb_threshold *th, enum mb_counter_id id, char *buf, size_t len);

/* True when value satisfies t (always true for MB_CMP_NONE). */
bool mb_threshold_ok(const struct mb_threshold *t, double value);
/* The verdict of a measurement (has: whether there is one). */
enum mb_verdict mb_threshold_eval(const struct mb_threshold *th, bool has, double v);
/* "pass", "fail", "n/a". */
const char *mb_verdict_str(enum mb_verdict v);

#endif
