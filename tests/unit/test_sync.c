/* test_sync.c: the store's cached-mode synchronisation (store/op_sync.c)
 * against a real store in a thread: a download context (SyncConfigure)
 * takes the four ICS state properties (SyncStateBegin / Continue / End)
 * before it downloads; the download hands out the changes after the
 * uploaded CnsetSeen, the same as SyncDownload by folder and change
 * number, and a second download on the context continues after the first;
 * the context's rules are kept: only the session's own folders, one
 * property at a time, no more bytes than declared, a malformed ID set or
 * an unknown tag refused, no download before the whole state; a
 * hierarchy context lists the folders whose contents changed after its
 * CnsetSeen, and after a change in the Inbox only the Inbox.  An upload
 * context (SyncOpenCollector) takes CnsetSeen, CnsetSeenFAI and CnsetRead,
 * imports (SyncUpload on it, a message saved in its folder) and hands
 * back its checkpoint (SyncGetTransferState, FastTransferGetBuffer): the
 * uploaded sets with the imports' change numbers, not another folder's;
 * its rules are kept as the download context's.  An item not in the
 * uploaded IdsetGiven comes with its whole property list, the others
 * with the header columns. */
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
	/* a cache that holds a transaction of a row past the reply budget */
	struct mb_store_opts o;
	mb_store_opts_init(&o);
	o.cache_mb = 16;
	return storetest_start_opts(&T, 4, &o);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

/* Ops of one state property (Begin, Continue, End) into ops[*n..]. */
static void state_ops(struct mb_op *ops, int *n, uint32_t h, uint32_t tag, const uint8_t *b,
		      size_t len)
{
	ops[*n].code = MB_OP_SYNC_STATE_BEGIN;
	ops[*n].u.sync_state.handle = h;
	ops[*n].u.sync_state.tag = tag;
	ops[(*n)++].u.sync_state.size = (uint32_t)len;
	ops[*n].code = MB_OP_SYNC_STATE_CONTINUE;
	ops[*n].u.sync_state.handle = h;
	ops[*n].u.sync_state.data.p = b;
	ops[(*n)++].u.sync_state.data.len = (uint32_t)len;
	ops[*n].code = MB_OP_SYNC_STATE_END;
	ops[(*n)++].u.sync_state.handle = h;
}

/* One SyncDownload: of folder fid after change 0 (handle 0), or on the
 * context handle; at most max changes; its status, its result in r. */
static int download(struct mb_client *c, uint64_t fid, uint32_t handle, uint32_t max,
		    struct mb_op_reply *r)
{
	struct mb_op op;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_DOWNLOAD;
	op.u.sync_down.fid = fid;
	op.u.sync_down.handle = handle;
	op.u.sync_down.max = max;
	return storetest_one(c, &op, r);
}

/* A context on fid with IdsetGiven the ng ranges g, CnsetSeen [1, seen]
 * (empty when 0), a download of at most max changes with SyncDownload's
 * flags; the reply of every op in rep, the call's status. */
static int flags_download(struct mb_client *c, uint64_t fid, const struct mb_idrange *g,
			  uint32_t ng, uint64_t seen, uint32_t max, uint32_t flags,
			  struct mb_reply *rep)
{
	static struct mb_op ops[16];
	static uint8_t given[64], cns[32], empty[1];
	memset(ops, 0, sizeof(ops));
	int n = 0;
	ops[n].code = MB_OP_SYNC_CONFIGURE;
	ops[n].u.sync_cfg.fid = fid;
	ops[n++].u.sync_cfg.handle = 7;
	struct mb_idrange s = {1, seen};
	size_t glen = mb_idset_encode(g, ng, given);
	size_t slen = mb_idset_encode(&s, seen ? 1 : 0, cns);
	size_t elen = mb_idset_encode(NULL, 0, empty);
	state_ops(ops, &n, 7, MB_META_IDSET_GIVEN, given, glen);
	state_ops(ops, &n, 7, MB_META_CNSET_SEEN, cns, slen);
	state_ops(ops, &n, 7, MB_META_CNSET_SEEN_FAI, empty, elen);
	state_ops(ops, &n, 7, MB_META_CNSET_READ, cns, slen);
	ops[n].code = MB_OP_SYNC_DOWNLOAD;
	ops[n].u.sync_down.handle = 7;
	ops[n].u.sync_down.flags = flags;
	ops[n++].u.sync_down.max = max;
	return mb_client_call(c, ops, (uint16_t)n, rep);
}

static int given_download(struct mb_client *c, uint64_t fid, const struct mb_idrange *g,
			  uint32_t ng, uint64_t seen, uint32_t max, struct mb_reply *rep)
{
	return flags_download(c, fid, g, ng, seen, max, 0, rep);
}

/* given_download with IdsetGiven [1, 3]. */
static int context_download(struct mb_client *c, uint64_t fid, uint64_t seen, uint32_t max,
			    struct mb_reply *rep)
{
	struct mb_idrange g = {1, 3};
	return given_download(c, fid, &g, 1, seen, max, rep);
}

static void test_context_download(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 0, 0);
	assert_non_null(a);
	uint64_t inbox = MB_FID(mb_client_mailbox(a), MB_FID_INBOX);
	struct mb_op_reply r = {0};

	/* by folder and change number: the whole Inbox */
	assert_int_equal(download(a, inbox, 0, 1000, &r), 0);
	uint32_t all = r.u.sync_down.n;
	uint64_t top = r.u.sync_down.watermark;
	assert_true(all >= 2); /* scale 0.02: 2 of the 100 Inbox messages */
	assert_int_equal(r.u.sync_down.more, 0);

	/* a context with nothing seen: the same changes */
	struct mb_reply rep;
	assert_int_equal(context_download(a, inbox, 0, 1000, &rep), 0);
	for (int i = 0; i < rep.nops; i++)
		assert_int_equal(rep.ops[i].status, 0);
	const struct mb_op_reply *d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->code, MB_OP_SYNC_DOWNLOAD);
	assert_int_equal(d->u.sync_down.n, all);
	assert_true(d->u.sync_down.watermark == top);

	/* seen up to the top: nothing new */
	assert_int_equal(context_download(a, inbox, top, 1000, &rep), 0);
	assert_int_equal(rep.ops[rep.nops - 1].status, 0);
	assert_int_equal(rep.ops[rep.nops - 1].u.sync_down.n, 0);

	/* one change at a time, then the same context goes on after it */
	assert_int_equal(context_download(a, inbox, 0, 1, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->u.sync_down.n, 1);
	assert_int_equal(d->u.sync_down.more, 1);
	uint64_t first = d->u.sync_down.items[0].cn;
	assert_int_equal(download(a, 0, 7, 1000, &r), 0);
	assert_int_equal(r.u.sync_down.n, all - 1);
	assert_true(r.u.sync_down.items[0].cn > first);
	mb_client_destroy(a);
}

/* Whether download item it came whole: a received message's address
 * properties beside its header columns. */
static bool item_whole(const struct mb_sync_item *it)
{
	return mb_props_find(it->props, it->nprops, MB_PR_RECEIVED_BY_NAME) != NULL &&
	       mb_props_find(it->props, it->nprops, MB_PR_SENDER_ENTRYID) != NULL;
}

/* An item the client does not hold (not in IdsetGiven) comes with its
 * whole property list, as a FastTransfer messageChange; a change to one it
 * holds, with the header columns alone. */
static void test_new_items_whole(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 1, 0);
	assert_non_null(a);
	uint64_t inbox = MB_FID(mb_client_mailbox(a), MB_FID_INBOX);
	struct mb_reply rep;
	const struct mb_op_reply *d;

	/* the client holds nothing: every item whole */
	assert_int_equal(given_download(a, inbox, NULL, 0, 0, 1000, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->status, 0);
	uint32_t all = d->u.sync_down.n;
	assert_true(all >= 2);
	uint64_t mids[64];
	assert_true(all <= 64);
	for (uint32_t i = 0; i < all; i++) {
		const struct mb_sync_item *it = &d->u.sync_down.items[i];
		assert_false(it->deleted);
		assert_true(item_whole(it));
		assert_true(it->nprops > 9);
		assert_non_null(mb_props_find(it->props, it->nprops, MB_PR_SUBJECT));
		mids[i] = it->mid;
	}

	/* it holds every one: the headers only */
	struct mb_idrange every = {1, UINT64_MAX >> 16};
	assert_int_equal(given_download(a, inbox, &every, 1, 0, 1000, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->u.sync_down.n, all);
	for (uint32_t i = 0; i < all; i++) {
		const struct mb_sync_item *it = &d->u.sync_down.items[i];
		assert_false(item_whole(it));
		assert_true(it->nprops <= 9);
		assert_non_null(mb_props_find(it->props, it->nprops, MB_PR_SUBJECT));
	}

	/* it holds all but the first: that one whole, the others not */
	struct mb_idrange g[2];
	uint32_t ng = 0;
	if (mids[0] > 1)
		g[ng++] = (struct mb_idrange){1, mids[0] - 1};
	g[ng++] = (struct mb_idrange){mids[0] + 1, UINT64_MAX >> 16};
	assert_int_equal(given_download(a, inbox, g, ng, 0, 1000, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->u.sync_down.n, all);
	for (uint32_t i = 0; i < all; i++) {
		const struct mb_sync_item *it = &d->u.sync_down.items[i];
		assert_true(item_whole(it) == (it->mid == mids[0]));
	}

	/* a new item whose whole property list passes the reply budget
	 * comes with its header, and the download moves on past it */
	uint64_t top = d->u.sync_down.watermark;
	size_t big = (3u << 20) + 4096; /* past the 3 MiB reply budget (store_int.h) */
	uint8_t *blob = malloc(big);
	assert_non_null(blob);
	memset(blob, 'k', big);
	struct mb_prop props[2] = {mb_prop_str(MB_PR_SUBJECT, "large"),
				   mb_prop_bytes(MB_PR_SENT_REPRESENTING_SEARCH_KEY, blob, big)};
	struct mb_op ops[3];
	memset(ops, 0, sizeof(ops));
	uint16_t nops = opbatch_compose(ops, inbox, 30, props, 2, MB_OP_SAVE_CHANGES);
	assert_int_equal(mb_client_call(a, ops, nops, &rep), 0);
	for (int i = 0; i < rep.nops; i++)
		assert_int_equal(rep.ops[i].status, 0);
	free(blob);
	assert_int_equal(given_download(a, inbox, NULL, 0, top, 1000, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->status, 0);
	assert_int_equal(d->u.sync_down.n, 1);
	const struct mb_sync_item *it = &d->u.sync_down.items[0];
	assert_non_null(mb_props_find(it->props, it->nprops, MB_PR_SUBJECT));
	assert_null(mb_props_find(it->props, it->nprops, MB_PR_SENT_REPRESENTING_SEARCH_KEY));
	assert_true(d->u.sync_down.watermark > top);
	mb_client_destroy(a);
}

/* Download context 7's FastTransfer stream, read in rounds of max bytes
 * (FastTransferGetBuffer) until a short one, into buf (cap bytes): its
 * length, the rounds in *rounds. */
static size_t read_rounds(struct mb_client *c, uint32_t max, uint8_t *buf, size_t cap, int *rounds)
{
	size_t got = 0;
	*rounds = 0;
	for (;;) {
		struct mb_op op = opbatch_op(MB_OP_FT_GET_BUFFER);
		struct mb_op_reply r;
		memset(&r, 0, sizeof(r));
		op.u.read_stream.handle = 7;
		op.u.read_stream.max = max;
		assert_int_equal(storetest_one(c, &op, &r), 0);
		(*rounds)++;
		uint32_t n = r.u.stream.data.len;
		assert_true(n <= max && got + n <= cap);
		if (n)
			memcpy(buf + got, r.u.stream.data.p, n);
		got += n;
		if (n < max)
			return got;
	}
}

static uint64_t rd_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int hierarchy_download(struct mb_client *c, uint32_t mailbox, uint64_t seen,
			      struct mb_reply *rep);

/* With MB_SD_F_CONTENT, the body and attachments of every item that comes
 * whole follow in the context's FastTransfer stream (a messageChangeFull,
 * MS-OXCFXICS 2.2.4.3.13), read in FastTransferGetBuffer rounds; a change
 * to an item the client holds adds nothing. */
static void test_content_stream(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 3, 0);
	assert_non_null(a);
	uint32_t mbx = mb_client_mailbox(a);
	uint64_t inbox = MB_FID(mbx, MB_FID_INBOX);
	static uint8_t doc[5000], img[3000], buf[4 << 20];
	memset(doc, 'd', sizeof(doc));
	for (size_t i = 0; i < sizeof(img); i++)
		img[i] = (uint8_t)(i * 7);
	struct mb_prop mp[2] = {mb_prop_str(MB_PR_SUBJECT, "streamed"),
				mb_prop_str(MB_PR_BODY, "the body of the streamed item")};
	struct mb_prop ap[2][2] = {{mb_prop_str(MB_PR_ATTACH_FILENAME, "a.doc"),
				    mb_prop_bytes(MB_PR_ATTACH_DATA_BIN, doc, sizeof(doc))},
				   {mb_prop_str(MB_PR_ATTACH_FILENAME, "b.jpg"),
				    mb_prop_bytes(MB_PR_ATTACH_DATA_BIN, img, sizeof(img))}};
	struct mb_op ops[9];
	memset(ops, 0, sizeof(ops));
	opbatch_compose_attached(ops, inbox, 30, mp, 2, MB_OP_SAVE_CHANGES, 31, &ap[0][0], 2, 2);
	struct mb_reply rep;
	assert_int_equal(mb_client_call(a, ops, 9, &rep), 0);
	for (int i = 0; i < 9; i++)
		assert_int_equal(rep.ops[i].status, 0);

	/* the client holds nothing: every item whole, each one's content in
	 * the stream in the download's order (what the reply says is copied
	 * first: the client's next call reuses the reply's memory) */
	assert_int_equal(flags_download(a, inbox, NULL, 0, 0, 1000, MB_SD_F_CONTENT, &rep), 0);
	const struct mb_op_reply *d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->status, 0);
	uint32_t n = d->u.sync_down.n, content = d->u.sync_down.content;
	assert_true(n >= 2 && n <= 64);
	uint64_t mids[64];
	bool mine[64];
	for (uint32_t i = 0; i < n; i++) {
		const struct mb_sync_item *it = &d->u.sync_down.items[i];
		assert_false(it->deleted);
		const struct mb_prop *s = mb_props_find(it->props, it->nprops, MB_PR_SUBJECT);
		mids[i] = it->mid;
		mine[i] = s && s->v.b.len == 8 && memcmp(s->v.b.p, "streamed", 8) == 0;
	}
	int rounds;
	size_t len = read_rounds(a, 1000, buf, sizeof(buf), &rounds);
	assert_int_equal(rounds, (int)(len / 1000) + 1);
	assert_int_equal(content, len); /* as the reply said */
	size_t at = 0;
	bool seen = false;
	for (uint32_t i = 0; i < n; i++) {
		assert_true(at + 13 <= len);
		assert_int_equal(rd_le(buf + at, 8), mids[i]);
		uint32_t blen = (uint32_t)rd_le(buf + at + 8, 4);
		at += 12;
		assert_true(at + blen + 1 <= len);
		at += blen;
		uint8_t na = buf[at++];
		if (mine[i]) {
			seen = true;
			assert_true(blen > 0);
			assert_int_equal(na, 2);
		}
		for (uint8_t k = 0; k < na; k++) {
			assert_true(at + 4 <= len);
			uint32_t alen = (uint32_t)rd_le(buf + at, 4);
			at += 4;
			assert_true(at + alen <= len);
			if (mine[i]) {
				const uint8_t *want = k == 0 ? doc : img;
				assert_int_equal(alen, k == 0 ? sizeof(doc) : sizeof(img));
				assert_memory_equal(buf + at, want, alen);
			}
			at += alen;
		}
	}
	assert_true(seen);
	assert_int_equal(at, len);

	/* a download that goes on on the context replaces the stream: one
	 * item, then the rest */
	assert_int_equal(flags_download(a, inbox, NULL, 0, 0, 1, MB_SD_F_CONTENT, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->u.sync_down.n, 1);
	assert_int_equal(d->u.sync_down.items[0].mid, mids[0]);
	assert_true(d->u.sync_down.content > 0);
	struct mb_op op = opbatch_op(MB_OP_SYNC_DOWNLOAD);
	struct mb_op_reply r;
	memset(&r, 0, sizeof(r));
	op.u.sync_down.handle = 7;
	op.u.sync_down.flags = MB_SD_F_CONTENT;
	op.u.sync_down.max = 1000;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	assert_int_equal(r.u.sync_down.n, n - 1);
	assert_int_equal(r.u.sync_down.items[0].mid, mids[1]);
	content = r.u.sync_down.content;
	len = read_rounds(a, 1000, buf, sizeof(buf), &rounds);
	assert_int_equal(len, content);
	assert_int_equal(rd_le(buf, 8), mids[1]);

	/* it holds every one: headers, and an empty stream */
	struct mb_idrange every = {1, UINT64_MAX >> 16};
	assert_int_equal(flags_download(a, inbox, &every, 1, 0, 1000, MB_SD_F_CONTENT, &rep), 0);
	assert_int_equal(rep.ops[rep.nops - 1].u.sync_down.n, n);
	assert_int_equal(rep.ops[rep.nops - 1].u.sync_down.content, 0);
	assert_int_equal(read_rounds(a, 1000, buf, sizeof(buf), &rounds), 0);
	assert_int_equal(rounds, 1);

	/* without the flag the items come whole and the stream stays empty */
	assert_int_equal(flags_download(a, inbox, NULL, 0, 0, 1000, 0, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->u.sync_down.n, n);
	assert_true(item_whole(&d->u.sync_down.items[0]));
	assert_int_equal(d->u.sync_down.content, 0);
	assert_int_equal(read_rounds(a, 1000, buf, sizeof(buf), &rounds), 0);

	/* a stream needs a contents download context */
	op = opbatch_op(MB_OP_SYNC_DOWNLOAD);
	op.u.sync_down.fid = inbox;
	op.u.sync_down.flags = MB_SD_F_CONTENT;
	op.u.sync_down.max = 10;
	assert_int_equal(storetest_one(a, &op, &r), MB_EINVAL);
	assert_int_equal(hierarchy_download(a, mbx, 0, &rep), 0);
	op.u.sync_down.handle = 8;
	assert_int_equal(storetest_one(a, &op, &r), MB_EINVAL);
	mb_client_destroy(a);
}

/* A hierarchy context under the root with CnsetSeen [1, seen]; its
 * download's reply in rep. */
static int hierarchy_download(struct mb_client *c, uint32_t mailbox, uint64_t seen,
			      struct mb_reply *rep)
{
	static struct mb_op ops[10];
	static uint8_t given[8], cns[32];
	memset(ops, 0, sizeof(ops));
	int n = 0;
	ops[n].code = MB_OP_SYNC_CONFIGURE;
	ops[n].u.sync_cfg.fid = MB_FID(mailbox, MB_FID_ROOT);
	ops[n].u.sync_cfg.flags = MB_SC_F_HIERARCHY;
	ops[n++].u.sync_cfg.handle = 8;
	struct mb_idrange g = {MB_FID_INBOX, MB_FID_INBOX}, s = {1, seen};
	state_ops(ops, &n, 8, MB_META_IDSET_GIVEN, given, mb_idset_encode(&g, 1, given));
	state_ops(ops, &n, 8, MB_META_CNSET_SEEN, cns, mb_idset_encode(&s, seen ? 1 : 0, cns));
	ops[n].code = MB_OP_SYNC_DOWNLOAD;
	ops[n].u.sync_down.handle = 8;
	ops[n++].u.sync_down.max = 100;
	return mb_client_call(c, ops, (uint16_t)n, rep);
}

static void test_hierarchy(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 2, 0);
	assert_non_null(a);
	uint32_t mbx = mb_client_mailbox(a);
	struct mb_reply rep;
	assert_int_equal(hierarchy_download(a, mbx, 0, &rep), 0);
	const struct mb_op_reply *d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->status, 0);
	assert_true(d->u.sync_down.n >= 5); /* the well-known folders and the new ones */
	bool inbox = false;
	for (uint32_t i = 0; i < d->u.sync_down.n; i++) {
		const struct mb_sync_item *it = &d->u.sync_down.items[i];
		const struct mb_prop *fid = mb_props_find(it->props, it->nprops, MB_PR_FID);
		assert_non_null(fid);
		assert_true((uint64_t)fid->v.i == MB_FID(mbx, it->mid));
		assert_true(it->cn <= d->u.sync_down.watermark);
		inbox = inbox || it->mid == MB_FID_INBOX;
	}
	assert_true(inbox);
	uint64_t top = d->u.sync_down.watermark;
	assert_int_equal(hierarchy_download(a, mbx, top, &rep), 0);
	assert_int_equal(rep.ops[rep.nops - 1].u.sync_down.n, 0);

	/* a new message in the Inbox: only the Inbox has changed */
	struct mb_prop p[1] = {{MB_PR_SUBJECT, {.b = {(const uint8_t *)"new", 3}}}};
	struct mb_sync_change ch = {MB_SYNC_CREATE, 0, 0, 1, p};
	struct mb_op op;
	struct mb_op_reply r = {0};
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_UPLOAD;
	op.u.sync_up.fid = MB_FID(mbx, MB_FID_INBOX);
	op.u.sync_up.n = 1;
	op.u.sync_up.changes = &ch;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	assert_int_equal(hierarchy_download(a, mbx, top, &rep), 0);
	d = &rep.ops[rep.nops - 1];
	assert_int_equal(d->status, 0);
	assert_int_equal(d->u.sync_down.n, 1);
	assert_true(d->u.sync_down.items[0].mid == MB_FID_INBOX);
	assert_true(d->u.sync_down.watermark > top);
	mb_client_destroy(a);
}

static void test_context_rules(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 0, 0);
	struct mb_client *b = storetest_client(&T, 1, 0);
	assert_non_null(a);
	assert_non_null(b);
	uint64_t inbox = MB_FID(mb_client_mailbox(a), MB_FID_INBOX);
	struct mb_op op;
	struct mb_op_reply r = {0};

	/* another user's folder */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_CONFIGURE;
	op.u.sync_cfg.fid = inbox;
	op.u.sync_cfg.handle = 3;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	op.code = MB_OP_SYNC_STATE_END;
	op.u.sync_state.handle = 3;
	assert_int_equal(storetest_one(b, &op, &r), MB_ENOTFOUND);
	/* a state op on a handle of another kind */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_GET_CONTENTS_TABLE;
	op.u.get_table.fid = inbox;
	op.u.get_table.handle = 4;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_STATE_END;
	op.u.sync_state.handle = 4;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);

	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_CONFIGURE;
	op.u.sync_cfg.fid = inbox;
	op.u.sync_cfg.handle = 3;
	op.u.sync_cfg.flags = 0x80; /* unknown flag */
	assert_int_equal(storetest_one(a, &op, &r), MB_EINVAL);
	op.u.sync_cfg.flags = 0;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	/* no download before the state */
	assert_int_equal(download(a, 0, 3, 10, &r), MB_ESTATE);
	/* Continue or End without Begin; an unknown tag; too large */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_STATE_CONTINUE;
	op.u.sync_state.handle = 3;
	op.u.sync_state.data = mb_str("x");
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	op.code = MB_OP_SYNC_STATE_END;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_STATE_BEGIN;
	op.u.sync_state.handle = 3;
	op.u.sync_state.tag = MB_PR_BODY;
	op.u.sync_state.size = 1;
	assert_int_equal(storetest_one(a, &op, &r), MB_EINVAL);
	op.u.sync_state.tag = MB_META_CNSET_SEEN;
	op.u.sync_state.size = MB_SYNC_STATE_MAX + 1;
	assert_int_equal(storetest_one(a, &op, &r), MB_ETOOBIG);
	/* Begin twice; more bytes than declared; End before all of them */
	op.u.sync_state.size = 3;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_STATE_CONTINUE;
	op.u.sync_state.handle = 3;
	op.u.sync_state.data = mb_str("abcd");
	assert_int_equal(storetest_one(a, &op, &r), MB_ERANGE);
	op.u.sync_state.data = mb_str("\x01");
	assert_int_equal(storetest_one(a, &op, &r), 0);
	op.code = MB_OP_SYNC_STATE_END;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	/* a malformed ID set (a range from 0) */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_STATE_BEGIN;
	op.u.sync_state.handle = 3;
	op.u.sync_state.tag = MB_META_CNSET_SEEN;
	op.u.sync_state.size = 3;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	op.code = MB_OP_SYNC_STATE_CONTINUE;
	op.u.sync_state.data = (struct mb_bytes){(const uint8_t *)"\x01\x00\x05", 3};
	assert_int_equal(storetest_one(a, &op, &r), 0);
	op.code = MB_OP_SYNC_STATE_END;
	assert_int_equal(storetest_one(a, &op, &r), MB_EPROTO);
	/* still no download: the state is not whole */
	assert_int_equal(download(a, 0, 3, 10, &r), MB_ESTATE);
	/* released, it is gone */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_RELEASE;
	op.u.release.handle = 3;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	assert_int_equal(download(a, 0, 3, 10, &r), MB_ENOTFOUND);
	mb_client_destroy(a);
	mb_client_destroy(b);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether id is in the ID set b (len bytes). */
static bool idset_has(const uint8_t *b, uint32_t len, uint64_t id)
{
	struct mb_idrange rg[64];
	uint32_t n;
	assert_int_equal(mb_idset_decode(b, len, rg, 64, &n), 0);
	for (uint32_t i = 0; i < n; i++)
		if (id >= rg[i].lo && id <= rg[i].hi)
			return true;
	return false;
}

static void test_upload_context(void **state)
{
	(void)state;
	struct mb_client *a = storetest_client(&T, 2, 0);
	struct mb_client *b = storetest_client(&T, 3, 0);
	assert_non_null(a);
	assert_non_null(b);
	uint32_t mbx = mb_client_mailbox(a);
	uint64_t inbox = MB_FID(mbx, MB_FID_INBOX), sent = MB_FID(mbx, MB_FID_SENT);
	struct mb_op op;
	struct mb_op_reply r = {0};
	struct mb_reply rep;

	/* the Inbox as it is: its messages and top change number */
	assert_int_equal(download(a, inbox, 0, 1000, &r), 0);
	assert_true(r.u.sync_down.n >= 1);
	uint64_t top = r.u.sync_down.watermark, old = r.u.sync_down.items[0].mid;

	/* rules: another user's folder, a flag, IdsetGiven, imports and
	 * checkpoints before the state, a download on it */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_OPEN_COLLECTOR;
	op.u.sync_cfg.fid = inbox;
	op.u.sync_cfg.handle = 20;
	assert_int_equal(storetest_one(b, &op, &r), MB_EACCES);
	op.u.sync_cfg.flags = MB_SC_F_HIERARCHY;
	assert_int_equal(storetest_one(a, &op, &r), MB_EINVAL);
	op.u.sync_cfg.flags = 0;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_STATE_BEGIN;
	op.u.sync_state.handle = 20;
	op.u.sync_state.tag = MB_META_IDSET_GIVEN;
	op.u.sync_state.size = 1;
	assert_int_equal(storetest_one(a, &op, &r), MB_EINVAL);
	struct mb_sync_change ch[2];
	memset(ch, 0, sizeof(ch));
	ch[0].kind = MB_SYNC_SET_FLAGS;
	ch[0].mid = old;
	ch[0].flags = MB_MSGFLAG_READ;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_UPLOAD;
	op.u.sync_up.handle = 20;
	op.u.sync_up.n = 1;
	op.u.sync_up.changes = ch;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_GET_STATE;
	op.u.sync_xfer.handle = 20;
	op.u.sync_xfer.out = 21;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);

	/* the state, then the imports: a read flag and a new item by
	 * SyncUpload, a message saved in the Inbox, one in Sent Items (not
	 * under the context), the checkpoint, a second buffer (empty) */
	static struct mb_op ops[32];
	static uint8_t cns[32], empty[1];
	static struct mb_prop props[2];
	memset(ops, 0, sizeof(ops));
	int n = 0;
	struct mb_idrange seen = {1, top};
	size_t slen = mb_idset_encode(&seen, 1, cns), elen = mb_idset_encode(NULL, 0, empty);
	state_ops(ops, &n, 20, MB_META_CNSET_SEEN, cns, slen);
	state_ops(ops, &n, 20, MB_META_CNSET_SEEN_FAI, empty, elen);
	state_ops(ops, &n, 20, MB_META_CNSET_READ, cns, slen);
	props[0] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Note");
	props[1] = mb_prop_str(MB_PR_SUBJECT, "uploaded");
	ch[1].kind = MB_SYNC_CREATE;
	ch[1].nprops = 2;
	ch[1].props = props;
	ops[n].code = MB_OP_SYNC_UPLOAD;
	ops[n].u.sync_up.fid = sent; /* unused: the context's folder */
	ops[n].u.sync_up.handle = 20;
	ops[n].u.sync_up.n = 2;
	ops[n++].u.sync_up.changes = ch;
	const uint64_t folders[2] = {inbox, sent};
	for (int k = 0; k < 2; k++)
		n += opbatch_compose(&ops[n], folders[k], 30, props, 2, MB_OP_SAVE_CHANGES);
	ops[n].code = MB_OP_SYNC_GET_STATE;
	ops[n].u.sync_xfer.handle = 20;
	ops[n++].u.sync_xfer.out = 21;
	for (int k = 0; k < 2; k++) {
		ops[n].code = MB_OP_FT_GET_BUFFER;
		ops[n].u.read_stream.handle = 21;
		ops[n++].u.read_stream.max = 28672;
	}
	assert_int_equal(mb_client_call(a, ops, (uint16_t)n, &rep), 0);
	for (int i = 0; i < rep.nops; i++)
		assert_int_equal(rep.ops[i].status, 0);
	const struct mb_op_reply *up = &rep.ops[9], *in_save = &rep.ops[12],
				 *sent_save = &rep.ops[15], *gs = &rep.ops[16];
	assert_int_equal(up->code, MB_OP_SYNC_UPLOAD);
	assert_true(up->u.sync_up.mids[0] == old);
	assert_true(up->u.sync_up.cn > top);
	/* the checkpoint: CnsetSeen, CnsetSeenFAI, CnsetRead, in one buffer */
	struct mb_bytes cp = rep.ops[17].u.stream.data;
	assert_int_equal(rep.ops[18].u.stream.data.len, 0);
	assert_int_equal(cp.len, gs->u.table.rows);
	const uint32_t tags[3] = {MB_META_CNSET_SEEN, MB_META_CNSET_SEEN_FAI, MB_META_CNSET_READ};
	const uint8_t *sets[3];
	uint32_t lens[3], at = 0;
	for (int i = 0; i < 3; i++) {
		assert_true(cp.len - at >= 8);
		assert_int_equal(le32(cp.p + at), tags[i]);
		lens[i] = le32(cp.p + at + 4);
		sets[i] = cp.p + at + 8;
		at += 8 + lens[i];
		assert_true(at <= cp.len);
	}
	assert_int_equal(at, cp.len);
	/* the uploaded sets, with the imports' change numbers: both of the
	 * upload's and the Inbox save's, not the Sent Items save's */
	for (int i = 0; i < 3; i += 2) {
		assert_true(idset_has(sets[i], lens[i], 1));
		assert_true(idset_has(sets[i], lens[i], top));
		assert_true(idset_has(sets[i], lens[i], up->u.sync_up.cn - 1));
		assert_true(idset_has(sets[i], lens[i], up->u.sync_up.cn));
		assert_true(idset_has(sets[i], lens[i], in_save->u.saved.cn));
		assert_false(idset_has(sets[i], lens[i], sent_save->u.saved.cn));
	}
	uint32_t nr;
	uint64_t nids, max;
	assert_int_equal(mb_idset_scan(sets[1], lens[1], &nr, &nids, &max), 0);
	assert_int_equal(nids, 0);

	/* a checkpoint is read by FastTransferGetBuffer only; a download
	 * context gives none (its FastTransfer stream is empty: no
	 * MB_SD_F_CONTENT) */
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_READ_STREAM;
	op.u.read_stream.handle = 21;
	op.u.read_stream.max = 100;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	assert_int_equal(context_download(a, inbox, top, 10, &rep), 0);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_SYNC_GET_STATE;
	op.u.sync_xfer.handle = 7;
	op.u.sync_xfer.out = 22;
	assert_int_equal(storetest_one(a, &op, &r), MB_ESTATE);
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_FT_GET_BUFFER;
	op.u.read_stream.handle = 7;
	op.u.read_stream.max = 100;
	assert_int_equal(storetest_one(a, &op, &r), 0);
	assert_int_equal(r.u.stream.data.len, 0);
	/* and no download on an upload context */
	assert_int_equal(download(a, 0, 20, 10, &r), MB_ESTATE);
	mb_client_destroy(a);
	mb_client_destroy(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_upload_context),  cmocka_unit_test(test_context_download),
	    cmocka_unit_test(test_new_items_whole), cmocka_unit_test(test_context_rules),
	    cmocka_unit_test(test_hierarchy),	    cmocka_unit_test(test_content_stream),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
