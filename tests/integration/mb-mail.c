/* mb-mail.c: a test client of real mail servers over the lab part's
 * clients (src/lab/mailc.h):
 *   mb-mail login IMAPURL USER PASS            log in, print the capabilities
 *   mb-mail send SMTPURL USER PASS FROM MSGID RCPT...
 *                                              submit one small message (AUTH PLAIN)
 *   mb-mail count IMAPURL USER PASS MSGID      messages in INBOX with that Message-ID
 *   mb-mail status IMAPURL USER PASS FOLDER    messages in FOLDER (STATUS)
 *   mb-mail unseen IMAPURL USER PASS           unseen messages in INBOX (SEARCH UNSEEN)
 * Before the command, TLS as the load engine's flags: --tls starttls
 * (STARTTLS on imap:// and smtp://; imaps:// and smtps:// are TLS from the
 * first byte), --tls-ca FILE, --tls-insecure.
 * Exit 0 ok, 1 failure (message on stderr), 2 usage. */
#include "config.h"

#include "core/tls.h"
#include "lab/mailc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cnt {
	int n;
};

static void on_search(void *arg, const struct mb_imap_resp *r)
{
	struct cnt *c = arg;
	if (r->kind == MB_IMAP_UNTAGGED && !strcmp(r->name, "SEARCH"))
		for (const struct mb_imap_node *n = r->args; n; n = n->next)
			c->n++;
}

int main(int argc, char **argv)
{
	char host[256], err[600];
	int port;
	bool starttls = false, insecure = false;
	const char *ca = NULL;
	while (argc > 2 && !strncmp(argv[1], "--", 2)) {
		if (!strcmp(argv[1], "--tls") && !strcmp(argv[2], "starttls")) {
			starttls = true;
		} else if (!strcmp(argv[1], "--tls-ca")) {
			ca = argv[2];
		} else if (!strcmp(argv[1], "--tls-insecure")) {
			insecure = true;
			argv--, argc++; /* no value */
		} else {
			fprintf(stderr, "mb-mail: unknown option %s\n", argv[1]);
			return 2;
		}
		argv += 2;
		argc -= 2;
	}
	if (argc < 5) {
		fprintf(stderr, "usage: mb-mail login|send|count URL USER PASS ...\n");
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "send")) {
		struct mb_smtpc *s;
		if (argc < 8 || mb_mail_url(argv[2], "smtp", host, sizeof(host), &port))
			return 2;
		int mode = mb_mail_url_tls(argv[2]) ? MB_TLS_IMPLICIT
			   : starttls		    ? MB_TLS_STARTTLS
						    : MB_TLS_NONE;
		if (mb_smtpc_tls(mode, ca, insecure, err, sizeof(err))) {
			fprintf(stderr, "--tls-ca: %s\n", err);
			return 2;
		}
		if (mb_smtpc_connect(host, port, 10000, &s, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		if (mb_smtpc_auth(s, argv[3], argv[4])) {
			fprintf(stderr, "AUTH: %s\n", mb_smtpc_error(s));
			mb_smtpc_close(s);
			return 1;
		}
		char msg[1024];
		int n = snprintf(msg, sizeof(msg),
				 "From: <%s>\r\nSubject: lab test\r\nMessage-ID: <%s>\r\n\r\n"
				 "Hello from the mailbench lab test.\r\n.leading dot\r\n",
				 argv[5], argv[6]);
		int acc[64];
		char qid[64];
		int nr = argc - 7 > 64 ? 64 : argc - 7;
		if (mb_smtpc_send(s, argv[5], (const char *const *)argv + 7, nr, msg, (size_t)n,
				  acc, qid, sizeof(qid))) {
			fprintf(stderr, "send: %s\n", mb_smtpc_error(s));
			mb_smtpc_close(s);
			return 1;
		}
		printf("queued as %s\n", qid);
		mb_smtpc_close(s);
		return 0;
	}
	struct mb_imapc *c;
	if (mb_mail_url(argv[2], "imap", host, sizeof(host), &port))
		return 2;
	int mode = mb_mail_url_tls(argv[2]) ? MB_TLS_IMPLICIT
		   : starttls		    ? MB_TLS_STARTTLS
					    : MB_TLS_NONE;
	if (mb_imapc_tls(mode, ca, insecure, err, sizeof(err))) {
		fprintf(stderr, "--tls-ca: %s\n", err);
		return 2;
	}
	if (mb_imapc_connect(host, port, 10000, &c, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (mb_imapc_login(c, argv[3], argv[4])) {
		fprintf(stderr, "login: %s\n", mb_imapc_error(c));
		mb_imapc_close(c);
		return 1;
	}
	int rc = 0;
	if (!strcmp(cmd, "login")) {
		printf(
		    "logged in; UIDPLUS %d IDLE %d MOVE %d CONDSTORE %d QRESYNC %d LITERAL+ %d\n",
		    mb_imapc_has_cap(c, "UIDPLUS"), mb_imapc_has_cap(c, "IDLE"),
		    mb_imapc_has_cap(c, "MOVE"), mb_imapc_has_cap(c, "CONDSTORE"),
		    mb_imapc_has_cap(c, "QRESYNC"), mb_imapc_has_cap(c, "LITERAL+"));
	} else if ((!strcmp(cmd, "count") && argc >= 6) || !strcmp(cmd, "unseen")) {
		/* SEARCH in INBOX, the matches counted */
		char crit[600];
		if (!strcmp(cmd, "count"))
			snprintf(crit, sizeof(crit), "HEADER Message-ID \"<%s>\"", argv[5]);
		else
			snprintf(crit, sizeof(crit), "UNSEEN");
		struct cnt k = {0};
		if (mb_imapc_cmd(c, NULL, NULL, "EXAMINE INBOX") ||
		    mb_imapc_cmd(c, on_search, &k, "SEARCH %s", crit)) {
			fprintf(stderr, "%s\n", mb_imapc_error(c));
			rc = 1;
		} else {
			printf("%d\n", k.n);
		}
	} else if (!strcmp(cmd, "status") && argc >= 6) {
		uint32_t n;
		if (mb_imapc_count(c, argv[5], &n)) {
			fprintf(stderr, "%s\n", mb_imapc_error(c));
			rc = 1;
		} else {
			printf("%u\n", n);
		}
	} else {
		rc = 2;
	}
	mb_imapc_close(c);
	return rc;
}
