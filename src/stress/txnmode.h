/* txnmode.h: the storage test's transactions mode (Jetstress's default) and
 * the test types that need the engine: database checksum and soft recovery.
 *
 * The test databases are one storage group of the engine (src/db/db.h) in
 * DIR/stress/ (db01.mdb ...; log in DIR/stress/log or LOGDIR/stress), each
 * holding a B+tree "records" of text values (512..3584 bytes) under keys
 * spaced MB_TXN_STRIDE apart, so inserts land between existing keys all
 * over the tree.  They are created once, at the requested size, and reused
 * when ready.json matches.  The group runs with a deliberately small
 * database cache so that the work reaches the disk.
 *
 * Each worker thread runs the engine's own transactions (insert, replace,
 * delete, seek at the configured mix; most commits lazy, i.e. async, the
 * rest durable), spread over every database like Jetstress's threads.  The
 * engine's model is one thread per database handle at a time: each
 * transaction locks its database's mutex (the generator's random pick, or
 * the next free one, so threads <= N never wait for each other).  The I/O figures are the engine's
 * own: the I/O layer's per-kind histograms (database reads and writes) and the group's log
 * write+fdatasync histogram, drained once per second.
 */
#ifndef MB_STRESS_TXNMODE_H
#define MB_STRESS_TXNMODE_H

#include <stdbool.h>
#include <stdint.h>

#include "stress/runner.h"

struct mb_vfs;

#define MB_TXN_STRIDE 16
#define MB_TXN_MAX_DBS 64

struct mb_txnmode_cfg {
	const char *dir;     /* the group's directory (DIR/stress) */
	const char *log_dir; /* NULL: DIR/stress/log */
	unsigned page_size;
	unsigned databases;
	uint64_t db_bytes; /* target size of each database */
	uint32_t cache_mb; /* the deliberately small database cache */
	struct mb_stress_mix mix;
	bool progress;
	const struct mb_vfs *vfs; /* NULL: the real POSIX vfs */
};

struct mb_txnmode;
/* Open the group (running recovery), creating and filling the databases
 * when they are not there yet or do not match. */
int mb_txnmode_open(const struct mb_txnmode_cfg *cfg, struct mb_txnmode **out, char *msg,
		    size_t len);
/* Waits for pending commits, closes the databases and the group. */
int mb_txnmode_close(struct mb_txnmode *m);
bool mb_txnmode_reused(const struct mb_txnmode *m);
/* The first failed transfer the engine issued (file, offset or UINT64_MAX
 * for a sync, MB_E* code, "read failed"/...); false when none. */
bool mb_txnmode_io_error(struct mb_txnmode *m, char *file, size_t flen, uint64_t *off, int *code,
			 char *what, size_t wlen);
/* The worker for mb_stress_run_phase; make the accountant read the
 * engine's counters (call once, before the first phase). */
int mb_txnmode_attach(struct mb_txnmode *m, struct mb_stress_acct *acct);
void mb_txnmode_worker(struct mb_txnmode *m, struct mb_stress_worker *out);
/* The database cache in use (MiB), its page requests so far and the
 * dirty pages now. */
void mb_txnmode_cache_info(struct mb_txnmode *m, double *cache_mb, uint64_t *hits, uint64_t *misses,
			   uint64_t *dirty);

/* Checksum pass: check every database of the group through the engine
 * (page checksums and structure).  *pages, *bytes, *seconds; problems go to
 * the slot as errors (file and page in the message). */
int mb_txnmode_checksum(struct mb_txnmode *m, struct mb_stress_slot *slot, uint64_t *pages,
			uint64_t *bytes, double *seconds);

struct mb_softrec {
	unsigned segments;  /* log segments written without a checkpoint */
	uint64_t log_bytes; /* bytes of log to replay */
	uint64_t records;   /* log records replayed */
	double generate_s;  /* time to write them */
	double replay_s;    /* time of the recovery (group open) */
	double segments_per_s, mb_per_s;
};
/* Soft recovery: a child process writes `segments` log segments with
 * `threads` transaction threads and automatic checkpoints off, then exits
 * without closing the group (a crash as far as the log is concerned); this
 * process then opens the group and times the replay.  Call it with no
 * group open and no other threads running (it forks). */
int mb_txnmode_soft_recovery(const struct mb_txnmode_cfg *cfg, int threads, unsigned segments,
			     struct mb_softrec *out, char *msg, size_t len);

#endif
