/* proto.c: encoders and decoders of the wire protocol (docs/PROTOCOL.md).
 * Invariants: the reader (struct rd) never reads past its end: every
 * primitive read checks the bytes left and latches an error; every count is
 * checked against a limit and against the bytes left (count x minimum
 * element size) before anything is allocated; every op body must be
 * consumed exactly.  Encoders latch the first error and return it. */
#include "proto/proto.h"
#include "core/error.h"

#include <lz4.h>
#include <string.h>

/* ---- op table ---- */

struct op_info {
	int code;
	const char *name;
};
static const struct op_info op_infos[MB_OP_COUNT] = {
#define MB_X_INFO(id, code, name) [MB_OPI_##id] = {code, name},
    MB_OP_TABLE(MB_X_INFO)
#undef MB_X_INFO
};

int mb_op_index(int code)
{
	switch (code) {
#define MB_X_IDX(id, code, name)                                                                   \
	case code:                                                                                 \
		return MB_OPI_##id;
		MB_OP_TABLE(MB_X_IDX)
#undef MB_X_IDX
	}
	return -1;
}

const char *mb_op_name(int code)
{
	int i = mb_op_index(code);
	return i < 0 ? NULL : op_infos[i].name;
}

int mb_op_code_at(int index)
{
	if (index < 0 || index >= MB_OP_COUNT)
		return -1;
	return op_infos[index].code;
}

/* ---- little-endian primitives ---- */

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
	       ((uint32_t)p[3] << 24);
}
static inline uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | ((uint64_t)get32(p + 4) << 32);
}

/* ---- writer ---- */

struct wr {
	struct mb_buf *b;
	int err;
};

/* Record err unless an earlier error is already recorded. */
static void w_fail(struct wr *w, int err)
{
	if (!w->err)
		w->err = err;
}
static void w_bytes(struct wr *w, const void *p, size_t n)
{
	if (!w->err)
		w->err = mb_buf_append(w->b, p, n);
}
static void w_u8(struct wr *w, uint8_t v) { w_bytes(w, &v, 1); }
static void w_u16(struct wr *w, uint16_t v)
{
	uint8_t t[2];
	put16(t, v);
	w_bytes(w, t, 2);
}
static void w_u32(struct wr *w, uint32_t v)
{
	uint8_t t[4];
	put32(t, v);
	w_bytes(w, t, 4);
}
static void w_u64(struct wr *w, uint64_t v)
{
	uint8_t t[8];
	put64(t, v);
	w_bytes(w, t, 8);
}
static void w_str(struct wr *w, struct mb_bytes s)
{
	if (s.len > 0xFFFF) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, (uint16_t)s.len);
	w_bytes(w, s.p, s.len);
}
static void w_lstr(struct wr *w, struct mb_bytes s)
{
	w_u32(w, s.len);
	w_bytes(w, s.p, s.len);
}

/* Reserve a u32 length slot; returns its offset from the buffer start. */
static size_t w_len_slot(struct wr *w)
{
	size_t at = mb_buf_len(w->b);
	w_u32(w, 0);
	return at;
}
static void w_len_fill(struct wr *w, size_t at)
{
	if (w->err)
		return;
	size_t len = mb_buf_len(w->b) - at - 4;
	if (len > UINT32_MAX) {
		w->err = MB_ETOOBIG;
		return;
	}
	put32(mb_buf_data(w->b) + at, (uint32_t)len);
}

static void w_prop(struct wr *w, const struct mb_prop *p)
{
	w_u32(w, p->tag);
	switch (MB_PTAG_TYPE(p->tag)) {
	case MB_PT_I32:
	case MB_PT_ERROR:
		w_u32(w, (uint32_t)(int32_t)p->v.i);
		break;
	case MB_PT_BOOL:
		w_u8(w, p->v.i ? 1 : 0);
		break;
	case MB_PT_I64:
	case MB_PT_TIME:
		w_u64(w, (uint64_t)p->v.i);
		break;
	case MB_PT_STRING:
	case MB_PT_BINARY:
		w_lstr(w, p->v.b);
		break;
	case MB_PT_MV_STRING:
		if (p->v.mv.n > MB_PROTO_MAX_PROPS) {
			w_fail(w, MB_ETOOBIG);
			return;
		}
		w_u16(w, p->v.mv.n);
		for (uint16_t i = 0; i < p->v.mv.n; i++)
			w_lstr(w, p->v.mv.v[i]);
		break;
	default:
		w_fail(w, MB_EINVAL);
	}
}

static void w_props(struct wr *w, const struct mb_prop *props, uint16_t n)
{
	if (n > MB_PROTO_MAX_PROPS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, n);
	for (uint16_t i = 0; i < n; i++)
		w_prop(w, &props[i]);
}

static void w_tags(struct wr *w, const uint32_t *tags, uint16_t n)
{
	if (n > MB_PROTO_MAX_PROPS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, n);
	for (uint16_t i = 0; i < n; i++)
		w_u32(w, tags[i]);
}

static void w_mids(struct wr *w, const uint64_t *mids, uint32_t n)
{
	if (n > MB_PROTO_MAX_IDS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		w_u64(w, mids[i]);
}

size_t mb_prop_wire_size(const struct mb_prop *p)
{
	switch (MB_PTAG_TYPE(p->tag)) {
	case MB_PT_I32:
	case MB_PT_ERROR:
		return 8;
	case MB_PT_BOOL:
		return 5;
	case MB_PT_I64:
	case MB_PT_TIME:
		return 12;
	case MB_PT_STRING:
	case MB_PT_BINARY:
		return 8 + (size_t)p->v.b.len;
	case MB_PT_MV_STRING: {
		size_t s = 6;
		for (uint16_t i = 0; i < p->v.mv.n; i++)
			s += 4 + (size_t)p->v.mv.v[i].len;
		return s;
	}
	}
	return 4;
}

/* ---- reader ---- */

struct rd {
	const uint8_t *p;
	size_t left;
	int err;
	struct mb_arena *a;
};

/* The next n bytes (and step past them), or NULL with MB_EPROTO recorded
 * when fewer remain (or an earlier error is recorded). */
static const uint8_t *r_take(struct rd *r, size_t n)
{
	if (r->err)
		return NULL;
	if (r->left < n) {
		r->err = MB_EPROTO;
		return NULL;
	}
	const uint8_t *p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}
static uint8_t r_u8(struct rd *r)
{
	const uint8_t *p = r_take(r, 1);
	return p ? p[0] : 0;
}
static uint16_t r_u16(struct rd *r)
{
	const uint8_t *p = r_take(r, 2);
	return p ? get16(p) : 0;
}
static uint32_t r_u32(struct rd *r)
{
	const uint8_t *p = r_take(r, 4);
	return p ? get32(p) : 0;
}
static uint64_t r_u64(struct rd *r)
{
	const uint8_t *p = r_take(r, 8);
	return p ? get64(p) : 0;
}
static void r_fixed(struct rd *r, void *dst, size_t n)
{
	const uint8_t *p = r_take(r, n);
	if (p)
		memcpy(dst, p, n);
}
static struct mb_bytes r_span(struct rd *r, size_t n)
{
	const uint8_t *p = r_take(r, n);
	return p ? (struct mb_bytes){p, (uint32_t)n} : (struct mb_bytes){NULL, 0};
}
static struct mb_bytes r_str(struct rd *r, size_t max)
{
	uint16_t n = r_u16(r);
	if (!r->err && n > max) {
		r->err = MB_EPROTO;
		return (struct mb_bytes){NULL, 0};
	}
	return r_span(r, n);
}
static struct mb_bytes r_lstr(struct rd *r)
{
	uint32_t n = r_u32(r);
	return r_span(r, n);
}
/* Allocate count elements of size sz after checking count <= max and that
 * count x min_wire bytes remain. */
static void *r_array(struct rd *r, uint32_t count, uint32_t max, size_t min_wire, size_t sz)
{
	if (r->err)
		return NULL;
	if (count > max || (size_t)count * min_wire > r->left) {
		r->err = MB_EPROTO;
		return NULL;
	}
	if (count == 0)
		return NULL;
	void *p = mb_arena_alloc(r->a, (size_t)count * sz);
	if (!p)
		r->err = MB_ETOOBIG;
	return p;
}

static void r_prop(struct rd *r, struct mb_prop *p)
{
	p->tag = r_u32(r);
	if (r->err)
		return;
	switch (MB_PTAG_TYPE(p->tag)) {
	case MB_PT_I32:
	case MB_PT_ERROR:
		p->v.i = (int32_t)r_u32(r);
		break;
	case MB_PT_BOOL: {
		uint8_t b = r_u8(r);
		if (!r->err && b > 1)
			r->err = MB_EPROTO;
		p->v.i = b;
		break;
	}
	case MB_PT_I64:
	case MB_PT_TIME:
		p->v.i = (int64_t)r_u64(r);
		break;
	case MB_PT_STRING:
	case MB_PT_BINARY:
		p->v.b = r_lstr(r);
		break;
	case MB_PT_MV_STRING: {
		uint16_t n = r_u16(r);
		p->v.mv.v = r_array(r, n, MB_PROTO_MAX_PROPS, 4, sizeof(struct mb_bytes));
		if (r->err)
			return;
		p->v.mv.n = n;
		for (uint16_t i = 0; i < n && !r->err; i++)
			p->v.mv.v[i] = r_lstr(r);
		break;
	}
	default:
		r->err = MB_EPROTO;
	}
}

static void r_props(struct rd *r, struct mb_prop **props, uint16_t *n)
{
	uint16_t cnt = r_u16(r);
	*props = r_array(r, cnt, MB_PROTO_MAX_PROPS, 5, sizeof(struct mb_prop));
	if (r->err) {
		*n = 0;
		return;
	}
	*n = cnt;
	for (uint16_t i = 0; i < cnt && !r->err; i++)
		r_prop(r, &(*props)[i]);
}

static void r_tags(struct rd *r, uint32_t **tags, uint16_t *n)
{
	uint16_t cnt = r_u16(r);
	*tags = r_array(r, cnt, MB_PROTO_MAX_PROPS, 4, sizeof(uint32_t));
	if (r->err) {
		*n = 0;
		return;
	}
	*n = cnt;
	for (uint16_t i = 0; i < cnt; i++)
		(*tags)[i] = r_u32(r);
}

static void r_mids(struct rd *r, uint64_t **mids, uint32_t *n)
{
	uint32_t cnt = r_u32(r);
	*mids = r_array(r, cnt, MB_PROTO_MAX_IDS, 8, sizeof(uint64_t));
	if (r->err) {
		*n = 0;
		return;
	}
	*n = cnt;
	for (uint32_t i = 0; i < cnt; i++)
		(*mids)[i] = r_u64(r);
}

/* ---- helpers ---- */

struct mb_bytes mb_str(const char *s)
{
	struct mb_bytes b = {(const uint8_t *)s, s ? (uint32_t)strlen(s) : 0};
	return b;
}

struct mb_prop mb_prop_i64(uint32_t tag, int64_t v)
{
	struct mb_prop p;
	memset(&p, 0, sizeof(p));
	p.tag = tag;
	p.v.i = v;
	return p;
}

struct mb_prop mb_prop_bytes(uint32_t tag, const void *ptr, uint32_t len)
{
	struct mb_prop p;
	memset(&p, 0, sizeof(p));
	p.tag = tag;
	p.v.b.p = ptr;
	p.v.b.len = len;
	return p;
}

struct mb_prop mb_prop_str(uint32_t tag, const char *s)
{
	return mb_prop_bytes(tag, s, (uint32_t)strlen(s));
}

bool mb_bytes_eq(struct mb_bytes a, struct mb_bytes b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

bool mb_bytes_eq_str(struct mb_bytes a, const char *s) { return mb_bytes_eq(a, mb_str(s)); }

const struct mb_prop *mb_props_find(const struct mb_prop *props, uint16_t n, uint32_t tag)
{
	for (uint16_t i = 0; i < n; i++)
		if (props[i].tag == tag)
			return &props[i];
	return NULL;
}

int mb_props_encode(struct mb_buf *out, const struct mb_prop *props, uint16_t n)
{
	struct wr w = {out, 0};
	w_props(&w, props, n);
	return w.err;
}

int mb_props_decode(const uint8_t *p, size_t len, struct mb_arena *a, struct mb_prop **props,
		    uint16_t *n)
{
	struct rd r = {p, len, 0, a};
	r_props(&r, props, n);
	if (!r.err && r.left)
		r.err = MB_EPROTO;
	return r.err;
}

/* ---- frames ---- */

int mb_frame_check(const void *buf, size_t avail, uint32_t max_frame, struct mb_frame_hdr *hdr,
		   size_t *total)
{
	const uint8_t *p = buf;

	if (max_frame == 0 || max_frame > MB_PROTO_MAX_FRAME)
		max_frame = MB_PROTO_MAX_FRAME;
	*total = MB_FRAME_HDR;
	if (avail < MB_FRAME_HDR) {
		/* reject garbage early once the magic byte is visible */
		if (avail > 4 && p[4] != MB_PROTO_MAGIC)
			return MB_EPROTO;
		return MB_EAGAIN;
	}
	hdr->len = get32(p);
	hdr->version = p[5];
	hdr->kind = p[6];
	hdr->flags = p[7];
	hdr->seq = get32(p + 8);
	hdr->raw_len = get32(p + 12);
	if (p[4] != MB_PROTO_MAGIC || hdr->version != MB_PROTO_VERSION ||
	    hdr->kind < MB_FRAME_REQUEST || hdr->kind > MB_FRAME_ERROR ||
	    (hdr->flags & ~MB_FRAME_F_LZ4))
		return MB_EPROTO;
	if (hdr->len > max_frame || hdr->raw_len > max_frame)
		return MB_ETOOBIG;
	if (!(hdr->flags & MB_FRAME_F_LZ4) && hdr->raw_len != hdr->len)
		return MB_EPROTO;
	*total = (size_t)MB_FRAME_HDR + hdr->len;
	if (avail < *total)
		return MB_EAGAIN;
	return 0;
}

int mb_frame_payload(const struct mb_frame_hdr *hdr, const void *frame, struct mb_buf *scratch,
		     const uint8_t **payload, size_t *len)
{
	const uint8_t *src = (const uint8_t *)frame + MB_FRAME_HDR;
	uint8_t *dst;
	int rc;

	if (!(hdr->flags & MB_FRAME_F_LZ4)) {
		*payload = src;
		*len = hdr->len;
		return 0;
	}
	if (hdr->len > (uint32_t)INT32_MAX || hdr->raw_len > MB_PROTO_MAX_FRAME)
		return MB_ETOOBIG;
	mb_buf_reset(scratch);
	rc = mb_buf_reserve(scratch, hdr->raw_len ? hdr->raw_len : 1, &dst);
	if (rc)
		return rc;
	int n =
	    LZ4_decompress_safe((const char *)src, (char *)dst, (int)hdr->len, (int)hdr->raw_len);
	if (n < 0 || (uint32_t)n != hdr->raw_len)
		return MB_EPROTO;
	mb_buf_commit(scratch, (size_t)n);
	*payload = mb_buf_data(scratch);
	*len = (size_t)n;
	return 0;
}

int mb_frame_append(struct mb_buf *out, uint8_t kind, uint32_t seq, const void *payload, size_t len,
		    const struct mb_codec_opts *opts, size_t *wire_len)
{
	uint32_t max = opts && opts->max_frame ? opts->max_frame : MB_PROTO_MAX_FRAME;
	uint8_t *h;
	int rc;

	if (len > max)
		return MB_ETOOBIG;
	rc = mb_buf_reserve(out, MB_FRAME_HDR + (size_t)LZ4_compressBound((int)len) + 16, &h);
	if (rc)
		return rc;
	uint8_t flags = 0;
	size_t wire = len;
	if (opts && opts->lz4 && len >= opts->min_bytes && len > 0) {
		int c = LZ4_compress_default((const char *)payload, (char *)h + MB_FRAME_HDR,
					     (int)len, LZ4_compressBound((int)len));
		if (c > 0 && (size_t)c < len) {
			flags = MB_FRAME_F_LZ4;
			wire = (size_t)c;
		}
	}
	if (!flags && len)
		memcpy(h + MB_FRAME_HDR, payload, len);
	put32(h, (uint32_t)wire);
	h[4] = MB_PROTO_MAGIC;
	h[5] = MB_PROTO_VERSION;
	h[6] = kind;
	h[7] = flags;
	put32(h + 8, seq);
	put32(h + 12, (uint32_t)len);
	mb_buf_commit(out, MB_FRAME_HDR + wire);
	if (wire_len)
		*wire_len = MB_FRAME_HDR + wire;
	return 0;
}

/* ---- request ---- */

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
		break;
	case MB_OP_SYNC_UPLOAD:
		if (op->u.sync_up.n > MB_PROTO_MAX_IDS) {
			w_fail(w, MB_ETOOBIG);
			break;
		}
		w_u64(w, op->u.sync_up.fid);
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
		break;
	case MB_OP_SYNC_UPLOAD: {
		op->u.sync_up.fid = r_u64(r);
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

/* An op body: a u32 length, then that many bytes, read by a reader of
 * its own (r->err is set when the length or the bytes are missing). */
static struct rd r_body(struct rd *r)
{
	uint32_t blen = r_u32(r);
	const uint8_t *p = r_take(r, blen);
	return (struct rd){p, p ? blen : 0, 0, r->a};
}

/* 0 when the body decoded and used every byte, else its error. */
static int r_body_end(const struct rd *body)
{
	if (body->err)
		return body->err;
	return body->left ? MB_EPROTO : 0;
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

/* ---- reply ---- */

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
	case MB_OP_CREATE_MESSAGE:
	case MB_OP_SET_PROPS:
	case MB_OP_SAVE_ATTACH:
	case MB_OP_REGISTER_NOTIFY:
		break;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
	case MB_OP_OPEN_STREAM:
	case MB_OP_GET_AB_TABLE:
		w_u32(w, o->u.table.rows);
		break;
	case MB_OP_OPEN_ATTACH:
		w_props(w, o->u.props.props, o->u.props.n);
		break;
	case MB_OP_READ_STREAM:
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
	case MB_OP_CREATE_MESSAGE:
	case MB_OP_SET_PROPS:
	case MB_OP_SAVE_ATTACH:
	case MB_OP_REGISTER_NOTIFY:
		break;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
	case MB_OP_OPEN_STREAM:
	case MB_OP_GET_AB_TABLE:
		o->u.table.rows = r_u32(r);
		break;
	case MB_OP_OPEN_ATTACH:
		r_props(r, &o->u.props.props, &o->u.props.n);
		break;
	case MB_OP_READ_STREAM:
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

/* ---- notify and error ---- */

static int mb_notify_encode_payload(struct mb_buf *out, const struct mb_notify *n)
{
	struct wr w = {out, 0};

	if (n->n > MB_PROTO_MAX_IDS)
		return MB_ETOOBIG;
	w_u16(&w, n->n);
	w_u16(&w, 0);
	for (uint16_t i = 0; i < n->n; i++) {
		w_u8(&w, n->events[i].type);
		w_u64(&w, n->events[i].fid);
		w_u64(&w, n->events[i].mid);
		w_u64(&w, n->events[i].cn);
		w_u32(&w, n->events[i].size);
	}
	return w.err;
}

int mb_notify_decode(const uint8_t *p, size_t len, struct mb_arena *a, struct mb_notify *out)
{
	struct rd r = {p, len, 0, a};

	memset(out, 0, sizeof(*out));
	uint16_t n = r_u16(&r);
	uint16_t reserved = r_u16(&r);
	if (r.err || reserved)
		return MB_EPROTO;
	out->events = r_array(&r, n, MB_PROTO_MAX_IDS, 29, sizeof(struct mb_event));
	if (r.err)
		return r.err;
	for (uint16_t i = 0; i < n; i++) {
		out->events[i].type = r_u8(&r);
		out->events[i].fid = r_u64(&r);
		out->events[i].mid = r_u64(&r);
		out->events[i].cn = r_u64(&r);
		out->events[i].size = r_u32(&r);
		if (!r.err && out->events[i].type != MB_EVENT_NEW_MAIL)
			return MB_EPROTO;
	}
	if (r.err || r.left)
		return MB_EPROTO;
	out->n = n;
	return 0;
}

static int mb_error_encode_payload(struct mb_buf *out, const struct mb_frame_error *e)
{
	struct wr w = {out, 0};
	struct mb_bytes m = e->message;

	if (m.len > MB_PROTO_MAX_NAME)
		m.len = MB_PROTO_MAX_NAME;
	w_u32(&w, (uint32_t)e->code);
	w_str(&w, m);
	return w.err;
}

int mb_error_decode(const uint8_t *p, size_t len, struct mb_frame_error *out)
{
	struct rd r = {p, len, 0, NULL};

	out->code = (int32_t)r_u32(&r);
	out->message = r_str(&r, MB_PROTO_MAX_NAME);
	if (r.err || r.left)
		return MB_EPROTO;
	return 0;
}

/* ---- whole frames ---- */

static int frame_from_tmp(struct mb_buf *out, struct mb_buf *tmp, uint8_t kind, uint32_t seq,
			  const struct mb_codec_opts *opts, size_t *wire_len, int rc)
{
	if (rc == 0)
		rc = mb_frame_append(out, kind, seq, mb_buf_data(tmp), mb_buf_len(tmp), opts,
				     wire_len);
	mb_buf_reset(tmp);
	return rc;
}

int mb_request_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_request *r,
		      const struct mb_codec_opts *opts, size_t *wire_len)
{
	mb_buf_reset(tmp);
	int rc = mb_request_encode_payload(tmp, r);
	return frame_from_tmp(out, tmp, MB_FRAME_REQUEST, r->seq, opts, wire_len, rc);
}

int mb_reply_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_reply *r,
		    const struct mb_codec_opts *opts, size_t *wire_len)
{
	mb_buf_reset(tmp);
	int rc = mb_reply_encode_payload(tmp, r);
	return frame_from_tmp(out, tmp, MB_FRAME_REPLY, r->seq, opts, wire_len, rc);
}

int mb_notify_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_notify *n,
		     const struct mb_codec_opts *opts, size_t *wire_len)
{
	mb_buf_reset(tmp);
	int rc = mb_notify_encode_payload(tmp, n);
	return frame_from_tmp(out, tmp, MB_FRAME_NOTIFY, 0, opts, wire_len, rc);
}

int mb_error_encode(struct mb_buf *out, struct mb_buf *tmp, uint32_t seq, int code,
		    const char *message, size_t *wire_len)
{
	struct mb_frame_error e = {code, mb_str(message ? message : mb_strerror(code))};
	mb_buf_reset(tmp);
	int rc = mb_error_encode_payload(tmp, &e);
	return frame_from_tmp(out, tmp, MB_FRAME_ERROR, seq, NULL, wire_len, rc);
}
