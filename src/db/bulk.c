/* bulk.c: bulk build of B+trees (see bulk.h for the model and its states).
 *
 * Page numbers are handed out from the database's page count upwards, in
 * the order pages are finished, so the file grows sequentially:
 *  - a long value's overflow chain gets consecutive pages when it is put;
 *  - a node gets its page number when the node BEFORE it on its level
 *    closes (that one needs it for its sibling link or its parent's
 *    separator); the first node of a level gets one when it closes, and the
 *    top node of a tree never does: it is copied into the tree's existing
 *    root page by the final transaction (the root page number never changes,
 *    as btree.c requires), so no page is left unused.
 * Pages pass through a write window (WIN_BYTES of consecutive page numbers):
 * filled slots are written in runs when a page beyond the window arrives; a
 * node whose number lies below the window (reserved before the window moved)
 * is written on its own.  Bulk pages carry LSN 0, so their first later change
 * logs a full image (torn-page protection).
 * Formats are btree.c's (leaf cell: u16 klen, u8 flags, u32 vlen, key,
 * value or u32 first overflow page; internal cell: u16 klen, u32 child, key;
 * a cell is at most a quarter page, larger values overflow).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "db/bulk.h"
#include "db/dbint.h"
#include "db/pager.h"

#define LEAF_FIXED 7
#define INT_FIXED 6
#define FILL_PCT 90	     /* node fill of a bulk build */
#define WIN_BYTES (4u << 20) /* write window */
#define MAXLV 32

struct sent {		   /* a staged row */
	size_t koff, voff; /* into the tree's arena */
	uint32_t klen, vlen;
	uint32_t first; /* overflow chain (long values) */
	uint8_t ovf, dead;
};

struct sref { /* a live row for sorting (no context needed) */
	const uint8_t *key;
	uint32_t klen, idx;
};

struct level {
	uint8_t *page; /* MB_IO_ALIGN aligned, page size */
	uint32_t pgno; /* 0: not numbered yet (first node of the level) */
};

struct btb { /* one tree being built */
	uint32_t root;
	struct sent *ents;
	uint32_t n, cap;
	uint32_t *hash; /* entry index + 1; 0 empty */
	uint32_t hcap;
	uint8_t *arena;
	size_t alen, acap;
	struct level lv[MAXLV];
	int nlv;
	uint8_t last[MB_KEY_MAX];
	size_t lastlen;
	bool any;
	struct sref *order; /* flush: live rows, sorted */
	uint32_t ocap;
};

struct mb_bulk {
	struct mb_db *db;
	uint32_t ps;
	uint32_t start, next; /* page count at begin, next page number */
	struct btb *t;
	int nt, tcap;
	uint8_t *win; /* window of WIN pages from wbase */
	uint8_t *wfill;
	uint32_t wbase, wpages;
	uint8_t *cell;	   /* one cell of scratch */
	uint32_t *orphans; /* overflow pages of replaced staged values */
	size_t norph, corph;
	struct mb_bulk_stats st;
	int err;
};

static int berr(struct mb_bulk *b, int code, const char *what)
{
	if (!b->err)
		b->err = code;
	return db_seterr(b->db, code, "%s: bulk build: %s", b->db->path, what);
}

/* ------------------------------ writing ------------------------------ */

static void seal(struct mb_bulk *b, uint8_t *p, uint32_t pgno)
{
	wr32(p + PG_OFF_PGNO, pgno);
	wr64(p + PG_OFF_LSN, 0);
	mb_page_seal(p, b->ps);
}

static int win_flush(struct mb_bulk *b)
{
	uint32_t i = 0;
	while (i < b->wpages) {
		if (!b->wfill[i]) {
			i++;
			continue;
		}
		uint32_t j = i;
		while (j < b->wpages && b->wfill[j])
			j++;
		size_t len = (size_t)(j - i) * b->ps;
		int r = mb_file_write(b->db->file, b->win + (size_t)i * b->ps, len,
				      (uint64_t)(b->wbase + i) * b->ps);
		if (r < 0)
			return berr(b, r, "write failed");
		b->st.bytes += len;
		b->st.writes++;
		memset(b->wfill + i, 0, j - i);
		i = j;
	}
	return 0;
}

/* A slot of the window for page pgno (>= the window's base), moving the
 * window forward when pgno lies beyond it; NULL when pgno is below it. */
static uint8_t *win_slot(struct mb_bulk *b, uint32_t pgno, int *r)
{
	*r = 0;
	if (pgno < b->wbase)
		return NULL;
	if (pgno >= b->wbase + b->wpages) {
		if ((*r = win_flush(b)) < 0)
			return NULL;
		b->wbase = pgno;
	}
	uint32_t i = pgno - b->wbase;
	b->wfill[i] = 1;
	b->st.pages++;
	return b->win + (size_t)i * b->ps;
}

/* Write a finished node page (sealed here). */
static int node_out(struct mb_bulk *b, uint32_t pgno, uint8_t *page)
{
	int r;
	seal(b, page, pgno);
	uint8_t *s = win_slot(b, pgno, &r);
	if (r < 0)
		return r;
	if (s) {
		memcpy(s, page, b->ps);
		return 0;
	}
	r = mb_file_write(b->db->file, page, b->ps, (uint64_t)pgno * b->ps);
	if (r < 0)
		return berr(b, r, "write failed");
	b->st.pages++;
	b->st.bytes += b->ps;
	b->st.writes++;
	return 0;
}

static int new_pgno(struct mb_bulk *b, uint32_t *out)
{
	if (b->next == UINT32_MAX)
		return berr(b, MB_EFULL, "the database is full");
	*out = b->next++;
	return 0;
}

/* A long value's run of consecutive pages from first, chunk by chunk: put
 * from in through the write window (the pages are new), or, with in NULL,
 * read back from the file into out (the window is written first). */
static int ovf_run(struct mb_bulk *b, uint32_t first, size_t vlen, const uint8_t *in, uint8_t *out)
{
	uint32_t chunk = b->ps - PG_HDR;
	size_t n = (vlen + chunk - 1) / chunk, done = 0;
	uint8_t *rd = NULL;
	int r = 0;
	if (!in) {
		if ((r = win_flush(b)) < 0)
			return r;
		if (!(rd = mb_io_alloc(b->ps)))
			return berr(b, MB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		uint32_t pgno = first + (uint32_t)i;
		size_t k = vlen - done < chunk ? vlen - done : chunk;
		uint8_t *p = in ? win_slot(b, pgno, &r) : NULL;
		if (!in) {
			r = mb_file_read(b->db->file, rd, b->ps, (uint64_t)pgno * b->ps);
			if (r == 0)
				memcpy(out + done, rd + PG_HDR, k);
		} else if (!p) {
			return r < 0 ? r : berr(b, MB_ESTATE, "overflow page below the window");
		} else {
			memset(p + PG_DELTA_FROM, 0, PG_HDR - PG_DELTA_FROM);
			p[PG_OFF_TYPE] = PT_OVERFLOW;
			wr32(p + PG_OFF_NEXT, i + 1 < n ? pgno + 1 : 0);
			wr32(p + PG_OFF_PREV, (uint32_t)k);
			memcpy(p + PG_HDR, in + done, k);
			if (k < chunk)
				memset(p + PG_HDR + k, 0, chunk - k);
			seal(b, p, pgno);
		}
		done += k;
	}
	mb_io_free(rd);
	return r;
}

/* A long value's overflow chain on consecutive new pages. */
static int ovf_out(struct mb_bulk *b, const uint8_t *v, size_t vlen, uint32_t *first)
{
	uint32_t chunk = b->ps - PG_HDR;
	size_t n = (vlen + chunk - 1) / chunk;
	if ((uint64_t)b->next + n >= UINT32_MAX)
		return berr(b, MB_EFULL, "the database is full");
	*first = b->next;
	b->next += (uint32_t)n;
	return ovf_run(b, *first, vlen, v, NULL);
}

/* ------------------------------ nodes -------------------------------- */

static void node_init(uint8_t *p, uint32_t ps, bool leaf)
{
	memset(p, 0, ps);
	p[PG_OFF_TYPE] = leaf ? PT_LEAF : PT_INTERNAL;
	wr16(p + PG_OFF_CELLLO, (uint16_t)ps);
}

static size_t node_used(const uint8_t *p, uint32_t ps)
{
	return (size_t)(ps - rd16(p + PG_OFF_CELLLO)) + 2u * rd16(p + PG_OFF_NKEYS);
}

static void node_append(uint8_t *p, const uint8_t *cell, size_t len)
{
	int n = rd16(p + PG_OFF_NKEYS);
	uint32_t lo = rd16(p + PG_OFF_CELLLO) - (uint32_t)len;
	memcpy(p + lo, cell, len);
	wr16(p + PG_HDR + 2 * n, (uint16_t)lo);
	wr16(p + PG_OFF_CELLLO, (uint16_t)lo);
	wr16(p + PG_OFF_NKEYS, (uint16_t)(n + 1));
}

static int level_open(struct mb_bulk *b, struct btb *t, int lv)
{
	if (lv >= MAXLV)
		return berr(b, MB_ECORRUPT, "tree deeper than 32 levels");
	t->lv[lv].page = mb_io_alloc(b->ps);
	if (!t->lv[lv].page)
		return berr(b, MB_ENOMEM, "out of memory");
	node_init(t->lv[lv].page, b->ps, lv == 0);
	t->lv[lv].pgno = 0;
	t->nlv = lv + 1;
	return 0;
}

/* Add a separator (key, child) to level lv (>= 1). */
static int sep_add(struct mb_bulk *b, struct btb *t, int lv, const uint8_t *key, size_t kl,
		   uint32_t child);

/* Close the node of level lv: number it (when not yet), write it, start the
 * next one (numbered now) and hand the parent the separator key for it.
 * first_child: the new internal node's leftmost child (internal levels). */
static int level_split(struct mb_bulk *b, struct btb *t, int lv, const uint8_t *key, size_t kl,
		       uint32_t first_child)
{
	struct level *L = &t->lv[lv];
	int r;
	bool leaf = lv == 0;
	if (!L->pgno && (r = new_pgno(b, &L->pgno)) < 0)
		return r;
	uint32_t nx = 0;
	if ((r = new_pgno(b, &nx)) < 0)
		return r;
	if (leaf)
		wr32(L->page + PG_OFF_NEXT, nx);
	uint32_t closed = L->pgno;
	if ((r = node_out(b, closed, L->page)) < 0)
		return r;
	node_init(L->page, b->ps, leaf);
	L->pgno = nx;
	if (leaf)
		wr32(L->page + PG_OFF_PREV, closed);
	else
		wr32(L->page + PG_OFF_PREV, first_child);
	if (lv + 1 >= t->nlv) {
		if ((r = level_open(b, t, lv + 1)) < 0)
			return r;
		wr32(t->lv[lv + 1].page + PG_OFF_PREV, closed);
	}
	return sep_add(b, t, lv + 1, key, kl, nx);
}

static int sep_add(struct mb_bulk *b, struct btb *t, int lv, const uint8_t *key, size_t kl,
		   uint32_t child)
{
	uint8_t cell[INT_FIXED + MB_KEY_MAX];
	size_t len = INT_FIXED + kl;
	uint8_t *p = t->lv[lv].page;
	size_t limit = (size_t)(b->ps - PG_HDR) * FILL_PCT / 100;
	if (node_used(p, b->ps) + len + 2 > limit && rd16(p + PG_OFF_NKEYS) > 0)
		/* the new node starts with child as its leftmost child; key goes up */
		return level_split(b, t, lv, key, kl, child);
	wr16(cell, (uint16_t)kl);
	wr32(cell + 2, child);
	memcpy(cell + INT_FIXED, key, kl);
	node_append(p, cell, len);
	return 0;
}

/* Append a leaf cell (its key at cell + LEAF_FIXED). */
static int leaf_add(struct mb_bulk *b, struct btb *t, const uint8_t *cell, size_t len)
{
	int r;
	if (t->nlv == 0 && (r = level_open(b, t, 0)) < 0)
		return r;
	uint8_t *p = t->lv[0].page;
	size_t limit = (size_t)(b->ps - PG_HDR) * FILL_PCT / 100;
	if (node_used(p, b->ps) + len + 2 > limit && rd16(p + PG_OFF_NKEYS) > 0) {
		if ((r = level_split(b, t, 0, cell + LEAF_FIXED, rd16(cell), 0)) < 0)
			return r;
		p = t->lv[0].page;
	}
	node_append(p, cell, len);
	return 0;
}

/* --------------------------- staged rows ----------------------------- */

static uint32_t khash(const void *k, size_t kl)
{
	const uint8_t *p = k;
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < kl; i++)
		h = (h ^ p[i]) * 16777619u;
	return h ^ (h >> 15);
}

static int tree_of(struct mb_bulk *b, uint32_t root, struct btb **out)
{
	for (int i = 0; i < b->nt; i++)
		if (b->t[i].root == root) {
			*out = &b->t[i];
			return 0;
		}
	/* first use: the tree must be empty */
	struct frame *f;
	int r = pg_get(b->db, root, &f);
	if (r < 0)
		return r;
	bool empty = f->data[PG_OFF_TYPE] == PT_LEAF && rd16(f->data + PG_OFF_NKEYS) == 0;
	cache_put(f);
	if (!empty)
		return berr(b, MB_ESTATE, "the tree is not empty");
	if (b->nt == b->tcap) {
		int nc = b->tcap ? 2 * b->tcap : 8;
		struct btb *nt = realloc(b->t, sizeof(*nt) * (size_t)nc);
		if (!nt)
			return berr(b, MB_ENOMEM, "out of memory");
		b->t = nt;
		b->tcap = nc;
	}
	struct btb *t = &b->t[b->nt++];
	memset(t, 0, sizeof(*t));
	t->root = root;
	*out = t;
	return 0;
}

static const uint8_t *ekey(const struct btb *t, const struct sent *e) { return t->arena + e->koff; }

/* index of key in t's staged rows, or -1 */
static int64_t find(const struct btb *t, const void *key, size_t kl)
{
	if (!t->hcap)
		return -1;
	uint32_t m = t->hcap - 1;
	for (uint32_t h = khash(key, kl) & m;; h = (h + 1) & m) {
		uint32_t v = t->hash[h];
		if (!v)
			return -1;
		const struct sent *e = &t->ents[v - 1];
		if (e->klen == kl && !memcmp(ekey(t, e), key, kl))
			return v - 1;
	}
}

static void hash_insert(struct btb *t, uint32_t idx)
{
	const struct sent *e = &t->ents[idx];
	uint32_t m = t->hcap - 1, h = khash(ekey(t, e), e->klen) & m;
	while (t->hash[h])
		h = (h + 1) & m;
	t->hash[h] = idx + 1;
}

static int arena_add(struct mb_bulk *b, struct btb *t, const void *p, size_t n, size_t *off)
{
	if (t->alen + n > t->acap) {
		size_t c = t->acap ? t->acap : 65536;
		while (c < t->alen + n)
			c *= 2;
		uint8_t *a = realloc(t->arena, c);
		if (!a)
			return berr(b, MB_ENOMEM, "out of memory");
		t->arena = a;
		t->acap = c;
	}
	*off = t->alen;
	if (n)
		memcpy(t->arena + t->alen, p, n);
	t->alen += n;
	return 0;
}

static int orphan(struct mb_bulk *b, const struct sent *e)
{
	if (!e->ovf)
		return 0;
	uint32_t chunk = b->ps - PG_HDR, n = (e->vlen + chunk - 1) / chunk;
	if (b->norph + n > b->corph) {
		size_t c = b->corph ? b->corph : 64;
		while (c < b->norph + n)
			c *= 2;
		uint32_t *o = realloc(b->orphans, c * sizeof(*o));
		if (!o)
			return berr(b, MB_ENOMEM, "out of memory");
		b->orphans = o;
		b->corph = c;
	}
	for (uint32_t i = 0; i < n; i++)
		b->orphans[b->norph++] = e->first + i;
	return 0;
}

static int below_flushed(struct mb_bulk *b, struct btb *t, const void *key, size_t kl)
{
	if (t->any && kcmp(key, kl, t->last, t->lastlen) <= 0)
		return berr(b, MB_ESTATE, "a key at or below one already written");
	return 0;
}

int bulk_tree_put(struct mb_bulk *b, uint32_t root, const void *key, size_t klen, const void *val,
		  size_t vlen, int flags)
{
	struct btb *t;
	int r;
	if (b->err)
		return b->err;
	if ((r = tree_of(b, root, &t)) < 0 || (r = below_flushed(b, t, key, klen)) < 0)
		return r;
	int64_t i = find(t, key, klen);
	bool live = i >= 0 && !t->ents[i].dead;
	if (live && (flags & MB_PUT_NOOVERWRITE))
		return MB_EEXIST;
	if (!live && (flags & MB_PUT_UPDATE))
		return MB_ENOTFOUND;
	struct sent e;
	memset(&e, 0, sizeof(e));
	e.klen = (uint32_t)klen;
	e.vlen = (uint32_t)vlen;
	e.ovf = LEAF_FIXED + klen + vlen + 2 > b->ps / 4;
	if (e.ovf) {
		if ((r = ovf_out(b, val, vlen, &e.first)) < 0)
			return r;
	} else if ((r = arena_add(b, t, val, vlen, &e.voff)) < 0) {
		return r;
	}
	if (i >= 0) {
		struct sent *o = &t->ents[i];
		if (live && (r = orphan(b, o)) < 0)
			return r;
		e.koff = o->koff;
		*o = e;
		return 0;
	}
	if ((r = arena_add(b, t, key, klen, &e.koff)) < 0)
		return r;
	if (t->n == t->cap) {
		uint32_t c = t->cap ? 2 * t->cap : 256;
		struct sent *ne = realloc(t->ents, sizeof(*ne) * c);
		if (!ne)
			return berr(b, MB_ENOMEM, "out of memory");
		t->ents = ne;
		t->cap = c;
	}
	t->ents[t->n] = e;
	if (2 * (t->n + 1) > t->hcap) {
		uint32_t hc = t->hcap ? 2 * t->hcap : 512;
		uint32_t *h = calloc(hc, sizeof(*h));
		if (!h)
			return berr(b, MB_ENOMEM, "out of memory");
		free(t->hash);
		t->hash = h;
		t->hcap = hc;
		for (uint32_t k = 0; k < t->n; k++)
			hash_insert(t, k);
	}
	hash_insert(t, t->n);
	t->n++;
	return 0;
}

int bulk_tree_get(struct mb_bulk *b, uint32_t root, const void *key, size_t klen,
		  struct mb_val *out, size_t *lenp)
{
	struct btb *t;
	int r;
	if (b->err)
		return b->err;
	if ((r = tree_of(b, root, &t)) < 0 || (r = below_flushed(b, t, key, klen)) < 0)
		return r;
	int64_t i = find(t, key, klen);
	if (i < 0 || t->ents[i].dead)
		return MB_ENOTFOUND;
	const struct sent *e = &t->ents[i];
	if (lenp) {
		*lenp = e->vlen;
		return 0;
	}
	size_t need = e->vlen ? e->vlen : 1;
	if (need > out->cap || !out->data) {
		void *p = realloc(out->data, need);
		if (!p)
			return MB_ENOMEM;
		out->data = p;
		out->cap = need;
	}
	out->len = e->vlen;
	if (e->ovf)
		return ovf_run(b, e->first, e->vlen, NULL, out->data);
	memcpy(out->data, t->arena + e->voff, e->vlen);
	return 0;
}

int bulk_tree_del(struct mb_bulk *b, uint32_t root, const void *key, size_t klen)
{
	struct btb *t;
	int r;
	if (b->err)
		return b->err;
	if ((r = tree_of(b, root, &t)) < 0 || (r = below_flushed(b, t, key, klen)) < 0)
		return r;
	int64_t i = find(t, key, klen);
	if (i < 0 || t->ents[i].dead)
		return MB_ENOTFOUND;
	if ((r = orphan(b, &t->ents[i])) < 0)
		return r;
	t->ents[i].dead = 1;
	return 0;
}

/* ------------------------------ flush -------------------------------- */

static int by_key(const void *a, const void *b)
{
	const struct sref *x = a, *y = b;
	return kcmp(x->key, x->klen, y->key, y->klen);
}

static int tree_flush(struct mb_bulk *b, struct btb *t)
{
	if (t->n == 0)
		return 0;
	if (t->ocap < t->n) {
		struct sref *o = realloc(t->order, sizeof(*o) * t->cap);
		if (!o)
			return berr(b, MB_ENOMEM, "out of memory");
		t->order = o;
		t->ocap = t->cap;
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < t->n; i++)
		if (!t->ents[i].dead)
			t->order[m++] = (struct sref){ekey(t, &t->ents[i]), t->ents[i].klen, i};
	qsort(t->order, m, sizeof(*t->order), by_key);
	int r = 0;
	for (uint32_t j = 0; j < m && r == 0; j++) {
		const struct sent *e = &t->ents[t->order[j].idx];
		uint8_t *c = b->cell;
		size_t len = LEAF_FIXED + e->klen + (e->ovf ? 4 : e->vlen);
		wr16(c, (uint16_t)e->klen);
		c[2] = e->ovf ? 1 : 0;
		wr32(c + 3, e->vlen);
		memcpy(c + LEAF_FIXED, ekey(t, e), e->klen);
		if (e->ovf)
			wr32(c + LEAF_FIXED + e->klen, e->first);
		else if (e->vlen)
			memcpy(c + LEAF_FIXED + e->klen, t->arena + e->voff, e->vlen);
		r = leaf_add(b, t, c, len);
		if (r == 0 && j + 1 == m) {
			memcpy(t->last, ekey(t, e), e->klen);
			t->lastlen = e->klen;
			t->any = true;
		}
		b->st.rows++;
	}
	t->n = 0;
	t->alen = 0;
	if (t->hcap)
		memset(t->hash, 0, sizeof(*t->hash) * t->hcap);
	return r;
}

int mb_bulk_flush(struct mb_bulk *b)
{
	if (b->err)
		return b->err;
	for (int i = 0; i < b->nt; i++) {
		int r = tree_flush(b, &b->t[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---------------------------- begin/end ------------------------------ */

static void bulk_free(struct mb_bulk *b)
{
	for (int i = 0; i < b->nt; i++) {
		struct btb *t = &b->t[i];
		for (int l = 0; l < t->nlv; l++)
			mb_io_free(t->lv[l].page);
		free(t->ents);
		free(t->hash);
		free(t->arena);
		free(t->order);
	}
	free(b->t);
	mb_io_free(b->win);
	free(b->wfill);
	free(b->cell);
	free(b->orphans);
	free(b);
}

/* close hook (pager.h): closing the database abandons a build in progress */
static void bulk_close_hook(struct mb_db *db)
{
	if (db->bulk)
		mb_bulk_abort(db->bulk);
}

int mb_bulk_begin(struct mb_db *db, struct mb_bulk **out)
{
	if (db->in_txn || db->bulk)
		return db_seterr(db, MB_ESTATE, "%s: bulk build: a transaction or build is open",
				 db->name);
	struct mb_bulk *b = calloc(1, sizeof(*b));
	if (!b)
		return MB_ENOMEM;
	b->db = db;
	b->ps = db->page_size;
	b->wpages = WIN_BYTES / b->ps;
	b->win = mb_io_alloc((size_t)b->wpages * b->ps);
	b->wfill = calloc(b->wpages, 1);
	b->cell = malloc(b->ps);
	if (!b->win || !b->wfill || !b->cell) {
		bulk_free(b);
		return MB_ENOMEM;
	}
	/* no frame of this file may outlive the build (a page beyond the page
	 * count cached by an aborted transaction would hide a bulk page) */
	int r = db_cache_reset(db);
	struct frame *h = NULL;
	if (r == 0)
		r = pg_get(db, 0, &h);
	if (r == 0) {
		b->start = b->next = rd32(h->data + HP_OFF_PAGECOUNT);
		cache_put(h);
		/* what an interrupted build wrote past the page count goes */
		r = mb_file_truncate(db->file, (uint64_t)b->start * b->ps);
	}
	if (r < 0) {
		bulk_free(b);
		return r;
	}
	b->wbase = b->next;
	db->bulk = b;
	db_on_close(db, DB_HOOK_BULK, bulk_close_hook);
	*out = b;
	return 0;
}

void mb_bulk_abort(struct mb_bulk *b)
{
	if (!b)
		return;
	b->db->bulk = NULL;
	bulk_free(b);
}

/* Write every tree's last nodes; the top node stays for the root. */
static int close_levels(struct mb_bulk *b, struct btb *t)
{
	for (int l = 0; l + 1 < t->nlv; l++) {
		int r = node_out(b, t->lv[l].pgno, t->lv[l].page);
		if (r < 0)
			return r;
	}
	return 0;
}

int mb_bulk_finish(struct mb_bulk *b)
{
	struct mb_db *db = b->db;
	int r = mb_bulk_flush(b);
	for (int i = 0; i < b->nt && r == 0; i++)
		r = close_levels(b, &b->t[i]);
	if (r == 0)
		r = win_flush(b);
	db->bulk = NULL;
	if (r == 0 && (r = mb_file_sync(db->file, true)) < 0)
		berr(b, r, "sync failed");
	/* the one logged transaction: header, roots, freed pages */
	if (r == 0)
		r = mb_db_begin(db);
	if (r == 0) {
		struct frame *h;
		r = pg_get(db, 0, &h);
		if (r == 0) {
			if ((r = pg_write(db, h)) == 0) {
				wr32(h->data + HP_OFF_PAGECOUNT, b->next);
				wr32(h->data + HP_OFF_BULK, rd32(h->data + HP_OFF_BULK) + 1);
			}
			cache_put(h);
		}
		for (int i = 0; i < b->nt && r == 0; i++) {
			struct btb *t = &b->t[i];
			if (t->nlv == 0)
				continue;
			struct frame *f;
			if ((r = pg_get(db, t->root, &f)) < 0)
				break;
			if ((r = pg_write(db, f)) == 0) {
				const uint8_t *top = t->lv[t->nlv - 1].page;
				memcpy(f->data + PG_DELTA_FROM, top + PG_DELTA_FROM,
				       b->ps - PG_DELTA_FROM);
			}
			cache_put(f);
		}
		for (size_t i = 0; i < b->norph && r == 0; i++)
			r = pg_free(db, b->orphans[i]);
		if (r == 0)
			r = mb_db_commit(db);
		else
			mb_db_abort(db);
	}
	if (r == 0)
		r = mb_sg_checkpoint(db->sg);
	bulk_free(b);
	return r;
}
