/* op_calendar.c: the calendar and contacts operations: a calendar range,
 * free/busy of another mailbox (run on that mailbox's database, read only),
 * creating and listing contacts.
 */
#include "config.h"

#include "store/ops_int.h"
#include "core/error.h"

#include <stdlib.h>
#include <string.h>

static const uint32_t cal_cols[] = {MB_PR_MID,	    MB_PR_SUBJECT,     MB_PR_START_DATE,
				    MB_PR_END_DATE, MB_PR_BUSY_STATUS, MB_PR_LOCATION};
static const uint32_t contact_cols[] = {MB_PR_MID, MB_PR_DISPLAY_NAME, MB_PR_EMAIL_ADDRESS};

int mb__op_calendar(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t max = op->u.calendar.max_rows;
	if (max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	struct appt_list l = {mb__ar(r, (max ? max : 1) * sizeof(struct appt)), 0, max};
	if (!l.a)
		return MB_ETOOBIG;
	int rc = 0;
	if (max)
		rc = mb_schema_calendar_range(w->schema, r->sess->mailbox, op->u.calendar.start,
					      op->u.calendar.end, max, mb__collect_appt, &l);
	if (rc)
		return rc;
	uint16_t nc = sizeof(cal_cols) / sizeof(cal_cols[0]);
	if (mb__ar_rows(r, res, l.n, nc))
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < l.n && !rc; i++) {
		struct mb_msg_rec rec;
		rc = mb__msg_row(w, r, r->sess->mailbox, l.a[i].mid, cal_cols, nc,
				 res->u.rows.vals + (size_t)i * nc, &rec);
	}
	res->u.rows.nrows = l.n;
	res->u.rows.more = l.n == max && max ? 1 : 0;
	return rc;
}

int mb__op_freebusy(struct dbw *w, struct req *r, uint32_t mailbox, struct mb_op *op,
		    struct mb_op_reply *res)
{
	uint32_t max = 1024;
	struct appt_list l = {mb__ar(r, max * sizeof(struct appt)), 0, max};
	if (!l.a)
		return MB_ETOOBIG;
	int rc = mb_schema_calendar_range(w->schema, mailbox, op->u.freebusy.start,
					  op->u.freebusy.end, max, mb__collect_appt, &l);
	if (rc)
		return rc;
	res->u.freebusy.blocks = mb__ar(r, (size_t)(l.n ? l.n : 1) * sizeof(struct mb_busy_block));
	if (!res->u.freebusy.blocks)
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < l.n; i++) {
		res->u.freebusy.blocks[i].start = l.a[i].start;
		res->u.freebusy.blocks[i].end = l.a[i].end;
		res->u.freebusy.blocks[i].status = l.a[i].busy;
	}
	res->u.freebusy.n = l.n;
	return 0;
}

int mb__op_create_contact(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	struct mb_prop props[MB_PROTO_MAX_PROPS + 1], rest[MB_PROTO_MAX_PROPS + 1];
	uint16_t n = 0, nrest;
	struct mb_msg_in in;
	for (uint16_t i = 0; i < op->u.create_contact.n; i++)
		if (op->u.create_contact.props[i].tag != MB_PR_MESSAGE_CLASS)
			props[n++] = op->u.create_contact.props[i];
	props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Contact");
	mb__msg_in_from_props(&in, props, n, rest, &nrest, mb_wall_ms());
	in.flags = MB_MSGFLAG_READ;
	in.appointment = false;
	int rc = mb__txn_begin(w);
	if (rc)
		return rc;
	rc = mb_schema_msg_add(w->schema, r->sess->mailbox, MB_FID_CONTACTS, &in, w->tmp,
			       &res->u.saved.mid, &res->u.saved.cn);
	return mb__txn_end(w, r, rc, 0, 0);
}

int mb__op_list_contacts(struct dbw *w, struct req *r, struct mb_op *op, struct mb_op_reply *res)
{
	uint32_t max = op->u.list_contacts.max_rows;
	if (max > MB_PROTO_MAX_ROWS)
		max = MB_PROTO_MAX_ROWS;
	struct mid_list l = {mb__ar(r, (max ? max : 1) * sizeof(uint64_t)), 0, max,
			     op->u.list_contacts.start};
	struct mb_scan_pos pos;
	bool more = false;
	int rc = 0;
	if (!l.mids)
		return MB_ETOOBIG;
	memset(&pos, 0, sizeof(pos));
	if (max) {
		/* skip start rows, then take max (the scan's own count includes skipped) */
		uint64_t want = (uint64_t)op->u.list_contacts.start + max;
		rc = mb_schema_folder_scan(w->schema, r->sess->mailbox, MB_FID_CONTACTS, &pos,
					   want > UINT32_MAX ? UINT32_MAX : (uint32_t)want,
					   mb__collect_mid, &l, &more);
	}
	if (rc)
		return rc;
	uint16_t nc = sizeof(contact_cols) / sizeof(contact_cols[0]);
	if (mb__ar_rows(r, res, l.n, nc))
		return MB_ETOOBIG;
	for (uint32_t i = 0; i < l.n && !rc; i++) {
		struct mb_msg_rec rec;
		rc = mb__msg_row(w, r, r->sess->mailbox, l.mids[i], contact_cols, nc,
				 res->u.rows.vals + (size_t)i * nc, &rec);
	}
	res->u.rows.nrows = l.n;
	res->u.rows.more = more ? 1 : 0;
	return rc;
}
