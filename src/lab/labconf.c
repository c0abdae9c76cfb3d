/* labconf.c: the lab's configuration files, written before its servers
 * start: dovecot.conf, Postfix's main.cf and master.cf, and the account
 * maps (passwd for Dovecot, virtual and vmailbox for Postfix) from the
 * topology.  Every file is written whole and atomically (a temporary file
 * renamed over it), with the mode given (passwd 0600: it holds passwords).
 * Invariant: nothing here starts a process or touches a running server.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "lab/lab.h"
#include "lab/lab_int.h"

/* Write a whole file atomically. */
static int write_file(const char *path, const char *text, mode_t mode)
{
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return mb_from_errno(errno);
	size_t len = strlen(text), off = 0;
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			unlink(tmp);
			return MB_EIO;
		}
		off += (size_t)n;
	}
	if (fchmod(fd, mode) || close(fd) || rename(tmp, path)) {
		unlink(tmp);
		return MB_EIO;
	}
	return 0;
}

/* A growable text buffer for the maps. */
struct text {
	char *s;
	size_t len, cap;
	int err;
};

static void tprintf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->err = MB_EINVAL;
			return;
		}
		if (t->s && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		char *ns = realloc(t->s, cap);
		if (!ns) {
			t->err = MB_ENOMEM;
			return;
		}
		t->s = ns;
		t->cap = cap;
	}
}

static int text_write(struct text *t, const char *path, mode_t mode)
{
	int rc = t->err ? t->err : write_file(path, t->s ? t->s : "", mode);
	free(t->s);
	return rc;
}

int mb_lab_write_passwd(const struct mb_topology *t, const char *path, unsigned uid, unsigned gid,
			const char *home_prefix)
{
	struct text x = {0};
	for (int i = 0; i < mb_topology_user_count(t); i++) {
		const struct mb_topo_user *u = mb_topology_user(t, i);
		tprintf(&x, "%s:{PLAIN}%s:%u:%u::%s/%s::\n", u->name, u->password, uid, gid,
			home_prefix, u->name);
	}
	return text_write(&x, path, 0600);
}

int mb_lab_write_virtual(const struct mb_topology *t, const char *domain, const char *path)
{
	struct text x = {0};
	tprintf(&x,
		"# distribution lists of the mailbench accounts (Postfix virtual_alias_maps)\n");
	for (int i = 0; i < mb_topology_list_count(t); i++) {
		const struct mb_topo_list *l = mb_topology_list(t, i);
		tprintf(&x, "%s@%s", l->name, domain);
		for (int m = 0; m < l->nmembers; m++)
			tprintf(&x, "%s%s@%s", m ? "," : " ",
				mb_topology_user(t, (int)l->members[m])->name, domain);
		tprintf(&x, "\n");
	}
	return text_write(&x, path, 0644);
}

int mb_lab_write_vmailbox(const struct mb_topology *t, const char *domain, const char *path)
{
	struct text x = {0};
	for (int i = 0; i < mb_topology_user_count(t); i++)
		tprintf(&x, "%s@%s %s/\n", mb_topology_user(t, i)->name, domain,
			mb_topology_user(t, i)->name);
	return text_write(&x, path, 0644);
}

int mb__lab_write_dovecot_conf(struct mb_lab *l, unsigned uid, const char *user, int ncpu)
{
	const char *d = l->info.dir;
	int perf = l->o.login == MB_LAB_LOGIN_PERFORMANCE;
	int nusers = mb_topology_user_count(l->o.accounts);
	int imap_limit = nusers * 2 + 64 > 1024 ? nusers * 2 + 64 : 1024;
	struct text x = {0};
	const char *fmt =
	    l->o.mail_format && !strcmp(l->o.mail_format, "mdbox") ? "mdbox" : "maildir";

	tprintf(&x,
		"# dovecot.conf: the mailbench lab's Dovecot (written by `mailbench lab dovecot`;\n"
		"# a throwaway: every path below is under %s, nothing of /etc/dovecot is read).\n"
		"base_dir = %s/run\n"
		"state_dir = %s/state\n"
		"log_path = %s/dovecot.log\n"
		"instance_name = mailbench-lab-%d\n"
		"listen = 127.0.0.1\n"
		"protocols = imap lmtp\n"
		"disable_plaintext_auth = no\n"
		"auth_mechanisms = plain login\n"
		"auth_username_format = %%Ln\n"
		"mail_location = %s:~/%s\n"
		"first_valid_uid = %u\n"
		"last_valid_uid = 0\n",
		d, d, d, d, (int)getpid(), fmt, !strcmp(fmt, "mdbox") ? "mdbox" : "Maildir", uid);
	if (l->o.tls)
		tprintf(
		    &x,
		    "# TLS (--tls): STARTTLS on the imap port, TLS from the first byte on imaps\n"
		    "ssl = yes\nssl_cert = <%s\nssl_key = <%s\nssl_min_protocol = TLSv1.2\n"
		    "verbose_ssl = no\n",
		    l->info.tls_cert, l->info.tls_key);
	else
		tprintf(&x, "ssl = no\n");
	if (getuid() != 0)
		tprintf(&x, "default_internal_user = %s\ndefault_login_user = %s\n", user, user);
	tprintf(
	    &x,
	    "passdb {\n  driver = passwd-file\n  args = scheme=PLAIN %s/passwd\n}\n"
	    "userdb {\n  driver = passwd-file\n  args = %s/passwd\n}\n"
	    "namespace inbox {\n  inbox = yes\n  separator = /\n"
	    "  mailbox \"Sent Items\" {\n    special_use = \\Sent\n    auto = subscribe\n  }\n"
	    "  mailbox \"Deleted Items\" {\n    special_use = \\Trash\n    auto = subscribe\n  }\n"
	    "  mailbox Calendar {\n    auto = subscribe\n  }\n"
	    "  mailbox Contacts {\n    auto = subscribe\n  }\n"
	    "}\n"
	    "# IDLE: new mail within a second even where inotify is short\n"
	    "mailbox_idle_check_interval = 1 secs\n"
	    "protocol imap {\n  mail_max_userip_connections = 1000\n}\n"
	    "protocol lmtp {\n  postmaster_address = postmaster@%s\n}\n",
	    d, d, MB_LAB_DOMAIN);
	/* The login-process setting: it changes logins/s about 30x. */
	if (perf)
		tprintf(
		    &x,
		    "# Login processes: PERFORMANCE mode (service_count = 0: a login process\n"
		    "# serves many connections; process_min_avail = CPUs: they are started in\n"
		    "# advance).  About 30x the logins/s of Debian's default (service_count = 1,\n"
		    "# one login process per connection); reports name the mode.\n"
		    "service imap-login {\n"
		    "  inet_listener imap {\n    port = %d\n  }\n"
		    "  inet_listener imaps {\n    port = %d\n  }\n"
		    "  service_count = 0\n  process_min_avail = %d\n  client_limit = %d\n}\n"
		    "service imap {\n  service_count = 0\n  process_min_avail = %d\n"
		    "  process_limit = %d\n}\n",
		    l->info.imap_port, l->info.imaps_port, ncpu, imap_limit, ncpu, imap_limit);
	else
		tprintf(&x,
			"# Login processes: SECURE mode, Debian's default (service_count = 1: one\n"
			"# login process per connection).  About 1/30 of the logins/s of\n"
			"# service_count = 0 with process_min_avail; reports name the mode.\n"
			"service imap-login {\n"
			"  inet_listener imap {\n    port = %d\n  }\n"
			"  inet_listener imaps {\n    port = %d\n  }\n"
			"  service_count = 1\n  process_limit = %d\n}\n"
			"service imap {\n  process_limit = %d\n}\n",
			l->info.imap_port, l->info.imaps_port, imap_limit, imap_limit);
	tprintf(&x,
		"service lmtp {\n  inet_listener lmtp {\n    address = 127.0.0.1\n    port = %d\n  "
		"}\n}\n"
		"# SASL for Postfix's submission listener\n"
		"service auth {\n  inet_listener {\n    address = 127.0.0.1\n    port = %d\n  }\n"
		"  client_limit = %d\n}\n",
		l->info.lmtp_port, l->info.auth_port, imap_limit * 2 + 1000);
	return text_write(&x, l->conf, 0644);
}

int mb__lab_write_postfix_conf(struct mb_lab *l)
{
	const char *d = l->info.dir;
	char path[4300];
	struct text x = {0};
	tprintf(&x,
		"# main.cf: the mailbench lab's Postfix (written by `mailbench lab dovecot`;\n"
		"# a throwaway: submission on 127.0.0.1:%d -> virtual aliases (the\n"
		"# distribution lists) -> LMTP into the lab's Dovecot).\n"
		"compatibility_level = 3.6\n"
		"queue_directory = %s/pf-spool\n"
		"data_directory = %s/pf-data\n"
		"mail_owner = postfix\n"
		"setgid_group = postdrop\n"
		"inet_interfaces = loopback-only\n"
		"inet_protocols = ipv4\n"
		"myhostname = lab.%s\n"
		"mydomain = %s\n"
		"myorigin = %s\n"
		"mydestination =\n"
		"mynetworks = 127.0.0.0/8\n"
		"relayhost =\n"
		"local_transport = error:local delivery is disabled in the lab\n"
		"alias_maps =\n"
		"alias_database =\n"
		"virtual_mailbox_domains = %s\n"
		"virtual_mailbox_maps = texthash:%s/vmailbox\n"
		"virtual_alias_maps = texthash:%s/virtual\n"
		"virtual_transport = lmtp:inet:127.0.0.1:%d\n"
		"maillog_file = %s/postfix.log\n"
		"maillog_file_prefixes = %s\n"
		"smtpd_sasl_auth_enable = yes\n"
		"smtpd_sasl_type = dovecot\n"
		"smtpd_sasl_path = inet:127.0.0.1:%d\n"
		"smtpd_relay_restrictions = permit_mynetworks, permit_sasl_authenticated, "
		"reject_unauth_destination\n"
		"smtp_tls_security_level = none\n"
		"biff = no\n"
		"append_dot_mydomain = no\n"
		"notify_classes =\n"
		"message_size_limit = 52428800\n"
		"smtpd_client_connection_count_limit = 0\n"
		"smtpd_client_connection_rate_limit = 0\n"
		"default_process_limit = 200\n"
		"# a Dovecot restarted mid-run gets its deferred mail within seconds\n"
		"queue_run_delay = 1s\n"
		"minimal_backoff_time = 1s\n"
		"maximal_backoff_time = 4s\n"
		"lmtp_destination_concurrency_limit = 20\n"
		"lmtp_destination_recipient_limit = 1000\n",
		l->info.smtp_port, d, d, MB_LAB_DOMAIN, MB_LAB_DOMAIN, MB_LAB_DOMAIN, MB_LAB_DOMAIN,
		d, d, l->info.lmtp_port, d, d, l->info.auth_port);
	if (l->o.tls)
		tprintf(&x,
			"# TLS (--tls): STARTTLS offered on submission, smtps in master.cf\n"
			"smtpd_tls_security_level = may\n"
			"smtpd_tls_cert_file = %s\nsmtpd_tls_key_file = %s\n"
			"smtpd_tls_loglevel = 1\n",
			l->info.tls_cert, l->info.tls_key);
	else
		tprintf(&x, "smtpd_tls_security_level = none\n");
	snprintf(path, sizeof(path), "%s/main.cf", l->pfconf);
	int rc = text_write(&x, path, 0644);
	if (rc)
		return rc;
	memset(&x, 0, sizeof(x));
	tprintf(&x,
		"# master.cf: only the services the lab uses (no chroot, no local delivery)\n"
		"127.0.0.1:%d inet n - n - - smtpd\n"
		"pickup    unix n - n 60  1 pickup\n"
		"cleanup   unix n - n -   0 cleanup\n"
		"qmgr      unix n - n 300 1 qmgr\n"
		"rewrite   unix - - n -   - trivial-rewrite\n"
		"bounce    unix - - n -   0 bounce\n"
		"defer     unix - - n -   0 bounce\n"
		"trace     unix - - n -   0 bounce\n"
		"verify    unix - - n -   1 verify\n"
		"proxymap  unix - - n -   - proxymap\n"
		"lmtp      unix - - n -   - lmtp\n"
		"error     unix - - n -   - error\n"
		"retry     unix - - n -   - error\n"
		"discard   unix - - n -   - discard\n"
		"anvil     unix - - n -   1 anvil\n"
		"scache    unix - - n -   1 scache\n"
		"postlog   unix-dgram n - n - 1 postlogd\n",
		l->info.smtp_port);
	if (l->o.tls)
		tprintf(&x,
			"127.0.0.1:%d inet n - n - - smtpd -o smtpd_tls_wrappermode=yes\n"
			"tlsmgr    unix - - n 1000? 1 tlsmgr\n",
			l->info.smtps_port);
	snprintf(path, sizeof(path), "%s/master.cf", l->pfconf);
	return text_write(&x, path, 0644);
}

/* Spawn argv in its own process group, output appended to logpath. */
