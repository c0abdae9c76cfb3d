/* handles.c: a session's handles (folders' contents and hierarchy tables,
 * messages, drafts, attachments, streams, the address list, notification
 * subscriptions): found, made and released by number, and the properties
 * a draft or an opened message collects before it is saved.
 *
 * Invariants: at most MB_MAX_HANDLES per session, slots allocated on first
 * use; each handle is its own allocation and owns what it points at (a
 * draft's properties and attachments, a stream's bytes); a new handle under
 * a number in use releases the old one first.
 *
 * Held bytes: what a session's handles own, counted again after every
 * operation (mb__session_account, from mb_ops_execute) into session.held
 * and the store's sum (struct held_budget); an operation that would add
 * bytes asks mb__held_room first and fails with MB_EFULL, changing
 * nothing, when the session would pass its limit or the store its own.
 * So no session holds more than one operation's growth (a 4 MiB frame or
 * stream) past its limit, and all hold at most the store's limit plus
 * that growth per session.  Clearing a session returns its bytes to the
 * store's sum.
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

void mb__handle_clear(struct handle *h)
{
	for (uint16_t i = 0; i < h->nprops; i++) {
		struct mb_prop *p = &h->props[i].p;
		uint16_t t = MB_PTAG_TYPE(p->tag);
		if (t == MB_PT_STRING || t == MB_PT_BINARY)
			free((void *)p->v.b.p);
		else if (t == MB_PT_MV_STRING) {
			for (uint16_t j = 0; j < p->v.mv.n; j++)
				free((void *)p->v.mv.v[j].p);
			free(p->v.mv.v);
		}
	}
	free(h->props);
	for (uint16_t i = 0; i < h->natt; i++) {
		free(h->att[i].name);
		free(h->att[i].data);
	}
	free(h->att);
	free(h->data);
	for (int i = 0; i < MB_CS_COUNT; i++)
		free(h->cstate[i]);
	free(h->given);
	free(h->content);
	memset(h, 0, sizeof(*h));
}

void mb_session_clear(struct session *s)
{
	if (s->handles) {
		for (int i = 0; i < MB_MAX_HANDLES; i++) {
			if (s->handles[i]) {
				mb__handle_clear(s->handles[i]);
				free(s->handles[i]);
			}
		}
		free(s->handles);
		s->handles = NULL;
	}
	if (s->budget)
		atomic_fetch_sub(&s->budget->total, s->held);
	s->held = 0;
}

/* What a kept value costs beyond its bytes: its entry and an allocation's
 * header, so that many empty values are not free. */
#define VALUE_COST 32

size_t mb__props_bytes(const struct mb_prop *p, uint16_t n)
{
	size_t b = 0;
	for (uint16_t i = 0; i < n; i++) {
		uint16_t t = MB_PTAG_TYPE(p[i].tag);
		b += VALUE_COST;
		if (t == MB_PT_STRING || t == MB_PT_BINARY)
			b += p[i].v.b.len;
		else if (t == MB_PT_MV_STRING)
			for (uint16_t j = 0; j < p[i].v.mv.n; j++)
				b += VALUE_COST + p[i].v.mv.v[j].len;
	}
	return b;
}

/* The bytes handle h owns, itself included. */
size_t mb__handle_bytes(const struct handle *h)
{
	size_t b = sizeof(*h) + (h->data ? h->len : 0) + h->ccap;
	for (uint16_t i = 0; i < h->nprops; i++)
		b += mb__props_bytes(&h->props[i].p, 1);
	for (int i = 0; i < MB_CS_COUNT; i++)
		b += h->cstate_len[i];
	return b + (size_t)h->ngiven * sizeof(*h->given) + mb__handle_attach_bytes(h);
}

size_t mb__handle_attach_bytes(const struct handle *h)
{
	size_t b = 0;
	for (uint16_t i = 0; i < h->natt; i++)
		b += 2 * VALUE_COST + h->att[i].len + strlen(h->att[i].name);
	return b;
}

void mb__session_account(struct session *s)
{
	size_t b = 0;
	if (s->handles)
		for (int i = 0; i < MB_MAX_HANDLES; i++)
			if (s->handles[i])
				b += mb__handle_bytes(s->handles[i]);
	if (s->budget) {
		if (b > s->held)
			atomic_fetch_add(&s->budget->total, b - s->held);
		else
			atomic_fetch_sub(&s->budget->total, s->held - b);
	}
	s->held = b;
}

int mb__held_room(const struct session *s, size_t add)
{
	if (!s->budget || add == 0)
		return 0;
	if (s->held + add > s->budget->session_max ||
	    atomic_load(&s->budget->total) + add > s->budget->store_max) {
		atomic_fetch_add(&s->budget->refused, 1);
		return MB_EFULL;
	}
	return 0;
}

struct handle *mb__handle_find(struct session *s, uint32_t id)
{
	if (!s->handles || id == 0)
		return NULL;
	for (int i = 0; i < MB_MAX_HANDLES; i++)
		if (s->handles[i] && s->handles[i]->id == id)
			return s->handles[i];
	return NULL;
}

void mb__handle_release(struct session *s, struct handle *h)
{
	for (int i = 0; i < MB_MAX_HANDLES; i++) {
		if (s->handles[i] == h) {
			mb__handle_clear(h);
			free(h);
			s->handles[i] = NULL;
			return;
		}
	}
}

/* A fresh handle under id (an old one with that id is released).  Each
 * handle is its own allocation, so an idle session holds only what it
 * uses. */
int mb__handle_new(struct session *s, uint32_t id, uint8_t kind, struct handle **out)
{
	if (id == 0)
		return MB_EINVAL;
	if (!s->handles) {
		s->handles = calloc(MB_MAX_HANDLES, sizeof(struct handle *));
		if (!s->handles)
			return MB_ENOMEM;
	}
	struct handle *h = mb__handle_find(s, id);
	if (h) {
		mb__handle_clear(h);
	} else {
		int slot = -1;
		for (int i = 0; i < MB_MAX_HANDLES && slot < 0; i++)
			if (!s->handles[i])
				slot = i;
		if (slot < 0)
			return MB_EFULL;
		h = calloc(1, sizeof(*h));
		if (!h)
			return MB_ENOMEM;
		s->handles[slot] = h;
	}
	h->id = id;
	h->kind = kind;
	*out = h;
	return 0;
}

void *mb__dup_bytes(const void *p, size_t n)
{
	void *d = malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

/* Set (copy) a property on a draft/open message handle. */
int mb__handle_set_prop(struct handle *h, const struct mb_prop *p)
{
	struct draft_prop *dp = NULL;
	for (uint16_t i = 0; i < h->nprops; i++)
		if (h->props[i].p.tag == p->tag)
			dp = &h->props[i];
	if (!dp) {
		if (h->nprops >= MB_PROTO_MAX_PROPS)
			return MB_EFULL;
		void *n = realloc(h->props, (size_t)(h->nprops + 1) * sizeof(*h->props));
		if (!n)
			return MB_ENOMEM;
		h->props = n;
		dp = &h->props[h->nprops++];
	} else {
		/* free the old value by clearing a one-prop copy */
		struct handle tmp;
		memset(&tmp, 0, sizeof(tmp));
		tmp.nprops = 1;
		tmp.props = malloc(sizeof(*tmp.props));
		if (!tmp.props)
			return MB_ENOMEM;
		tmp.props[0] = *dp;
		mb__handle_clear(&tmp);
	}
	memset(dp, 0, sizeof(*dp));
	dp->p.tag = p->tag;
	switch (MB_PTAG_TYPE(p->tag)) {
	case MB_PT_STRING:
	case MB_PT_BINARY:
		dp->p.v.b.p = mb__dup_bytes(p->v.b.p, p->v.b.len);
		dp->p.v.b.len = p->v.b.len;
		if (!dp->p.v.b.p)
			return MB_ENOMEM;
		break;
	case MB_PT_MV_STRING:
		dp->p.v.mv.v = calloc(p->v.mv.n ? p->v.mv.n : 1, sizeof(struct mb_bytes));
		if (!dp->p.v.mv.v)
			return MB_ENOMEM;
		dp->p.v.mv.n = p->v.mv.n;
		for (uint16_t j = 0; j < p->v.mv.n; j++) {
			dp->p.v.mv.v[j].p = mb__dup_bytes(p->v.mv.v[j].p, p->v.mv.v[j].len);
			dp->p.v.mv.v[j].len = p->v.mv.v[j].len;
			if (!dp->p.v.mv.v[j].p)
				return MB_ENOMEM;
		}
		break;
	default:
		dp->p.v.i = p->v.i;
	}
	return 0;
}

const struct mb_prop *mb__handle_prop(const struct handle *h, uint32_t tag)
{
	for (uint16_t i = 0; i < h->nprops; i++)
		if (h->props[i].p.tag == tag)
			return &h->props[i].p;
	return NULL;
}
