/* ackcheck.h: the no-data-loss oracle: check a data directory against the
 * load engine's ack log (`mailbench check --data DIR --ack-log FILE`).
 * It lives with the store because it reads the store's databases: it
 * applies where the target was the embedded store (driver mbstore).
 *
 * Ack log lines (mailbench load --ack-log): "+ MAILBOX MID" the store
 * acknowledged creating message MID in MAILBOX; "- MAILBOX MID" it
 * acknowledged deleting it; "~ MAILBOX MID" a delete was asked but its
 * reply had not arrived yet (so the message may or may not exist).
 * Message ids are never reused, so order does not matter:
 *   a '-' line                      -> the message must be absent;
 *   a '+' line, no '-' and no '~'   -> the message must be present;
 *   a '~' line without '-'          -> either is fine (in flight).
 * The data directory is opened read-mostly like `mailbench check` does
 * (each storage group's log is replayed); the store must not be running.
 */
#ifndef MB_STORE_ACKCHECK_H
#define MB_STORE_ACKCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "core/topology.h"
#include "store/schema.h"

struct mb_ackcheck_report {
	uint64_t lines;		  /* ack log lines read */
	uint64_t must_exist;	  /* acknowledged creates, not deleted */
	uint64_t must_be_gone;	  /* acknowledged deletes */
	uint64_t in_flight;	  /* deletes asked, never acknowledged */
	uint64_t missing;	  /* acknowledged, not deleted, but absent: data loss */
	uint64_t resurrected;	  /* acknowledged deleted, but present */
	uint64_t unknown_mailbox; /* mailbox not in the topology */
	char first_problem[512];
};

/* Problems are passed to cb (one line each) as they are found.  Returns 0
 * when the check ran (look at missing/resurrected/unknown_mailbox for the
 * verdict); MB_ECONFIG when the ack log is malformed (err names file, line
 * and field); MB_E* when the data directory could not be read (err says
 * why). */
int mb_ackcheck_run(const char *data_dir, const char *ack_log,
		    void (*cb)(void *arg, const char *msg), void *arg,
		    struct mb_ackcheck_report *rep, char *err, size_t errlen);

/* For `mailbench check --data DIR --ack-log FILE`: run the check against
 * DIR's topology as the command read it (NULL: topo_err says why it could
 * not be), print each problem and a one-line verdict (problems on stderr,
 * the verdict on stdout), and return the exit code: 0 every acknowledged
 * write is as acknowledged, 1 data lost or resurrected, 2 malformed ack log
 * or unreadable topology, 3 the databases could not be read. */
int mb_ackcheck_cmd(const char *data_dir, const struct mb_topology *topo, const char *topo_err,
		    const char *ack_log);

/* Open each database of DATA_DIR's topology through the store's schema,
 * one storage group at a time (each group's log replayed, as a mount
 * would), and call fn with where ("DIR/sgN/dbNN.mdb") and the database's
 * number; stops at the first non-zero return.  err says what failed. */
typedef int (*mb_schema_visit)(void *arg, const char *where, int db, struct mb_schema *s, char *err,
			       size_t errlen);
int mb_store_foreach_schema(const char *data_dir, const struct mb_topology *topo,
			    mb_schema_visit fn, void *arg, char *err, size_t errlen);

/* The content check (mb_schema_check_content) of every database of
 * DATA_DIR, whose topology.json topo was read from: problems to cb,
 * counts in rep; 0 when it ran, else MB_E* with err. */
int mb_store_check_content(const char *data_dir, const struct mb_topology *topo,
			   void (*cb)(void *arg, const char *msg), void *arg,
			   struct mb_content_report *rep, char *err, size_t errlen);

#endif
