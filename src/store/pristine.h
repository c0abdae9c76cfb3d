/* pristine.h: the pristine initialised state of a data directory, and its
 * restore before each run, so that runs on one data directory compare.
 *
 * The state is the storage groups' database files (DATA/sgN/dbMM.mdb) and
 * their transaction logs (segments and checkpoint file, in DATA/sgN/log or
 * LOGDIR/sgN), plus DATA/init.state.  A copy of it lives in DATA/pristine/
 * (sgN/ and sgN.log/ with the same file names, and MANIFEST: the init
 * state, then one "size path" line per file).  Saving links each file
 * into the copy (a hard link: nothing written; mb_io_open unshares a
 * linked file before it opens it for writing, so the copy keeps what was
 * saved), or copies it when DATA's logs live on another file system.
 * Restoring copies each file with the
 * FICLONE ioctl (a reflink: no data copied) where the file system offers
 * it, else with copy_file_range, else read/write; each copy is synced, so
 * no write-back of the copy runs during the measured run.
 *
 *   (no copy) --save--> SAVED --restore--> DATA == copy --run--> DATA changed
 *                         ^                                  |
 *                         +------------- restore ------------+
 *   `mailbench init` drops the copy (mb_pristine_drop) before it writes and
 *   saves a new one when it completes, so a copy never outlives the
 *   initialisation it was taken from; a run that finds none (a directory
 *   initialised before copies existed) saves one first; a copy whose
 *   MANIFEST names another init state is stale and is replaced.
 *
 * The fingerprint is FNV-1a 64 over the init state and every (path, size)
 * of the copy: two runs that report the same fingerprint and bytes started
 * from the same initialisation.  Not thread-safe; the store must not run.
 */
#ifndef MB_STORE_PRISTINE_H
#define MB_STORE_PRISTINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mb_pristine_info {
	bool saved;	     /* the copy was (re)made now from DATA */
	bool restored;	     /* DATA was restored from the copy */
	int links;	     /* files saved as hard links (unshared at first write) */
	int reflinks;	     /* files cloned with FICLONE */
	int copies;	     /* files copied byte by byte */
	uint64_t bytes;	     /* bytes of the state (the copy) */
	uint64_t bytes_data; /* bytes of the same files in DATA after this call */
	uint64_t bytes_db;   /* of those, the database files' (the data a cache holds) */
	char fingerprint[17];
};

/* Make DATA's state match the pristine copy: save the copy when there is
 * none (or it is stale), else restore DATA from it.  MB_ENOTFOUND when DATA
 * is not initialised; err says what failed. */
int mb_pristine_prepare(const char *data, struct mb_pristine_info *out, char *err, size_t errlen);
/* Measure DATA's state as it is (no copy made or used): bytes_data and a
 * fingerprint of the current files. */
int mb_pristine_measure(const char *data, struct mb_pristine_info *out, char *err, size_t errlen);
/* Remove DATA/pristine (init calls this before writing). */
int mb_pristine_drop(const char *data);

#endif
