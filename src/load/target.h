/* target.h: the load engine's target interface: one ops table per driver
 * (the protocol a simulated user speaks to the system under test), like
 * fio's struct ioengine_ops.
 *
 * Split of work.  The engine (engine.c, user.c) owns the loops, timers,
 * the Poisson schedule, ramp-up, connections (TCP connect, retry with
 * exponential backoff, reading, writing), measurement (round trips, action
 * response times, bytes on the wire), self-health (loop lag, saturation)
 * and the ack log.  The behaviour model (behave.h) decides what a user
 * does and emits protocol-neutral steps (struct mb_step).  A driver owns
 * the bytes on the wire: it frames received bytes into messages, encodes
 * each step as requests and decodes the replies into a step result.
 * Drivers live one file each under src/load/drivers/ and are listed in
 * mb_targets[] (drivers.c).
 *
 * A step's life:
 *   engine -> ops->step(u, step, res)   returns 0: done now (res filled),
 *                                       1: in flight, < 0: failed
 *   bytes  -> ops->frame(u, conn, ...)  how long the first whole message is
 *          -> ops->on_message(u, conn, msg, len)
 *                                       the driver decodes; when the step
 *                                       is complete it calls
 *                                       mb_target_step_done(u, res)
 * Server-pushed data (new-mail notifications, IMAP untagged responses)
 * arrives through on_message too, with or without a step in flight; a
 * driver calls mb_target_wake(u) when it changed what the user should do
 * (e.g. its cached-mode replica is dirty), or mb_target_wake_at(u, ns)
 * for later (a download timer).
 *
 * TLS.  The engine owns it too (core/tls.h over the libuv stream): a
 * connection whose cfg->tls[i] is MB_TLS_IMPLICIT handshakes right after
 * TCP connect, and ops->connected() comes only once the session is open
 * (a failed handshake or certificate is a failed connect); frame() and
 * on_message() always see plaintext, mb_target_write() takes plaintext.
 * MB_TLS_STARTTLS: the connection starts plain; the driver sends the
 * protocol's STARTTLS and, on its positive reply, calls
 * mb_target_starttls(); ops->secured() reports the handshake's outcome.
 * Per connection:
 *   TCP CONNECTING -> [TLS HANDSHAKE] -> OPEN (connected) -> CLOSING
 *   OPEN (plain) -> mb_target_starttls -> TLS HANDSHAKE -> OPEN (secured)
 *   CLOSING: close_notify sent when TLS is open, then the socket closed
 *
 * Connections.  A user holds up to ops->conns connections (index 0: the
 * mail connection, opened by the engine before the logon step and whose
 * loss is the user's; 1..: e.g. SMTP submission, opened by the driver with
 * mb_target_connect() and reported through ops->connected()).  Connection
 * i goes to the target's address i (struct mb_target_cfg).
 *
 * Measurement.  A driver names its operations (ops->op_names: "Logon",
 * "QueryRows", or "imap.SELECT", "smtp.DATA"); the engine keeps one
 * round-trip histogram per name ("rpc.<name>" in the stats stream) and a
 * count per name.  mb_target_request() marks a request going out on a
 * connection (its first operation names the histogram, nops operations
 * counted), mb_target_reply() its reply coming back (one request in
 * flight per connection is measured; pipelined requests may be counted
 * with mb_target_count_op()).
 *
 * Invariants: every callback runs on the user's loop thread; a driver
 * never blocks, never touches another shard's users, and frees nothing the
 * engine owns.  After ops->disconnected(u, conn) the connection's bytes are
 * gone; a step in flight when connection 0 is lost ends as failed
 * (MB_ECLOSED) without a call to mb_target_step_done().  Per-user driver
 * state (ops->user_size bytes) is zeroed at creation and lives as long as
 * the user.
 */
#ifndef MB_LOAD_TARGET_H
#define MB_LOAD_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/scenario.h"
#include "core/tls.h"
#include "core/topology.h"
#include "load/loadstats.h"
#include "load/sched.h"

/* ---- what a user does: protocol-neutral steps ------------------------------ */

/* X(ID, name): the step kinds, once (names for docs and errors). */
#define MB_STEP_TABLE(X)                                                                           \
	X(LOGON, "logon")		      /* authenticate; first view */                       \
	X(LOGOFF, "logoff")		      /* end the session */                                \
	X(KEEPALIVE, "keepalive")	      /* keep an idle session open */                      \
	X(SYNC, "sync")			      /* cached mode: download changes */                  \
	X(LIST_FOLDER, "list folder")	      /* a folder's view: first rows */                    \
	X(NEXT_ROWS, "next rows")	      /* the open view's next page */                      \
	X(CLOSE_VIEW, "close view")	      /* release the folder view */                        \
	X(READ, "read message")		      /* open a message (body) */                          \
	X(OPEN_ATTACHMENT, "open attachment") /* item, attachment aux */                           \
	X(MARK_READ, "mark read")                                                                  \
	X(RESOLVE_NAMES, "resolve names") /* recipients against the GAL */                         \
	X(SEND, "send")			  /* new, reply, forward, meeting */                       \
	X(MOVE, "move")			  /* to Deleted Items / a folder */                        \
	X(DELETE, "delete")		  /* hard delete */                                        \
	X(FREEBUSY, "free/busy")                                                                   \
	X(CALENDAR_RANGE, "calendar range")                                                        \
	X(CREATE_APPOINTMENT, "create appointment")                                                \
	X(LIST_CONTACTS, "list contacts")                                                          \
	X(CREATE_CONTACT, "create contact")

enum mb_step_kind {
	MB_STEP_NONE = 0,
#define MB_X_STEP(id, name) MB_STEP_##id,
	MB_STEP_TABLE(MB_X_STEP)
#undef MB_X_STEP
	    MB_STEP_KIND_COUNT
};

/* Folders by role; user folders are MB_FOLDER_USER + i, i < the count the
 * logon step returned (res->count). */
enum mb_folder {
	MB_FOLDER_INBOX = 0,
	MB_FOLDER_DELETED,
	MB_FOLDER_SENT,
	MB_FOLDER_CALENDAR,
	MB_FOLDER_CONTACTS,
	MB_FOLDER_USER, /* first user folder */
};

/* Step flags */
#define MB_STEP_F_MARK_READ 0x01     /* READ: mark it read too */
#define MB_STEP_F_CLOSE_VIEW 0x02    /* MOVE, DELETE: release the folder view after */
#define MB_STEP_F_DELETED_COUNT 0x04 /* LIST_FOLDER: also count Deleted Items */
#define MB_STEP_F_OPEN_FOLDER 0x08   /* CALENDAR_RANGE: open the folder first */
#define MB_STEP_F_ACTIVITY 0x10	     /* CREATE_APPOINTMENT: a journal entry */
#define MB_STEP_F_WITH_CALENDAR 0x20 /* FREEBUSY: the own calendar beside it */
#define MB_STEP_F_NOTIFY 0x40	     /* LIST_FOLDER: register for the view's notifications */
#define MB_STEP_F_ATTACH 0x80	     /* READ: the listing said it has attachments */

/* Optional step kinds: the behaviour model emits them only to a target
 * whose ops->steps has their bit (the finer Outlook sequences); the
 * others get the coarser steps alone. */
#define MB_STEPS_OPTIONAL                                                                          \
	((1u << MB_STEP_NEXT_ROWS) | (1u << MB_STEP_RESOLVE_NAMES) |                               \
	 (1u << MB_STEP_OPEN_ATTACHMENT))

/* One step.  Pointers are valid until step() returns (copy what a later
 * message needs).  Unused fields are zero. */
struct mb_step {
	uint8_t kind;		  /* enum mb_step_kind */
	uint8_t msg_kind;	  /* SEND: enum mb_msg_kind (sched.h) */
	uint16_t flags;		  /* MB_STEP_F_* */
	int16_t folder;		  /* enum mb_folder: the folder the step works in */
	int16_t dst;		  /* MOVE: where more[] goes */
	uint32_t max_rows;	  /* LIST_FOLDER, NEXT_ROWS, CALENDAR_RANGE, LIST_CONTACTS */
	uint32_t start_row;	  /* LIST_CONTACTS */
	int64_t start_ms, end_ms; /* CALENDAR_RANGE, FREEBUSY, CREATE_APPOINTMENT, SEND meeting */
	uint64_t item;	     /* READ, OPEN_ATTACHMENT, MARK_READ; SEND: the original replied to or
				forwarded (it gets the verb), or 0 */
	const uint64_t *ids; /* MOVE: to Deleted Items; DELETE; MARK_READ (more) */
	int nids;
	const uint64_t *more; /* MOVE: to dst */
	int nmore;
	const uint64_t *read; /* MOVE: items marked read at the same time */
	int nread;
	const uint32_t *users; /* SEND: direct recipients; FREEBUSY: whose (user indices) */
	int nusers;
	const uint32_t *lists; /* SEND: distribution lists (list indices) */
	int nlists;
	uint64_t seed;	   /* content seed (core/content.h): subject, body */
	uint32_t size;	   /* SEND, CREATE_*: body bytes */
	uint32_t aux;	   /* CREATE_APPOINTMENT: room number; OPEN_ATTACHMENT: its number (1..) */
	uint8_t body_kind; /* SEND: enum mb_content_kind of the body (core/content.h) */
	uint8_t attach_kind;	     /* SEND: content kind of the attachments */
	uint8_t nattach;	     /* SEND: attachments (sizes in attach_size[]) */
	const uint32_t *attach_size; /* SEND: bytes of each attachment */
};

/* Item flags in a step result */
#define MB_ITEM_READ 0x01
#define MB_ITEM_ATTACH 0x02 /* the item has attachments */

/* What a step returned.  Arrays are the driver's (valid until the engine
 * has handed the result to the behaviour model, i.e. until the next
 * callback). */
struct mb_step_result {
	int status;	       /* 0 or a negative MB_E* */
	int n;		       /* LIST_*, CALENDAR_RANGE: rows */
	const uint64_t *ids;   /* item ids (opaque to the model, never 0) */
	const uint32_t *flags; /* MB_ITEM_*, or NULL */
	const int32_t *who;    /* sender's user index, -1 unknown, or NULL */
	uint32_t count;	       /* LIST_FOLDER: items in the folder; LOGON: user folders;
				* READ: attachments of the message */
	uint32_t count2;       /* LIST_FOLDER + F_DELETED_COUNT: items in Deleted Items */
	uint32_t done;	       /* DELETE: ids the target confirmed gone */
	bool local;	       /* served from the client's own copy (cached mode) */
	bool more;	       /* LIST_FOLDER, NEXT_ROWS: the view has rows beyond these */
};

/* ---- the target: configuration, environment -------------------------------- */

#define MB_TARGET_CONNS_MAX 4
#define MB_TARGET_OPS_MAX MB_LOAD_OPS_MAX
#define MB_TARGET_OPTS_MAX 16

/* The target of a run: the scenario's target.* keys, or --target. */
struct mb_target_cfg {
	char driver[MB_NAME_MAX];		/* "mbstore" (default), "null", ... */
	char address[MB_TARGET_CONNS_MAX][256]; /* ADDR:PORT per connection index */
	char user[MB_TOPO_NAME_MAX];		/* credentials for an external target */
	char password[MB_TOPO_PASSWORD_MAX];	/*   ("" : the accounts file's) */
	uint8_t tls[MB_TARGET_CONNS_MAX];	/* enum mb_tls_mode (core/tls.h) per connection */
	char tls_ca[256];  /* trust this PEM CA/certificate ("": the system's) */
	bool tls_insecure; /* skip certificate verification */
	int nopts;
	struct {
		char key[32];
		char value[256];
	} opts[MB_TARGET_OPTS_MAX]; /* the driver's own options */
};

/* What every user of a run shares (read-only while the loops run). */
struct mb_target_env {
	const struct mb_target_cfg *cfg;
	const struct mb_scenario *sc;
	const struct mb_topology *accounts; /* users, passwords, lists */
	const struct mb_sched_params *sp;
	int nusers; /* simulated users */
	int nlists;
	bool cached; /* scenario in cached mode */
	bool compression, notify;
	size_t avg_body;      /* bytes */
	double sync_period_s; /* cached: wall seconds between syncs */
	/* cached: wall seconds from a new-mail notification to its download
	 * (KB870926's 30 s download timer, in simulated time) */
	double download_delay_s;
	/* cached: wall seconds from a local change to the end of its upload
	 * pass: the upload timer (15 simulated s after the last change) and
	 * the maximum timer (60 after the first) */
	double upload_delay_s, upload_max_s;
};

/* A driver option: name, default, help. */
struct mb_target_opt {
	const char *name;
	const char *def;
	const char *help;
};

/* What a driver sees of a user (the engine's user starts with it). */
struct mb_tuser {
	uint32_t idx;	    /* topology user index */
	uint16_t nfolders;  /* user folders (from the logon step) */
	uint16_t conn_open; /* bit per connection: open */
	uint64_t rng;	    /* the user's random stream */
	void *priv;	    /* ops->user_size bytes, zeroed at creation */
	void *shard;	    /* what ops->shard_init returned */
	const struct mb_target_env *env;
	struct mb_load_stats *st; /* the loop's measurement set (counts) */
};

/* Driver flags */
#define MB_TARGET_F_PUSH 0x01	  /* the target pushes new-mail notifications */
#define MB_TARGET_F_CACHED 0x02	  /* cached-mode sync (a local replica) */
#define MB_TARGET_F_NO_IO 0x04	  /* opens no connection (null driver) */
#define MB_TARGET_F_EMBEDDED 0x08 /* the target is mailbench's own store */

struct mb_target_ops {
	const char *name;
	const char *help;		  /* one line */
	uint32_t actions;		  /* bit per enum mb_action_id it can run */
	uint32_t flags;			  /* MB_TARGET_F_* */
	int conns;			  /* connections per user, 1..MB_TARGET_CONNS_MAX */
	size_t user_size;		  /* per-user private state */
	const char *const *op_names;	  /* operation names, op_names[0..nops) */
	int nops;			  /* <= MB_TARGET_OPS_MAX */
	const struct mb_target_opt *opts; /* its own options (NULL-terminated), or NULL */
	uint32_t steps;			  /* optional step kinds it runs (MB_STEPS_OPTIONAL bits) */

	/* Per loop: state shared by the loop's users (buffers). */
	int (*shard_init)(const struct mb_target_env *env, void **shard);
	void (*shard_fini)(void *shard);
	/* Per user, at engine creation and destruction (optional). */
	int (*user_init)(struct mb_tuser *u);
	void (*user_fini)(struct mb_tuser *u);
	/* Connection conn is up (status 0) or failed (< 0) (optional). */
	void (*connected)(struct mb_tuser *u, int conn, int status);
	/* STARTTLS on conn: the handshake ended (0 open, < 0 failed; the
	 * connection is then closed as after a protocol error). */
	void (*secured)(struct mb_tuser *u, int conn, int status);
	/* Connection conn closed: forget its per-connection state (optional). */
	void (*disconnected)(struct mb_tuser *u, int conn);
	/* Length of the first whole message in p[0..len): > 0 its length,
	 * 0 more bytes needed, < 0 a framing error (connection lost). */
	long (*frame)(struct mb_tuser *u, int conn, const uint8_t *p, size_t len);
	/* One whole message.  0, or < 0: the connection is lost. */
	int (*on_message)(struct mb_tuser *u, int conn, const uint8_t *msg, size_t len);
	/* Start a step: 0 done at once (res filled), 1 in flight, < 0 failed. */
	int (*step)(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
	/* Whether a SYNC step is due now: cached mode's download, or with
	 * MB_TARGET_F_PUSH online the fetch of pushed notifications.
	 * pending: actions wait (a background sync yields to them; the first
	 * one does not). */
	bool (*sync_due)(struct mb_tuser *u, bool pending);
	/* The engine's periodic timer while logged on (sync period in
	 * cached mode): e.g. mark the replica dirty (optional). */
	void (*tick)(struct mb_tuser *u);
};

/* The drivers built in (drivers.c), NULL-terminated; and by name. */
extern const struct mb_target_ops *const mb_targets[];
const struct mb_target_ops *mb_target_find(const char *name);
/* Whether ops can run action a. */
static inline bool mb_target_supports(const struct mb_target_ops *ops, int a)
{
	return (ops->actions >> a) & 1u;
}
/* Value of a driver option: the cfg's, else the declared default, else NULL. */
const char *mb_target_opt(const struct mb_target_env *env, const struct mb_target_ops *ops,
			  const char *name);
/* For `mailbench scenario show` (mb_scenario_target_check): the actions
 * with a rate that sc's target.driver cannot run; MB_ENOTFOUND for an
 * unknown driver. */
int mb_target_scenario_check(const struct mb_scenario *sc, uint32_t *unsupported);
/* Set the defaults of a target configuration (driver "mbstore"). */
void mb_target_cfg_default(struct mb_target_cfg *cfg);
/* Parse "DRIVER", "DRIVER:ADDR:PORT" or "ADDR:PORT" (driver unchanged)
 * into cfg: 0, or MB_EINVAL (unknown driver, bad address).  The URL forms
 * imap://HOST:PORT and imaps://HOST:PORT (driver imap; imaps: implicit
 * TLS on connection 0) are DRIVER:ADDR:PORT too. */
int mb_target_cfg_parse(struct mb_target_cfg *cfg, const char *arg);
/* Parse the submission address smtp://HOST:PORT, smtps://HOST:PORT
 * (implicit TLS) or HOST:PORT into connection 1: 0 or MB_EINVAL. */
int mb_target_cfg_submit(struct mb_target_cfg *cfg, const char *arg);
/* --tls OPT (an index into mb_tls_modes, core/options.h): 1 starttls:
 * every connection without implicit TLS uses STARTTLS; 2 implicit: every
 * connection is TLS from the first byte (as imaps://, smtps://).  0, or
 * MB_EINVAL: implicit for a driver that does not speak TLS (no
 * ops->secured: the embedded store, null). */
int mb_target_cfg_tls(struct mb_target_cfg *cfg, int opt);

/* ---- services of the engine to drivers (user.c) ---------------------------- */

/* Write bytes on connection conn (counted as bytes sent): 0 or MB_ECLOSED. */
int mb_target_write(struct mb_tuser *u, int conn, const void *p, size_t len);
/* Open connection conn >= 1 (ops->connected reports the outcome). */
int mb_target_connect(struct mb_tuser *u, int conn);
/* The connection's configured TLS mode (enum mb_tls_mode). */
int mb_target_tls_mode(const struct mb_tuser *u, int conn);
/* Start TLS on an open plain connection (STARTTLS's positive reply was
 * the last plaintext): 0 (ops->secured reports), or < 0. */
int mb_target_starttls(struct mb_tuser *u, int conn);
/* Close connection conn >= 1 (conn 0: use mb_target_lost). */
void mb_target_close(struct mb_tuser *u, int conn);
/* A request goes out on conn: nops operations, op (index into op_names)
 * names its round trip.  Counts the request and its operations. */
void mb_target_request(struct mb_tuser *u, int conn, int op, int nops);
/* Count one more operation of kind op in the request going out. */
void mb_target_count_op(struct mb_tuser *u, int op);
/* The reply to conn's request arrived: records its round trip. */
void mb_target_reply(struct mb_tuser *u, int conn);
/* The step in flight is complete (res->status says how). */
void mb_target_step_done(struct mb_tuser *u, const struct mb_step_result *res);
/* Pushed data changed what the user should do (try to run what is due). */
void mb_target_wake(struct mb_tuser *u);
/* Wake the user (as mb_target_wake) at monotonic time ns (core/clock.h),
 * on the user's one timer; the earliest asked time counts. */
void mb_target_wake_at(struct mb_tuser *u, uint64_t ns);
/* The connection cannot go on (protocol error): close, reconnect later. */
void mb_target_lost(struct mb_tuser *u);
/* The session ended at the target's request (logoff): log on again later. */
void mb_target_logged_off(struct mb_tuser *u);
/* Ack log: kind '+' created, '-' deleted, '~' delete asked; n ids of a
 * mailbox (user index + 1 for an embedded store). */
void mb_target_ack(struct mb_tuser *u, char kind, uint32_t mailbox, const uint64_t *ids, int n);
/* The same for ids of several mailboxes (mailboxes[i] holds ids[i]), in
 * one write as far as it fits (a delivery's copies land together). */
void mb_target_ack_many(struct mb_tuser *u, char kind, const uint32_t *mailboxes,
			const uint64_t *ids, int n);
/* Topology user index of an account name, or -1 (simulated users only). */
int32_t mb_target_find_user(const struct mb_tuser *u, const char *name, size_t len);
/* The user's account (name, password, key). */
const struct mb_topo_user *mb_target_account(const struct mb_tuser *u);

#endif
