/* cmd_imap.c: the commands against an external IMAP target:
 *
 *   mailbench init --target imap://HOST:PORT [--submit smtp://HOST:PORT] --data DIR
 *     writes DIR/accounts.json (users, passwords, distribution lists; kept
 *     when present, e.g. from `mailbench lab`), DIR/dovecot-passwd and
 *     DIR/postfix-virtual + DIR/postfix-vmailbox for the operator to
 *     install, and fills every mailbox through APPEND as the scenario says
 *     (inbox, Deleted Items, user folders, Calendar as iCalendar items,
 *     Contacts as vCards).  Resumable: DIR/imap-init.state records the
 *     finished mailboxes; a mailbox started but not finished is completed
 *     item by item (each item's Message-ID names it, so none is appended
 *     twice).  A progress bar with the ETA on stderr.
 *
 *   mailbench check --target imap://HOST:PORT --ack-log FILE --data DIR
 *     reads every acknowledged mailbox back (every folder's Message-IDs)
 *     and reports each acknowledged message missing; exit 1 if any.
 *
 * `init` and `check` without --target imap:// are the embedded store's;
 * main.c runs these rows instead when --target is an imap:// URL
 * (mb_cmd_imap_target).
 */
#include "config.h"

#include "cmd.h"
#include "core/options.h"
#include "core/progress.h"
#include "core/rng.h"
#include "core/content.h"
#include "core/error.h"
#include "core/scenario.h"
#include "core/sampler.h"
#include "core/topology.h"
#include "core/tls.h"
#include "lab/lab.h"
#include "lab/labcmd.h"
#include "lab/mailc.h"
#include "load/mailmsg.h"
#include "store/store.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The folders of a provisioned mailbox (Outlook's names). */
#define F_DELETED "Deleted Items"
#define F_SENT "Sent Items"
#define F_CALENDAR "Calendar"
#define F_CONTACTS "Contacts"

int mb_cmd_imap_target(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *v = !strncmp(argv[i], "--target=", 9)	       ? argv[i] + 9
				: !strcmp(argv[i], "--target") && i + 1 < argc ? argv[i + 1]
									       : "";
		if (!strncmp(v, "imap://", 7) || !strncmp(v, "imaps://", 8))
			return 1;
	}
	return 0;
}

/* ---- the plan of one mailbox ---- */

struct plan {
	int inbox, deleted, folders, per_folder, appts, contacts;
	size_t avg_body;
	int items;
};

static void plan_of(const struct mb_topo_info *in, struct plan *p)
{
	p->inbox = in->mailbox.inbox_messages;
	p->deleted = in->mailbox.deleted_items_messages;
	p->folders = in->mailbox.new_folders;
	p->per_folder = in->mailbox.messages_per_folder;
	p->appts = in->mailbox.calendar_appointments;
	p->contacts = in->mailbox.contacts;
	p->avg_body = (size_t)in->mailbox.avg_message_kb * 1024;
	p->items = mb_mailbox_profile_items(&in->mailbox);
}

/* Item k: its folder and kind. */
static void place(const struct plan *p, int k, char *folder, size_t flen,
		  enum mb_mailmsg_kind *kind, int *seen)
{
	*kind = MB_MAILMSG_MAIL;
	*seen = 0;
	if (k < p->inbox) {
		snprintf(folder, flen, "INBOX");
		*seen = k % 3 != 0; /* a third unread */
		return;
	}
	k -= p->inbox;
	if (k < p->deleted) {
		snprintf(folder, flen, F_DELETED);
		*seen = 1;
		return;
	}
	k -= p->deleted;
	if (k < p->folders * p->per_folder) {
		snprintf(folder, flen, "Folder %02d", k / p->per_folder + 1);
		*seen = 1;
		return;
	}
	k -= p->folders * p->per_folder;
	if (k < p->appts) {
		snprintf(folder, flen, F_CALENDAR);
		*kind = MB_MAILMSG_APPOINTMENT;
		*seen = 1;
		return;
	}
	snprintf(folder, flen, F_CONTACTS);
	*kind = MB_MAILMSG_CONTACT;
	*seen = 1;
}

/* ---- Message-IDs present in a folder ---- */

struct idset {
	char **ids;
	size_t n, cap;
};

static void idset_add(struct idset *s, const char *p, size_t len)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		char **ni = realloc(s->ids, cap * sizeof(*ni));
		if (!ni)
			return;
		s->ids = ni;
		s->cap = cap;
	}
	char *c = strndup(p, len);
	if (c)
		s->ids[s->n++] = c;
}

static int idset_has(const struct idset *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->ids[i], id))
			return 1;
	return 0;
}

static void idset_free(struct idset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->ids[i]);
	free(s->ids);
	memset(s, 0, sizeof(*s));
}

/* From "Message-ID: <X@mailbench>" in a header literal, add X. */
static void on_msgid(void *arg, const struct mb_imap_resp *r)
{
	struct idset *s = arg;
	if (r->kind != MB_IMAP_UNTAGGED || strcmp(r->name, "FETCH") || !r->args)
		return;
	for (const struct mb_imap_node *n = r->args->child; n && n->next; n = n->next->next) {
		if (n->len < 4 || strncasecmp(n->s, "BODY[", 5) || n->next->type != MB_IMAP_STRING)
			continue;
		const char *h = n->next->s, *e = h + n->next->len;
		const char *lt = memchr(h, '<', (size_t)(e - h));
		if (!lt)
			return;
		const char *at = lt + 1;
		while (at < e && *at != '@' && *at != '>')
			at++;
		if (at < e)
			idset_add(s, lt + 1, (size_t)(at - lt - 1));
		return;
	}
}

struct exists {
	uint32_t n;
};

static void on_exists(void *arg, const struct mb_imap_resp *r)
{
	struct exists *x = arg;
	if (r->kind == MB_IMAP_UNTAGGED && r->has_number && !strcmp(r->name, "EXISTS"))
		x->n = (uint32_t)r->number;
}

static int folder_ids(struct mb_imapc *c, const char *folder, struct idset *s)
{
	char cmd[600];
	size_t pos = 0;
	struct exists x = {0};
	memcpy(cmd, "EXAMINE ", 8);
	pos = 8;
	mb_imap_put_astring(cmd, sizeof(cmd) - 1, &pos, folder, strlen(folder));
	cmd[pos] = 0;
	int rc = mb_imapc_cmd(c, on_exists, &x, "%s", cmd);
	if (rc)
		return rc;
	if (x.n)
		rc = mb_imapc_cmd(c, on_msgid, s,
				  "FETCH 1:* (BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])");
	return rc;
}

/* ---- init over IMAP ---- */

struct init_ctx {
	const struct mb_topology *acc;
	struct plan plan;
	char host[256];
	int port;
	const char *domain;
	int64_t now_s;
	char *done; /* per user: '1' finished */
	const char *state_path;
	char target[300];
	atomic_int next;
	atomic_uint_fast64_t items_done, bytes_done;
	atomic_int failed;
	atomic_int running; /* workers not finished */
	char err[600];
	pthread_mutex_t lock;
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static int write_state(struct init_ctx *x, int complete)
{
	char tmp[4300];
	json_t *o = json_pack("{s:i,s:s,s:i,s:i,s:s,s:b}", "version", 1, "target", x->target,
			      "users", mb_topology_user_count(x->acc), "items_per_mailbox",
			      x->plan.items, "done", x->done, "complete", complete);
	snprintf(tmp, sizeof(tmp), "%s.tmp", x->state_path);
	int rc = o && json_dump_file(o, tmp, JSON_INDENT(1)) == 0 && rename(tmp, x->state_path) == 0
		     ? 0
		     : MB_EIO;
	json_decref(o);
	return rc;
}

static void init_fail(struct init_ctx *x, const char *fmt, const char *a, const char *b)
{
	pthread_mutex_lock(&x->lock);
	if (!x->failed) {
		snprintf(x->err, sizeof(x->err), fmt, a, b);
		x->failed = 1;
	}
	pthread_mutex_unlock(&x->lock);
}

static int fill_mailbox(struct init_ctx *x, int ui, int look)
{
	const struct mb_topo_user *u = mb_topology_user(x->acc, ui);
	const struct plan *p = &x->plan;
	struct mb_imapc *c;
	char err[600], folder[64], cur[64] = "", id[64], from[128], to[128];
	int rc = mb_imapc_connect(x->host, x->port, 30000, &c, err, sizeof(err));
	if (rc) {
		init_fail(x, "%s%s", err, "");
		return rc;
	}
	if ((rc = mb_imapc_login(c, u->name, u->password))) {
		init_fail(x, "login as %s: %s", u->name, mb_imapc_error(c));
		mb_imapc_close(c);
		return rc;
	}
	static const char *const fixed[] = {F_DELETED, F_SENT, F_CALENDAR, F_CONTACTS};
	for (size_t i = 0; i < 4 && !rc; i++)
		rc = mb_imapc_create(c, fixed[i]);
	for (int f = 0; f < p->folders && !rc; f++) {
		snprintf(folder, sizeof(folder), "Folder %02d", f + 1);
		rc = mb_imapc_create(c, folder);
	}
	if (rc) {
		init_fail(x, "CREATE for %s: %s", u->name, mb_imapc_error(c));
		mb_imapc_close(c);
		return rc;
	}
	/* items already there (a resumed mailbox) */
	struct idset have = {0};
	int resumed = 0;
	snprintf(to, sizeof(to), "%s@%s", u->name, x->domain);
	const char *tov[1] = {to};
	int nusers = mb_topology_user_count(x->acc);
	for (int k = 0; k < p->items && !rc && !stop_flag; k++) {
		enum mb_mailmsg_kind kind;
		int seen;
		place(p, k, folder, sizeof(folder), &kind, &seen);
		if (strcmp(folder, cur)) {
			snprintf(cur, sizeof(cur), "%s", folder);
			idset_free(&have);
			/* only a mailbox some earlier run touched can hold items */
			if (look && (rc = folder_ids(c, folder, &have)))
				break;
			resumed += (int)have.n;
		}
		snprintf(id, sizeof(id), "i.%d.%d", ui + 1, k);
		if (have.n && idset_has(&have, id)) {
			atomic_fetch_add(&x->items_done, 1);
			continue;
		}
		uint64_t seed = mb_rng_mix(((uint64_t)(ui + 1) << 24) ^ (uint64_t)k ^ 0x1417);
		int sender = (int)(seed % (uint64_t)nusers);
		snprintf(from, sizeof(from), "%s@%s", mb_topology_user(x->acc, sender)->name,
			 x->domain);
		struct mb_mailmsg m = {
		    .kind = kind,
		    .id = id,
		    .from = kind == MB_MAILMSG_CONTACT ? to : from,
		    .to = tov,
		    .nto = kind == MB_MAILMSG_CONTACT ? 0 : 1,
		    .seed = seed,
		    .body_bytes =
			kind == MB_MAILMSG_MAIL ? mb_content_size(seed, p->avg_body) : 200,
		    .date_s = x->now_s - 86400 * (int64_t)(k % 30) - (int64_t)(seed % 86400),
		    .start_s = x->now_s + 3600 * (int64_t)(k % 200) - 86400 * 5,
		    .end_s = x->now_s + 3600 * (int64_t)(k % 200) - 86400 * 5 + 3600,
		};
		char *msg;
		size_t len;
		if ((rc = mb_mailmsg_build(&m, &msg, &len)))
			break;
		rc = mb_imapc_append(c, folder, seen ? "\\Seen" : "", msg, len, NULL);
		free(msg);
		if (rc) {
			init_fail(x, "APPEND for %s: %s", u->name, mb_imapc_error(c));
			break;
		}
		atomic_fetch_add(&x->items_done, 1);
		atomic_fetch_add(&x->bytes_done, len);
	}
	idset_free(&have);
	mb_imapc_close(c);
	(void)resumed;
	return rc ? rc : stop_flag ? MB_EAGAIN : 0;
}

static void *init_worker(void *arg)
{
	struct init_ctx *x = arg;
	int nusers = mb_topology_user_count(x->acc);
	while (!x->failed && !stop_flag) {
		int ui = atomic_fetch_add(&x->next, 1);
		if (ui >= nusers)
			break;
		if (x->done[ui] == '1')
			continue;
		pthread_mutex_lock(&x->lock);
		char was = x->done[ui];
		x->done[ui] = 'p';
		if (was != 'p')
			write_state(x, 0);
		pthread_mutex_unlock(&x->lock);
		/* only a mailbox an earlier run touched needs a look at what is there */
		int rc = fill_mailbox(x, ui, was == 'p');
		pthread_mutex_lock(&x->lock);
		x->done[ui] = rc ? 'p' : '1';
		write_state(x, 0);
		pthread_mutex_unlock(&x->lock);
	}
	atomic_fetch_sub(&x->running, 1);
	return NULL;
}

/* TLS of the IMAP client (imaps:// or --tls starttls|implicit, --tls-ca,
 * --tls-insecure, as the load engine's): 0, or the exit code. */
static int tls_setup(const char *cmd, const char *target, int tls, const char *ca, bool insecure)
{
	int mode = mb_mail_url_tls(target) || tls == 2 ? MB_TLS_IMPLICIT /* --tls implicit */
		   : tls == 1			       ? MB_TLS_STARTTLS /* --tls starttls */
						       : MB_TLS_NONE;
	char err[400];
	if (mb_imapc_tls(mode, ca, insecure, err, sizeof(err))) {
		fprintf(stderr, "mailbench %s: --tls-ca: %s\n", cmd, err);
		return MB_EXIT_USAGE;
	}
	return 0;
}

struct init_imap_args {
	char scenario[MB_PATH_MAX], data[MB_PATH_MAX];
	const char *target, *submit, *domain;
	int users, jobs;
	double scale;
	bool restart, complete;
	int tls;
	char tls_ca[256];
	bool tls_insecure;
};

static int init_imap_run(void *args, int argc, char **argv)
{
	const struct init_imap_args *a = args;
	const char *target = a->target, *submit = a->submit, *data = a->data, *scen = a->scenario;
	const char *domain = a->domain ? a->domain : MB_LAB_DOMAIN;
	int users = a->users ? a->users : 20, jobs = a->jobs, restart = a->restart;
	double scale = a->scale;
	(void)argc;
	(void)argv;
	struct init_ctx x;
	memset(&x, 0, sizeof(x));
	if (!target || mb_mail_url(target, "imap", x.host, sizeof(x.host), &x.port)) {
		fprintf(stderr,
			"mailbench init: --target: '%s' must be imap://HOST:PORT or "
			"imaps://HOST:PORT\n",
			target ? target : "");
		return MB_EXIT_USAGE;
	}
	int trc = tls_setup("init", target, a->tls, a->tls_ca, a->tls_insecure);
	if (trc)
		return trc;
	char sh[256];
	int sp;
	if (submit && mb_mail_url(submit, "smtp", sh, sizeof(sh), &sp)) {
		fprintf(stderr,
			"mailbench init: --submit: '%s' must be smtp://HOST:PORT or "
			"smtps://HOST:PORT\n",
			submit);
		return MB_EXIT_USAGE;
	}
	char err[1024], path[4300], state[4300];
	struct mb_topology *acc;
	int created;
	int rc = mb_lab_accounts(data, scen, users, &acc, &created, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mailbench init: %s\n", err);
		return rc == MB_ECONFIG ? MB_EXIT_USAGE : MB_EXIT_RUNTIME;
	}
	/* the mailbox contents: the scenario's, scaled */
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error cerr;
	if (!sc || mb_scenario_load(scen, sc, &cerr)) {
		if (sc) {
			mb_cfg_error_format(&cerr, err, sizeof(err));
			fprintf(stderr, "%s\n", err);
		}
		free(sc);
		mb_topology_destroy(acc);
		return MB_EXIT_USAGE;
	}
	struct mb_topo_info in;
	memset(&in, 0, sizeof(in));
	if (scale == 0)
		scale = sc->scale;
	mb_mailbox_profile_scale(&sc->mailbox, scale, &in.mailbox);
	free(sc);
	plan_of(&in, &x.plan);

	/* the operator's maps */
	snprintf(path, sizeof(path), "%s/dovecot-passwd", data);
	rc = mb_lab_write_passwd(acc, path, 8, 8, "/var/vmail");
	snprintf(path, sizeof(path), "%s/postfix-virtual", data);
	if (!rc)
		rc = mb_lab_write_virtual(acc, domain, path);
	snprintf(path, sizeof(path), "%s/postfix-vmailbox", data);
	if (!rc)
		rc = mb_lab_write_vmailbox(acc, domain, path);
	if (rc) {
		fprintf(stderr, "mailbench init: writing the account maps in %s: %s\n", data,
			mb_strerror(rc));
		mb_topology_destroy(acc);
		return MB_EXIT_RUNTIME;
	}

	int nusers = mb_topology_user_count(acc);
	x.acc = acc;
	x.domain = domain;
	x.now_s = (int64_t)time(NULL);
	snprintf(x.target, sizeof(x.target), "%s", target);
	snprintf(state, sizeof(state), "%s/imap-init.state", data);
	x.state_path = state;
	x.done = calloc((size_t)nusers + 1, 1);
	if (!x.done) {
		mb_topology_destroy(acc);
		return MB_EXIT_RUNTIME;
	}
	memset(x.done, '0', (size_t)nusers);
	if (restart)
		unlink(state);
	json_t *st = json_load_file(state, 0, NULL);
	if (st) {
		const char *d = json_string_value(json_object_get(st, "done"));
		int items = (int)json_integer_value(json_object_get(st, "items_per_mailbox"));
		const char *t = json_string_value(json_object_get(st, "target"));
		/* the lab of this data directory is one server whatever its port */
		char labj[4300];
		snprintf(labj, sizeof(labj), "%s/lab.json", data);
		json_t *lj = json_load_file(labj, 0, NULL);
		const char *lt = json_string_value(json_object_get(lj, "imap"));
		bool same = t && (!strcmp(t, target) || (lt && !strcmp(lt, target) &&
							 !strncmp(t, "imap://127.0.0.1:", 17)));
		json_decref(lj);
		if (d && (!same || strlen(d) != (size_t)nusers || items != x.plan.items) &&
		    a->complete) {
			/* filled for other parameters: every mailbox touched is looked
			 * at and completed item by item (no duplicate) */
			size_t dl = strlen(d);
			for (int i = 0; i < nusers; i++)
				x.done[i] = (size_t)i < dl && d[i] != '0' ? 'p' : '0';
			printf("init: %s is from another initialisation: completing every mailbox "
			       "item by item\n",
			       state);
		} else if (!d || strlen(d) != (size_t)nusers || items != x.plan.items || !same) {
			fprintf(
			    stderr,
			    "mailbench init: %s is from another initialisation (target, users or "
			    "mailbox contents differ); use --restart (refill) or --complete "
			    "(complete "
			    "what is there)\n",
			    state);
			json_decref(st);
			free(x.done);
			mb_topology_destroy(acc);
			return MB_EXIT_USAGE;
		} else {
			memcpy(x.done, d, (size_t)nusers);
		}
		json_decref(st);
	}
	uint64_t already = 0;
	int touched = 0;
	for (int i = 0; i < nusers; i++) {
		already += x.done[i] == '1';
		touched |= x.done[i] != '0';
	}
	printf("init: %d mailboxes on %s (%d items each: inbox %d, deleted %d, %d folders x %d, "
	       "%d appointments, %d contacts; avg %zu KB)%s\n",
	       nusers, target, x.plan.items, x.plan.inbox, x.plan.deleted, x.plan.folders,
	       x.plan.per_folder, x.plan.appts, x.plan.contacts, x.plan.avg_body / 1024,
	       touched ? ", resuming" : "");
	printf("init: accounts %s/accounts.json%s; for the operator: %s/dovecot-passwd, "
	       "%s/postfix-virtual, %s/postfix-vmailbox\n",
	       data, created ? " (generated)" : "", data, data, data);
	fflush(stdout);

	pthread_mutex_init(&x.lock, NULL);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	stop_flag = 0;
	atomic_store(&x.items_done, already * (uint64_t)x.plan.items);
	pthread_t th[256];
	int nth = 0;
	for (int i = 0; i < jobs && i < nusers; i++) {
		atomic_fetch_add(&x.running, 1);
		if (pthread_create(&th[nth], NULL, init_worker, &x) == 0)
			nth++;
		else
			atomic_fetch_sub(&x.running, 1);
	}
	uint64_t total = (uint64_t)nusers * (uint64_t)x.plan.items;
	double t0 = mb_now_s();
	struct mb_progress_opts po = {
	    .out = stderr, .tty = isatty(STDERR_FILENO), .label = "init", .noun = "items"};
	struct mb_progress *prog = NULL;
	int pr = mb_progress_create(&po, 0, &prog);
	for (;;) {
		int alive = atomic_load(&x.running) > 0;
		if (pr == 0)
			mb_progress_update(prog, mb_now_s() - t0, atomic_load(&x.items_done), total,
					   NULL, !alive);
		if (!alive)
			break;
		struct timespec ts = {0, 250000000};
		nanosleep(&ts, NULL);
	}
	mb_progress_destroy(prog);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	int complete = 1;
	for (int i = 0; i < nusers; i++)
		complete &= x.done[i] == '1';
	write_state(&x, complete);
	int ret = MB_EXIT_OK;
	if (x.failed) {
		fprintf(stderr, "mailbench init: %s\n", x.err);
		ret = MB_EXIT_RUNTIME;
	} else if (!complete) {
		fprintf(stderr, "mailbench init: interrupted; run it again to resume\n");
		ret = MB_EXIT_RUNTIME;
	} else {
		printf("init: done: %llu items, %.1f MB appended in %.1f s\n",
		       (unsigned long long)total, (double)atomic_load(&x.bytes_done) / 1048576.0,
		       mb_now_s() - t0);
	}
	pthread_mutex_destroy(&x.lock);
	free(x.done);
	mb_topology_destroy(acc);
	return ret;
}

/* ---- check over IMAP ---- */

struct ack {
	char kind;
	uint32_t mailbox;
	unsigned long long mid;
};

static int cmp_ack(const void *a, const void *b)
{
	const struct ack *x = a, *y = b;
	if (x->mailbox != y->mailbox)
		return x->mailbox < y->mailbox ? -1 : 1;
	return x->mid < y->mid ? -1 : x->mid > y->mid;
}

struct lister {
	struct idset names;
};

static void on_list(void *arg, const struct mb_imap_resp *r)
{
	struct lister *l = arg;
	if (r->kind != MB_IMAP_UNTAGGED || strcmp(r->name, "LIST") || !r->args || !r->args->next ||
	    !r->args->next->next)
		return;
	const struct mb_imap_node *fl = r->args, *name = r->args->next->next;
	for (const struct mb_imap_node *f = fl->child; f; f = f->next)
		if (mb_imap_node_is(f, "\\Noselect") || mb_imap_node_is(f, "\\NonExistent"))
			return;
	idset_add(&l->names, name->s, name->len);
}

/* When target is the lab's (DATA/lab.json names it), the messages its
 * Postfix acknowledged but has not delivered yet (deferred while Dovecot
 * was down, say) are given up to LAB_DRAIN_S to arrive, each try flushed:
 * the check then reads what the server will hold, not a race with the
 * queue.  Says on stderr what it waited for. */
#define LAB_DRAIN_S 60.0
static void lab_drain(const char *data, const char *target, int quiet)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/lab.json", data);
	json_t *o = json_load_file(path, 0, NULL);
	const char *imap = json_string_value(json_object_get(o, "imap"));
	const char *imaps = json_string_value(json_object_get(o, "imaps"));
	const char *dir = json_string_value(json_object_get(o, "dir"));
	if (!dir || !((imap && !strcmp(imap, target)) || (imaps && !strcmp(imaps, target)))) {
		json_decref(o);
		return;
	}
	double t0 = mb_now_s(), next_flush = 0;
	int n = 0, first = -1;
	for (;;) {
		double now = mb_now_s();
		int flush = now >= next_flush;
		if (flush)
			next_flush = now + 5.0;
		n = mb_lab_queued(dir, flush);
		if (first < 0)
			first = n;
		if (n <= 0 || now - t0 >= LAB_DRAIN_S)
			break;
		struct timespec ts = {0, 250000000};
		nanosleep(&ts, NULL);
	}
	if (!quiet && first > 0)
		fprintf(stderr,
			"check: the lab's Postfix held %d message%s; %d left after %.1f s\n", first,
			first == 1 ? "" : "s", n < 0 ? 0 : n, mb_now_s() - t0);
	json_decref(o);
}

struct check_imap_args {
	const char *target, *ack_log;
	char data[MB_PATH_MAX];
	bool quiet;
	int tls;
	char tls_ca[256];
	bool tls_insecure;
};

static int check_imap_run(void *args, int argc, char **argv)
{
	const struct check_imap_args *ca = args;
	const char *target = ca->target, *ack = ca->ack_log, *data = ca->data;
	int quiet = ca->quiet;
	(void)argc;
	(void)argv;
	char host[256], err[1024], path[4300];
	int port;
	if (!target || mb_mail_url(target, "imap", host, sizeof(host), &port)) {
		fprintf(
		    stderr,
		    "mailbench check: --target: must be imap://HOST:PORT or imaps://HOST:PORT\n");
		return MB_EXIT_USAGE;
	}
	int trc = tls_setup("check", target, ca->tls, ca->tls_ca, ca->tls_insecure);
	if (trc)
		return trc;
	struct mb_topology *acc;
	snprintf(path, sizeof(path), "%s/accounts.json", data);
	if (mb_topology_read(path, &acc, err, sizeof(err))) {
		fprintf(stderr, "mailbench check: %s\n", err);
		return MB_EXIT_USAGE;
	}
	FILE *f = fopen(ack, "r");
	if (!f) {
		fprintf(stderr, "mailbench check: --ack-log: cannot open %s: %s\n", ack,
			strerror(errno));
		mb_topology_destroy(acc);
		return MB_EXIT_USAGE;
	}
	struct ack *a = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	unsigned long lineno = 0;
	int ret = MB_EXIT_OK;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		struct ack e;
		unsigned long mb;
		int used = 0;
		if (sscanf(line, "%c %lu %llu%n", &e.kind, &mb, &e.mid, &used) != 3 ||
		    (e.kind != '+' && e.kind != '-' && e.kind != '~') || mb < 1 ||
		    mb > (unsigned long)mb_topology_user_count(acc)) {
			fprintf(
			    stderr,
			    "mailbench check: %s:%lu: not 'KIND MAILBOX ID' with a known mailbox\n",
			    ack, lineno);
			ret = MB_EXIT_USAGE;
			break;
		}
		e.mailbox = (uint32_t)mb;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			struct ack *na = realloc(a, cap * sizeof(*na));
			if (!na) {
				ret = MB_EXIT_RUNTIME;
				break;
			}
			a = na;
		}
		a[n++] = e;
	}
	fclose(f);
	uint64_t must = 0, missing = 0, gone = 0, resurrected = 0, inflight = 0;
	if (ret == MB_EXIT_OK) {
		qsort(a, n, sizeof(*a), cmp_ack);
		lab_drain(data, target, quiet);
	}
	for (size_t i = 0; i < n && ret == MB_EXIT_OK;) {
		size_t j = i;
		while (j < n && a[j].mailbox == a[i].mailbox)
			j++;
		/* every Message-ID of the mailbox, all folders */
		const struct mb_topo_user *u = mb_topology_user(acc, (int)a[i].mailbox - 1);
		struct mb_imapc *c;
		struct lister ls = {{0}};
		struct idset ids = {0}, kept = {0};
		int rc = mb_imapc_connect(host, port, 30000, &c, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "mailbench check: %s\n", err);
			ret = MB_EXIT_RUNTIME;
			break;
		}
		rc = mb_imapc_login(c, u->name, u->password);
		if (!rc)
			rc = mb_imapc_cmd(c, on_list, &ls, "LIST \"\" \"*\"");
		/* a deleted copy may have a twin in the sender's Sent Items: those
		 * do not count as resurrected */
		for (size_t k = 0; k < ls.names.n && !rc; k++) {
			size_t before = ids.n;
			rc = folder_ids(c, ls.names.ids[k], &ids);
			if (strcmp(ls.names.ids[k], F_SENT))
				for (size_t q = before; q < ids.n; q++)
					idset_add(&kept, ids.ids[q], strlen(ids.ids[q]));
		}
		if (rc) {
			fprintf(stderr, "mailbench check: reading %s's mailbox: %s\n", u->name,
				mb_imapc_error(c));
			ret = MB_EXIT_RUNTIME;
		}
		mb_imapc_close(c);
		idset_free(&ls.names);
		for (size_t k = i; k < j && ret == MB_EXIT_OK;) {
			/* the lines of one message id */
			size_t e = k;
			int plus = 0, minus = 0, tilde = 0;
			while (e < j && a[e].mid == a[k].mid) {
				plus |= a[e].kind == '+';
				minus |= a[e].kind == '-';
				tilde |= a[e].kind == '~';
				e++;
			}
			char id[32];
			snprintf(id, sizeof(id), "%016llx", a[k].mid);
			int present = idset_has(&ids, id);
			if (minus) {
				gone++;
				if (idset_has(&kept, id)) {
					resurrected++;
					if (!quiet)
						fprintf(stderr,
							"note: %s: <%s@mailbench> was acknowledged "
							"deleted but a copy is present\n",
							u->name, id);
				}
			} else if (tilde) {
				inflight++;
			} else if (plus) {
				must++;
				if (!present) {
					missing++;
					if (!quiet)
						fprintf(
						    stderr,
						    "missing: %s: <%s@mailbench> was acknowledged "
						    "but is in no folder\n",
						    u->name, id);
				}
			}
			k = e;
		}
		idset_free(&ids);
		idset_free(&kept);
		i = j;
	}
	free(a);
	mb_topology_destroy(acc);
	if (ret != MB_EXIT_OK)
		return ret;
	printf(
	    "check: %s: %llu acknowledged messages, %llu missing; %llu acknowledged deletes, %llu "
	    "with a copy left; %llu in flight\n",
	    target, (unsigned long long)must, (unsigned long long)missing, (unsigned long long)gone,
	    (unsigned long long)resurrected, (unsigned long long)inflight);
	/* Only a missing message is a loss.  A copy left after an acknowledged
	 * delete is not: mail delivery is at-least-once (Postfix delivers again
	 * when Dovecot died before its LMTP reply), so a crash can leave two
	 * copies of which the user deleted one. */
	return missing ? MB_EXIT_THRESHOLDS : MB_EXIT_OK;
}

/* ---- the command rows (chosen by main.c when --target is imap://) ---- */

#define II struct init_imap_args
static const struct mb_opt init_imap_opts[] = {
    MB_OPTION_TLS(II, tls),
    MB_OPTION_TLS_CA(II, tls_ca),
    MB_OPTION_TLS_INSECURE(II, tls_insecure),
    {.path = "target",
     .flag = "target",
     .sflag = 't',
     .metavar = "imap://HOST:PORT",
     .type = MB_OT_ARG,
     .off = offsetof(II, target),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "the IMAP server to provision"},
    {.path = "submit",
     .flag = "submit",
     .metavar = "smtp://HOST:PORT",
     .type = MB_OT_ARG,
     .off = offsetof(II, submit),
     .help = "its submission server (checked, recorded for runs)"},
    MB_OPTION_SCENARIO(II, scenario, NULL, MB_OPT_REQ, NULL),
    {.path = "data",
     .flag = "data",
     .sflag = 'd',
     .metavar = "DIR",
     .type = MB_OT_STRING,
     .off = offsetof(II, data),
     .size = MB_FIELD_SIZE(II, data),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "accounts, maps and state"},
    {.path = "users",
     .flag = "users",
     .sflag = 'u',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(II, users),
     .def = 0,
     .min = MB_USERS_MIN,
     .max = MB_USERS_MAX,
     .dtext = "20",
     .help = "users of newly generated accounts"},
    MB_OPTION_SCALE(II, scale, 'S'),
    {.path = "jobs",
     .flag = "jobs",
     .sflag = 'j',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(II, jobs),
     .def = 2,
     .min = 1,
     .max = 256,
     .dtext = "2",
     .help = "mailboxes filled in parallel"},
    {.path = "domain",
     .flag = "domain",
     .metavar = "D",
     .type = MB_OT_ARG,
     .off = offsetof(II, domain),
     .flags = MB_OPT_NONEMPTY,
     .dtext = MB_LAB_DOMAIN,
     .help = "mail domain of the addresses"},
    {.path = "restart",
     .flag = "restart",
     .sflag = 'r',
     .type = MB_OT_FLAG,
     .off = offsetof(II, restart),
     .help = "forget an earlier (partial) fill"},
    {.path = "complete",
     .flag = "complete",
     .type = MB_OT_FLAG,
     .off = offsetof(II, complete),
     .help = "after a fill for other parameters (scenario, users, server): look at every "
	     "mailbox and complete it item by item (no duplicate)"},
};

const struct mb_cmd_entry mb_cmd_init_imap_entry = {
    .name = "init",
    .usage =
	"--target imap://HOST:PORT [--submit smtp://HOST:PORT] -s SCENARIO --data DIR [OPTIONS]",
    .summary = "provision an external IMAP server: accounts, maps, mailboxes by APPEND",
    .about = "Write DIR/accounts.json (users, passwords, distribution lists; kept when\n"
	     "present, e.g. written by `mailbench lab`), DIR/dovecot-passwd and\n"
	     "DIR/postfix-virtual + DIR/postfix-vmailbox for the operator to install, then\n"
	     "fill every mailbox through APPEND as the scenario says: the inbox, Deleted\n"
	     "Items, the user folders, Calendar (iCalendar items) and Contacts (vCards).\n"
	     "Interrupted, it resumes where it stopped when run again.",
    .epilog = "exit codes: 0 done, 2 usage or input error, 3 runtime failure or interrupted",
    .opts = init_imap_opts,
    .nopts = (int)(sizeof(init_imap_opts) / sizeof(init_imap_opts[0])),
    .args_size = sizeof(struct init_imap_args),
    .run = init_imap_run,
};

#define CI struct check_imap_args
static const struct mb_opt check_imap_opts[] = {
    MB_OPTION_TLS(CI, tls),
    MB_OPTION_TLS_CA(CI, tls_ca),
    MB_OPTION_TLS_INSECURE(CI, tls_insecure),
    {.path = "target",
     .flag = "target",
     .sflag = 't',
     .metavar = "imap://HOST:PORT",
     .type = MB_OT_ARG,
     .off = offsetof(CI, target),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "the IMAP server to read back"},
    {.path = "ack-log",
     .flag = "ack-log",
     .sflag = 'a',
     .metavar = "FILE",
     .type = MB_OT_ARG,
     .off = offsetof(CI, ack_log),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "the load engine's ack log"},
    {.path = "data",
     .flag = "data",
     .sflag = 'd',
     .metavar = "DIR",
     .type = MB_OT_STRING,
     .off = offsetof(CI, data),
     .size = MB_FIELD_SIZE(CI, data),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "where accounts.json is"},
    MB_OPTION_QUIET(CI, quiet, 'q', "only the verdict"),
};

const struct mb_cmd_entry mb_cmd_check_imap_entry = {
    .name = "check",
    .usage = "--target imap://HOST:PORT --ack-log FILE --data DIR",
    .summary = "every acknowledged message read back from an IMAP server",
    .about = "Read every mailbox named in the ack log back through IMAP (every folder's\n"
	     "Message-IDs) and report each acknowledged message that is missing (and each\n"
	     "acknowledged delete still present outside the sender's Sent Items).",
    .epilog = "exit codes: 0 nothing lost, 1 messages missing, 2 usage or bad ack log, 3 the\n"
	      "server could not be read",
    .opts = check_imap_opts,
    .nopts = (int)(sizeof(check_imap_opts) / sizeof(check_imap_opts[0])),
    .args_size = sizeof(struct check_imap_args),
    .run = check_imap_run,
};
