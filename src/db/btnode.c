/* btnode.c: the bottom of the B+tree: binary search and edits inside one
 * slotted node, overflow chains for long values, and the descent from a root
 * to a leaf.  Layout and layering: btree_int.h.
 *
 * Invariants: keys strictly increase within a node; an edit keeps
 * CELLLO >= PG_HDR + 2 * nkeys and FRAG equal to the bytes of dead cells;
 * an overflow page holds its chunk length in PREV and the next page in NEXT
 * (0 ends the chain), and a chain has exactly ceil(vlen / chunk) pages.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "db/btree_int.h"

void mb_val_free(struct mb_val *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}

/* first index with key >= k; *eq when equal */
int mb__bt_lower_bound(const uint8_t *p, const void *k, size_t kl, bool *eq)
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
	int i = mb__bt_lower_bound(p, k, kl, &eq);
	return eq ? i : i - 1;
}

/* append a cell at the end of the slot array (caller checked room) */
void mb__bt_node_append(uint8_t *p, uint32_t ps, const uint8_t *cell, size_t len)
{
	int n = nkeys(p);
	uint32_t lo = cell_lo(p, ps) - (uint32_t)len;
	memcpy(p + lo, cell, len);
	wr16(p + PG_HDR + 2 * n, (uint16_t)lo);
	wr16(p + PG_OFF_CELLLO, (uint16_t)lo);
	wr16(p + PG_OFF_NKEYS, (uint16_t)(n + 1));
}

void mb__bt_node_compact(struct mb_db *db, uint8_t *p)
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
bool mb__bt_node_insert_fit(struct mb_db *db, uint8_t *p, int i, const uint8_t *cell, size_t len)
{
	uint32_t ps = db->page_size;
	int n = nkeys(p);
	size_t contig = cell_lo(p, ps) - (PG_HDR + 2 * (size_t)n);
	if (contig < len + 2) {
		if (node_free(p, ps) < len + 2)
			return false;
		mb__bt_node_compact(db, p);
	}
	uint32_t lo = cell_lo(p, ps) - (uint32_t)len;
	memcpy(p + lo, cell, len);
	memmove(p + PG_HDR + 2 * (i + 1), p + PG_HDR + 2 * i, 2 * (size_t)(n - i));
	wr16(p + PG_HDR + 2 * i, (uint16_t)lo);
	wr16(p + PG_OFF_CELLLO, (uint16_t)lo);
	wr16(p + PG_OFF_NKEYS, (uint16_t)(n + 1));
	return true;
}

void mb__bt_node_remove(uint8_t *p, uint32_t ps, int i)
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

int mb__bt_corrupt(struct mb_db *db, uint32_t pg, const char *what)
{
	return db_seterr(db, MB_ECORRUPT, "%s: page %u: %s", db->path, pg, what);
}

/* --------------------------- long values ----------------------------- */

int mb__bt_ovf_write(struct mb_db *db, const uint8_t *v, size_t vlen, uint32_t *first)
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
			return mb__bt_corrupt(db, pg, "long-value chain ends early");
		int r = pg_get(db, pg, &f);
		if (r < 0)
			return r;
		uint32_t k = rd32(f->data + PG_OFF_PREV);
		if (f->data[PG_OFF_TYPE] != PT_OVERFLOW || k > chunk || k > vlen - done) {
			cache_put(f);
			return mb__bt_corrupt(db, pg, "bad long-value page");
		}
		memcpy(out + done, f->data + PG_HDR, k);
		done += k;
		uint32_t nx = rd32(f->data + PG_OFF_NEXT);
		cache_put(f);
		pg = nx;
	}
	return 0;
}

int mb__bt_ovf_free(struct mb_db *db, uint32_t pg, size_t vlen)
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
			return mb__bt_corrupt(db, pg, "bad long-value page on free");
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
int mb__bt_leaf_value(struct mb_db *db, const uint8_t *p, int i, struct mb_val *out)
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

int mb__bt_descend(struct mb_db *db, uint32_t root, const void *k, size_t kl, struct path *pt,
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
			return mb__bt_corrupt(db, pg, "not a B+tree node");
		}
		int ci = k ? child_index(f->data, k, kl) : (kl ? nkeys(f->data) - 1 : -1);
		pt->idx[d] = ci;
		pg = cell_child(f->data, ci);
		cache_put(f);
		if (pg == 0)
			return mb__bt_corrupt(db, pt->pg[d], "null child pointer");
	}
	return mb__bt_corrupt(db, root, "tree deeper than 32 levels (loop?)");
}
