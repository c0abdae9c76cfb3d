/* cmd_imap_init.c: `mailbench init --target imap://HOST:PORT ...`, the
 * provisioning of an external IMAP server (see cmd_imap.c's opening
 * comment for what it writes and how it resumes): the plan of each
 * mailbox, worker threads that fill the mailboxes through APPEND, the
 * state file and the progress bar.
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
#include "lab/imapcmd_int.h"

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

/* What imap-init.state's "version" says about the mailboxes' contents: 2,
 * every item read (1: a third of the Inbox unread).  A state of another
 * version is another initialisation. */
#define IMAP_INIT_VERSION 2

/* Item k: its folder and kind.  Every item is appended \Seen: initialised
 * mail is read, as the embedded store's (docs/workload.md, "Initialised
 * mail is read"). */
static void place(const struct plan *p, int k, char *folder, size_t flen,
		  enum mb_mailmsg_kind *kind)
{
	*kind = MB_MAILMSG_MAIL;
	if (k < p->inbox) {
		snprintf(folder, flen, "INBOX");
		return;
	}
	k -= p->inbox;
	if (k < p->deleted) {
		snprintf(folder, flen, F_DELETED);
		return;
	}
	k -= p->deleted;
	if (k < p->folders * p->per_folder) {
		snprintf(folder, flen, "Folder %02d", k / p->per_folder + 1);
		return;
	}
	k -= p->folders * p->per_folder;
	if (k < p->appts) {
		snprintf(folder, flen, F_CALENDAR);
		*kind = MB_MAILMSG_APPOINTMENT;
		return;
	}
	snprintf(folder, flen, F_CONTACTS);
	*kind = MB_MAILMSG_CONTACT;
}

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
	json_t *o =
	    json_pack("{s:i,s:s,s:i,s:i,s:s,s:b}", "version", IMAP_INIT_VERSION, "target",
		      x->target, "users", mb_topology_user_count(x->acc), "items_per_mailbox",
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
		place(p, k, folder, sizeof(folder), &kind);
		if (strcmp(folder, cur)) {
			snprintf(cur, sizeof(cur), "%s", folder);
			mb__imapcmd_idset_free(&have);
			/* only a mailbox some earlier run touched can hold items */
			if (look && (rc = mb__imapcmd_folder_ids(c, folder, &have)))
				break;
			resumed += (int)have.n;
		}
		snprintf(id, sizeof(id), "i.%d.%d", ui + 1, k);
		if (have.n && mb__imapcmd_idset_has(&have, id)) {
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
		rc = mb_imapc_append(c, folder, "\\Seen", msg, len, NULL);
		free(msg);
		if (rc) {
			init_fail(x, "APPEND for %s: %s", u->name, mb_imapc_error(c));
			break;
		}
		atomic_fetch_add(&x->items_done, 1);
		atomic_fetch_add(&x->bytes_done, len);
	}
	mb__imapcmd_idset_free(&have);
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
	int trc = mb__imapcmd_tls_setup("init", target, a->tls, a->tls_ca, a->tls_insecure);
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
		/* another version wrote other contents: --complete cannot mend
		 * the items that are there, only --restart */
		if (json_integer_value(json_object_get(st, "version")) != IMAP_INIT_VERSION) {
			fprintf(stderr,
				"mailbench init: %s: version: another version of mailbench "
				"filled these mailboxes with other contents; use --restart "
				"(refill)\n",
				state);
			json_decref(st);
			free(x.done);
			mb_topology_destroy(acc);
			return MB_EXIT_USAGE;
		}
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
			fprintf(stderr,
				"mailbench init: %s is from another initialisation (target, "
				"users or mailbox contents differ); use --restart (refill) "
				"or --complete (complete what is there)\n",
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

/* ---- the command row (chosen by main.c when --target is imap://) ---- */

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
