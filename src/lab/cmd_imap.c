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
 * `init` is in cmd_imap_init.c; this file holds `check`, the row choice
 * and what both share (imapcmd_int.h).
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
#include "lab/imapcmd_int.h"

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

/* ---- Message-IDs present in a folder ---- */

void mb__imapcmd_idset_add(struct idset *s, const char *p, size_t len)
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

int mb__imapcmd_idset_has(const struct idset *s, const char *id)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->ids[i], id))
			return 1;
	return 0;
}

void mb__imapcmd_idset_free(struct idset *s)
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
			mb__imapcmd_idset_add(s, lt + 1, (size_t)(at - lt - 1));
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

int mb__imapcmd_folder_ids(struct mb_imapc *c, const char *folder, struct idset *s)
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

/* TLS of the IMAP client (imaps:// or --tls starttls|implicit, --tls-ca,
 * --tls-insecure, as the load engine's): 0, or the exit code. */
int mb__imapcmd_tls_setup(const char *cmd, const char *target, int tls, const char *ca,
			  bool insecure)
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
	mb__imapcmd_idset_add(&l->names, name->s, name->len);
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
	int trc = mb__imapcmd_tls_setup("check", target, ca->tls, ca->tls_ca, ca->tls_insecure);
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
			rc = mb__imapcmd_folder_ids(c, ls.names.ids[k], &ids);
			if (strcmp(ls.names.ids[k], F_SENT))
				for (size_t q = before; q < ids.n; q++)
					mb__imapcmd_idset_add(&kept, ids.ids[q],
							      strlen(ids.ids[q]));
		}
		if (rc) {
			fprintf(stderr, "mailbench check: reading %s's mailbox: %s\n", u->name,
				mb_imapc_error(c));
			ret = MB_EXIT_RUNTIME;
		}
		mb_imapc_close(c);
		mb__imapcmd_idset_free(&ls.names);
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
			int present = mb__imapcmd_idset_has(&ids, id);
			if (minus) {
				gone++;
				if (mb__imapcmd_idset_has(&kept, id)) {
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
		mb__imapcmd_idset_free(&ids);
		mb__imapcmd_idset_free(&kept);
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

/* ---- the command row (chosen by main.c when --target is imap://) ---- */

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
