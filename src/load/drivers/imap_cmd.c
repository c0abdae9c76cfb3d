/* drivers/imap_cmd.c: the imap target's bottom layer, under imap.c (the
 * connections and responses), imap_script.c (the steps) and imap_smtp.c
 * (the submission): a tagged command on connection 0, IDLE between steps,
 * SELECT of a folder, APPEND, UID sets, folder names, the uid -> message
 * id map, and the end of a step.  Invariant: nothing here calls up into
 * the other three files (tests/integration/layers.sh).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "load/drivers/imap_int.h"

int mb__imap_append(struct mb_tuser *u, int folder, const char *flags)
{
	struct imap_user *iu = u->priv;
	char name[64], head[256];
	mb__imap_folder_name(folder, name, sizeof(name));
	snprintf(iu->tag, sizeof(iu->tag), "b%u", ++iu->tagno);
	int n = snprintf(head, sizeof(head), "%s APPEND %s (%s) {%zu+}\r\n", iu->tag, name, flags,
			 iu->msglen);
	iu->op = OP_APPEND;
	mb_target_request(u, 0, OP_APPEND, 1);
	int rc = mb_target_write(u, 0, head, (size_t)n);
	if (!rc)
		rc = mb_target_write(u, 0, iu->msg, iu->msglen);
	if (!rc)
		rc = mb_target_write(u, 0, "\r\n", 2);
	return rc;
}

uint64_t mb__imap_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

int mb__imap_nfolders(const struct imap_user *iu)
{
	int n = NFIXED + iu->nuser_folders;
	return n > FOLDERS_MAX ? FOLDERS_MAX : n;
}

void mb__imap_folder_name(int f, char *buf, size_t len)
{
	static const char *const fixed[NFIXED] = {"INBOX", "\"Deleted Items\"", "\"Sent Items\"",
						  "Calendar", "Contacts"};
	if (f >= 0 && f < NFIXED)
		snprintf(buf, len, "%s", fixed[f]);
	else
		snprintf(buf, len, "\"Folder %02d\"", f - NFIXED + 1);
}

void mb__imap_map_put(struct imap_user *iu, uint64_t key, uint64_t mid)
{
	for (unsigned i = 0; i < MAP_MAX; i++)
		if (iu->map_key[i] == key) {
			iu->map_mid[i] = mid;
			return;
		}
	iu->map_key[iu->map_next] = key;
	iu->map_mid[iu->map_next] = mid;
	iu->map_next = (iu->map_next + 1) % MAP_MAX;
}

uint64_t mb__imap_map_get(const struct imap_user *iu, uint64_t key)
{
	for (unsigned i = 0; i < MAP_MAX; i++)
		if (iu->map_key[i] == key)
			return iu->map_mid[i];
	return 0;
}

/* Send one tagged command on conn 0. */
int mb__imap_cmd(struct mb_tuser *u, int op, const char *fmt, ...)
{
	struct imap_user *iu = u->priv;
	char buf[8192];
	va_list ap;
	snprintf(iu->tag, sizeof(iu->tag), "b%u", ++iu->tagno);
	int n = snprintf(buf, sizeof(buf), "%s ", iu->tag);
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 2, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)(n + m) >= sizeof(buf) - 2)
		return MB_ETOOBIG;
	n += m;
	buf[n++] = '\r';
	buf[n++] = '\n';
	iu->op = op;
	mb_target_request(u, 0, op, 1);
	return mb_target_write(u, 0, buf, (size_t)n);
}

/* A UID set "1,5,7" of the ids (of one folder) into buf. */
void mb__imap_uidset(const uint64_t *ids, int n, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (int i = 0; i < n && o + 16 < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? "," : "", (uint32_t)ids[i]);
}

void mb__imap_finish(struct mb_tuser *u, int status)
{
	struct imap_user *iu = u->priv;
	struct mb_step_result res;
	memset(&res, 0, sizeof(res));
	res.status = status;
	res.n = iu->n;
	res.ids = iu->rids;
	res.flags = iu->rflags;
	res.who = iu->rwho;
	res.count = iu->count;
	res.count2 = iu->count2;
	res.done = status ? 0 : (uint32_t)iu->nids;
	res.local = u->env->cached && iu->synced_once &&
		    (iu->s.kind == MB_STEP_LIST_FOLDER || iu->s.kind == MB_STEP_READ ||
		     iu->s.kind == MB_STEP_CALENDAR_RANGE || iu->s.kind == MB_STEP_LIST_CONTACTS);
	iu->stepping = 0;
	free(iu->msg);
	iu->msg = NULL;
	/* cached mode: an uploaded change makes the folders it touched dirty */
	if (iu->rep && !status) {
		int touched[3] = {-1, -1, -1};
		switch (iu->s.kind) {
		case MB_STEP_SEND:
			touched[0] = MB_FOLDER_SENT;
			break;
		case MB_STEP_CREATE_APPOINTMENT:
			touched[0] = MB_FOLDER_CALENDAR;
			break;
		case MB_STEP_CREATE_CONTACT:
			touched[0] = MB_FOLDER_CONTACTS;
			break;
		case MB_STEP_MOVE:
			touched[2] = iu->s.dst;
			/* fall through */
		case MB_STEP_DELETE:
		case MB_STEP_MARK_READ:
			touched[0] = iu->s.folder;
			touched[1] = MB_FOLDER_DELETED;
			break;
		default:
			break;
		}
		for (int i = 0; i < 3; i++)
			if (touched[i] >= 0 && touched[i] < iu->nrep)
				iu->rep[touched[i]].dirty = 1;
	}
	mb_target_step_done(u, &res);
}

/* Go IDLE between steps when the server has it and INBOX is selected. */
void mb__imap_maybe_idle(struct mb_tuser *u)
{
	struct imap_user *iu = u->priv;
	if (iu->c0 == C_READY && iu->has_idle && iu->selected == MB_FOLDER_INBOX && !iu->stepping) {
		iu->c0 = C_IDLE_START;
		if (mb__imap_cmd(u, OP_IDLE, "IDLE"))
			mb_target_lost(u);
	}
}

int mb__imap_select_folder(struct mb_tuser *u, int f)
{
	struct imap_user *iu = u->priv;
	char name[64];
	mb__imap_folder_name(f, name, sizeof(name));
	iu->selected = -1;
	iu->exists = 0;
	if (iu->qresync && u->env->cached && iu->rep && f < iu->nrep && iu->rep[f].synced &&
	    iu->rep[f].uidvalidity)
		return mb__imap_cmd(u, OP_SELECT, "SELECT %s (QRESYNC (%u %llu))", name,
				    iu->rep[f].uidvalidity, (unsigned long long)iu->rep[f].modseq);
	return mb__imap_cmd(u, OP_SELECT, "SELECT %s%s", name, iu->qresync ? " (CONDSTORE)" : "");
}
