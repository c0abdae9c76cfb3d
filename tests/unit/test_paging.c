/* test_paging.c: QueryRows paging against a real store (in a thread, real
 * databases).  A client that follows docs/PROTOCOL.md (ask for k rows, ask
 * again while `more` is 1) must see every row of a folder of N rows exactly
 * once, in ceil(N/k) calls, for every N and k, in either SortTable order
 * (oldest first is newest first reversed); and ListContacts' `more` the
 * same.  Invariant: `more` is 1 exactly when rows remain after the page.
 * Before any of that, the folders as `init` left them: every initialised
 * message is read (MB_INIT_VERSION 2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "storetest.h"
#include "tests/opbatch.h"

static struct storetest T;

static int setup(void **state)
{
	(void)state;
	return storetest_start(&T, 2);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

static void add_message(struct mb_client *c, uint64_t fid, int i)
{
	struct mb_op ops[3];
	struct mb_prop props[2];
	struct mb_reply rep;
	char subj[32];
	snprintf(subj, sizeof(subj), "paging %d", i);
	props[0] = mb_prop_str(MB_PR_SUBJECT, subj);
	props[1] = mb_prop_str(MB_PR_BODY, "a row to page over");
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, fid, 9, props, 2, MB_OP_SAVE_CHANGES);
	assert_int_equal(mb_client_call(c, ops, 3, &rep), 0);
	for (int j = 0; j < 3; j++)
		assert_int_equal(rep.ops[j].status, 0);
}

static uint32_t count(struct mb_client *c, uint64_t fid)
{
	struct mb_op op;
	struct mb_op_reply r = {0};
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = fid;
	assert_int_equal(storetest_one(c, &op, &r), 0);
	return r.u.folder.count;
}

/* Every folder init fills holds messages, none of them unread (the runs
 * measure a day's steady state: docs/workload.md, "Initialised mail is
 * read"); runs first, before the other tests add unread rows. */
static void test_init_all_read(void **state)
{
	(void)state;
	static const uint32_t fids[] = {MB_FID_INBOX, MB_FID_DELETED, MB_FID_CALENDAR,
					MB_FID_CONTACTS};
	for (int u = 0; u < 2; u++) {
		struct mb_client *c = storetest_client(&T, u, 0);
		assert_non_null(c);
		for (size_t i = 0; i < sizeof(fids) / sizeof(fids[0]); i++) {
			struct mb_op op;
			struct mb_op_reply r = {0};
			memset(&op, 0, sizeof(op));
			op.code = MB_OP_OPEN_FOLDER;
			op.u.open_folder.fid = MB_FID(mb_client_mailbox(c), fids[i]);
			assert_int_equal(storetest_one(c, &op, &r), 0);
			if (r.u.folder.count == 0 || r.u.folder.unread != 0)
				fail_msg("user %d folder %u: %u messages, %u unread", u, fids[i],
					 r.u.folder.count, r.u.folder.unread);
		}
		mb_client_destroy(c);
	}
}

/* SortTable of handle h on the delivery time, in order. */
static void sort_op(struct mb_op *o, uint32_t h, uint8_t order)
{
	memset(o, 0, sizeof(*o));
	o->code = MB_OP_SORT_TABLE;
	o->u.sort_table.handle = h;
	o->u.sort_table.n = 1;
	o->u.sort_table.keys[0] = (struct mb_sort_key){MB_PR_DELIVERY_TIME, order};
}

/* Page the folder by k; every row once, ceil(n/k) calls (1 when empty).
 * order: -1 the table as opened, else a SortTable on delivery time in that
 * order first.  The message ids in the order seen go to out[0..n). */
static void page(struct mb_client *c, uint64_t fid, uint32_t n, uint32_t k, int order,
		 uint64_t *out)
{
	static uint32_t handle = 100;
	uint32_t cols[2] = {MB_PR_MID, MB_PR_DELIVERY_TIME};
	struct mb_op ops[4];
	struct mb_reply rep;
	uint32_t got = 0, calls = 0;
	uint32_t h = ++handle;
	bool more = true;
	int64_t last_time = 0;
	memset(ops, 0, sizeof(ops));
	opbatch_browse(ops, fid, h, cols, 2, MB_QR_F_RESTART, k);
	uint16_t nops = 3;
	if (order >= 0) {
		sort_op(&ops[3], h, (uint8_t)order);
		nops = 4;
	}
	assert_int_equal(mb_client_call(c, ops, nops, &rep), 0);
	for (uint16_t i = 0; i < nops; i++)
		assert_int_equal(rep.ops[i].status, 0);
	while (more) {
		struct mb_op q;
		struct mb_op_reply r = {0};
		memset(&q, 0, sizeof(q));
		q.code = MB_OP_QUERY_ROWS;
		q.u.query_rows.handle = h;
		q.u.query_rows.max_rows = k;
		q.u.query_rows.flags = calls ? 0 : MB_QR_F_RESTART;
		assert_int_equal(storetest_one(c, &q, &r), 0);
		calls++;
		assert_true(r.u.rows.nrows <= k);
		assert_int_equal(r.u.rows.ncols, 2);
		for (uint32_t i = 0; i < r.u.rows.nrows; i++) {
			uint64_t mid = (uint64_t)r.u.rows.vals[2 * i].v.i;
			assert_int_equal(r.u.rows.vals[2 * i + 1].tag, MB_PR_DELIVERY_TIME);
			int64_t t = r.u.rows.vals[2 * i + 1].v.i;
			for (uint32_t j = 0; j < got; j++)
				assert_true(out[j] != mid);
			assert_true(got < n);
			/* delivery times in the table's order */
			if (got)
				assert_true(order == MB_SORT_ASC ? t >= last_time : t <= last_time);
			last_time = t;
			out[got++] = mid;
		}
		more = r.u.rows.more != 0;
		/* a full page with rows left says so; a short page ends */
		if (r.u.rows.nrows < k)
			assert_false(more);
		assert_true(calls <= n + 1);
	}
	if (got != n || calls != (n ? (n + k - 1) / k : 1))
		fail_msg("N=%u k=%u order %d: %u rows in %u calls", n, k, order, got, calls);
	struct mb_op rel;
	struct mb_op_reply rr = {0};
	memset(&rel, 0, sizeof(rel));
	rel.code = MB_OP_RELEASE;
	rel.u.release.handle = h;
	storetest_one(c, &rel, &rr);
}

static void test_query_rows_pages(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 0, 0);
	assert_non_null(c);
	uint64_t fid = MB_FID(mb_client_mailbox(c), MB_FID_DELETED);
	uint32_t n = count(c, fid), added = 0;
	static const uint32_t ns[] = {0, 1, 2, 3, 5, 8, 13, 30};
	for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
		/* grow the folder to at least ns[t] rows */
		while (n < ns[t]) {
			add_message(c, fid, (int)added++);
			n++;
		}
		assert_int_equal(count(c, fid), n);
		uint32_t ks[] = {1, 2, 3, 4, 7, n ? n - 1 : 1, n ? n : 1, n + 1, 1024};
		uint64_t *opened = calloc(n + 1, sizeof(uint64_t));
		uint64_t *desc = calloc(n + 1, sizeof(uint64_t));
		uint64_t *asc = calloc(n + 1, sizeof(uint64_t));
		assert_true(opened && desc && asc);
		for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
			if (!ks[j])
				continue;
			page(c, fid, n, ks[j], -1, opened);
			page(c, fid, n, ks[j], MB_SORT_DESC, desc);
			page(c, fid, n, ks[j], MB_SORT_ASC, asc);
			/* the table opens newest first; oldest first is its reverse */
			for (uint32_t i = 0; i < n; i++) {
				assert_true(desc[i] == opened[i]);
				assert_true(asc[i] == opened[n - 1 - i]);
			}
		}
		free(opened);
		free(desc);
		free(asc);
	}
	mb_client_destroy(c);
}

/* SortTable's answers: the sort the store cannot do, on the wrong table or
 * handle, and the cursor back at the first row after a sort. */
static void test_sort_table(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 1, 0);
	assert_non_null(c);
	uint64_t fid = MB_FID(mb_client_mailbox(c), MB_FID_DELETED);
	while (count(c, fid) < 3)
		add_message(c, fid, 100);
	uint32_t cols[1] = {MB_PR_MID};
	struct mb_op ops[4];
	struct mb_reply rep;
	memset(ops, 0, sizeof(ops));
	opbatch_browse(ops, fid, 50, cols, 1, MB_QR_F_RESTART, 1);
	assert_int_equal(mb_client_call(c, ops, 4, &rep), 0);
	uint64_t newest = (uint64_t)rep.ops[3].u.rows.vals[0].v.i;
	struct {
		uint32_t handle;
		uint16_t n;
		struct mb_sort_key k0, k1;
		int want;
	} cases[] = {
	    {50, 1, {MB_PR_SUBJECT, MB_SORT_ASC}, {0, 0}, MB_EUNSUPPORTED},
	    {50,
	     2,
	     {MB_PR_DELIVERY_TIME, MB_SORT_DESC},
	     {MB_PR_SUBJECT, MB_SORT_ASC},
	     MB_EUNSUPPORTED},
	    {50, 0, {0, 0}, {0, 0}, MB_EUNSUPPORTED},
	    {50, 1, {MB_PR_DELIVERY_TIME, 7}, {0, 0}, MB_EINVAL},
	    {51, 1, {MB_PR_DELIVERY_TIME, MB_SORT_DESC}, {0, 0}, MB_ENOTFOUND},
	    {50, 1, {MB_PR_DELIVERY_TIME, MB_SORT_DESC}, {0, 0}, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mb_op op;
		struct mb_op_reply r = {0};
		memset(&op, 0, sizeof(op));
		op.code = MB_OP_SORT_TABLE;
		op.u.sort_table.handle = cases[i].handle;
		op.u.sort_table.n = cases[i].n;
		op.u.sort_table.keys[0] = cases[i].k0;
		op.u.sort_table.keys[1] = cases[i].k1;
		if (storetest_one(c, &op, &r) != cases[i].want)
			fail_msg("case %zu: status %d, want %d", i, r.status, cases[i].want);
	}
	/* the last sort (newest first) put the cursor back at the newest row */
	struct mb_op q;
	struct mb_op_reply r = {0};
	memset(&q, 0, sizeof(q));
	q.code = MB_OP_QUERY_ROWS;
	q.u.query_rows.handle = 50;
	q.u.query_rows.max_rows = 1;
	assert_int_equal(storetest_one(c, &q, &r), 0);
	assert_int_equal(r.u.rows.nrows, 1);
	assert_true((uint64_t)r.u.rows.vals[0].v.i == newest);
	/* a hierarchy table has no such sort */
	struct mb_op g;
	struct mb_op_reply gr = {0};
	memset(&g, 0, sizeof(g));
	g.code = MB_OP_GET_HIERARCHY_TABLE;
	g.u.get_table.fid = MB_FID(mb_client_mailbox(c), MB_FID_ROOT);
	g.u.get_table.handle = 52;
	assert_int_equal(storetest_one(c, &g, &gr), 0);
	sort_op(&q, 52, MB_SORT_DESC);
	assert_int_equal(storetest_one(c, &q, &r), MB_ESTATE);
	mb_client_destroy(c);
}

static void test_list_contacts_pages(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 1, 0);
	assert_non_null(c);
	uint32_t n = count(c, MB_FID(mb_client_mailbox(c), MB_FID_CONTACTS));
	while (n < 7) {
		struct mb_op op;
		struct mb_op_reply r = {0};
		struct mb_prop p = mb_prop_str(MB_PR_DISPLAY_NAME, "Contact");
		memset(&op, 0, sizeof(op));
		op.code = MB_OP_CREATE_CONTACT;
		op.u.create_contact.n = 1;
		op.u.create_contact.props = &p;
		assert_int_equal(storetest_one(c, &op, &r), 0);
		n++;
	}
	for (uint32_t k = 1; k <= n + 1; k++) {
		uint32_t start = 0, calls = 0, rows = 0;
		bool more = true;
		while (more) {
			struct mb_op op;
			struct mb_op_reply r = {0};
			memset(&op, 0, sizeof(op));
			op.code = MB_OP_LIST_CONTACTS;
			op.u.list_contacts.start = start;
			op.u.list_contacts.max_rows = k;
			assert_int_equal(storetest_one(c, &op, &r), 0);
			calls++;
			rows += r.u.rows.nrows;
			start += r.u.rows.nrows;
			more = r.u.rows.more != 0;
			assert_true(calls <= n + 1);
		}
		if (rows != n || calls != (n + k - 1) / k)
			fail_msg("contacts N=%u k=%u: %u rows in %u calls", n, k, rows, calls);
	}
	mb_client_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init_all_read),
	    cmocka_unit_test(test_query_rows_pages),
	    cmocka_unit_test(test_list_contacts_pages),
	    cmocka_unit_test(test_sort_table),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
