/* iomode.c: I/O mode of the storage test and its test files (see iomode.h).
 * Invariants: every transfer goes through the engine's I/O layer (mb_io);
 * a page on disk always carries a valid header and CRC (the engine's own
 * mb_page_crc, db.h) unless the storage lost or corrupted it; ready.json is written (atomically)
 * only after every file is complete and synced. */
#include "stress/iomode.h"
#include "core/content.h"
#include "core/error.h"
#include "db/db.h"
#include "db/io.h"
#include "stress/files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define PAGE_MAGIC 0x5053424dU /* "MBSP" */
#define HDR 32
#define POOL_BYTES (256u << 10)
#define REFILL 64 /* writes between two copies of new text into a write buffer */
#define BLK MB_IO_ALIGN
#define MAX_BLOCKS 16 /* pages up to 64 KiB */

struct mb_iomode {
	struct mb_iomode_cfg cfg;
	char db_dir[4096];
	char log_dir[4096];
	struct mb_io *io;
	struct mb_file *db[MB_IOMODE_MAX_DBS];
	char db_path[MB_IOMODE_MAX_DBS][4200];
	struct mb_file *log;
	char log_path[4200];
	bool reused;
	int lock_fd;	  /* flock on DIR/LOCK: one run per set of files */
	uint64_t log_off; /* next log write (aux thread only) */
};

struct wstate {
	struct mb_stress_thread t; /* slot, rng, generator (not the log writer's), text pool */
	struct mb_iomode *m;
	unsigned char *buf;  /* one page, aligned: reads (and log writes) */
	unsigned char *wbuf; /* one page, aligned: database writes */
	uint64_t gen_no;
};

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static uint64_t get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static void page_seal(unsigned char *p, unsigned page_size, unsigned file_no, uint64_t page_no,
		      uint64_t seed)
{
	put32(p + 4, PAGE_MAGIC);
	put64(p + 8, page_no);
	put32(p + 16, file_no);
	put32(p + 20, page_size);
	put64(p + 24, seed);
	put32(p, mb_page_crc(p, page_size));
}

void mb_iomode_page_fill(void *page, unsigned page_size, unsigned file_no, uint64_t page_no,
			 uint64_t seed)
{
	unsigned char *p = page;
	mb_content_fill(seed, (char *)p + HDR, page_size - HDR);
	page_seal(p, page_size, file_no, page_no, seed);
}

static int check(const unsigned char *p, unsigned page_size, unsigned file_no, uint64_t page_no,
		 bool crc, char *why, size_t len)
{
	const char *bad = NULL;
	if (crc && mb_page_crc(p, page_size) != get32(p))
		bad = "page checksum mismatch";
	else if (get32(p + 4) != PAGE_MAGIC)
		bad = "bad page magic";
	else if (get32(p + 20) != page_size)
		bad = "page size in the page header differs";
	else if (get64(p + 8) != page_no)
		bad = "page number in the page header differs (misplaced write)";
	else if (get32(p + 16) != file_no)
		bad = "file number in the page header differs";
	if (!bad)
		return 0;
	if (why && len)
		snprintf(why, len, "%s", bad);
	return MB_ECORRUPT;
}

int mb_iomode_page_check(const void *page, unsigned page_size, unsigned file_no, uint64_t page_no,
			 char *why, size_t len)
{
	return check(page, page_size, file_no, page_no, true, why, len);
}

/* mb_iomode_page_check without the CRC: magic, page size, page and file number only. */
static int mb_iomode_page_check_header(const void *page, unsigned page_size, unsigned file_no,
				       uint64_t page_no, char *why, size_t len)
{
	return check(page, page_size, file_no, page_no, false, why, len);
}

static bool marker_matches(const struct mb_iomode *m)
{
	json_t *j = mb_stress_marker_load(m->db_dir);
	if (!j)
		return false;
	bool ok =
	    json_integer_value(json_object_get(j, "page_size")) == (json_int_t)m->cfg.page_size &&
	    json_integer_value(json_object_get(j, "databases")) == (json_int_t)m->cfg.databases &&
	    json_integer_value(json_object_get(j, "pages_per_db")) ==
		(json_int_t)m->cfg.pages_per_db &&
	    json_integer_value(json_object_get(j, "log_bytes")) == (json_int_t)m->cfg.log_bytes &&
	    json_is_string(json_object_get(j, "log_path")) &&
	    !strcmp(json_string_value(json_object_get(j, "log_path")), m->log_path);
	json_decref(j);
	return ok;
}

static int write_marker(struct mb_iomode *m)
{
	return mb_stress_marker_write(
	    m->io, m->db_dir,
	    json_pack("{s:i,s:i,s:I,s:I,s:s}", "page_size", (int)m->cfg.page_size, "databases",
		      (int)m->cfg.databases, "pages_per_db", (json_int_t)m->cfg.pages_per_db,
		      "log_bytes", (json_int_t)m->cfg.log_bytes, "log_path", m->log_path));
}

/* Fill a file: pages of text, each unique, in 1 MiB writes. */
static int create_files(struct mb_iomode *m, char *msg, size_t len)
{
	const unsigned ps = m->cfg.page_size;
	const size_t chunk = (size_t)ps * (ps >= (1u << 20) ? 1 : (1u << 20) / ps);
	unsigned char *buf = mb_io_alloc(chunk);
	if (!buf)
		return MB_ENOMEM;
	uint64_t total = (uint64_t)m->cfg.databases * m->cfg.pages_per_db * ps + m->cfg.log_bytes;
	uint64_t done = 0;
	int rc = 0;
	for (unsigned d = 0; d < m->cfg.databases && !rc; d++) {
		struct mb_file *f = m->db[d];
		if ((rc = mb_file_truncate(f, 0)))
			break;
		uint64_t bytes = m->cfg.pages_per_db * ps;
		for (uint64_t off = 0; off < bytes && !rc; off += chunk) {
			size_t n = bytes - off < chunk ? (size_t)(bytes - off) : chunk;
			for (size_t o = 0; o < n; o += ps) {
				uint64_t pno = (off + o) / ps;
				mb_iomode_page_fill(buf + o, ps, d + 1, pno,
						    ((uint64_t)(d + 1) << 40) ^ pno);
			}
			rc = mb_file_write(f, buf, n, off);
			if (rc)
				snprintf(msg, len, "%s: writing offset %llu: %s", m->db_path[d],
					 (unsigned long long)off, mb_strerror(rc));
			done += n;
			if ((off / chunk) % 16 == 0 || off + n >= bytes)
				mb_stress_progress(m->cfg.progress, done, total);
		}
		if (!rc && (rc = mb_file_sync(m->db[d], false)))
			snprintf(msg, len, "%s: fsync: %s", m->db_path[d], mb_strerror(rc));
	}
	/* the log: preallocated and written once so that log writes never
	 * extend the file (fdatasync then has no metadata to flush) */
	if (!rc && !(rc = mb_file_truncate(m->log, 0))) {
		for (uint64_t off = 0; off < m->cfg.log_bytes && !rc; off += chunk) {
			size_t n = m->cfg.log_bytes - off < chunk ? (size_t)(m->cfg.log_bytes - off)
								  : chunk;
			mb_content_fill(0x6c6f67ULL ^ off, (char *)buf, n);
			rc = mb_file_write(m->log, buf, n, off);
			if (rc)
				snprintf(msg, len, "%s: writing offset %llu: %s", m->log_path,
					 (unsigned long long)off, mb_strerror(rc));
			done += n;
		}
		mb_stress_progress(m->cfg.progress, total, total);
		if (!rc && (rc = mb_file_sync(m->log, false)))
			snprintf(msg, len, "%s: fsync: %s", m->log_path, mb_strerror(rc));
	}
	mb_io_free(buf);
	if (!rc)
		rc = mb_io_sync_dir(m->io, m->db_dir);
	if (!rc)
		rc = write_marker(m);
	if (rc && !msg[0])
		snprintf(msg, len, "creating the test files in %s: %s", m->db_dir, mb_strerror(rc));
	return rc;
}

static bool files_valid(struct mb_iomode *m)
{
	if (!marker_matches(m))
		return false;
	unsigned ps = m->cfg.page_size;
	unsigned char *buf = mb_io_alloc(ps);
	if (!buf)
		return false;
	bool ok = true;
	for (unsigned d = 0; d < m->cfg.databases && ok; d++) {
		uint64_t sz = 0;
		if (mb_file_size(m->db[d], &sz) || sz != m->cfg.pages_per_db * ps) {
			ok = false;
			break;
		}
		uint64_t last = m->cfg.pages_per_db - 1;
		ok = !mb_file_read(m->db[d], buf, ps, 0) &&
		     !mb_iomode_page_check(buf, ps, d + 1, 0, NULL, 0) &&
		     !mb_file_read(m->db[d], buf, ps, last * ps) &&
		     !mb_iomode_page_check(buf, ps, d + 1, last, NULL, 0);
	}
	uint64_t lsz = 0;
	if (ok && (mb_file_size(m->log, &lsz) || lsz != m->cfg.log_bytes))
		ok = false;
	mb_io_free(buf);
	return ok;
}

void mb_iomode_close(struct mb_iomode *m)
{
	if (!m)
		return;
	for (unsigned d = 0; d < MB_IOMODE_MAX_DBS; d++)
		mb_file_close(m->db[d]);
	mb_file_close(m->log);
	mb_io_destroy(m->io);
	if (m->lock_fd >= 0)
		close(m->lock_fd); /* releases the flock */
	free(m);
}

int mb_iomode_open(const struct mb_iomode_cfg *cfg, struct mb_iomode **out, char *msg, size_t len)
{
	*out = NULL;
	msg[0] = '\0';
	if (cfg->page_size < MB_IO_ALIGN || cfg->page_size % MB_IO_ALIGN ||
	    cfg->page_size > MAX_BLOCKS * BLK || cfg->databases < 1 ||
	    cfg->databases > MB_IOMODE_MAX_DBS || cfg->pages_per_db < 2) {
		snprintf(msg, len, "invalid I/O-mode geometry");
		return MB_EINVAL;
	}
	struct mb_iomode *m = calloc(1, sizeof(*m));
	if (!m)
		return MB_ENOMEM;
	m->cfg = *cfg;
	snprintf(m->db_dir, sizeof(m->db_dir), "%s", cfg->db_dir);
	snprintf(m->log_dir, sizeof(m->log_dir), "%s", cfg->log_dir);
	m->cfg.db_dir = m->db_dir;
	m->cfg.log_dir = m->log_dir;
	if (!m->cfg.log_bytes) {
		uint64_t l = cfg->pages_per_db * cfg->page_size * cfg->databases / 16;
		l = l < MB_IOMODE_LOG_MIN   ? MB_IOMODE_LOG_MIN
		    : l > MB_IOMODE_LOG_MAX ? MB_IOMODE_LOG_MAX
					    : l;
		m->cfg.log_bytes = l / MB_IOMODE_LOG_IO * MB_IOMODE_LOG_IO;
	}
	m->lock_fd = -1;
	int rc = mb_io_create(cfg->vfs, &m->io);
	if (rc)
		goto fail;
	if ((rc = mb_stress_mkdirs(m->db_dir)) || (rc = mb_stress_mkdirs(m->log_dir))) {
		snprintf(msg, len, "creating %s or %s: %s", m->db_dir, m->log_dir, mb_strerror(rc));
		goto fail;
	}
	char lock[4200];
	snprintf(lock, sizeof(lock), "%s/LOCK", m->db_dir);
	m->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (m->lock_fd < 0 || flock(m->lock_fd, LOCK_EX | LOCK_NB)) {
		rc = m->lock_fd < 0 ? mb_from_errno(errno) : MB_EBUSY;
		snprintf(msg, len, "%s: %s", m->db_dir,
			 rc == MB_EBUSY ? "in use by another storage test" : mb_strerror(rc));
		goto fail;
	}
	for (unsigned d = 0; d < cfg->databases; d++) {
		snprintf(m->db_path[d], sizeof(m->db_path[d]), "%s/db%02u.dat", m->db_dir, d + 1);
		rc = mb_io_open(m->io, m->db_path[d], MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_DB,
				&m->db[d]);
		if (rc) {
			snprintf(msg, len, "%s: %s", m->db_path[d], mb_strerror(rc));
			goto fail;
		}
	}
	snprintf(m->log_path, sizeof(m->log_path), "%s/log.dat", m->log_dir);
	rc = mb_io_open(m->io, m->log_path, MB_IO_CREATE | MB_IO_DIRECT, MB_FILE_LOG, &m->log);
	if (rc) {
		snprintf(msg, len, "%s: %s", m->log_path, mb_strerror(rc));
		goto fail;
	}
	m->reused = files_valid(m);
	if (!m->reused) {
		char marker[4200];
		snprintf(marker, sizeof(marker), "%s/ready.json", m->db_dir);
		unlink(marker);
		if ((rc = create_files(m, msg, len)))
			goto fail;
	}
	*out = m;
	return 0;
fail:
	if (!msg[0])
		snprintf(msg, len, "opening the I/O-mode test files: %s", mb_strerror(rc));
	mb_iomode_close(m);
	return rc;
}

bool mb_iomode_reused(const struct mb_iomode *m) { return m->reused; }

/* ---- the worker ---- */

/* Stamp every 4 KiB block of wbuf (8 bytes after the header in block 0,
 * at the start of the others) and seal the page with the engine's page
 * checksum over the whole page (ISA-L: well under a microsecond). */
static void seal_stamped(struct wstate *w, unsigned file_no, uint64_t page_no, uint64_t stamp)
{
	unsigned char *p = w->wbuf;
	const unsigned ps = w->m->cfg.page_size;
	put64(p + HDR, stamp);
	for (unsigned b = 1; b < ps / BLK; b++)
		put64(p + b * BLK, stamp + b);
	page_seal(p, ps, file_no, page_no, stamp);
}

static void w_stop(void *ts)
{
	struct wstate *w = ts;
	mb_stress_thread_fini(&w->t);
	mb_io_free(w->buf);
	mb_io_free(w->wbuf);
	free(w);
}

static int w_start(void *ctx, int idx, struct mb_stress_slot *slot, void **ts)
{
	struct mb_iomode *m = ctx;
	struct wstate *w = calloc(1, sizeof(*w));
	if (!w)
		return MB_ENOMEM;
	w->m = m;
	struct mb_stress_mix mix = {.read_pct = m->cfg.read_pct};
	int rc =
	    mb_stress_thread_init(&w->t, idx, slot, idx < 0 ? NULL : &mix, true, m->cfg.databases,
				  m->cfg.pages_per_db, POOL_BYTES + m->cfg.page_size);
	w->buf = mb_io_alloc(idx < 0 ? MB_IOMODE_LOG_IO : m->cfg.page_size);
	w->wbuf = idx < 0 ? NULL : mb_io_alloc(m->cfg.page_size);
	if (!rc && (!w->buf || (idx >= 0 && !w->wbuf)))
		rc = MB_ENOMEM;
	if (rc) {
		w_stop(w);
		return rc;
	}
	*ts = w;
	return 0;
}

static int w_step(void *ts)
{
	struct wstate *w = ts;
	struct mb_iomode *m = w->m;
	const unsigned ps = m->cfg.page_size;
	struct mb_stress_step st;
	mb_stress_gen_next(w->t.gen, &st);
	struct mb_file *f = m->db[st.db];
	uint64_t off = st.target * ps;
	if (st.op == MB_SOP_READ) {
		uint64_t t0 = mb_io_now_ns();
		int rc = mb_file_read(f, w->buf, ps, off);
		uint64_t t1 = mb_io_now_ns();
		if (rc) {
			mb_stress_slot_error(w->t.slot, m->db_path[st.db], off, rc,
					     "database read failed");
			return rc;
		}
		mb_stress_slot_record(w->t.slot, MB_XFER_DB_READ, t1 - t0, ps);
		char why[96];
		if (mb_iomode_page_check_header(w->buf, ps, st.db + 1, st.target, why,
						sizeof(why))) {
			mb_stress_slot_error(w->t.slot, m->db_path[st.db], off, MB_ECORRUPT, why);
			return MB_ECORRUPT;
		}
		return 0;
	}
	/* a write: new contents, sealed.  The buffer takes a fresh slice of
	 * the text pool every REFILL writes; in between, every 4 KiB block
	 * gets a new 8-byte stamp, so no two written blocks are alike (no
	 * deduplication can flatter the result) at a fraction of the copy. */
	if (w->gen_no++ % REFILL == 0) {
		size_t from = (size_t)mb_rng_below(&w->t.rng, POOL_BYTES);
		memcpy(w->wbuf + HDR, w->t.pool + from, ps - HDR);
	}
	uint64_t stamp = mb_rng_next(&w->t.rng);
	seal_stamped(w, st.db + 1, st.target, stamp);
	uint64_t t0 = mb_io_now_ns();
	int rc = mb_file_write(f, w->wbuf, ps, off);
	uint64_t t1 = mb_io_now_ns();
	if (rc) {
		mb_stress_slot_error(w->t.slot, m->db_path[st.db], off, rc,
				     "database write failed");
		return rc;
	}
	mb_stress_slot_record(w->t.slot, MB_XFER_DB_WRITE, t1 - t0, ps);
	return 0;
}

/* The log writer: sequential writes, each made durable with fdatasync. */
static int w_log_step(void *ts)
{
	struct wstate *w = ts;
	struct mb_iomode *m = w->m;
	uint64_t off = m->log_off;
	size_t from = (size_t)mb_rng_below(&w->t.rng, POOL_BYTES);
	memcpy(w->buf, w->t.pool + from, MB_IOMODE_LOG_IO);
	uint64_t t0 = mb_io_now_ns();
	int rc = mb_file_write(m->log, w->buf, MB_IOMODE_LOG_IO, off);
	if (!rc)
		rc = mb_file_sync(m->log, true);
	uint64_t t1 = mb_io_now_ns();
	if (rc) {
		mb_stress_slot_error(w->t.slot, m->log_path, off, rc, "log write failed");
		return rc;
	}
	mb_stress_slot_record(w->t.slot, MB_XFER_LOG_WRITE, t1 - t0, MB_IOMODE_LOG_IO);
	off += MB_IOMODE_LOG_IO;
	m->log_off = off >= m->cfg.log_bytes ? 0 : off;
	return 0;
}

void mb_iomode_worker(struct mb_iomode *m, struct mb_stress_worker *out)
{
	out->ctx = m;
	out->thread_start = w_start;
	out->step = w_step;
	out->thread_stop = w_stop;
	out->aux_step = w_log_step;
}

int mb_iomode_verify_all(struct mb_iomode *m, struct mb_stress_slot *slot, uint64_t *bytes)
{
	const unsigned ps = m->cfg.page_size;
	const size_t chunk = (size_t)ps * (ps >= (1u << 20) ? 1 : (1u << 20) / ps);
	unsigned char *buf = mb_io_alloc(chunk);
	*bytes = 0;
	if (!buf)
		return MB_ENOMEM;
	int first = 0;
	for (unsigned d = 0; d < m->cfg.databases; d++) {
		uint64_t size = m->cfg.pages_per_db * ps;
		for (uint64_t off = 0; off < size; off += chunk) {
			size_t n = size - off < chunk ? (size_t)(size - off) : chunk;
			uint64_t t0 = mb_io_now_ns();
			int rc = mb_file_read(m->db[d], buf, n, off);
			uint64_t t1 = mb_io_now_ns();
			if (rc) {
				mb_stress_slot_error(slot, m->db_path[d], off, rc,
						     "database read failed");
				if (!first)
					first = rc;
				continue;
			}
			mb_stress_slot_record(slot, MB_XFER_DB_READ, t1 - t0, n);
			*bytes += n;
			for (size_t o = 0; o < n; o += ps) {
				char why[96];
				uint64_t pno = (off + o) / ps;
				if (mb_iomode_page_check(buf + o, ps, d + 1, pno, why,
							 sizeof(why))) {
					mb_stress_slot_error(slot, m->db_path[d], off + o,
							     MB_ECORRUPT, why);
					if (!first)
						first = MB_ECORRUPT;
				}
			}
		}
	}
	mb_io_free(buf);
	return first;
}
