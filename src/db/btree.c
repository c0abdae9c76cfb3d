/* btree.c: named B+trees over the pager: insert with splits, delete with
 * merges, get, the catalog (tree name -> root page) and tree handles.  The
 * node layout is in btree_int.h; node edits, long values and the descent are
 * in btnode.c (below this file); cursors in btcursor.c (above it).
 *
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
#include "db/btree_int.h"

/* ------------------------------ insert ------------------------------- */

static int node_insert(struct mb_db *db, struct path *pt, int level, const uint8_t *cell,
		       size_t len, int pos);

/* rebuild p from cells[a..b) (pointers into other buffers) */
static void fill_node(uint8_t *p, uint32_t ps, const uint8_t **cells, const size_t *lens, int a,
		      int b)
{
	node_reset(p, ps);
	for (int i = a; i < b; i++)
		mb__bt_node_append(p, ps, cells[i], lens[i]);
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
		mb__bt_node_append(p, ps, sep, INT_FIXED + sepk);
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
		if (!mb__bt_node_insert_fit(db, f->data, pos, cell, len))
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
	mb__bt_node_compact(db, l);
	if (!leaf) {
		uint8_t sep[INT_FIXED + MB_KEY_MAX];
		size_t kl;
		const uint8_t *k = cell_key(pf->data, sepi, &kl);
		wr16(sep, (uint16_t)kl);
		wr32(sep + 2, rd32(rp + PG_OFF_PREV));
		memcpy(sep + INT_FIXED, k, kl);
		mb__bt_node_append(l, ps, sep, INT_FIXED + kl);
	}
	int rn = nkeys(rp);
	for (int i = 0; i < rn; i++) {
		uint16_t o = slot(rp, i);
		mb__bt_node_append(l, ps, rp + o, cell_size(rp, o, leaf));
	}
	if (leaf) {
		uint32_t nx = rd32(rp + PG_OFF_NEXT);
		wr32(l + PG_OFF_NEXT, nx);
		if (nx && (r = set_prev(db, nx, lf->pgno)) < 0)
			return r;
	}
	mb__bt_node_remove(pf->data, ps, sepi);
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
	int r = mb__bt_descend(db, root, key, klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = mb__bt_lower_bound(f->data, key, klen, &eq);
	if (!eq)
		r = MB_ENOTFOUND;
	else if (lenp)
		*lenp = rd32(f->data + slot(f->data, i) + 3);
	else
		r = mb__bt_leaf_value(db, f->data, i, out);
	cache_put(f);
	return r;
}

static int tree_put(struct mb_db *db, uint32_t root, const void *key, size_t klen, const void *val,
		    size_t vlen, int flags)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	uint32_t ps = db->page_size;
	struct path pt;
	struct frame *f;
	int r = mb__bt_descend(db, root, key, klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = mb__bt_lower_bound(f->data, key, klen, &eq);
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
		if ((r = mb__bt_ovf_write(db, val, vlen, &first)) < 0) {
			free(cell);
			return r;
		}
		wr32(cell + LEAF_FIXED + klen, first);
	} else if (vlen) {
		memcpy(cell + LEAF_FIXED + klen, val, vlen);
	}
	if (eq) {
		if (oldisovf && (r = mb__bt_ovf_free(db, oldovf, oldvlen)) < 0) {
			free(cell);
			return r;
		}
		if ((r = pg_get(db, leafpg, &f)) < 0) {
			free(cell);
			return r;
		}
		if ((r = pg_write(db, f)) == 0)
			mb__bt_node_remove(f->data, ps, i);
		cache_put(f);
	}
	if (r == 0)
		r = node_insert(db, &pt, pt.depth, cell, clen, i);
	free(cell);
	db->modcount++;
	return r;
}

int mb__bt_del(struct mb_db *db, uint32_t root, const void *key, size_t klen)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	struct path pt;
	struct frame *f;
	int r = mb__bt_descend(db, root, key, klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = mb__bt_lower_bound(f->data, key, klen, &eq);
	if (!eq) {
		cache_put(f);
		return MB_ENOTFOUND;
	}
	const uint8_t *c = f->data + slot(f->data, i);
	bool isovf = c[2] & 1;
	size_t vl = rd32(c + 3);
	uint32_t first = isovf ? rd32(c + LEAF_FIXED + klen) : 0;
	if ((r = pg_write(db, f)) == 0)
		mb__bt_node_remove(f->data, db->page_size, i);
	cache_put(f);
	if (r == 0 && isovf)
		r = mb__bt_ovf_free(db, first, vl);
	if (r == 0)
		r = rebalance(db, &pt, pt.depth);
	db->modcount++;
	return r;
}

int mb__bt_create_root(struct mb_db *db, uint32_t *root)
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
		return mb__bt_corrupt(db, pg, "tree too deep");
	struct frame *f;
	int r = pg_get(db, pg, &f);
	if (r < 0)
		return r;
	int n = nkeys(f->data);
	if (is_leaf(f->data)) {
		for (int i = 0; i < n && r == 0; i++) {
			const uint8_t *c = f->data + slot(f->data, i);
			if (c[2] & 1)
				r = mb__bt_ovf_free(db, rd32(c + LEAF_FIXED + rd16(c)),
						    rd32(c + 3));
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

int mb__bt_free_tree(struct mb_db *db, uint32_t root) { return free_subtree(db, root, 0); }

int mb__cat_lookup(struct mb_db *db, const char *name, uint32_t *root)
{
	struct mb_val v = MB_VAL_INIT;
	int r = tree_get(db, CATALOG_ROOT, name, strlen(name), &v, NULL);
	if (r == 0) {
		if (v.len != 4)
			r = mb__bt_corrupt(db, CATALOG_ROOT, "bad catalog entry");
		else
			*root = rd32(v.data);
	}
	mb_val_free(&v);
	return r;
}

/* close hook (pager.h): mb_db_close frees the handles still open */
static void bt_close_all(struct mb_db *db)
{
	while (db->trees)
		mb_tree_close(db->trees);
}

int mb_tree_open(struct mb_db *db, const char *name, int flags, struct mb_tree **out)
{
	size_t nl = name ? strlen(name) : 0;
	if (nl == 0 || nl > MB_TREE_NAME_MAX)
		return MB_EINVAL;
	uint32_t root;
	int r = mb__cat_lookup(db, name, &root);
	if (r == MB_ENOTFOUND && (flags & MB_TREE_CREATE)) {
		if (!db->in_txn)
			return db_seterr(db, MB_ESTATE,
					 "%s: creating tree '%s' needs a transaction", db->name,
					 name);
		if ((r = mb__bt_create_root(db, &root)) < 0)
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
	db_on_close(db, DB_HOOK_TREES, bt_close_all);
	*out = t;
	return 0;
}

void mb_tree_close(struct mb_tree *t)
{
	if (!t)
		return;
	while (t->cursors) { /* the tree owns its cursors (btcursor.c) */
		struct mb_cursor *c = t->cursors;
		t->cursors = c->next;
		free(c);
	}
	struct mb_tree **pp = &t->db->trees;
	while (*pp && *pp != t)
		pp = &(*pp)->next;
	if (*pp)
		*pp = t->next;
	free(t);
}

int mb_tree_drop(struct mb_db *db, const char *name)
{
	if (!db->in_txn)
		return db_seterr(db, MB_ESTATE, "%s: write outside a transaction", db->name);
	for (struct mb_tree *t = db->trees; t; t = t->next)
		if (!strcmp(t->name, name))
			return MB_EBUSY;
	uint32_t root;
	int r = mb__cat_lookup(db, name, &root);
	if (r < 0)
		return r;
	if ((r = mb__bt_free_tree(db, root)) < 0)
		return r;
	return mb__bt_del(db, CATALOG_ROOT, name, strlen(name));
}

int mb_tree_get(struct mb_tree *t, const void *key, size_t klen, struct mb_val *out)
{
	int r = check_key(key, klen);
	if (r == 0 && t->db->bulk)
		return bulk_tree_get(t->db->bulk, t->root, key, klen, out, NULL);
	return r < 0 ? r : tree_get(t->db, t->root, key, klen, out, NULL);
}

int mb_tree_get_len(struct mb_tree *t, const void *key, size_t klen, size_t *len)
{
	int r = check_key(key, klen);
	if (r == 0 && t->db->bulk)
		return bulk_tree_get(t->db->bulk, t->root, key, klen, NULL, len);
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
	if (t->db->bulk)
		return bulk_tree_put(t->db->bulk, t->root, key, klen, val, vlen, flags);
	return tree_put(t->db, t->root, key, klen, val, vlen, flags);
}

int mb_tree_del(struct mb_tree *t, const void *key, size_t klen)
{
	int r = check_key(key, klen);
	if (r == 0 && t->db->bulk)
		return bulk_tree_del(t->db->bulk, t->root, key, klen);
	return r < 0 ? r : mb__bt_del(t->db, t->root, key, klen);
}
