/* schema.h: the mailbox store's tables over the storage engine's B+trees.
 *
 * One mb_schema per open database (db/db.h), used by that database's owner
 * thread only (like the database itself).  Trees, all keys big-endian:
 *   "mailboxes" mailbox(u32)                         -> mailbox record
 *   "folders"   mailbox(u32) folder(u32)             -> folder record + name
 *   "messages"  mailbox(u32) mid(u64)                -> message record + props
 *   "bodies"    content: mailbox(u32) mid(u64)       -> body bytes (long value)
 *   "by_time"   mailbox(u32) folder(u32) ~time(u64) mid(u64) -> ""  (newest first)
 *   "by_cn"     mailbox(u32) folder(u32) cn(u64)     -> mid(u64) deleted(u8)
 *   "calendar"  mailbox(u32) start(u64, biased) mid(u64) -> end(i64) busy(u32)
 *               (appointments of the Calendar folder only)
 *   "attachments" mailbox(u32) mid(u64) num(u16)     -> kind(u8) size(u32) name
 *   "attach_data" content num(u16)                   -> the attachment's bytes
 *               (long value; an attachment is an object of its own, read
 *               only when opened, never with the message)
 *   "instances" content                              -> rows sharing it (u32)
 * A message's content key is its own (mailbox, mid), or, for a row of a
 * single-instance delivery (mb_schema_msg_add_shared), the shared content's
 * (mailbox | CONTENT_BIT, mid) written in the row; "instances" counts the
 * rows of a shared content (absent: 1).  The attachment trees and
 * "instances" are created on open when missing, so data directories
 * initialised before them open unchanged.
 * Folder numbers are the local part of a wire folder id (proto.h).
 *
 * Invariants: every write function must run inside a transaction of the
 * database (mb_db_begin .. commit) and keeps all trees consistent with each
 * other: a message row, its body, its by_time entry and exactly one by_cn
 * entry (its last change) exist together, its body under its content key
 * while any row refers to it; a deleted or moved-out message
 * leaves a tombstone in its old folder's by_cn; folder counts match the
 * messages; a message row's attachment count says how many attachments
 * (numbered 1..count) it has, each with its meta row and a data row under
 * its content key, and its
 * PR_MESSAGE_SIZE counts them.  Message ids and change numbers come from the mailbox record
 * and only grow.  Functions return 0 or MB_E*; MB_ENOTFOUND for a missing
 * mailbox, folder or message.
 */
#ifndef MB_STORE_SCHEMA_H
#define MB_STORE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db.h"
#include "proto/proto.h"

struct mb_schema;

/* Open the trees of db (creating them when create; that needs a
 * transaction, which this function opens and commits itself). */
int mb_schema_open(struct mb_db *db, bool create, struct mb_schema **out);
void mb_schema_close(struct mb_schema *s);
struct mb_db *mb_schema_db(struct mb_schema *s);

/* ---- mailboxes and folders ---- */

struct mb_mailbox_rec {
	uint64_t next_mid;
	uint64_t next_cn; /* the next change number to hand out */
	uint32_t next_folder;
	uint32_t nfolders;
};

/* Create a mailbox with its well-known folders (root, Inbox, Deleted Items,
 * Sent Items, Calendar, Contacts).  MB_EEXIST when present. */
int mb_schema_mailbox_create(struct mb_schema *s, uint32_t mailbox, const char *owner);
int mb_schema_mailbox_get(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *out);
bool mb_schema_mailbox_exists(struct mb_schema *s, uint32_t mailbox);

struct mb_folder_rec {
	uint32_t folder; /* local number */
	uint32_t parent; /* 0 for the root */
	uint32_t count;
	uint32_t unread;
	uint32_t subfolders;
	uint64_t cn; /* highest change number in the folder */
	char name[MB_PROTO_MAX_NAME + 1];
};

int mb_schema_folder_create(struct mb_schema *s, uint32_t mailbox, uint32_t parent,
			    const char *name, uint32_t *folder);
int mb_schema_folder_get(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			 struct mb_folder_rec *out);
/* Child folders of parent, in folder-number order, starting after
 * after_folder (0 = from the first); cb returns non-zero to stop. */
int mb_schema_folder_children(struct mb_schema *s, uint32_t mailbox, uint32_t parent,
			      uint32_t after_folder,
			      int (*cb)(void *arg, const struct mb_folder_rec *f), void *arg);

/* ---- messages ---- */

/* An attachment as written: its content kind (core/content.h), file name
 * and bytes. */
#define MB_SCHEMA_MAX_ATTACH 32
struct mb_attach_in {
	uint8_t kind;
	struct mb_bytes name;
	const void *data;
	uint32_t len;
};

/* What a message is made of when written.  props: everything but the
 * fixed fields below and the body (any MB_PR_* the client set). */
struct mb_msg_in {
	int64_t time;	    /* PR_DELIVERY_TIME, ms */
	uint32_t flags;	    /* PR_MESSAGE_FLAGS */
	int64_t start, end; /* appointments (0 otherwise) */
	uint32_t busy;
	bool appointment; /* index in "calendar" */
	const struct mb_prop *props;
	uint16_t nprops;
	const void *body;
	uint32_t body_len;
	bool keep_body; /* update: the stored body stays (body, body_len unused) */
	const struct mb_attach_in *attach; /* new messages only (add) */
	uint16_t nattach;		   /* <= MB_SCHEMA_MAX_ATTACH */
};

/* A stored message's fixed part; props point into the caller's value
 * buffer (valid until it is reused). */
struct mb_msg_rec {
	uint64_t mid;
	uint32_t folder;
	uint32_t flags;
	int64_t time;
	uint64_t cn;
	uint32_t size; /* PR_MESSAGE_SIZE */
	uint32_t body_len;
	int64_t start, end;
	uint32_t busy;
	bool appointment;
	uint8_t nattach;      /* attachments 1..nattach */
	bool shared;	      /* body and attachment bytes by reference */
	uint32_t content_mbx; /* their key, when shared (CONTENT_BIT set) */
	uint64_t content_mid;
	const uint8_t *props; /* mb_props_encode()d */
	size_t props_len;
};

/* Add a new message to a folder; *mid and *cn (optional) receive its id
 * and change number.  Uses tmp as scratch. */
int mb_schema_msg_add(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
		      const struct mb_msg_in *in, struct mb_buf *tmp, uint64_t *mid, uint64_t *cn);
/* Single-instance delivery: the same message added to several mailboxes
 * of one database stores its body and attachments' bytes once.  Start
 * with c zeroed; the first call stores the content, the later ones
 * reference it (each row counts as one instance; deleting, moving,
 * copying and updating rows keep the count: the content goes with the
 * last row, and a row that gets a new body takes its own copy). */
struct mb_schema_content {
	bool stored;
	uint32_t mbx;
	uint64_t mid;
};
int mb_schema_msg_add_shared(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			     const struct mb_msg_in *in, struct mb_schema_content *c,
			     struct mb_buf *tmp, uint64_t *mid, uint64_t *cn);
/* The store-level check of a database's message content: every row's
 * body and attachments' bytes exist under its content key and its
 * attachments' rows under its own; every shared content's "instances"
 * count is the number of rows that refer to it (absent: one); no shared
 * body, attachment or count is left without a row.  Each problem goes to
 * cb as one line starting with where; rep adds up.  0 when the check ran
 * (rep->problems says whether it passed), MB_E* when it could not. */
struct mb_content_report {
	uint64_t rows, shared_rows, contents, problems;
};
int mb_schema_check_content(struct mb_schema *s, const char *where,
			    void (*cb)(void *arg, const char *msg), void *arg,
			    struct mb_content_report *rep);
/* Replace a message's contents in place (same id, new change number). */
int mb_schema_msg_update(struct mb_schema *s, uint32_t mailbox, uint64_t mid,
			 const struct mb_msg_in *in, struct mb_buf *tmp, uint64_t *cn);
/* Read a message row into val and parse it into rec. */
int mb_schema_msg_get(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_val *val,
		      struct mb_msg_rec *rec);
/* A message's body (empty when it has none); MB_ECORRUPT when its row
 * names a body the store lacks. */
int mb_schema_msg_body(struct mb_schema *s, uint32_t mailbox, uint64_t mid, struct mb_val *out);
/* The same for a row already read (mb_schema_msg_get): no second lookup. */
int mb_schema_rec_body(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r,
		       struct mb_val *out);
/* Does message mid exist in mailbox (the ack-log check's question)? */
int mb_schema_msg_exists(struct mb_schema *s, uint32_t mailbox, uint64_t mid, bool *exists);
/* Change the flags (read/unread) of a message. */
int mb_schema_msg_set_flags(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint32_t flags,
			    uint64_t *cn);
/* ---- attachments ---- */

struct mb_attach_rec {
	uint16_t num; /* 1..nattach */
	uint8_t kind;
	uint32_t size;
	char name[MB_PROTO_MAX_NAME + 1];
};
/* Attachment num of message mid (meta only). */
int mb_schema_attach_get(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint16_t num,
			 struct mb_attach_rec *out);
/* Its bytes into out. */
int mb_schema_attach_data(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint16_t num,
			  struct mb_val *out);
/* The same for a row already read (mb_schema_msg_get): no second lookup. */
int mb_schema_rec_attach_data(struct mb_schema *s, uint32_t mailbox, const struct mb_msg_rec *r,
			      uint16_t num, struct mb_val *out);

/* Hard delete (its attachments with it). */
int mb_schema_msg_delete(struct mb_schema *s, uint32_t mailbox, uint64_t mid);
/* Move (same id) or copy (new id, attachments copied) to another folder
 * of the mailbox. */
int mb_schema_msg_move(struct mb_schema *s, uint32_t mailbox, uint64_t mid, uint32_t dst, bool copy,
		       struct mb_buf *tmp, uint64_t *new_mid);

/* Scan of a folder's messages by delivery time: newest first, or oldest
 * first when pos->ascending.  pos holds the resume point (started false =
 * from the first in that order); cb gets each message id; returns non-zero
 * to stop (the message it stopped on is consumed).  *more set when
 * messages remain after the last one passed to cb. */
struct mb_scan_pos {
	bool started;
	bool ascending; /* the direction; a restart keeps it */
	uint64_t inv_time;
	uint64_t mid;
};
int mb_schema_folder_scan(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			  struct mb_scan_pos *pos, uint32_t max, int (*cb)(void *arg, uint64_t mid),
			  void *arg, bool *more);

/* Changes of a folder with cn > since, in cn order, at most max. */
int mb_schema_folder_changes(struct mb_schema *s, uint32_t mailbox, uint32_t folder, uint64_t since,
			     uint32_t max,
			     int (*cb)(void *arg, uint64_t cn, uint64_t mid, bool deleted),
			     void *arg, bool *more);

/* Appointments overlapping [start, end), by start. */
int mb_schema_calendar_range(
    struct mb_schema *s, uint32_t mailbox, int64_t start, int64_t end, uint32_t max,
    int (*cb)(void *arg, uint64_t mid, int64_t start, int64_t end, uint32_t busy), void *arg);

/* Appointments longer than this are not found by range queries that start
 * after their start by more than this (the calendar index is by start). */
#define MB_SCHEMA_MAX_APPT_MS (14LL * 24 * 3600 * 1000)

#endif
