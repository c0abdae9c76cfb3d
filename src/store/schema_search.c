/* schema_search.c: the Reminders search folder of every mailbox and the
 * search queue that keeps it current (schema.h, "search folders").
 *
 * A message change reaches here from schema_msg.c's index functions, in the
 * change's transaction.  In-line mode: the message's old state loses its
 * row (mb__search_removed), its new state gets one when it matches
 * (mb__search_filed).  Deferred mode: nothing is evaluated then; the change
 * queues (mailbox, cn) -> mid, and mb_schema_search_step later evaluates
 * the message as it is at that time, in a transaction of its own.
 *
 * Invariants: an entry is queued in the same transaction as its change (so
 * a change that commits is never missed, and one that aborts queues
 * nothing); a step removes the entry it evaluated in its own transaction
 * (so a crash between the two leaves it queued, and evaluating it again is
 * harmless: the row is made to say what the message is now); with the
 * queue empty, the reminders rows are exactly the matching messages.
 */
#include "core/error.h"
#include "store/schema_int.h"

#include <string.h>

bool mb_schema_reminder_match(const struct mb_msg_rec *r)
{
	return r->appointment && r->folder != MB_FID_DELETED;
}

static int row_put(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r)
{
	uint8_t k[12], v[8];
	le64(v, (uint64_t)r->start);
	return mb_tree_put(s->reminders, k, k_msg(k, mailbox, r->mid), v, sizeof(v), 0);
}

static int row_del(struct mb_schema *s, uint32_t mailbox, uint64_t mid)
{
	uint8_t k[12];
	int rc = mb_tree_del(s->reminders, k, k_msg(k, mailbox, mid));
	return rc == MB_ENOTFOUND ? 0 : rc;
}

static int enqueue(struct mb_schema *s, uint32_t mailbox, uint64_t cn, uint64_t mid)
{
	uint8_t k[12], v[8];
	le64(v, mid);
	int rc = mb_tree_put(s->squeue, k, k_msg(k, mailbox, cn), v, sizeof(v), 0);
	if (!rc) {
		s->sq_pending = true;
		s->sq_added++;
	}
	return rc;
}

int mb__search_removed(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *old)
{
	if (s->deferred || !mb_schema_reminder_match(old))
		return 0;
	return row_del(s, mailbox, old->mid);
}

int mb__search_filed(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r)
{
	if (s->deferred)
		return enqueue(s, mailbox, r->cn, r->mid);
	return mb_schema_reminder_match(r) ? row_put(s, mailbox, r) : 0;
}

int mb__search_deleted(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint64_t cn)
{
	/* in-line, mb__search_removed already took the row */
	return s->deferred ? enqueue(s, mailbox, cn, mid) : 0;
}

void mb_schema_search_set_deferred(struct mb_schema *s, bool deferred)
{
	s->deferred = deferred;
	s->sq_pending = true; /* the first step finds out */
}

bool mb_schema_search_pending(const struct mb_schema *s) { return s->sq_pending; }

void mb_schema_search_pause(struct mb_schema *s) { s->sq_pending = false; }

uint32_t mb_schema_search_take_added(struct mb_schema *s)
{
	uint32_t n = s->sq_added;
	s->sq_added = 0;
	return n;
}

int mb_schema_search_step(struct mb_schema *s, bool *did)
{
	struct mb_cursor *c;
	const void *key;
	size_t kl;
	uint8_t k[12];

	*did = false;
	int rc = mb_cursor_open(s->squeue, &c);
	if (rc)
		return rc;
	rc = mb_cursor_first(c);
	if (!rc)
		rc = mb_cursor_key(c, &key, &kl);
	if (!rc && kl != sizeof(k))
		rc = MB_ECORRUPT;
	if (!rc) {
		memcpy(k, key, sizeof(k));
		rc = mb_cursor_value(c, &s->val2);
	}
	mb_cursor_close(c);
	if (rc == MB_ENOTFOUND) {
		s->sq_pending = false;
		return 0;
	}
	if (rc)
		return rc;
	if (s->val2.len != 8)
		return MB_ECORRUPT;
	uint32_t mailbox = mb_key_get_u32(k);
	uint64_t mid = rd64(s->val2.data);
	rc = mb_tree_del(s->squeue, k, sizeof(k));
	if (rc)
		return rc;
	struct mb_msg_rec r;
	rc = mb_schema_msg_get(s, mailbox, mid, &s->val, &r);
	if (rc == MB_ENOTFOUND)
		rc = row_del(s, mailbox, mid);
	else if (!rc)
		rc = mb_schema_reminder_match(&r) ? row_put(s, mailbox, &r) : row_del(s, mailbox, mid);
	if (!rc)
		*did = true;
	return rc;
}

int mb_schema_reminders_scan(struct mb_schema *s, uint32_t mailbox,
			     int (*cb)(void *arg, uint64_t mid, int64_t start), void *arg)
{
	struct mb_cursor *c;
	uint8_t lo[4], hi[4];
	int rc = mb_cursor_open(s->reminders, &c);
	if (rc)
		return rc;
	mb_key_u32(lo, mailbox);
	mb_key_u32(hi, mailbox + 1);
	rc = mailbox == UINT32_MAX ? mb_cursor_range(c, lo, 4, NULL, 0)
				   : mb_cursor_range(c, lo, 4, hi, 4);
	while (!rc) {
		const void *key;
		size_t kl;
		rc = mb_cursor_key(c, &key, &kl);
		if (!rc)
			rc = mb_cursor_value(c, &s->val2);
		if (!rc && (kl != 12 || s->val2.len != 8))
			rc = MB_ECORRUPT;
		if (rc)
			break;
		if (cb(arg, mb_key_get_u64((const uint8_t *)key + 4),
		       (int64_t)rd64(s->val2.data)))
			break;
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb__search_rebuild(struct mb_schema *s)
{
	struct mb_cursor *c;
	int rc = mb_cursor_open(s->messages, &c);
	if (rc)
		return rc;
	rc = mb_cursor_first(c);
	while (!rc) {
		const void *key;
		size_t kl;
		struct mb_msg_rec r;
		rc = mb_cursor_key(c, &key, &kl);
		if (!rc && kl != 12)
			rc = MB_ECORRUPT;
		if (rc)
			break;
		uint32_t mailbox = mb_key_get_u32(key);
		rc = mb_schema_msg_get(s, mailbox, mb_key_get_u64((const uint8_t *)key + 4), &s->val,
				       &r);
		if (!rc && mb_schema_reminder_match(&r))
			rc = row_put(s, mailbox, &r);
		if (!rc)
			rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}
