/* btree_int.h: internal to the B+tree files (btnode.c, btree.c, btcursor.c):
 * the node layout, the handle structs and the node functions they share.
 * Not for other parts; check.c and bulk.c use only dbint.h.
 *
 * Node page (see dbint.h): u16 slots after the 32-byte header, sorted by key,
 * pointing at cells packed from the end of the page.
 *
 *   +--------+-------------------+ - - free - - +----------------------+
 *   | header | slot0 slot1 ...   |              | ... cell1 cell0      |
 *   +--------+-------------------+ - - - - - - -+----------------------+
 *   0        PG_HDR              PG_HDR+2n      CELLLO           page_size
 *
 *   leaf cell:     u16 klen, u8 flags (1: overflow), u32 vlen, key, then the
 *                  value inline or the u32 first overflow page
 *   internal cell: u16 klen, u32 child, key; the child holds keys >= key; the
 *                  header's prev field is the leftmost child (keys < key 0)
 * Cells freed in the middle are counted in FRAG until the node is compacted.
 * Layering: btnode.c (node edits, long values, descent) <- btree.c (insert,
 * split, delete, merge, catalog, tree handles) <- btcursor.c (cursors); no
 * file calls one above it.
 */
#ifndef MB_DB_BTREE_INT_H
#define MB_DB_BTREE_INT_H

#include "db/dbint.h"
#include "db/pager.h"

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
	int depth;	   /* index of the leaf level */
};

/* ---------------------------- node helpers --------------------------- */

static inline int nkeys(const uint8_t *p) { return rd16(p + PG_OFF_NKEYS); }
static inline uint16_t slot(const uint8_t *p, int i) { return rd16(p + PG_HDR + 2 * i); }
static inline bool is_leaf(const uint8_t *p) { return p[PG_OFF_TYPE] == PT_LEAF; }
static inline uint32_t cell_lo(const uint8_t *p, uint32_t ps)
{
	uint32_t v = rd16(p + PG_OFF_CELLLO);
	return v == 0 ? ps : v; /* 65536 never happens; 0 means ps for safety */
}

static inline size_t cell_size(const uint8_t *p, uint16_t off, bool leaf)
{
	const uint8_t *c = p + off;
	if (leaf)
		return LEAF_FIXED + rd16(c) + ((c[2] & 1) ? 4 : rd32(c + 3));
	return INT_FIXED + rd16(c);
}

static inline const uint8_t *cell_key(const uint8_t *p, int i, size_t *klen)
{
	const uint8_t *c = p + slot(p, i);
	*klen = rd16(c);
	return c + (is_leaf(p) ? LEAF_FIXED : INT_FIXED);
}

static inline uint32_t cell_child(const uint8_t *p, int i)
{
	if (i < 0)
		return rd32(p + PG_OFF_PREV);
	return rd32(p + slot(p, i) + 2);
}

static inline size_t node_free(const uint8_t *p, uint32_t ps)
{
	return cell_lo(p, ps) - (PG_HDR + 2 * (size_t)nkeys(p)) + rd16(p + PG_OFF_FRAG);
}

static inline size_t node_used(const uint8_t *p, uint32_t ps)
{
	return ps - PG_HDR - node_free(p, ps);
}

static inline void node_reset(uint8_t *p, uint32_t ps)
{
	wr16(p + PG_OFF_NKEYS, 0);
	wr16(p + PG_OFF_CELLLO, (uint16_t)ps);
	wr16(p + PG_OFF_FRAG, 0);
}
/* btnode.c: search and edits inside one node */
int mb__bt_lower_bound(const uint8_t *p, const void *k, size_t kl, bool *eq);
void mb__bt_node_append(uint8_t *p, uint32_t ps, const uint8_t *cell, size_t len);
void mb__bt_node_compact(struct mb_db *db, uint8_t *p);
bool mb__bt_node_insert_fit(struct mb_db *db, uint8_t *p, int i, const uint8_t *cell, size_t len);
void mb__bt_node_remove(uint8_t *p, uint32_t ps, int i);
int mb__bt_corrupt(struct mb_db *db, uint32_t pg, const char *what);

/* btnode.c: long values (overflow chains) and reading a leaf's value */
int mb__bt_ovf_write(struct mb_db *db, const uint8_t *v, size_t vlen, uint32_t *first);
int mb__bt_ovf_free(struct mb_db *db, uint32_t pg, size_t vlen);
int mb__bt_leaf_value(struct mb_db *db, const uint8_t *p, int i, struct mb_val *out);

/* btnode.c: root to leaf for key k (NULL k: leftmost, or rightmost when kl is
 * not 0), recording the path; *leaf is held (cache_put it) */
int mb__bt_descend(struct mb_db *db, uint32_t root, const void *k, size_t kl, struct path *pt,
		   struct frame **leaf);

/* btree.c: delete one key (the cursor's delete) */
int mb__bt_del(struct mb_db *db, uint32_t root, const void *key, size_t klen);

#endif
