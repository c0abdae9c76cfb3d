/* schema_scan.c: reading the mailbox tables in order: a folder's messages by
 * time (resumable from a scan position), the changes of a folder since a
 * change number (by_cn), and the appointments of a calendar range.  Only
 * reads; a scan that stops early reports *more and where to resume.
 */
#include "core/error.h"
#include "store/schema_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Position c, bounded to the folder, at the first key of the scan: the
 * first after pos in its direction, or the first of the folder in it. */
static int scan_start(struct mb_cursor *c, uint32_t mailbox, uint32_t folder,
		      const struct mb_scan_pos *pos)
{
	uint8_t lo[8], hi[8], at[24];
	k_folder(lo, mailbox, folder);
	/* upper bound: next folder */
	if (folder == UINT32_MAX)
		k_folder(hi, mailbox + 1, 0);
	else
		k_folder(hi, mailbox, folder + 1);
	/* the index's order, (inv_time, mid) ascending, is newest first: newest
	 * first resumes at the first key >= (inv_time, mid + 1), oldest first
	 * backwards from the last key <= (inv_time, mid), the resume point
	 * itself skipped */
	if (pos->started)
		mb_key_u64(mb_key_u64(at + k_folder(at, mailbox, folder), pos->inv_time),
			   pos->ascending ? pos->mid : pos->mid + 1);
	if (!pos->ascending)
		return pos->started ? mb_cursor_range(c, at, 24, hi, 8)
				    : mb_cursor_range(c, lo, 8, hi, 8);
	int rc = mb_cursor_range(c, lo, 8, hi, 8);
	if (rc)
		return rc;
	if (!pos->started)
		return mb_cursor_last(c);
	rc = mb_cursor_seek_le(c, at, 24);
	if (rc)
		return rc;
	const void *key;
	size_t kl;
	rc = mb_cursor_key(c, &key, &kl);
	if (rc == 0 && kl == 24 && memcmp(key, at, 24) == 0)
		rc = mb_cursor_prev(c);
	return rc;
}

int mb_schema_folder_scan(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			  struct mb_scan_pos *pos, uint32_t max, int (*cb)(void *arg, uint64_t mid),
			  void *arg, bool *more)
{
	struct mb_cursor *c;
	uint32_t n = 0;
	int rc = mb_cursor_open(s->by_time, &c);

	*more = false;
	if (rc)
		return rc;
	rc = scan_start(c, mailbox, folder, pos);
	int (*step)(struct mb_cursor *) = pos->ascending ? mb_cursor_prev : mb_cursor_next;
	while (rc == 0) {
		const void *key;
		size_t kl;
		rc = mb_cursor_key(c, &key, &kl);
		if (rc)
			break;
		if (kl != 24) {
			rc = MB_ECORRUPT;
			break;
		}
		if (n == max) {
			*more = true;
			break;
		}
		const unsigned char *kp = key;
		pos->started = true;
		pos->inv_time = mb_key_get_u64(kp + 8);
		pos->mid = mb_key_get_u64(kp + 16);
		n++;
		if (cb(arg, pos->mid)) {
			/* the callback is full: more only if a row follows */
			rc = step(c);
			*more = rc == 0;
			break;
		}
		rc = step(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb_schema_folder_changes(struct mb_schema *s, uint32_t mailbox, uint32_t folder, uint64_t since,
			     uint32_t max,
			     int (*cb)(void *arg, uint64_t cn, uint64_t mid, bool deleted),
			     void *arg, bool *more)
{
	struct mb_cursor *c;
	uint8_t lo[16], hi[16];
	uint32_t n = 0;
	int rc = mb_cursor_open(s->by_cn, &c);

	*more = false;
	if (rc)
		return rc;
	k_cn(lo, mailbox, folder, since + 1);
	if (folder == UINT32_MAX)
		k_cn(hi, mailbox + 1, 0, 0);
	else
		k_cn(hi, mailbox, folder + 1, 0);
	rc = mb_cursor_range(c, lo, 16, hi, 16);
	while (rc == 0) {
		const void *key;
		size_t kl;
		rc = mb_cursor_key(c, &key, &kl);
		if (rc)
			break;
		if (n == max) {
			*more = true;
			break;
		}
		uint64_t cn = mb_key_get_u64((const unsigned char *)key + 8);
		rc = mb_cursor_value(c, &s->val);
		if (rc)
			break;
		if (s->val.len != 9) {
			rc = MB_ECORRUPT;
			break;
		}
		const unsigned char *v = s->val.data;
		n++;
		if (cb(arg, cn, mb_key_get_u64(v), v[8] != 0)) {
			rc = mb_cursor_next(c);
			*more = rc == 0;
			break;
		}
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb_schema_calendar_range(
    struct mb_schema *s, uint32_t mailbox, int64_t start, int64_t end, uint32_t max,
    int (*cb)(void *arg, uint64_t mid, int64_t start, int64_t end, uint32_t busy), void *arg)
{
	struct mb_cursor *c;
	uint8_t lo[20], hi[20];
	uint32_t n = 0;
	int64_t from =
	    start > INT64_MIN + MB_SCHEMA_MAX_APPT_MS ? start - MB_SCHEMA_MAX_APPT_MS : INT64_MIN;
	int rc = mb_cursor_open(s->calendar, &c);

	if (rc)
		return rc;
	k_cal(lo, mailbox, from, 0);
	k_cal(hi, mailbox, end, 0);
	rc = mb_cursor_range(c, lo, 20, hi, 20);
	while (rc == 0 && n < max) {
		const void *key;
		size_t kl;
		rc = mb_cursor_key(c, &key, &kl);
		if (rc)
			break;
		const unsigned char *kp = key;
		int64_t st = unbias(mb_key_get_u64(kp + 4));
		uint64_t mid = mb_key_get_u64(kp + 12);
		rc = mb_cursor_value(c, &s->val);
		if (rc)
			break;
		if (s->val.len != 12) {
			rc = MB_ECORRUPT;
			break;
		}
		int64_t en = (int64_t)rd64(s->val.data);
		uint32_t busy = rd32((const uint8_t *)s->val.data + 8);
		if (en > start) {
			n++;
			if (cb(arg, mid, st, en, busy))
				break;
		}
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}
