/* btree.c: named B+trees over the pager: slotted pages, splits, merges,
 * overflow chains for long values, the catalog, cursors.
 *
 * Node page (see dbint.h): u16 slots after the 32-byte header, sorted by key,
 * pointing at cells packed from the end of the page.
 *   leaf cell:     u16 klen, u8 flags (1: overflow), u32 vlen, key, then the
 *                  value inline or the u32 first overflow page
 *   internal cell: u16 klen, u32 child, key; the child holds keys >= key; the
 *                  header's prev field is the leftmost child (keys < key 0)
 * Invariants: keys strictly increase within a node and along the leaf chain
 * (next/prev links); a separator is <= every key of its subtree and > every
 * key left of it; a cell never exceeds a quarter page, so a split always
 * makes room; the root page number of a tree never changes (root splits copy
 * the root down, a root with one child absorbs it), so the catalog entry of a
 * tree is written once.  No latches: one thread uses a database at a time.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "db/dbint.h"

#define MAXDEPTH 32
#define LEAF_FIXED 7
#define INT_FIXED 6

struct mb_tree {
	struct mb_db *db;
	uint32_t root;
	char name[MB_TREE_NAME_MAX + 1];
	struct mb_tree *next;
	struct mb_cursor *cursors;
};

struct mb_cursor {
	struct mb_tree *t;
	struct mb_cursor *next;
	bool positioned, deleted;
	uint32_t leaf;
	int idx;
	uint64_t modc;
	uint8_t key[MB_KEY_MAX];
	size_t klen;
	bool has_lo, has_hi;
	uint8_t lo[MB_KEY_MAX], hi[MB_KEY_MAX];
	size_t lolen, hilen;
};

struct path {
	uint32_t pg[MAXDEPTH];
	int idx[MAXDEPTH]; /* child taken at internal levels (-1: leftmost) */
	int depth;         /* index of the leaf level */
};

/* ---------------------------- node helpers --------------------------- */

static inline int nkeys(const uint8_t *p)
{
	return rd16(p + PG_OFF_NKEYS);
}
static inline uint16_t slot(const uint8_t *p, int i)
{
	return rd16(p + PG_HDR + 2 * i);
}
static inline bool is_leaf(const uint8_t *p)
{
	return p[PG_OFF_TYPE] == PT_LEAF;
}
static inline uint32_t cell_lo(const uint8_t *p, uint32_t ps)
{
	uint32_t v = rd16(p + PG_OFF_CELLLO);
	return v == 0 ? ps : v; /* 65536 never happens; 0 means ps for safety */
}

static size_t cell_size(const uint8_t *p, uint16_t off, bool leaf)
{
	const uint8_t *c = p + off;
	if (leaf)
		return LEAF_FIXED + rd16(c) + ((c[2] & 1) ? 4 : rd32(c + 3));
	return INT_FIXED + rd16(c);
}

static const uint8_t *cell_key(const uint8_t *p, int i, size_t *klen)
{
	const uint8_t *c = p + slot(p, i);
	*klen = rd16(c);
	return c + (is_leaf(p) ? LEAF_FIXED : INT_FIXED);
}

static uint32_t cell_child(const uint8_t *p, int i)
{
	if (i < 0)
		return rd32(p + PG_OFF_PREV);
	return rd32(p + slot(p, i) + 2);
}

/* first index with key >= k; *eq when equal */
static int lower_bound(const uint8_t *p, const void *k, size_t kl, bool *eq)
{
	int lo = 0, hi = nkeys(p);
	*eq = false;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		size_t ml;
		const uint8_t *mk = cell_key(p, mid, &ml);
		int c = kcmp(mk, ml, k, kl);
		if (c < 0) {
			lo = mid + 1;
		} else {
			if (c == 0)
				*eq = true;
			hi = mid;
		}
	}
	return lo;
}

/* child index for k in an internal node: last separator <= k, or -1 */
static int child_index(const uint8_t *p, const void *k, size_t kl)
{
	bool eq;
	int i = lower_bound(p, k, kl, &eq);
	return eq ? i : i - 1;
}

static size_t node_free(const uint8_t *p, uint32_t ps)
{
	return cell_lo(p, ps) - (PG_HDR + 2 * (size_t)nkeys(p)) + rd16(p + PG_OFF_FRAG);
}

static size_t node_used(const uint8_t *p, uint32_t ps)
{
	return ps - PG_HDR - node_free(p, ps);
}

static void node_reset(uint8_t *p, uint32_t ps)
{
	wr16(p + PG_OFF_NKEYS, 0);
	wr16(p + PG_OFF_CELLLO, (uint16_t)ps);
	wr16(p + PG_OFF_FRAG, 0);
}

/* append a cell at the end of the slot array (caller checked room) */
static void node_append(uint8_t *p, uint32_t ps, const uint8_t *cell, size_t len)
{
	int n = nkeys(p);
	uint32_t lo = cell_lo(p, ps) - (uint32_t)len;
	memcpy(p + lo, cell, len);
	wr16(p + PG_HDR + 2 * n, (uint16_t)lo);
	wr16(p + PG_OFF_CELLLO, (uint16_t)lo);
	wr16(p + PG_OFF_NKEYS, (uint16_t)(n + 1));
}

static void node_compact(struct mb_db *db, uint8_t *p)
{
	uint32_t ps = db->page_size;
	bool leaf = is_leaf(p);
	memcpy(db->tmp, p, ps);
	int n = nkeys(p);
	uint32_t off = ps;
	for (int i = 0; i < n; i++) {
		uint16_t o = slot(db->tmp, i);
		size_t sz = cell_size(db->tmp, o, leaf);
		off -= (uint32_t)sz;
		memcpy(p + off, db->tmp + o, sz);
		wr16(p + PG_HDR + 2 * i, (uint16_t)off);
	}
	wr16(p + PG_OFF_CELLLO, (uint16_t)off);
	wr16(p + PG_OFF_FRAG, 0);
}

/* insert a cell at index i if it fits; false when the node is full */
static bool node_insert_fit(struct mb_db *db, uint8_t *p, int i, const uint8_t *cell, size_t len)
{
	uint32_t ps = db->page_size;
	int n = nkeys(p);
	size_t contig = cell_lo(p, ps) - (PG_HDR + 2 * (size_t)n);
	if (contig < len + 2) {
		if (node_free(p, ps) < len + 2)
			return false;
		node_compact(db, p);
	}
	uint32_t lo = cell_lo(p, ps) - (uint32_t)len;
	memcpy(p + lo, cell, len);
	memmove(p + PG_HDR + 2 * (i + 1), p + PG_HDR + 2 * i, 2 * (size_t)(n - i));
	wr16(p + PG_HDR + 2 * i, (uint16_t)lo);
	wr16(p + PG_OFF_CELLLO, (uint16_t)lo);
	wr16(p + PG_OFF_NKEYS, (uint16_t)(n + 1));
	return true;
}

static void node_remove(uint8_t *p, uint32_t ps, int i)
{
	int n = nkeys(p);
	uint16_t o = slot(p, i);
	size_t sz = cell_size(p, o, is_leaf(p));
	if (o == cell_lo(p, ps))
		wr16(p + PG_OFF_CELLLO, (uint16_t)(o + sz));
	else
		wr16(p + PG_OFF_FRAG, (uint16_t)(rd16(p + PG_OFF_FRAG) + sz));
	memmove(p + PG_HDR + 2 * i, p + PG_HDR + 2 * (i + 1), 2 * (size_t)(n - i - 1));
	wr16(p + PG_OFF_NKEYS, (uint16_t)(n - 1));
}

static int corrupt(struct mb_db *db, uint32_t pg, const char *what)
{
	return db_seterr(db, MB_ECORRUPT, "%s: page %u: %s", db->path, pg, what);
}

/* --------------------------- long values ----------------------------- */

static int ovf_write(struct mb_db *db, const uint8_t *v, size_t vlen, uint32_t *first)
{
	uint32_t chunk = db->page_size - PG_HDR;
	struct frame *cur = NULL;
	size_t done = 0;
	*first = 0;
	while (done < vlen) {
		struct frame *f;
		int r = pg_alloc(db, PT_OVERFLOW, &f);
		if (r < 0) {
			if (cur)
				cache_put(cur);
			return r;
		}
		size_t k = vlen - done < chunk ? vlen - done : chunk;
		memcpy(f->data + PG_HDR, v + done, k);
		wr32(f->data + PG_OFF_PREV, (uint32_t)k);
		if (cur) {
			wr32(cur->data + PG_OFF_NEXT, f->pgno);
			cache_put(cur);
		} else {
			*first = f->pgno;
		}
		cur = f;
		done += k;
	}
	if (cur)
		cache_put(cur);
	return 0;
}

static int ovf_read(struct mb_db *db, uint32_t pg, size_t vlen, uint8_t *out)
{
	size_t done = 0;
	uint32_t chunk = db->page_size - PG_HDR;
	while (done < vlen) {
		struct frame *f;
		if (pg == 0)
			return corrupt(db, pg, "long-value chain ends early");
		int r = pg_get(db, pg, &f);
		if (r < 0)
			return r;
		uint32_t k = rd32(f->data + PG_OFF_PREV);
		if (f->data[PG_OFF_TYPE] != PT_OVERFLOW || k > chunk || k > vlen - done) {
			cache_put(f);
			return corrupt(db, pg, "bad long-value page");
		}
		memcpy(out + done, f->data + PG_HDR, k);
		done += k;
		uint32_t nx = rd32(f->data + PG_OFF_NEXT);
		cache_put(f);
		pg = nx;
	}
	return 0;
}

static int ovf_free(struct mb_db *db, uint32_t pg, size_t vlen)
{
	size_t pages = vlen / (db->page_size - PG_HDR) + 1;
	while (pg && pages--) {
		struct frame *f;
		int r = pg_get(db, pg, &f);
		if (r < 0)
			return r;
		uint32_t nx = rd32(f->data + PG_OFF_NEXT);
		bool ok = f->data[PG_OFF_TYPE] == PT_OVERFLOW;
		cache_put(f);
		if (!ok)
			return corrupt(db, pg, "bad long-value page on free");
		if ((r = pg_free(db, pg)) < 0)
			return r;
		pg = nx;
	}
	return 0;
}

static int val_reserve(struct mb_val *v, size_t n)
{
	if (n <= v->cap && v->data)
		return 0;
	size_t c = v->cap ? v->cap : 256;
	while (c < n)
		c *= 2;
	void *p = realloc(v->data, c);
	if (!p)
		return MB_ENOMEM;
	v->data = p;
	v->cap = c;
	return 0;
}

/* value of leaf cell i into out */
static int leaf_value(struct mb_db *db, const uint8_t *p, int i, struct mb_val *out)
{
	const uint8_t *c = p + slot(p, i);
	size_t kl = rd16(c), vl = rd32(c + 3);
	int r = val_reserve(out, vl ? vl : 1);
	if (r < 0)
		return r;
	out->len = vl;
	if (c[2] & 1)
		return ovf_read(db, rd32(c + LEAF_FIXED + kl), vl, out->data);
	memcpy(out->data, c + LEAF_FIXED + kl, vl);
	return 0;
}

/* ------------------------------ descent ------------------------------ */

static int descend(struct mb_db *db, uint32_t root, const void *k, size_t kl, struct path *pt,
		   struct frame **leaf)
{
	uint32_t pg = root;
	for (int d = 0; d < MAXDEPTH; d++) {
		struct frame *f;
		int r = pg_get(db, pg, &f);
		if (r < 0)
			return r;
		pt->pg[d] = pg;
		uint8_t t = f->data[PG_OFF_TYPE];
		if (t == PT_LEAF) {
			pt->depth = d;
			*leaf = f;
			return 0;
		}
		if (t != PT_INTERNAL) {
			cache_put(f);
			return corrupt(db, pg, "not a B+tree node");
		}
		int ci = k ? child_index(f->data, k, kl) : (kl ? nkeys(f->data) - 1 : -1);
		pt->idx[d] = ci;
		pg = cell_child(f->data, ci);
		cache_put(f);
		if (pg == 0)
			return corrupt(db, pt->pg[d], "null child pointer");
	}
	return corrupt(db, root, "tree deeper than 32 levels (loop?)");
}

/* ------------------------------ insert ------------------------------- */

static int node_insert(struct mb_db *db, struct path *pt, int level, const uint8_t *cell,
		       size_t len, int pos);

/* rebuild p from cells[a..b) (pointers into other buffers) */
static void fill_node(uint8_t *p, uint32_t ps, const uint8_t **cells, const size_t *lens, int a,
		      int b)
{
	node_reset(p, ps);
	for (int i = a; i < b; i++)
		node_append(p, ps, cells[i], lens[i]);
}

/* Leaf links after a split or merge: page nx's PREV becomes pgno. */
static int set_prev(struct mb_db *db, uint32_t nx, uint32_t pgno)
{
	struct frame *nf;
	int r = pg_get(db, nx, &nf);
	if (r < 0)
		return r;
	if ((r = pg_write(db, nf)) == 0)
		wr32(nf->data + PG_OFF_PREV, pgno);
	cache_put(nf);
	return r;
}

static int split_insert(struct mb_db *db, struct path *pt, int level, struct frame *fr, int pos,
			const uint8_t *cell, size_t len)
{
	uint32_t ps = db->page_size;
	uint8_t *p = fr->data;
	bool leaf = is_leaf(p);
	int n = nkeys(p), total = n + 1;
	memcpy(db->tmp, p, ps);
	const uint8_t **cells = malloc(sizeof(*cells) * (size_t)total);
	size_t *lens = malloc(sizeof(*lens) * (size_t)total);
	uint8_t *cellcopy = malloc(len);
	if (!cells || !lens || !cellcopy) {
		free(cells);
		free(lens);
		free(cellcopy);
		return MB_ENOMEM;
	}
	memcpy(cellcopy, cell, len);
	size_t sum = 0;
	for (int i = 0, j = 0; i < total; i++) {
		if (i == pos) {
			cells[i] = cellcopy;
			lens[i] = len;
		} else {
			uint16_t o = slot(db->tmp, j++);
			cells[i] = db->tmp + o;
			lens[i] = cell_size(db->tmp, o, leaf);
		}
		sum += lens[i] + 2;
	}
	/* split point m: left [0,m), right [m,total) (internal: m goes up) */
	size_t acc = 0;
	int m = 0;
	while (m < total - 1 && acc + lens[m] + 2 <= sum / 2)
		acc += lens[m++] + 2;
	if (m == 0)
		m = 1;
	if (!leaf && m >= total - 1)
		m = total - 2;
	if (leaf && m >= total)
		m = total - 1;
	/* separator */
	uint8_t sep[INT_FIXED + MB_KEY_MAX];
	size_t sepk = rd16(cells[m]);
	const uint8_t *skey = cells[m] + (leaf ? LEAF_FIXED : INT_FIXED);
	wr16(sep, (uint16_t)sepk);
	memcpy(sep + INT_FIXED, skey, sepk);
	uint32_t mid_child = leaf ? 0 : rd32(cells[m] + 2);
	int rstart = leaf ? m : m + 1;

	int r = 0;
	struct frame *L = NULL, *R = NULL;
	if (level == 0) {
		/* root: both halves move to new pages, the root becomes internal */
		if ((r = pg_alloc(db, leaf ? PT_LEAF : PT_INTERNAL, &L)) < 0)
			goto out;
		if ((r = pg_alloc(db, leaf ? PT_LEAF : PT_INTERNAL, &R)) < 0)
			goto out;
		fill_node(L->data, ps, cells, lens, 0, m);
		fill_node(R->data, ps, cells, lens, rstart, total);
		if (leaf) {
			wr32(L->data + PG_OFF_NEXT, R->pgno);
			wr32(R->data + PG_OFF_PREV, L->pgno);
		} else {
			wr32(L->data + PG_OFF_PREV, rd32(db->tmp + PG_OFF_PREV));
			wr32(R->data + PG_OFF_PREV, mid_child);
		}
		p[PG_OFF_TYPE] = PT_INTERNAL;
		node_reset(p, ps);
		wr32(p + PG_OFF_NEXT, 0);
		wr32(p + PG_OFF_PREV, L->pgno);
		wr32(sep + 2, R->pgno);
		node_append(p, ps, sep, INT_FIXED + sepk);
		goto out;
	}
	if ((r = pg_alloc(db, leaf ? PT_LEAF : PT_INTERNAL, &R)) < 0)
		goto out;
	fill_node(p, ps, cells, lens, 0, m);
	fill_node(R->data, ps, cells, lens, rstart, total);
	if (leaf) {
		uint32_t nx = rd32(p + PG_OFF_NEXT);
		wr32(R->data + PG_OFF_NEXT, nx);
		wr32(R->data + PG_OFF_PREV, fr->pgno);
		wr32(p + PG_OFF_NEXT, R->pgno);
		if (nx && (r = set_prev(db, nx, R->pgno)) < 0)
			goto out;
	} else {
		wr32(R->data + PG_OFF_PREV, mid_child);
	}
	wr32(sep + 2, R->pgno);
	free(cells);
	cells = NULL;
	free(lens);
	lens = NULL;
	cache_put(R);
	R = NULL;
	r = node_insert(db, pt, level - 1, sep, INT_FIXED + sepk, pt->idx[level - 1] + 1);
out:
	if (L)
		cache_put(L);
	if (R)
		cache_put(R);
	free(cells);
	free(lens);
	free(cellcopy);
	return r;
}

/* insert cell at pos in the node at path level (splitting upwards) */
static int node_insert(struct mb_db *db, struct path *pt, int level, const uint8_t *cell,
		       size_t len, int pos)
{
	struct frame *f;
	int r = pg_get(db, pt->pg[level], &f);
	if (r < 0)
		return r;
	if ((r = pg_write(db, f)) == 0) {
		if (!node_insert_fit(db, f->data, pos, cell, len))
			r = split_insert(db, pt, level, f, pos, cell, len);
	}
	cache_put(f);
	return r;
}

/* ------------------------------ delete ------------------------------- */

static int rebalance(struct mb_db *db, struct path *pt, int level);

/* merge right sibling into left; remove the separator at sepi of the parent */
static int merge_nodes(struct mb_db *db, struct path *pt, int level, struct frame *pf, int sepi,
		       struct frame *lf, struct frame *rf)
{
	uint32_t ps = db->page_size;
	uint8_t *l = lf->data, *rp = rf->data;
	bool leaf = is_leaf(l);
	int r;
	if ((r = pg_write(db, lf)) < 0)
		return r;
	if ((r = pg_write(db, pf)) < 0)
		return r;
	node_compact(db, l);
	if (!leaf) {
		uint8_t sep[INT_FIXED + MB_KEY_MAX];
		size_t kl;
		const uint8_t *k = cell_key(pf->data, sepi, &kl);
		wr16(sep, (uint16_t)kl);
		wr32(sep + 2, rd32(rp + PG_OFF_PREV));
		memcpy(sep + INT_FIXED, k, kl);
		node_append(l, ps, sep, INT_FIXED + kl);
	}
	int rn = nkeys(rp);
	for (int i = 0; i < rn; i++) {
		uint16_t o = slot(rp, i);
		node_append(l, ps, rp + o, cell_size(rp, o, leaf));
	}
	if (leaf) {
		uint32_t nx = rd32(rp + PG_OFF_NEXT);
		wr32(l + PG_OFF_NEXT, nx);
		if (nx && (r = set_prev(db, nx, lf->pgno)) < 0)
			return r;
	}
	node_remove(pf->data, ps, sepi);
	return pg_free(db, rf->pgno);
}

static int rebalance(struct mb_db *db, struct path *pt, int level)
{
	uint32_t ps = db->page_size;
	struct frame *f;
	int r = pg_get(db, pt->pg[level], &f);
	if (r < 0)
		return r;
	if (level == 0) {
		/* root with a single child absorbs it */
		if (!is_leaf(f->data) && nkeys(f->data) == 0) {
			struct frame *c;
			uint32_t cp = rd32(f->data + PG_OFF_PREV);
			if ((r = pg_get(db, cp, &c)) == 0) {
				if ((r = pg_write(db, f)) == 0) {
					memcpy(f->data + PG_DELTA_FROM, c->data + PG_DELTA_FROM,
					       ps - PG_DELTA_FROM);
					if (is_leaf(f->data)) {
						wr32(f->data + PG_OFF_NEXT, 0);
						wr32(f->data + PG_OFF_PREV, 0);
					}
				}
				cache_put(c);
				if (r == 0)
					r = pg_free(db, cp);
			}
		}
		cache_put(f);
		return r;
	}
	if (node_used(f->data, ps) >= ps / 4) {
		cache_put(f);
		return 0;
	}
	struct frame *pf;
	if ((r = pg_get(db, pt->pg[level - 1], &pf)) < 0) {
		cache_put(f);
		return r;
	}
	int ci = pt->idx[level - 1], pn = nkeys(pf->data);
	struct frame *lf = NULL, *rf = NULL;
	int sepi;
	if (ci + 1 <= pn - 1) {
		lf = f;
		sepi = ci + 1;
		r = pg_get(db, cell_child(pf->data, ci + 1), &rf);
	} else if (ci >= 0) {
		rf = f;
		sepi = ci;
		r = pg_get(db, cell_child(pf->data, ci - 1), &lf);
	} else {
		cache_put(pf);
		cache_put(f);
		return 0;
	}
	if (r < 0) {
		cache_put(pf);
		cache_put(f);
		return r;
	}
	size_t need = node_used(lf->data, ps) + node_used(rf->data, ps);
	if (!is_leaf(f->data)) {
		size_t kl;
		cell_key(pf->data, sepi, &kl);
		need += INT_FIXED + kl + 2;
	}
	bool merged = false;
	if (need <= ps - PG_HDR) {
		r = merge_nodes(db, pt, level, pf, sepi, lf, rf);
		merged = r == 0;
	}
	cache_put(lf);
	cache_put(rf);
	cache_put(pf);
	if (r < 0 || !merged)
		return r;
	return rebalance(db, pt, level - 1);
}

/* ------------------------------- API --------------------------------- */

static int check_key(const void *key, size_t klen)
{
	if (!key || klen == 0)
		return MB_EINVAL;
	if (klen > MB_KEY_MAX)
		return MB_ETOOBIG;
	return 0;
}

static int tree_get(struct mb_db *db, uint32_t root, const void *key, size_t klen,
		    struct mb_val *out, size_t *lenp)
{
	struct path pt;
	struct frame *f;
	int r = descend(db, root, key, klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = lower_bound(f->data, key, klen, &eq);
	if (!eq)
		r = MB_ENOTFOUND;
	else if (lenp)
		*lenp = rd32(f->data + slot(f->data, i) + 3);
	else
		r = leaf_value(db, f->data, i, out);
	cache_put(f);
	return r;
}

static int tree_put(struct mb_db *db, uint32_t root, const void *key, size_t klen,
		    const void *val, size_t vlen, int flags)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	uint32_t ps = db->page_size;
	struct path pt;
	struct frame *f;
	int r = descend(db, root, key, klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = lower_bound(f->data, key, klen, &eq);
	uint32_t leafpg = f->pgno;
	size_t oldvlen = 0;
	uint32_t oldovf = 0;
	bool oldisovf = false;
	if (eq) {
		const uint8_t *c = f->data + slot(f->data, i);
		oldisovf = c[2] & 1;
		oldvlen = rd32(c + 3);
		if (oldisovf)
			oldovf = rd32(c + LEAF_FIXED + klen);
	}
	cache_put(f);
	if (eq && (flags & MB_PUT_NOOVERWRITE))
		return MB_EEXIST;
	if (!eq && (flags & MB_PUT_UPDATE))
		return MB_ENOTFOUND;
	/* the new cell */
	size_t inl = LEAF_FIXED + klen + vlen;
	bool ovf = inl + 2 > ps / 4;
	size_t clen = ovf ? LEAF_FIXED + klen + 4 : inl;
	uint8_t *cell = malloc(clen);
	if (!cell)
		return MB_ENOMEM;
	wr16(cell, (uint16_t)klen);
	cell[2] = ovf ? 1 : 0;
	wr32(cell + 3, (uint32_t)vlen);
	memcpy(cell + LEAF_FIXED, key, klen);
	if (ovf) {
		uint32_t first;
		if ((r = ovf_write(db, val, vlen, &first)) < 0) {
			free(cell);
			return r;
		}
		wr32(cell + LEAF_FIXED + klen, first);
	} else if (vlen) {
		memcpy(cell + LEAF_FIXED + klen, val, vlen);
	}
	if (eq) {
		if (oldisovf && (r = ovf_free(db, oldovf, oldvlen)) < 0) {
			free(cell);
			return r;
		}
		if ((r = pg_get(db, leafpg, &f)) < 0) {
			free(cell);
			return r;
		}
		if ((r = pg_write(db, f)) == 0)
			node_remove(f->data, ps, i);
		cache_put(f);
	}
	if (r == 0)
		r = node_insert(db, &pt, pt.depth, cell, clen, i);
	free(cell);
	db->modcount++;
	return r;
}

static int tree_del(struct mb_db *db, uint32_t root, const void *key, size_t klen)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	struct path pt;
	struct frame *f;
	int r = descend(db, root, key, klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = lower_bound(f->data, key, klen, &eq);
	if (!eq) {
		cache_put(f);
		return MB_ENOTFOUND;
	}
	const uint8_t *c = f->data + slot(f->data, i);
	bool isovf = c[2] & 1;
	size_t vl = rd32(c + 3);
	uint32_t first = isovf ? rd32(c + LEAF_FIXED + klen) : 0;
	if ((r = pg_write(db, f)) == 0)
		node_remove(f->data, db->page_size, i);
	cache_put(f);
	if (r == 0 && isovf)
		r = ovf_free(db, first, vl);
	if (r == 0)
		r = rebalance(db, &pt, pt.depth);
	db->modcount++;
	return r;
}

int bt_create_root(struct mb_db *db, uint32_t *root)
{
	struct frame *f;
	int r = pg_alloc(db, PT_LEAF, &f);
	if (r < 0)
		return r;
	*root = f->pgno;
	cache_put(f);
	return 0;
}

/* free every page of the subtree at pg: long values, children, the node */
static int free_subtree(struct mb_db *db, uint32_t pg, int depth)
{
	if (depth > MAXDEPTH)
		return corrupt(db, pg, "tree too deep");
	struct frame *f;
	int r = pg_get(db, pg, &f);
	if (r < 0)
		return r;
	int n = nkeys(f->data);
	if (is_leaf(f->data)) {
		for (int i = 0; i < n && r == 0; i++) {
			const uint8_t *c = f->data + slot(f->data, i);
			if (c[2] & 1)
				r = ovf_free(db, rd32(c + LEAF_FIXED + rd16(c)), rd32(c + 3));
		}
		cache_put(f);
	} else {
		uint32_t *kids = malloc(sizeof(uint32_t) * (size_t)(n + 1));
		if (!kids) {
			cache_put(f);
			return MB_ENOMEM;
		}
		for (int i = -1; i < n; i++)
			kids[i + 1] = cell_child(f->data, i);
		cache_put(f);
		for (int i = 0; i <= n && r == 0; i++)
			r = free_subtree(db, kids[i], depth + 1);
		free(kids);
	}
	if (r == 0)
		r = pg_free(db, pg);
	return r;
}

int bt_free_tree(struct mb_db *db, uint32_t root)
{
	return free_subtree(db, root, 0);
}

int cat_lookup(struct mb_db *db, const char *name, uint32_t *root)
{
	struct mb_val v = MB_VAL_INIT;
	int r = tree_get(db, CATALOG_ROOT, name, strlen(name), &v, NULL);
	if (r == 0) {
		if (v.len != 4)
			r = corrupt(db, CATALOG_ROOT, "bad catalog entry");
		else
			*root = rd32(v.data);
	}
	mb_val_free(&v);
	return r;
}

int mb_tree_open(struct mb_db *db, const char *name, int flags, struct mb_tree **out)
{
	size_t nl = name ? strlen(name) : 0;
	if (nl == 0 || nl > MB_TREE_NAME_MAX)
		return MB_EINVAL;
	uint32_t root;
	int r = cat_lookup(db, name, &root);
	if (r == MB_ENOTFOUND && (flags & MB_TREE_CREATE)) {
		if (!db->in_txn)
			return db_seterr(db, MB_ESTATE, "%s: creating tree '%s' needs a transaction",
					 db->name, name);
		if ((r = bt_create_root(db, &root)) < 0)
			return r;
		uint8_t v[4];
		wr32(v, root);
		r = tree_put(db, CATALOG_ROOT, name, nl, v, 4, MB_PUT_NOOVERWRITE);
	}
	if (r < 0)
		return r;
	struct mb_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	t->db = db;
	t->root = root;
	memcpy(t->name, name, nl + 1);
	t->next = db->trees;
	db->trees = t;
	*out = t;
	return 0;
}

void mb_cursor_close(struct mb_cursor *c)
{
	if (!c)
		return;
	struct mb_cursor **pp = &c->t->cursors;
	while (*pp && *pp != c)
		pp = &(*pp)->next;
	if (*pp)
		*pp = c->next;
	free(c);
}

void mb_tree_close(struct mb_tree *t)
{
	if (!t)
		return;
	while (t->cursors)
		mb_cursor_close(t->cursors);
	struct mb_tree **pp = &t->db->trees;
	while (*pp && *pp != t)
		pp = &(*pp)->next;
	if (*pp)
		*pp = t->next;
	free(t);
}

void bt_close_all(struct mb_db *db);
void bt_close_all(struct mb_db *db)
{
	while (db->trees)
		mb_tree_close(db->trees);
}

int mb_tree_drop(struct mb_db *db, const char *name)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	for (struct mb_tree *t = db->trees; t; t = t->next)
		if (!strcmp(t->name, name))
			return MB_EBUSY;
	uint32_t root;
	int r = cat_lookup(db, name, &root);
	if (r < 0)
		return r;
	if ((r = bt_free_tree(db, root)) < 0)
		return r;
	return tree_del(db, CATALOG_ROOT, name, strlen(name));
}

int mb_tree_get(struct mb_tree *t, const void *key, size_t klen, struct mb_val *out)
{
	int r = check_key(key, klen);
	return r < 0 ? r : tree_get(t->db, t->root, key, klen, out, NULL);
}

int mb_tree_get_len(struct mb_tree *t, const void *key, size_t klen, size_t *len)
{
	int r = check_key(key, klen);
	return r < 0 ? r : tree_get(t->db, t->root, key, klen, NULL, len);
}

int mb_tree_put(struct mb_tree *t, const void *key, size_t klen, const void *val, size_t vlen,
		int flags)
{
	int r = check_key(key, klen);
	if (r < 0)
		return r;
	if (vlen > MB_VALUE_MAX)
		return MB_ETOOBIG;
	if (vlen && !val)
		return MB_EINVAL;
	return tree_put(t->db, t->root, key, klen, val, vlen, flags);
}

int mb_tree_del(struct mb_tree *t, const void *key, size_t klen)
{
	int r = check_key(key, klen);
	return r < 0 ? r : tree_del(t->db, t->root, key, klen);
}

/* ------------------------------ cursors ------------------------------ */

int mb_cursor_open(struct mb_tree *t, struct mb_cursor **out)
{
	struct mb_cursor *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->t = t;
	c->next = t->cursors;
	t->cursors = c;
	*out = c;
	return 0;
}

/* take the key at (f, i) as the position, checking the bounds */
static int cur_set(struct mb_cursor *c, struct frame *f, int i)
{
	size_t kl;
	const uint8_t *k = cell_key(f->data, i, &kl);
	if (c->has_hi && kcmp(k, kl, c->hi, c->hilen) >= 0)
		goto end;
	if (c->has_lo && kcmp(k, kl, c->lo, c->lolen) < 0)
		goto end;
	memcpy(c->key, k, kl);
	c->klen = kl;
	c->leaf = f->pgno;
	c->idx = i;
	c->positioned = true;
	c->deleted = false;
	c->modc = c->t->db->modcount;
	return 0;
end:
	c->positioned = false;
	return MB_ENOTFOUND;
}

/* from leaf f at index i (may be out of range), move forward/backward
 * to a valid entry and set the cursor there; consumes f */
static int cur_walk(struct mb_cursor *c, struct frame *f, int i, int dir)
{
	struct mb_db *db = c->t->db;
	for (int hops = 0;; hops++) {
		int n = nkeys(f->data);
		if (i >= 0 && i < n) {
			int r = cur_set(c, f, i);
			cache_put(f);
			return r;
		}
		uint32_t nx = rd32(f->data + (dir > 0 ? PG_OFF_NEXT : PG_OFF_PREV));
		cache_put(f);
		if (!nx || hops > 1000000) {
			c->positioned = false;
			return MB_ENOTFOUND;
		}
		int r = pg_get(db, nx, &f);
		if (r < 0)
			return r;
		if (!is_leaf(f->data)) {
			cache_put(f);
			return corrupt(db, nx, "leaf chain points to a non-leaf");
		}
		i = dir > 0 ? 0 : nkeys(f->data) - 1;
	}
}

static int cur_seek(struct mb_cursor *c, const void *k, size_t kl, bool le)
{
	struct mb_db *db = c->t->db;
	struct path pt;
	struct frame *f;
	int r = descend(db, c->t->root, k, kl, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = lower_bound(f->data, k, kl, &eq);
	if (le && !eq)
		i--;
	return cur_walk(c, f, i, le ? -1 : 1);
}

int mb_cursor_seek(struct mb_cursor *c, const void *key, size_t klen)
{
	if (klen > MB_KEY_MAX)
		return MB_ETOOBIG;
	if (c->has_lo && kcmp(key, klen, c->lo, c->lolen) < 0)
		return cur_seek(c, c->lo, c->lolen, false);
	return cur_seek(c, key, klen, false);
}

int mb_cursor_seek_le(struct mb_cursor *c, const void *key, size_t klen)
{
	if (klen > MB_KEY_MAX)
		return MB_ETOOBIG;
	return cur_seek(c, key, klen, true);
}

int mb_cursor_first(struct mb_cursor *c)
{
	if (c->has_lo)
		return cur_seek(c, c->lo, c->lolen, false);
	return cur_seek(c, "", 0, false);
}

int mb_cursor_last(struct mb_cursor *c)
{
	struct mb_db *db = c->t->db;
	if (c->has_hi) {
		/* last key < hi */
		struct path pt;
		struct frame *f;
		int r = descend(db, c->t->root, c->hi, c->hilen, &pt, &f);
		if (r < 0)
			return r;
		bool eq;
		int i = lower_bound(f->data, c->hi, c->hilen, &eq);
		return cur_walk(c, f, i - 1, -1);
	}
	struct path pt;
	struct frame *f;
	int r = descend(db, c->t->root, NULL, 1, &pt, &f); /* rightmost */
	if (r < 0)
		return r;
	return cur_walk(c, f, nkeys(f->data) - 1, -1);
}

int mb_cursor_range(struct mb_cursor *c, const void *lo, size_t lolen, const void *hi,
		    size_t hilen)
{
	if ((lo && lolen > MB_KEY_MAX) || (hi && hilen > MB_KEY_MAX))
		return MB_ETOOBIG;
	c->has_lo = lo != NULL;
	c->has_hi = hi != NULL;
	if (lo)
		memcpy(c->lo, lo, lolen);
	if (hi)
		memcpy(c->hi, hi, hilen);
	c->lolen = lo ? lolen : 0;
	c->hilen = hi ? hilen : 0;
	return mb_cursor_first(c);
}

/* make (leaf, idx) valid again after writes; *exact false when the key is gone */
static int cur_sync(struct mb_cursor *c, struct frame **fo, bool *exact)
{
	struct mb_db *db = c->t->db;
	struct frame *f;
	int r;
	if (c->modc == db->modcount && !c->deleted) {
		r = pg_get(db, c->leaf, &f);
		if (r < 0)
			return r;
		*fo = f;
		*exact = true;
		return 0;
	}
	struct path pt;
	r = descend(db, c->t->root, c->key, c->klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	c->idx = lower_bound(f->data, c->key, c->klen, &eq);
	c->leaf = f->pgno;
	c->modc = db->modcount;
	*exact = eq;
	*fo = f;
	return 0;
}

/* One entry forward (dir 1) or back (dir -1) from the current key. */
static int cur_step(struct mb_cursor *c, int dir)
{
	if (!c->positioned)
		return MB_ENOTFOUND;
	struct frame *f;
	bool exact;
	int r = cur_sync(c, &f, &exact);
	if (r < 0)
		return r;
	if (dir > 0)
		return cur_walk(c, f, exact ? c->idx + 1 : c->idx, 1);
	return cur_walk(c, f, c->idx - 1, -1);
}

int mb_cursor_next(struct mb_cursor *c)
{
	return cur_step(c, 1);
}

int mb_cursor_prev(struct mb_cursor *c)
{
	return cur_step(c, -1);
}

int mb_cursor_key(struct mb_cursor *c, const void **key, size_t *klen)
{
	if (!c->positioned || c->deleted)
		return MB_ENOTFOUND;
	*key = c->key;
	*klen = c->klen;
	return 0;
}

static int cur_at(struct mb_cursor *c, struct frame **fo)
{
	if (!c->positioned || c->deleted)
		return MB_ENOTFOUND;
	bool exact;
	int r = cur_sync(c, fo, &exact);
	if (r < 0)
		return r;
	if (!exact) {
		cache_put(*fo);
		return MB_ENOTFOUND;
	}
	return 0;
}

int mb_cursor_value(struct mb_cursor *c, struct mb_val *out)
{
	struct frame *f;
	int r = cur_at(c, &f);
	if (r < 0)
		return r;
	r = leaf_value(c->t->db, f->data, c->idx, out);
	cache_put(f);
	return r;
}

int mb_cursor_value_len(struct mb_cursor *c, size_t *len)
{
	struct frame *f;
	int r = cur_at(c, &f);
	if (r < 0)
		return r;
	*len = rd32(f->data + slot(f->data, c->idx) + 3);
	cache_put(f);
	return 0;
}

int mb_cursor_del(struct mb_cursor *c)
{
	if (!c->positioned || c->deleted)
		return MB_ENOTFOUND;
	int r = tree_del(c->t->db, c->t->root, c->key, c->klen);
	if (r == 0)
		c->deleted = true;
	return r;
}

int mb_tree_list(struct mb_db *db, void (*cb)(void *arg, const char *name), void *arg)
{
	struct mb_tree cat = {.db = db, .root = CATALOG_ROOT};
	struct mb_cursor c = {.t = &cat};
	int r = mb_cursor_first(&c);
	while (r == 0) {
		char name[MB_TREE_NAME_MAX + 1];
		size_t n = c.klen > MB_TREE_NAME_MAX ? MB_TREE_NAME_MAX : c.klen;
		memcpy(name, c.key, n);
		name[n] = 0;
		cb(arg, name);
		r = mb_cursor_next(&c);
	}
	return r == MB_ENOTFOUND ? 0 : r;
}
