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

int mb_schema_folder_scan(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			  struct mb_scan_pos *pos, uint32_t max, int (*cb)(void *arg, uint64_t mid),
			  void *arg, bool *more)
{
	struct mb_cursor *c;
	uint8_t lo[24], hi[8];
	uint32_t n = 0;
	int rc = mb_cursor_open(s->by_time, &c);

	*more = false;
	if (rc)
		return rc;
	if (pos->started) {
		uint8_t *p = mb_key_u32(mb_key_u32(lo, mailbox), folder);
		mb_key_u64(mb_key_u64(p, pos->inv_time), pos->mid + 1);
	} else {
		k_folder(lo, mailbox, folder);
	}
	/* upper bound: next folder */
	if (folder == UINT32_MAX)
		k_folder(hi, mailbox + 1, 0);
	else
		k_folder(hi, mailbox, folder + 1);
	rc = mb_cursor_range(c, lo, pos->started ? 24 : 8, hi, 8);
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
			rc = mb_cursor_next(c);
			*more = rc == 0;
			break;
		}
		rc = mb_cursor_next(c);
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
