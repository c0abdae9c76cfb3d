/* schema.c: mailbox tables over the storage engine (see schema.h): open and
 * close (the trees, created or upgraded), the mailbox record, folders.
 * Messages: schema_msg.c; scans: schema_scan.c; layouts: schema_int.h.
 * Invariants: see schema.h; every function leaves the trees consistent or
 * returns an error, after which the caller aborts the transaction. */
#include "core/error.h"
#include "store/schema_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const tree_names[] = {"mailboxes",	"folders",  "messages", "bodies",
					 "by_time",	"by_cn",    "calendar", "attachments",
					 "attach_data", "instances"};
#define NTREES 10
#define NTREES_V1 7 /* trees a database always had; the others appear on open */

int mb_schema_open(struct mb_db *db, bool create, struct mb_schema **out)
{
	struct mb_schema *s = calloc(1, sizeof(*s));
	struct mb_tree **slots[NTREES];
	int rc = 0;
	bool began = false;

	if (!s)
		return MB_ENOMEM;
	s->db = db;
	slots[0] = &s->mailboxes;
	slots[1] = &s->folders;
	slots[2] = &s->messages;
	slots[3] = &s->bodies;
	slots[4] = &s->by_time;
	slots[5] = &s->by_cn;
	slots[6] = &s->calendar;
	slots[7] = &s->attach;
	slots[8] = &s->attach_data;
	slots[9] = &s->instances;
	for (int i = 0; i < NTREES && !rc; i++) {
		rc = mb_tree_open(db, tree_names[i], 0, slots[i]);
		if (rc == MB_ENOTFOUND && (create || i >= NTREES_V1)) {
			if (!began) {
				rc = mb_db_begin(db);
				if (rc)
					break;
				began = true;
			}
			rc = mb_tree_open(db, tree_names[i], MB_TREE_CREATE, slots[i]);
		}
	}
	if (began) {
		if (rc)
			mb_db_abort(db);
		else
			rc = mb_db_commit(db);
	}
	if (rc) {
		mb_schema_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void mb_schema_close(struct mb_schema *s)
{
	if (!s)
		return;
	struct mb_tree *t[] = {s->mailboxes,   s->folders,  s->messages, s->bodies,
			       s->by_time,     s->by_cn,    s->calendar, s->attach,
			       s->attach_data, s->instances};
	for (int i = 0; i < NTREES; i++)
		if (t[i])
			mb_tree_close(t[i]);
	mb_val_free(&s->val);
	mb_val_free(&s->val2);
	mb_val_free(&s->val3);
	free(s);
}

struct mb_db *mb_schema_db(struct mb_schema *s) { return s->db; }

/* ---- mailbox ---- */

int mb__schema_mbx_get(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *r)
{
	uint8_t k[4];
	int rc = mb_tree_get(s->mailboxes, k, k_mbx(k, mailbox), &s->val);
	if (rc)
		return rc;
	if (s->val.len < MBX_LEN)
		return MB_ECORRUPT;
	const uint8_t *p = s->val.data;
	r->next_mid = rd64(p);
	r->next_cn = rd64(p + 8);
	r->next_folder = rd32(p + 16);
	r->nfolders = rd32(p + 20);
	return 0;
}

int mb__schema_mbx_put(struct mb_schema *s, uint32_t mailbox, const struct mb_mailbox_rec *r)
{
	uint8_t k[4], v[MBX_LEN];
	le64(v, r->next_mid);
	le64(v + 8, r->next_cn);
	le32(v + 16, r->next_folder);
	le32(v + 20, r->nfolders);
	return mb_tree_put(s->mailboxes, k, k_mbx(k, mailbox), v, sizeof(v), 0);
}

int mb_schema_mailbox_get(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *out)
{
	return mb__schema_mbx_get(s, mailbox, out);
}

bool mb_schema_mailbox_exists(struct mb_schema *s, uint32_t mailbox)
{
	struct mb_mailbox_rec r;
	return mb__schema_mbx_get(s, mailbox, &r) == 0;
}

int mb__schema_folder_put(struct mb_schema *s, uint32_t mailbox, const struct mb_folder_rec *f)
{
	uint8_t k[8], v[FOLDER_HDR + MB_PROTO_MAX_NAME];
	size_t nl = strnlen(f->name, MB_PROTO_MAX_NAME);
	le32(v, f->parent);
	le32(v + 4, f->count);
	le32(v + 8, f->unread);
	le32(v + 12, f->subfolders);
	le64(v + 16, f->cn);
	memcpy(v + FOLDER_HDR, f->name, nl);
	return mb_tree_put(s->folders, k, k_folder(k, mailbox, f->folder), v, FOLDER_HDR + nl, 0);
}

static int folder_parse(const uint8_t *p, size_t len, uint32_t folder, struct mb_folder_rec *f)
{
	if (len < FOLDER_HDR || len > FOLDER_HDR + MB_PROTO_MAX_NAME)
		return MB_ECORRUPT;
	f->folder = folder;
	f->parent = rd32(p);
	f->count = rd32(p + 4);
	f->unread = rd32(p + 8);
	f->subfolders = rd32(p + 12);
	f->cn = rd64(p + 16);
	memcpy(f->name, p + FOLDER_HDR, len - FOLDER_HDR);
	f->name[len - FOLDER_HDR] = '\0';
	return 0;
}

int mb_schema_folder_get(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			 struct mb_folder_rec *out)
{
	uint8_t k[8];
	int rc = mb_tree_get(s->folders, k, k_folder(k, mailbox, folder), &s->val2);
	if (rc)
		return rc;
	return folder_parse(s->val2.data, s->val2.len, folder, out);
}

static int folder_make(struct mb_schema *s, uint32_t mailbox, struct mb_mailbox_rec *m,
		       uint32_t number, uint32_t parent, const char *name)
{
	struct mb_folder_rec f;
	int rc;

	memset(&f, 0, sizeof(f));
	f.folder = number;
	f.parent = parent;
	snprintf(f.name, sizeof(f.name), "%s", name);
	rc = mb__schema_folder_put(s, mailbox, &f);
	if (rc)
		return rc;
	m->nfolders++;
	if (parent) {
		struct mb_folder_rec p;
		rc = mb_schema_folder_get(s, mailbox, parent, &p);
		if (rc)
			return rc;
		p.subfolders++;
		rc = mb__schema_folder_put(s, mailbox, &p);
	}
	return rc;
}

int mb_schema_mailbox_create(struct mb_schema *s, uint32_t mailbox, const char *owner)
{
	struct mb_mailbox_rec m = {1, 1, MB_FID_FIRST_USER, 0};
	static const struct {
		uint32_t n;
		const char *name;
	} wk[] = {{MB_FID_INBOX, "Inbox"},
		  {MB_FID_DELETED, "Deleted Items"},
		  {MB_FID_SENT, "Sent Items"},
		  {MB_FID_CALENDAR, "Calendar"},
		  {MB_FID_CONTACTS, "Contacts"}};
	int rc;

	(void)owner;
	if (mb_schema_mailbox_exists(s, mailbox))
		return MB_EEXIST;
	rc = folder_make(s, mailbox, &m, MB_FID_ROOT, 0, "Top of Information Store");
	for (size_t i = 0; i < sizeof(wk) / sizeof(wk[0]) && !rc; i++)
		rc = folder_make(s, mailbox, &m, wk[i].n, MB_FID_ROOT, wk[i].name);
	if (!rc)
		rc = mb__schema_mbx_put(s, mailbox, &m);
	return rc;
}

/* The mailbox record and the record of one of its folders. */
int mb__schema_mbx_folder_get(struct mb_schema *s, uint32_t mailbox, uint32_t folder,
			      struct mb_mailbox_rec *m, struct mb_folder_rec *f)
{
	int rc = mb__schema_mbx_get(s, mailbox, m);
	return rc ? rc : mb_schema_folder_get(s, mailbox, folder, f);
}

int mb_schema_folder_create(struct mb_schema *s, uint32_t mailbox, uint32_t parent,
			    const char *name, uint32_t *folder)
{
	struct mb_mailbox_rec m;
	struct mb_folder_rec p;
	int rc = mb__schema_mbx_folder_get(s, mailbox, parent, &m, &p);

	if (rc)
		return rc;
	uint32_t n = m.next_folder++;
	rc = folder_make(s, mailbox, &m, n, parent, name);
	if (!rc)
		rc = mb__schema_mbx_put(s, mailbox, &m);
	if (!rc && folder)
		*folder = n;
	return rc;
}

int mb_schema_folder_children(struct mb_schema *s, uint32_t mailbox, uint32_t parent,
			      uint32_t after_folder,
			      int (*cb)(void *arg, const struct mb_folder_rec *f), void *arg)
{
	struct mb_cursor *c;
	uint8_t lo[8], hi[8];
	int rc = mb_cursor_open(s->folders, &c);

	if (rc)
		return rc;
	k_folder(lo, mailbox, after_folder + 1);
	k_folder(hi, mailbox + 1, 0);
	rc = mb_cursor_range(c, lo, 8, mailbox == UINT32_MAX ? NULL : hi, 8);
	while (rc == 0) {
		const void *key;
		size_t kl;
		struct mb_folder_rec f;
		rc = mb_cursor_key(c, &key, &kl);
		if (rc)
			break;
		uint32_t num = mb_key_get_u32((const unsigned char *)key + 4);
		rc = mb_cursor_value(c, &s->val);
		if (rc)
			break;
		rc = folder_parse(s->val.data, s->val.len, num, &f);
		if (rc)
			break;
		if (f.parent == parent && cb(arg, &f))
			break;
		rc = mb_cursor_next(c);
	}
	mb_cursor_close(c);
	return rc == MB_ENOTFOUND ? 0 : rc;
}
