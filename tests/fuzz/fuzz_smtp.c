/* fuzz_smtp.c: libFuzzer harness of the SMTP reply parser and its framing
 * function (src/load/smtpparse.h), what the IMAP target's submission
 * client and the lab's SMTP client read a server's replies with.  Input:
 * the bytes a server sends.  They are fed once whole and once in pieces
 * whose sizes come from the first input byte; both must give the same
 * replies (count, codes, line texts) up to the first error, and an error
 * leaves a message.  The framing function must agree with the parser: the
 * IMAP driver frames a reply with mb_smtp_frame() and then feeds exactly
 * those bytes, so a framed reply is either one whole reply to the parser
 * (all its bytes used) or an error, never "more needed"; and a reply the
 * parser completes is framed with the same length.  Every line text is
 * read to its NUL (ASan checks it is inside the parser).
 * Must never crash, hang, leak or read out of bounds.
 * Build and run: tests/fuzz/run.sh SECONDS '' fuzz_smtp. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/smtpparse.h"
#include "pieces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct mb_smtp_parser *parser(void)
{
	static struct mb_smtp_parser *p;
	if (!p && mb_smtp_parser_create(&p))
		abort();
	mb_smtp_parser_reset(p);
	return p;
}

static unsigned hash_reply(const struct mb_smtp_reply *r)
{
	unsigned h = (unsigned)r->code;
	if (r->code < 200 || r->code > 599 || r->nlines < 1 || r->nlines > MB_SMTP_MAX_LINES)
		abort();
	for (int i = 0; i < r->nlines; i++)
		for (const char *s = r->line[i]; *s; s++)
			h = h * 31 + (unsigned char)*s;
	(void)mb_smtp_ehlo_has(r, "PIPELINING");
	return h;
}

/* Feed data in pieces of step bytes; the replies' hash and count. */
static unsigned run(const uint8_t *data, size_t size, size_t step, int *count)
{
	struct mb_smtp_parser *p = parser();
	unsigned h = 0;
	size_t off = 0, start = 0; /* start: the first byte of the reply being read */
	*count = 0;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;
		size_t done = 0;
		while (done < n) {
			size_t used;
			int rc = mb_smtp_parser_feed(p, (const char *)data + off + done, n - done,
						     &used);
			if (rc < 0) {
				if (!strcmp(mb_smtp_parser_error(p), "no error"))
					abort();
				return h;
			}
			if (used > n - done)
				abort();
			done += used;
			if (rc == 1) {
				size_t end = off + done;
				long fl = mb_smtp_frame((const char *)data + start, size - start);
				if (fl != (long)(end - start))
					abort();
				(*count)++;
				h = h * 7 + hash_reply(mb_smtp_parser_reply(p));
				start = end;
			}
		}
		off += n;
	}
	return h;
}

/* What the IMAP driver does: frame, then feed exactly the framed bytes. */
static void framed(const uint8_t *data, size_t size)
{
	struct mb_smtp_parser *p = parser();
	size_t off = 0;
	while (off < size) {
		long fl = mb_smtp_frame((const char *)data + off, size - off);
		if (fl <= 0)
			return;
		if ((size_t)fl > size - off)
			abort();
		size_t used;
		int rc = mb_smtp_parser_feed(p, (const char *)data + off, (size_t)fl, &used);
		if (rc < 0)
			return;
		if (rc != 1 || used != (size_t)fl)
			abort();
		(void)hash_reply(mb_smtp_parser_reply(p));
		off += (size_t)fl;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_pieces_agree(data, size, run);
	framed(data + 1, size - 1);
	return 0;
}
