/* proto.c: encoders and decoders of the wire protocol (docs/PROTOCOL.md).
 * Invariants: the reader (struct rd) never reads past its end: every
 * primitive read checks the bytes left and latches an error; every count is
 * checked against a limit and against the bytes left (count x minimum
 * element size) before anything is allocated; every op body must be
 * consumed exactly.  Encoders latch the first error and return it. */
#include "proto/proto.h"
#include "core/error.h"
#include "proto/lz77.h"
#include "proto/proto_int.h"

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

int64_t mb_op_opens_handle(const struct mb_op *op)
{
	switch (op->code) {
	case MB_OP_GET_HIERARCHY_TABLE:
	case MB_OP_GET_CONTENTS_TABLE:
	case MB_OP_REGISTER_NOTIFY:
		return op->u.get_table.handle;
	case MB_OP_OPEN_MESSAGE:
		return op->u.open_message.handle;
	case MB_OP_CREATE_MESSAGE:
		return op->u.create_message.handle;
	case MB_OP_CREATE_ATTACH:
	case MB_OP_GET_ATTACH_TABLE:
	case MB_OP_OPEN_ATTACH:
		return op->u.attach.handle;
	case MB_OP_OPEN_STREAM:
		return op->u.open_stream.handle;
	case MB_OP_GET_AB_TABLE:
		return op->u.ab_table.handle;
	case MB_OP_SYNC_CONFIGURE:
	case MB_OP_SYNC_OPEN_COLLECTOR:
		return op->u.sync_cfg.handle;
	case MB_OP_SYNC_GET_STATE:
		return op->u.sync_xfer.out;
	}
	return -1;
}

/* ---- strings: UTF-8 in memory, UTF-16LE on the wire ---- */

/* The code point at s[*i], stepping *i past it; -1 for bytes that are not
 * UTF-8 (a stray or missing continuation byte, an overlong form, a
 * surrogate, above U+10FFFF). */
static int32_t utf8_next(const uint8_t *s, uint32_t len, uint32_t *i)
{
	uint8_t c = s[*i];
	uint32_t n;
	int32_t cp, min;
	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if ((c & 0xE0) == 0xC0) {
		n = 1, cp = c & 0x1F, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		n = 2, cp = c & 0x0F, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		n = 3, cp = c & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (len - *i <= n)
		return -1;
	for (uint32_t k = 1; k <= n; k++) {
		uint8_t d = s[*i + k];
		if ((d & 0xC0) != 0x80)
			return -1;
		cp = (cp << 6) | (d & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*i += n + 1;
	return cp;
}

/* One pass: the length slot is filled in after the conversion. */
void mb__w_ustr(struct wr *w, struct mb_bytes s)
{
	size_t at = w_len_slot(w);
	uint8_t t[256];
	size_t k = 0;
	for (uint32_t i = 0; i < s.len;) {
		int32_t cp = utf8_next(s.p, s.len, &i);
		if (cp < 0) {
			w_fail(w, MB_EINVAL);
			return;
		}
		if (cp >= 0x10000) {
			cp -= 0x10000;
			put16(t + k, (uint16_t)(0xD800 + (cp >> 10)));
			put16(t + k + 2, (uint16_t)(0xDC00 + (cp & 0x3FF)));
			k += 4;
		} else {
			put16(t + k, (uint16_t)cp);
			k += 2;
		}
		if (k > sizeof(t) - 4) {
			w_bytes(w, t, k);
			k = 0;
		}
	}
	w_bytes(w, t, k);
	w_len_fill(w, at);
}

/* The code point of the UTF-16LE unit(s) at p[*i] (of n bytes), stepping
 * *i past them; -1 for an unpaired surrogate. */
static int32_t utf16_next(const uint8_t *p, uint32_t n, uint32_t *i)
{
	int32_t u = get16(p + *i);
	*i += 2;
	if (u < 0xD800 || u > 0xDFFF)
		return u;
	if (u > 0xDBFF || n - *i < 2)
		return -1;
	int32_t lo = get16(p + *i);
	if (lo < 0xDC00 || lo > 0xDFFF)
		return -1;
	*i += 2;
	return 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
}

static size_t utf8_len(int32_t cp) { return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4; }

static size_t utf8_put(uint8_t *o, int32_t cp)
{
	if (cp < 0x80) {
		o[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (uint8_t)(0xC0 | (cp >> 6));
		o[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (uint8_t)(0xE0 | (cp >> 12));
		o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (uint8_t)(0xF0 | (cp >> 18));
	o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

struct mb_bytes mb__r_ustr(struct rd *r)
{
	static const uint8_t empty[1];
	struct mb_bytes none = {NULL, 0};
	uint32_t n = r_u32(r);
	if (!r->err && (n & 1))
		r->err = MB_EPROTO;
	const uint8_t *p = r_take(r, n);
	if (!p)
		return none;
	/* first pass: validate and size; second: convert */
	size_t out = 0;
	for (uint32_t i = 0; i < n;) {
		int32_t cp = utf16_next(p, n, &i);
		if (cp < 0) {
			r->err = MB_EPROTO;
			return none;
		}
		out += utf8_len(cp);
	}
	if (out == 0)
		return (struct mb_bytes){empty, 0};
	uint8_t *o = mb_arena_alloc(r->a, out);
	if (!o) {
		r->err = MB_ETOOBIG;
		return none;
	}
	size_t k = 0;
	for (uint32_t i = 0; i < n;)
		k += utf8_put(o + k, utf16_next(p, n, &i));
	return (struct mb_bytes){o, (uint32_t)k};
}

/* A string's bytes on the wire, UTF-16 (not UTF-8: its length twice, an
 * estimate; the encoder refuses it). */
static size_t ustr_wire(struct mb_bytes s)
{
	size_t n = 0;
	for (uint32_t i = 0; i < s.len;) {
		int32_t cp = utf8_next(s.p, s.len, &i);
		if (cp < 0)
			return 2 * (size_t)s.len;
		n += cp >= 0x10000 ? 4 : 2;
	}
	return n;
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
		return 8 + ustr_wire(p->v.b);
	case MB_PT_BINARY:
		return 8 + (size_t)p->v.b.len;
	case MB_PT_MV_STRING: {
		size_t s = 6;
		for (uint16_t i = 0; i < p->v.mv.n; i++)
			s += 4 + ustr_wire(p->v.mv.v[i]);
		return s;
	}
	}
	return 4;
}

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
	    (hdr->flags & ~MB_FRAME_F_LZ77))
		return MB_EPROTO;
	if (hdr->len > max_frame || hdr->raw_len > max_frame)
		return MB_ETOOBIG;
	if (!(hdr->flags & MB_FRAME_F_LZ77) && hdr->raw_len != hdr->len)
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

	if (!(hdr->flags & MB_FRAME_F_LZ77)) {
		*payload = src;
		*len = hdr->len;
		return 0;
	}
	if (hdr->raw_len > MB_PROTO_MAX_FRAME)
		return MB_ETOOBIG;
	mb_buf_reset(scratch);
	rc = mb_buf_reserve(scratch, hdr->raw_len ? hdr->raw_len : 1, &dst);
	if (rc)
		return rc;
	size_t n = 0;
	if (mb_lz77_decode(src, hdr->len, dst, hdr->raw_len, &n) != 0 || n != hdr->raw_len)
		return MB_EPROTO;
	mb_buf_commit(scratch, n);
	*payload = mb_buf_data(scratch);
	*len = n;
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
	rc = mb_buf_reserve(out, MB_FRAME_HDR + mb_lz77_bound(len), &h);
	if (rc)
		return rc;
	uint8_t flags = 0;
	size_t wire = len;
	if (opts && opts->lz77 && len >= opts->min_bytes && len > 0) {
		size_t c = mb_lz77_encode(opts->lz77, payload, len, h + MB_FRAME_HDR);
		if (c > 0) {
			flags = MB_FRAME_F_LZ77;
			wire = c;
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

/* ---- reply ---- */

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

int mb__proto_frame_from_tmp(struct mb_buf *out, struct mb_buf *tmp, uint8_t kind, uint32_t seq,
			     const struct mb_codec_opts *opts, size_t *wire_len, int rc)
{
	if (rc == 0)
		rc = mb_frame_append(out, kind, seq, mb_buf_data(tmp), mb_buf_len(tmp), opts,
				     wire_len);
	return rc;
}

int mb_notify_encode(struct mb_buf *out, struct mb_buf *tmp, const struct mb_notify *n,
		     const struct mb_codec_opts *opts, size_t *wire_len)
{
	mb_buf_reset(tmp);
	int rc = mb_notify_encode_payload(tmp, n);
	return mb__proto_frame_from_tmp(out, tmp, MB_FRAME_NOTIFY, 0, opts, wire_len, rc);
}

int mb_error_encode(struct mb_buf *out, struct mb_buf *tmp, uint32_t seq, int code,
		    const char *message, size_t *wire_len)
{
	struct mb_frame_error e = {code, mb_str(message ? message : mb_strerror(code))};
	mb_buf_reset(tmp);
	int rc = mb_error_encode_payload(tmp, &e);
	return mb__proto_frame_from_tmp(out, tmp, MB_FRAME_ERROR, seq, NULL, wire_len, rc);
}
