/* ops_int.h: internals shared by the files that execute operations
 * (ops.c and op_*.c, on top of opcommon.c and handles.c).  Not for other
 * parts, nor for the server's network side.
 *
 * Calls go one way: ops.c -> op_*.c -> opcommon.c -> handles.c.
 */
#ifndef MB_STORE_OPS_INT_H
#define MB_STORE_OPS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/clock.h"
#include "store/store_int.h"

/* Message times are wall-clock milliseconds: mb_wall_ms() (core/clock.h). */

/* ---- handles.c ---- */
void mb__handle_clear(struct handle *h);
struct handle *mb__handle_find(struct session *s, uint32_t id);
void mb__handle_release(struct session *s, struct handle *h);
/* A fresh handle under id (an old one with that id is released).  Each
 * handle is its own allocation, so an idle session holds only what it
 * uses. */
int mb__handle_new(struct session *s, uint32_t id, uint8_t kind, struct handle **out);
void *mb__dup_bytes(const void *p, size_t n);
/* Set (copy) a property on a draft/open message handle. */
int mb__handle_set_prop(struct handle *h, const struct mb_prop *p);
const struct mb_prop *mb__handle_prop(const struct handle *h, uint32_t tag);
/* Held bytes: 0 when the session may take add bytes more and stay within
 * its limit, and the store within its own, else MB_EFULL.  mb__session_account() counts again what
 * the session's handles hold (after every operation) and moves the store's sum with it. */
int mb__held_room(const struct session *s, size_t add);
void mb__session_account(struct session *s);
/* What the values p[0..n) cost held: their bytes (strings, binaries,
 * lists) and each value's entry. */
size_t mb__props_bytes(const struct mb_prop *p, uint16_t n);
/* What handle h holds (counted in the session's held bytes): itself, its
 * values, attachments and states. */
size_t mb__handle_bytes(const struct handle *h);
/* Of those, the attachments a draft holds. */
size_t mb__handle_attach_bytes(const struct handle *h);

/* ---- opcommon.c ---- */
int mb__txn_begin(struct dbw *w);
/* Commit the open transaction asynchronously (or abort it when rc != 0). */
int mb__txn_end(struct dbw *w, struct req *r, int rc, uint32_t ddb, uint32_t drcpt);
void *mb__ar(struct req *r, size_t n);
/* A copy of p[0..n) in the reply arena, as out; MB_ETOOBIG when full. */
int mb__ar_bytes(struct req *r, const void *p, size_t n, struct mb_bytes *out);
/* Room for n rows of nc columns in res (rows.ncols, rows.vals). */
int mb__ar_rows(struct req *r, struct mb_op_reply *res, uint32_t n, uint16_t nc);
int mb__own_folder(struct req *r, uint64_t fid, uint32_t *local);
/* Copy a stored row's props into the arena and decode them. */
int mb__row_props(struct req *r, const struct mb_msg_rec *rec, struct mb_prop **props, uint16_t *n);
int mb__budget(struct req *r, size_t n);
/* Value of column tag for a stored message; body read when asked. */
int mb__msg_column(struct dbw *w, struct req *r, uint32_t mailbox, const struct mb_msg_rec *rec,
		   const struct mb_prop *props, uint16_t nprops, uint32_t tag, struct mb_prop *out);
/* Fill ncols values of message mid into vals. */
int mb__msg_row(struct dbw *w, struct req *r, uint32_t mailbox, uint64_t mid, const uint32_t *cols,
		uint16_t ncols, struct mb_prop *vals, struct mb_msg_rec *rec);
int mb__collect_mid(void *arg, uint64_t mid);
int mb__collect_folder(void *arg, const struct mb_folder_rec *f);
int mb__count_folder(void *arg, const struct mb_folder_rec *f);
int mb__collect_change(void *arg, uint64_t cn, uint64_t mid, bool deleted);
int mb__collect_appt(void *arg, uint64_t mid, int64_t start, int64_t end, uint32_t busy);
void mb__msg_in_from_props(struct mb_msg_in *in, const struct mb_prop *props, uint16_t n,
			   struct mb_prop *rest, uint16_t *nrest, int64_t default_time);
/* Message contents of a handle: stored props merged with the handle's
 * changes (handle wins), as one array in the arena; the stored body only
 * when with_body (a save that does not change the body keeps it stored). */
int mb__handle_merged(struct dbw *w, struct req *r, struct handle *h, bool with_body,
		      struct mb_prop **out, uint16_t *nout);

/* collecting scans (opcommon.c mb__collect_*) */
struct mid_list {
	uint64_t *mids;
	uint32_t n, cap;
	uint32_t skip;
};

struct folder_list {
	struct mb_folder_rec *f;
	uint32_t n, cap;
};

struct change {
	uint64_t cn, mid;
	bool deleted;
};

struct change_list {
	struct change *c;
	uint32_t n, cap;
};

struct appt {
	uint64_t mid;
	int64_t start, end;
	uint32_t busy;
};

struct appt_list {
	struct appt *a;
	uint32_t n, cap;
};

/* ---- op_submit.c ---- */
/* SubmitMessage, phase 0 (home database): resolve recipients, save the
 * message (submitted, unsent), plan the deliveries. */
int mb__submit_begin(struct dbw *w, struct req *r, struct handle *h);
/* SubmitMessage, a delivery phase on the database that runs it. */
int mb__submit_deliver(struct dbw *w, struct req *r);
/* SubmitMessage, the last phase (home database): the message is sent. */
int mb__submit_finish(struct dbw *w, struct req *r);

/* ---- op_calendar.c ---- */
int mb__op_calendar(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_freebusy(struct dbw *w, struct req *r, uint32_t mailbox, struct mb_op *op,
		    struct mb_op_reply *res);
int mb__op_create_contact(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_list_contacts(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);

/* ---- op_sync.c ---- */
int mb__op_sync_down(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_sync_up(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_sync_configure(struct req *r, struct mb_op *op);
/* SYNC_STATE_BEGIN, _CONTINUE and _END */
int mb__op_sync_state(struct req *r, struct mb_op *op);
int mb__op_sync_open_collector(struct req *r, struct mb_op *op);
int mb__op_sync_get_state(struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_ft_get_buffer(struct req *r, struct mb_op *op, struct mb_op_reply *res);
/* Changes the session imported into folder took change numbers [lo, hi]:
 * they join the kept state of its ready upload contexts on that folder
 * (only that one when only is not NULL). */
void mb__sync_note_import(struct session *s, struct handle *only, uint32_t folder, uint64_t lo,
			  uint64_t hi);

/* ---- op_attach.c ---- */
int mb__op_create_attach(struct req *r, struct mb_op *op, struct mb_op_reply *res);
/* SaveChangesAttachment: the attachment joins its draft (the handle is
 * released); the draft's save or submit writes it. */
int mb__op_save_attach(struct req *r, struct mb_op *op);
int mb__op_get_attach_table(struct dbw *w, struct req *r, struct mb_op *op,
			    struct mb_op_reply *res);
int mb__op_open_attach(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);
/* OpenStream: the whole value is read once (a long value is one B+tree
 * value) and kept with the handle; ReadStream hands out slices. */
int mb__op_open_stream(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_read_stream(struct req *r, struct mb_op *op, struct mb_op_reply *res);
/* Up to max of a handle's bytes (an H_STREAM's or H_FTSTATE's data, a
 * download context's content stream: data, len bytes) from *pos on, into
 * the reply; *pos moves on. */
int mb__stream_read(struct req *r, const uint8_t *data, uint32_t len, uint32_t *pos, uint32_t max,
		    struct mb_op_reply *res);
/* QueryRows on an attachment table. */
int mb__attach_query_rows(struct dbw *w, struct req *r, struct handle *h, uint32_t max,
			  struct mb_op_reply *res);

/* ---- op_book.c ---- */
int mb__op_register_notify(struct dbw *w, struct req *r, struct mb_op *op);
/* ResolveNames: each name against the global address list (the
 * topology's users, then its distribution lists), exact match. */
int mb__op_resolve(struct mb_store *st, struct req *r, struct mb_op *op, struct mb_op_reply *res);
int mb__op_get_ab_table(struct mb_store *st, struct req *r, struct mb_op *op,
			struct mb_op_reply *res);
/* QueryRows on the address list. */
int mb__book_query_rows(struct req *r, struct handle *h, uint32_t max, struct mb_op_reply *res);

#endif
