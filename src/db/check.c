/* check.c: the integrity check of databases, storage groups and data
 * directories (the engine's own test oracle and `mailbench check`).
 *
 * For a database: every page read (checksum and page number verified on
 * read), every tree of the catalog walked with key bounds (keys strictly
 * increasing, within the separators of the parents, all leaves at one
 * depth, leaf sibling links forming one chain in key order), every long
 * value chain followed (types, lengths), the free list followed, and every
 * page accounted for exactly once (tree, long value, free list, header).
 * For a group: each open database, and the log from the checkpoint to the end
 * (every record's checksum).  Problems are reported, never repaired.
 */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/error.h"
#include "db/dbint.h"
#include "db/group.h"
#include "db/pager.h"

struct ck {
	struct mb_db *db;
	struct mb_check_report *rep;
	mb_check_cb cb;
	void *arg;
	uint8_t *seen;
	uint32_t npages;
	const char *tree;
	int leaf_depth;
	uint32_t prev_leaf;
	uint64_t problems;
};

static void prob(struct ck *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void prob(struct ck *k, const char *fmt, ...)
{
	char msg[400], line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (k->tree)
		snprintf(line, sizeof(line), "%s: tree '%s': %s", k->db->path, k->tree, msg);
	else
		snprintf(line, sizeof(line), "%s: %s", k->db->path, msg);
	k->problems++;
	k->rep->problems++;
	if (!k->rep->first_problem[0])
		snprintf(k->rep->first_problem, sizeof(k->rep->first_problem), "%s", line);
	if (k->cb)
		k->cb(k->arg, line);
}

static bool mark(struct ck *k, uint32_t pg, const char *what)
{
	if (pg == 0 || pg >= k->npages) {
		prob(k, "%s points to page %u, outside the file (%u pages)", what, pg, k->npages);
		return false;
	}
	if (k->seen[pg]) {
		prob(k, "page %u (%s) is used twice", pg, what);
		return false;
	}
	k->seen[pg] = 1;
	return true;
}

static bool get(struct ck *k, uint32_t pg, struct frame **f)
{
	int r = pg_get(k->db, pg, f);
	if (r < 0) {
		/* the message names file and page; the file is named by prob() */
		const char *m = k->db->errmsg;
		size_t pl = strlen(k->db->path);
		if (!strncmp(m, k->db->path, pl) && !strncmp(m + pl, ": ", 2))
			m += pl + 2;
		prob(k, "%s", m[0] ? m : mb_strerror(r));
		return false;
	}
	return true;
}

static void check_chain(struct ck *k, uint32_t pg, uint32_t vlen)
{
	uint32_t chunk = k->db->page_size - PG_HDR, done = 0;
	k->rep->long_values++;
	while (done < vlen) {
		if (pg == 0) {
			prob(k, "long value chain ends after %u of %u bytes", done, vlen);
			return;
		}
		if (!mark(k, pg, "long value"))
			return;
		struct frame *f;
		if (!get(k, pg, &f))
			return;
		uint32_t n = rd32(f->data + PG_OFF_PREV);
		uint32_t nx = rd32(f->data + PG_OFF_NEXT);
		uint8_t t = f->data[PG_OFF_TYPE];
		cache_put(f);
		if (t != PT_OVERFLOW || n == 0 || n > chunk || n > vlen - done) {
			prob(k, "page %u: bad long-value page (type %u, %u bytes)", pg, t, n);
			return;
		}
		done += n;
		pg = done < vlen ? nx : pg;
		if (done == vlen && nx)
			prob(k, "page %u: long value chain continues past its length", pg);
	}
}

/* check the node at pg with keys in [lo, hi) (NULL: unbounded) */
static void check_node(struct ck *k, uint32_t pg, const uint8_t *lo, size_t lolen,
		       const uint8_t *hi, size_t hilen, int depth, bool catalog)
{
	uint32_t ps = k->db->page_size;
	if (depth > 32) {
		prob(k, "page %u: tree deeper than 32 levels", pg);
		return;
	}
	if (!mark(k, pg, "tree node"))
		return;
	struct frame *f;
	if (!get(k, pg, &f))
		return;
	uint8_t *p = malloc(ps);
	if (!p) {
		cache_put(f);
		return;
	}
	memcpy(p, f->data, ps);
	cache_put(f);
	uint8_t t = p[PG_OFF_TYPE];
	int n = rd16(p + PG_OFF_NKEYS);
	uint32_t clo = rd16(p + PG_OFF_CELLLO);
	if (t != PT_LEAF && t != PT_INTERNAL) {
		prob(k, "page %u: not a B+tree node (type %u)", pg, t);
		goto out;
	}
	bool leaf = t == PT_LEAF;
	if (PG_HDR + 2u * n > clo || clo > ps) {
		prob(k, "page %u: slot array (%d slots) overlaps the cells (at %u)", pg, n, clo);
		goto out;
	}
	const uint8_t *pk = lo;
	size_t pkl = lolen;
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		uint32_t o = rd16(p + PG_HDR + 2 * i);
		if (o < clo || o + (leaf ? 7u : 6u) > ps) {
			prob(k, "page %u: slot %d points outside the cell area (%u)", pg, i, o);
			goto out;
		}
		const uint8_t *c = p + o;
		size_t kl = rd16(c), sz;
		const uint8_t *key = c + (leaf ? 7 : 6);
		if (leaf)
			sz = 7 + kl + ((c[2] & 1) ? 4 : rd32(c + 3));
		else
			sz = 6 + kl;
		if (o + sz > ps || kl == 0 || kl > MB_KEY_MAX) {
			prob(k, "page %u: cell %d is malformed (key %zu bytes, %zu bytes)", pg, i,
			     kl, sz);
			goto out;
		}
		used += sz;
		if (pk && (i > 0 || !leaf || lo) && kcmp(pk, pkl, key, kl) > 0) {
			prob(k, "page %u: key %d out of order", pg, i);
			goto out;
		}
		if (i > 0 && kcmp(pk, pkl, key, kl) == 0) {
			prob(k, "page %u: key %d duplicated", pg, i);
			goto out;
		}
		if (hi && kcmp(key, kl, hi, hilen) >= 0) {
			prob(k, "page %u: key %d is not below its parent's separator", pg, i);
			goto out;
		}
		pk = key;
		pkl = kl;
	}
	if (used + rd16(p + PG_OFF_FRAG) != ps - clo)
		prob(k, "page %u: cell area accounting off (%zu used + %u free != %u)", pg, used,
		     rd16(p + PG_OFF_FRAG), ps - clo);
	if (leaf) {
		if (k->leaf_depth < 0)
			k->leaf_depth = depth;
		else if (k->leaf_depth != depth)
			prob(k, "page %u: leaf at depth %d, others at %d", pg, depth,
			     k->leaf_depth);
		if (rd32(p + PG_OFF_PREV) != k->prev_leaf)
			prob(k, "page %u: left sibling link %u, expected %u", pg,
			     rd32(p + PG_OFF_PREV), k->prev_leaf);
		if (k->prev_leaf) {
			struct frame *pf;
			if (get(k, k->prev_leaf, &pf)) {
				if (rd32(pf->data + PG_OFF_NEXT) != pg)
					prob(k, "page %u: right sibling link %u, expected %u",
					     k->prev_leaf, rd32(pf->data + PG_OFF_NEXT), pg);
				cache_put(pf);
			}
		}
		k->prev_leaf = pg;
		for (int i = 0; i < n; i++) {
			const uint8_t *c = p + rd16(p + PG_HDR + 2 * i);
			size_t kl = rd16(c);
			k->rep->keys++;
			if (c[2] & 1) {
				if (rd32(c + 3) == 0)
					prob(k, "page %u: empty long value", pg);
				else
					check_chain(k, rd32(c + 7 + kl), rd32(c + 3));
			}
			if (catalog && ((c[2] & 1) || rd32(c + 3) != 4))
				prob(k, "page %u: catalog entry %d is malformed", pg, i);
		}
	} else {
		uint32_t kids = (uint32_t)n + 1;
		for (uint32_t i = 0; i < kids; i++) {
			uint32_t child = i == 0 ? rd32(p + PG_OFF_PREV)
						: rd32(p + rd16(p + PG_HDR + 2 * (i - 1)) + 2);
			const uint8_t *clo_k = lo, *chi_k = hi;
			size_t clol = lolen, chil = hilen;
			if (i > 0) {
				const uint8_t *c = p + rd16(p + PG_HDR + 2 * (i - 1));
				clo_k = c + 6;
				clol = rd16(c);
			}
			if (i < (uint32_t)n) {
				const uint8_t *c = p + rd16(p + PG_HDR + 2 * i);
				chi_k = c + 6;
				chil = rd16(c);
			}
			check_node(k, child, clo_k, clol, chi_k, chil, depth + 1, catalog);
		}
	}
out:
	free(p);
}

static void check_tree(struct ck *k, const char *name, uint32_t root, bool catalog)
{
	k->tree = name;
	k->leaf_depth = -1;
	k->prev_leaf = 0;
	k->rep->trees++;
	check_node(k, root, NULL, 0, NULL, 0, 0, catalog);
	if (k->prev_leaf) {
		struct frame *f;
		if (get(k, k->prev_leaf, &f)) {
			if (rd32(f->data + PG_OFF_NEXT) != 0)
				prob(k, "page %u: last leaf has a right sibling %u", k->prev_leaf,
				     rd32(f->data + PG_OFF_NEXT));
			cache_put(f);
		}
	}
	k->tree = NULL;
}

struct names {
	struct {
		char name[MB_TREE_NAME_MAX + 1];
	} * e;
	size_t n, cap;
};

static void collect_cb(void *arg, const char *name)
{
	struct names *c = arg;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 16;
		void *ne = realloc(c->e, nc * sizeof(*c->e));
		if (!ne)
			return;
		c->e = ne;
		c->cap = nc;
	}
	snprintf(c->e[c->n++].name, sizeof(c->e[0].name), "%s", name);
}

int mb_db_check(struct mb_db *db, mb_check_cb cb, void *arg, struct mb_check_report *rep)
{
	struct ck k = {.db = db, .rep = rep, .cb = cb, .arg = arg};
	struct frame *h;
	rep->databases++;
	if (!get(&k, 0, &h))
		return MB_ECORRUPT;
	k.npages = rd32(h->data + HP_OFF_PAGECOUNT);
	uint32_t fhead = rd32(h->data + HP_OFF_FREEHEAD), fcount = rd32(h->data + HP_OFF_FREECOUNT);
	bool hdr_ok =
	    h->data[PG_OFF_TYPE] == PT_HEADER && rd32(h->data + HP_OFF_PAGESIZE) == db->page_size;
	cache_put(h);
	if (!hdr_ok) {
		prob(&k, "page 0: bad database header");
		return MB_ECORRUPT;
	}
	k.seen = calloc(k.npages ? k.npages : 1, 1);
	if (!k.seen)
		return MB_ENOMEM;
	k.seen[0] = 1;
	rep->pages += k.npages;
	rep->bytes += (uint64_t)k.npages * db->page_size;
	check_tree(&k, "(catalog)", CATALOG_ROOT, true);
	/* the catalog's trees, by name */
	struct names col = {0};
	int r = mb_tree_list(db, collect_cb, &col);
	if (r < 0)
		prob(&k, "cannot read the catalog: %s", mb_strerror(r));
	for (size_t i = 0; i < col.n; i++) {
		uint32_t root;
		r = mb__cat_lookup(db, col.e[i].name, &root);
		if (r < 0) {
			prob(&k, "catalog entry '%s': %s", col.e[i].name, mb_strerror(r));
			continue;
		}
		check_tree(&k, col.e[i].name, root, false);
	}
	free(col.e);
	/* free list: trunk pages, each with the free pages it lists */
	uint32_t pg = fhead, cnt = 0, cap = (db->page_size - PG_HDR) / 4;
	while (pg && cnt <= k.npages) {
		if (!mark(&k, pg, "free list"))
			break;
		struct frame *f;
		if (!get(&k, pg, &f))
			break;
		uint8_t t = f->data[PG_OFF_TYPE];
		uint32_t nx = rd32(f->data + PG_OFF_NEXT);
		uint16_t n = rd16(f->data + PG_OFF_NKEYS);
		if (t != PT_FREE || n > cap) {
			cache_put(f);
			prob(&k, "page %u: on the free list but of type %u (%u entries)", pg, t, n);
			break;
		}
		cnt++;
		bool bad = false;
		for (uint16_t i = 0; i < n && !bad; i++) {
			uint32_t e = rd32(f->data + PG_HDR + 4u * i);
			if (e < 2 || e >= k.npages) {
				prob(&k, "page %u: lists page %u as free, outside the file", pg, e);
				bad = true;
			} else if (!mark(&k, e, "free list")) {
				bad = true;
			} else {
				cnt++;
			}
		}
		cache_put(f);
		if (bad)
			break;
		pg = nx;
	}
	if (cnt != fcount)
		prob(&k, "free list holds %u pages, the header says %u", cnt, fcount);
	rep->free_pages += cnt;
	uint32_t leaked = 0, first_leak = 0;
	for (uint32_t i = 0; i < k.npages; i++) {
		if (!k.seen[i]) {
			if (!leaked++)
				first_leak = i;
		}
	}
	if (leaked && !k.problems)
		prob(&k, "%u page(s) neither in a tree nor free (first: page %u)", leaked,
		     first_leak);
	free(k.seen);
	return k.problems ? MB_ECORRUPT : 0;
}

struct sgck {
	mb_check_cb cb;
	void *arg;
	struct mb_check_report *rep;
	int err;
};

static int sg_db_cb(void *arg, struct mb_db *db)
{
	struct sgck *s = arg;
	int r = mb_db_check(db, s->cb, s->arg, s->rep);
	if (r < 0 && r != MB_ECORRUPT && !s->err)
		s->err = r;
	return 0;
}

int mb_sg_check(struct mb_sg *sg, mb_check_cb cb, void *arg, struct mb_check_report *rep)
{
	uint64_t p0 = rep->problems;
	rep->groups++;
	struct sgck s = {cb, arg, rep, 0};
	sg_for_each_db(sg, sg_db_cb, &s);
	int r = mb_sg_flush(sg);
	if (r < 0)
		return s.err ? s.err : r;
	struct mb_sg_stats st;
	mb_sg_stats_get(sg, &st);
	uint64_t end = 0, n = 0;
	r = log_scan(sg_log(sg), st.checkpoint_lsn, NULL, NULL, &end, &n);
	if (r < 0)
		return r;
	rep->log_records += n;
	rep->log_segments += st.log_segments;
	rep->bytes += end - st.checkpoint_lsn;
	if (end < st.durable_lsn) {
		char line[512];
		snprintf(line, sizeof(line),
			 "%s/log: record at LSN %llu fails its checksum (durable end %llu)",
			 sg_dir(sg), (unsigned long long)end, (unsigned long long)st.durable_lsn);
		rep->problems++;
		if (!rep->first_problem[0])
			snprintf(rep->first_problem, sizeof(rep->first_problem), "%s", line);
		if (cb)
			cb(arg, line);
	}
	if (s.err)
		return s.err;
	return rep->problems > p0 ? MB_ECORRUPT : 0;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a > b && !strcmp(s + a - b, suf);
}

static bool is_group(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/log", dir);
	struct stat st;
	if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool any = false;
	struct dirent *e;
	while (!any && (e = readdir(d)))
		any = has_suffix(e->d_name, ".mdb");
	closedir(d);
	return any;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* sorted entries of dir that satisfy pick */
static int list_dir(const char *dir, bool (*pick)(const char *dir, const char *name), char ***out,
		    size_t *n)
{
	DIR *d = opendir(dir);
	if (!d)
		return MB_ENOTFOUND;
	char **v = NULL;
	size_t k = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || !pick(dir, e->d_name))
			continue;
		if (k == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[k++] = strdup(e->d_name);
	}
	closedir(d);
	if (k)
		qsort(v, k, sizeof(*v), name_cmp);
	*out = v;
	*n = k;
	return 0;
}

static bool pick_mdb(const char *dir, const char *name) { return has_suffix(name, ".mdb"); }

static bool pick_group(const char *dir, const char *name)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode) && is_group(p);
}

static void report_line(mb_check_cb cb, void *arg, struct mb_check_report *rep, const char *fmt,
			...) __attribute__((format(printf, 4, 5)));
static void report_line(mb_check_cb cb, void *arg, struct mb_check_report *rep, const char *fmt,
			...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	rep->problems++;
	if (!rep->first_problem[0])
		snprintf(rep->first_problem, sizeof(rep->first_problem), "%s", line);
	if (cb)
		cb(arg, line);
}

static int check_group(const char *dir, const char *log_dir, uint32_t cache_mb, mb_check_cb cb,
		       void *arg, struct mb_check_report *rep)
{
	struct mb_sg_options o;
	mb_sg_options_init(&o);
	o.dir = dir;
	o.log_dir = log_dir;
	o.cache_mb = cache_mb ? cache_mb : 64;
	o.checkpoint_bytes = UINT64_MAX;
	struct mb_sg *sg;
	int r = mb_sg_open(&o, &sg);
	if (r < 0) {
		/* a disk that cannot be written (full, read-only, no permission) or
		 * a shortage is a runtime failure, not damage: the caller names it */
		if (r == MB_EBUSY || r == MB_ENOSPC || r == MB_EROFS || r == MB_EACCES ||
		    r == MB_EMFILE || r == MB_ENOMEM)
			return r;
		report_line(cb, arg, rep, "%s: cannot open the storage group: %s", dir,
			    mb_strerror(r));
		return MB_ECORRUPT;
	}
	char **names = NULL;
	size_t n = 0;
	list_dir(dir, pick_mdb, &names, &n);
	for (size_t i = 0; i < n; i++) {
		struct mb_db *db;
		r = mb_db_open(sg, names[i], 0, 0, &db);
		if (r < 0) {
			char why[512];
			mb_db_open_errmsg(r, why, sizeof(why));
			report_line(cb, arg, rep, "cannot open: %s", why);
		}
		free(names[i]);
	}
	free(names);
	int err = mb_sg_check(sg, cb, arg, rep);
	struct mb_io_stats ios;
	mb_io_stats_get(mb_sg_io(sg), &ios);
	r = mb_sg_close(sg);
	if (err < 0 && err != MB_ECORRUPT)
		return err;
	return r < 0 ? r : 0;
}

int mb_db_check_dir(const char *dir, const char *log_root, uint32_t cache_mb, mb_check_cb cb,
		    void *arg, struct mb_check_report *rep)
{
	uint64_t t0 = mb_io_now_ns();
	struct stat st;
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return MB_ENOTFOUND;
	int r = 0;
	if (is_group(dir)) {
		r = check_group(dir, NULL, cache_mb, cb, arg, rep);
	} else {
		char **names = NULL;
		size_t n = 0;
		list_dir(dir, pick_group, &names, &n);
		for (size_t i = 0; i < n; i++) {
			char p[4200], lp[4200];
			snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
			if (log_root)
				snprintf(lp, sizeof(lp), "%s/%s", log_root, names[i]);
			int r2 = r < 0
				     ? 0
				     : check_group(p, log_root ? lp : NULL, cache_mb, cb, arg, rep);
			if (r2 < 0 && r == 0)
				r = r2;
			free(names[i]);
		}
		free(names);
	}
	rep->seconds = (double)(mb_io_now_ns() - t0) / 1e9;
	if (r < 0)
		return r;
	return rep->problems ? MB_ECORRUPT : 0;
}
