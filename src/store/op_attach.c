/* op_attach.c: attachments and streams: creating and saving an
 * attachment into a draft, a stored message's attachment table (and its
 * rows), opening an attachment, and reading a long property in slices.
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t attach_cols[] = {MB_PR_ATTACH_NUM, MB_PR_ATTACH_FILENAME, MB_PR_ATTACH_SIZE,
				       MB_PR_ATTACH_KIND};

int mb__op_create_attach(struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *m = mb__handle_find(r->sess, op->u.attach.msg);
	if (!m)
		return MB_ENOTFOUND;
	if (m->kind != H_DRAFT)
		return MB_ESTATE;
	if (m->natt >= MB_SCHEMA_MAX_ATTACH)
		return MB_EFULL;
	uint32_t parent = m->id;
	uint16_t num = (uint16_t)(m->natt + 1);
	struct handle *h;
	int rc = mb__handle_new(r->sess, op->u.attach.handle, H_ATTACH_DRAFT, &h);
	if (rc)
		return rc;
	h->parent = parent;
	h->num = num;
	res->u.table.rows = num;
	return 0;
}

/* SaveChangesAttachment: the attachment joins its draft (the handle is
 * released); the draft's save or submit writes it. */
int mb__op_save_attach(struct req *r, struct mb_op *op)
{
	struct handle *h = mb__handle_find(r->sess, op->u.save.handle);
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_ATTACH_DRAFT)
		return MB_ESTATE;
	struct handle *m = mb__handle_find(r->sess, h->parent);
	if (!m || m->kind != H_DRAFT)
		return MB_ENOTFOUND;
	if (m->natt >= MB_SCHEMA_MAX_ATTACH)
		return MB_EFULL;
	const struct mb_prop *data = mb__handle_prop(h, MB_PR_ATTACH_DATA_BIN);
	const struct mb_prop *name = mb__handle_prop(h, MB_PR_ATTACH_FILENAME);
	const struct mb_prop *kind = mb__handle_prop(h, MB_PR_ATTACH_KIND);
	void *na = realloc(m->att, (size_t)(m->natt + 1) * sizeof(*m->att));
	if (!na)
		return MB_ENOMEM;
	m->att = na;
	struct draft_attach *a = &m->att[m->natt];
	memset(a, 0, sizeof(*a));
	a->kind = kind ? (uint8_t)kind->v.i : 0;
	/* the name is a C string from here on: up to its first NUL */
	size_t nl = name ? strnlen((const char *)name->v.b.p, name->v.b.len) : 0;
	a->name = malloc(nl + 1);
	a->len = data ? data->v.b.len : 0;
	a->data = mb__dup_bytes(data ? data->v.b.p : NULL, a->len);
	if (!a->name || !a->data) {
		free(a->name);
		free(a->data);
		return MB_ENOMEM;
	}
	if (nl)
		memcpy(a->name, name->v.b.p, nl);
	a->name[nl] = '\0';
	m->natt++;
	mb__handle_release(r->sess, h);
	return 0;
}

/* The stored message an op names by handle (an open message). */
static int stored_msg(struct dbw *w, struct req *r, uint32_t handle, struct mb_msg_rec *rec)
{
	struct handle *m = mb__handle_find(r->sess, handle);
	if (!m)
		return MB_ENOTFOUND;
	if (m->kind != H_MESSAGE)
		return MB_ESTATE;
	return mb_schema_msg_get(w->schema, r->sess->mailbox, m->mid, &w->val, rec);
}

int mb__op_get_attach_table(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct mb_msg_rec rec;
	int rc = stored_msg(w, r, op->u.attach.msg, &rec);
	if (rc)
		return rc;
	struct handle *h;
	uint64_t mid = rec.mid;
	uint8_t n = rec.nattach;
	rc = mb__handle_new(r->sess, op->u.attach.handle, H_ATTACH_TABLE, &h);
	if (rc)
		return rc;
	h->mid = mid;
	h->num = 0;
	h->ncols = sizeof(attach_cols) / sizeof(attach_cols[0]);
	memcpy(h->cols, attach_cols, sizeof(attach_cols));
	res->u.table.rows = n;
	return 0;
}

static int attach_value(struct req *r, const struct mb_attach_rec *a, uint32_t tag,
			struct mb_prop *out)
{
	memset(out, 0, sizeof(*out));
	out->tag = tag;
	switch (tag) {
	case MB_PR_ATTACH_NUM:
		out->v.i = a->num;
		return 0;
	case MB_PR_ATTACH_SIZE:
		out->v.i = a->size;
		return 0;
	case MB_PR_ATTACH_KIND:
		out->v.i = a->kind;
		return 0;
	case MB_PR_ATTACH_FILENAME:
		return mb__ar_bytes(r, a->name, strlen(a->name), &out->v.b);
	}
	out->tag = (tag & 0xFFFF0000u) | MB_PT_ERROR;
	out->v.i = MB_ENOTFOUND;
	return 0;
}

int mb__op_open_attach(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct mb_msg_rec rec;
	int rc = stored_msg(w, r, op->u.attach.msg, &rec);
	if (rc)
		return rc;
	if (op->u.attach.num == 0 || op->u.attach.num > rec.nattach)
		return MB_ENOTFOUND;
	struct mb_attach_rec a;
	rc = mb_schema_attach_get(w->schema, r->sess->mailbox, rec.mid, (uint16_t)op->u.attach.num,
				  &a);
	if (rc)
		return rc;
	uint16_t n = sizeof(attach_cols) / sizeof(attach_cols[0]);
	struct mb_prop *vals = mb__ar(r, n * sizeof(*vals));
	if (!vals)
		return MB_ETOOBIG;
	for (uint16_t i = 0; i < n && !rc; i++)
		rc = attach_value(r, &a, attach_cols[i], &vals[i]);
	if (rc)
		return rc;
	struct handle *h;
	uint64_t mid = rec.mid;
	rc = mb__handle_new(r->sess, op->u.attach.handle, H_ATTACH, &h);
	if (rc)
		return rc;
	h->mid = mid;
	h->num = (uint16_t)op->u.attach.num;
	res->u.props.n = n;
	res->u.props.props = vals;
	return 0;
}

/* OpenStream: the whole value is read once (a long value is one B+tree
 * value) and kept with the handle; ReadStream hands out slices. */
int mb__op_open_stream(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *o = mb__handle_find(r->sess, op->u.open_stream.obj);
	uint32_t mailbox = r->sess->mailbox;
	int rc;
	if (!o)
		return MB_ENOTFOUND;
	if (o->kind == H_MESSAGE && op->u.open_stream.tag == MB_PR_BODY)
		rc = mb_schema_msg_body(w->schema, mailbox, o->mid, &w->val2);
	else if (o->kind == H_ATTACH && op->u.open_stream.tag == MB_PR_ATTACH_DATA_BIN)
		rc = mb_schema_attach_data(w->schema, mailbox, o->mid, o->num, &w->val2);
	else
		return MB_EINVAL;
	if (rc)
		return rc;
	if (w->val2.len > MB_PROTO_MAX_FRAME)
		return MB_ETOOBIG;
	rc = mb__held_room(r->sess, w->val2.len);
	if (rc)
		return rc;
	uint8_t *copy = mb__dup_bytes(w->val2.data, w->val2.len);
	if (!copy)
		return MB_ENOMEM;
	struct handle *h;
	rc = mb__handle_new(r->sess, op->u.open_stream.handle, H_STREAM, &h);
	if (rc) {
		free(copy);
		return rc;
	}
	h->data = copy;
	h->len = (uint32_t)w->val2.len;
	h->spos = 0;
	res->u.table.rows = h->len;
	return 0;
}

int mb__op_read_stream(struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct handle *h = mb__handle_find(r->sess, op->u.read_stream.handle);
	if (!h)
		return MB_ENOTFOUND;
	if (h->kind != H_STREAM)
		return MB_ESTATE;
	return mb__stream_read(r, h->data, h->len, &h->spos, op->u.read_stream.max, res);
}

int mb__stream_read(struct req *r, const uint8_t *data, uint32_t len, uint32_t *pos, uint32_t max,
		    struct mb_op_reply *res)
{
	uint32_t n = max;
	if (n > MB_PROTO_MAX_STREAM)
		n = MB_PROTO_MAX_STREAM;
	if (n > len - *pos)
		n = len - *pos;
	int rc = mb__budget(r, n);
	if (!rc)
		rc = mb__ar_bytes(r, n ? data + *pos : data, n, &res->u.stream.data);
	if (!rc)
		*pos += n;
	return rc;
}

/* QueryRows on an attachment table. */
int mb__attach_query_rows(struct dbw *w, struct req *r, struct handle *h, uint32_t max,
			  struct mb_op_reply *res)
{
	int rc = 0;
	bool more = false;
	struct mb_msg_rec rec;
	rc = mb_schema_msg_get(w->schema, r->sess->mailbox, h->mid, &w->val, &rec);
	if (rc)
		return rc;
	uint32_t left = rec.nattach > h->num ? rec.nattach - h->num : 0;
	uint32_t n = left < max ? left : max;
	more = left > n;
	if (mb__ar_rows(r, res, n, h->ncols))
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < n && !rc; i++) {
		struct mb_attach_rec a;
		rc = mb_schema_attach_get(w->schema, r->sess->mailbox, h->mid,
					  (uint16_t)(h->num + i + 1), &a);
		for (uint16_t c = 0; c < h->ncols && !rc; c++)
			rc = attach_value(r, &a, h->cols[c],
					  &res->u.rows.vals[(size_t)i * h->ncols + c]);
	}
	if (!rc)
		h->num = (uint16_t)(h->num + n);
	res->u.rows.nrows = n;
	res->u.rows.more = more ? 1 : 0;
	return rc;
}
