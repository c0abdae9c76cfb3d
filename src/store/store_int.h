/* store_int.h: internals shared by the store server's files (server.c,
 * net.c, queue.c, workers.c, groups.c, stats.c, control.c) and its
 * operation executor (ops.c and op_*.c, ops_int.h).  Not for other parts.
 *
 * Ownership: a connection and its session belong to the loop thread, EXCEPT
 * while one of its requests is in flight: then the request's current
 * database owner thread may read and write the session (handles, logon
 * state); the loop thread touches neither until the request comes back.
 * A request is in exactly one place at a time: a worker's queue, being
 * executed by that worker, waiting for commits, or in the done queue.
 * pending counts 1 (execution) + outstanding async commits; whoever drops
 * it to zero hands the request to the loop thread.
 */
#ifndef MB_STORE_STORE_INT_H
#define MB_STORE_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "core/topology.h"
#include "db/db.h"
#include "proto/proto.h"
#include "store/schema.h"
#include "store/store.h"

#define MB_MAX_HANDLES 64
/* Bytes sessions' handles hold (drafts' property values and attachments,
 * open streams, FastTransfer and ICS states): the store's sum and the
 * limits per session and across the store (--held-session-mb,
 * --held-store-mb); an operation that would take either past its limit
 * fails with MB_EFULL and changes nothing (handles.c, "held bytes"). */
struct held_budget {
	atomic_size_t total;
	size_t session_max, store_max;
	atomic_uint_fast64_t refused; /* operations refused for held bytes */
};
/* The free-space reserve (reserve.c): below min_free bytes free in the
 * file systems of paths, operations that add content fail with
 * MB_ELOWDISK. */
struct disk_reserve {
	uint64_t min_free;	 /* bytes; 0: off */
	pthread_mutex_t look_mu; /* one look at a time */
	int npaths;
	char paths[2][4096];		 /* the data directory; the log directory */
	atomic_uint_fast64_t free;	 /* the least free bytes among them, last look */
	atomic_uint_fast64_t pending;	 /* the cache's dirty bytes then (not on disk yet) */
	atomic_uint_fast64_t checked_ns; /* when looked */
	atomic_uint_fast64_t refused;	 /* operations refused */
	atomic_bool known, low;		 /* free space known; below the reserve */
};
#define MB_REQ_ARENA (24u << 20)
#define MB_REPLY_BUDGET (3u << 20) /* reply payload bytes we allow ourselves */

enum handle_kind {
	H_FREE = 0,
	H_CONTENTS,
	H_HIERARCHY,
	H_MESSAGE,
	H_DRAFT,
	H_ATTACH_TABLE, /* attachments of a stored message (mid, cursor num) */
	H_ATTACH,	/* an attachment of a stored message (mid, num) */
	H_ATTACH_DRAFT, /* a new attachment of the draft handle `parent` */
	H_STREAM,	/* a property's bytes being read (data, len, pos) */
	H_AB_TABLE,	/* the global address list (cursor pos) */
	H_NOTIFY,	/* a notification subscription on folder */
	H_SYNC,		/* a download or upload context on folder (ICS state, sync) */
	H_FTSTATE,	/* a FastTransfer download of a checkpoint state (data, len, pos) */
};

/* The ICS state properties an upload context keeps (index of cstate). */
enum { MB_CS_SEEN, MB_CS_SEEN_FAI, MB_CS_READ, MB_CS_COUNT };

/* An attachment saved into a draft (owned). */
struct draft_attach {
	uint8_t kind;
	char *name;
	uint8_t *data;
	uint32_t len;
};

struct draft_prop {
	struct mb_prop p; /* bytes owned (malloc'd) */
};

struct handle {
	uint32_t id;
	uint8_t kind;
	uint32_t folder; /* local folder number */
	uint64_t mid;	 /* H_MESSAGE */
	uint16_t ncols;
	uint32_t cols[MB_PROTO_MAX_PROPS];
	struct mb_scan_pos pos; /* contents cursor */
	uint32_t hier_after;	/* hierarchy cursor */
	bool hier_done;
	uint16_t nprops; /* drafts and changes to open messages */
	struct draft_prop *props;
	uint16_t num;	    /* H_ATTACH: its number; H_ATTACH_TABLE: cursor */
	uint32_t parent;    /* H_ATTACH_DRAFT: the draft's handle id */
	uint8_t *data;	    /* H_STREAM, H_FTSTATE: the bytes (owned) */
	uint32_t len, spos; /* H_STREAM, H_FTSTATE: size, read position; H_AB_TABLE: spos */
	uint16_t natt;	    /* H_DRAFT: saved attachments */
	struct draft_attach *att;
	/* H_SYNC: the state property being uploaded (0: none; its bytes in
	 * data, len declared, spos received), the properties uploaded
	 * (MB_SYNC_HAS_* bits) and the context's CnsetSeen high mark */
	uint32_t state_tag;
	uint8_t state_has;
	bool sync_hier; /* a hierarchy download context (MB_SC_F_HIERARCHY) */
	bool sync_coll; /* an upload context (SyncOpenCollector) */
	uint64_t seen_cn;
	/* upload context: CnsetSeen, CnsetSeenFAI and CnsetRead as uploaded,
	 * then with the change numbers of the changes imported (owned) */
	uint8_t *cstate[MB_CS_COUNT];
	uint32_t cstate_len[MB_CS_COUNT];
	/* contents download context: IdsetGiven as uploaded, decoded once
	 * (ascending ranges, owned), which tells the items new to the client
	 * from changes to ones it holds; NULL until it is uploaded */
	struct mb_idrange *given;
	uint32_t ngiven;
	/* contents download context: the FastTransfer stream of the whole
	 * items of its last SyncDownload with MB_SD_F_CONTENT (their bodies
	 * and attachments, owned: ccap bytes allocated), clen bytes, read up
	 * to cpos by FastTransferGetBuffer */
	uint8_t *content;
	uint32_t clen, cpos, ccap;
};

struct session {
	bool logged_on;
	int user; /* topology index */
	uint32_t mailbox;
	int db;		/* home database, 1-based */
	uint32_t flags; /* granted MB_LOGON_F_* */
	bool nonce_valid;
	uint8_t nonce[MB_NONCE_LEN];
	struct handle **handles;    /* MB_MAX_HANDLES slots, allocated on first use */
	size_t held;		    /* bytes its handles hold, as last accounted */
	struct held_budget *budget; /* the store's (NULL: no limit, no sum) */
};

struct submit_state {
	int ndb;   /* databases with recipients */
	int *dbs;  /* their numbers */
	int phase; /* 0: saved, submitted; k <= ndb: delivery to dbs[k-1]; ndb+1: sent */
	int nrcpt;
	int *rcpt;   /* user indices, deduplicated */
	bool *named; /* rcpt[i] named as a recipient (else reached through a list) */
	uint64_t sent_mid;
	bool delete_after;	/* PidTagDeleteAfterSubmit: the last phase deletes it */
	struct mb_delivery *dl; /* nrcpt */
	int ndl;
	/* the message to deliver (copied into the request arena) */
	struct mb_prop *props;
	uint16_t nprops;
	const uint8_t *body;
	uint32_t body_len;
	struct mb_attach_in *attach; /* in the request arena */
	uint16_t nattach;
};

struct mb_event_out {
	uint32_t mailbox;
	struct mb_event ev;
};

struct conn;
struct mb_store;

struct req {
	struct req *next;
	struct mb_store *st;
	struct conn *conn;
	struct session *sess;
	uint8_t *payload; /* decompressed request payload (owned) */
	size_t payload_len;
	size_t wire_in; /* bytes of the request frame on the wire */
	struct mb_arena *arena;
	struct mb_request rq;
	struct mb_op_reply *res;
	uint64_t *op_ns; /* per-op execution time */
	int next_op;
	int cur_db;
	atomic_int pending;
	atomic_int commit_err;
	int delay_ms;
	int frame_err; /* non-zero: answer with an ERROR frame */
	uint64_t t_recv;
	size_t reply_budget;
	struct submit_state *sub;
	struct mb_event_out *events;
	int nevents, cap_events;
	uv_timer_t delay_timer;
};

/* One owner thread per database. */
struct dbw {
	struct mb_store *st;
	int index; /* database number, 1-based */
	int sg;
	struct mb_db *db;
	struct mb_schema *schema;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct req *head, *tail;
	bool stop;
	struct mb_buf *tmp;
	struct mb_val val, val2;
	int offline_rc; /* db and schema NULL: why (its group could not be
			   recovered); written only while workers are paused */
};

/* Counters updated from any thread. */
struct store_counters {
	atomic_uint_fast64_t deliveries_db;   /* once per message per database */
	atomic_uint_fast64_t deliveries_rcpt; /* once per recipient */
	atomic_uint_fast64_t commits;
	atomic_uint_fast64_t commit_errors;
};

struct mb_store {
	struct mb_store_opts o;
	struct mb_topology *topo;
	struct mb_io *io;
	struct mb_fault *fault;	 /* every engine I/O goes through it (run --fault) */
	uint8_t salt_secret[32]; /* keys the salts of unknown user names */
	struct mb_cache *cache;
	int nsg;
	struct mb_sg **sgs;
	int ndb;
	struct dbw *w; /* ndb workers, w[i].index = i + 1 */
	struct store_counters c;
	/* done queue (workers -> loop) */
	pthread_mutex_t done_mu;
	struct req *done_head, *done_tail;
	/* pausing every worker between requests (storage-group recovery) */
	pthread_mutex_t pause_mu;
	pthread_cond_t pause_cv;
	atomic_bool pause;
	int paused;
	struct held_budget held; /* what all sessions' handles hold (handles.c) */
	struct disk_reserve reserve;
	/* the rest belongs to the loop thread: see loop.h */
	void *loop_state;
};

/* reserve.c: set up (after the I/O layer and topology; look_mu is made and
 * destroyed with the store) and look at the free space once; look again now (the stats and control
 * threads); 0, or MB_ELOWDISK when the disk is below the reserve or bytes would take it there
 * (counts the refusal; looks again when the last look is older than 100 ms; 0 bytes always pass);
 * what op may add, in bytes (an upper bound; session s's handles say what a save holds; a
 * submission is checked by mb__submit_begin once its recipients are resolved). */
void mb__reserve_init(struct mb_store *st);
void mb__reserve_look(struct mb_store *st);
int mb__reserve_check(struct mb_store *st, uint64_t bytes);
uint64_t mb__op_adds_content(struct session *s, const struct mb_op *op);

/* ops.c: run a request's operations on worker w from req->next_op until it
 * is finished (returns 0: the caller releases the execution token) or must
 * move to another database (returns that database's number: the caller
 * queues it there).  It never queues a request itself. */
int mb_ops_execute(struct dbw *w, struct req *r);
/* Free a session's handles (loop thread, or the owner of its request). */
void mb_session_clear(struct session *s);
/* queue.c: queue a request on database db's worker (any thread). */
void mb_store_enqueue(struct mb_store *st, int db, struct req *r);
/* queue.c: drop one reference of pending; at zero the request goes to the
 * loop's done queue. */
void mb_req_release(struct req *r);

#endif
