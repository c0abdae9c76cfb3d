/* imapparse.h: an incremental IMAP4rev1 response parser (client side) and
 * the command-argument encoders the IMAP clients share.
 *
 * Pure: no I/O, no clock.  Bytes arrive in any split (one byte at a time is
 * fine); the parser frames one response (a line plus any literals it
 * announces with {N} or {N+}), then tokenises it into a small tree:
 *
 *   feed() -> [LINE: scan to LF] --"{N}" at line end--> [LITERAL: N bytes] --+
 *                  ^  |                                                      |
 *                  |  +--LF, no literal--> response complete (feed returns 1)|
 *                  +---------------------------------------------------------+
 *
 * A response is tagged ("a1 OK ..."), untagged ("* 3 EXISTS", "* OK [..]")
 * or a continuation request ("+ ...").  Untagged responses may arrive at any
 * time; the caller dispatches on kind and name.  Anything malformed (a line
 * or literal over the limits, an unbalanced list, a bad quoted string, a
 * response with no tag) is a parse error with a message that says what and
 * where; the parser is then in the ERROR state (sticky) and never reads past
 * its buffer.  Invariants: the returned response and every node/string it
 * points to stay valid until the next feed() or reset(); strings are not
 * NUL-terminated (use len) but the whole response buffer is.
 */
#ifndef MB_LOAD_IMAPPARSE_H
#define MB_LOAD_IMAPPARSE_H

#include <stddef.h>
#include <stdint.h>

enum mb_imap_kind {
	MB_IMAP_TAGGED = 1,   /* "TAG OK|NO|BAD ..." */
	MB_IMAP_UNTAGGED = 2, /* "* ..." */
	MB_IMAP_CONTINUE = 3, /* "+ ..." */
};

enum mb_imap_node_type {
	MB_IMAP_ATOM = 1,   /* atom, number, flag (\Seen), BODY[...] */
	MB_IMAP_STRING = 2, /* quoted string (unescaped) or literal */
	MB_IMAP_NIL = 3,
	MB_IMAP_LIST = 4, /* parenthesised list: children in child */
};

struct mb_imap_node {
	enum mb_imap_node_type type;
	const char *s; /* ATOM/STRING bytes (not NUL-terminated) */
	size_t len;
	struct mb_imap_node *child; /* LIST: first element */
	struct mb_imap_node *next;  /* next sibling */
};

struct mb_imap_resp {
	enum mb_imap_kind kind;
	const char *tag; /* TAGGED: the tag (NUL-terminated) */
	int has_number;	 /* "* 12 EXISTS": 1, number = 12 */
	uint64_t number;
	const char *name; /* upper-cased: OK NO BAD BYE PREAUTH EXISTS FETCH ... */
	/* status responses (OK/NO/BAD/BYE/PREAUTH): */
	const char *code;		/* response code atom ("APPENDUID"), or NULL */
	struct mb_imap_node *code_args; /* its arguments, or NULL */
	const char *text;		/* human text (NUL-terminated, may be "") */
	/* every other response: the arguments after the name */
	struct mb_imap_node *args;
	const char *raw; /* the whole response as received, NUL-terminated */
	size_t raw_len;
};

struct mb_imap_limits {
	size_t max_line;     /* one line without literals (default 64 KiB) */
	size_t max_literal;  /* one literal (default 64 MiB) */
	size_t max_response; /* a whole response (default 80 MiB) */
	size_t max_nodes;    /* tokens in one response (default 1,000,000) */
};

struct mb_imap_parser;

/* limits may be NULL (defaults); zero fields take their default. */
int mb_imap_parser_create(const struct mb_imap_limits *limits, struct mb_imap_parser **out);
void mb_imap_parser_destroy(struct mb_imap_parser *p);
/* Forget any partial response and the error state. */
void mb_imap_parser_reset(struct mb_imap_parser *p);

/* Consume up to len bytes.  Returns 1 when a response is complete (*used =
 * bytes consumed, up to and including its final LF; call again with the
 * rest), 0 when everything was consumed and more is needed, or MB_EPROTO /
 * MB_ETOOBIG / MB_ENOMEM on an error (then mb_imap_parser_error() says
 * what; the parser stays in error until reset). */
int mb_imap_parser_feed(struct mb_imap_parser *p, const char *data, size_t len, size_t *used);
/* The response completed by the last feed() that returned 1. */
const struct mb_imap_resp *mb_imap_parser_resp(const struct mb_imap_parser *p);
const char *mb_imap_parser_error(const struct mb_imap_parser *p);

/* Framing without copying (for an engine that owns the receive buffer):
 * the length of the first whole response in p[0..len) (its line or lines
 * plus the literals they announce), 0 when more bytes are needed, or
 * MB_ETOOBIG when a line or literal exceeds the default limits.  *scan is
 * where the next call may resume (0 at first; reset to 0 after a
 * response was taken), so growing buffers are scanned once. */
long mb_imap_frame(const char *p, size_t len, size_t *scan);

/* ---- helpers on parsed values ---- */

/* Case-insensitive compare of a node's bytes with a C string. */
int mb_imap_node_is(const struct mb_imap_node *n, const char *s);
/* An ATOM of decimal digits as a number: 0 or MB_EPROTO. */
int mb_imap_node_u64(const struct mb_imap_node *n, uint64_t *out);
/* In a FETCH item list (name value name value ...), the value after the
 * item whose name equals key (case-insensitive), or NULL. */
const struct mb_imap_node *mb_imap_fetch_item(const struct mb_imap_node *list, const char *key);
/* Does a CAPABILITY list (a node chain of atoms) contain cap? */
int mb_imap_has_cap(const struct mb_imap_node *caps, const char *cap);

/* ---- command encoding ---- */

/* Append s (len bytes) to buf as an IMAP astring: an atom when safe, a
 * quoted string when it has only printable ASCII, else a LITERAL+ literal
 * ({N+}CRLF bytes; needs the server's LITERAL+).  Returns the bytes the
 * encoding needs; writes only when they fit in cap - *pos (then advances
 * *pos), so call with cap 0 to size it. */
size_t mb_imap_put_astring(char *buf, size_t cap, size_t *pos, const char *s, size_t len);

#endif
