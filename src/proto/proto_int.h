/* proto_int.h: what the codec's files (proto.c: primitives' users, props,
 * frames, notify and error payloads; proto_req.c: requests; proto_reply.c:
 * replies) share and nothing else includes: the little-endian primitives,
 * the writer (struct wr: latches its first error) and the reader (struct
 * rd: never reads past its end, latches MB_EPROTO), as static inline
 * functions (the codec's hot path), and the frame wrapper.
 */
#ifndef MB_PROTO_PROTO_INT_H
#define MB_PROTO_PROTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "proto/proto.h"

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
static inline void w_fail(struct wr *w, int err)
{
	if (!w->err)
		w->err = err;
}
static inline void w_bytes(struct wr *w, const void *p, size_t n)
{
	if (!w->err)
		w->err = mb_buf_append(w->b, p, n);
}
static inline void w_u8(struct wr *w, uint8_t v) { w_bytes(w, &v, 1); }
static inline void w_u16(struct wr *w, uint16_t v)
{
	uint8_t t[2];
	put16(t, v);
	w_bytes(w, t, 2);
}
static inline void w_u32(struct wr *w, uint32_t v)
{
	uint8_t t[4];
	put32(t, v);
	w_bytes(w, t, 4);
}
static inline void w_u64(struct wr *w, uint64_t v)
{
	uint8_t t[8];
	put64(t, v);
	w_bytes(w, t, 8);
}
static inline void w_str(struct wr *w, struct mb_bytes s)
{
	if (s.len > 0xFFFF) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, (uint16_t)s.len);
	w_bytes(w, s.p, s.len);
}
static inline void w_lstr(struct wr *w, struct mb_bytes s)
{
	w_u32(w, s.len);
	w_bytes(w, s.p, s.len);
}
/* A string property's value: UTF-8 in memory, on the wire `u32 len` +
 * len bytes of UTF-16LE (PtypString, MS-OXCDATA 2.11.1). Not valid UTF-8:
 * MB_EINVAL (proto.c). */
void mb__w_ustr(struct wr *w, struct mb_bytes s);

/* Reserve a u32 length slot; returns its offset from the buffer start. */
static inline size_t w_len_slot(struct wr *w)
{
	size_t at = mb_buf_len(w->b);
	w_u32(w, 0);
	return at;
}
static inline void w_len_fill(struct wr *w, size_t at)
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

static inline void w_prop(struct wr *w, const struct mb_prop *p)
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
		mb__w_ustr(w, p->v.b);
		break;
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
			mb__w_ustr(w, p->v.mv.v[i]);
		break;
	default:
		w_fail(w, MB_EINVAL);
	}
}

static inline void w_props(struct wr *w, const struct mb_prop *props, uint16_t n)
{
	if (n > MB_PROTO_MAX_PROPS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, n);
	for (uint16_t i = 0; i < n; i++)
		w_prop(w, &props[i]);
}

static inline void w_tags(struct wr *w, const uint32_t *tags, uint16_t n)
{
	if (n > MB_PROTO_MAX_PROPS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u16(w, n);
	for (uint16_t i = 0; i < n; i++)
		w_u32(w, tags[i]);
}

static inline void w_mids(struct wr *w, const uint64_t *mids, uint32_t n)
{
	if (n > MB_PROTO_MAX_IDS) {
		w_fail(w, MB_ETOOBIG);
		return;
	}
	w_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		w_u64(w, mids[i]);
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
static inline const uint8_t *r_take(struct rd *r, size_t n)
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
static inline uint8_t r_u8(struct rd *r)
{
	const uint8_t *p = r_take(r, 1);
	return p ? p[0] : 0;
}
static inline uint16_t r_u16(struct rd *r)
{
	const uint8_t *p = r_take(r, 2);
	return p ? get16(p) : 0;
}
static inline uint32_t r_u32(struct rd *r)
{
	const uint8_t *p = r_take(r, 4);
	return p ? get32(p) : 0;
}
static inline uint64_t r_u64(struct rd *r)
{
	const uint8_t *p = r_take(r, 8);
	return p ? get64(p) : 0;
}
static inline void r_fixed(struct rd *r, void *dst, size_t n)
{
	const uint8_t *p = r_take(r, n);
	if (p)
		memcpy(dst, p, n);
}
static inline struct mb_bytes r_span(struct rd *r, size_t n)
{
	const uint8_t *p = r_take(r, n);
	return p ? (struct mb_bytes){p, (uint32_t)n} : (struct mb_bytes){NULL, 0};
}
static inline struct mb_bytes r_str(struct rd *r, size_t max)
{
	uint16_t n = r_u16(r);
	if (!r->err && n > max) {
		r->err = MB_EPROTO;
		return (struct mb_bytes){NULL, 0};
	}
	return r_span(r, n);
}
static inline struct mb_bytes r_lstr(struct rd *r)
{
	uint32_t n = r_u32(r);
	return r_span(r, n);
}
/* A string property's value (see mb__w_ustr), converted to UTF-8 in the
 * reader's arena: an odd length or an unpaired surrogate is MB_EPROTO. */
struct mb_bytes mb__r_ustr(struct rd *r);
/* Allocate count elements of size sz after checking count <= max and that
 * count x min_wire bytes remain. */
static inline void *r_array(struct rd *r, uint32_t count, uint32_t max, size_t min_wire, size_t sz)
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

static inline void r_prop(struct rd *r, struct mb_prop *p)
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
		p->v.b = mb__r_ustr(r);
		break;
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
			p->v.mv.v[i] = mb__r_ustr(r);
		break;
	}
	default:
		r->err = MB_EPROTO;
	}
}

static inline void r_props(struct rd *r, struct mb_prop **props, uint16_t *n)
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

static inline void r_tags(struct rd *r, uint32_t **tags, uint16_t *n)
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

static inline void r_mids(struct rd *r, uint64_t **mids, uint32_t *n)
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

/* An op body: a u32 length, then that many bytes, read by a reader of
 * its own (r->err is set when the length or the bytes are missing). */
static inline struct rd r_body(struct rd *r)
{
	uint32_t blen = r_u32(r);
	const uint8_t *p = r_take(r, blen);
	return (struct rd){p, p ? blen : 0, 0, r->a};
}

/* 0 when the body decoded and used every byte, else its error. */
static inline int r_body_end(const struct rd *body)
{
	if (body->err)
		return body->err;
	return body->left ? MB_EPROTO : 0;
}

/* Frame tmp's payload (when rc is 0) into out, reset tmp; rc or the
 * frame's error. */
int mb__proto_frame_from_tmp(struct mb_buf *out, struct mb_buf *tmp, uint8_t kind, uint32_t seq,
			     const struct mb_codec_opts *opts, size_t *wire_len, int rc);

#endif
