/* test_schema.c: the store's tables over the real storage engine
 * (src/store/schema.c): mailbox creation with the well-known folders, user
 * folders, messages newest-first with paging, folder counters, change
 * numbers and tombstones for incremental sync (update, flags, delete, move,
 * copy), the calendar index, the existence lookup of the ack-log check,
 * single-instance delivery (content stored once, shared, released with its
 * last row), and that everything survives closing and reopening the
 * storage group. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "db/db.h"
#include "proto/proto.h"
#include "store/schema.h"

struct fx {
	char dir[256];
	struct mb_sg *sg;
	struct mb_db *db;
	struct mb_schema *s;
	struct mb_buf *tmp;
};

static void fx_open(struct fx *f)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = f->dir;
	o.create = true;
	o.cache_mb = 16;
	assert_int_equal(mb_sg_open(&o, &f->sg), 0);
	assert_int_equal(mb_db_open(f->sg, "db01.mdb", 8192, MB_DB_CREATE, &f->db), 0);
	assert_int_equal(mb_schema_open(f->db, true, &f->s), 0);
}

static void fx_close(struct fx *f)
{
	mb_schema_close(f->s);
	assert_int_equal(mb_db_close(f->db), 0);
	assert_int_equal(mb_sg_close(f->sg), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *t = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/mb-schema.XXXXXX", t ? t : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	fx_open(f);
	mb_buf_create(0, &f->tmp);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[300];
	fx_close(f);
	mb_buf_destroy(f->tmp);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static uint64_t add(struct fx *f, uint32_t mbx, uint32_t folder, int64_t time, uint32_t flags,
		    const char *subject, uint64_t *cn)
{
	struct mb_prop p = mb_prop_str(MB_PR_SUBJECT, subject);
	struct mb_msg_in in;
	uint64_t mid;
	memset(&in, 0, sizeof(in));
	in.time = time;
	in.flags = flags;
	in.props = &p;
	in.nprops = 1;
	in.body = "body text";
	in.body_len = 9;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_add(f->s, mbx, folder, &in, f->tmp, &mid, cn), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	return mid;
}

static int collect(void *arg, uint64_t mid)
{
	uint64_t *a = arg;
	a[++a[0]] = mid;
	return 0;
}

struct chg {
	int n;
	uint64_t cn[64], mid[64];
	bool del[64];
};
static int collect_chg(void *arg, uint64_t cn, uint64_t mid, bool deleted)
{
	struct chg *c = arg;
	c->cn[c->n] = cn;
	c->mid[c->n] = mid;
	c->del[c->n] = deleted;
	c->n++;
	return 0;
}

static void test_mailbox_and_folders(void **state)
{
	struct fx *f = *state;
	struct mb_folder_rec fr;
	uint32_t num;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_mailbox_create(f->s, 1, "user0001"), 0);
	assert_int_equal(mb_schema_mailbox_create(f->s, 1, "user0001"), MB_EEXIST);
	assert_int_equal(mb_schema_folder_create(f->s, 1, MB_FID_ROOT, "Projects", &num), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(num, MB_FID_FIRST_USER);
	assert_true(mb_schema_mailbox_exists(f->s, 1));
	assert_false(mb_schema_mailbox_exists(f->s, 2));
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &fr), 0);
	assert_string_equal(fr.name, "Inbox");
	assert_int_equal(fr.parent, MB_FID_ROOT);
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_ROOT, &fr), 0);
	assert_int_equal(fr.subfolders, 6);
	assert_int_equal(mb_schema_folder_get(f->s, 1, 99, &fr), MB_ENOTFOUND);
}

static void test_messages_order_and_paging(void **state)
{
	struct fx *f = *state;
	uint64_t m[10];
	for (int i = 0; i < 10; i++)
		m[i] = add(f, 1, MB_FID_INBOX, 1000 + (i * 37) % 10 * 100,
			   i % 2 ? MB_MSGFLAG_READ : 0, "hello", NULL);
	struct mb_folder_rec fr;
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &fr), 0);
	assert_int_equal(fr.count, 10);
	assert_int_equal(fr.unread, 5);
	/* pages of 3, newest first, no duplicates, all covered */
	struct mb_scan_pos pos;
	memset(&pos, 0, sizeof(pos));
	uint64_t got[64] = {0};
	bool more = true;
	int pages = 0;
	while (more) {
		assert_int_equal(
		    mb_schema_folder_scan(f->s, 1, MB_FID_INBOX, &pos, 3, collect, got, &more), 0);
		pages++;
	}
	assert_int_equal(got[0], 10);
	assert_int_equal(pages, 4);
	int64_t prev = INT64_MAX;
	for (int i = 1; i <= 10; i++) {
		struct mb_val v = MB_VAL_INIT;
		struct mb_msg_rec rec;
		assert_int_equal(mb_schema_msg_get(f->s, 1, got[i], &v, &rec), 0);
		assert_true(rec.time <= prev);
		prev = rec.time;
		mb_val_free(&v);
	}
	bool ex;
	assert_int_equal(mb_schema_msg_exists(f->s, 1, m[3], &ex), 0);
	assert_true(ex);
	assert_int_equal(mb_schema_msg_exists(f->s, 1, 9999, &ex), 0);
	assert_false(ex);
	/* the message is in mailbox 1, not in mailbox 2 */
	assert_int_equal(mb_schema_msg_exists(f->s, 2, m[3], &ex), 0);
	assert_false(ex);
	struct mb_val body = MB_VAL_INIT;
	assert_int_equal(mb_schema_msg_body(f->s, 1, m[0], &body), 0);
	assert_int_equal(body.len, 9);
	assert_memory_equal(body.data, "body text", 9);
	mb_val_free(&body);
}

static void test_changes_and_tombstones(void **state)
{
	struct fx *f = *state;
	struct mb_folder_rec fr;
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &fr), 0);
	uint64_t wm = fr.cn;
	uint64_t cn1;
	uint64_t a = add(f, 1, MB_FID_INBOX, 5000, 0, "a", &cn1);
	uint64_t b = add(f, 1, MB_FID_INBOX, 5001, 0, "b", NULL);
	assert_true(cn1 > wm);
	struct chg c = {0};
	bool more;
	assert_int_equal(
	    mb_schema_folder_changes(f->s, 1, MB_FID_INBOX, wm, 100, collect_chg, &c, &more), 0);
	assert_int_equal(c.n, 2);
	assert_true(c.mid[0] == a && c.mid[1] == b && !c.del[0]);
	wm = c.cn[1];
	/* flags: one change, the unread count follows */
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &fr), 0);
	uint32_t unread = fr.unread;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_set_flags(f->s, 1, a, MB_MSGFLAG_READ, NULL), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &fr), 0);
	assert_int_equal(fr.unread, unread - 1);
	/* delete b; move a to Deleted Items: tombstones in the Inbox */
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_delete(f->s, 1, b), 0);
	uint64_t moved;
	assert_int_equal(mb_schema_msg_move(f->s, 1, a, MB_FID_DELETED, false, f->tmp, &moved), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_true(moved == a);
	memset(&c, 0, sizeof(c));
	assert_int_equal(
	    mb_schema_folder_changes(f->s, 1, MB_FID_INBOX, wm, 100, collect_chg, &c, &more), 0);
	assert_int_equal(c.n, 2);
	assert_true(c.del[0] && c.del[1]);
	assert_true((c.mid[0] == b && c.mid[1] == a));
	bool ex;
	assert_int_equal(mb_schema_msg_exists(f->s, 1, b, &ex), 0);
	assert_false(ex);
	/* a lives on in Deleted Items, with a live change there */
	struct mb_val v = MB_VAL_INIT;
	struct mb_msg_rec rec;
	assert_int_equal(mb_schema_msg_get(f->s, 1, a, &v, &rec), 0);
	assert_int_equal(rec.folder, MB_FID_DELETED);
	memset(&c, 0, sizeof(c));
	assert_int_equal(
	    mb_schema_folder_changes(f->s, 1, MB_FID_DELETED, 0, 100, collect_chg, &c, &more), 0);
	assert_int_equal(c.n, 1);
	assert_true(c.mid[0] == a && !c.del[0]);
	/* copy: a new id, the body copied */
	uint64_t copy;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_move(f->s, 1, a, MB_FID_INBOX, true, f->tmp, &copy), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_true(copy != a);
	assert_int_equal(mb_schema_msg_body(f->s, 1, copy, &v), 0);
	assert_int_equal(v.len, 9);
	/* paging of changes */
	memset(&c, 0, sizeof(c));
	assert_int_equal(
	    mb_schema_folder_changes(f->s, 1, MB_FID_INBOX, 0, 3, collect_chg, &c, &more), 0);
	assert_int_equal(c.n, 3);
	assert_true(more);
	mb_val_free(&v);
}

/* An update that does not change the body (a read flag) keeps the stored
 * body and counts it in PR_MESSAGE_SIZE; one with a body replaces it. */
static void test_update_keeps_body(void **state)
{
	struct fx *f = *state;
	uint64_t mid = add(f, 1, MB_FID_INBOX, 7000, 0, "kept", NULL);
	struct mb_val v = MB_VAL_INIT;
	struct mb_msg_rec before, after;
	assert_int_equal(mb_schema_msg_get(f->s, 1, mid, &v, &before), 0);
	struct mb_prop p = mb_prop_str(MB_PR_SUBJECT, "kept");
	struct mb_msg_in in;
	memset(&in, 0, sizeof(in));
	in.time = 7000;
	in.flags = MB_MSGFLAG_READ;
	in.props = &p;
	in.nprops = 1;
	in.keep_body = true;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_update(f->s, 1, mid, &in, f->tmp, NULL), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(mb_schema_msg_get(f->s, 1, mid, &v, &after), 0);
	assert_int_equal(after.flags, MB_MSGFLAG_READ);
	assert_int_equal(after.body_len, 9);
	assert_int_equal(after.size, before.size);
	assert_int_equal(mb_schema_msg_body(f->s, 1, mid, &v), 0);
	assert_int_equal(v.len, 9);
	assert_memory_equal(v.data, "body text", 9);
	/* with a body: replaced */
	in.keep_body = false;
	in.body = "new";
	in.body_len = 3;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_update(f->s, 1, mid, &in, f->tmp, NULL), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(mb_schema_msg_get(f->s, 1, mid, &v, &after), 0);
	assert_int_equal(after.body_len, 3);
	assert_int_equal(after.size, before.size - 6);
	assert_int_equal(mb_schema_msg_body(f->s, 1, mid, &v), 0);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.data, "new", 3);
	mb_val_free(&v);
}

/* The number of keys of a named tree of the database. */
static int tree_keys(struct fx *f, const char *name)
{
	struct mb_tree *t;
	struct mb_cursor *c;
	int n = 0;
	assert_int_equal(mb_tree_open(f->db, name, 0, &t), 0);
	assert_int_equal(mb_cursor_open(t, &c), 0);
	for (int rc = mb_cursor_first(c); rc == 0; rc = mb_cursor_next(c))
		n++;
	mb_cursor_close(c);
	mb_tree_close(t);
	return n;
}

static void read_body(struct fx *f, uint32_t mbx, uint64_t mid, const char *want)
{
	struct mb_val v = MB_VAL_INIT;
	assert_int_equal(mb_schema_msg_body(f->s, mbx, mid, &v), 0);
	assert_int_equal(v.len, strlen(want));
	assert_memory_equal(v.data, want, v.len);
	mb_val_free(&v);
}

static void read_attach(struct fx *f, uint32_t mbx, uint64_t mid, const char *want)
{
	struct mb_val v = MB_VAL_INIT;
	struct mb_attach_rec a;
	assert_int_equal(mb_schema_attach_get(f->s, mbx, mid, 1, &a), 0);
	assert_int_equal(a.size, strlen(want));
	assert_string_equal(a.name, "report.doc");
	assert_int_equal(mb_schema_attach_data(f->s, mbx, mid, 1, &v), 0);
	assert_int_equal(v.len, strlen(want));
	assert_memory_equal(v.data, want, v.len);
	mb_val_free(&v);
}

static void count_problem(void *arg, const char *msg)
{
	(void)msg;
	(*(int *)arg)++;
}

/* The content check's problems (each one also passed to its callback). */
static uint64_t content_problems(struct fx *f, struct mb_content_report *r)
{
	int seen = 0;
	memset(r, 0, sizeof(*r));
	assert_int_equal(mb_schema_check_content(f->s, "db01", count_problem, &seen, r), 0);
	assert_int_equal((uint64_t)seen, r->problems);
	return r->problems;
}

/* Overwrite (or delete, val NULL) the entry of a named tree under key. */
static void tree_poke(struct fx *f, const char *name, const uint8_t *key, size_t kl,
		      const void *val, size_t vl)
{
	struct mb_tree *t;
	assert_int_equal(mb_tree_open(f->db, name, 0, &t), 0);
	assert_int_equal(mb_db_begin(f->db), 0);
	if (val)
		assert_int_equal(mb_tree_put(t, key, kl, val, vl, 0), 0);
	else
		assert_int_equal(mb_tree_del(t, key, kl), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	mb_tree_close(t);
}

/* Single-instance delivery: one message to three mailboxes of a database
 * stores its body and attachment once; each row reads them; a copy shares
 * them too; a row given a new body takes its own copy of the attachment;
 * the content goes with the last row that shares it, and survives a
 * reopen while any row is left. */
static void test_single_instance(void **state)
{
	struct fx *f = *state;
	const uint32_t mbx[3] = {11, 12, 13};
	uint64_t mid[3], cmid;
	assert_int_equal(mb_db_begin(f->db), 0);
	for (int i = 0; i < 3; i++) {
		char name[16];
		snprintf(name, sizeof(name), "user%04u", mbx[i]);
		assert_int_equal(mb_schema_mailbox_create(f->s, mbx[i], name), 0);
	}
	assert_int_equal(mb_db_commit(f->db), 0);
	int bodies0 = tree_keys(f, "bodies"), data0 = tree_keys(f, "attach_data");

	struct mb_prop p = mb_prop_str(MB_PR_SUBJECT, "to three");
	struct mb_attach_in att = {.kind = 1,
				   .name = mb_str("report.doc"),
				   .data = (const uint8_t *)"attached bytes",
				   .len = 14};
	struct mb_msg_in in;
	memset(&in, 0, sizeof(in));
	in.time = 9000;
	in.props = &p;
	in.nprops = 1;
	in.body = "shared body";
	in.body_len = 11;
	in.attach = &att;
	in.nattach = 1;
	struct mb_schema_content c = {0};
	assert_int_equal(mb_db_begin(f->db), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(mb_schema_msg_add_shared(f->s, mbx[i], MB_FID_INBOX, &in, &c,
							  f->tmp, &mid[i], NULL),
				 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_true(c.stored);
	assert_int_equal(tree_keys(f, "bodies"), bodies0 + 1);
	assert_int_equal(tree_keys(f, "attach_data"), data0 + 1);
	assert_int_equal(tree_keys(f, "instances"), 1);
	/* the content check agrees, and finds a wrong count and an orphan */
	struct mb_content_report cr;
	assert_int_equal(content_problems(f, &cr), 0);
	assert_int_equal(cr.shared_rows, 3);
	assert_int_equal(cr.contents, 1);
	uint8_t ck[12], four[4] = {4, 0, 0, 0}, three[4] = {3, 0, 0, 0};
	for (int i = 0; i < 4; i++)
		ck[i] = (uint8_t)((c.mbx | 0x80000000u) >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		ck[4 + i] = (uint8_t)(c.mid >> (56 - 8 * i));
	tree_poke(f, "instances", ck, 12, four, 4);
	assert_int_equal(content_problems(f, &cr), 1);
	tree_poke(f, "instances", ck, 12, three, 4);
	uint8_t orphan[12];
	memcpy(orphan, ck, 12);
	orphan[11] ^= 0x40;
	tree_poke(f, "bodies", orphan, 12, "lost", 4);
	assert_int_equal(content_problems(f, &cr), 1);
	tree_poke(f, "bodies", orphan, 12, NULL, 0);
	assert_int_equal(content_problems(f, &cr), 0);
	/* the shared body gone: the check finds it and a read fails (never an
	 * empty body); put back, both are sound again */
	tree_poke(f, "bodies", ck, 12, NULL, 0);
	assert_int_equal(content_problems(f, &cr), 3);
	struct mb_val gone = MB_VAL_INIT;
	assert_int_equal(mb_schema_msg_body(f->s, mbx[0], mid[0], &gone), MB_ECORRUPT);
	mb_val_free(&gone);
	tree_poke(f, "bodies", ck, 12, "shared body", 11);
	assert_int_equal(content_problems(f, &cr), 0);
	for (int i = 0; i < 3; i++) {
		struct mb_val v = MB_VAL_INIT;
		struct mb_msg_rec r;
		assert_int_equal(mb_schema_msg_get(f->s, mbx[i], mid[i], &v, &r), 0);
		assert_true(r.shared);
		/* the content reference is not part of the message's size */
		assert_int_equal(r.size, r.props_len + 56 + 11 + 14);
		mb_val_free(&v);
		read_body(f, mbx[i], mid[i], "shared body");
		read_attach(f, mbx[i], mid[i], "attached bytes");
	}

	/* a copy shares; moving keeps the row's reference */
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_move(f->s, 12, mid[1], MB_FID_DELETED, true, f->tmp, &cmid),
			 0);
	assert_int_equal(mb_schema_msg_move(f->s, 13, mid[2], MB_FID_DELETED, false, f->tmp, NULL),
			 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(tree_keys(f, "bodies"), bodies0 + 1);
	read_body(f, 12, cmid, "shared body");
	read_attach(f, 12, cmid, "attached bytes");
	read_body(f, 13, mid[2], "shared body");

	/* a read flag and a properties-only update (the body kept) keep the
	 * row's reference */
	struct mb_msg_in keep = in;
	keep.keep_body = true;
	keep.attach = NULL;
	keep.nattach = 0;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_set_flags(f->s, 13, mid[2], MB_MSGFLAG_READ, NULL), 0);
	assert_int_equal(mb_schema_msg_update(f->s, 12, mid[1], &keep, f->tmp, NULL), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	read_body(f, 13, mid[2], "shared body");
	read_body(f, 12, mid[1], "shared body");
	read_attach(f, 12, mid[1], "attached bytes");
	assert_int_equal(tree_keys(f, "bodies"), bodies0 + 1);

	/* a new body: the row's own, with its own copy of the attachment */
	struct mb_msg_in up = in;
	up.body = "edited";
	up.body_len = 6;
	up.attach = NULL;
	up.nattach = 0;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_update(f->s, 11, mid[0], &up, f->tmp, NULL), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	read_body(f, 11, mid[0], "edited");
	read_attach(f, 11, mid[0], "attached bytes");
	read_body(f, 12, mid[1], "shared body");
	assert_int_equal(tree_keys(f, "bodies"), bodies0 + 2);
	assert_int_equal(tree_keys(f, "attach_data"), data0 + 2);

	/* deletes: the shared content stays while a row refers to it */
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_delete(f->s, 12, mid[1]), 0);
	assert_int_equal(mb_schema_msg_delete(f->s, 13, mid[2]), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	fx_close(f);
	fx_open(f);
	read_body(f, 12, cmid, "shared body");
	read_attach(f, 12, cmid, "attached bytes");
	assert_int_equal(tree_keys(f, "instances"), 0); /* one row left: count 1 */
	/* a copy of the last row shares again; deleting one leaves the other */
	uint64_t cmid2;
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_move(f->s, 12, cmid, MB_FID_INBOX, true, f->tmp, &cmid2), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(tree_keys(f, "instances"), 1);
	assert_int_equal(tree_keys(f, "bodies"), bodies0 + 2);
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_delete(f->s, 12, cmid2), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	read_body(f, 12, cmid, "shared body");
	assert_int_equal(mb_db_begin(f->db), 0);
	assert_int_equal(mb_schema_msg_delete(f->s, 12, cmid), 0);
	assert_int_equal(mb_schema_msg_delete(f->s, 11, mid[0]), 0);
	assert_int_equal(mb_db_commit(f->db), 0);
	assert_int_equal(tree_keys(f, "bodies"), bodies0);
	assert_int_equal(tree_keys(f, "attach_data"), data0);
	assert_int_equal(tree_keys(f, "attachments"), 0);
	assert_int_equal(content_problems(f, &cr), 0);
	assert_int_equal(cr.contents, 0);
}

static int collect_appt(void *arg, uint64_t mid, int64_t start, int64_t end, uint32_t busy)
{
	int *n = arg;
	(void)mid;
	(void)start;
	(void)end;
	assert_int_equal(busy, 2);
	(*n)++;
	return 0;
}

static void test_calendar_and_reopen(void **state)
{
	struct fx *f = *state;
	const int64_t H = 3600 * 1000;
	struct mb_msg_in in;
	memset(&in, 0, sizeof(in));
	in.appointment = true;
	in.busy = 2;
	assert_int_equal(mb_db_begin(f->db), 0);
	for (int i = 0; i < 5; i++) {
		in.start = 100 * H + i * 24 * H;
		in.end = in.start + 2 * H;
		assert_int_equal(
		    mb_schema_msg_add(f->s, 1, MB_FID_CALENDAR, &in, f->tmp, NULL, NULL), 0);
	}
	assert_int_equal(mb_db_commit(f->db), 0);
	int n = 0;
	/* overlaps: the day-1 appointment starts before the range, ends inside */
	assert_int_equal(mb_schema_calendar_range(f->s, 1, 125 * H, 150 * H, 100, collect_appt, &n),
			 0);
	assert_int_equal(n, 2);
	n = 0;
	assert_int_equal(mb_schema_calendar_range(f->s, 1, 0, 1000 * H, 100, collect_appt, &n), 0);
	assert_int_equal(n, 5);
	n = 0;
	assert_int_equal(mb_schema_calendar_range(f->s, 2, 0, 1000 * H, 100, collect_appt, &n), 0);
	assert_int_equal(n, 0);
	/* everything is durable: close, reopen, look again */
	struct mb_folder_rec before, after;
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &before), 0);
	fx_close(f);
	fx_open(f);
	assert_int_equal(mb_schema_folder_get(f->s, 1, MB_FID_INBOX, &after), 0);
	assert_int_equal(after.count, before.count);
	assert_true(after.cn == before.cn);
	n = 0;
	assert_int_equal(mb_schema_calendar_range(f->s, 1, 0, 1000 * H, 100, collect_appt, &n), 0);
	assert_int_equal(n, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mailbox_and_folders),
	    cmocka_unit_test(test_messages_order_and_paging),
	    cmocka_unit_test(test_changes_and_tombstones),
	    cmocka_unit_test(test_update_keeps_body),
	    cmocka_unit_test(test_single_instance),
	    cmocka_unit_test(test_calendar_and_reopen),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
