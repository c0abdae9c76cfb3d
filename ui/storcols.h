/* storcols.h: the storage screen's kept results and thread steps.
 *
 * Each storage test that ends leaves its result as a column for the rest
 * of the console session (one per thread count; a later test of the same
 * count replaces it); an auto-tune leaves one per count it measured.  + and
 * - step through the published thread counts (storage.cfg's reference
 * rows: 4, 8, 12), then on by the last step (16, 20, ...).  The outcome of
 * the last test (auto-tune's best count, soft recovery's replay time,
 * checksum's verdict) is read from DATA/stress-last.json, the storage
 * test's own JSON. */
#ifndef MB_UI_STORCOLS_H
#define MB_UI_STORCOLS_H

#include "report/stortable.h"
#include "ui/console.h"

/* The thread count after (dir > 0) or before (dir < 0) n. */
int mb_stor_step(const struct mb_storage_cfg *st, int n, int dir);
/* A storage test has just ended: keep its result(s) and outcome. */
void mb_stor_capture(struct mb_console *c);
/* Kept result k as a series of the storage comparison (report/stortable.h),
 * with the verdict it had when it ended. */
void mb_stor_series(const struct mb_console *c, int k, struct mb_stor_series *out);

#endif
