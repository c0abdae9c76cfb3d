/* test_reserve.c: the store's free-space reserve (src/store/reserve.c)
 * against a real store in a thread.
 *  - A store whose reserve is above any disk's free space (16 TiB): every
 *    operation that adds content fails with MB_ELOWDISK and changes
 *    nothing (a new message's save, a submission, a copy, a contact, an
 *    ICS import of a new message, an edit of a stored message's strings, a
 *    move out of Deleted Items or between other folders: a move leaves a
 *    tombstone); the rest goes on (reads, a read flag, a move into Deleted
 *    Items, a delete, an ICS upload of flags), and the session with it.
 *  - A store with the default reserve, driven over its stats channel as
 *    `mailbench run --fault low-disk` does: {"fault":"low-disk","mb":1}
 *    makes the engine's I/O layer answer 1 MiB free, and a save is refused;
 *    {"fault":"clear"} and the same save passes; the stats stream shows
 *    the refusals (x.store.refused.disk) and the state (limits.disk_low).
 *    With 268 MiB free (12 MiB of room above the reserve, less the
 *    cache's dirty pages: some KiB here) what fits passes and what does
 *    not is refused: a 1.5 MiB message's save passes; a 2.5 MiB draft's
 *    submission to four recipients in four databases (its Sent Items copy
 *    and four: 12.5 MiB) does not and changes nothing, to four in one
 *    database (the body stored once there: 5 MiB) it does and is
 *    delivered; a copy of the 1.5 MiB message ten times (15 MiB)
 *    does not, one copy does (the store has a 64 MiB cache, so the copies
 *    made before the refusal fit in one transaction).
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <jansson.h>

#include "storetest.h"
#include "tests/opbatch.h"

static struct storetest T;

static int setup_low(void **state)
{
	(void)state;
	struct mb_store_opts o;
	mb_store_opts_init(&o);
	o.min_free_mb = 1 << 24;
	return storetest_start_opts(&T, 4, &o);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

/* Messages in folder fid. */
static uint32_t count(struct mb_client *c, uint64_t fid)
{
	struct mb_op o = opbatch_op(MB_OP_OPEN_FOLDER);
	struct mb_op_reply r = {0};
	o.u.open_folder.fid = fid;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	return r.u.folder.count;
}

/* The first message of folder fid (newest first). */
static uint64_t first_mid(struct mb_client *c, uint64_t fid)
{
	static uint32_t cols[] = {MB_PR_MID};
	struct mb_op ops[4];
	struct mb_reply rep;
	memset(ops, 0, sizeof(ops));
	assert_int_equal(mb_client_call(c, ops, opbatch_browse(ops, fid, 9, cols, 1, 0, 1), &rep),
			 0);
	assert_int_equal(rep.ops[3].status, 0);
	assert_true(rep.ops[3].u.rows.nrows >= 1);
	return (uint64_t)rep.ops[3].u.rows.vals[0].v.i;
}

/* A new message saved (or submitted, with last MB_OP_SUBMIT) in fid: the
 * status of the save. */
static int compose(struct mb_client *c, uint64_t fid, uint8_t last)
{
	struct mb_op ops[3];
	struct mb_reply rep;
	struct mb_prop props[3];
	struct mb_bytes to = mb_str(mb_topology_user(T.topo, 2)->name);
	opbatch_mail_props(props, "reserve", "a body", &to, 1);
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, fid, 1, props, 3, last);
	assert_int_equal(mb_client_call(c, ops, 3, &rep), 0);
	return rep.ops[2].status;
}

/* MoveCopyMessages of mids[0..n) from src to dst (flags: MB_MC_F_COPY
 * or 0): its status; *first: the first new id (moved or copied), when
 * given. */
static int move_copy(struct mb_client *c, uint64_t src, uint64_t dst, uint32_t flags, uint32_t n,
		     uint64_t *mids, uint64_t *first)
{
	struct mb_op o = opbatch_op(MB_OP_MOVE_COPY);
	struct mb_op_reply r = {0};
	o.u.move_copy.src_fid = src;
	o.u.move_copy.dst_fid = dst;
	o.u.move_copy.flags = flags;
	o.u.move_copy.n = n;
	o.u.move_copy.mids = mids;
	int rc = storetest_one(c, &o, &r);
	if (!rc && first)
		*first = r.u.moved.mids[0]; /* before the next call reuses the reply */
	return rc;
}

/* Open message mid of fid as handle 2, set props[0..n), save: its status. */
static int edit(struct mb_client *c, uint64_t fid, uint64_t mid, struct mb_prop *props, uint16_t n)
{
	struct mb_op ops[3];
	struct mb_reply rep;
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_OPEN_MESSAGE;
	ops[0].u.open_message.fid = fid;
	ops[0].u.open_message.mid = mid;
	ops[0].u.open_message.handle = 2;
	ops[1].code = MB_OP_SET_PROPS;
	ops[1].u.set_props.handle = 2;
	ops[1].u.set_props.n = n;
	ops[1].u.set_props.props = props;
	ops[2].code = MB_OP_SAVE_CHANGES;
	ops[2].u.save.handle = 2;
	assert_int_equal(mb_client_call(c, ops, 3, &rep), 0);
	assert_int_equal(rep.ops[0].status, 0);
	assert_int_equal(rep.ops[1].status, 0);
	return rep.ops[2].status;
}

static void test_refused_below_the_reserve(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 0, 0);
	assert_non_null(c);
	uint32_t mbx = mb_client_mailbox(c);
	uint64_t inbox = MB_FID(mbx, MB_FID_INBOX), sent = MB_FID(mbx, MB_FID_SENT),
		 deleted = MB_FID(mbx, MB_FID_DELETED), contacts = MB_FID(mbx, MB_FID_CONTACTS);
	uint32_t n_inbox = count(c, inbox), n_sent = count(c, sent),
		 n_contacts = count(c, contacts);
	assert_true(n_inbox >= 2);

	/* new content: refused, nothing changed */
	assert_int_equal(compose(c, inbox, MB_OP_SAVE_CHANGES), MB_ELOWDISK);
	assert_int_equal(compose(c, sent, MB_OP_SUBMIT), MB_ELOWDISK);
	uint64_t mid = first_mid(c, inbox);
	assert_int_equal(move_copy(c, inbox, sent, MB_MC_F_COPY, 1, &mid, NULL), MB_ELOWDISK);
	struct mb_op o;
	struct mb_op_reply r = {0};
	struct mb_prop name = mb_prop_str(MB_PR_DISPLAY_NAME, "Contact");
	o = opbatch_op(MB_OP_CREATE_CONTACT);
	o.u.create_contact.n = 1;
	o.u.create_contact.props = &name;
	assert_int_equal(storetest_one(c, &o, &r), MB_ELOWDISK);
	struct mb_prop subj = mb_prop_str(MB_PR_SUBJECT, "imported");
	struct mb_sync_change ch;
	memset(&ch, 0, sizeof(ch));
	ch.kind = MB_SYNC_CREATE;
	ch.nprops = 1;
	ch.props = &subj;
	o = opbatch_op(MB_OP_SYNC_UPLOAD);
	o.u.sync_up.fid = inbox;
	o.u.sync_up.n = 1;
	o.u.sync_up.changes = &ch;
	assert_int_equal(storetest_one(c, &o, &r), MB_ELOWDISK);
	static char big[8192];
	memset(big, 'b', sizeof(big) - 1);
	struct mb_prop body = mb_prop_str(MB_PR_BODY, big);
	assert_int_equal(edit(c, inbox, mid, &body, 1), MB_ELOWDISK);
	assert_int_equal(count(c, inbox), n_inbox);
	assert_int_equal(count(c, sent), n_sent);
	assert_int_equal(count(c, contacts), n_contacts);

	/* what adds nothing goes on: a read flag, a small edit, an ICS upload
	 * of flags, a move, a delete */
	struct mb_prop flag;
	memset(&flag, 0, sizeof(flag));
	flag.tag = MB_PR_MESSAGE_FLAGS;
	flag.v.i = 0;
	assert_int_equal(edit(c, inbox, mid, &flag, 1), 0);
	struct mb_prop small = mb_prop_str(MB_PR_SUBJECT, "renamed");
	assert_int_equal(edit(c, inbox, mid, &small, 1), MB_ELOWDISK);
	memset(&ch, 0, sizeof(ch));
	ch.kind = MB_SYNC_SET_FLAGS;
	ch.mid = mid;
	ch.flags = MB_MSGFLAG_READ;
	o = opbatch_op(MB_OP_SYNC_UPLOAD);
	o.u.sync_up.fid = inbox;
	o.u.sync_up.n = 1;
	o.u.sync_up.changes = &ch;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	uint32_t n_deleted = count(c, deleted);
	uint64_t moved = 0;
	assert_int_equal(move_copy(c, inbox, sent, 0, 1, &mid, NULL), MB_ELOWDISK);
	assert_int_equal(move_copy(c, inbox, deleted, 0, 1, &mid, &moved), 0);
	assert_int_equal(count(c, deleted), n_deleted + 1);
	assert_int_equal(move_copy(c, deleted, inbox, 0, 1, &moved, NULL), MB_ELOWDISK);
	o = opbatch_op(MB_OP_DELETE_MESSAGES);
	o.u.del.fid = deleted;
	o.u.del.n = 1;
	o.u.del.mids = &moved;
	assert_int_equal(storetest_one(c, &o, &r), 0);
	assert_int_equal(count(c, deleted), n_deleted);
	assert_int_equal(count(c, inbox), n_inbox - 1);
	mb_client_destroy(c);
}

/* ---- the low-disk fault over the stats channel ---- */

static int chan[2] = {-1, -1};

static int setup_chan(void **state)
{
	(void)state;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, chan))
		return -1;
	struct mb_store_opts o;
	mb_store_opts_init(&o);
	o.stats_fd = chan[0];
	o.cache_mb = 64;
	/* 48 users over the scenario's 12 databases: 4 in each */
	return storetest_start_opts(&T, 48, &o);
}

static int teardown_chan(void **state)
{
	storetest_stop(&T);
	close(chan[0]);
	close(chan[1]);
	(void)state;
	return 0;
}

static void control(const char *line)
{
	size_t n = strlen(line);
	assert_int_equal(write(chan[1], line, n), (ssize_t)n);
}

/* The x.store object of the first stats line whose limits.disk_low is
 * `low` (up to 20 s: lines from before a change are passed over); the
 * caller decrefs the root it returns. */
static json_t *store_stats_when(bool low, json_t **root)
{
	static char buf[1 << 20];
	static size_t len;
	for (int waited = 0; waited < 200;) {
		char *nl;
		while ((nl = memchr(buf, '\n', len))) {
			*nl = '\0';
			json_t *j = json_loads(buf, 0, NULL);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len);
			json_t *x = json_object_get(json_object_get(j, "x"), "store");
			if (x && json_is_true(json_object_get(json_object_get(x, "limits"),
							      "disk_low")) == low) {
				*root = j;
				return x;
			}
			json_decref(j);
		}
		struct pollfd pf = {chan[1], POLLIN, 0};
		if (poll(&pf, 1, 100) <= 0) {
			waited++;
			continue;
		}
		ssize_t r = read(chan[1], buf + len, sizeof(buf) - len);
		assert_true(r > 0);
		len += (size_t)r;
	}
	fail_msg("no stats line from the store");
	return NULL;
}

static void test_low_disk_fault(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 1, 0);
	assert_non_null(c);
	uint64_t inbox = MB_FID(mb_client_mailbox(c), MB_FID_INBOX);
	uint32_t n = count(c, inbox);
	assert_int_equal(compose(c, inbox, MB_OP_SAVE_CHANGES), 0);
	control("{\"fault\":\"low-disk\",\"mb\":1}\n");
	/* the control thread reads it within its poll interval */
	int rc = 0;
	for (int i = 0; i < 100 && rc != MB_ELOWDISK; i++) {
		rc = compose(c, inbox, MB_OP_SAVE_CHANGES);
		if (rc != MB_ELOWDISK) {
			assert_int_equal(rc, 0);
			n++;
			usleep(50 * 1000);
		}
	}
	assert_int_equal(rc, MB_ELOWDISK);
	assert_int_equal(count(c, inbox), n + 1);
	json_t *root;
	json_t *x = store_stats_when(true, &root);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(x, "limits"), "disk_free")),
	    1 << 20);
	assert_true(json_integer_value(json_object_get(json_object_get(x, "refused"), "disk")) >=
		    1);
	json_decref(root);

	control("{\"fault\":\"clear\"}\n");
	for (int i = 0; i < 100 && rc != 0; i++) {
		rc = compose(c, inbox, MB_OP_SAVE_CHANGES);
		if (rc) {
			assert_int_equal(rc, MB_ELOWDISK);
			usleep(50 * 1000);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(count(c, inbox), n + 2);
	x = store_stats_when(false, &root);
	json_decref(root);

	/* 12 MiB of room above the reserve: what fits passes */
	control("{\"fault\":\"low-disk\",\"mb\":268}\n");
	x = store_stats_when(false, &root);
	for (int i = 0; i < 30 && json_integer_value(json_object_get(json_object_get(x, "limits"),
								     "disk_free")) != 268 << 20;
	     i++) {
		json_decref(root); /* a line from before the fault */
		x = store_stats_when(false, &root);
	}
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(x, "limits"), "disk_free")),
	    268 << 20);
	json_decref(root);
	static char body[1536 << 10];
	memset(body, 'q', sizeof(body) - 1);
	struct mb_prop props[2] = {mb_prop_str(MB_PR_SUBJECT, "room"),
				   mb_prop_str(MB_PR_BODY, body)};
	struct mb_op ops[3];
	struct mb_reply rep;
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, inbox, 1, props, 2, MB_OP_SAVE_CHANGES);
	assert_int_equal(mb_client_call(c, ops, 3, &rep), 0);
	assert_int_equal(rep.ops[2].status, 0);
	uint64_t big[10];
	for (int i = 0; i < 10; i++)
		big[i] = rep.ops[2].u.saved.mid;
	/* a submission: its Sent Items copy, and its body once per recipient
	 * database; four recipients of a 2.5 MiB draft in four databases
	 * (12.5 MiB) do not fit, four in one database (5 MiB) do and are
	 * delivered (a copy per recipient, 12.5 MiB, would not have fitted) */
	static char body2[2560 << 10];
	memset(body2, 'r', sizeof(body2) - 1);
	struct mb_bytes to[4], one_db[4];
	int db2 = mb_topology_user(T.topo, 2)->db, k = 0;
	for (int i = 0; i < 4; i++)
		to[i] = mb_str(mb_topology_user(T.topo, i)->name);
	for (int i = 0; i < 4; i++)
		assert_int_equal(mb_topology_user(T.topo, i)->db, i + 1);
	for (int i = 2; i < mb_topology_user_count(T.topo) && k < 4; i++)
		if (mb_topology_user(T.topo, i)->db == db2)
			one_db[k++] = mb_str(mb_topology_user(T.topo, i)->name);
	assert_int_equal(k, 4);
	uint64_t sent = MB_FID(mb_client_mailbox(c), MB_FID_SENT);
	uint32_t n_sent = count(c, sent);
	struct mb_client *c2 = storetest_client(&T, 2, 0);
	assert_non_null(c2);
	uint64_t inbox2 = MB_FID(mb_client_mailbox(c2), MB_FID_INBOX);
	uint32_t n_inbox2 = count(c2, inbox2);
	struct mb_prop sp[3];
	opbatch_mail_props(sp, "room", body2, to, 4);
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, sent, 4, sp, 3, MB_OP_SUBMIT);
	assert_int_equal(mb_client_call(c, ops, 3, &rep), 0);
	assert_int_equal(rep.ops[2].status, MB_ELOWDISK);
	assert_int_equal(count(c, sent), n_sent);
	assert_int_equal(count(c2, inbox2), n_inbox2);
	opbatch_mail_props(sp, "room", body2, one_db, 4);
	memset(ops, 0, sizeof(ops));
	opbatch_compose(ops, sent, 5, sp, 3, MB_OP_SUBMIT);
	assert_int_equal(mb_client_call(c, ops, 3, &rep), 0);
	assert_int_equal(rep.ops[2].status, 0);
	assert_int_equal(count(c, sent), ++n_sent);
	assert_int_equal(count(c2, inbox2), n_inbox2 + 1);
	mb_client_destroy(c2);
	assert_int_equal(move_copy(c, inbox, sent, MB_MC_F_COPY, 10, big, NULL), MB_ELOWDISK);
	assert_int_equal(count(c, sent), n_sent);
	assert_int_equal(move_copy(c, inbox, sent, MB_MC_F_COPY, 1, big, NULL), 0);
	assert_int_equal(count(c, sent), n_sent + 1);
	control("{\"fault\":\"clear\"}\n");
	mb_client_destroy(c);
}

int main(void)
{
	const struct CMUnitTest low[] = {
	    cmocka_unit_test(test_refused_below_the_reserve),
	};
	const struct CMUnitTest chan_tests[] = {
	    cmocka_unit_test(test_low_disk_fault),
	};
	int f = cmocka_run_group_tests_name("reserve", low, setup_low, teardown);
	f += cmocka_run_group_tests_name("reserve-fault", chan_tests, setup_chan, teardown_chan);
	return f;
}
