/* cmd_lab.c: `mailbench lab dovecot --data DIR`: start the throwaway lab
 * (lab.h), print the URLs to pass as --target / --submit, keep it up
 * (restarting a server that dies) until SIGTERM, SIGINT or SIGHUP, then
 * stop it leaving no process.
 *
 * The accounts come from DIR/accounts.json (users, passwords, lists: the accounts
 * file format of core/topology.h), generated for -s/--users when absent.  While the
 * lab is up DIR/lab.env (shell) and DIR/lab.json say its URLs, its server
 * PIDs and its login-process mode; both are removed at stop.
 */
#include "config.h"

#include "cmd.h"
#include "core/options.h"
#include "core/error.h"
#include "core/scenario.h"
#include "core/topology.h"
#include "lab/lab.h"
#include "lab/labcmd.h"
#include "store/store.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int mb_lab_accounts(const char *data, const char *scenario, int users, struct mb_topology **out,
		    int *created, char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/accounts.json", data);
	*created = 0;
	if (access(path, F_OK) == 0)
		return mb_topology_read(path, out, err, errlen);
	struct mb_scenario *sc = calloc(1, sizeof(*sc));
	struct mb_cfg_error cerr;
	if (!sc)
		return MB_ENOMEM;
	if (mb_scenario_load(scenario, sc, &cerr)) {
		mb_cfg_error_format(&cerr, err, errlen);
		free(sc);
		return MB_ECONFIG;
	}
	int rc = mb_store_gen_topology(sc, users, 1.0, NULL,
				       (int)ceil(mb_store_scaled_cache_mb(sc, users, 1.0)), 0, out);
	free(sc);
	if (rc) {
		snprintf(err, errlen, "generating accounts: %s", mb_strerror(rc));
		return rc;
	}
	if (mkdir(data, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "--data: cannot create %s: %s", data, strerror(errno));
		mb_topology_destroy(*out);
		return MB_EIO;
	}
	rc = mb_topology_write_accounts(*out, path);
	if (rc) {
		snprintf(err, errlen, "%s: %s", path, mb_strerror(rc));
		mb_topology_destroy(*out);
		return rc;
	}
	*created = 1;
	return 0;
}

static int write_env(const char *data, const struct mb_lab *lab)
{
	const struct mb_lab_info *in = mb_lab_info(lab);
	pid_t pids[512];
	int n = mb_lab_pids(lab, pids, 512);
	char path[4200], tmp[4300];
	snprintf(path, sizeof(path), "%s/lab.env", data);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return MB_EIO;
	fprintf(f,
		"# the running mailbench lab (removed when it stops)\n"
		"MB_LAB_IMAP='%s'\nMB_LAB_SMTP='%s'\nMB_LAB_DOVECOT_PID=%d\nMB_LAB_POSTFIX_PID=%d\n"
		"MB_LAB_LMTP_PORT=%d\nMB_LAB_LOGIN_MODE='%s'\nMB_LAB_MAIL_FORMAT='%s'\nMB_LAB_DIR='"
		"%s'\n"
		"MB_LAB_PID=%d\nMB_LAB_SERVER_PIDS='",
		in->imap_url, in->smtp_url, (int)in->dovecot_pid, (int)in->postfix_pid,
		in->lmtp_port, in->login_mode, in->mail_format, in->dir, (int)getpid());
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", (int)pids[i]);
	fprintf(f, "'\n");
	if (in->tls_cert[0])
		fprintf(f, "MB_LAB_IMAPS='%s'\nMB_LAB_SMTPS='%s'\nMB_LAB_TLS_CA='%s'\n",
			in->imaps_url, in->smtps_url, in->tls_cert);
	if (fclose(f) || rename(tmp, path))
		return MB_EIO;
	json_t *o = json_pack(
	    "{s:s,s:s,s:i,s:i,s:i,s:s,s:s,s:s,s:i,s:i}", "imap", in->imap_url, "smtp", in->smtp_url,
	    "dovecot_pid", (int)in->dovecot_pid, "postfix_pid", (int)in->postfix_pid, "lmtp_port",
	    in->lmtp_port, "login_mode", in->login_mode, "mail_format", in->mail_format, "dir",
	    in->dir, "pid", (int)getpid(), "dovecot_restarts", in->dovecot_restarts);
	if (o)
		json_object_set_new(o, "versions", json_string(in->versions));
	if (o && in->tls_cert[0]) {
		json_object_set_new(o, "imaps", json_string(in->imaps_url));
		json_object_set_new(o, "smtps", json_string(in->smtps_url));
		json_object_set_new(o, "tls_ca", json_string(in->tls_cert));
	}
	snprintf(path, sizeof(path), "%s/lab.json", data);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc =
	    o && json_dump_file(o, tmp, JSON_INDENT(1)) == 0 && rename(tmp, path) == 0 ? 0 : MB_EIO;
	json_decref(o);
	return rc;
}

struct lab_args {
	char data[MB_PATH_MAX];
	char scenario[MB_PATH_MAX];
	int users;
	int login; /* enum mb_lab_login: index into login_modes */
	char fmt[16];
	bool tls;
};

static const char *const login_modes[] = {"performance", "secure", NULL};
static const char *const mail_formats[] = {"maildir", "mdbox", NULL};

static int lab_run(void *args, int argc, char **argv)
{
	const struct lab_args *a = args;
	const char *data = a->data, *scen = a->scenario, *fmt = a->fmt;
	int users = a->users;
	enum mb_lab_login login = a->login ? MB_LAB_LOGIN_SECURE : MB_LAB_LOGIN_PERFORMANCE;
	if (argc != 1 || strcmp(argv[0], "dovecot")) {
		fprintf(stderr, "mailbench lab: which server? '%s' (only 'dovecot' is known)\n",
			argc ? argv[0] : "");
		return MB_EXIT_USAGE;
	}
	char err[1024];
	struct mb_topology *acc;
	int created;
	int rc = mb_lab_accounts(data, scen, users, &acc, &created, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mailbench lab: %s\n", err);
		return rc == MB_ECONFIG ? MB_EXIT_USAGE : MB_EXIT_RUNTIME;
	}

	/* signals: handled synchronously below */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);

	struct mb_lab_opts o = {
	    .data = data, .mail_format = fmt, .login = login, .accounts = acc, .tls = a->tls};
	struct mb_lab *lab;
	rc = mb_lab_start(&o, &lab, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mailbench %s\n", err);
		mb_topology_destroy(acc);
		return MB_EXIT_RUNTIME;
	}
	const struct mb_lab_info *in = mb_lab_info(lab);
	write_env(data, lab);
	printf(
	    "lab: Dovecot and Postfix up under %s (mail: %s; login processes: %s)\n"
	    "  --target %s --submit %s\n"
	    "  accounts: %s/accounts.json (%d users, %d lists%s); domain %s\n"
	    "  server PIDs: dovecot %d, postfix %d (DIR/lab.env); stop: kill -TERM %d or Ctrl-C\n",
	    in->dir, in->mail_format, in->login_mode, in->imap_url, in->smtp_url, data,
	    mb_topology_user_count(acc), mb_topology_list_count(acc), created ? ", generated" : "",
	    MB_LAB_DOMAIN, (int)in->dovecot_pid, (int)in->postfix_pid, (int)getpid());
	if (in->tls_cert[0])
		printf(
		    "  TLS: --target %s --submit %s --tls-ca %s (or --target %s --tls starttls)\n",
		    in->imaps_url, in->smtps_url, in->tls_cert, in->imap_url);
	fflush(stdout);

	int status = MB_EXIT_OK;
	for (;;) {
		struct timespec ts = {1, 0};
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig > 0)
			break;
		int r = mb_lab_poll(lab);
		if (r > 0)
			write_env(data, lab);
		else if (r < 0)
			fprintf(stderr, "mailbench lab: a server failed to restart; retrying\n");
	}
	if (mb_lab_stop(lab) == MB_EBUSY)
		fprintf(stderr, "mailbench lab: a server process had to be killed\n");
	char path[4200];
	snprintf(path, sizeof(path), "%s/lab.env", data);
	unlink(path);
	snprintf(path, sizeof(path), "%s/lab.json", data);
	unlink(path);
	mb_topology_destroy(acc);
	printf("lab: stopped\n");
	return status;
}

#define LB struct lab_args
static const struct mb_opt lab_opts[] = {
    {.path = "data",
     .flag = "data",
     .sflag = 'd',
     .metavar = "DIR",
     .type = MB_OT_STRING,
     .off = offsetof(LB, data),
     .size = MB_FIELD_SIZE(LB, data),
     .flags = MB_OPT_REQ | MB_OPT_NONEMPTY,
     .help = "the lab's directory (its servers under DIR/lab, accounts in DIR/accounts.json)"},
    MB_OPTION_SCENARIO(LB, scenario, "online", 0, "online"),
    {.path = "users",
     .flag = "users",
     .sflag = 'u',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(LB, users),
     .def = 20,
     .min = MB_USERS_MIN,
     .max = MB_USERS_MAX,
     .dtext = "20",
     .help = "users of the accounts generated when DIR/accounts.json is absent"},
    {.path = "login-mode",
     .flag = "login-mode",
     .sflag = 'L',
     .type = MB_OT_ENUM,
     .off = offsetof(LB, login),
     .def = 0,
     .choices = login_modes,
     .dtext = "performance",
     .help = "Dovecot's login processes: performance (service_count = 0 with "
	     "process_min_avail) or secure (one per connection, about 30x fewer logins/s)"},
    {.path = "mail-format",
     .flag = "mail-format",
     .sflag = 'm',
     .type = MB_OT_SCHOICE,
     .off = offsetof(LB, fmt),
     .size = MB_FIELD_SIZE(LB, fmt),
     .sdef = "maildir",
     .choices = mail_formats,
     .help = "Dovecot's mailbox format"},
    {.path = "tls",
     .flag = "tls",
     .type = MB_OT_FLAG,
     .off = offsetof(LB, tls),
     .help = "TLS: a self-signed certificate under DIR/lab (tls-cert.pem, the --tls-ca to "
	     "give), STARTTLS on the imap and smtp ports and imaps/smtps listeners (lab.env "
	     "MB_LAB_IMAPS, MB_LAB_SMTPS, MB_LAB_TLS_CA)"},
};

const struct mb_cmd_entry mb_cmd_lab_entry = {
    .name = "lab",
    .usage = "dovecot --data DIR [--users N] [--login-mode performance|secure] [OPTIONS]",
    .summary = "a throwaway Dovecot + Postfix on loopback, configured under DIR",
    .about = "Start a throwaway Dovecot (IMAP + LMTP) and Postfix (submission -> virtual\n"
	     "aliases for the distribution lists -> LMTP into Dovecot) on free loopback\n"
	     "ports, configured under DIR/lab (no system config is read or touched), print\n"
	     "the URLs for --target and --submit, and keep them up (restarting a Dovecot\n"
	     "that dies) until SIGTERM or Ctrl-C; then stop both, leaving no process.\n"
	     "While up, DIR/lab.env and DIR/lab.json hold the URLs, the server PIDs and the\n"
	     "login-process mode.  Needs root (Postfix) and dovecot-imapd, dovecot-lmtpd,\n"
	     "postfix.",
    .epilog = "exit codes: 0 stopped cleanly, 2 usage error, 3 a server failed",
    .opts = lab_opts,
    .nopts = (int)(sizeof(lab_opts) / sizeof(lab_opts[0])),
    .args_size = sizeof(struct lab_args),
    .flags = MB_CMD_OPERANDS,
    .run = lab_run,
};
