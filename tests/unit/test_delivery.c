/* test_delivery.c: SubmitMessage end to end against a real store (in a
 * thread, real databases): delivery to users and distribution lists
 * (expanded, deduplicated), one durable transaction per database, the
 * local-delivery counters (once per message per database, once per
 * recipient), the address properties of each recipient's copy, the Sent
 * Items copy (marked sent by the submit's last
 * phase, or deleted by it under PidTagDeleteAfterSubmit), notifications,
 * and refusal of unknown recipients without any delivery. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/scenario.h"
#include "storetest.h"
#include "tests/opbatch.h"

static struct storetest T;

static int setup(void **state)
{
	(void)state;
	return storetest_start(&T, 24);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

/* Submit a new message to names[0..n), with PidTagDeleteAfterSubmit set
 * when das; the Submit's reply in *out. */
static int submit_das(struct mb_client *c, struct mb_bytes *names, uint16_t n, const char *subject,
		      bool das, struct mb_op_reply *out)
{
	struct mb_op ops[3];
	struct mb_prop props[4];
	struct mb_reply rep;
	opbatch_mail_props(props, subject, "Delivery test body, long enough to be a message.",
			   names, n);
	props[3] = mb_prop_i64(MB_PR_DELETE_AFTER_SUBMIT, 1);
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, MB_FID(mb_client_mailbox(c), MB_FID_SENT), 7, props, das ? 4 : 3,
			MB_OP_SUBMIT);
	int rc = mb_client_call(c, ops, 3, &rep);
	if (rc)
		return rc;
	assert_int_equal(rep.ops[0].status, 0);
	assert_int_equal(rep.ops[1].status, 0);
	*out = rep.ops[2];
	return rep.ops[2].status;
}

static int submit(struct mb_client *c, struct mb_bytes *names, uint16_t n, const char *subject,
		  struct mb_op_reply *out)
{
	return submit_das(c, names, n, subject, false, out);
}

static uint32_t folder_count(struct mb_client *c, uint32_t local)
{
	struct mb_op op;
	struct mb_op_reply r;
	memset(&op, 0, sizeof(op));
	memset(&r, 0, sizeof(r));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = MB_FID(mb_client_mailbox(c), local);
	assert_int_equal(storetest_one(c, &op, &r), 0);
	return r.u.folder.count;
}

/* OpenMessage of message mid in folder fid, as handle h; its reply in
 * *out, its status returned. */
static int open_msg_rc(struct mb_client *c, uint64_t fid, uint64_t mid, uint32_t h,
		       struct mb_op_reply *out)
{
	struct mb_op op;
	memset(&op, 0, sizeof(op));
	memset(out, 0, sizeof(*out));
	op.code = MB_OP_OPEN_MESSAGE;
	op.u.open_message.fid = fid;
	op.u.open_message.mid = mid;
	op.u.open_message.handle = h;
	return storetest_one(c, &op, out);
}

/* The same, which must succeed. */
static void open_msg(struct mb_client *c, uint64_t fid, uint64_t mid, uint32_t h,
		     struct mb_op_reply *out)
{
	assert_int_equal(open_msg_rc(c, fid, mid, h, out), 0);
}

static void test_users_and_lists(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 0, MB_LOGON_F_LZ77);
	assert_non_null(a);
	/* recipients: user 2, user 14 (same database as user 2), a list, and
	 * user 2 again through the list or by name: delivered once each */
	const struct mb_topo_list *l = mb_topology_list(T.topo, 3);
	struct mb_bytes names[4] = {mb_str(mb_topology_user(T.topo, 1)->name),
				    mb_str(mb_topology_user(T.topo, 13)->name), mb_str(l->name),
				    mb_str(mb_topology_user(T.topo, 1)->name)};
	bool want[64] = {false};
	int nwant = 0, dbs[13] = {0}, ndbs = 0;
	int idx[3] = {1, 13, -1};
	for (int i = 0; i < 2; i++)
		want[idx[i]] = true;
	for (int m = 0; m < l->nmembers; m++)
		want[l->members[m]] = true;
	for (int i = 0; i < 24; i++) {
		if (!want[i])
			continue;
		nwant++;
		int d = mb_topology_user(T.topo, i)->db;
		if (!dbs[d]++)
			ndbs++;
	}
	/* the recipients that are logged on with notifications */
	struct mb_client *b = storetest_client(&T, 1, MB_LOGON_F_NOTIFY);
	assert_non_null(b);
	uint32_t b_inbox = folder_count(b, MB_FID_INBOX);
	uint32_t a_sent = folder_count(a, MB_FID_SENT);

	uint64_t db0, rc0, db1, rc1;
	mb_store_delivery_counts(T.st, &db0, &rc0);
	struct mb_op_reply r;
	assert_int_equal(submit(a, names, 4, "to users and a list", &r), 0);
	mb_store_delivery_counts(T.st, &db1, &rc1);
	assert_int_equal(r.u.submit.n, nwant);
	assert_int_equal(r.u.submit.databases, ndbs);
	/* counted when durable, before the reply: exact */
	assert_int_equal(db1 - db0, (uint64_t)ndbs);
	assert_int_equal(rc1 - rc0, (uint64_t)nwant);
	for (uint32_t i = 0; i < r.u.submit.n; i++) {
		uint32_t mbx = r.u.submit.dl[i].mailbox;
		assert_true(mbx >= 1 && mbx <= 24 && want[mbx - 1]);
		for (uint32_t j = 0; j < i; j++)
			assert_int_not_equal(r.u.submit.dl[j].mailbox, mbx);
	}
	/* each recipient can open its copy in its own Inbox, unread */
	struct mb_op_reply copies[64];
	memcpy(copies, &r, sizeof(r));
	struct mb_delivery dl[64];
	uint32_t ndl = r.u.submit.n;
	memcpy(dl, r.u.submit.dl, ndl * sizeof(dl[0]));
	for (uint32_t i = 0; i < ndl; i++) {
		struct mb_client *c = storetest_client(&T, (int)dl[i].mailbox - 1, 0);
		assert_non_null(c);
		open_msg(c, MB_FID(dl[i].mailbox, MB_FID_INBOX), dl[i].mid, 1, &copies[0]);
		const struct mb_prop *subj =
		    mb_props_find(copies[0].u.props.props, copies[0].u.props.n, MB_PR_SUBJECT);
		const struct mb_prop *flags = mb_props_find(
		    copies[0].u.props.props, copies[0].u.props.n, MB_PR_MESSAGE_FLAGS);
		const struct mb_prop *from =
		    mb_props_find(copies[0].u.props.props, copies[0].u.props.n, MB_PR_SENDER_NAME);
		assert_non_null(subj);
		assert_true(mb_bytes_eq_str(subj->v.b, "to users and a list"));
		assert_int_equal(flags->v.i & MB_MSGFLAG_READ, 0);
		assert_true(mb_bytes_eq_str(from->v.b, mb_topology_user(T.topo, 0)->name));
		/* MAPI's incoming-message address properties: the sender's
		 * search key, the recipient's own name and entry id, and
		 * "to me" only for a recipient named (user 2 and user 14; the
		 * list's other members were not) */
		uint32_t tags[4] = {MB_PR_SENDER_SEARCH_KEY, MB_PR_RECEIVED_BY_NAME,
				    MB_PR_RECEIVED_BY_ENTRYID, MB_PR_MESSAGE_TO_ME};
		struct mb_op gp = opbatch_get_props(1, tags, 4);
		struct mb_op_reply pr;
		memset(&pr, 0, sizeof(pr));
		assert_int_equal(storetest_one(c, &gp, &pr), 0);
		assert_int_equal(pr.u.props.n, 4);
		char want_key[160];
		snprintf(want_key, sizeof(want_key),
			 "EX:/O=MAILBENCH/OU=FIRST ADMINISTRATIVE GROUP/CN=RECIPIENTS/CN=%s",
			 mb_topology_user(T.topo, 0)->name);
		for (char *q = want_key; *q; q++)
			*q = (char)toupper((unsigned char)*q);
		assert_int_equal(pr.u.props.props[0].v.b.len, strlen(want_key) + 1);
		assert_memory_equal(pr.u.props.props[0].v.b.p, want_key, strlen(want_key) + 1);
		const char *me = mb_topology_user(T.topo, (int)dl[i].mailbox - 1)->name;
		assert_true(mb_bytes_eq_str(pr.u.props.props[1].v.b, me));
		const struct mb_bytes eid = pr.u.props.props[2].v.b;
		assert_int_equal(eid.len, 28 +
					      strlen("/o=mailbench/ou=First Administrative "
						     "Group/cn=Recipients/cn=") +
					      strlen(me) + 1);
		assert_int_equal(eid.p[20], 1); /* version 1, type 0: a local mail user */
		assert_int_equal(eid.p[24], 0);
		bool named = dl[i].mailbox == 2 || dl[i].mailbox == 14;
		assert_int_equal(pr.u.props.props[3].v.i != 0, named);
		mb_client_destroy(c);
	}
	/* notification to the logged-on recipient, Inbox grew by one */
	struct mb_event ev;
	assert_int_equal(mb_client_next_event(b, 5000, &ev), 0);
	assert_int_equal(ev.type, MB_EVENT_NEW_MAIL);
	assert_true(ev.fid == MB_FID(mb_client_mailbox(b), MB_FID_INBOX));
	assert_int_equal(folder_count(b, MB_FID_INBOX), b_inbox + 1);
	/* the sender keeps a copy in Sent Items, marked sent once delivered
	 * (the submit's last phase: no longer submitted nor unsent) */
	assert_int_equal(folder_count(a, MB_FID_SENT), a_sent + 1);
	{
		struct mb_op_reply sr;
		open_msg(a, MB_FID(mb_client_mailbox(a), MB_FID_SENT), r.u.submit.mid, 2, &sr);
		const struct mb_prop *fl =
		    mb_props_find(sr.u.props.props, sr.u.props.n, MB_PR_MESSAGE_FLAGS);
		assert_non_null(fl);
		assert_int_equal(fl->v.i, MB_MSGFLAG_READ);
	}
	mb_client_destroy(b);
	mb_client_destroy(a);
}

/* PidTagDeleteAfterSubmit (a cached-mode client's first upload, against a
 * server below version 8): delivered as any submit, and no copy left in
 * Sent Items once sent; the property itself is not delivered. */
static void test_delete_after_submit(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 6, 0);
	struct mb_client *b = storetest_client(&T, 7, 0);
	assert_non_null(a);
	assert_non_null(b);
	struct mb_bytes name = mb_str(mb_topology_user(T.topo, 7)->name);
	uint32_t sent = folder_count(a, MB_FID_SENT);
	uint32_t inbox = folder_count(b, MB_FID_INBOX);
	uint64_t db0, rc0, db1, rc1;
	mb_store_delivery_counts(T.st, &db0, &rc0);
	struct mb_op_reply r;
	assert_int_equal(submit_das(a, &name, 1, "deleted after submit", true, &r), 0);
	mb_store_delivery_counts(T.st, &db1, &rc1);
	assert_int_equal(r.u.submit.n, 1);
	assert_int_equal(rc1 - rc0, 1);
	assert_int_equal(folder_count(a, MB_FID_SENT), sent);
	assert_int_equal(folder_count(b, MB_FID_INBOX), inbox + 1);
	struct mb_op_reply o;
	assert_int_equal(
	    open_msg_rc(a, MB_FID(mb_client_mailbox(a), MB_FID_SENT), r.u.submit.mid, 1, &o),
	    MB_ENOTFOUND);
	struct mb_op_reply c;
	uint32_t mbx = r.u.submit.dl[0].mailbox;
	open_msg(b, MB_FID(mbx, MB_FID_INBOX), r.u.submit.dl[0].mid, 2, &c);
	assert_null(mb_props_find(c.u.props.props, c.u.props.n, MB_PR_DELETE_AFTER_SUBMIT));
	assert_non_null(mb_props_find(c.u.props.props, c.u.props.n, MB_PR_SUBJECT));
	/* without it, the sender keeps its copy */
	assert_int_equal(submit(a, &name, 1, "kept", &r), 0);
	assert_int_equal(folder_count(a, MB_FID_SENT), sent + 1);
	mb_client_destroy(a);
	mb_client_destroy(b);
}

static void test_unknown_recipient(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 2, 0);
	assert_non_null(a);
	struct mb_bytes names[2] = {mb_str(mb_topology_user(T.topo, 3)->name),
				    mb_str("nobody-here")};
	uint64_t db0, rc0, db1, rc1;
	uint32_t sent = folder_count(a, MB_FID_SENT);
	mb_store_delivery_counts(T.st, &db0, &rc0);
	struct mb_op_reply r;
	assert_int_equal(submit(a, names, 2, "bad recipient", &r), MB_ENOTFOUND);
	mb_store_delivery_counts(T.st, &db1, &rc1);
	assert_int_equal(db1, db0);
	assert_int_equal(rc1, rc0);
	assert_int_equal(folder_count(a, MB_FID_SENT), sent);
	/* no recipients at all */
	assert_int_equal(submit(a, names, 0, "nobody", &r), MB_EINVAL);
	mb_client_destroy(a);
}

static void test_many_sequential(void **state)
{
	(void)state;
	/* every acknowledged delivery is there, under the id the reply gave */
	struct mb_client *a = storetest_client(&T, 4, MB_LOGON_F_LZ77);
	struct mb_client *b = storetest_client(&T, 5, 0);
	assert_non_null(a);
	assert_non_null(b);
	struct mb_bytes name = mb_str(mb_topology_user(T.topo, 5)->name);
	uint64_t mids[20];
	for (int i = 0; i < 20; i++) {
		struct mb_op_reply r;
		assert_int_equal(submit(a, &name, 1, "sequential", &r), 0);
		assert_int_equal(r.u.submit.n, 1);
		mids[i] = r.u.submit.dl[0].mid;
		if (i)
			assert_true(mids[i] > mids[i - 1]);
	}
	struct mb_op op;
	struct mb_op_reply r;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_DELETE_MESSAGES;
	op.u.del.fid = MB_FID(mb_client_mailbox(b), MB_FID_INBOX);
	op.u.del.n = 20;
	op.u.del.mids = mids;
	assert_int_equal(storetest_one(b, &op, &r), 0);
	assert_int_equal(r.u.count.n, 20);
	mb_client_destroy(a);
	mb_client_destroy(b);
}

/* A message whose recipients' copies would hold more properties than a
 * stored row can (each copy has the store's address properties more than
 * the draft) is refused before anything is written: no Sent Items copy,
 * no delivery. */
static void test_too_many_props(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 8, 0);
	assert_non_null(a);
	struct mb_bytes name = mb_str(mb_topology_user(T.topo, 9)->name);
	struct mb_prop props[MB_PROTO_MAX_PROPS];
	opbatch_mail_props(props, "many properties", "body", &name, 1);
	for (uint16_t i = 3; i < 50; i++)
		props[i] = mb_prop_i64(MB_PTAG((uint16_t)(0x6900 + i), MB_PT_I32), i);
	uint32_t sent = folder_count(a, MB_FID_SENT);
	uint64_t db0, rc0, db1, rc1;
	mb_store_delivery_counts(T.st, &db0, &rc0);
	struct mb_op ops[3];
	struct mb_reply rep;
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, MB_FID(mb_client_mailbox(a), MB_FID_SENT), 7, props, 50, MB_OP_SUBMIT);
	assert_int_equal(mb_client_call(a, ops, 3, &rep), 0);
	assert_int_equal(rep.ops[1].status, 0);
	assert_int_equal(rep.ops[2].status, MB_ETOOBIG);
	mb_store_delivery_counts(T.st, &db1, &rc1);
	assert_int_equal(rc1 - rc0, 0);
	assert_int_equal(folder_count(a, MB_FID_SENT), sent);
	mb_client_destroy(a);
}

/* The generated lists: with home_db_pct, that share of a list's members
 * (about) are on the list's home database (lists take the databases in
 * turn); at 0 they spread over all databases; sizes keep the published
 * mean either way, and generation is deterministic. */
static double home_share(const struct mb_scenario *sc, int users, double *mean)
{
	struct mb_topology *t = NULL;
	assert_int_equal(mb_store_gen_topology(sc, users, 0.01, NULL, 0, 0, &t), 0);
	int nl = mb_topology_list_count(t);
	assert_int_equal(nl, sc->dl_per_site);
	long home = 0, all = 0;
	for (int i = 0; i < nl; i++) {
		const struct mb_topo_list *l = mb_topology_list(t, i);
		int hdb = i % sc->databases + 1;
		for (int k = 0; k < l->nmembers; k++) {
			const struct mb_topo_user *u = mb_topology_user(t, (int)l->members[k]);
			assert_non_null(u);
			home += u->db == hdb;
			all++;
			for (int j = 0; j < k; j++)
				assert_true(l->members[j] != l->members[k]);
		}
	}
	*mean = (double)all / nl;
	mb_topology_destroy(t);
	return (double)home / (double)all;
}

static void test_lists_home_database(void **state)
{
	(void)state;
	struct mb_scenario sc;
	struct mb_cfg_error err;
	assert_int_equal(mb_scenario_load("online", &sc, &err), 0);
	assert_true(sc.dl_home_db_pct > 0);
	double mean, mean2;
	double s = home_share(&sc, 1000, &mean);
	assert_true(fabs(s - home_share(&sc, 1000, &mean2)) < 1e-12);
	/* 90% drawn at home, plus the 1 in 12 of the others that land there */
	double want = sc.dl_home_db_pct / 100.0 + (1 - sc.dl_home_db_pct / 100.0) / sc.databases;
	assert_true(fabs(s - want) < 0.04);
	assert_true(fabs(mean - sc.dl_avg_members) < 1e-9);
	sc.dl_home_db_pct = 0;
	s = home_share(&sc, 1000, &mean);
	assert_true(fabs(s - 1.0 / sc.databases) < 0.04);
	/* a home database smaller than a list: the rest from all users */
	sc.dl_home_db_pct = 100;
	s = home_share(&sc, 120, &mean);
	assert_true(s < 1.0 && s > 0.5);
	assert_true(fabs(mean - sc.dl_avg_members) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_users_and_lists),	cmocka_unit_test(test_delete_after_submit),
	    cmocka_unit_test(test_unknown_recipient),	cmocka_unit_test(test_many_sequential),
	    cmocka_unit_test(test_lists_home_database), cmocka_unit_test(test_too_many_props),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
