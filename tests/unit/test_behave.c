/* test_behave.c: the Outlook behaviour model (src/load/behave.h) without a
 * wire: step sequences of the actions in online and in cached mode, fed
 * with made-up step results:
 *  - send mail: one SEND, addressed to others (never the sender while
 *    there are others), with a body size;
 *  - process inbox online: list, then read (and mark read) every unread
 *    message in order, reply/forward, move or delete the processed mail
 *    (each at most once, only processed mail), and empty Deleted Items
 *    when it grew: list it, delete what it listed;
 *  - process inbox cached: the list is local, nothing is read over the
 *    wire (local reads counted), the dispose marks the mail read;
 *  - browse mail: views and reads online, all local in cached mode;
 *  - request meeting: free/busy of the attendees, the appointment, then
 *    the request to those same attendees at the appointment's time;
 *  - a failed step ends the action with its status;
 *  - the model is pure: the same random state gives the same steps;
 *  - with a target that runs the optional steps: new mail resolves its
 *    recipients first (online; never in cached mode) and takes its body
 *    and attachments from the send mix; the Inbox view is read page by
 *    page; a read message's attachment is opened at the scenario's rate;
 *    the steps per action are counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "core/error.h"
#include "core/scenario.h"
#include "load/behave.h"

static struct mb_scenario sc;
static struct mb_sched_params sp;

static int setup(void **state)
{
	(void)state;
	struct mb_cfg_error err;
	if (mb_scenario_load("online", &sc, &err) != 0)
		return -1;
	return mb_sched_params_init(&sc, 1.0, 10, &sp);
}

static struct mb_behave_env env_of(bool cached)
{
	struct mb_behave_env e = {.sp = &sp,
				  .nusers = 100,
				  .nlists = 5,
				  .cached = cached,
				  .inbox_messages = 5,
				  .deleted_items_messages = 1,
				  .contacts = 40,
				  .avg_body = 4096,
				  .now_ms = 1700000000000LL};
	return e;
}

/* A listing result: n items with ids base+1.., unread where i % 3 == 0. */
struct listing {
	uint64_t ids[64];
	uint32_t flags[64];
	int32_t who[64];
	struct mb_step_result r;
};

static const struct mb_step_result *list_result(struct listing *l, int n, uint64_t base,
						uint32_t count, uint32_t count2, bool local)
{
	memset(&l->r, 0, sizeof(l->r));
	for (int i = 0; i < n; i++) {
		l->ids[i] = base + (uint64_t)i + 1;
		l->flags[i] = i % 3 == 0 ? 0 : MB_ITEM_READ;
		l->who[i] = i % 7;
	}
	l->r.n = n;
	l->r.ids = l->ids;
	l->r.flags = l->flags;
	l->r.who = l->who;
	l->r.count = count;
	l->r.count2 = count2;
	l->r.local = local;
	return &l->r;
}

static const struct mb_step_result ok_result = {0};

static void test_send_mail(void **state)
{
	(void)state;
	struct mb_behave_env env = env_of(false);
	uint64_t rng = 42;
	for (int k = 0; k < 200; k++) {
		struct mb_behave b;
		struct mb_behave_self me = {.idx = 7, .nfolders = 3, .rng = &rng};
		struct mb_step s;
		mb_behave_begin(&b, MB_A_SEND_MAIL);
		assert_int_equal(mb_behave_next(&b, &env, &me, NULL, &s), 1);
		assert_int_equal(s.kind, MB_STEP_SEND);
		assert_int_equal(s.msg_kind, MB_MSG_NEW);
		assert_true(s.nusers + s.nlists >= 1);
		for (int i = 0; i < s.nusers; i++) {
			assert_int_not_equal(s.users[i], 7);
			assert_true(s.users[i] < 100);
		}
		for (int i = 0; i < s.nlists; i++)
			assert_true(s.lists[i] < 5);
		assert_true(s.size > 0);
		assert_int_equal(s.item, 0);
		assert_int_equal(mb_behave_next(&b, &env, &me, &ok_result, &s), 0);
	}
}

static bool in(const uint64_t *v, int n, uint64_t x)
{
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

static void test_process_inbox_online(void **state)
{
	(void)state;
	struct mb_behave_env env = env_of(false);
	uint64_t rng = 1;
	struct mb_behave b;
	struct mb_behave_self me = {.idx = 3, .nfolders = 2, .rng = &rng};
	struct mb_step s;
	struct listing l;
	mb_behave_begin(&b, MB_A_PROCESS_INBOX);
	assert_int_equal(mb_behave_next(&b, &env, &me, NULL, &s), 1);
	assert_int_equal(s.kind, MB_STEP_LIST_FOLDER);
	assert_int_equal(s.folder, MB_FOLDER_INBOX);
	assert_true(s.flags & MB_STEP_F_DELETED_COUNT);
	assert_int_equal(s.max_rows, MB_BEHAVE_PAGE);
	/* 12 rows, unread: ids 1, 4, 7, 10; the Inbox above its size (full),
	 * Deleted Items at 3 */
	int rc = mb_behave_next(&b, &env, &me, list_result(&l, 12, 0, 20, 3, false), &s);
	const uint64_t unread[4] = {1, 4, 7, 10};
	for (int i = 0; i < 4; i++) {
		assert_int_equal(rc, 1);
		assert_int_equal(s.kind, MB_STEP_READ);
		assert_int_equal(s.item, unread[i]);
		assert_true(s.flags & MB_STEP_F_MARK_READ);
		rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	}
	int sends = 0;
	while (rc == 1 && s.kind == MB_STEP_SEND) {
		assert_true(s.msg_kind == MB_MSG_REPLY || s.msg_kind == MB_MSG_FORWARD);
		/* online: the original is opened (quoted), then gets the
		 * reply's verb */
		assert_true(in(unread, 4, s.item));
		sends++;
		rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	}
	assert_true(sends >= 1 && sends <= MB_BEHAVE_REPLIES);
	assert_int_equal(rc, 1);
	assert_int_equal(s.kind, MB_STEP_MOVE);
	assert_true(s.flags & MB_STEP_F_CLOSE_VIEW);
	/* the Inbox is full: every processed message leaves it, once */
	assert_int_equal(s.nids + s.nmore, 4);
	for (int i = 0; i < s.nids; i++)
		assert_true(in(unread, 4, s.ids[i]) && !in(s.more, s.nmore, s.ids[i]));
	for (int i = 0; i < s.nmore; i++)
		assert_true(in(unread, 4, s.more[i]));
	assert_true(s.dst >= MB_FOLDER_USER && s.dst < MB_FOLDER_USER + 2);
	/* Deleted Items grew past its threshold (4): emptied */
	rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	assert_int_equal(rc, 1);
	assert_int_equal(s.kind, MB_STEP_LIST_FOLDER);
	assert_int_equal(s.folder, MB_FOLDER_DELETED);
	rc = mb_behave_next(&b, &env, &me, list_result(&l, 6, 100, 6, 0, false), &s);
	assert_int_equal(rc, 1);
	assert_int_equal(s.kind, MB_STEP_DELETE);
	assert_int_equal(s.folder, MB_FOLDER_DELETED);
	assert_int_equal(s.nids, 6);
	for (int i = 0; i < 6; i++)
		assert_int_equal(s.ids[i], 101 + (uint64_t)i);
	assert_int_equal(mb_behave_next(&b, &env, &me, &ok_result, &s), 0);
	assert_int_equal(b.local_reads, 0);
}

static void test_process_inbox_cached(void **state)
{
	(void)state;
	struct mb_behave_env env = env_of(true);
	uint64_t rng = 5;
	struct mb_behave b;
	struct mb_behave_self me = {.idx = 3, .nfolders = 0, .rng = &rng};
	struct mb_step s;
	struct listing l;
	mb_behave_begin(&b, MB_A_PROCESS_INBOX);
	assert_int_equal(mb_behave_next(&b, &env, &me, NULL, &s), 1);
	assert_int_equal(s.kind, MB_STEP_LIST_FOLDER);
	int rc = mb_behave_next(&b, &env, &me, list_result(&l, 9, 0, 9, 0, true), &s);
	/* local: the view and its 3 unread messages */
	assert_int_equal(b.local_reads, 1 + 3);
	const uint64_t unread[3] = {1, 4, 7};
	int sends = 0;
	while (rc == 1 && s.kind == MB_STEP_SEND) {
		/* the original (local) is named: it gets the reply's verb */
		assert_true(in(unread, 3, s.item));
		sends++;
		rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	}
	assert_true(sends >= 1);
	assert_int_equal(rc, 1);
	assert_int_equal(s.kind, MB_STEP_MOVE);
	assert_int_equal(s.nread, 3);
	assert_int_equal(s.nmore, 0); /* no user folders: nothing moved there */
	assert_false(s.flags & MB_STEP_F_CLOSE_VIEW);
	rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	while (rc == 1) {
		assert_true(s.kind == MB_STEP_LIST_FOLDER || s.kind == MB_STEP_DELETE);
		assert_int_not_equal(s.kind, MB_STEP_READ);
		rc = mb_behave_next(
		    &b, &env, &me,
		    s.kind == MB_STEP_LIST_FOLDER ? list_result(&l, 2, 50, 2, 0, true) : &ok_result,
		    &s);
	}
	assert_int_equal(rc, 0);
}

static void test_browse(void **state)
{
	(void)state;
	struct listing l;
	for (int cached = 0; cached < 2; cached++) {
		struct mb_behave_env env = env_of(cached);
		uint64_t rng = 9;
		struct mb_behave b;
		struct mb_behave_self me = {.idx = 1, .nfolders = 4, .rng = &rng};
		struct mb_step s;
		mb_behave_begin(&b, MB_A_BROWSE_MAIL);
		int rc = mb_behave_next(&b, &env, &me, NULL, &s);
		if (cached) {
			assert_int_equal(rc, 0);
			assert_true(b.local_reads >= 2);
			continue;
		}
		int views = 0, reads = 0;
		while (rc == 1) {
			const struct mb_step_result *res = &ok_result;
			if (s.kind == MB_STEP_LIST_FOLDER) {
				views++;
				assert_int_equal(s.max_rows, 30);
				res = list_result(&l, 30, 0, 30, 0, false);
			} else if (s.kind == MB_STEP_READ) {
				reads++;
				assert_true(s.item >= 1 && s.item <= 30);
			} else {
				assert_int_equal(s.kind, MB_STEP_CLOSE_VIEW);
			}
			rc = mb_behave_next(&b, &env, &me, res, &s);
		}
		assert_int_equal(rc, 0);
		assert_true(views >= 1);
		assert_true(reads >= views);
	}
}

static void test_request_meeting(void **state)
{
	(void)state;
	struct mb_behave_env env = env_of(false);
	uint64_t rng = 77;
	struct mb_behave b;
	struct mb_behave_self me = {.idx = 0, .nfolders = 1, .rng = &rng};
	struct mb_step s;
	mb_behave_begin(&b, MB_A_REQUEST_MEETING);
	assert_int_equal(mb_behave_next(&b, &env, &me, NULL, &s), 1);
	assert_int_equal(s.kind, MB_STEP_FREEBUSY);
	uint32_t who[8];
	int n = s.nusers;
	assert_true(n >= 1 && n <= 8);
	memcpy(who, s.users, sizeof(uint32_t) * (size_t)n);
	assert_int_equal(mb_behave_next(&b, &env, &me, &ok_result, &s), 1);
	assert_int_equal(s.kind, MB_STEP_CREATE_APPOINTMENT);
	assert_int_equal(s.folder, MB_FOLDER_CALENDAR);
	assert_true(s.start_ms > env.now_ms && s.end_ms > s.start_ms);
	int64_t start = s.start_ms;
	assert_int_equal(mb_behave_next(&b, &env, &me, &ok_result, &s), 1);
	assert_int_equal(s.kind, MB_STEP_SEND);
	assert_int_equal(s.msg_kind, MB_MSG_MEETING);
	assert_int_equal(s.nusers, n);
	assert_memory_equal(s.users, who, sizeof(uint32_t) * (size_t)n);
	assert_int_equal(s.start_ms, start);
	assert_int_equal(mb_behave_next(&b, &env, &me, &ok_result, &s), 0);
}

static void test_failure_and_purity(void **state)
{
	(void)state;
	struct mb_behave_env env = env_of(false);
	uint64_t rng = 3;
	struct mb_behave b;
	struct mb_behave_self me = {.idx = 0, .nfolders = 1, .rng = &rng};
	struct mb_step s;
	mb_behave_begin(&b, MB_A_BROWSE_CALENDAR);
	assert_int_equal(mb_behave_next(&b, &env, &me, NULL, &s), 1);
	assert_int_equal(s.kind, MB_STEP_CALENDAR_RANGE);
	struct mb_step_result bad = {.status = MB_EACCES};
	assert_int_equal(mb_behave_next(&b, &env, &me, &bad, &s), MB_EACCES);

	/* the same random state, the same steps */
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		uint64_t r1 = 99, r2 = 99;
		struct mb_behave b1, b2;
		struct mb_behave_self m1 = {.idx = 2, .nfolders = 3, .rng = &r1}, m2 = m1;
		m2.rng = &r2;
		struct mb_step s1, s2;
		struct listing l1, l2;
		mb_behave_begin(&b1, a);
		mb_behave_begin(&b2, a);
		int rc1 = mb_behave_next(&b1, &env, &m1, NULL, &s1);
		int rc2 = mb_behave_next(&b2, &env, &m2, NULL, &s2);
		for (int k = 0; k < 200 && rc1 == 1; k++) {
			assert_int_equal(rc1, rc2);
			assert_int_equal(s1.kind, s2.kind);
			assert_int_equal(s1.item, s2.item);
			assert_int_equal(s1.seed, s2.seed);
			assert_int_equal(s1.nusers, s2.nusers);
			assert_true(mb_behave_action_steps(a, false) & (1u << s1.kind));
			rc1 = mb_behave_next(&b1, &env, &m1, list_result(&l1, 10, 0, 10, 0, false),
					     &s1);
			rc2 = mb_behave_next(&b2, &env, &m2, list_result(&l2, 10, 0, 10, 0, false),
					     &s2);
		}
		assert_int_equal(rc1, 0);
		assert_int_equal(rc2, 0);
	}
	assert_int_equal(mb_behave_action_steps(MB_A_BROWSE_MAIL, true), 0);
	assert_true(mb_behave_action_steps(MB_A_PROCESS_INBOX, true) & (1u << MB_STEP_MOVE));
}

static void test_optional_steps(void **state)
{
	(void)state;
	uint64_t rng = 5;
	struct mb_behave b;
	struct mb_behave_self me = {.idx = 2, .nfolders = 2, .rng = &rng};
	struct mb_step s;
	struct listing l;
	for (int cached = 0; cached < 2; cached++) {
		struct mb_behave_env env = env_of(cached);
		env.steps = MB_STEPS_OPTIONAL;
		env.send_mix = sc.mix_send;
		env.nsend_mix = sc.mix_send_count;
		env.open_attach_pct = 100;
		int with_att = 0;
		for (int k = 0; k < 100; k++) {
			mb_behave_begin(&b, MB_A_SEND_MAIL);
			int steps = 0;
			int rc = mb_behave_next(&b, &env, &me, NULL, &s);
			if (!cached) {
				assert_int_equal(rc, 1);
				assert_int_equal(s.kind, MB_STEP_RESOLVE_NAMES);
				uint32_t first = s.nusers ? s.users[0] : 0;
				int nu = s.nusers, nl = s.nlists;
				assert_true(nu + nl >= 1);
				steps++;
				rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
				assert_int_equal(s.nusers, nu);
				assert_int_equal(s.nlists, nl);
				if (nu)
					assert_int_equal(s.users[0], first);
			}
			assert_int_equal(rc, 1);
			assert_int_equal(s.kind, MB_STEP_SEND);
			steps++;
			/* the send mix: bodies of 1-4 KB (+-25%), at most one attachment */
			assert_true(s.size >= 700 && s.size <= 5200);
			assert_true(s.nattach <= 1);
			with_att += s.nattach;
			if (s.nattach)
				assert_true(s.attach_size[0] >= 7000 && s.attach_size[0] <= 56000);
			assert_int_equal(mb_behave_next(&b, &env, &me, &ok_result, &s), 0);
			assert_int_equal(steps, cached ? 1 : 2);
		}
		/* 20% of the mix has an attachment */
		assert_true(with_att > 5 && with_att < 40);
	}
	/* online process inbox: the view page by page, reads, attachments */
	struct mb_behave_env env = env_of(false);
	env.steps = MB_STEPS_OPTIONAL;
	env.open_attach_pct = 100;
	mb_behave_begin(&b, MB_A_PROCESS_INBOX);
	assert_int_equal(mb_behave_next(&b, &env, &me, NULL, &s), 1);
	assert_int_equal(s.kind, MB_STEP_LIST_FOLDER);
	assert_true(s.flags & MB_STEP_F_NOTIFY);
	assert_int_equal(s.max_rows, MB_BEHAVE_VIEW_ROWS);
	const struct mb_step_result *r = list_result(&l, 25, 0, 60, 0, false);
	l.r.more = true;
	for (int i = 0; i < 25; i++)
		l.flags[i] |= i == 0 ? MB_ITEM_ATTACH : 0;
	assert_int_equal(mb_behave_next(&b, &env, &me, r, &s), 1);
	assert_int_equal(s.kind, MB_STEP_NEXT_ROWS);
	assert_int_equal(s.max_rows, MB_BEHAVE_PAGE - 25);
	r = list_result(&l, 25, 100, 0, 0, false);
	assert_int_equal(mb_behave_next(&b, &env, &me, r, &s), 1);
	/* unread: i % 3 == 0 of both pages (9 + 9); the first has attachments */
	assert_int_equal(s.kind, MB_STEP_READ);
	assert_int_equal(s.item, 1);
	assert_true(s.flags & MB_STEP_F_ATTACH);
	struct mb_step_result rr = {.count = 2};
	assert_int_equal(mb_behave_next(&b, &env, &me, &rr, &s), 1);
	assert_int_equal(s.kind, MB_STEP_OPEN_ATTACHMENT);
	assert_int_equal(s.item, 1);
	assert_true(s.aux >= 1 && s.aux <= 2);
	int reads = 1, opens = 1;
	int rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	while (rc == 1 && s.kind == MB_STEP_READ) {
		assert_false(s.flags & MB_STEP_F_ATTACH);
		reads++;
		rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	}
	assert_int_equal(reads, 18);
	assert_int_equal(opens, 1);
	int sends = 0, resolves = 0;
	while (rc == 1 && (s.kind == MB_STEP_SEND || s.kind == MB_STEP_RESOLVE_NAMES)) {
		if (s.kind == MB_STEP_RESOLVE_NAMES)
			resolves++;
		else
			sends++;
		/* only forwards resolve names (a reply goes to the sender) */
		if (s.kind == MB_STEP_SEND && s.msg_kind == MB_MSG_REPLY)
			assert_true(resolves <= sends);
		rc = mb_behave_next(&b, &env, &me, &ok_result, &s);
	}
	assert_true(resolves <= sends);
	assert_int_equal(rc, 1);
	assert_int_equal(s.kind, MB_STEP_MOVE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_send_mail),
	    cmocka_unit_test(test_process_inbox_online),
	    cmocka_unit_test(test_process_inbox_cached),
	    cmocka_unit_test(test_browse),
	    cmocka_unit_test(test_request_meeting),
	    cmocka_unit_test(test_failure_and_purity),
	    cmocka_unit_test(test_optional_steps),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
