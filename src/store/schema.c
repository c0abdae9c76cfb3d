/* schema.c: mailbox tables over the storage engine (see schema.h).
 * Record layouts (little-endian values, big-endian keys):
 *   mailbox: u64 next_mid | u64 next_cn | u32 next_folder | u32 nfolders
 *   folder:  u32 parent | u32 count | u32 unread | u32 subfolders | u64 cn | name
 *   message: u32 folder | u32 flags | i64 time | u64 cn | u32 size |
 *            u32 body_len | i64 start | i64 end | u32 busy | u8 appt | 3 pad |
 *            props (mb_props_encode)
 * Invariants: see schema.h; every function leaves the trees consistent or
 * returns an error, after which the caller aborts the transaction. */
#include "store/schema.h"
#include "core/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_HDR 56
#define FOLDER_HDR 24
#define MBX_LEN 24

struct mb_schema {
	struct mb_db *db;
	struct mb_tree *mailboxes, *folders, *messages, *bodies, *by_time, *by_cn, *calendar;
	struct mb_val val;   /* scratch for internal reads */
	struct mb_val val2;
};

static const char *const tree_names[] = {"mailboxes", "folders", "messages", "bodies",
					 "by_time",   "by_cn",   "calendar"};

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static void le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static uint64_t bias(int64_t t)
{
	return (uint64_t)t ^ (1ULL << 63);
}
static int64_t unbias(uint64_t v)
{
	return (int64_t)(v ^ (1ULL << 63));
}

int mb_schema_open(struct mb_db *db, bool create, struct mb_schema **out)
{
	struct mb_schema *s = calloc(1, sizeof(*s));
	struct mb_tree **slots[7];
	int rc = 0;
	bool began = false;

	if (!s)
		return MB_ENOMEM;
	s->db = db;
	slots[0] = &s->mailboxes;
	slots[1] = &s->folders;
	slots[2] = &s->messages;
	slots[3] = &s->bodies;
	slots[4] = &s->by_time;
	slots[5] = &s->by_cn;
	slots[6] = &s->calendar;
	for (int i = 0; i < 7 && !rc; i++) {
		rc = mb_tree_open(db, tree_names[i], 0, slots[i]);
		if (rc == MB_ENOTFOUND && create) {
			if (!began) {
				rc = mb_db_begin(db);
				if (rc)
					break;
				began = true;
			}
			rc = mb_tree_open(db, tree_names[i], MB_TREE_CREATE, slots[i]);
		}
	}
	if (began) {
		if (rc)
			mb_db_abort(db);
		else
			rc = mb_db_commit(db);
	}
	if (rc) {
		mb_schema_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void mb_schema_close(struct mb_schema *s)
{
	if (!s)
		return;
	struct mb_tree *t[] = {s->mailboxes, s->folders, s->messages, s->bodies,
			       s->by_time,   s->by_cn,   s->calendar};
	for (int i = 0; i < 7; i++)
		if (t[i])
			mb_tree_close(t[i]);
	mb_val_free(&s->val);
	mb_val_free(&s->val2);
	free(s);
}

struct mb_db *mb_schema_db(struct mb_schema *s)
{
	return s->db;
}

/* ---- keys ---- */

static size_t k_mbx(uint8_t *k, uint32_t mailbox)
{
	mb_key_u32(k, mailbox);
	return 4;
}
static size_t k_folder(uint8_t *k, uint32_t mailbox, uint32_t folder)
{
	mb_key_u32(mb_key_u32(k, mailbox), folder);
	return 8;
}
static size_t k_msg(uint8_t *k, uint32_t mailbox, uint64_t mid)
{
	mb_key_u64(mb_key_u32(k, mailbox), mid);
	return 12;
}
static size_t k_time(uint8_t *k, uint32_t mailbox, uint32_t folder, int64_t time, uint64_t mid)
{
	uint8_t *p = mb_key_u32(mb_key_u32(k, mailbox), folder);
	mb_key_u64(mb_key_u64(p, ~bias(time)), mid);
	return 24;
}
static size_t k_cn(uint8_t *k, uint32_t mailbox, uint32_t folder, uint64_t cn)
{
	mb_key_u64(mb_key_u32(mb_key_u32(k, mailbox), folder), cn);
	return 16;
}
static size_t k_cal(uint8_t *k, uint32_t mailbox, int64_t start, uint64_t mid)
{
	mb_key_u64(mb_key_u64(mb_key_u32(k, mailbox), bias(start)), mid);
	return 20;
}

/* ---- mailbox ---- */

static int mbx_get(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *r)
{
	uint8_t k[4];
	int rc = mb_tree_get(s->mailboxes, k, k_mbx(k, mailbox), &s->val);
	if (rc)
		return rc;
	if (s->val.len < MBX_LEN)
		return MB_ECORRUPT;
	const uint8_t *p = s->val.data;
	r->next_mid = rd64(p);
	r->next_cn = rd64(p + 8);
	r->next_folder = rd32(p + 16);
	r->nfolders = rd32(p + 20);
	return 0;
}

static int mbx_put(struct mb_schema *s, uint32_t mailbox, const struct mb_mailbox_rec *r)
{
	uint8_t k[4], v[MBX_LEN];
	le64(v, r->next_mid);
	le64(v + 8, r->next_cn);
	le32(v + 16, r->next_folder);
	le32(v + 20, r->nfolders);
	return mb_tree_put(s->mailboxes, k, k_mbx(k, mailbox), v, sizeof(v), 0);
}

int mb_schema_mailbox_get(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *out)
{
	return mbx_get(s, mailbox, out);
}

bool mb_schema_mailbox_exists(struct mb_schema *s, uint32_t mailbox)
{
	struct mb_mailbox_rec r;
	return mbx_get(s, mailbox, &r) == 0;
}

static int folder_put(struct mb_schema *s, uint32_t mailbox, const struct mb_folder_rec *f)
{
	uint8_t k[8], v[FOLDER_HDR + MB_PROTO_MAX_NAME];
	size_t nl = strnlen(f->name, MB_PROTO_MAX_NAME);
	le32(v, f->parent);
	le32(v + 4, f->count);
	le32(v + 8, f->unread);
	le32(v + 12, f->subfolders);
	le64(v + 16, f->cn);
	memcpy(v + FOLDER_HDR, f->name, nl);
	return mb_tree_put(s->folders, k, k_folder(k, mailbox, f->folder), v, FOLDER_HDR + nl, 0);
}

static int folder_parse(const uint8_t *p, size_t len, uint32_t folder, struct mb_folder_rec *f)
{
	if (len < FOLDER_HDR || len > FOLDER_HDR + MB_PROTO_MAX_NAME)
		return MB_ECORRUPT;
	f->folder = folder;
	f->parent = rd32(p);
	f->count = rd32(p + 4);
	f->unread = rd32(p + 8);
	f->subfolders = rd32(p + 12);
	f->cn = rd64(p + 16);
	memcpy(f->name, p + FOLDER_HDR, len - FOLDER_HDR);
	f->name[len - FOLDER_HDR] = '\0';
	return 0;
}

int mb_schema_folder_get(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			 struct mb_folder_rec *out)
{
	uint8_t k[8];
	int rc = mb_tree_get(s->folders, k, k_folder(k, mailbox, folder), &s->val2);
	if (rc)
		return rc;
	return folder_parse(s->val2.data, s->val2.len, folder, out);
}

static int folder_make(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *m,
		       uint32_t number, uint32_t parent, const char *name)
{
	struct mb_folder_rec f;
	int rc;

	memset(&f, 0, sizeof(f));
	f.folder = number;
	f.parent = parent;
	snprintf(f.name, sizeof(f.name), "%s", name);
	rc = folder_put(s, mailbox, &f);
	if (rc)
		return rc;
	m->nfolders++;
	if (parent) {
		struct mb_folder_rec p;
		rc = mb_schema_folder_get(s, mailbox, parent, &p);
		if (rc)
			return rc;
		p.subfolders++;
		rc = folder_put(s, mailbox, &p);
	}
	return rc;
}

int mb_schema_mailbox_create(struct mb_schema *s, uint32_t mailbox, const char *owner)
{
	struct mb_mailbox_rec m = {1, 1, MB_FID_FIRST_USER, 0};
	static const struct {
		uint32_t n;
		const char *name;
	} wk[] = {{MB_FID_INBOX, "Inbox"},         {MB_FID_DELETED, "Deleted Items"},
		  {MB_FID_SENT, "Sent Items"},     {MB_FID_CALENDAR, "Calendar"},
		  {MB_FID_CONTACTS, "Contacts"}};
	int rc;

	(void)owner;
	if (mb_schema_mailbox_exists(s, mailbox))
		return MB_EEXIST;
	rc = folder_make(s, mailbox, &m, MB_FID_ROOT, 0, "Top of Information Store");
	for (size_t i = 0; i < sizeof(wk) / sizeof(wk[0]) && !rc; i++)
		rc = folder_make(s, mailbox, &m, wk[i].n, MB_FID_ROOT, wk[i].name);
	if (!rc)
		rc = mbx_put(s, mailbox, &m);
	return rc;
}

/* The mailbox record and the record of one of its folders. */
static int mbx_folder_get(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			  struct mb_mailbox_rec *m, struct mb_folder_rec *f)
{
	int rc = mbx_get(s, mailbox, m);
	return rc ? rc : mb_schema_folder_get(s, mailbox, folder, f);
}

int mb_schema_folder_create(struct mb_schema *s, uint32_t mailbox, uint32_t parent,
			    const char *name, uint32_t *folder)
{
	struct mb_mailbox_rec m;
	struct mb_folder_rec p;
	int rc = mbx_folder_get(s, mailbox, parent, &m, &p);

	if (rc)
		return rc;
	uint32_t n = m.next_folder++;
	rc = folder_make(s, mailbox, &m, n, parent, name);
	if (!rc)
		rc = mbx_put(s, mailbox, &m);
	if (!rc && folder)
		*folder = n;
	return rc;
}

int mb_schema_folder_children(struct mb_schema *s, uint32_t mailbox, uint32_t parent,
			      uint32_t after_folder,
			      int (*cb)(void *arg, const struct mb_folder_rec *f), void *arg)
{
	struct mb_cursor *c;
	uint8_t lo[8], hi[8];
	int rc = mb_cursor_open(s->folders, &c);

	if (rc)
		return rc;
	k_folder(lo, mailbox, after_folder + 1);
	k_folder(hi, mailbox + 1, 0);
	rc = mb_cursor_range(c, lo, 8, mailbox == UINT32_MAX ? NULL : hi, 8);
	while (rc == 0) {
		const void *key;
		size_t kl;
		struct mb_folder_rec f;
		rc = mb_cursor_key(c, &key, &kl);
		if (rc)
			break;
		uint32_t num = mb_key_get_u32((const unsigned char *)key + 4);
		rc = mb_cursor_value(c, &s->val);
		if (rc)
			break;
		rc = folder_parse(s->val.data, s->val.len, num, &f);
		if (rc)
			break;
		if (f.parent == parent && cb(arg, &f))
			break;
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

/* ---- messages ---- */

static int msg_parse(const uint8_t *p, size_t len, uint64_t mid, struct mb_msg_rec *r)
{
	if (len < MSG_HDR)
		return MB_ECORRUPT;
	r->mid = mid;
	r->folder = rd32(p);
	r->flags = rd32(p + 4);
	r->time = (int64_t)rd64(p + 8);
	r->cn = rd64(p + 16);
	r->size = rd32(p + 24);
	r->body_len = rd32(p + 28);
	r->start = (int64_t)rd64(p + 32);
	r->end = (int64_t)rd64(p + 40);
	r->busy = rd32(p + 48);
	r->appointment = p[52] != 0;
	r->props = p + MSG_HDR;
	r->props_len = len - MSG_HDR;
	return 0;
}

/* Encode a message row into tmp. */
static int msg_encode(struct mb_buf *tmp, const struct mb_msg_rec *r, const struct mb_prop *props,
		      uint16_t nprops)
{
	uint8_t h[MSG_HDR];
	int rc;

	memset(h, 0, sizeof(h));
	le32(h, r->folder);
	le32(h + 4, r->flags);
	le64(h + 8, (uint64_t)r->time);
	le64(h + 16, r->cn);
	le32(h + 24, r->size);
	le32(h + 28, r->body_len);
	le64(h + 32, (uint64_t)r->start);
	le64(h + 40, (uint64_t)r->end);
	le32(h + 48, r->busy);
	h[52] = r->appointment ? 1 : 0;
	mb_buf_reset(tmp);
	rc = mb_buf_append(tmp, h, sizeof(h));
	if (!rc)
		rc = mb_props_encode(tmp, props, nprops);
	return rc;
}

static int msg_put_raw(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_buf *tmp)
{
	uint8_t k[12];
	/* patch the size now that the props length is known */
	return mb_tree_put(s->messages, k, k_msg(k, mailbox, mid), mb_buf_data(tmp), mb_buf_len(tmp),
			   0);
}

static int index_add(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r)
{
	uint8_t k[24], v[12];
	int rc = mb_tree_put(s->by_time, k, k_time(k, mailbox, r->folder, r->time, r->mid), "", 0, 0);
	if (rc)
		return rc;
	mb_key_u64(v, r->mid);
	v[8] = 0;
	rc = mb_tree_put(s->by_cn, k, k_cn(k, mailbox, r->folder, r->cn), v, 9, 0);
	if (rc || !r->appointment || r->folder != MB_FID_CALENDAR)
		return rc;
	le64(v, (uint64_t)r->end);
	le32(v + 8, r->busy);
	return mb_tree_put(s->calendar, k, k_cal(k, mailbox, r->start, r->mid), v, 12, 0);
}

/* Remove the live index entries of r; leave a tombstone at tomb_cn when
 * non-zero. */
static int index_remove(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r,
			uint64_t tomb_cn)
{
	uint8_t k[24], v[9];
	int rc = mb_tree_del(s->by_time, k, k_time(k, mailbox, r->folder, r->time, r->mid));
	if (rc && rc != MB_ENOTFOUND)
		return rc;
	rc = mb_tree_del(s->by_cn, k, k_cn(k, mailbox, r->folder, r->cn));
	if (rc && rc != MB_ENOTFOUND)
		return rc;
	if (tomb_cn) {
		mb_key_u64(v, r->mid);
		v[8] = 1;
		rc = mb_tree_put(s->by_cn, k, k_cn(k, mailbox, r->folder, tomb_cn), v, 9, 0);
		if (rc)
			return rc;
	}
	if (r->appointment && r->folder == MB_FID_CALENDAR) {
		rc = mb_tree_del(s->calendar, k, k_cal(k, mailbox, r->start, r->mid));
		if (rc && rc != MB_ENOTFOUND)
			return rc;
	}
	return 0;
}

/* Adjust a folder's counters and change number. */
static int folder_touch(struct mb_schema *s, uint32_t mailbox, uint32_t folder, int dcount,
			int dunread, uint64_t cn)
{
	struct mb_folder_rec f;
	int rc = mb_schema_folder_get(s, mailbox, folder, &f);
	if (rc)
		return rc;
	f.count = (uint32_t)((int64_t)f.count + dcount);
	f.unread = (uint32_t)((int64_t)f.unread + dunread);
	if (cn > f.cn)
		f.cn = cn;
	return folder_put(s, mailbox, &f);
}

static int unread_of(uint32_t flags)
{
	return (flags & MB_MSGFLAG_READ) ? 0 : 1;
}

static int write_new(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *m,
		     struct mb_msg_rec *r, const struct mb_prop *props, uint16_t nprops,
		     const void *body, uint32_t body_len, struct mb_buf *tmp)
{
	uint8_t k[12];
	int rc;

	r->mid = m->next_mid++;
	r->cn = m->next_cn++;
	rc = msg_encode(tmp, r, props, nprops);
	if (rc)
		return rc;
	r->size = (uint32_t)(mb_buf_len(tmp) + body_len);
	le32(mb_buf_data(tmp) + 24, r->size);
	rc = msg_put_raw(s, mailbox, r->mid, tmp);
	if (!rc && body_len)
		rc = mb_tree_put(s->bodies, k, k_msg(k, mailbox, r->mid), body, body_len, 0);
	if (!rc)
		rc = index_add(s, mailbox, r);
	if (!rc)
		rc = folder_touch(s, mailbox, r->folder, 1, unread_of(r->flags), r->cn);
	return rc;
}

/* A new row's fields from what the caller gives (mid, cn, size unset). */
static void rec_from_in(struct mb_msg_rec *r, uint32_t folder, const struct mb_msg_in *in)
{
	memset(r, 0, sizeof(*r));
	r->folder = folder;
	r->flags = in->flags;
	r->time = in->time;
	r->body_len = in->body_len;
	r->start = in->start;
	r->end = in->end;
	r->busy = in->busy;
	r->appointment = in->appointment;
}

/* The mailbox record and the row of message mid (the row stays in s->val). */
static int mbx_msg_get(struct mb_schema *s, uint32_t mailbox, uint64_t mid,
		       struct mb_mailbox_rec *m, struct mb_msg_rec *old)
{
	int rc = mbx_get(s, mailbox, m);
	return rc ? rc : mb_schema_msg_get(s, mailbox, mid, &s->val, old);
}

/* A changed row r (taken out of the indexes, rewritten, r->cn = the new
 * change number) back in: indexes, its folder's unread count (by
 * dunread), the mailbox record m; *cn = r->cn when cn is given. */
static int msg_refiled(struct mb_schema *s, uint32_t mailbox, const struct mb_mailbox_rec *m,
		       const struct mb_msg_rec *r, int dunread, uint64_t *cn)
{
	int rc = index_add(s, mailbox, r);
	if (!rc)
		rc = folder_touch(s, mailbox, r->folder, 0, dunread, r->cn);
	if (!rc)
		rc = mbx_put(s, mailbox, m);
	if (!rc && cn)
		*cn = r->cn;
	return rc;
}

int mb_schema_msg_add(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
		      const struct mb_msg_in *in, struct mb_buf *tmp, uint64_t *mid, uint64_t *cn)
{
	struct mb_mailbox_rec m;
	struct mb_folder_rec f;
	struct mb_msg_rec r;
	int rc = mbx_folder_get(s, mailbox, folder, &m, &f);

	if (rc)
		return rc;
	rec_from_in(&r, folder, in);
	rc = write_new(s, mailbox, &m, &r, in->props, in->nprops, in->body, in->body_len, tmp);
	if (!rc)
		rc = mbx_put(s, mailbox, &m);
	if (!rc) {
		if (mid)
			*mid = r.mid;
		if (cn)
			*cn = r.cn;
	}
	return rc;
}

int mb_schema_msg_get(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_val *val,
		      struct mb_msg_rec *rec)
{
	uint8_t k[12];
	int rc = mb_tree_get(s->messages, k, k_msg(k, mailbox, mid), val);
	if (rc)
		return rc;
	return msg_parse(val->data, val->len, mid, rec);
}

int mb_schema_msg_body(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_val *out)
{
	uint8_t k[12];
	int rc = mb_tree_get(s->bodies, k, k_msg(k, mailbox, mid), out);
	if (rc == MB_ENOTFOUND) {
		/* no body stored: empty, if the message exists */
		size_t len;
		rc = mb_tree_get_len(s->messages, k, 12, &len);
		if (!rc)
			out->len = 0;
	}
	return rc;
}

int mb_schema_msg_exists(struct mb_schema *s, uint32_t mailbox, uint64_t mid, bool *exists)
{
	uint8_t k[12];
	size_t len;
	int rc = mb_tree_get_len(s->messages, k, k_msg(k, mailbox, mid), &len);
	if (rc == MB_ENOTFOUND) {
		*exists = false;
		return 0;
	}
	*exists = rc == 0;
	return rc;
}

int mb_schema_msg_update(struct mb_schema *s, uint32_t mailbox, uint64_t mid,
			 const struct mb_msg_in *in, struct mb_buf *tmp, uint64_t *cn)
{
	struct mb_mailbox_rec m;
	struct mb_msg_rec old, r;
	uint8_t k[12];
	int rc = mbx_msg_get(s, mailbox, mid, &m, &old);

	if (rc)
		return rc;
	rc = index_remove(s, mailbox, &old, 0);
	if (rc)
		return rc;
	rec_from_in(&r, old.folder, in);
	r.mid = mid;
	r.cn = m.next_cn++;
	rc = msg_encode(tmp, &r, in->props, in->nprops);
	if (rc)
		return rc;
	r.size = (uint32_t)(mb_buf_len(tmp) + in->body_len);
	le32(mb_buf_data(tmp) + 24, r.size);
	rc = msg_put_raw(s, mailbox, mid, tmp);
	if (!rc) {
		if (in->body_len)
			rc = mb_tree_put(s->bodies, k, k_msg(k, mailbox, mid), in->body, in->body_len, 0);
		else if (old.body_len)
			rc = mb_tree_del(s->bodies, k, k_msg(k, mailbox, mid));
	}
	if (!rc)
		rc = msg_refiled(s, mailbox, &m, &r, unread_of(r.flags) - unread_of(old.flags), cn);
	return rc;
}

int mb_schema_msg_set_flags(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint32_t flags,
			    uint64_t *cn)
{
	struct mb_mailbox_rec m;
	struct mb_msg_rec old;
	int rc = mbx_msg_get(s, mailbox, mid, &m, &old);

	if (rc)
		return rc;
	rc = index_remove(s, mailbox, &old, 0);
	if (rc)
		return rc;
	/* the row is in s->val: patch flags and cn in a copy */
	struct mb_msg_rec r = old;
	r.flags = flags;
	r.cn = m.next_cn++;
	uint8_t *copy = malloc(s->val.len);
	if (!copy)
		return MB_ENOMEM;
	memcpy(copy, s->val.data, s->val.len);
	le32(copy + 4, flags);
	le64(copy + 16, r.cn);
	uint8_t k[12];
	rc = mb_tree_put(s->messages, k, k_msg(k, mailbox, mid), copy, s->val.len, 0);
	free(copy);
	if (!rc)
		rc = msg_refiled(s, mailbox, &m, &r, unread_of(flags) - unread_of(old.flags), cn);
	return rc;
}

int mb_schema_msg_delete(struct mb_schema *s, uint32_t mailbox, uint64_t mid)
{
	struct mb_mailbox_rec m;
	struct mb_msg_rec old;
	uint8_t k[12];
	int rc = mbx_msg_get(s, mailbox, mid, &m, &old);

	if (rc)
		return rc;
	uint64_t cn = m.next_cn++;
	rc = index_remove(s, mailbox, &old, cn);
	if (!rc)
		rc = mb_tree_del(s->messages, k, k_msg(k, mailbox, mid));
	if (!rc && old.body_len) {
		rc = mb_tree_del(s->bodies, k, k_msg(k, mailbox, mid));
		if (rc == MB_ENOTFOUND)
			rc = 0;
	}
	if (!rc)
		rc = folder_touch(s, mailbox, old.folder, -1, -unread_of(old.flags), cn);
	if (!rc)
		rc = mbx_put(s, mailbox, &m);
	return rc;
}

int mb_schema_msg_move(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint32_t dst,
		       bool copy, struct mb_buf *tmp, uint64_t *new_mid)
{
	struct mb_mailbox_rec m;
	struct mb_folder_rec f;
	struct mb_msg_rec old;
	uint8_t k[12];
	int rc = mbx_folder_get(s, mailbox, dst, &m, &f);

	if (rc)
		return rc;
	rc = mb_schema_msg_get(s, mailbox, mid, &s->val, &old);
	if (rc)
		return rc;
	/* keep a private copy of the row: s->val is reused below */
	uint8_t *row = malloc(s->val.len);
	if (!row)
		return MB_ENOMEM;
	size_t rowlen = s->val.len;
	memcpy(row, s->val.data, rowlen);
	msg_parse(row, rowlen, mid, &old);

	if (copy) {
		struct mb_val body = MB_VAL_INIT;
		if (old.body_len) {
			rc = mb_tree_get(s->bodies, k, k_msg(k, mailbox, mid), &body);
		}
		if (!rc) {
			struct mb_msg_rec r = old;
			r.folder = dst;
			r.mid = m.next_mid++;
			r.cn = m.next_cn++;
			mb_buf_reset(tmp);
			rc = mb_buf_append(tmp, row, rowlen);
			if (!rc) {
				le32(mb_buf_data(tmp), dst);
				le64(mb_buf_data(tmp) + 16, r.cn);
				rc = msg_put_raw(s, mailbox, r.mid, tmp);
			}
			if (!rc && old.body_len)
				rc = mb_tree_put(s->bodies, k, k_msg(k, mailbox, r.mid), body.data,
						 body.len, 0);
			if (!rc)
				rc = index_add(s, mailbox, &r);
			if (!rc)
				rc = folder_touch(s, mailbox, dst, 1, unread_of(r.flags), r.cn);
			if (!rc && new_mid)
				*new_mid = r.mid;
		}
		mb_val_free(&body);
	} else {
		uint64_t tomb = m.next_cn++;
		struct mb_msg_rec r = old;
		r.folder = dst;
		r.cn = m.next_cn++;
		rc = index_remove(s, mailbox, &old, tomb);
		if (!rc)
			rc = folder_touch(s, mailbox, old.folder, -1, -unread_of(old.flags), tomb);
		if (!rc) {
			le32(row, dst);
			le64(row + 16, r.cn);
			rc = mb_tree_put(s->messages, k, k_msg(k, mailbox, mid), row, rowlen, 0);
		}
		if (!rc)
			rc = index_add(s, mailbox, &r);
		if (!rc)
			rc = folder_touch(s, mailbox, dst, 1, unread_of(r.flags), r.cn);
		if (!rc && new_mid)
			*new_mid = mid;
	}
	free(row);
	if (!rc)
		rc = mbx_put(s, mailbox, &m);
	return rc;
}

int mb_schema_folder_scan(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			  struct mb_scan_pos *pos, uint32_t max,
			  int (*cb)(void *arg, uint64_t mid), void *arg, bool *more)
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
		if (cb(arg, pos->mid))
			break;
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb_schema_folder_changes(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			     uint64_t since, uint32_t max,
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
		if (cb(arg, cn, mb_key_get_u64(v), v[8] != 0))
			break;
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb_schema_calendar_range(struct mb_schema *s, uint32_t mailbox, int64_t start, int64_t end,
			     uint32_t max,
			     int (*cb)(void *arg, uint64_t mid, int64_t start, int64_t end,
				       uint32_t busy),
			     void *arg)
{
	struct mb_cursor *c;
	uint8_t lo[20], hi[20];
	uint32_t n = 0;
	int64_t from = start > INT64_MIN + MB_SCHEMA_MAX_APPT_MS ? start - MB_SCHEMA_MAX_APPT_MS
								 : INT64_MIN;
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
