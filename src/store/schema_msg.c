/* schema_msg.c: messages of the mailbox tables: add, get, body, update,
 * flags, delete, move/copy, and their attachments.  A message lives in the
 * messages tree (record), bodies (body), by_time and by_cn (indexes of its
 * folder), calendar (appointments) and attachments/attach_data.
 * Invariants: a message's index entries match its record (folder, time, cn);
 * every write bumps the mailbox's next_cn and the folder's cn, count and
 * unread; on error the caller aborts the transaction (schema.h).
 */
#include "core/error.h"
#include "store/schema_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	r->nattach = p[53];
	r->shared = (p[54] & ROW_SHARED) != 0;
	size_t hdr = MSG_HDR;
	r->content_mbx = 0;
	r->content_mid = 0;
	if (r->shared) {
		if (len < MSG_HDR + CONTENT_REF)
			return MB_ECORRUPT;
		r->content_mbx = rd32(p + MSG_HDR);
		r->content_mid = rd64(p + MSG_HDR + 4);
		hdr += CONTENT_REF;
	}
	r->props = p + hdr;
	r->props_len = len - hdr;
	return 0;
}

/* The keys of a message's content: its body and its attachments' bytes
 * (schema_int.h: its own key, or the shared content's). */
static size_t k_body(uint8_t *k, uint32_t mailbox, const struct mb_msg_rec *r)
{
	return r->shared ? k_msg(k, r->content_mbx, r->content_mid) : k_msg(k, mailbox, r->mid);
}
static size_t k_adata(uint8_t *k, uint32_t mailbox, const struct mb_msg_rec *r, uint16_t num)
{
	return r->shared ? k_att(k, r->content_mbx, r->content_mid, num)
			 : k_att(k, mailbox, r->mid, num);
}

/* The number of rows sharing r's content (1 when it is not shared). */
static int instances_get(struct mb_schema *s, const struct mb_msg_rec *r, uint32_t *n)
{
	*n = 1;
	if (!r->shared)
		return 0;
	uint8_t k[12];
	int rc = mb_tree_get(s->instances, k, k_msg(k, r->content_mbx, r->content_mid), &s->val3);
	if (rc == MB_ENOTFOUND)
		return 0;
	if (rc)
		return rc;
	if (s->val3.len != 4)
		return MB_ECORRUPT;
	*n = rd32(s->val3.data);
	return 0;
}

static int instances_put(struct mb_schema *s, const struct mb_msg_rec *r, uint32_t n)
{
	uint8_t k[12], v[4];
	size_t kl = k_msg(k, r->content_mbx, r->content_mid);
	if (n > 1) {
		le32(v, n);
		return mb_tree_put(s->instances, k, kl, v, 4, 0);
	}
	int rc = mb_tree_del(s->instances, k, kl);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

/* One row more shares r's content. */
static int instances_add(struct mb_schema *s, const struct mb_msg_rec *r)
{
	uint32_t n;
	int rc = instances_get(s, r, &n);
	return rc ? rc : instances_put(s, r, n + 1);
}

/* Row r lets go of its content: one sharer fewer, or the body and the
 * attachments' bytes deleted when it was the last. */
static int content_release(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r)
{
	uint32_t n;
	int rc = instances_get(s, r, &n);
	if (rc)
		return rc;
	if (n > 1)
		return instances_put(s, r, n - 1);
	uint8_t k[14];
	if (r->body_len) {
		rc = mb_tree_del(s->bodies, k, k_body(k, mailbox, r));
		if (rc && rc != MB_ENOTFOUND)
			return rc;
	}
	for (uint16_t i = 1; i <= r->nattach; i++) {
		rc = mb_tree_del(s->attach_data, k, k_adata(k, mailbox, r, i));
		if (rc && rc != MB_ENOTFOUND)
			return rc;
	}
	return r->shared ? instances_put(s, r, 0) : 0;
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
	h[53] = r->nattach;
	h[54] = r->shared ? ROW_SHARED : 0;
	mb_buf_reset(tmp);
	rc = mb_buf_append(tmp, h, sizeof(h));
	if (!rc && r->shared) {
		uint8_t ref[CONTENT_REF];
		le32(ref, r->content_mbx);
		le64(ref + 4, r->content_mid);
		rc = mb_buf_append(tmp, ref, sizeof(ref));
	}
	if (!rc)
		rc = mb_props_encode(tmp, props, nprops);
	return rc;
}

/* PR_MESSAGE_SIZE of an encoded row (tmp) with body_len and att bytes of
 * body and attachments: a shared row's content reference is storage, not
 * message, so both copies of one message have one size. */
static uint32_t msg_size(const struct mb_buf *tmp, const struct mb_msg_rec *r, uint64_t att)
{
	uint64_t size = mb_buf_len(tmp) - (r->shared ? CONTENT_REF : 0) + r->body_len + att;
	return size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
}

static int msg_put_raw(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_buf *tmp)
{
	uint8_t k[12];
	/* patch the size now that the props length is known */
	return mb_tree_put(s->messages, k, k_msg(k, mailbox, mid), mb_buf_data(tmp),
			   mb_buf_len(tmp), 0);
}

static int index_add(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r)
{
	uint8_t k[24], v[12];
	int rc =
	    mb_tree_put(s->by_time, k, k_time(k, mailbox, r->folder, r->time, r->mid), "", 0, 0);
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
	return mb__schema_folder_put(s, mailbox, &f);
}

static int unread_of(uint32_t flags) { return (flags & MB_MSGFLAG_READ) ? 0 : 1; }

/* ---- attachments ---- */

/* Attachment num of row r: its row in attachments (kind, size, name), and
 * its bytes at r's content key when data is not NULL (a row that shares
 * stored content writes the first only). */
static int attach_put(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r,
		      uint16_t num, uint8_t kind, struct mb_bytes name, const void *data,
		      uint32_t len)
{
	uint8_t k[14], meta[5 + MB_PROTO_MAX_NAME];
	uint32_t nl = name.len > MB_PROTO_MAX_NAME ? MB_PROTO_MAX_NAME : name.len;
	meta[0] = kind;
	le32(meta + 1, len);
	if (nl)
		memcpy(meta + 5, name.p, nl);
	int rc = mb_tree_put(s->attach, k, k_att(k, mailbox, r->mid, num), meta, 5 + nl, 0);
	if (!rc && data)
		rc = mb_tree_put(s->attach_data, k, k_adata(k, mailbox, r, num), data, len, 0);
	return rc;
}

static int attach_meta_del(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint16_t num)
{
	uint8_t k[14];
	int rc = mb_tree_del(s->attach, k, k_att(k, mailbox, mid, num));
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb_schema_attach_get(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint16_t num,
			 struct mb_attach_rec *out)
{
	uint8_t k[14];
	int rc = mb_tree_get(s->attach, k, k_att(k, mailbox, mid, num), &s->val2);
	if (rc)
		return rc;
	const uint8_t *d = s->val2.data;
	if (s->val2.len < 5)
		return MB_ECORRUPT;
	memset(out, 0, sizeof(*out));
	out->num = num;
	out->kind = d[0];
	out->size = rd32(d + 1);
	size_t nl = s->val2.len - 5;
	if (nl > MB_PROTO_MAX_NAME)
		nl = MB_PROTO_MAX_NAME;
	memcpy(out->name, d + 5, nl);
	out->name[nl] = '\0';
	return 0;
}

int mb_schema_attach_data(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint16_t num,
			  struct mb_val *out)
{
	struct mb_msg_rec r;
	int rc = mb_schema_msg_get(s, mailbox, mid, &s->val3, &r);
	return rc ? rc : mb_schema_rec_attach_data(s, mailbox, &r, num, out);
}

int mb_schema_rec_attach_data(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r,
			      uint16_t num, struct mb_val *out)
{
	uint8_t k[14];
	if (num < 1 || num > r->nattach)
		return MB_ENOTFOUND;
	return mb_tree_get(s->attach_data, k, k_adata(k, mailbox, r, num), out);
}

/* A new row r in mailbox (mid and cn taken from m), with its content
 * (body, attachments' bytes) stored at r's content key when store. */
static int write_new(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *m,
		     struct mb_msg_rec *r, const struct mb_prop *props, uint16_t nprops,
		     const void *body, uint32_t body_len, const struct mb_attach_in *attach,
		     uint16_t nattach, bool store, struct mb_buf *tmp)
{
	uint8_t k[12];
	int rc;

	r->mid = m->next_mid++;
	r->cn = m->next_cn++;
	if (nattach > MB_SCHEMA_MAX_ATTACH)
		return MB_ETOOBIG;
	r->nattach = (uint8_t)nattach;
	rc = msg_encode(tmp, r, props, nprops);
	if (rc)
		return rc;
	uint64_t att = 0;
	for (uint16_t i = 0; i < nattach; i++)
		att += attach[i].len;
	r->size = msg_size(tmp, r, att);
	le32(mb_buf_data(tmp) + 24, r->size);
	rc = msg_put_raw(s, mailbox, r->mid, tmp);
	if (!rc && body_len && store)
		rc = mb_tree_put(s->bodies, k, k_body(k, mailbox, r), body, body_len, 0);
	for (uint16_t i = 0; !rc && i < nattach; i++)
		rc = attach_put(s, mailbox, r, (uint16_t)(i + 1), attach[i].kind, attach[i].name,
				store ? (attach[i].data ? attach[i].data : "") : NULL,
				attach[i].len);
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
	int rc = mb__schema_mbx_get(s, mailbox, m);
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
		rc = mb__schema_mbx_put(s, mailbox, m);
	if (!rc && cn)
		*cn = r->cn;
	return rc;
}

/* A new message in folder of mailbox: its own content, or (c given) the
 * content of a single-instance delivery, stored by its first row. */
static int msg_add(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
		   const struct mb_msg_in *in, struct mb_schema_content *c, struct mb_buf *tmp,
		   uint64_t *mid, uint64_t *cn)
{
	struct mb_mailbox_rec m;
	struct mb_folder_rec f;
	struct mb_msg_rec r;
	if (mailbox & CONTENT_BIT)
		return MB_EINVAL;
	int rc = mb__schema_mbx_folder_get(s, mailbox, folder, &m, &f);
	if (rc)
		return rc;
	rec_from_in(&r, folder, in);
	bool store = !c || !c->stored;
	if (c) {
		if (store) {
			/* the content's key: this delivery's first row, marked */
			c->mbx = mailbox | CONTENT_BIT;
			c->mid = m.next_mid;
		}
		r.shared = true;
		r.content_mbx = c->mbx;
		r.content_mid = c->mid;
	}
	rc = write_new(s, mailbox, &m, &r, in->props, in->nprops, in->body, in->body_len,
		       in->attach, in->nattach, store, tmp);
	if (!rc && !store)
		rc = instances_add(s, &r);
	if (!rc)
		rc = mb__schema_mbx_put(s, mailbox, &m);
	if (!rc) {
		if (c)
			c->stored = true;
		if (mid)
			*mid = r.mid;
		if (cn)
			*cn = r.cn;
	}
	return rc;
}

int mb_schema_msg_add(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
		      const struct mb_msg_in *in, struct mb_buf *tmp, uint64_t *mid, uint64_t *cn)
{
	return msg_add(s, mailbox, folder, in, NULL, tmp, mid, cn);
}

int mb_schema_msg_add_shared(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			     const struct mb_msg_in *in, struct mb_schema_content *c,
			     struct mb_buf *tmp, uint64_t *mid, uint64_t *cn)
{
	return msg_add(s, mailbox, folder, in, c, tmp, mid, cn);
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

int mb_schema_rec_body(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r,
		       struct mb_val *out)
{
	uint8_t k[12];
	out->len = 0;
	if (!r->body_len)
		return 0; /* no body: empty */
	int rc = mb_tree_get(s->bodies, k, k_body(k, mailbox, r), out);
	/* a row that names a body the tree lacks is damaged (mailbench check
	 * reports it too): never served as an empty body */
	return rc == MB_ENOTFOUND ? MB_ECORRUPT : rc;
}

int mb_schema_msg_body(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_val *out)
{
	struct mb_msg_rec r;
	int rc = mb_schema_msg_get(s, mailbox, mid, &s->val3, &r);
	return rc ? rc : mb_schema_rec_body(s, mailbox, &r, out);
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
	uint8_t k[14];
	int rc = mbx_msg_get(s, mailbox, mid, &m, &old);

	if (rc)
		return rc;
	rc = index_remove(s, mailbox, &old, 0);
	if (rc)
		return rc;
	rec_from_in(&r, old.folder, in);
	r.mid = mid;
	r.cn = m.next_cn++;
	r.nattach = old.nattach; /* an update keeps the attachments */
	if (in->keep_body) {
		r.body_len = old.body_len;
		r.shared = old.shared;
		r.content_mbx = old.content_mbx;
		r.content_mid = old.content_mid;
	} else if (old.shared) {
		/* a new body: the row takes copies of the attachments' bytes
		 * and lets go of the shared content */
		for (uint16_t i = 1; !rc && i <= old.nattach; i++) {
			rc = mb_tree_get(s->attach_data, k, k_adata(k, mailbox, &old, i), &s->val2);
			if (!rc)
				rc = mb_tree_put(s->attach_data, k, k_att(k, mailbox, mid, i),
						 s->val2.data, s->val2.len, 0);
		}
		if (!rc)
			rc = content_release(s, mailbox, &old);
		if (rc)
			return rc;
	}
	uint64_t att = 0;
	for (uint16_t i = 1; i <= old.nattach; i++) {
		struct mb_attach_rec a;
		if (mb_schema_attach_get(s, mailbox, mid, i, &a) == 0)
			att += a.size;
	}
	rc = msg_encode(tmp, &r, in->props, in->nprops);
	if (rc)
		return rc;
	r.size = msg_size(tmp, &r, att);
	le32(mb_buf_data(tmp) + 24, r.size);
	rc = msg_put_raw(s, mailbox, mid, tmp);
	if (!rc && !in->keep_body) {
		if (in->body_len)
			rc = mb_tree_put(s->bodies, k, k_msg(k, mailbox, mid), in->body,
					 in->body_len, 0);
		else if (old.body_len && !old.shared)
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
		rc = content_release(s, mailbox, &old);
	for (uint16_t i = 1; !rc && i <= old.nattach; i++)
		rc = attach_meta_del(s, mailbox, mid, i);
	if (!rc)
		rc = mb_tree_del(s->messages, k, k_msg(k, mailbox, mid));
	if (!rc)
		rc = folder_touch(s, mailbox, old.folder, -1, -unread_of(old.flags), cn);
	if (!rc)
		rc = mb__schema_mbx_put(s, mailbox, &m);
	return rc;
}

int mb_schema_msg_move(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint32_t dst, bool copy,
		       struct mb_buf *tmp, uint64_t *new_mid)
{
	struct mb_mailbox_rec m;
	struct mb_folder_rec f;
	struct mb_msg_rec old;
	uint8_t k[12];
	int rc = mb__schema_mbx_folder_get(s, mailbox, dst, &m, &f);

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
		/* a copy of a row that shares stored content shares it too (one
		 * more instance); any other copy gets its own content */
		struct mb_val body = MB_VAL_INIT;
		if (old.body_len && !old.shared) {
			rc = mb_tree_get(s->bodies, k, k_msg(k, mailbox, mid), &body);
		}
		if (!rc && old.shared)
			rc = instances_add(s, &old);
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
			if (!rc && old.body_len && !old.shared)
				rc = mb_tree_put(s->bodies, k, k_msg(k, mailbox, r.mid), body.data,
						 body.len, 0);
			for (uint16_t i = 1; !rc && i <= old.nattach; i++) {
				struct mb_attach_rec a;
				uint8_t ka[14];
				rc = mb_schema_attach_get(s, mailbox, mid, i, &a);
				if (!rc && !old.shared)
					rc = mb_tree_get(s->attach_data, ka,
							 k_adata(ka, mailbox, &old, i), &body);
				if (!rc)
					rc = attach_put(s, mailbox, &r, i, a.kind, mb_str(a.name),
							old.shared ? NULL : body.data,
							old.shared ? a.size : (uint32_t)body.len);
			}
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
		rc = mb__schema_mbx_put(s, mailbox, &m);
	return rc;
}

/* ---- the content check ---- */

struct cref {
	uint32_t mbx;
	uint64_t mid;
};

static int cmp_cref(const void *a, const void *b)
{
	const struct cref *x = a, *y = b;
	if (x->mbx != y->mbx)
		return x->mbx < y->mbx ? -1 : 1;
	return x->mid < y->mid ? -1 : x->mid > y->mid;
}

/* The (mailbox, mid) at the head of a key (k_msg's layout). */
static void key_msg(const void *key, uint32_t *mbx, uint64_t *mid)
{
	const uint8_t *k = key;
	*mbx = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
	*mid = 0;
	for (int i = 0; i < 8; i++)
		*mid = *mid << 8 | k[4 + i];
}

static bool cref_has(const struct cref *v, size_t n, uint32_t mbx, uint64_t mid)
{
	struct cref k = {mbx, mid};
	return n && bsearch(&k, v, n, sizeof(*v), cmp_cref) != NULL;
}

static void content_problem(struct mb_content_report *rep, void (*cb)(void *, const char *),
			    void *arg, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void content_problem(struct mb_content_report *rep, void (*cb)(void *, const char *),
			    void *arg, const char *where, const char *fmt, ...)
{
	char what[256], line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s: %s", where, what);
	rep->problems++;
	if (cb)
		cb(arg, line);
}

static bool key_present(struct mb_tree *t, const uint8_t *k, size_t kl, int *rc)
{
	size_t len;
	int r = mb_tree_get_len(t, k, kl, &len);
	if (r && r != MB_ENOTFOUND)
		*rc = r;
	return r == 0;
}

/* The keys of tree t with the content bit, each of which must be in v. */
static int orphans(struct mb_tree *t, const char *what, const struct cref *v, size_t n,
		   struct mb_content_report *rep, void (*cb)(void *, const char *), void *arg,
		   const char *where)
{
	struct mb_cursor *c;
	uint8_t lo[4];
	mb_key_u32(lo, CONTENT_BIT);
	int rc = mb_cursor_open(t, &c);
	if (rc)
		return rc;
	for (rc = mb_cursor_range(c, lo, 4, NULL, 0); rc == 0; rc = mb_cursor_next(c)) {
		const void *kp;
		size_t kl;
		rc = mb_cursor_key(c, &kp, &kl);
		if (rc)
			break;
		if (kl < 12)
			continue;
		uint32_t mbx;
		uint64_t mid;
		key_msg(kp, &mbx, &mid);
		if (!cref_has(v, n, mbx, mid))
			content_problem(rep, cb, arg, where,
					"%s of shared content %u/%" PRIu64 ": no row refers to it",
					what, mbx & ~CONTENT_BIT, mid);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}

int mb_schema_check_content(struct mb_schema *s, const char *where,
			    void (*cb)(void *arg, const char *msg), void *arg,
			    struct mb_content_report *rep)
{
	struct mb_cursor *c;
	struct cref *v = NULL;
	size_t n = 0, cap = 0;
	int rc = mb_cursor_open(s->messages, &c);
	if (rc)
		return rc;
	/* each row: its content present; the shared ones noted */
	for (rc = mb_cursor_first(c); rc == 0; rc = mb_cursor_next(c)) {
		const void *kp;
		size_t kl;
		struct mb_msg_rec r;
		rc = mb_cursor_key(c, &kp, &kl);
		if (!rc && kl != 12)
			rc = MB_ECORRUPT;
		if (rc)
			break;
		uint32_t mbx;
		uint64_t mid;
		key_msg(kp, &mbx, &mid);
		rc = mb_cursor_value(c, &s->val3);
		if (!rc)
			rc = msg_parse(s->val3.data, s->val3.len, mid, &r);
		if (rc)
			break;
		rep->rows++;
		uint8_t k[14];
		if (r.shared) {
			rep->shared_rows++;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 256;
				struct cref *nv = realloc(v, nc * sizeof(*v));
				if (!nv) {
					rc = MB_ENOMEM;
					break;
				}
				v = nv;
				cap = nc;
			}
			v[n++] = (struct cref){r.content_mbx, r.content_mid};
		}
		if (r.body_len && !key_present(s->bodies, k, k_body(k, mbx, &r), &rc))
			content_problem(rep, cb, arg, where, "message %u/%" PRIu64 ": body missing",
					mbx, mid);
		for (uint16_t i = 1; i <= r.nattach; i++) {
			if (!key_present(s->attach, k, k_att(k, mbx, mid, i), &rc))
				content_problem(rep, cb, arg, where,
						"message %u/%" PRIu64
						": attachment %u's row missing",
						mbx, mid, i);
			if (!key_present(s->attach_data, k, k_adata(k, mbx, &r, i), &rc))
				content_problem(rep, cb, arg, where,
						"message %u/%" PRIu64
						": attachment %u's bytes missing",
						mbx, mid, i);
		}
		if (rc)
			break;
	}
	mb_cursor_close(c);
	if (rc == MB_ENOTFOUND)
		rc = 0;
	/* each shared content: its count is its rows */
	if (!rc && n)
		qsort(v, n, sizeof(*v), cmp_cref);
	for (size_t i = 0; !rc && i < n;) {
		size_t j = i;
		while (j < n && v[j].mbx == v[i].mbx && v[j].mid == v[i].mid)
			j++;
		rep->contents++;
		struct mb_msg_rec r = {
		    .shared = true, .content_mbx = v[i].mbx, .content_mid = v[i].mid};
		uint32_t count;
		rc = instances_get(s, &r, &count);
		if (!rc && count != j - i)
			content_problem(rep, cb, arg, where,
					"shared content %u/%" PRIu64
					": counted %u instances, %zu rows refer to it",
					v[i].mbx & ~CONTENT_BIT, v[i].mid, count, j - i);
		i = j;
	}
	/* nothing shared is left without a row */
	if (!rc)
		rc = orphans(s->instances, "the count", v, n, rep, cb, arg, where);
	if (!rc)
		rc = orphans(s->bodies, "the body", v, n, rep, cb, arg, where);
	if (!rc)
		rc = orphans(s->attach_data, "an attachment's bytes", v, n, rep, cb, arg, where);
	free(v);
	return rc;
}
