/* mailmsg.h: the Internet-message form of mailbench's items, for targets
 * that store RFC 5322 messages (IMAP): mail, appointments (an iCalendar
 * VEVENT, as IMAP groupware clients keep calendars in IMAP folders) and
 * contacts (a vCard 3.0).  Pure; the bytes are a function of the
 * arguments (bodies from core/content.h by seed), with CRLF line ends and
 * lines under 78 characters.  Every item carries a Message-ID
 * "<ID@mailbench>" that names it: provisioning resumes and the check
 * finds acknowledged messages by it.
 */
#ifndef MB_LOAD_MAILMSG_H
#define MB_LOAD_MAILMSG_H

#include <stddef.h>
#include <stdint.h>

enum mb_mailmsg_kind {
	MB_MAILMSG_MAIL = 0,
	MB_MAILMSG_APPOINTMENT = 1,
	MB_MAILMSG_CONTACT = 2,
};

struct mb_mailmsg {
	enum mb_mailmsg_kind kind;
	const char *id;	       /* Message-ID without <> and domain: "init.3.17" */
	const char *from;      /* address */
	const char *const *to; /* addresses */
	int nto;
	uint64_t seed;		 /* subject and body */
	size_t body_bytes;	 /* body size (mail); notes (appointment, contact) */
	int64_t date_s;		 /* Date: (Unix seconds) */
	int64_t start_s, end_s;	 /* appointment */
	const char *in_reply_to; /* Message-ID id of the quoted message, or NULL */
};

/* A malloc'd message (NUL-terminated, *len without the NUL): 0 or MB_ENOMEM. */
int mb_mailmsg_build(const struct mb_mailmsg *m, char **out, size_t *len);

#endif
