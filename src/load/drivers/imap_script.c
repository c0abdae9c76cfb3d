/* drivers/imap_script.c: the imap target's steps as scripts of IMAP
 * commands on connection 0, one in flight at a time: step_next runs the
 * script's next phase on each tagged reply (phase 0 is the start), ending
 * the step through mb__imap_finish; in cached mode local_step serves
 * listings and reads from the replica without the wire.  The table of
 * action -> commands is docs/imap-target.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "load/drivers/imap_int.h"

/* The first phase of a step on folder f: SELECT it unless it is the
 * selected folder.  false with *rc what to return (SELECT sent, or the
 * folder is not there); true once f is selected (go on in phase 1). */
static bool select_unless_selected(struct mb_tuser *u, struct imap_user *iu, int f, int ok, int *rc)
{
	if (iu->phase == 0) {
		iu->phase = 1;
		if (iu->selected != f) {
			*rc = mb__imap_select_folder(u, f);
			return false;
		}
		ok = 1;
	}
	if (!ok) {
		*rc = MB_ENOTFOUND;
		return false;
	}
	iu->selected = f;
	return true;
}

/* Start (phase 0) or continue a step after the tagged reply of its last
 * command (ok: the reply was OK).  Returns 0, or < 0 to fail the step. */
int mb__imap_step_next(struct mb_tuser *u, int ok, const struct mb_imap_resp *r)
{
	struct imap_user *iu = u->priv;
	const struct mb_step *s = &iu->s;
	char set[4096], name[64];
	int sel = 0; /* what a SELECT phase returns */
	(void)r;
	switch (s->kind) {
	case MB_STEP_LIST_FOLDER:
	case MB_STEP_CALENDAR_RANGE:
	case MB_STEP_LIST_CONTACTS: {
		int f = s->kind == MB_STEP_CALENDAR_RANGE  ? MB_FOLDER_CALENDAR
			: s->kind == MB_STEP_LIST_CONTACTS ? MB_FOLDER_CONTACTS
							   : s->folder;
		if (iu->phase == 0)
			iu->n = 0;
		if (iu->phase <= 1) {
			if (!select_unless_selected(u, iu, f, ok, &sel))
				return sel;
			iu->count = iu->exists;
			iu->phase = 2;
			if (!iu->exists) {
				if (s->flags & MB_STEP_F_DELETED_COUNT)
					goto deleted_count;
				return 1;
			}
			uint32_t rows = s->max_rows ? s->max_rows : 20;
			if (rows > ROWS_MAX)
				rows = ROWS_MAX;
			uint32_t first = iu->exists > rows ? iu->exists - rows + 1 : 1;
			if (s->kind == MB_STEP_LIST_CONTACTS && s->start_row)
				first =
				    s->start_row + 1 <= iu->exists ? s->start_row + 1 : iu->exists;
			return mb__imap_cmd(u, OP_FETCH, "FETCH %u:* (UID FLAGS ENVELOPE)", first);
		}
		if (iu->phase == 2) {
			if (!ok)
				return MB_EPROTO;
			if (s->flags & MB_STEP_F_DELETED_COUNT) {
			deleted_count:
				iu->phase = 3;
				return mb__imap_cmd(u, OP_STATUS,
						    "STATUS \"Deleted Items\" (MESSAGES)");
			}
			return 1;
		}
		return 1;
	}
	case MB_STEP_READ:
	case MB_STEP_OPEN_ATTACHMENT: {
		int f = (int)(s->item >> 32);
		if (iu->phase <= 1) {
			if (!select_unless_selected(u, iu, f, ok, &sel))
				return sel;
			iu->phase = 2;
			/* BODY[] sets \Seen on the server: the read and the mark in one */
			return mb__imap_cmd(u, OP_FETCH, "UID FETCH %u (%s)", (uint32_t)s->item,
					    (s->flags & MB_STEP_F_MARK_READ) ? "BODY[]"
									     : "BODY.PEEK[]");
		}
		return ok ? 1 : MB_ENOTFOUND;
	}
	case MB_STEP_MARK_READ:
		if (iu->phase == 0) {
			iu->phase = 1;
			mb__imap_uidset(iu->ids, iu->nids, set, sizeof(set));
			if (!iu->nids) {
				iu->ids[0] = s->item;
				iu->nids = 1;
				mb__imap_uidset(iu->ids, 1, set, sizeof(set));
			}
			return mb__imap_cmd(u, OP_STORE, "UID STORE %s +FLAGS.SILENT (\\Seen)",
					    set);
		}
		return ok ? 1 : MB_EPROTO;
	case MB_STEP_MOVE:
		/* ids -> Deleted Items, more -> dst; the folder of the ids selected */
		if (iu->phase <= 1) {
			if (!select_unless_selected(u, iu, s->folder, ok, &sel))
				return sel;
			iu->phase = 2;
			if (iu->nids) {
				mb__imap_uidset(iu->ids, iu->nids, set, sizeof(set));
				return mb__imap_cmd(u, OP_MOVE, "UID MOVE %s \"Deleted Items\"",
						    set);
			}
			ok = 1;
		}
		if (iu->phase == 2) {
			if (!ok)
				return MB_EPROTO;
			iu->phase = 3;
			if (iu->nmore) {
				mb__imap_uidset(iu->more, iu->nmore, set, sizeof(set));
				mb__imap_folder_name(s->dst, name, sizeof(name));
				return mb__imap_cmd(u, OP_MOVE, "UID MOVE %s %s", set, name);
			}
			return 1;
		}
		return ok ? 1 : MB_EPROTO;
	case MB_STEP_DELETE:
		if (iu->phase <= 1) {
			if (!select_unless_selected(u, iu, s->folder, ok, &sel))
				return sel;
			if (!iu->nids)
				return 1;
			for (int i = 0; i < iu->nids; i++) {
				uint64_t mid = mb__imap_map_get(iu, iu->ids[i]);
				if (mid)
					mb_target_ack(u, '~', u->idx + 1, &mid, 1);
			}
			iu->phase = 2;
			mb__imap_uidset(iu->ids, iu->nids, set, sizeof(set));
			return mb__imap_cmd(u, OP_STORE, "UID STORE %s +FLAGS.SILENT (\\Deleted)",
					    set);
		}
		if (iu->phase == 2) {
			if (!ok)
				return MB_EPROTO;
			iu->phase = 3;
			mb__imap_uidset(iu->ids, iu->nids, set, sizeof(set));
			if (iu->has_uidplus)
				return mb__imap_cmd(u, OP_EXPUNGE, "UID EXPUNGE %s", set);
			return mb__imap_cmd(u, OP_EXPUNGE, "EXPUNGE");
		}
		if (!ok)
			return MB_EPROTO;
		for (int i = 0; i < iu->nids; i++) {
			uint64_t mid = mb__imap_map_get(iu, iu->ids[i]);
			if (mid)
				mb_target_ack(u, '-', u->idx + 1, &mid, 1);
		}
		return 1;
	case MB_STEP_SEND:
		if (iu->phase == 0) {
			/* the message and its recipients were built in step() */
			if (!iu->nrcpt || !iu->msg)
				return MB_EINVAL;
			if (iu->c1 == S_READY)
				return mb__imap_smtp_envelope(u);
			if (iu->c1 == S_DOWN) {
				iu->c1 = S_CONNECTING;
				return mb_target_connect(u, 1);
			}
			return 0; /* connecting: continues at AUTH's reply */
		}
		/* phase 1: APPEND to Sent Items answered; a reply or forward
		 * then flags its original as Thunderbird does (\Answered,
		 * RFC 3501 2.3.2; the $Forwarded keyword of IANA's IMAP
		 * keywords registry): phase 2 its folder selected, phase 3
		 * the STORE answered */
		if (!ok)
			return iu->phase == 2 ? MB_ENOTFOUND : MB_EPROTO;
		if (!s->item || iu->phase == 3)
			return 1;
		if (iu->phase == 1 && iu->selected != (int)(s->item >> 32)) {
			iu->phase = 2;
			return mb__imap_select_folder(u, (int)(s->item >> 32));
		}
		iu->selected = (int)(s->item >> 32);
		iu->phase = 3;
		return mb__imap_cmd(u, OP_STORE, "UID STORE %u +FLAGS.SILENT (%s)",
				    (uint32_t)s->item,
				    s->msg_kind == MB_MSG_FORWARD ? "$Forwarded" : "\\Answered");
	case MB_STEP_CREATE_APPOINTMENT:
	case MB_STEP_CREATE_CONTACT:
		if (iu->phase == 0) {
			int appt = s->kind == MB_STEP_CREATE_APPOINTMENT;
			int rc = mb__imap_build_msg(u, appt ? MB_MAILMSG_APPOINTMENT
							    : MB_MAILMSG_CONTACT);
			if (rc)
				return rc;
			iu->phase = 1;
			return mb__imap_append(u, appt ? MB_FOLDER_CALENDAR : MB_FOLDER_CONTACTS,
					       "\\Seen");
		}
		return ok ? 1 : MB_EPROTO;
	case MB_STEP_KEEPALIVE:
		if (iu->phase == 0) {
			iu->phase = 1;
			return mb__imap_cmd(u, OP_NOOP, "NOOP");
		}
		return 1;
	case MB_STEP_CLOSE_VIEW:
		return 1;
	case MB_STEP_LOGOFF:
		if (iu->phase == 0) {
			iu->phase = 1;
			return mb__imap_cmd(u, OP_LOGOUT, "LOGOUT");
		}
		mb_target_logged_off(u);
		iu->c0 = C_DOWN; /* the server closes; no step until the next logon */
		return 1;
	case MB_STEP_SYNC: {
		/* every folder in turn: SELECT (QRESYNC), then the bodies of new UIDs */
		int nf = mb__imap_nfolders(iu);
		if (iu->phase == 0) {
			iu->sync_folder = 0;
			iu->phase = 1;
			return mb__imap_select_folder(u, 0);
		}
		if (!ok)
			return MB_EPROTO;
		struct folder_rep *fr = &iu->rep[iu->sync_folder];
		if (iu->phase == 1) {
			iu->selected = iu->sync_folder;
			if (fr->uidvalidity != iu->sel_uidvalidity) {
				fr->n = 0;
				fr->maxuid = 0;
			}
			fr->uidvalidity = iu->sel_uidvalidity;
			iu->phase = 2;
			return mb__imap_cmd(u, OP_FETCH,
					    "UID FETCH %u:* (UID FLAGS ENVELOPE BODY.PEEK[])",
					    fr->maxuid + 1);
		}
		/* phase 2 done: the folder is in sync */
		fr->modseq = iu->sel_modseq;
		fr->synced = 1;
		fr->dirty = 0;
		if (++iu->sync_folder < nf) {
			iu->phase = 1;
			return mb__imap_select_folder(u, iu->sync_folder);
		}
		if (!iu->synced_once) /* the first download of the session */
			u->st->n.first_syncs++;
		iu->synced_once = 1;
		u->st->n.syncs++;
		return 1;
	}
	case MB_STEP_FREEBUSY:
	default:
		return MB_EUNSUPPORTED;
	}
}

/* Cached mode: listings and reads served by the replica. */
int mb__imap_local_step(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	const struct mb_step *s = &iu->s;
	if (s->kind != MB_STEP_LIST_FOLDER && s->kind != MB_STEP_CALENDAR_RANGE &&
	    s->kind != MB_STEP_LIST_CONTACTS && s->kind != MB_STEP_READ)
		return 0; /* changes go to the server */
	int f = s->kind == MB_STEP_CALENDAR_RANGE  ? MB_FOLDER_CALENDAR
		: s->kind == MB_STEP_LIST_CONTACTS ? MB_FOLDER_CONTACTS
		: s->kind == MB_STEP_READ	   ? (int)(s->item >> 32)
						   : s->folder;
	if (!iu->rep || f < 0 || f >= iu->nrep || !iu->rep[f].synced)
		return 0;
	struct folder_rep *fr = &iu->rep[f];
	if (s->kind == MB_STEP_READ) {
		if (s->flags & MB_STEP_F_MARK_READ)
			return 0; /* a change: uploaded */
		return 1;
	}
	int rows = (int)(s->max_rows ? s->max_rows : 20);
	if (rows > fr->n)
		rows = fr->n;
	iu->n = 0;
	for (int i = fr->n - rows; i < fr->n; i++) {
		iu->rids[iu->n] = ((uint64_t)f << 32) | fr->uid[i];
		iu->rflags[iu->n] = fr->seen[i] ? MB_ITEM_READ : 0;
		iu->rwho[iu->n] = fr->who[i];
		iu->n++;
	}
	iu->count = (uint32_t)fr->n;
	iu->count2 = iu->nrep > MB_FOLDER_DELETED ? (uint32_t)iu->rep[MB_FOLDER_DELETED].n : 0;
	return 1;
}

int mb__imap_step_run(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	iu->phase = 0;
	iu->c0 = C_CMD;
	if (u->env->cached && iu->synced_once && mb__imap_local_step(u) == 1) {
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		mb__imap_finish(u, 0);
		return 0;
	}
	int rc = mb__imap_step_next(u, 1, NULL);
	if (rc == 1) {
		if (iu->c0 != C_DOWN)
			iu->c0 = C_READY;
		mb__imap_finish(u, 0);
		return 0;
	}
	return rc;
}
