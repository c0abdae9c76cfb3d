/* lab.h: a throwaway lab mail server (`mailbench lab dovecot`): Dovecot
 * (IMAP + LMTP + an auth listener for Postfix's SASL) and Postfix
 * (submission -> virtual aliases for the distribution lists -> LMTP into
 * Dovecot), both run from configs written under DATA/lab, on free loopback
 * ports, as children of this process.  No system config is read or
 * touched and no system service is started.
 *
 * States of a lab:
 *
 *   mb_lab_start: write configs -> spawn dovecot -F, postfix start-fg
 *       -> wait for "* OK" on IMAP and "220" on SMTP -> UP
 *   UP: mb_lab_poll() reaps a child that died and restarts Dovecot (with
 *       backoff) so that a run survives a killed server; a dead Postfix
 *       is restarted too
 *   mb_lab_stop: SIGTERM to both masters, wait (10 s), SIGKILL what is
 *       left of their process groups -> no process left -> destroyed
 *
 * Invariants: both servers listen on 127.0.0.1 only; every file a lab
 * writes is under DATA/lab (mail under DATA/lab/mail, owned by the
 * account the mail processes run as: "mail" when root, else the caller);
 * after mb_lab_stop() returns no process of the lab is alive.  Postfix
 * refuses to run unless started by root: a non-root caller gets
 * MB_EACCES with that said.
 */
#ifndef MB_LAB_LAB_H
#define MB_LAB_LAB_H

#include <stddef.h>
#include <sys/types.h>

#include "core/topology.h"

#define MB_LAB_DOMAIN "mailbench.test"

/* Login-process modes of Dovecot (peers.md: ~30x apart in logins/s). */
enum mb_lab_login {
	MB_LAB_LOGIN_PERFORMANCE = 0, /* service_count = 0, process_min_avail = CPUs */
	MB_LAB_LOGIN_SECURE = 1,      /* Debian's default: one login process per connection */
};

struct mb_lab_opts {
	const char *data;	 /* DATA directory (created) */
	const char *mail_format; /* "maildir" (default) or "mdbox" */
	enum mb_lab_login login;
	const struct mb_topology *accounts; /* users, passwords, lists */
	int start_timeout_ms;		    /* default 20,000 */
	int quiet;			    /* no progress lines on stderr */
	int tls; /* TLS: a self-signed certificate (DIR/lab/tls-cert.pem), Dovecot's
		  * ssl = yes (STARTTLS on imap, an imaps listener), Postfix's
		  * STARTTLS on submission and an smtps (wrapper mode) listener */
};

struct mb_lab_info {
	int imap_port, lmtp_port, auth_port, smtp_port;
	int imaps_port, smtps_port; /* with tls, else 0 */
	char imap_url[64];	    /* imap://127.0.0.1:PORT */
	char smtp_url[64];	    /* smtp://127.0.0.1:PORT */
	char imaps_url[64];	    /* imaps://127.0.0.1:PORT ("" without tls) */
	char smtps_url[64];	    /* smtps://127.0.0.1:PORT ("" without tls) */
	char tls_cert[4200];	    /* the certificate to pass as --tls-ca ("" without tls) */
	char tls_key[4200];	    /* its private key (mode 0600) */
	char login_mode[160];	    /* for report headers */
	char mail_format[16];
	char versions[160]; /* "Dovecot 2.3.19.1, Postfix 3.7.11" (report headers) */
	char dir[4096];	    /* DATA/lab */
	pid_t dovecot_pid;  /* Dovecot master (our child) */
	pid_t postfix_pid;  /* Postfix master */
	int dovecot_restarts;
};

struct mb_lab;

/* Start the lab (blocking until both servers answer or the timeout).
 * err gets one line on failure (with the server's log tail). */
int mb_lab_start(const struct mb_lab_opts *o, struct mb_lab **out, char *err, size_t errlen);
const struct mb_lab_info *mb_lab_info(const struct mb_lab *l);
/* Reap dead children and restart them (call about once a second).
 * Returns the number of restarts done now, or < 0 when a restart failed. */
int mb_lab_poll(struct mb_lab *l);
/* The lab's server processes now (both masters and their descendants). */
int mb_lab_pids(const struct mb_lab *l, pid_t *pids, int max);
/* The messages a lab's Postfix still holds (queued or deferred), read
 * with `postqueue -c LABDIR/postfix -j`; with flush, `postqueue -f` first
 * (every queued message tried now).  >= 0, or < 0 when postqueue could
 * not be run.  Works on a lab started by another process. */
int mb_lab_queued(const char *labdir, int flush);
/* Stop both servers and free the lab.  0, or MB_EBUSY when a process had
 * to be SIGKILLed (it is gone all the same). */
int mb_lab_stop(struct mb_lab *l);

/* Write the lab's account maps from a topology (also used by `init
 * --target` for an operator to install):
 *   passwd-file  NAME:{PLAIN}PASSWORD:UID:GID::HOME_PREFIX/NAME
 *   virtual      LIST@DOMAIN MEMBER@DOMAIN,...   (Postfix virtual_alias_maps)
 *   vmailbox     NAME@DOMAIN NAME/               (Postfix virtual_mailbox_maps)
 * Files are written atomically, mode 0600 (passwords) or 0644. */
int mb_lab_write_passwd(const struct mb_topology *t, const char *path, unsigned uid, unsigned gid,
			const char *home_prefix);
int mb_lab_write_virtual(const struct mb_topology *t, const char *domain, const char *path);
int mb_lab_write_vmailbox(const struct mb_topology *t, const char *domain, const char *path);

/* Descendants of the given roots (and the roots), from /proc. */
int mb_proc_tree(const pid_t *roots, int nroots, pid_t *out, int max);

#endif
