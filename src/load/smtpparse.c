/* smtpparse.c: the incremental SMTP reply parser (see smtpparse.h).  Lines
 * are copied into one buffer per reply; line texts point into it. */

#include "load/smtpparse.h"
#include "load/crlf.h"

#include "core/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_LINE 4096
#define MAX_REPLY (MB_SMTP_MAX_LINES * 256)

enum state { ST_LINE, ST_DONE, ST_ERROR };

struct mb_smtp_parser {
	enum state st;
	char buf[MAX_REPLY + MAX_LINE + 8];
	size_t len; /* bytes of finished lines in buf */
	size_t cur; /* start of the line being read */
	size_t offs[MB_SMTP_MAX_LINES];
	struct mb_smtp_reply r;
	char err[200];
};

int mb_smtp_parser_create(struct mb_smtp_parser **out)
{
	struct mb_smtp_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return MB_ENOMEM;
	*out = p;
	return 0;
}

void mb_smtp_parser_destroy(struct mb_smtp_parser *p) { free(p); }

static void clear(struct mb_smtp_parser *p)
{
	p->len = p->cur = 0;
	memset(&p->r, 0, sizeof(p->r));
}

void mb_smtp_parser_reset(struct mb_smtp_parser *p)
{
	clear(p);
	p->st = ST_LINE;
	p->err[0] = 0;
}

const char *mb_smtp_parser_error(const struct mb_smtp_parser *p)
{
	return p->err[0] ? p->err : "no error";
}

const struct mb_smtp_reply *mb_smtp_parser_reply(const struct mb_smtp_parser *p)
{
	return p->st == ST_DONE ? &p->r : NULL;
}

static int fail(struct mb_smtp_parser *p, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->st = ST_ERROR;
	return code;
}

/* Is l[0..n) (without its line end) a reply line: three digits, then '-'
 * (more lines follow: 0), ' ' or nothing (the last line: 1)?  -1 when not. */
static int reply_line(const char *l, size_t n)
{
	if (n < 3 || !isdigit((unsigned char)l[0]) || !isdigit((unsigned char)l[1]) ||
	    !isdigit((unsigned char)l[2]) || (n > 3 && l[3] != ' ' && l[3] != '-'))
		return -1;
	return n == 3 || l[3] == ' ';
}

/* A complete line is in buf[cur, len) without its line end: check it.
 * Returns 1 when it ends the reply, 0 when more lines follow. */
static int end_line(struct mb_smtp_parser *p)
{
	char *l = p->buf + p->cur;
	size_t n = p->len - p->cur;
	int last = reply_line(l, n);
	if (last < 0)
		return fail(p, MB_EPROTO, "not an SMTP reply line: '%.*s'", (int)(n > 60 ? 60 : n),
			    l);
	if (l[0] < '2' || l[0] > '5')
		return fail(p, MB_EPROTO, "reply code %.3s out of range", l);
	int code = (l[0] - '0') * 100 + (l[1] - '0') * 10 + (l[2] - '0');
	if (p->r.nlines && code != p->r.code)
		return fail(p, MB_EPROTO, "multi-line reply changes its code from %d to %d",
			    p->r.code, code);
	if (p->r.nlines == MB_SMTP_MAX_LINES)
		return fail(p, MB_ETOOBIG, "reply of more than %d lines", MB_SMTP_MAX_LINES);
	p->r.code = code;
	p->buf[p->len] = 0;
	p->r.line[p->r.nlines++] = n > 3 ? l + 4 : l + 3;
	p->len++; /* keep the NUL */
	p->cur = p->len;
	return last;
}

int mb_smtp_parser_feed(struct mb_smtp_parser *p, const char *data, size_t len, size_t *used)
{
	size_t i = 0;
	*used = 0;
	if (p->st == ST_ERROR)
		return MB_EPROTO;
	if (p->st == ST_DONE) {
		clear(p);
		p->st = ST_LINE;
	}
	while (i < len) {
		size_t take;
		int eol = mb_crlf_scan(data + i, len - i, p->len - p->cur, MAX_LINE, &take);
		if (eol < 0)
			return fail(p, MB_ETOOBIG, "reply line over %d bytes", MAX_LINE);
		memcpy(p->buf + p->len, data + i, take);
		p->len += take;
		i += take;
		if (!eol)
			break;
		p->len = p->cur + mb_crlf_text(p->buf + p->cur, p->len - p->cur);
		int rc = end_line(p);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			*used = i;
			p->st = ST_DONE;
			return 1;
		}
		if (p->len > MAX_REPLY)
			return fail(p, MB_ETOOBIG, "reply over %d bytes", MAX_REPLY);
	}
	*used = i;
	return 0;
}

const char *mb_smtp_ehlo_has(const struct mb_smtp_reply *r, const char *keyword)
{
	size_t kl = strlen(keyword);
	for (int i = 1; i < r->nlines; i++) {
		const char *l = r->line[i];
		if (!strncasecmp(l, keyword, kl) && (l[kl] == 0 || l[kl] == ' ' || l[kl] == '='))
			return l[kl] ? l + kl + 1 : l + kl;
	}
	return NULL;
}

long mb_smtp_frame(const char *p, size_t len)
{
	size_t i = 0;
	while (i < len) {
		size_t take;
		int eol = mb_crlf_scan(p + i, len - i, 0, MAX_LINE, &take);
		if (eol <= 0)
			return eol; /* 0: more is needed; MB_ETOOBIG */
		int last = reply_line(p + i, mb_crlf_text(p + i, take));
		if (last < 0)
			return MB_EPROTO;
		i += take;
		if (last)
			return (long)i;
	}
	return 0;
}
