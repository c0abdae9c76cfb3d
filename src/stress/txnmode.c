/* txnmode.c: transactions mode over the engine's storage group (see
 * txnmode.h): the test databases (created, filled, reused), the worker's
 * transactions and the accounting; the checksum pass and soft recovery
 * are txnrec.c's.
 * Invariants: a database handle is used under its mutex only (the engine's
 * one-thread-per-handle rule); ready.json is written only after the
 * databases are filled and checkpointed; every figure comes from the
 * engine's own I/O layer and log. */
#include "stress/txnmode.h"
#include "stress/txnmode_int.h"
#include "core/content.h"
#include "core/error.h"
#include "core/hist.h"
#include "db/db.h"
#include "stress/files.h"
#include "stress/watchvfs.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TREE "records"
#define VAL_MIN 512
#define VAL_SPAN 3072
#define POOL_BYTES (256u << 10)
#define FILL_TXN_BYTES (256u << 10)
#define KEY_SCALE (1ull << 32)

struct tstate {
	struct mb_stress_thread t; /* slot, rng, generator, text pool */
	struct mb_txnmode *m;
	struct mb_val val;
};

void mb__txn_sg_options(const struct mb_txnmode *m, struct mb_sg_options *o, bool create)
{
	mb_sg_options_init(o);
	o->dir = m->dir;
	o->log_dir = m->has_log_dir ? m->log_dir : NULL;
	o->io = m->io;
	o->cache_mb = m->cfg.cache_mb;
	o->create = create;
	/* the storage test's reference is Exchange 2016, whose ESE writes its
	 * log in 4 KiB segments (the store's scenarios: Exchange 2003's 512) */
	o->log_sector = MB_LOG_SECTOR_MAX;
}

/* Remove the regular files of dir (not subdirectories: DIR/stress/io
 * belongs to the I/O mode). */
static void remove_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		char p[4400];
		struct stat st;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (!lstat(p, &st) && S_ISREG(st.st_mode))
			unlink(p);
	}
	closedir(d);
}

static void wipe_group(struct mb_txnmode *m)
{
	char p[4200];
	remove_files(m->dir);
	if (m->has_log_dir) {
		remove_files(m->log_dir);
	} else {
		snprintf(p, sizeof(p), "%s/log", m->dir);
		remove_files(p);
	}
}

static const char *log_dir_name(const struct mb_txnmode *m)
{
	return m->has_log_dir ? m->log_dir : "";
}

/* Keys per database from a matching marker, or false. */
bool mb__txn_marker_read(struct mb_txnmode *m)
{
	json_t *j = mb_stress_marker_load(m->dir);
	if (!j)
		return false;
	json_t *keys = json_object_get(j, "keys");
	const char *ld = json_string_value(json_object_get(j, "log_dir"));
	bool ok =
	    json_integer_value(json_object_get(j, "page_size")) == (json_int_t)m->cfg.page_size &&
	    json_integer_value(json_object_get(j, "databases")) == (json_int_t)m->cfg.databases &&
	    json_integer_value(json_object_get(j, "db_bytes")) == (json_int_t)m->cfg.db_bytes &&
	    ld && !strcmp(ld, log_dir_name(m)) && json_is_array(keys) &&
	    json_array_size(keys) == m->cfg.databases;
	for (unsigned d = 0; ok && d < m->cfg.databases; d++) {
		json_int_t k = json_integer_value(json_array_get(keys, d));
		if (k < 1)
			ok = false;
		else
			m->db[d].keys = (uint64_t)k;
	}
	json_decref(j);
	return ok;
}

static int marker_write(struct mb_txnmode *m)
{
	json_t *keys = json_array();
	for (unsigned d = 0; d < m->cfg.databases; d++)
		json_array_append_new(keys, json_integer((json_int_t)m->db[d].keys));
	return mb_stress_marker_write(
	    m->io, m->dir,
	    json_pack("{s:i,s:i,s:I,s:s,s:o}", "page_size", (int)m->cfg.page_size, "databases",
		      (int)m->cfg.databases, "db_bytes", (json_int_t)m->cfg.db_bytes, "log_dir",
		      log_dir_name(m), "keys", keys));
}

static void close_dbs(struct mb_txnmode *m)
{
	for (unsigned d = 0; d < MB_TXN_MAX_DBS; d++) {
		struct tdb *t = &m->db[d];
		if (t->cur)
			mb_cursor_close(t->cur);
		t->cur = NULL;
		t->tree = NULL; /* released by mb_db_close */
		if (t->db)
			mb_db_close(t->db);
		t->db = NULL;
	}
}

int mb__txn_open_dbs(struct mb_txnmode *m, bool create, char *msg, size_t len)
{
	for (unsigned d = 0; d < m->cfg.databases; d++) {
		struct tdb *t = &m->db[d];
		char name[32];
		snprintf(name, sizeof(name), "db%02u.mdb", d + 1);
		snprintf(t->path, sizeof(t->path), "%s/%s", m->dir, name);
		int rc =
		    mb_db_open(m->sg, name, m->cfg.page_size, create ? MB_DB_CREATE : 0, &t->db);
		if (rc) {
			snprintf(msg, len, "%s: %s", t->path, mb_strerror(rc));
			return rc;
		}
		if (mb_db_page_size(t->db) != m->cfg.page_size) {
			snprintf(msg, len, "%s: page size %u, not %u", t->path,
				 mb_db_page_size(t->db), m->cfg.page_size);
			return MB_ECONFIG;
		}
		if (create) {
			if ((rc = mb_db_begin(t->db)) ||
			    (rc = mb_tree_open(t->db, TREE, MB_TREE_CREATE, &t->tree)) ||
			    (rc = mb_db_commit(t->db))) {
				snprintf(msg, len, "%s: creating tree: %s", t->path,
					 mb_db_errmsg(t->db)[0] ? mb_db_errmsg(t->db)
								: mb_strerror(rc));
				return rc;
			}
		} else if ((rc = mb_tree_open(t->db, TREE, 0, &t->tree))) {
			snprintf(msg, len, "%s: tree %s: %s", t->path, TREE, mb_strerror(rc));
			return rc;
		}
		if ((rc = mb_cursor_open(t->tree, &t->cur))) {
			snprintf(msg, len, "%s: cursor: %s", t->path, mb_strerror(rc));
			return rc;
		}
	}
	return 0;
}

/* ---- filling the databases ---- */

struct filler {
	struct mb_txnmode *m;
	int idx, nthreads;
	atomic_uint_fast64_t *done; /* bytes of database file so far, all dbs */
	int rc;
	char msg[512];
	atomic_uint_fast64_t async_fail;
};

static void fill_cb(void *arg, int status)
{
	struct filler *f = arg;
	if (status)
		atomic_fetch_add(&f->async_fail, 1);
}

static void *fill_main(void *arg)
{
	struct filler *f = arg;
	struct mb_txnmode *m = f->m;
	const unsigned ps = m->cfg.page_size;
	char *val = malloc(VAL_MIN + VAL_SPAN);
	if (!val) {
		f->rc = MB_ENOMEM;
		return NULL;
	}
	for (unsigned d = (unsigned)f->idx; d < m->cfg.databases && !f->rc;
	     d += (unsigned)f->nthreads) {
		struct tdb *t = &m->db[d];
		uint64_t key = 0, pages = 0, freep = 0, counted = 0;
		mb_db_pages(t->db, &pages, &freep);
		while (pages * ps < m->cfg.db_bytes && !f->rc) {
			int rc = mb_db_begin(t->db);
			size_t in_txn = 0;
			while (!rc && in_txn < FILL_TXN_BYTES) {
				unsigned char k[8];
				uint64_t seed = ((uint64_t)(d + 1) << 48) ^ key;
				size_t n = VAL_MIN +
					   (size_t)(seed * 0x9e3779b97f4a7c15ULL >> 52) % VAL_SPAN;
				mb_content_fill(seed, val, n);
				mb_key_u64(k, key * MB_TXN_STRIDE);
				rc = mb_tree_put(t->tree, k, 8, val, n, 0);
				in_txn += n;
				key++;
			}
			if (!rc)
				rc = mb_db_commit_async(t->db, fill_cb, f);
			if (rc) {
				snprintf(f->msg, sizeof(f->msg), "%s: filling: %s", t->path,
					 mb_db_errmsg(t->db)[0] ? mb_db_errmsg(t->db)
								: mb_strerror(rc));
				if (mb_db_in_txn(t->db))
					mb_db_abort(t->db);
				f->rc = rc;
				break;
			}
			mb_db_pages(t->db, &pages, &freep);
			uint64_t now = pages * ps > m->cfg.db_bytes ? m->cfg.db_bytes : pages * ps;
			if (now > counted) {
				atomic_fetch_add(f->done, now - counted);
				counted = now;
			}
		}
		t->keys = key;
	}
	free(val);
	return NULL;
}

static int fill_all(struct mb_txnmode *m, char *msg, size_t len)
{
	int nthr = m->cfg.databases < 2 ? (int)m->cfg.databases : 2; /* the machine's cores */
	struct filler f[2];
	pthread_t tid[2];
	atomic_uint_fast64_t done;
	atomic_init(&done, 0);
	int started = 0;
	for (int i = 0; i < nthr; i++) {
		f[i] = (struct filler){.m = m, .idx = i, .nthreads = nthr, .done = &done};
		atomic_init(&f[i].async_fail, 0);
		if (pthread_create(&tid[i], NULL, fill_main, &f[i]))
			break;
		started++;
	}
	uint64_t total = m->cfg.db_bytes * m->cfg.databases;
	for (;;) {
		bool running = false;
		for (int i = 0; i < started; i++)
			running |= !f[i].rc;
		uint64_t d = atomic_load(&done);
		if (d >= total || !running)
			break;
		mb_stress_progress(m->cfg.progress, d, total);
		usleep(200000);
	}
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	int rc = started == nthr ? 0 : MB_ESYS;
	for (int i = 0; i < started && !rc; i++) {
		if (f[i].rc) {
			rc = f[i].rc;
			snprintf(msg, len, "%s", f[i].msg);
		}
	}
	if (!rc && (rc = mb_sg_flush(m->sg)))
		snprintf(msg, len, "%s: flushing the log: %s", m->dir, mb_strerror(rc));
	for (int i = 0; i < started && !rc; i++)
		if (atomic_load(&f[i].async_fail)) {
			rc = MB_EIO;
			snprintf(msg, len, "%s: a commit failed while filling", m->dir);
		}
	if (!rc && (rc = mb_sg_checkpoint(m->sg)))
		snprintf(msg, len, "%s: checkpoint: %s", m->dir, mb_strerror(rc));
	if (!rc)
		mb_stress_progress(m->cfg.progress, total, total);
	return rc;
}

void mb__txn_free(struct mb_txnmode *m)
{
	close_dbs(m);
	if (m->sg)
		mb_sg_close(m->sg);
	m->sg = NULL;
	for (unsigned d = 0; d < MB_TXN_MAX_DBS; d++)
		pthread_mutex_destroy(&m->db[d].mu);
	mb_hist_destroy(m->tmp);
	mb_io_destroy(m->io);
	mb_watchvfs_destroy(m->watch);
	free(m);
}

int mb__txn_init(const struct mb_txnmode_cfg *cfg, struct mb_txnmode **out, char *msg, size_t len)
{
	*out = NULL;
	if (cfg->databases < 1 || cfg->databases > MB_TXN_MAX_DBS ||
	    (cfg->page_size != 4096 && cfg->page_size != 8192 && cfg->page_size != 32768)) {
		snprintf(msg, len,
			 "invalid transactions-mode geometry (page size %u, %u databases)",
			 cfg->page_size, cfg->databases);
		return MB_EINVAL;
	}
	struct mb_txnmode *m = calloc(1, sizeof(*m));
	if (!m)
		return MB_ENOMEM;
	m->cfg = *cfg;
	snprintf(m->dir, sizeof(m->dir), "%s", cfg->dir);
	m->has_log_dir = cfg->log_dir && cfg->log_dir[0];
	if (m->has_log_dir)
		snprintf(m->log_dir, sizeof(m->log_dir), "%s", cfg->log_dir);
	m->cfg.dir = m->dir;
	m->cfg.log_dir = m->has_log_dir ? m->log_dir : NULL;
	atomic_init(&m->async_fail, 0);
	for (unsigned d = 0; d < MB_TXN_MAX_DBS; d++)
		pthread_mutex_init(&m->db[d].mu, NULL);
	int rc = mb_hist_create(&m->tmp);
	if (!rc && !(m->watch = mb_watchvfs_create(cfg->vfs)))
		rc = MB_ENOMEM;
	if (!rc)
		rc = mb_io_create(mb_watchvfs_vfs(m->watch), &m->io);
	if (!rc && ((rc = mb_stress_mkdirs(m->dir)) ||
		    (m->has_log_dir && (rc = mb_stress_mkdirs(m->log_dir)))))
		snprintf(msg, len, "creating %s: %s", m->dir, mb_strerror(rc));
	if (rc) {
		mb__txn_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int mb_txnmode_open(const struct mb_txnmode_cfg *cfg, struct mb_txnmode **out, char *msg,
		    size_t len)
{
	msg[0] = '\0';
	struct mb_txnmode *m;
	int rc = mb__txn_init(cfg, &m, msg, len);
	if (rc)
		return rc;
	struct mb_sg_options o;
	if (mb__txn_marker_read(m)) {
		mb__txn_sg_options(m, &o, false);
		rc = mb_sg_open(&o, &m->sg);
		if (!rc)
			rc = mb__txn_open_dbs(m, false, msg, len);
		if (!rc) {
			m->reused = true;
			*out = m;
			return 0;
		}
		if (rc == MB_EBUSY) {
			snprintf(msg, len, "%s is in use by another process", m->dir);
			mb__txn_free(m);
			return rc;
		}
		/* present but not usable: start over */
		close_dbs(m);
		if (m->sg)
			mb_sg_close(m->sg);
		m->sg = NULL;
		msg[0] = '\0';
	}
	char mp[4200];
	snprintf(mp, sizeof(mp), "%s/ready.json", m->dir);
	unlink(mp); /* first: the marker never outlives what it vouches for */
	wipe_group(m);
	mb__txn_sg_options(m, &o, true);
	if ((rc = mb_sg_open(&o, &m->sg))) {
		snprintf(msg, len, "%s: opening the storage group: %s", m->dir, mb_strerror(rc));
		mb__txn_free(m);
		return rc;
	}
	if ((rc = mb__txn_open_dbs(m, true, msg, len)) || (rc = fill_all(m, msg, len)) ||
	    (rc = marker_write(m))) {
		if (!msg[0])
			snprintf(msg, len, "%s: creating the test databases: %s", m->dir,
				 mb_strerror(rc));
		mb__txn_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int mb_txnmode_close(struct mb_txnmode *m)
{
	if (!m)
		return 0;
	int rc = m->sg ? mb_sg_flush(m->sg) : 0;
	close_dbs(m);
	if (m->sg) {
		int r2 = mb_sg_close(m->sg);
		if (!rc)
			rc = r2;
		m->sg = NULL;
	}
	mb__txn_free(m);
	return rc;
}

bool mb_txnmode_io_error(struct mb_txnmode *m, char *file, size_t flen, uint64_t *off, int *code,
			 char *what, size_t wlen)
{
	return mb_watchvfs_first_error(m->watch, file, flen, off, code, what, wlen);
}

bool mb_txnmode_reused(const struct mb_txnmode *m) { return m->reused; }

void mb_txnmode_cache_info(struct mb_txnmode *m, double *cache_mb, uint64_t *hits, uint64_t *misses,
			   uint64_t *dirty)
{
	struct mb_cache_stats cs;
	mb_cache_stats_get(mb_sg_cache(m->sg), &cs);
	*cache_mb = (double)cs.bytes_in_use / 1048576.0;
	*dirty = cs.dirty_pages;
	*hits = cs.hits;
	*misses = cs.misses;
}

/* ---- accounting from the engine's own counters ---- */

static void engine_source(void *arg, struct mb_stress_window *w)
{
	struct mb_txnmode *m = arg;
	struct mb_io_stats now;
	mb_io_stats_get(m->io, &now);
	const struct mb_io_kind_stats *db = &now.kind[MB_FILE_DB], *pdb = &m->prev.kind[MB_FILE_DB];
	const struct mb_io_kind_stats *lg = &now.kind[MB_FILE_LOG],
				      *plg = &m->prev.kind[MB_FILE_LOG];
	mb_hist_reset(m->tmp);
	mb_io_hist_take(m->io, MB_FILE_DB, MB_IO_OP_READ, m->tmp);
	mb_stress_window_add_hist(w, MB_XFER_DB_READ, m->tmp, db->read_bytes - pdb->read_bytes);
	mb_hist_reset(m->tmp);
	mb_io_hist_take(m->io, MB_FILE_DB, MB_IO_OP_WRITE, m->tmp);
	mb_stress_window_add_hist(w, MB_XFER_DB_WRITE, m->tmp, db->write_bytes - pdb->write_bytes);
	mb_hist_reset(m->tmp);
	mb_sg_logwrite_hist_take(m->sg, m->tmp);
	mb_stress_window_add_hist(w, MB_XFER_LOG_WRITE, m->tmp, lg->write_bytes - plg->write_bytes);
	uint64_t errs = (db->errors - pdb->errors) + (lg->errors - plg->errors);
	uint64_t af = atomic_load(&m->async_fail);
	errs += af - m->async_fail_seen;
	m->async_fail_seen = af;
	mb_stress_window_add_counts(w, 0, errs);
	m->prev = now;
}

int mb_txnmode_attach(struct mb_txnmode *m, struct mb_stress_acct *acct)
{
	int rc = mb_stress_acct_slot(acct, &m->engine_slot);
	if (rc)
		return rc;
	mb_io_stats_get(m->io, &m->prev);
	mb_hist_reset(m->tmp);
	mb_io_hist_take(m->io, MB_FILE_DB, MB_IO_OP_READ, m->tmp);
	mb_io_hist_take(m->io, MB_FILE_DB, MB_IO_OP_WRITE, m->tmp);
	mb_sg_logwrite_hist_take(m->sg, m->tmp);
	mb_hist_reset(m->tmp);
	mb_stress_acct_set_source(acct, engine_source, m);
	return 0;
}

/* ---- the worker ---- */

static void commit_cb(void *arg, int status)
{
	struct mb_txnmode *m = arg;
	if (status)
		atomic_fetch_add(&m->async_fail, 1);
}

static void t_stop(void *ts)
{
	struct tstate *t = ts;
	mb_stress_thread_fini(&t->t);
	mb_val_free(&t->val);
	free(t);
}

static int t_start(void *ctx, int idx, struct mb_stress_slot *slot, void **ts)
{
	struct mb_txnmode *m = ctx;
	struct tstate *t = calloc(1, sizeof(*t));
	if (!t)
		return MB_ENOMEM;
	t->m = m;
	t->val = (struct mb_val)MB_VAL_INIT;
	int rc = mb_stress_thread_init(&t->t, idx, slot, &m->cfg.mix, false, m->cfg.databases,
				       KEY_SCALE, POOL_BYTES + VAL_MIN + VAL_SPAN);
	if (rc) {
		t_stop(t);
		return rc;
	}
	*ts = t;
	return 0;
}

static int t_fail(struct tstate *t, struct tdb *d, int rc)
{
	const char *em = mb_db_errmsg(d->db);
	char what[600];
	snprintf(what, sizeof(what), "transaction failed: %s", em[0] ? em : mb_strerror(rc));
	if (mb_db_in_txn(d->db))
		mb_db_abort(d->db);
	char file[1024];
	uint64_t off;
	int code;
	if (mb_txnmode_io_error(t->m, file, sizeof(file), &off, &code, NULL, 0))
		mb_stress_slot_error(t->t.slot, file, off, code, what);
	else
		mb_stress_slot_error(t->t.slot, d->path, UINT64_MAX, rc, what);
	return rc;
}

static int position(struct tdb *d, uint64_t target)
{
	unsigned char k[8];
	mb_key_u64(k, target);
	int rc = mb_cursor_seek(d->cur, k, 8);
	if (rc == MB_ENOTFOUND)
		rc = mb_cursor_first(d->cur);
	return rc;
}

static int t_txn(struct tstate *t, struct tdb *d, const struct mb_stress_step *st)
{
	struct mb_txnmode *m = t->m;
	size_t vlen = VAL_MIN + (size_t)mb_rng_below(&t->t.rng, VAL_SPAN);
	const char *vbuf = t->t.pool + mb_rng_below(&t->t.rng, POOL_BYTES);
	unsigned char k[8];
	int rc;
	if (st->op == MB_SOP_SEEK) {
		/* a read: no transaction needed */
		rc = position(d, st->target);
		if (!rc)
			rc = mb_cursor_value(d->cur, &t->val);
		return rc == MB_ENOTFOUND ? 0 : rc;
	}
	if ((rc = mb_db_begin(d->db)))
		return rc;
	switch (st->op) {
	case MB_SOP_INSERT: {
		uint64_t key = st->target - st->target % MB_TXN_STRIDE + 1 +
			       mb_rng_below(&t->t.rng, MB_TXN_STRIDE - 1);
		mb_key_u64(k, key);
		rc = mb_tree_put(d->tree, k, 8, vbuf, vlen, MB_PUT_NOOVERWRITE);
		if (rc == MB_EEXIST)
			rc = mb_tree_put(d->tree, k, 8, vbuf, vlen, 0);
		break;
	}
	case MB_SOP_REPLACE: {
		const void *key;
		size_t klen;
		rc = position(d, st->target);
		if (!rc)
			rc = mb_cursor_key(d->cur, &key, &klen);
		if (!rc && klen == 8) {
			memcpy(k, key, 8);
			rc = mb_tree_put(d->tree, k, 8, vbuf, vlen, MB_PUT_UPDATE);
		}
		break;
	}
	case MB_SOP_DELETE:
		rc = position(d, st->target);
		if (!rc)
			rc = mb_cursor_del(d->cur);
		break;
	default:
		break;
	}
	if (rc == MB_ENOTFOUND)
		rc = 0; /* an empty tree or a raced key: the transaction is still valid */
	if (rc)
		return rc;
	if (st->lazy)
		return mb_db_commit_async(d->db, commit_cb, m);
	return mb_db_commit(d->db);
}

/* Lock a database for one transaction: the generator's pick if it is
 * free, else the next free one; when every one is busy (more threads than
 * databases), wait for the pick. */
static struct tdb *take_db(struct mb_txnmode *m, unsigned pick)
{
	unsigned n = m->cfg.databases;
	for (unsigned i = 0; i < n; i++) {
		struct tdb *d = &m->db[(pick + i) % n];
		if (pthread_mutex_trylock(&d->mu) == 0)
			return d;
	}
	pthread_mutex_lock(&m->db[pick].mu);
	return &m->db[pick];
}

static int t_step(void *ts)
{
	struct tstate *t = ts;
	struct mb_stress_step st;
	mb_stress_gen_next(t->t.gen, &st);
	struct tdb *d = take_db(t->m, st.db);
	/* the generator draws in [0, KEY_SCALE): scale to this database's keys */
	st.target =
	    (uint64_t)(((unsigned __int128)st.target * (d->keys * MB_TXN_STRIDE)) / KEY_SCALE);
	int rc = t_txn(t, d, &st);
	if (rc)
		t_fail(t, d, rc);
	pthread_mutex_unlock(&d->mu);
	if (rc)
		return rc;
	mb_stress_slot_txn(t->t.slot);
	return 0;
}

void mb_txnmode_worker(struct mb_txnmode *m, struct mb_stress_worker *out)
{
	out->ctx = m;
	out->thread_start = t_start;
	out->step = t_step;
	out->thread_stop = t_stop;
	out->aux_step = NULL;
}
