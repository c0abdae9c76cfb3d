/* init_fill.c: the workers of `mailbench init`: one thread per storage group
 * populates its mailboxes in bulk (or in transactions with --no-bulk): the
 * folders, then item k = 0, 1, ... (mail, appointments, contacts in a fixed
 * order), each from a seed of (init seed, mailbox, k).
 *
 * Invariants (see init.c): item k gets message id k, so a mailbox's next_mid
 * says how far it got; everything up to a commit is durable, and a worker
 * stops only after a commit (stop flag, another worker's failure).
 */
#include "config.h"

#include "cmd.h"
#include "core/options.h"
#include "core/content.h"
#include "core/error.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/topology.h"
#include "db/bulk.h"
#include "db/db.h"
#include "store/addrprops.h"
#include "proto/proto.h"
#include "core/mix.h"
#include "core/progress.h"
#include "store/pristine.h"
#include "store/schema.h"
#include "store/store.h"
#include "store/init_int.h"

#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define TXN_BYTES (2u << 20) /* bytes of bodies per bulk transaction */
#define DAY_MS (86400LL * 1000)

static void set_error(struct init_ctx *c, const char *fmt, const char *a, int rc)
{
	pthread_mutex_lock(&c->lock);
	if (!c->failed) {
		snprintf(c->errmsg, sizeof(c->errmsg), fmt, a, mb_strerror(rc));
		c->failed = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

/* Which folder item k of a mailbox goes to, and what kind it is. */
enum item_kind { IT_MAIL, IT_APPT, IT_CONTACT };
static void item_place(const struct plan *p, int k, uint32_t *folder, enum item_kind *kind)
{
	*kind = IT_MAIL;
	if (k < p->inbox) {
		*folder = MB_FID_INBOX;
		return;
	}
	k -= p->inbox;
	if (k < p->deleted) {
		*folder = MB_FID_DELETED;
		return;
	}
	k -= p->deleted;
	if (k < p->folders * p->per_folder) {
		*folder = MB_FID_FIRST_USER + (uint32_t)(k / p->per_folder);
		return;
	}
	k -= p->folders * p->per_folder;
	if (k < p->appts) {
		*folder = MB_FID_CALENDAR;
		*kind = IT_APPT;
		return;
	}
	*folder = MB_FID_CONTACTS;
	*kind = IT_CONTACT;
}

/* Write item k of user u's mailbox. Returns bytes of body written. */
static int write_item(struct init_ctx *c, struct mb_schema *s, const struct mb_topo_user *u, int k,
		      struct mb_buf *tmp, size_t *body_bytes)
{
	uint32_t folder;
	enum item_kind kind;
	uint64_t seed = mb_rng_mix(c->seed ^ ((uint64_t)u->mailbox << 32) ^ (uint64_t)k);
	char subject[96], name[128], email[128];
	struct mb_prop props[8 + MB_ADDR_SENDER_PROPS + MB_ADDR_RECIPIENT_PROPS];
	struct mb_addr addr_from, addr_to; /* the ids the address props point at */
	struct mb_bytes rcpt;
	uint16_t n = 0;
	char *body = NULL;
	size_t blen = 0;
	struct mb_msg_in in;
	int nusers = mb_topology_user_count(c->topo);
	int rc;
	struct mb_attach_in att[MB_MIX_MAX_ATTACH];
	char *att_data[MB_MIX_MAX_ATTACH] = {NULL};
	char att_name[MB_MIX_MAX_ATTACH][32];
	int natt = 0;
	size_t att_bytes = 0;

	item_place(&c->plan, k, &folder, &kind);
	memset(&in, 0, sizeof(in));
	mb_content_subject(seed, subject, sizeof(subject));
	if (kind == IT_MAIL) {
		const struct mb_topo_user *from =
		    mb_topology_user(c->topo, (int)(mb_rng_mix(seed + 1) % (uint64_t)nusers));
		if (c->nmix > 0) {
			/* a message of the scenario's mix: body and attachments of
			 * their own kinds, attachments as objects of their own */
			struct mb_mix_msg mp;
			mb_mix_draw(c->mix, c->nmix, seed + 6, &mp);
			blen = mp.body_len;
			body = malloc(blen);
			if (!body)
				return MB_ENOMEM;
			mb_content_fill_kind(mp.body, seed, body, blen);
			for (natt = 0; natt < mp.nattach; natt++) {
				att_data[natt] = malloc(mp.attach_len[natt]);
				if (!att_data[natt]) {
					rc = MB_ENOMEM;
					goto out;
				}
				mb_content_fill_kind(mp.attach_kind, seed + 100 + (uint64_t)natt,
						     att_data[natt], mp.attach_len[natt]);
				snprintf(att_name[natt], sizeof(att_name[natt]), "attachment%d.%s",
					 natt + 1, mb_content_kind_ext(mp.attach_kind));
				att[natt].kind = (uint8_t)mp.attach_kind;
				att[natt].name = mb_str(att_name[natt]);
				att[natt].data = att_data[natt];
				att[natt].len = (uint32_t)mp.attach_len[natt];
				att_bytes += mp.attach_len[natt];
			}
			in.attach = att;
			in.nattach = (uint16_t)natt;
		} else {
			rc = mb_content_body(seed, c->plan.avg_body, &body, &blen);
			if (rc)
				return rc;
		}
		props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Note");
		props[n++] = mb_prop_str(MB_PR_SUBJECT, subject);
		props[n++] = mb_prop_str(MB_PR_SENDER_NAME, from->name);
		props[n++] = mb_prop_str(MB_PR_DISPLAY_TO, u->name);
		in.time = c->now_ms - (int64_t)(mb_rng_mix(seed + 2) % (uint64_t)(30 * DAY_MS));
		/* read: the runs measure a day's steady state, in which process
		 * inbox reads the day's new mail; unread initialised mail would
		 * be read once, at each user's first process inbox, a transient
		 * a run of minutes weights far more than a day does
		 * (MB_INIT_VERSION; docs/workload.md, "Initialised mail is
		 * read") */
		in.flags = MB_MSGFLAG_READ;
		/* delivered mail: MAPI's incoming-message address properties
		 * (addrprops.h), the recipient named (MB_INIT_VERSION 3) */
		mb_addr_build(&addr_from, from->name);
		mb_addr_build(&addr_to, u->name);
		n = (uint16_t)(n + mb_addr_sender_props(&addr_from, in.time, props + n));
		n = (uint16_t)(n + mb_addr_recipient_props(&addr_to, true, props + n));
	} else if (kind == IT_APPT) {
		rc = mb_content_body(seed, 2048, &body, &blen);
		if (rc)
			return rc;
		/* within two weeks either side of now, on half hours, 30..120 min */
		int64_t slot = (int64_t)(mb_rng_mix(seed + 4) % (28 * 48)) - 14 * 48;
		int64_t base = c->now_ms - c->now_ms % (30 * 60 * 1000);
		in.start = base + slot * 30 * 60 * 1000;
		in.end = in.start + (int64_t)(1 + mb_rng_mix(seed + 5) % 4) * 30 * 60 * 1000;
		in.busy = 2;
		in.appointment = true;
		in.time = c->now_ms - DAY_MS;
		in.flags = MB_MSGFLAG_READ;
		props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Appointment");
		props[n++] = mb_prop_str(MB_PR_SUBJECT, subject);
		props[n++] = mb_prop_str(MB_PR_LOCATION, "Room 1");
		props[n++] = mb_prop_i64(MB_PR_START_DATE, in.start);
		props[n++] = mb_prop_i64(MB_PR_END_DATE, in.end);
		props[n++] = mb_prop_i64(MB_PR_BUSY_STATUS, in.busy);
	} else {
		snprintf(name, sizeof(name), "%s", subject);
		snprintf(email, sizeof(email), "contact%d.%u@example.org", k, u->mailbox);
		in.time = c->now_ms - DAY_MS;
		in.flags = MB_MSGFLAG_READ;
		props[n++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Contact");
		props[n++] = mb_prop_str(MB_PR_DISPLAY_NAME, name);
		props[n++] = mb_prop_str(MB_PR_EMAIL_ADDRESS, email);
	}
	(void)rcpt;
	in.props = props;
	in.nprops = n;
	in.body = body;
	in.body_len = (uint32_t)blen;
	uint64_t mid;
	rc = mb_schema_msg_add(s, u->mailbox, folder, &in, tmp, &mid, NULL);
	if (!rc && mid != (uint64_t)k + 1)
		rc = MB_ECORRUPT; /* the resume invariant broke */
	*body_bytes = blen + att_bytes;
out:
	free(body);
	for (int i = 0; i < MB_MIX_MAX_ATTACH; i++)
		free(att_data[i]);
	return rc;
}

/* Commit the open transaction, or abort it when rc is an error. */
static int txn_close(struct mb_db *db, int rc)
{
	if (rc) {
		mb_db_abort(db);
		return rc;
	}
	return mb_db_commit(db);
}

/* bulk: inside a bulk build of the database (no transactions: the rows
 * are staged and appended when the mailbox is complete, see db/bulk.h) */
static int populate_mailbox(struct init_ctx *c, struct mb_schema *s, const struct mb_topo_user *u,
			    struct mb_buf *tmp, struct mb_bulk *bulk)
{
	struct mb_db *db = mb_schema_db(s);
	struct mb_mailbox_rec m;
	int rc;

	if (mb_schema_mailbox_get(s, u->mailbox, &m) == MB_ENOTFOUND) {
		rc = bulk ? 0 : mb_db_begin(db);
		if (rc)
			return rc;
		rc = mb_schema_mailbox_create(s, u->mailbox, u->name);
		for (int f = 0; f < c->plan.folders && !rc; f++) {
			char name[32];
			uint32_t num;
			snprintf(name, sizeof(name), "Folder %02d", f + 1);
			rc = mb_schema_folder_create(s, u->mailbox, MB_FID_ROOT, name, &num);
			if (!rc && num != MB_FID_FIRST_USER + (uint32_t)f)
				rc = MB_ECORRUPT;
		}
		rc = bulk ? rc : txn_close(db, rc);
		if (rc)
			return rc;
		m.next_mid = 1;
	}
	int k = (int)m.next_mid - 1;
	if (k > 0)
		atomic_fetch_add(&c->items_done, (uint64_t)k);
	while (k < c->plan.items) {
		if (*c->stop || c->failed)
			return MB_EAGAIN;
		size_t txn_bytes = 0;
		rc = bulk ? 0 : mb_db_begin(db);
		if (rc)
			return rc;
		int start = k;
		while (k < c->plan.items && txn_bytes < TXN_BYTES && !rc) {
			size_t b = 0;
			rc = write_item(c, s, u, k, tmp, &b);
			txn_bytes += b;
			k++;
		}
		rc = bulk ? rc : txn_close(db, rc);
		if (rc)
			return rc;
		atomic_fetch_add(&c->items_done, (uint64_t)(k - start));
		atomic_fetch_add(&c->bytes_done, (uint64_t)txn_bytes);
	}
	return bulk ? mb_bulk_flush(bulk) : 0;
}

/* A database none of whose mailboxes exists yet is built in bulk (every
 * page written once; an interrupted build leaves it empty and is done
 * again on resume); one with some (an earlier incremental run) continues
 * mailbox by mailbox in transactions. */
static bool db_is_empty(struct init_ctx *c, struct mb_schema *s, int d)
{
	for (int i = 0; i < mb_topology_user_count(c->topo); i++) {
		const struct mb_topo_user *u = mb_topology_user(c->topo, i);
		if (u->db == d && mb_schema_mailbox_exists(s, u->mailbox))
			return false;
	}
	return true;
}

void *mb__init_sg_worker(void *arg)
{
	struct sg_job *j = arg;
	struct init_ctx *c = j->ctx;
	const struct mb_topo_info *info = mb_topology_info(c->topo);
	char dir[4200], logdir[4200];
	struct mb_sg_options o;
	struct mb_sg *sg = NULL;
	struct mb_buf *tmp = NULL;
	int rc;

	mb_topology_db_path(c->data, j->sg, 1, dir, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	mb_topology_log_dir(c->data, info->log_dir, j->sg, logdir, sizeof(logdir));
	mb_sg_options_init(&o);
	o.dir = dir;
	o.log_dir = logdir;
	o.cache = c->cache;
	o.create = true;
	rc = mb_sg_open(&o, &sg);
	if (rc) {
		set_error(c, "cannot open storage group %s: %s", dir, rc);
		return NULL;
	}
	rc = mb_buf_create(1 << 20, &tmp);
	for (int d = 1; d <= info->databases && !rc && !c->failed && !*c->stop; d++) {
		if (mb_topology_db_sg(c->topo, d) != j->sg)
			continue;
		char name[32];
		struct mb_db *db;
		struct mb_schema *s;
		snprintf(name, sizeof(name), "db%02d.mdb", d);
		rc = mb_db_open(sg, name, (uint32_t)c->page_size, MB_DB_CREATE, &db);
		if (rc) {
			char why[512];
			mb_db_open_errmsg(rc, why, sizeof(why));
			set_error(c, "cannot open database %s (%s)", why, rc);
			break;
		}
		rc = mb_schema_open(db, true, &s);
		if (rc) {
			set_error(c, "cannot create the tables of %s: %s", name, rc);
			mb_db_close(db);
			break;
		}
		struct mb_bulk *bulk = NULL;
		int bulk_done = 0;
		if (!c->no_bulk && db_is_empty(c, s, d)) {
			rc = mb_bulk_begin(db, &bulk);
			if (rc) {
				set_error(c, "cannot start the bulk build of %s: %s", name, rc);
				mb_schema_close(s);
				mb_db_close(db);
				break;
			}
		}
		for (int i = 0; i < mb_topology_user_count(c->topo) && !rc; i++) {
			const struct mb_topo_user *u = mb_topology_user(c->topo, i);
			if (u->db != d)
				continue;
			rc = populate_mailbox(c, s, u, tmp, bulk);
			if (rc == MB_EAGAIN)
				break;
			if (rc) {
				char what[160];
				snprintf(what, sizeof(what), "%s (%s: %s)", u->name, name,
					 mb_db_errmsg(db));
				set_error(c, "cannot populate mailbox %s: %s", what, rc);
				break;
			}
			/* in bulk, a mailbox counts as done when its database is */
			if (bulk)
				bulk_done++;
			else
				atomic_fetch_add(&c->mailboxes_done, 1);
		}
		if (bulk && rc) {
			mb_bulk_abort(bulk);
		} else if (bulk) {
			rc = mb_bulk_finish(bulk);
			if (rc)
				set_error(c, "cannot finish the bulk build of %s: %s", name, rc);
			else
				atomic_fetch_add(&c->mailboxes_done, bulk_done);
		}
		mb_schema_close(s);
		mb_db_close(db);
	}
	mb_buf_destroy(tmp);
	rc = mb_sg_close(sg);
	if (rc)
		set_error(c, "closing storage group %s: %s", dir, rc);
	return NULL;
}
