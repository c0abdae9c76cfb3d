/* smtpparse.h: an incremental SMTP reply parser (client side, RFC 5321
 * section 4.2) for submission with PIPELINING.
 *
 * Pure: no I/O.  Bytes arrive in any split; a reply is one or more lines
 * "DDD-text" ending with "DDD text" (or "DDD" alone), all with the same
 * code.  With PIPELINING several replies arrive in one read: feed() returns
 * 1 for each in turn.  Anything else (a line that does not start with three
 * digits and '-', ' ' or the line end, a multi-line reply whose codes
 * differ, a line or reply over the limits) is an error with a message
 * (sticky until reset).
 *
 *   [LINE] --"DDD-"--> [LINE: continuation] --"DDD "/"DDD\r\n"--> reply done
 *
 * Invariants: the reply returned stays valid until the next feed()/reset();
 * line i's text is NUL-terminated, without the code and separator.
 */
#ifndef MB_LOAD_SMTPPARSE_H
#define MB_LOAD_SMTPPARSE_H

#include <stddef.h>

#define MB_SMTP_MAX_LINES 256

struct mb_smtp_reply {
	int code; /* 250 */
	int nlines;
	const char *line[MB_SMTP_MAX_LINES]; /* texts ("PIPELINING", "AUTH PLAIN LOGIN") */
};

struct mb_smtp_parser;

int mb_smtp_parser_create(struct mb_smtp_parser **out);
void mb_smtp_parser_destroy(struct mb_smtp_parser *p);
void mb_smtp_parser_reset(struct mb_smtp_parser *p);
/* 1 and *used when a reply is complete, 0 when all was consumed, MB_EPROTO
 * or MB_ETOOBIG on garbage (message in mb_smtp_parser_error()). */
int mb_smtp_parser_feed(struct mb_smtp_parser *p, const char *data, size_t len, size_t *used);
const struct mb_smtp_reply *mb_smtp_parser_reply(const struct mb_smtp_parser *p);
const char *mb_smtp_parser_error(const struct mb_smtp_parser *p);

/* Framing without copying: the length of the first whole reply in
 * p[0..len) (through the LF of its last line), 0 when more is needed,
 * MB_EPROTO when a line does not start like a reply line. */
long mb_smtp_frame(const char *p, size_t len);

/* An EHLO reply's keyword (case-insensitive, first word of a line after
 * the first): its parameters ("" when none), or NULL when absent. */
const char *mb_smtp_ehlo_has(const struct mb_smtp_reply *r, const char *keyword);

#endif
