/* btcursor.c: cursors over a B+tree, and the list of tree names (a cursor
 * over the catalog).
 *
 * A cursor remembers its key, not only its place: (leaf, idx) is trusted
 * while the database's modcount equals the cursor's and the entry was not
 * deleted through it; otherwise the next use descends again to the key.
 *
 *   unpositioned --seek/first/last/range (found)--> positioned
 *   positioned --next/prev past the end or bound--> unpositioned
 *   positioned --del--> positioned+deleted (key/value: ENOTFOUND;
 *                        next/prev continue from the deleted key)
 * Bounds [lo, hi) from mb_cursor_range apply to every move.  Cursors are
 * not allowed during a bulk build (its pages are not in the tree yet).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "db/btree_int.h"

/* ------------------------------ cursors ------------------------------ */

int mb_cursor_open(struct mb_tree *t, struct mb_cursor **out)
{
	if (t->db->bulk)
		return db_seterr(t->db, MB_ESTATE, "%s: no cursors during a bulk build",
				 t->db->name);
	struct mb_cursor *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->t = t;
	c->next = t->cursors;
	t->cursors = c;
	*out = c;
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
			return mb__bt_corrupt(db, nx, "leaf chain points to a non-leaf");
		}
		i = dir > 0 ? 0 : nkeys(f->data) - 1;
	}
}

static int cur_seek(struct mb_cursor *c, const void *k, size_t kl, bool le)
{
	struct mb_db *db = c->t->db;
	struct path pt;
	struct frame *f;
	int r = mb__bt_descend(db, c->t->root, k, kl, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	int i = mb__bt_lower_bound(f->data, k, kl, &eq);
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
		int r = mb__bt_descend(db, c->t->root, c->hi, c->hilen, &pt, &f);
		if (r < 0)
			return r;
		bool eq;
		int i = mb__bt_lower_bound(f->data, c->hi, c->hilen, &eq);
		return cur_walk(c, f, i - 1, -1);
	}
	struct path pt;
	struct frame *f;
	int r = mb__bt_descend(db, c->t->root, NULL, 1, &pt, &f); /* rightmost */
	if (r < 0)
		return r;
	return cur_walk(c, f, nkeys(f->data) - 1, -1);
}

int mb_cursor_range(struct mb_cursor *c, const void *lo, size_t lolen, const void *hi, size_t hilen)
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
	r = mb__bt_descend(db, c->t->root, c->key, c->klen, &pt, &f);
	if (r < 0)
		return r;
	bool eq;
	c->idx = mb__bt_lower_bound(f->data, c->key, c->klen, &eq);
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

int mb_cursor_next(struct mb_cursor *c) { return cur_step(c, 1); }

int mb_cursor_prev(struct mb_cursor *c) { return cur_step(c, -1); }

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
	r = mb__bt_leaf_value(c->t->db, f->data, c->idx, out);
	cache_put(f);
	return r;
}

int mb_cursor_del(struct mb_cursor *c)
{
	if (!c->positioned || c->deleted)
		return MB_ENOTFOUND;
	int r = mb__bt_del(c->t->db, c->t->root, c->key, c->klen);
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
