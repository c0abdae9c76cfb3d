/* mailmsg.c: mail, iCalendar and vCard items as RFC 5322 messages (see
 * mailmsg.h).  Text from the shared content generator is re-flowed into
 * CRLF lines of at most 76 characters. */
#include "load/mailmsg.h"

#include "core/content.h"
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct out {
	char *s;
	size_t len, cap;
	int err;
};

static void put(struct out *o, const char *p, size_t n)
{
	if (o->err)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		while (cap < o->len + n + 1)
			cap *= 2;
		char *ns = realloc(o->s, cap);
		if (!ns) {
			o->err = MB_ENOMEM;
			return;
		}
		o->s = ns;
		o->cap = cap;
	}
	memcpy(o->s + o->len, p, n);
	o->len += n;
	o->s[o->len] = 0;
}

static void pf(struct out *o, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* Re-flow text into lines <= 76 characters (CRLF), paragraphs kept;
 * a line starting with '.' is fine (SMTP dot-stuffs). */
static void flow(struct out *o, const char *t, size_t n)
{
	size_t col = 0, i = 0;
	while (i < n) {
		if (t[i] == '\n') {
			put(o, "\r\n", 2);
			col = 0;
			i++;
			continue;
		}
		size_t w = i;
		while (w < n && t[w] != ' ' && t[w] != '\n')
			w++;
		size_t wl = w - i;
		if (col && col + 1 + wl > 76) {
			put(o, "\r\n", 2);
			col = 0;
		} else if (col) {
			put(o, " ", 1);
			col++;
		}
		while (wl > 76) { /* a very long word: hard wrap */
			put(o, t + i, 76);
			put(o, "\r\n", 2);
			i += 76;
			wl -= 76;
		}
		put(o, t + i, wl);
		col += wl;
		i = w;
		while (i < n && t[i] == ' ')
			i++;
	}
	if (col)
		put(o, "\r\n", 2);
}

static void rfc_date(int64_t s, char *buf, size_t len)
{
	time_t t = (time_t)s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%a, %d %b %Y %H:%M:%S +0000", &tm);
}

static void ical_date(int64_t s, char *buf, size_t len)
{
	time_t t = (time_t)s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm);
}

int mb_mailmsg_build(const struct mb_mailmsg *m, char **out, size_t *len)
{
	struct out o = {0};
	char date[64], subject[160];
	rfc_date(m->date_s, date, sizeof(date));
	mb_content_subject(m->seed, subject, sizeof(subject));
	size_t blen = m->body_bytes ? m->body_bytes : 256;
	char *body = malloc(blen + 1);
	if (!body)
		return MB_ENOMEM;
	mb_content_fill(m->seed, body, blen);
	body[blen] = 0;

	pf(&o, "From: <%s>\r\n", m->from);
	if (m->nto) {
		put(&o, "To: ", 4);
		for (int i = 0; i < m->nto; i++)
			pf(&o, "%s<%s>", i ? ",\r\n " : "", m->to[i]);
		put(&o, "\r\n", 2);
	}
	pf(&o, "Date: %s\r\nMessage-ID: <%s@mailbench>\r\n", date, m->id);
	if (m->in_reply_to)
		pf(&o, "In-Reply-To: <%s@mailbench>\r\n", m->in_reply_to);
	put(&o, "MIME-Version: 1.0\r\n", 19);
	switch (m->kind) {
	case MB_MAILMSG_APPOINTMENT: {
		char st[32], en[32], now[32];
		ical_date(m->start_s, st, sizeof(st));
		ical_date(m->end_s, en, sizeof(en));
		ical_date(m->date_s, now, sizeof(now));
		pf(&o,
		   "Subject: %s\r\nContent-Type: text/calendar; charset=utf-8; component=VEVENT\r\n"
		   "\r\n",
		   subject);
		pf(&o,
		   "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//mailbench//load//EN\r\n"
		   "BEGIN:VEVENT\r\nUID:%s@mailbench\r\nDTSTAMP:%s\r\nDTSTART:%s\r\nDTEND:%s\r\n"
		   "SUMMARY:%s\r\nORGANIZER:mailto:%s\r\n",
		   m->id, now, st, en, subject, m->from);
		for (int i = 0; i < m->nto; i++)
			pf(&o, "ATTENDEE;RSVP=TRUE:mailto:%s\r\n", m->to[i]);
		put(&o, "DESCRIPTION:", 12);
		size_t d = blen > 200 ? 200 : blen;
		for (size_t i = 0; i < d; i++)
			if (body[i] == '\n' || body[i] == ',' || body[i] == ';' || body[i] == '\\')
				body[i] = ' ';
		put(&o, body, d > 60 ? 60 : d);
		put(&o, "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n", 29);
		break;
	}
	case MB_MAILMSG_CONTACT: {
		char fn[64];
		mb_content_subject(m->seed ^ 0x9e3779b97f4a7c15ull, fn, sizeof(fn));
		for (char *p = fn; *p; p++)
			if (*p == ',' || *p == ';')
				*p = ' ';
		pf(&o, "Subject: %s\r\nContent-Type: text/vcard; charset=utf-8\r\n\r\n", fn);
		pf(&o,
		   "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:%s@mailbench\r\nFN:%s\r\nN:%s;;;;\r\n"
		   "EMAIL;TYPE=INTERNET:%s.%llx@contacts.mailbench.test\r\n"
		   "TEL;TYPE=WORK:+1-555-%04llu\r\nEND:VCARD\r\n",
		   m->id, fn, fn, m->id, (unsigned long long)(m->seed & 0xffff),
		   (unsigned long long)(m->seed % 10000));
		break;
	}
	default:
		pf(&o,
		   "Subject: %s\r\nContent-Type: text/plain; charset=us-ascii\r\n"
		   "Content-Transfer-Encoding: 7bit\r\n\r\n",
		   subject);
		flow(&o, body, blen);
		break;
	}
	free(body);
	if (o.err) {
		free(o.s);
		return o.err;
	}
	*out = o.s;
	*len = o.len;
	return 0;
}
