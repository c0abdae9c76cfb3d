/* test_replica.c: a cached-mode user's local replica (src/load/replica.h):
 * well-known slots, user folders added on demand up to the limit, idempotent
 * upserts and removes by message id (a downloaded change the user already
 * applied locally is harmless), growth beyond the first allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/error.h"
#include "load/replica.h"
#include "proto/proto.h"

static void test_slots(void **state)
{
	(void)state;
	struct mb_replica *r;
	assert_int_equal(mb_replica_create(&r), 0);
	assert_int_equal(mb_replica_slot(r, MB_FID_INBOX), MB_RSLOT_INBOX);
	assert_int_equal(mb_replica_slot(r, MB_FID_DELETED), MB_RSLOT_DELETED);
	assert_int_equal(mb_replica_slot(r, MB_FID_SENT), MB_RSLOT_SENT);
	assert_int_equal(mb_replica_slot(r, MB_FID_CALENDAR), MB_RSLOT_CALENDAR);
	assert_int_equal(mb_replica_slot(r, MB_FID_CONTACTS), MB_RSLOT_CONTACTS);
	int s = mb_replica_slot(r, MB_FID_FIRST_USER);
	assert_int_equal(s, MB_RSLOT_FIRST_USER);
	assert_int_equal(mb_replica_slot(r, MB_FID_FIRST_USER), s); /* found, not added */
	for (uint32_t f = MB_FID_FIRST_USER + 1; r->nfolders < MB_REPLICA_MAX_FOLDERS; f++)
		assert_true(mb_replica_slot(r, f) >= 0);
	assert_int_equal(mb_replica_slot(r, 9999), MB_EFULL);
	mb_replica_destroy(r);
}

static void test_items(void **state)
{
	(void)state;
	struct mb_replica *r;
	assert_int_equal(mb_replica_create(&r), 0);
	size_t empty = mb_replica_bytes(r);
	for (uint64_t m = 1; m <= 1000; m++)
		assert_int_equal(mb_replica_upsert(r, MB_RSLOT_INBOX, m, 0, 100, (int32_t)m), 0);
	assert_int_equal(r->f[MB_RSLOT_INBOX].n, 1000);
	assert_true(mb_replica_bytes(r) >= empty + 1000 * sizeof(struct mb_ritem));
	/* the same id again: updated in place (flags; size and sender kept when
	 * the update does not carry them) */
	assert_int_equal(mb_replica_upsert(r, MB_RSLOT_INBOX, 7, MB_MSGFLAG_READ, 0, -1), 0);
	assert_int_equal(r->f[MB_RSLOT_INBOX].n, 1000);
	int found = 0;
	for (uint32_t i = 0; i < r->f[MB_RSLOT_INBOX].n; i++) {
		const struct mb_ritem *it = &r->f[MB_RSLOT_INBOX].items[i];
		if (it->mid == 7) {
			found = 1;
			assert_int_equal(it->flags, MB_MSGFLAG_READ);
			assert_int_equal(it->size, 100);
			assert_int_equal(it->who, 7);
		}
	}
	assert_true(found);
	/* what a folder holds (the sync downloads the body of what it does not) */
	assert_true(mb_replica_holds(r, MB_RSLOT_INBOX, 7));
	assert_false(mb_replica_holds(r, MB_RSLOT_INBOX, 1001));
	assert_false(mb_replica_holds(r, MB_RSLOT_DELETED, 7));
	assert_false(mb_replica_holds(r, 99, 7));
	assert_true(mb_replica_remove(r, MB_RSLOT_INBOX, 7));
	assert_false(mb_replica_remove(r, MB_RSLOT_INBOX, 7)); /* idempotent */
	assert_false(mb_replica_holds(r, MB_RSLOT_INBOX, 7));
	assert_int_equal(r->f[MB_RSLOT_INBOX].n, 999);
	assert_false(mb_replica_remove(r, MB_RSLOT_SENT, 8)); /* other folder */
	assert_int_equal(mb_replica_upsert(r, 99, 1, 0, 0, -1), MB_EINVAL);
	assert_false(mb_replica_remove(r, -1, 1));
	mb_replica_destroy(r);
	mb_replica_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_slots),
	    cmocka_unit_test(test_items),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
