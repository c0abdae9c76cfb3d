/* fuzz_imap.c: libFuzzer harness of the IMAP response parser
 * (src/load/imapparse.h).  Input: the bytes a server sends.  They are fed
 * once whole and once in pieces whose sizes come from the first input
 * byte; both must give the same responses (count and bytes) up to the
 * first error, every node of every response is walked (ASan checks each
 * byte is inside the parser's buffer), and an error leaves a message.
 * Must never crash, hang, leak or read out of bounds.
 * Build and run: tests/fuzz/run.sh SECONDS '' fuzz_imap. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "load/imapparse.h"
#include "pieces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned walk(const struct mb_imap_node *n, int depth)
{
	unsigned h = 0;
	for (; n; n = n->next) {
		for (size_t i = 0; i < n->len; i++)
			h = h * 31 + (unsigned char)n->s[i];
		if (n->type == MB_IMAP_LIST) {
			if (depth > 100)
				abort();
			h += walk(n->child, depth + 1);
		}
	}
	return h;
}

static unsigned run(const uint8_t *data, size_t size, size_t step, int *count)
{
	static struct mb_imap_parser *p;
	static const struct mb_imap_limits lim = {
	    .max_line = 4096, .max_literal = 1 << 16, .max_response = 1 << 18, .max_nodes = 20000};
	if (!p && mb_imap_parser_create(&lim, &p))
		abort();
	mb_imap_parser_reset(p);
	unsigned h = 0;
	size_t off = 0;
	*count = 0;
	while (off < size) {
		size_t n = size - off < step ? size - off : step;
		size_t done = 0;
		while (done < n) {
			size_t used;
			int rc = mb_imap_parser_feed(p, (const char *)data + off + done, n - done,
						     &used);
			if (rc < 0) {
				if (!mb_imap_parser_error(p)[0])
					abort();
				return h;
			}
			if (used > n - done)
				abort();
			done += used;
			if (rc == 1) {
				const struct mb_imap_resp *r = mb_imap_parser_resp(p);
				(*count)++;
				h = h * 7 + (unsigned)r->raw_len + (unsigned)strlen(r->name);
				h += r->text ? (unsigned)strlen(r->text) : 0;
				h += walk(r->args, 0) + walk(r->code_args, 0);
				(void)mb_imap_fetch_item(r->args, "BODY[]");
				(void)mb_imap_has_cap(r->args, "IDLE");
			}
		}
		off += n;
	}
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	fuzz_pieces_agree(data, size, run);
	return 0;
}
