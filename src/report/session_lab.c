/* session_lab.c: a real mail server in a run (an IMAP target): the lab the
 * session starts (--target lab:dovecot: `mailbench lab dovecot` as a
 * supervised child, up when its stdout names both URLs), provisioning over
 * IMAP (`mailbench init --target imap://... --complete`), and the ack check
 * at the end (`mailbench check --target imap:// --ack-log`, again every
 * CHECK_RETRY_MS while a message is missing, for CHECK_WINDOW_S at most).
 * Invariants: the check runs at most once at a time and only while the
 * server is up; check_done is set exactly when the run may finish (the
 * check gave its verdict, or cannot run); every lab master seen is
 * remembered in srv_seen so that destroy can kill what a dead lab left. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "core/options.h"
#include "core/tls.h"
#include "report/session_int.h"
#include "report/runopts.h"

/* the check over IMAP: again every CHECK_RETRY_MS while a message is
 * missing (queued by Postfix while Dovecot was down, delivered at its next
 * queue run), for CHECK_WINDOW_S at most */
#define CHECK_RETRY_MS 2000
#define CHECK_WINDOW_S 40.0

/* The lab's and the check's lines: the lab says its URLs once both servers
 * answer, and restarts a server that died and says so; the check says its
 * verdict on stdout, what it waits for and what is missing on stderr. */
static void lab_up(struct mb_session *s, const char *line);

void mb__lab_line(struct mb_session *s, struct mb_child *c, enum mb_child_stream st,
		  const char *line)
{
	if (mb__role_of(c) == ROLE_LAB && st == MB_CHILD_STDOUT && strstr(line, "--target ") &&
	    strstr(line, "--submit "))
		lab_up(s, line);
	if (mb__role_of(c) == ROLE_LAB && strstr(line, "exited") && strstr(line, "restarting")) {
		s->lab_restarts++;
		mb__emit_msg(s, "%s", line);
	}
	if (mb__role_of(c) == ROLE_CHECK && st == MB_CHILD_STDOUT && !strncmp(line, "check: ", 7))
		snprintf(s->check_line, sizeof(s->check_line), "%s", line);
	if (mb__role_of(c) == ROLE_CHECK && st == MB_CHILD_STDERR && !strncmp(line, "check: ", 7))
		mb__emit_msg(s, "%s", line); /* what the check waited for */
	if (mb__role_of(c) == ROLE_CHECK && st == MB_CHILD_STDERR &&
	    !strncmp(line, "missing: ", 9) && s->check_nmissing < 5)
		snprintf(s->check_missing[s->check_nmissing++], sizeof(s->check_missing[0]), "%s",
			 line);
}

/* DATA/lab.json as the lab last wrote it (NULL: none, or unreadable). */
static json_t *lab_json(const struct mb_session *s)
{
	char path[MB_PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/lab.json", s->p.data_dir);
	return json_load_file(path, 0, NULL);
}

/* The lab's masters now (DATA/lab.json: rewritten after a restart). */
int mb__lab_roots(struct mb_session *s, pid_t *roots, int max)
{
	json_t *j = lab_json(s);
	int n = 0;
	if (j) {
		static const char *const keys[] = {"dovecot_pid", "postfix_pid"};
		for (int i = 0; i < 2 && n < max; i++) {
			json_t *v = json_object_get(j, keys[i]);
			if (json_is_integer(v) && json_integer_value(v) > 0)
				roots[n++] = (pid_t)json_integer_value(v);
		}
		json_decref(j);
	}
	for (int i = 0; i < n; i++) { /* remembered: killed at destroy if left */
		bool seen = false;
		for (int k = 0; k < s->nsrv_seen && !seen; k++)
			seen = s->srv_seen[k] == roots[i];
		if (!seen && s->nsrv_seen < (int)(sizeof(s->srv_seen) / sizeof(s->srv_seen[0])))
			s->srv_seen[s->nsrv_seen++] = roots[i];
	}
	return n;
}

void mb__start_imap_init(struct mb_session *s)
{
	/* the accounts the server knows (DATA/accounts.json) must cover the run */
	char acc[MB_PATH_MAX + 32];
	snprintf(acc, sizeof(acc), "%s/accounts.json", s->p.data_dir);
	int have = mb__accounts_users(acc);
	if (have > 0 && have < mb_session_users(s)) {
		mb__emit_msg(s,
			     "%s has %d users, the run wants %d: another --data (or remove it and "
			     "the lab's mail)",
			     acc, have, mb_session_users(s));
		s->failed = true;
		mb__finish_load(s);
		return;
	}
	char target[MB_TEXT_MAX + 16], submit[MB_TEXT_MAX + 16];
	mb_runopts_url(&s->tcfg, 0, target, sizeof(target));
	mb_runopts_url(&s->tcfg, 1, submit, sizeof(submit));
	struct mb_argv av;
	mb_argv_init(&av, &mb_cmd_init_imap_entry);
	mb_argv_add(&av, "target", target);
	mb_runopts_tls_argv(&s->tcfg, &av);
	if (s->tcfg.address[1][0])
		mb_argv_add(&av, "submit", submit);
	mb_argv_add(&av, "scenario", s->sc.path[0] ? s->sc.path : s->p.scenario);
	mb_argv_add(&av, "data", s->p.data_dir);
	mb_argv_addf(&av, "users", "%d", mb_session_users(s));
	mb_argv_addf(&av, "scale", "%.10g", mb_session_scale(s));
	/* a fill for another scenario or users is completed, never refused
	 * (nor duplicated); the operator's reinit refills */
	mb_argv_add(&av, s->init_restart ? "restart" : "complete", NULL);
	s->init_restart = false;
	if (mb__spawn_init(s, &av))
		return;
	mb__emit_msg(s, "provisioning %s over IMAP (%d users, scale %g; resumable)", target,
		     mb_session_users(s), mb_session_scale(s));
	mb__emit_change(s);
}

/* The lab's TLS URLs and certificate (DATA/lab.json, written before it
 * says its URLs): implicit TLS on its imaps and smtps ports, STARTTLS on
 * the plain ones; its certificate trusted unless --tls-ca or
 * --tls-insecure said otherwise.  0, or -1 (not a lab with TLS). */
static int lab_tls(struct mb_session *s, char *imap, char *smtp, size_t cap)
{
	json_t *j = lab_json(s);
	const char *is = json_string_value(json_object_get(j, "imaps"));
	const char *ss = json_string_value(json_object_get(j, "smtps"));
	const char *ca = json_string_value(json_object_get(j, "tls_ca"));
	int rc = -1;
	if (is && ss && ca && !strncmp(is, "imaps://", 8) && !strncmp(ss, "smtps://", 8)) {
		if (s->tcfg.tls[0] == MB_TLS_IMPLICIT) {
			snprintf(imap, cap, "%s", is + 8);
			snprintf(smtp, cap, "%s", ss + 8);
		}
		if (!s->tcfg.tls_ca[0] && !s->tcfg.tls_insecure)
			snprintf(s->tcfg.tls_ca, sizeof(s->tcfg.tls_ca), "%s", ca);
		rc = 0;
	}
	json_decref(j);
	return rc;
}

/* The lab's engine line (DATA/lab.json): "Dovecot 2.3.19.1, Postfix
 * 3.7.11 (the lab: maildir, performance login)". */
static void lab_engine(struct mb_session *s)
{
	json_t *j = lab_json(s);
	const char *v = json_string_value(json_object_get(j, "versions"));
	const char *fmt = json_string_value(json_object_get(j, "mail_format"));
	const char *login = json_string_value(json_object_get(j, "login_mode"));
	snprintf(s->lab_engine, sizeof(s->lab_engine), "%s (the lab: %s, %.*s login)",
		 v ? v : "Dovecot, Postfix (versions n/a: DATA/lab.json does not say them)",
		 fmt ? fmt : "n/a", login ? (int)strcspn(login, " ") : 3, login ? login : "n/a");
	json_decref(j);
}

/* "  --target imap://127.0.0.1:P --submit smtp://127.0.0.1:Q" (with TLS:
 * lab_tls) */
static void lab_up(struct mb_session *s, const char *line)
{
	if (s->lab_up || s->state != MB_SS_STARTING)
		return;
	char imap[MB_TEXT_MAX], smtp[MB_TEXT_MAX];
	const char *t = strstr(line, "--target "), *u = strstr(line, "--submit ");
	if (sscanf(t + 9, "imap://%255s", imap) != 1 || sscanf(u + 9, "smtp://%255s", smtp) != 1) {
		mb__emit_msg(s, "the lab's URLs are not understood: %s", line);
		return;
	}
	if (s->tcfg.tls[0] != MB_TLS_NONE && lab_tls(s, imap, smtp, sizeof(imap))) {
		mb__emit_msg(s, "the lab says no TLS URLs or certificate (DATA/lab.json)");
		return;
	}
	snprintf(s->tcfg.address[0], sizeof(s->tcfg.address[0]), "%s", imap);
	snprintf(s->tcfg.address[1], sizeof(s->tcfg.address[1]), "%s", smtp);
	s->lab_up = true;
	lab_engine(s);
	uv_timer_stop(&s->listen_timer);
	pid_t roots[2];
	int n = mb__lab_roots(s, roots, 2);
	if (s->srv)
		mb_srvmon_set_roots(s->srv, roots, n);
	char iu[MB_TEXT_MAX + 16], su[MB_TEXT_MAX + 16];
	mb_runopts_url(&s->tcfg, 0, iu, sizeof(iu));
	mb_runopts_url(&s->tcfg, 1, su, sizeof(su));
	mb__emit_msg(s, "lab up: %s, %s%s (DATA/lab.env)", iu, su,
		     s->tcfg.tls[0] == MB_TLS_STARTTLS ? " with STARTTLS" : "");
	mb__start_imap_init(s);
}

void mb__start_lab(struct mb_session *s)
{
	struct mb_argv av;
	mb_argv_init(&av, &mb_cmd_lab_entry);
	mb_argv_add(&av, "data", s->p.data_dir);
	mb_argv_add(&av, "scenario", s->sc.path[0] ? s->sc.path : s->p.scenario);
	mb_argv_addf(&av, "users", "%d", mb_session_users(s));
	if (s->tcfg.tls[0] != MB_TLS_NONE) /* --tls starttls|implicit */
		mb_argv_add(&av, "tls", NULL);
	const char *const *v = mb_argv_done(&av);
	const char *args[MB_ARGV_MAX + 3];
	int n = 0;
	if (v) { /* "lab dovecot --data ..." */
		args[n++] = v[0];
		args[n++] = "dovecot";
		for (int i = 1; v[i] && n < MB_ARGV_MAX + 2; i++)
			args[n++] = v[i];
		args[n] = NULL;
	} else {
		mb__emit_msg(s, "cannot start the lab: %s", av.why);
	}
	s->lab_up = false;
	s->lab_engine[0] = '\0'; /* this lab's, once it is up */
	if (!v || mb__spawn(s, ROLE_LAB, "lab", args, &s->labc)) {
		s->failed = true;
		mb__finish_load(s);
		return;
	}
	s->state = MB_SS_STARTING;
	mb__emit_msg(s, "starting the lab (Dovecot + Postfix) under %s/lab", s->p.data_dir);
	uv_timer_start(&s->listen_timer, mb__on_listen_timeout, LAB_START_TIMEOUT_MS, 0);
	mb__emit_change(s);
}

/* `mailbench check --target imap://... --ack-log ...`: every acknowledged
 * message read back; sets check_done when it cannot run. */
void mb__start_check(struct mb_session *s)
{
	if (s->check)
		return;
	if (s->check_t0 == 0)
		s->check_t0 = mb_now_s();
	struct stat st;
	if (!s->ack_log[0] || stat(s->ack_log, &st) != 0) {
		s->check_done = true;
		snprintf(s->check_note, sizeof(s->check_note), "no ack log (nothing acknowledged)");
		return;
	}
	char target[MB_TEXT_MAX + 16];
	mb_runopts_url(&s->tcfg, 0, target, sizeof(target));
	struct mb_argv av;
	mb_argv_init(&av, &mb_cmd_check_imap_entry);
	mb_argv_add(&av, "target", target);
	mb_runopts_tls_argv(&s->tcfg, &av);
	mb_argv_add(&av, "ack-log", s->ack_log);
	mb_argv_add(&av, "data", s->p.data_dir);
	const char *const *args = mb_argv_done(&av);
	s->check_line[0] = '\0';
	s->check_nmissing = 0;
	if (!args || mb__spawn(s, ROLE_CHECK, "check", args, &s->check)) {
		s->check_done = true;
		snprintf(s->check_note, sizeof(s->check_note), "the check could not start: %.200s",
			 args ? "mb__spawn failed" : av.why);
		return;
	}
	s->state = MB_SS_STOPPING;
	if (s->check_tries == 0)
		mb__emit_msg(s, "checking every acknowledged message over IMAP (%s)", target);
	mb__emit_change(s);
}

static void on_check_timer(uv_timer_t *t)
{
	struct mb_session *s = t->data;
	mb__start_check(s);
	if (s->check_done)
		mb__finish_load(s);
}

void mb__lab_exited(struct mb_session *s, bool asked)
{
	s->lab_up = false;
	if (!asked) {
		s->failed = true;
		if (s->init)
			mb_child_stop(s->init, MB_SUP_GRACE_MS);
		if (s->load)
			mb_child_stop(s->load, MB_SUP_GRACE_MS);
		if (s->check)
			mb_child_stop(s->check, MB_SUP_GRACE_MS);
	}
	if (!s->init && !s->load && !s->check && s->state != MB_SS_IDLE && s->state != MB_SS_DONE &&
	    s->state != MB_SS_FAILED) {
		s->check_done = true;
		mb__finish_load(s);
	}
}

/* The check's verdict ("check: ...: N acknowledged messages, M missing"),
 * or another attempt while messages are missing within the window. */
void mb__check_exited(struct mb_session *s, struct mb_child *c)
{
	int64_t st = mb_child_exit_status(c);
	unsigned long long must = 0, missing = 0;
	const char *q = strstr(s->check_line, ": ");
	q = q ? strstr(q + 2, ": ") : NULL;
	bool parsed =
	    q && sscanf(q + 2, "%llu acknowledged messages, %llu missing", &must, &missing) == 2;
	bool final = s->interrupted || mb_child_term_signal(c) != 0 ||
		     mb_now_s() - s->check_t0 >= CHECK_WINDOW_S || (st == 0 && parsed) ||
		     (s->lab && !s->lab_up);
	if (!final) {
		/* missing now, or the server could not be read: again */
		s->check_tries++;
		uv_timer_start(&s->check_timer, on_check_timer, CHECK_RETRY_MS, 0);
		return;
	}
	s->check_done = true;
	if (parsed && (st == 0 || st == 1)) {
		s->check_ran = true;
		s->ack_must = (double)must;
		s->ack_missing = (double)missing;
		snprintf(s->check_note, sizeof(s->check_note),
			 "mailbench check over IMAP, %d attempt%s%s%.180s", s->check_tries + 1,
			 s->check_tries ? "s" : "", s->lab_restarts ? "; " : "",
			 s->lab_restarts ? "Dovecot restarted by the lab during the run" : "");
		mb__emit_msg(s, "%s", s->check_line);
		/* which ones: to look for in the servers' logs */
		for (int i = 0; i < s->check_nmissing; i++)
			mb__emit_msg(s, "check: %s%s", s->check_missing[i],
				     i == 4 && missing > 5 ? " (and more)" : "");
	} else {
		char tail[200];
		mb_child_stderr_tail(c, tail, sizeof(tail));
		char *nl = strrchr(tail, '\n');
		if (nl && !nl[1])
			*nl = '\0';
		snprintf(s->check_note, sizeof(s->check_note),
			 "the check failed (exit %lld): %.180s", (long long)st, tail);
		mb__emit_msg(s, "ack check: %s", s->check_note);
	}
	mb__finish_load(s);
}
