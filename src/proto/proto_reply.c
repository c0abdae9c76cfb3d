/* proto_reply.c: reply payloads (docs/PROTOCOL.md, "Replies"): every op's
 * reply body (status, then the op's fields; rows as a column count, a row
 * count and the "more" flag) encoded and decoded, each body length-prefixed
 * and consumed exactly.  Invariant as proto_req.c.
 */
#include <string.h>

#include "core/error.h"
#include "proto/proto_int.h"

static void enc_rows(struct wr *w, uint16_t ncols, uint32_t nrows, uint8_t more,
		     const struct mb_prop *vals)
{
	if (ncols > MB_PROTO_MAX_PROPS || nrows > MB_PROTO_MAX_ROWS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, ncols);
	w_u32(w, nrows);
	w_u8(w, more);
	for (size_t i = 0; i < (size_t)ncols * nrows; i++)
		w_prop(w, &vals[i]);
}

static void enc_reply_body(struct wr *w, const struct mb_op_reply *o)
{
	if (o->status)
		return;
	switch (o->code) {
	case MB_OP_LOGON_CHALLENGE:
		w_bytes(w, o->u.challenge.nonce, MB_NONCE_LEN);
		w_bytes(w, o->u.challenge.salt, MB_SALT_LEN);
		w_u32(w, o->u.challenge.iterations);
		break;
	case MB_OP_LOGON:
		w_u32(w, o->u.logon.mailbox);
		w_u32(w, o->u.logon.flags);
		w_u32(w, o->u.logon.compress_min);
		break;
	case MB_OP_LOGOFF:
	case MB_OP_RELEASE:
	case MB_OP_SET_COLUMNS:
	case MB_OP_SORT_TABLE:
	case MB_OP_CREATE_MESSAGE:
	case MB_OP_SET_PROPS:
	case MB_OP_SAVE_ATTACH:
	case MB_OP_REGISTER_NOTIFY:
	case MB_OP_SYNC_CONFIGURE:
	case MB_OP_SYNC_STATE_BEGIN:
	case MB_OP_SYNC_STATE_CONTINUE:
	case MB_OP_SYNC_STATE_END:
	case MB_OP_SYNC_OPEN_COLLECTOR:
		break;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
	case MB_OP_OPEN_STREAM:
	case MB_OP_GET_AB_TABLE:
	case MB_OP_SYNC_GET_STATE:
		w_u32(w, o->u.table.rows);
		break;
	case MB_OP_OPEN_ATTACH:
		w_props(w, o->u.props.props, o->u.props.n);
		break;
	case MB_OP_READ_STREAM:
	case MB_OP_FT_GET_BUFFER:
		w_lstr(w, o->u.stream.data);
		break;
	case MB_OP_RESOLVE_NAMES:
		if (o->u.resolve.n > MB_PROTO_MAX_PROPS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u16(w, o->u.resolve.n);
		for (uint16_t i = 0; i < o->u.resolve.n; i++) {
			const struct mb_resolved *v = &o->u.resolve.v[i];
			w_u32(w, (uint32_t)v->status);
			w_u8(w, v->type);
			w_str(w, v->name);
			w_str(w, v->display);
		}
		break;
	case MB_OP_OPEN_FOLDER:
		w_u64(w, o->u.folder.fid);
		w_u64(w, o->u.folder.parent);
		w_str(w, o->u.folder.name);
		w_u32(w, o->u.folder.count);
		w_u32(w, o->u.folder.unread);
		w_u32(w, o->u.folder.subfolders);
		w_u64(w, o->u.folder.cn);
		break;
	case MB_OP_GET_HIERARCHY_TABLE:
	case MB_OP_GET_CONTENTS_TABLE:
		w_u32(w, o->u.table.rows);
		break;
	case MB_OP_QUERY_ROWS:
	case MB_OP_CALENDAR_RANGE:
	case MB_OP_LIST_CONTACTS:
		enc_rows(w, o->u.rows.ncols, o->u.rows.nrows, o->u.rows.more, o->u.rows.vals);
		break;
	case MB_OP_OPEN_MESSAGE:
	case MB_OP_GET_PROPS:
		w_props(w, o->u.props.props, o->u.props.n);
		break;
	case MB_OP_SAVE_CHANGES:
	case MB_OP_CREATE_CONTACT:
		w_u64(w, o->u.saved.mid);
		w_u64(w, o->u.saved.cn);
		break;
	case MB_OP_SUBMIT:
		if (o->u.submit.n > MB_PROTO_MAX_IDS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u64(w, o->u.submit.mid);
		w_u32(w, o->u.submit.databases);
		w_u32(w, o->u.submit.n);
		for (uint32_t i = 0; i < o->u.submit.n; i++) {
			w_u32(w, o->u.submit.dl[i].mailbox);
			w_u64(w, o->u.submit.dl[i].mid);
		}
		break;
	case MB_OP_DELETE_MESSAGES:
		w_u32(w, o->u.count.n);
		break;
	case MB_OP_MOVE_COPY:
		w_mids(w, o->u.moved.mids, o->u.moved.n);
		break;
	case MB_OP_FREEBUSY:
		if (o->u.freebusy.n > MB_PROTO_MAX_IDS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u32(w, o->u.freebusy.n);
		for (uint32_t i = 0; i < o->u.freebusy.n; i++) {
			w_u64(w, (uint64_t)o->u.freebusy.blocks[i].start);
			w_u64(w, (uint64_t)o->u.freebusy.blocks[i].end);
			w_u32(w, o->u.freebusy.blocks[i].status);
		}
		break;
	case MB_OP_SYNC_DOWNLOAD:
		if (o->u.sync_down.n > MB_PROTO_MAX_ROWS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u64(w, o->u.sync_down.watermark);
		w_u8(w, o->u.sync_down.more);
		w_u32(w, o->u.sync_down.content);
		w_u32(w, o->u.sync_down.n);
		for (uint32_t i = 0; i < o->u.sync_down.n; i++) {
			const struct mb_sync_item *it = &o->u.sync_down.items[i];
			w_u64(w, it->mid);
			w_u64(w, it->cn);
			w_u8(w, it->deleted ? 1 : 0);
			if (!it->deleted)
				w_props(w, it->props, it->nprops);
		}
		break;
	case MB_OP_SYNC_UPLOAD:
		w_u64(w, o->u.sync_up.cn);
		w_mids(w, o->u.sync_up.mids, o->u.sync_up.n);
		break;
	default:
		w_fail(w, MB_EINVAL);
	}
}

int mb_reply_encode_payload(struct mb_buf *out, const struct mb_reply *r)
{
	struct wr w = {out, 0};

	if (r->nops > MB_PROTO_MAX_OPS)
		return MB_EINVAL;
	w_u16(&w, r->nops);
	w_u16(&w, 0);
	for (uint16_t i = 0; i < r->nops; i++) {
		w_u8(&w, r->ops[i].code);
		w_u32(&w, (uint32_t)r->ops[i].status);
		size_t slot = w_len_slot(&w);
		enc_reply_body(&w, &r->ops[i]);
		w_len_fill(&w, slot);
	}
	return w.err;
}

static void dec_rows(struct rd *r, struct mb_op_reply *o)
{
	uint16_t ncols = r_u16(r);
	uint32_t nrows = r_u32(r);
	uint8_t more = r_u8(r);
	if (r->err)
		return;
	if (ncols > MB_PROTO_MAX_PROPS || nrows > MB_PROTO_MAX_ROWS || more > 1) {
		r->err = MB_EPROTO;
		return;
	}
	uint32_t cells = (uint32_t)ncols * nrows;
	o->u.rows.vals =
	    r_array(r, cells, MB_PROTO_MAX_PROPS * MB_PROTO_MAX_ROWS, 5, sizeof(struct mb_prop));
	if (r->err)
		return;
	o->u.rows.ncols = ncols;
	o->u.rows.nrows = nrows;
	o->u.rows.more = more;
	for (uint32_t i = 0; i < cells && !r->err; i++)
		r_prop(r, &o->u.rows.vals[i]);
}

static void dec_reply_body(struct rd *r, struct mb_op_reply *o)
{
	switch (o->code) {
	case MB_OP_LOGON_CHALLENGE:
		r_fixed(r, o->u.challenge.nonce, MB_NONCE_LEN);
		r_fixed(r, o->u.challenge.salt, MB_SALT_LEN);
		o->u.challenge.iterations = r_u32(r);
		break;
	case MB_OP_LOGON:
		o->u.logon.mailbox = r_u32(r);
		o->u.logon.flags = r_u32(r);
		o->u.logon.compress_min = r_u32(r);
		break;
	case MB_OP_LOGOFF:
	case MB_OP_RELEASE:
	case MB_OP_SET_COLUMNS:
	case MB_OP_SORT_TABLE:
	case MB_OP_CREATE_MESSAGE:
	case MB_OP_SET_PROPS:
	case MB_OP_SAVE_ATTACH:
	case MB_OP_REGISTER_NOTIFY:
	case MB_OP_SYNC_CONFIGURE:
	case MB_OP_SYNC_STATE_BEGIN:
	case MB_OP_SYNC_STATE_CONTINUE:
	case MB_OP_SYNC_STATE_END:
	case MB_OP_SYNC_OPEN_COLLECTOR:
		break;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
	case MB_OP_OPEN_STREAM:
	case MB_OP_GET_AB_TABLE:
	case MB_OP_SYNC_GET_STATE:
		o->u.table.rows = r_u32(r);
		break;
	case MB_OP_OPEN_ATTACH:
		r_props(r, &o->u.props.props, &o->u.props.n);
		break;
	case MB_OP_READ_STREAM:
	case MB_OP_FT_GET_BUFFER:
		o->u.stream.data = r_lstr(r);
		break;
	case MB_OP_RESOLVE_NAMES: {
		uint16_t n = r_u16(r);
		struct mb_resolved *v = r_array(r, n, MB_PROTO_MAX_PROPS, 8, sizeof(*v));
		if (r->err)
			break;
		for (uint16_t i = 0; i < n && !r->err; i++) {
			v[i].status = (int32_t)r_u32(r);
			v[i].type = r_u8(r);
			v[i].name = r_str(r, MB_PROTO_MAX_NAME);
			v[i].display = r_str(r, MB_PROTO_MAX_NAME);
		}
		o->u.resolve.n = n;
		o->u.resolve.v = v;
		break;
	}
	case MB_OP_OPEN_FOLDER:
		o->u.folder.fid = r_u64(r);
		o->u.folder.parent = r_u64(r);
		o->u.folder.name = r_str(r, MB_PROTO_MAX_NAME);
		o->u.folder.count = r_u32(r);
		o->u.folder.unread = r_u32(r);
		o->u.folder.subfolders = r_u32(r);
		o->u.folder.cn = r_u64(r);
		break;
	case MB_OP_GET_HIERARCHY_TABLE:
	case MB_OP_GET_CONTENTS_TABLE:
		o->u.table.rows = r_u32(r);
		break;
	case MB_OP_QUERY_ROWS:
	case MB_OP_CALENDAR_RANGE:
	case MB_OP_LIST_CONTACTS:
		dec_rows(r, o);
		break;
	case MB_OP_OPEN_MESSAGE:
	case MB_OP_GET_PROPS:
		r_props(r, &o->u.props.props, &o->u.props.n);
		break;
	case MB_OP_SAVE_CHANGES:
	case MB_OP_CREATE_CONTACT:
		o->u.saved.mid = r_u64(r);
		o->u.saved.cn = r_u64(r);
		break;
	case MB_OP_SUBMIT: {
		o->u.submit.mid = r_u64(r);
		o->u.submit.databases = r_u32(r);
		uint32_t n = r_u32(r);
		o->u.submit.dl = r_array(r, n, MB_PROTO_MAX_IDS, 12, sizeof(struct mb_delivery));
		if (r->err)
			break;
		o->u.submit.n = n;
		for (uint32_t i = 0; i < n; i++) {
			o->u.submit.dl[i].mailbox = r_u32(r);
			o->u.submit.dl[i].mid = r_u64(r);
		}
		break;
	}
	case MB_OP_DELETE_MESSAGES:
		o->u.count.n = r_u32(r);
		break;
	case MB_OP_MOVE_COPY:
		r_mids(r, &o->u.moved.mids, &o->u.moved.n);
		break;
	case MB_OP_FREEBUSY: {
		uint32_t n = r_u32(r);
		o->u.freebusy.blocks =
		    r_array(r, n, MB_PROTO_MAX_IDS, 20, sizeof(struct mb_busy_block));
		if (r->err)
			break;
		o->u.freebusy.n = n;
		for (uint32_t i = 0; i < n; i++) {
			o->u.freebusy.blocks[i].start = (int64_t)r_u64(r);
			o->u.freebusy.blocks[i].end = (int64_t)r_u64(r);
			o->u.freebusy.blocks[i].status = r_u32(r);
		}
		break;
	}
	case MB_OP_SYNC_DOWNLOAD: {
		o->u.sync_down.watermark = r_u64(r);
		o->u.sync_down.more = r_u8(r);
		o->u.sync_down.content = r_u32(r);
		uint32_t n = r_u32(r);
		if (!r->err && o->u.sync_down.more > 1)
			r->err = MB_EPROTO;
		struct mb_sync_item *it = r_array(r, n, MB_PROTO_MAX_ROWS, 17, sizeof(*it));
		if (r->err)
			break;
		o->u.sync_down.n = n;
		o->u.sync_down.items = it;
		for (uint32_t i = 0; i < n && !r->err; i++) {
			it[i].mid = r_u64(r);
			it[i].cn = r_u64(r);
			it[i].deleted = r_u8(r);
			if (!r->err && it[i].deleted > 1)
				r->err = MB_EPROTO;
			if (!it[i].deleted)
				r_props(r, &it[i].props, &it[i].nprops);
		}
		break;
	}
	case MB_OP_SYNC_UPLOAD:
		o->u.sync_up.cn = r_u64(r);
		r_mids(r, &o->u.sync_up.mids, &o->u.sync_up.n);
		break;
	default:
		r->err = MB_EPROTO;
	}
}

int mb_reply_decode(const uint8_t *p, size_t len, uint32_t seq, struct mb_arena *a,
		    struct mb_reply *out)
{
	struct rd r = {p, len, 0, a};
	int rc;

	memset(out, 0, sizeof(*out));
	out->seq = seq;
	uint16_t n = r_u16(&r);
	uint16_t reserved = r_u16(&r);
	if (r.err || reserved != 0)
		return MB_EPROTO;
	out->ops = r_array(&r, n, MB_PROTO_MAX_OPS, 9, sizeof(struct mb_op_reply));
	if (r.err)
		return r.err;
	for (uint16_t i = 0; i < n; i++) {
		struct mb_op_reply *o = &out->ops[i];
		o->code = r_u8(&r);
		o->status = (int32_t)r_u32(&r);
		struct rd body = r_body(&r);
		if (r.err || mb_op_index(o->code) < 0)
			return MB_EPROTO;
		if (o->status == 0)
			dec_reply_body(&body, o);
		if ((rc = r_body_end(&body)))
			return rc;
	}
	if (r.left)
		return MB_EPROTO;
	out->nops = n;
	return 0;
}

int mb_reply_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_reply *r,
		    const struct mb_codec_opts *opts, size_t *wire_len)
{
	mb_buf_reset(tmp);
	int rc = mb_reply_encode_payload(tmp, r);
	return mb__proto_frame_from_tmp(out, tmp, MB_FRAME_REPLY, r->seq, opts, wire_len, rc);
}
