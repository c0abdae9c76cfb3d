/* proto_req.c: request payloads (docs/PROTOCOL.md, "Requests"): every op's
 * body encoded and decoded, each op body length-prefixed and consumed
 * exactly by its own reader (proto_int.h).  Invariant: a decode that
 * returns 0 has read every byte and allocated only from the arena, after
 * checking each count against its limit and the bytes left.
 */
#include <string.h>

#include "core/error.h"
#include "proto/proto_int.h"

static void enc_op_body(struct wr *w, const struct mb_op *op)
{
	switch (op->code) {
	case MB_OP_LOGON_CHALLENGE:
		w_str(w, op->u.challenge.user);
		w_u32(w, op->u.challenge.flags);
		break;
	case MB_OP_LOGON:
		w_str(w, op->u.logon.user);
		w_str(w, op->u.logon.mailbox);
		w_bytes(w, op->u.logon.proof, MB_PROOF_LEN);
		w_u32(w, op->u.logon.flags);
		break;
	case MB_OP_LOGOFF:
		break;
	case MB_OP_RELEASE:
		w_u32(w, op->u.release.handle);
		break;
	case MB_OP_OPEN_FOLDER:
		w_u64(w, op->u.open_folder.fid);
		break;
	case MB_OP_GET_HIERARCHY_TABLE:
	case MB_OP_GET_CONTENTS_TABLE:
		w_u64(w, op->u.get_table.fid);
		w_u32(w, op->u.get_table.handle);
		break;
	case MB_OP_SET_COLUMNS:
		w_u32(w, op->u.set_columns.handle);
		w_tags(w, op->u.set_columns.tags, op->u.set_columns.n);
		break;
	case MB_OP_SORT_TABLE:
		w_u32(w, op->u.sort_table.handle);
		if (op->u.sort_table.n > MB_PROTO_MAX_SORT) {
			w->err = MB_ETOOBIG;
			break;
		}
		w_u16(w, op->u.sort_table.n);
		for (uint16_t i = 0; i < op->u.sort_table.n; i++) {
			w_u32(w, op->u.sort_table.keys[i].tag);
			w_u8(w, op->u.sort_table.keys[i].order);
		}
		break;
	case MB_OP_QUERY_ROWS:
		w_u32(w, op->u.query_rows.handle);
		w_u32(w, op->u.query_rows.flags);
		w_u32(w, op->u.query_rows.max_rows);
		break;
	case MB_OP_OPEN_MESSAGE:
		w_u64(w, op->u.open_message.fid);
		w_u64(w, op->u.open_message.mid);
		w_u32(w, op->u.open_message.handle);
		break;
	case MB_OP_GET_PROPS:
		w_u32(w, op->u.get_props.handle);
		w_tags(w, op->u.get_props.tags, op->u.get_props.n);
		break;
	case MB_OP_CREATE_MESSAGE:
		w_u64(w, op->u.create_message.fid);
		w_u32(w, op->u.create_message.handle);
		break;
	case MB_OP_SET_PROPS:
		w_u32(w, op->u.set_props.handle);
		w_props(w, op->u.set_props.props, op->u.set_props.n);
		break;
	case MB_OP_SAVE_CHANGES:
	case MB_OP_SUBMIT:
		w_u32(w, op->u.save.handle);
		break;
	case MB_OP_DELETE_MESSAGES:
		w_u64(w, op->u.del.fid);
		w_mids(w, op->u.del.mids, op->u.del.n);
		break;
	case MB_OP_MOVE_COPY:
		w_u64(w, op->u.move_copy.src_fid);
		w_u64(w, op->u.move_copy.dst_fid);
		w_u32(w, op->u.move_copy.flags);
		w_mids(w, op->u.move_copy.mids, op->u.move_copy.n);
		break;
	case MB_OP_CALENDAR_RANGE:
		w_u64(w, (uint64_t)op->u.calendar.start);
		w_u64(w, (uint64_t)op->u.calendar.end);
		w_u32(w, op->u.calendar.max_rows);
		break;
	case MB_OP_FREEBUSY:
		w_str(w, op->u.freebusy.user);
		w_u64(w, (uint64_t)op->u.freebusy.start);
		w_u64(w, (uint64_t)op->u.freebusy.end);
		break;
	case MB_OP_CREATE_CONTACT:
		w_props(w, op->u.create_contact.props, op->u.create_contact.n);
		break;
	case MB_OP_LIST_CONTACTS:
		w_u32(w, op->u.list_contacts.start);
		w_u32(w, op->u.list_contacts.max_rows);
		break;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
		w_u32(w, op->u.attach.msg);
		w_u32(w, op->u.attach.handle);
		break;
	case MB_OP_OPEN_ATTACH:
		w_u32(w, op->u.attach.msg);
		w_u32(w, op->u.attach.num);
		w_u32(w, op->u.attach.handle);
		break;
	case MB_OP_SAVE_ATTACH:
		w_u32(w, op->u.save.handle);
		break;
	case MB_OP_OPEN_STREAM:
		w_u32(w, op->u.open_stream.obj);
		w_u32(w, op->u.open_stream.tag);
		w_u32(w, op->u.open_stream.handle);
		break;
	case MB_OP_READ_STREAM:
	case MB_OP_FT_GET_BUFFER:
		w_u32(w, op->u.read_stream.handle);
		w_u32(w, op->u.read_stream.max);
		break;
	case MB_OP_REGISTER_NOTIFY:
		w_u64(w, op->u.get_table.fid);
		w_u32(w, op->u.get_table.handle);
		break;
	case MB_OP_RESOLVE_NAMES:
		if (op->u.resolve.n > MB_PROTO_MAX_PROPS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u16(w, op->u.resolve.n);
		for (uint16_t i = 0; i < op->u.resolve.n; i++)
			w_str(w, op->u.resolve.names[i]);
		break;
	case MB_OP_GET_AB_TABLE:
		w_u32(w, op->u.ab_table.handle);
		break;
	case MB_OP_SYNC_DOWNLOAD:
		w_u64(w, op->u.sync_down.fid);
		w_u64(w, op->u.sync_down.since_cn);
		w_u32(w, op->u.sync_down.flags);
		w_u32(w, op->u.sync_down.max);
		w_u32(w, op->u.sync_down.handle);
		break;
	case MB_OP_SYNC_CONFIGURE:
	case MB_OP_SYNC_OPEN_COLLECTOR:
		w_u64(w, op->u.sync_cfg.fid);
		w_u32(w, op->u.sync_cfg.handle);
		w_u32(w, op->u.sync_cfg.flags);
		break;
	case MB_OP_SYNC_STATE_BEGIN:
		w_u32(w, op->u.sync_state.handle);
		w_u32(w, op->u.sync_state.tag);
		w_u32(w, op->u.sync_state.size);
		break;
	case MB_OP_SYNC_STATE_CONTINUE:
		w_u32(w, op->u.sync_state.handle);
		w_lstr(w, op->u.sync_state.data);
		break;
	case MB_OP_SYNC_STATE_END:
		w_u32(w, op->u.sync_state.handle);
		break;
	case MB_OP_SYNC_GET_STATE:
		w_u32(w, op->u.sync_xfer.handle);
		w_u32(w, op->u.sync_xfer.out);
		break;
	case MB_OP_SYNC_UPLOAD:
		if (op->u.sync_up.n > MB_PROTO_MAX_IDS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u64(w, op->u.sync_up.fid);
		w_u32(w, op->u.sync_up.handle);
		w_u32(w, op->u.sync_up.n);
		for (uint32_t i = 0; i < op->u.sync_up.n; i++) {
			const struct mb_sync_change *c = &op->u.sync_up.changes[i];
			w_u8(w, c->kind);
			if (c->kind == MB_SYNC_CREATE) {
				w_props(w, c->props, c->nprops);
			} else if (c->kind == MB_SYNC_DELETE) {
				w_u64(w, c->mid);
			} else if (c->kind == MB_SYNC_SET_FLAGS) {
				w_u64(w, c->mid);
				w_u32(w, c->flags);
			} else {
				w_fail(w, MB_EINVAL);
			}
		}
		break;
	default:
		w_fail(w, MB_EINVAL);
	}
}

int mb_request_encode_payload(struct mb_buf *out, const struct mb_request *r)
{
	struct wr w = {out, 0};

	if (r->nops == 0 || r->nops > MB_PROTO_MAX_OPS)
		return MB_EINVAL;
	w_u16(&w, r->nops);
	w_u16(&w, 0);
	for (uint16_t i = 0; i < r->nops; i++) {
		w_u8(&w, r->ops[i].code);
		size_t slot = w_len_slot(&w);
		enc_op_body(&w, &r->ops[i]);
		w_len_fill(&w, slot);
	}
	return w.err;
}

static void dec_op_body(struct rd *r, struct mb_op *op)
{
	switch (op->code) {
	case MB_OP_LOGON_CHALLENGE:
		op->u.challenge.user = r_str(r, MB_PROTO_MAX_NAME);
		op->u.challenge.flags = r_u32(r);
		break;
	case MB_OP_LOGON:
		op->u.logon.user = r_str(r, MB_PROTO_MAX_NAME);
		op->u.logon.mailbox = r_str(r, MB_PROTO_MAX_NAME);
		r_fixed(r, op->u.logon.proof, MB_PROOF_LEN);
		op->u.logon.flags = r_u32(r);
		break;
	case MB_OP_LOGOFF:
		break;
	case MB_OP_RELEASE:
		op->u.release.handle = r_u32(r);
		break;
	case MB_OP_OPEN_FOLDER:
		op->u.open_folder.fid = r_u64(r);
		break;
	case MB_OP_GET_HIERARCHY_TABLE:
	case MB_OP_GET_CONTENTS_TABLE:
		op->u.get_table.fid = r_u64(r);
		op->u.get_table.handle = r_u32(r);
		break;
	case MB_OP_SET_COLUMNS:
		op->u.set_columns.handle = r_u32(r);
		r_tags(r, &op->u.set_columns.tags, &op->u.set_columns.n);
		break;
	case MB_OP_SORT_TABLE:
		op->u.sort_table.handle = r_u32(r);
		op->u.sort_table.n = r_u16(r);
		if (!r->err && op->u.sort_table.n > MB_PROTO_MAX_SORT) {
			r->err = MB_EPROTO;
			op->u.sort_table.n = 0;
			break;
		}
		for (uint16_t i = 0; i < op->u.sort_table.n && !r->err; i++) {
			op->u.sort_table.keys[i].tag = r_u32(r);
			op->u.sort_table.keys[i].order = r_u8(r);
		}
		break;
	case MB_OP_QUERY_ROWS:
		op->u.query_rows.handle = r_u32(r);
		op->u.query_rows.flags = r_u32(r);
		op->u.query_rows.max_rows = r_u32(r);
		break;
	case MB_OP_OPEN_MESSAGE:
		op->u.open_message.fid = r_u64(r);
		op->u.open_message.mid = r_u64(r);
		op->u.open_message.handle = r_u32(r);
		break;
	case MB_OP_GET_PROPS:
		op->u.get_props.handle = r_u32(r);
		r_tags(r, &op->u.get_props.tags, &op->u.get_props.n);
		break;
	case MB_OP_CREATE_MESSAGE:
		op->u.create_message.fid = r_u64(r);
		op->u.create_message.handle = r_u32(r);
		break;
	case MB_OP_SET_PROPS:
		op->u.set_props.handle = r_u32(r);
		r_props(r, &op->u.set_props.props, &op->u.set_props.n);
		break;
	case MB_OP_SAVE_CHANGES:
	case MB_OP_SUBMIT:
		op->u.save.handle = r_u32(r);
		break;
	case MB_OP_DELETE_MESSAGES:
		op->u.del.fid = r_u64(r);
		r_mids(r, &op->u.del.mids, &op->u.del.n);
		break;
	case MB_OP_MOVE_COPY:
		op->u.move_copy.src_fid = r_u64(r);
		op->u.move_copy.dst_fid = r_u64(r);
		op->u.move_copy.flags = r_u32(r);
		r_mids(r, &op->u.move_copy.mids, &op->u.move_copy.n);
		break;
	case MB_OP_CALENDAR_RANGE:
		op->u.calendar.start = (int64_t)r_u64(r);
		op->u.calendar.end = (int64_t)r_u64(r);
		op->u.calendar.max_rows = r_u32(r);
		break;
	case MB_OP_FREEBUSY:
		op->u.freebusy.user = r_str(r, MB_PROTO_MAX_NAME);
		op->u.freebusy.start = (int64_t)r_u64(r);
		op->u.freebusy.end = (int64_t)r_u64(r);
		break;
	case MB_OP_CREATE_CONTACT:
		r_props(r, &op->u.create_contact.props, &op->u.create_contact.n);
		break;
	case MB_OP_LIST_CONTACTS:
		op->u.list_contacts.start = r_u32(r);
		op->u.list_contacts.max_rows = r_u32(r);
		break;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
		op->u.attach.msg = r_u32(r);
		op->u.attach.handle = r_u32(r);
		break;
	case MB_OP_OPEN_ATTACH:
		op->u.attach.msg = r_u32(r);
		op->u.attach.num = r_u32(r);
		op->u.attach.handle = r_u32(r);
		break;
	case MB_OP_SAVE_ATTACH:
		op->u.save.handle = r_u32(r);
		break;
	case MB_OP_OPEN_STREAM:
		op->u.open_stream.obj = r_u32(r);
		op->u.open_stream.tag = r_u32(r);
		op->u.open_stream.handle = r_u32(r);
		break;
	case MB_OP_READ_STREAM:
	case MB_OP_FT_GET_BUFFER:
		op->u.read_stream.handle = r_u32(r);
		op->u.read_stream.max = r_u32(r);
		break;
	case MB_OP_REGISTER_NOTIFY:
		op->u.get_table.fid = r_u64(r);
		op->u.get_table.handle = r_u32(r);
		break;
	case MB_OP_RESOLVE_NAMES: {
		uint16_t n = r_u16(r);
		struct mb_bytes *v = r_array(r, n, MB_PROTO_MAX_PROPS, 2, sizeof(struct mb_bytes));
		if (r->err)
			break;
		for (uint16_t i = 0; i < n && !r->err; i++)
			v[i] = r_str(r, MB_PROTO_MAX_NAME);
		op->u.resolve.n = n;
		op->u.resolve.names = v;
		break;
	}
	case MB_OP_GET_AB_TABLE:
		op->u.ab_table.handle = r_u32(r);
		break;
	case MB_OP_SYNC_DOWNLOAD:
		op->u.sync_down.fid = r_u64(r);
		op->u.sync_down.since_cn = r_u64(r);
		op->u.sync_down.flags = r_u32(r);
		op->u.sync_down.max = r_u32(r);
		op->u.sync_down.handle = r_u32(r);
		break;
	case MB_OP_SYNC_CONFIGURE:
	case MB_OP_SYNC_OPEN_COLLECTOR:
		op->u.sync_cfg.fid = r_u64(r);
		op->u.sync_cfg.handle = r_u32(r);
		op->u.sync_cfg.flags = r_u32(r);
		break;
	case MB_OP_SYNC_STATE_BEGIN:
		op->u.sync_state.handle = r_u32(r);
		op->u.sync_state.tag = r_u32(r);
		op->u.sync_state.size = r_u32(r);
		break;
	case MB_OP_SYNC_STATE_CONTINUE:
		op->u.sync_state.handle = r_u32(r);
		op->u.sync_state.data = r_lstr(r);
		break;
	case MB_OP_SYNC_STATE_END:
		op->u.sync_state.handle = r_u32(r);
		break;
	case MB_OP_SYNC_GET_STATE:
		op->u.sync_xfer.handle = r_u32(r);
		op->u.sync_xfer.out = r_u32(r);
		break;
	case MB_OP_SYNC_UPLOAD: {
		op->u.sync_up.fid = r_u64(r);
		op->u.sync_up.handle = r_u32(r);
		uint32_t n = r_u32(r);
		struct mb_sync_change *c =
		    r_array(r, n, MB_PROTO_MAX_IDS, 3, sizeof(struct mb_sync_change));
		if (r->err)
			break;
		op->u.sync_up.n = n;
		op->u.sync_up.changes = c;
		for (uint32_t i = 0; i < n && !r->err; i++) {
			c[i].kind = r_u8(r);
			if (c[i].kind == MB_SYNC_CREATE) {
				r_props(r, &c[i].props, &c[i].nprops);
			} else if (c[i].kind == MB_SYNC_DELETE) {
				c[i].mid = r_u64(r);
			} else if (c[i].kind == MB_SYNC_SET_FLAGS) {
				c[i].mid = r_u64(r);
				c[i].flags = r_u32(r);
			} else if (!r->err) {
				r->err = MB_EPROTO;
			}
		}
		break;
	}
	default:
		r->err = MB_EPROTO;
	}
}

int mb_request_decode(const uint8_t *p, size_t len, uint32_t seq, struct mb_arena *a,
		      struct mb_request *out)
{
	struct rd r = {p, len, 0, a};
	int rc;

	memset(out, 0, sizeof(*out));
	out->seq = seq;
	uint16_t n = r_u16(&r);
	uint16_t reserved = r_u16(&r);
	if (r.err || n == 0 || reserved != 0)
		return MB_EPROTO;
	out->ops = r_array(&r, n, MB_PROTO_MAX_OPS, 5, sizeof(struct mb_op));
	if (r.err)
		return r.err;
	for (uint16_t i = 0; i < n; i++) {
		struct mb_op *op = &out->ops[i];
		op->code = r_u8(&r);
		struct rd body = r_body(&r);
		if (r.err)
			return MB_EPROTO;
		dec_op_body(&body, op);
		if ((rc = r_body_end(&body)))
			return rc;
	}
	if (r.left)
		return MB_EPROTO;
	out->nops = n;
	return 0;
}

int mb_request_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_request *r,
		      const struct mb_codec_opts *opts, size_t *wire_len)
{
	mb_buf_reset(tmp);
	int rc = mb_request_encode_payload(tmp, r);
	return mb__proto_frame_from_tmp(out, tmp, MB_FRAME_REQUEST, r->seq, opts, wire_len, rc);
}
