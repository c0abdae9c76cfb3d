/* iomode.h: the storage test's I/O mode and its test files.
 *
 * The I/O mode issues the storage test's access pattern directly through
 * the engine's I/O layer (src/db/io.h, files opened MB_IO_DIRECT): each
 * worker thread does random page reads and writes over the database files
 * at the configured read percentage and page size, and one auxiliary
 * thread writes the log sequentially, each write followed by fdatasync.
 *
 * Test files live in DIR/stress/io/ (db01.dat ...) and LOGDIR/stress/io/
 * (log.dat); a marker (ready.json) written last says they are complete, so
 * a run reuses them only when the marker matches the requested geometry
 * and the files have the right size.  Every page is self-describing: a
 * CRC-32 over bytes 4..size computed by the engine's page checksum
 * (mb_page_crc, db/db.h: ISA-L, the zlib polynomial, the same value the
 * earlier zlib code stored, so files made before stay valid), magic, page
 * size, page number, file number.
 * Contents are generated English-like text (core/content.h), different on
 * every page, and every write makes each 4 KiB block unique.  During a
 * performance run every read checks the page header (a misdirected, lost
 * or zeroed page) but not the CRC, so that the read path does no more
 * work than fio's equivalent job, which checks nothing; every write
 * seals its page with the CRC, and the checksum type
 * (mb_iomode_verify_all) verifies the CRC of every page.
 * A failed transfer or a mismatch is recorded with the file and offset.
 */
#ifndef MB_STRESS_IOMODE_H
#define MB_STRESS_IOMODE_H

#include <stdbool.h>
#include <stdint.h>

#include "stress/runner.h"

struct mb_vfs;

#define MB_IOMODE_MAX_DBS 64
#define MB_IOMODE_LOG_IO 4096		/* bytes per log write */
#define MB_IOMODE_LOG_MAX (64ull << 20) /* the log file wraps at this size... */
#define MB_IOMODE_LOG_MIN (4ull << 20)	/* ...or 1/16 of the databases, at least this */

struct mb_iomode_cfg {
	const char *db_dir;  /* where db01.dat ... live (created) */
	const char *log_dir; /* where log.dat lives (created) */
	unsigned page_size;  /* bytes, multiple of 4096 */
	unsigned databases;
	uint64_t pages_per_db;	  /* >= 2 */
	double read_pct;	  /* of database I/Os */
	uint64_t log_bytes;	  /* 0: 1/16 of the databases within [LOG_MIN, LOG_MAX] */
	bool progress;		  /* draw a progress bar on stderr while creating */
	const struct mb_vfs *vfs; /* NULL: the real POSIX vfs */
};

struct mb_iomode;
/* Open (creating or re-creating as needed) the test files. msg gets a
 * sentence on failure. */
int mb_iomode_open(const struct mb_iomode_cfg *cfg, struct mb_iomode **out, char *msg, size_t len);
void mb_iomode_close(struct mb_iomode *m);
/* True when the last open found valid files and reused them. */
bool mb_iomode_reused(const struct mb_iomode *m);
/* The worker to hand to mb_stress_run_phase (valid while m is open). */
void mb_iomode_worker(struct mb_iomode *m, struct mb_stress_worker *out);

/* Read every page of every database file and verify it; errors are
 * recorded in slot.  *bytes gets the bytes read. */
int mb_iomode_verify_all(struct mb_iomode *m, struct mb_stress_slot *slot, uint64_t *bytes);

/* Page format helpers (exposed for the unit test). */
void mb_iomode_page_fill(void *page, unsigned page_size, unsigned file_no, uint64_t page_no,
			 uint64_t seed);
/* 0, or MB_ECORRUPT with a reason in why. */
int mb_iomode_page_check(const void *page, unsigned page_size, unsigned file_no, uint64_t page_no,
			 char *why, size_t len);

#endif
