/* drivers/mbstore_int.h: internal to the mbstore driver's files: the
 * client-chosen handles, the per-loop and per-user state, and the functions
 * the files share.  The driver is mbstore.c (its ops table and step table);
 * the helpers below it are layered, each file calling only files below:
 *
 *   mbstore.c               ops table, step table, framing, reply dispatch
 *     |-> mbstore_session.c  logon, logoff, keepalive, cached-mode sync
 *     |-> mbstore_view.c     views, next rows, reads, attachments, lists
 *     |-> mbstore_write.c    resolve, send, move, delete, free/busy, creates
 *            (the three step files do not call each other)
 *            '-> mbstore_req.c  sending a batch, releases, reply decoding
 *                               and the batches several steps encode
 */
#ifndef MB_LOAD_DRIVERS_MBSTORE_INT_H
#define MB_LOAD_DRIVERS_MBSTORE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "load/drivers/reqbuild.h"
#include "load/replica.h"
#include "load/target.h"
#include "proto/proto.h"

/* client-chosen handles (the cached-mode sync uses H_MSG + 8k, k < 4) */
enum {
	H_TABLE = 1,
	H_MSG = 2,
	H_NEW = 3,
	H_TABLE2 = 4,
	H_HIER = 5,
	H_STREAM = 40,	/* a body or attachment stream being read */
	H_ATT = 41,	/* an attachment (opened, or of a draft) */
	H_ATABLE = 42,	/* a message's attachment table */
	H_VNOTIFY = 43, /* the open view's notification registration */
	H_INOTIFY = 44, /* the session's new-mail registration on the Inbox */
	H_ITABLE = 45,	/* online: the Inbox view the notification fetch refreshes */
	H_SYNC = 46,	/* cached: the download context of replica slot s is H_SYNC + s */
	H_HSYNC = 63,	/* cached: the hierarchy download context */
	H_COLL = 64,	/* cached: the upload context of replica slot s is H_COLL + s */
	H_FTS = 80,	/* cached: its checkpoint state's download is H_FTS + s */
	H_COLL1 = 96,	/* cached: a one-request upload context (a folder out of the replica) */
	H_FTS1 = 97,
};

/* Online: rows of the Inbox view one notification fetch refreshes at most
 * (one screen, MB_BEHAVE_VIEW_ROWS) */
#define NOTIFY_ROWS_MAX 25

/* Bytes per ReadStream: one RPC payload (MS-OXCRPC 3.1.4.2.1: at most
 * 32 KB) less room for the other operations of the batch. */
#define STREAM_CHUNK (28u * 1024u)
#define RELEASES_MAX 6

/* FastTransferGetBuffer rounds per request: Exchange 2003 packs ROP
 * responses for Outlook 2003 ("buffer packing", Microsoft, "Improvements in
 * Client/Server Communication in Outlook 2003 and Exchange Server 2003";
 * MS-OXCRPC 3.1.4.2.1.2), each at most 32 KB, as many as the client's output
 * buffer holds: 0x18008 bytes in MS-OXCRPC 4.3's example of a packing client
 * (Outlook 2003's own size is not given), three rounds of STREAM_CHUNK. */
#define STREAM_PACK 3

/* The STREAM_CHUNK rounds, STREAM_PACK at most, of the next request that
 * reads a stream with left bytes to go. */
static inline uint32_t mb__mbs_stream_rounds(uint32_t left)
{
	uint32_t n = left / STREAM_CHUNK + (left % STREAM_CHUNK != 0);
	return n < STREAM_PACK ? n : STREAM_PACK;
}
#define SYNC_MAX 32
#define ITEMS 512
#define FOLDERS_MAX 12

/* ---- state ---------------------------------------------------------------------- */

struct mbs_shard {
	struct mb__rb rb; /* the batch being built (drivers/reqbuild.h) */
	struct mb_arena *arena;
	struct mb_buf *scratch, *enc, *enc_tmp;
	struct mb_lz77 *lz77; /* the shard's payload encoder */
	char *body;
	size_t body_cap;
	char *att; /* a draft's attachment bytes, one after the other */
	size_t att_cap;
	/* the result of the step that just completed */
	uint64_t ids[ITEMS];
	uint32_t flags[ITEMS];
	int32_t who[ITEMS];
};

/* A cached-mode sync's state between its requests (allocated while it
 * runs).  Masks of replica slots: */
struct mbs_sync {
	uint32_t mask;	 /* asked in the last request */
	uint32_t stream; /* their contexts stay open for their content stream */
	uint32_t want;	 /* contexts whose stream has bytes left to read */
	uint32_t rel;	 /* contexts to release with the next request */
	int cur;	 /* the slot of the last request's FastTransferGetBuffers, -1 none */
	int rounds;	 /* how many it had */
	bool cur_rel;	 /* and the release of its context after them */
	uint32_t left[MB_REPLICA_MAX_FOLDERS]; /* bytes of each slot's stream not read */
};

struct mbs_user {
	uint32_t seq;
	uint32_t compress_min;
	bool compress; /* granted at logon */
	bool busy;     /* a request in flight */
	uint8_t kind;  /* step in flight */
	uint8_t phase; /* logon: 1 challenge, 2 logon; sync: 1, 2 download, 3 online fetch,
			* 4 hierarchy, 5 upload pass end; send: 0 the submission, 1 the
			* original's verb */
	uint8_t nfolders;
	uint8_t view; /* handle of the open folder view, 0 none */
	bool vnotify; /* the view registered for notifications */
	uint8_t nrel; /* handles released with the next request */
	uint8_t rel[RELEASES_MAX];
	uint8_t atts; /* READ: attachments of the message */
	/* online: new mail pushed by the store, not yet fetched (the next
	 * fetch refreshes the Inbox view's rows for it); the Inbox view
	 * H_ITABLE is open (in the padding) */
	uint8_t nnew : 7;
	uint8_t itable : 1;
	uint32_t stream_left; /* READ, OPEN_ATTACHMENT: bytes left in H_STREAM */
	uint64_t open_mid;    /* message open under H_MSG (release pending), 0 none */
	uint64_t verb_mid;    /* SEND: the original replied to or forwarded, 0 none */
	bool verb_fwd;	      /* SEND: forwarded, not replied to */
	uint16_t step_flags;
	int16_t slot;		       /* create: replica slot of the new item */
	uint32_t folders[FOLDERS_MAX]; /* user folders' local numbers */
	struct mb_replica *rep;	       /* cached mode */
	uint64_t *del;		       /* delete in flight: its ids */
	int ndel;
	uint32_t notified; /* cached: slots notified, dirty when the download timer runs out */
	bool hier_due;	   /* cached: the periodic sync's hierarchy download is due */
	struct mbs_sync *sync;
	uint64_t notify_due_ns; /* cached: when the download timer runs out, 0: not running */
	/* cached: the upload pass: replica slots with an upload context open
	 * (H_COLL + slot), when its first change was made and when it ends */
	uint32_t up_open;
	uint32_t up_new; /* of up_open: opened by the request being built (none
			  * once it is sent; undone if it is not) */
	uint64_t up_first_ns, up_due_ns;
};

static inline struct mbs_user *M(struct mb_tuser *u) { return u->priv; }

static inline struct mbs_shard *SH(struct mb_tuser *u) { return u->shard; }

static inline struct mb__rb *RB(struct mb_tuser *u) { return &SH(u)->rb; }

static inline uint32_t mailbox_of(const struct mb_tuser *u) { return u->idx + 1; }

static inline uint64_t fid_of(const struct mb_tuser *u, uint32_t local)
{
	return ((uint64_t)mailbox_of(u) << 32) | local;
}

/* Local folder number of a folder role. */
static inline uint32_t local_of(struct mb_tuser *u, int folder)
{
	static const uint32_t fixed[MB_FOLDER_USER] = {MB_FID_INBOX, MB_FID_DELETED, MB_FID_SENT,
						       MB_FID_CALENDAR, MB_FID_CONTACTS};
	if (folder >= 0 && folder < MB_FOLDER_USER)
		return fixed[folder];
	int i = folder - MB_FOLDER_USER;
	return i >= 0 && i < M(u)->nfolders ? M(u)->folders[i] : MB_FID_INBOX;
}

/* mbstore_req.c */
int mb__mbs_send_rpc(struct mb_tuser *u);
void mb__mbs_drop_request(struct mb_tuser *u);
void mb__mbs_emit_open_message(struct mb_tuser *u, uint32_t local, uint64_t mid);
void mb__mbs_emit_save(struct mb__rb *rb, uint32_t h, struct mb_prop *p, uint16_t n);
void mb__mbs_release_later(struct mb_tuser *u, uint8_t h);
int mb__mbs_keep_open(struct mb_tuser *u, uint8_t h);
const struct mb_op_reply *mb__mbs_find_op(const struct mb_reply *r, uint8_t code, int nth);
int mb__mbs_op_status(const struct mb_op_reply *o);
/* Cached mode: Outlook's ICS upload (MS-OXCFXICS 3.3.4.3.3) in upload
 * passes.  upload_open gives the upload context for imports into folder
 * local, emitting it (SyncOpenCollector) and its initial state (CnsetSeen,
 * CnsetSeenFAI, CnsetRead: the replica folder's, as its download uploads
 * them) when the pass has none open on that folder; the imports then name
 * *h.  upload_done after them restarts the pass's timers (15 simulated s
 * after this change, 60 after the pass's first at most: [KB870926]'s
 * upload and maximum timers); when they run out, the sync step ends the
 * pass (upload_pass: SyncGetTransferState, FastTransferGetBuffer and two
 * releases per open context, one request), and so does a logoff.  A folder
 * outside the replica gets a context of its own request.  upload_check
 * checks a reply's checkpoints: 0, the failed operation's error, or
 * MB_EPROTO when one is not the three ID sets. */
int mb__mbs_upload_open(struct mb_tuser *u, uint32_t local, uint32_t *h);
void mb__mbs_upload_done(struct mb_tuser *u, uint32_t h);
bool mb__mbs_upload_due(struct mb_tuser *u);
int mb__mbs_upload_pass(struct mb_tuser *u);
int mb__mbs_upload_check(const struct mb_reply *r);
int mb__mbs_take_rows(struct mb_tuser *u, const struct mb_reply *r, uint8_t code,
		      struct mb_step_result *res);
/* GetContentsTable(local) as handle h and SetColumns of a view's columns. */
void mb__mbs_emit_view_table(struct mb_tuser *u, uint32_t local, uint32_t h);
void mb__mbs_emit_open_table(struct mb_tuser *u, uint32_t local, uint32_t h, uint32_t max_rows,
			     bool notify);
void mb__mbs_emit_view_release(struct mb_tuser *u);
void mb__mbs_compose(struct mb_tuser *u, uint32_t h, const struct mb_step *s,
		     const struct mb_prop *extra);
void mb__mbs_compose_attachments(struct mb_tuser *u, uint32_t h, const struct mb_step *s);
struct mb_prop *mb__mbs_appointment_props(struct mb_tuser *u, const struct mb_step *s, int *n);
void mb__mbs_emit_create_item(struct mb_tuser *u, uint32_t local, struct mb_prop *p, int n);
int mb__mbs_ack_saved(struct mb_tuser *u, const struct mb_reply *r, uint8_t code);
int mb__mbs_took_create(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);

/* mbstore_session.c */
int mb__mbs_emit_logon(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_logon(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_logoff(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_logoff(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_keepalive(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_nothing(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_sync(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_sync(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);

/* mbstore_view.c */
int mb__mbs_emit_list_folder(struct mb_tuser *u, const struct mb_step *s,
			     struct mb_step_result *res);
int mb__mbs_took_list(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_close_view(struct mb_tuser *u, const struct mb_step *s,
			    struct mb_step_result *res);
int mb__mbs_emit_next_rows(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_next_rows(struct mb_tuser *u, const struct mb_reply *r,
			   struct mb_step_result *res);
int mb__mbs_emit_read(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_read(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_open_attachment(struct mb_tuser *u, const struct mb_step *s,
				 struct mb_step_result *res);
int mb__mbs_took_open_attachment(struct mb_tuser *u, const struct mb_reply *r,
				 struct mb_step_result *res);
int mb__mbs_emit_calendar(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_calendar(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_list_contacts(struct mb_tuser *u, const struct mb_step *s,
			       struct mb_step_result *res);
int mb__mbs_took_list_contacts(struct mb_tuser *u, const struct mb_reply *r,
			       struct mb_step_result *res);

/* mbstore_write.c */
int mb__mbs_emit_resolve(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_resolve(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_send(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_send(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_move(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_emit_delete(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_delete(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_freebusy(struct mb_tuser *u, const struct mb_step *s, struct mb_step_result *res);
int mb__mbs_took_freebusy(struct mb_tuser *u, const struct mb_reply *r, struct mb_step_result *res);
int mb__mbs_emit_create_appointment(struct mb_tuser *u, const struct mb_step *s,
				    struct mb_step_result *res);
int mb__mbs_emit_create_contact(struct mb_tuser *u, const struct mb_step *s,
				struct mb_step_result *res);
int mb__mbs_took_create_contact(struct mb_tuser *u, const struct mb_reply *r,
				struct mb_step_result *res);

#endif
