/* imapparse.c: the incremental IMAP response parser (see imapparse.h for
 * the states).  Framing copies the bytes of one response into buf and
 * notes where each line ends; tokenising then walks buf once, with every
 * read checked against the response's end, and builds nodes from a chunked
 * arena (pointers stay valid while the arena grows).  Quoted strings are
 * unescaped in place (the unescaped form is never longer).
 */

#include "load/imapparse.h"
#include "load/crlf.h"

#include "core/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NODE_CHUNK 256
#define MAX_DEPTH 64

struct chunk {
	struct chunk *next;
	size_t used;
	struct mb_imap_node n[NODE_CHUNK];
};

enum state { ST_LINE, ST_LITERAL, ST_DONE, ST_ERROR };

struct mb_imap_parser {
	struct mb_imap_limits lim;
	enum state st;
	char *buf;
	size_t len, cap;
	size_t seg;	 /* start of the current line segment */
	size_t lit_left; /* ST_LITERAL: bytes still to copy */
	size_t nodes;
	struct chunk *chunks, *cur;
	struct mb_imap_resp resp;
	char tag[64];
	char name[32];
	char code[32];
	char err[256];
};

int mb_imap_parser_create(const struct mb_imap_limits *limits, struct mb_imap_parser **out)
{
	struct mb_imap_parser *p = calloc(1, sizeof(*p));
	if (!p)
		return MB_ENOMEM;
	if (limits)
		p->lim = *limits;
	if (!p->lim.max_line)
		p->lim.max_line = 64 * 1024;
	if (!p->lim.max_literal)
		p->lim.max_literal = 64u * 1024 * 1024;
	if (!p->lim.max_response)
		p->lim.max_response = 80u * 1024 * 1024;
	if (!p->lim.max_nodes)
		p->lim.max_nodes = 1000000;
	p->st = ST_LINE;
	*out = p;
	return 0;
}

void mb_imap_parser_destroy(struct mb_imap_parser *p)
{
	if (!p)
		return;
	while (p->chunks) {
		struct chunk *c = p->chunks;
		p->chunks = c->next;
		free(c);
	}
	free(p->buf);
	free(p);
}

static void clear_resp(struct mb_imap_parser *p)
{
	p->len = 0;
	p->seg = 0;
	p->lit_left = 0;
	p->nodes = 0;
	for (struct chunk *c = p->chunks; c; c = c->next)
		c->used = 0;
	p->cur = p->chunks;
	memset(&p->resp, 0, sizeof(p->resp));
}

void mb_imap_parser_reset(struct mb_imap_parser *p)
{
	clear_resp(p);
	p->err[0] = 0;
	p->st = ST_LINE;
}

const char *mb_imap_parser_error(const struct mb_imap_parser *p)
{
	return p->err[0] ? p->err : "no error";
}

const struct mb_imap_resp *mb_imap_parser_resp(const struct mb_imap_parser *p)
{
	return p->st == ST_DONE ? &p->resp : NULL;
}

static int fail(struct mb_imap_parser *p, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
	p->st = ST_ERROR;
	return code;
}

static int grow(struct mb_imap_parser *p, size_t need)
{
	if (need + 1 <= p->cap)
		return 0;
	size_t cap = p->cap ? p->cap : 4096;
	while (cap < need + 1)
		cap *= 2;
	char *nb = realloc(p->buf, cap);
	if (!nb)
		return MB_ENOMEM;
	p->buf = nb;
	p->cap = cap;
	return 0;
}

/* Does the line text b[0..n) (without its line end) end with "{N}" or
 * "{N+}"?  1 and *v, 0 when not, MB_ETOOBIG when N has over 12 digits;
 * N's digits are b[*d, *d + *nd) for 1 and MB_ETOOBIG. */
static int literal_announced(const char *b, size_t n, uint64_t *v, size_t *d, size_t *nd)
{
	if (!n || b[n - 1] != '}')
		return 0;
	size_t i = n - 1; /* '}' */
	if (i > 0 && b[i - 1] == '+')
		i--;
	size_t k = i;
	while (k > 0 && isdigit((unsigned char)b[k - 1]))
		k--;
	if (k == i || k == 0 || b[k - 1] != '{')
		return 0; /* text that happens to end in '}' */
	*d = k;
	*nd = i - k;
	if (i - k > 12)
		return MB_ETOOBIG;
	*v = 0;
	for (; k < i; k++)
		*v = *v * 10 + (uint64_t)(b[k] - '0');
	return 1;
}

/* The segment [seg, len) ends with LF.  Does it announce a literal?  Sets
 * *n and returns 1, 0 when not, or an error. */
static int literal_at_end(struct mb_imap_parser *p, size_t *n)
{
	const char *b = p->buf + p->seg;
	size_t e = mb_crlf_text(b, p->len - p->seg);
	uint64_t v;
	size_t d, nd;
	int rc = literal_announced(b, e, &v, &d, &nd);
	if (rc < 0)
		return fail(p, MB_ETOOBIG, "literal size '%.*s' too large", (int)nd, b + d);
	if (rc == 0)
		return 0;
	if (v > p->lim.max_literal)
		return fail(p, MB_ETOOBIG, "literal of %llu bytes over the limit of %zu",
			    (unsigned long long)v, p->lim.max_literal);
	*n = (size_t)v;
	return 1;
}

static int tokenize(struct mb_imap_parser *p);

int mb_imap_parser_feed(struct mb_imap_parser *p, const char *data, size_t len, size_t *used)
{
	size_t i = 0;
	*used = 0;
	if (p->st == ST_ERROR)
		return MB_EPROTO;
	if (p->st == ST_DONE) {
		clear_resp(p);
		p->st = ST_LINE;
	}
	while (i < len) {
		if (p->st == ST_LITERAL) {
			size_t take = len - i < p->lit_left ? len - i : p->lit_left;
			if (p->len + take > p->lim.max_response)
				return fail(p, MB_ETOOBIG, "response over %zu bytes",
					    p->lim.max_response);
			if (grow(p, p->len + take))
				return fail(p, MB_ENOMEM, "out of memory");
			memcpy(p->buf + p->len, data + i, take);
			p->len += take;
			i += take;
			p->lit_left -= take;
			if (!p->lit_left) {
				p->st = ST_LINE;
				p->seg = p->len;
			}
			continue;
		}
		/* ST_LINE: copy up to and including the next LF */
		size_t take;
		int eol =
		    mb_crlf_scan(data + i, len - i, p->len - p->seg, p->lim.max_line + 1, &take);
		if (eol < 0)
			return fail(p, MB_ETOOBIG, "response line over %zu bytes", p->lim.max_line);
		if (p->len + take > p->lim.max_response)
			return fail(p, MB_ETOOBIG, "response over %zu bytes", p->lim.max_response);
		if (grow(p, p->len + take))
			return fail(p, MB_ENOMEM, "out of memory");
		memcpy(p->buf + p->len, data + i, take);
		p->len += take;
		i += take;
		if (!eol)
			continue;
		size_t n = 0;
		int lit = literal_at_end(p, &n);
		if (lit < 0)
			return lit;
		if (lit) {
			p->lit_left = n;
			if (n) {
				p->st = ST_LITERAL;
			} else {
				p->seg = p->len;
			}
			continue;
		}
		p->buf[p->len] = 0;
		*used = i;
		int rc = tokenize(p);
		if (rc)
			return rc;
		p->st = ST_DONE;
		return 1;
	}
	*used = i;
	return 0;
}

/* The scan state is the offset of the first line not yet known to be
 * complete (after every whole line and literal before it), so a resumed
 * scan always starts at a line. */
long mb_imap_frame(const char *p, size_t len, size_t *scan)
{
	size_t i = *scan;
	for (;;) {
		size_t seg = i, take;
		int eol = mb_crlf_scan(p + i, len - i, 0, 64 * 1024 + 1, &take);
		if (eol < 0)
			return MB_ETOOBIG;
		if (!eol) {
			*scan = seg;
			return 0;
		}
		size_t e = seg + take - 1; /* the LF */
		uint64_t lit = 0;
		size_t d, nd;
		int has = literal_announced(p + seg, mb_crlf_text(p + seg, take), &lit, &d, &nd);
		if (has < 0 || lit > 64u * 1024 * 1024)
			return MB_ETOOBIG;
		if (!has) {
			*scan = 0;
			return (long)(e + 1);
		}
		if (len - (e + 1) < lit) {
			*scan = seg; /* rescan this line when more has come */
			return 0;
		}
		i = e + 1 + (size_t)lit;
	}
}

/* ---- tokenising ---- */

struct cur {
	struct mb_imap_parser *p;
	char *b;
	size_t i, n;
};

static struct mb_imap_node *new_node(struct mb_imap_parser *p, enum mb_imap_node_type t)
{
	if (p->nodes >= p->lim.max_nodes)
		return NULL;
	if (!p->cur || p->cur->used == NODE_CHUNK) {
		struct chunk *next = p->cur ? p->cur->next : p->chunks;
		if (!next) {
			next = calloc(1, sizeof(*next));
			if (!next)
				return NULL;
			if (p->cur)
				p->cur->next = next;
			else
				p->chunks = next;
		}
		next->used = 0;
		p->cur = next;
	}
	struct mb_imap_node *nd = &p->cur->n[p->cur->used++];
	memset(nd, 0, sizeof(*nd));
	nd->type = t;
	p->nodes++;
	return nd;
}

static int at_eol(const struct cur *c)
{
	return c->i >= c->n || c->b[c->i] == '\r' || c->b[c->i] == '\n';
}

static int atom_char(int ch)
{
	return ch > ' ' && ch < 127 && ch != '(' && ch != ')' && ch != '{' && ch != '"' &&
	       ch != ']';
}

/* An atom; '[' opens a section that runs to its matching ']' and may hold
 * spaces and lists (BODY[HEADER.FIELDS (FROM)]).  stop_bracket: a ']' ends
 * the atom (inside a response code). */
static int read_atom(struct cur *c, const char **s, size_t *len)
{
	size_t st = c->i;
	int depth = 0;
	while (c->i < c->n) {
		int ch = (unsigned char)c->b[c->i];
		if (depth) {
			if (ch == '\r' || ch == '\n')
				return fail(c->p, MB_EPROTO, "unterminated '[' in '%.*s'",
					    (int)(c->i - st > 40 ? 40 : c->i - st), c->b + st);
			if (ch == '[')
				depth++;
			else if (ch == ']')
				depth--;
			c->i++;
			continue;
		}
		if (ch == '[') {
			if (++depth > MAX_DEPTH)
				return fail(c->p, MB_EPROTO, "'[' nested too deep");
			c->i++;
			continue;
		}
		if (!atom_char(ch))
			break;
		c->i++;
	}
	if (c->i == st) {
		int ch = c->i < c->n ? (unsigned char)c->b[c->i] : 0;
		return fail(c->p, MB_EPROTO, "unexpected %s%c%s at offset %zu",
			    ch >= ' ' && ch < 127 ? "'" : "byte 0x",
			    ch >= ' ' && ch < 127 ? ch : '?', ch >= ' ' && ch < 127 ? "'" : "",
			    c->i);
	}
	*s = c->b + st;
	*len = c->i - st;
	return 0;
}

static int read_value(struct cur *c, int depth, struct mb_imap_node **out);

/* Values until end of line (depth 0), ')' (a list) or ']' (a code). */
static int read_values(struct cur *c, int depth, int close, struct mb_imap_node **first)
{
	struct mb_imap_node **tail = first;
	*first = NULL;
	for (;;) {
		while (c->i < c->n && c->b[c->i] == ' ')
			c->i++;
		if (at_eol(c)) {
			if (close)
				return fail(c->p, MB_EPROTO,
					    "missing '%c' before the end of the line", close);
			return 0;
		}
		if (c->b[c->i] == ')' || c->b[c->i] == ']') {
			if (c->b[c->i] != close)
				return fail(c->p, MB_EPROTO, "unbalanced '%c' at offset %zu",
					    c->b[c->i], c->i);
			c->i++;
			return 0;
		}
		struct mb_imap_node *nd = NULL;
		int rc = read_value(c, depth, &nd);
		if (rc)
			return rc;
		*tail = nd;
		tail = &nd->next;
	}
}

static int read_value(struct cur *c, int depth, struct mb_imap_node **out)
{
	struct mb_imap_parser *p = c->p;
	struct mb_imap_node *nd;
	char ch = c->b[c->i];

	if (ch == '(') {
		if (depth >= MAX_DEPTH)
			return fail(p, MB_EPROTO, "lists nested deeper than %d", MAX_DEPTH);
		if (!(nd = new_node(p, MB_IMAP_LIST)))
			return fail(p, MB_ETOOBIG, "more than %zu tokens", p->lim.max_nodes);
		c->i++;
		*out = nd;
		return read_values(c, depth + 1, ')', &nd->child);
	}
	if (ch == '"') {
		size_t w = ++c->i;
		char *start = c->b + w;
		for (;;) {
			if (at_eol(c))
				return fail(p, MB_EPROTO, "unterminated quoted string");
			char q = c->b[c->i++];
			if (q == '"')
				break;
			if (q == '\\') {
				if (at_eol(c))
					return fail(p, MB_EPROTO, "unterminated quoted string");
				q = c->b[c->i++];
				if (q != '"' && q != '\\')
					return fail(p, MB_EPROTO,
						    "bad escape '\\%c' in a quoted string",
						    q >= ' ' && q < 127 ? q : '?');
			}
			c->b[w++] = q;
		}
		if (!(nd = new_node(p, MB_IMAP_STRING)))
			return fail(p, MB_ETOOBIG, "more than %zu tokens", p->lim.max_nodes);
		nd->s = start;
		nd->len = (size_t)(c->b + w - start);
		*out = nd;
		return 0;
	}
	if (ch == '{') {
		size_t i = c->i + 1;
		uint64_t v = 0;
		int digits = 0;
		while (i < c->n && isdigit((unsigned char)c->b[i]) && digits < 13) {
			v = v * 10 + (uint64_t)(c->b[i] - '0');
			i++;
			digits++;
		}
		if (i < c->n && c->b[i] == '+')
			i++;
		if (!digits || i >= c->n || c->b[i] != '}')
			return fail(p, MB_EPROTO, "bad literal at offset %zu", c->i);
		i++;
		if (i < c->n && c->b[i] == '\r')
			i++;
		if (i >= c->n || c->b[i] != '\n')
			return fail(p, MB_EPROTO, "literal header not at the end of a line");
		i++;
		if (v > c->n - i)
			return fail(p, MB_EPROTO, "literal runs past the response");
		if (!(nd = new_node(p, MB_IMAP_STRING)))
			return fail(p, MB_ETOOBIG, "more than %zu tokens", p->lim.max_nodes);
		nd->s = c->b + i;
		nd->len = (size_t)v;
		c->i = i + (size_t)v;
		*out = nd;
		return 0;
	}
	const char *s = NULL;
	size_t len = 0;
	int rc = read_atom(c, &s, &len);
	if (rc)
		return rc;
	int nil = len == 3 && !strncasecmp(s, "NIL", 3);
	if (!(nd = new_node(p, nil ? MB_IMAP_NIL : MB_IMAP_ATOM)))
		return fail(p, MB_ETOOBIG, "more than %zu tokens", p->lim.max_nodes);
	nd->s = s;
	nd->len = len;
	*out = nd;
	return 0;
}

static int is_status(const char *name)
{
	return !strcmp(name, "OK") || !strcmp(name, "NO") || !strcmp(name, "BAD") ||
	       !strcmp(name, "BYE") || !strcmp(name, "PREAUTH");
}

/* Copy an upper-cased word of at most cap - 1 bytes ending at SP/CR/LF/'['. */
static int read_word(struct cur *c, char *dst, size_t cap, const char *what)
{
	size_t k = 0;
	while (c->i < c->n && c->b[c->i] != ' ' && c->b[c->i] != '\r' && c->b[c->i] != '\n' &&
	       (what[0] != 'c' || c->b[c->i] != ']')) {
		unsigned char ch = (unsigned char)c->b[c->i];
		if (ch <= ' ' || ch >= 127 || k + 1 >= cap)
			return fail(c->p, MB_EPROTO, "bad %s in '%.40s'", what, c->p->buf);
		dst[k++] = (char)toupper(ch);
		c->i++;
	}
	if (!k)
		return fail(c->p, MB_EPROTO, "missing %s in '%.40s'", what, c->p->buf);
	dst[k] = 0;
	return 0;
}

/* The rest of the line as text: NUL-terminated in place. */
static const char *rest_text(struct cur *c)
{
	while (c->i < c->n && c->b[c->i] == ' ')
		c->i++;
	size_t st = c->i;
	while (c->i < c->n && c->b[c->i] != '\r' && c->b[c->i] != '\n')
		c->i++;
	c->b[c->i] = 0; /* overwrites CR or LF (or the buffer's own NUL) */
	return c->b + st;
}

static int tokenize(struct mb_imap_parser *p)
{
	struct mb_imap_resp *r = &p->resp;
	struct cur c = {p, p->buf, 0, p->len};
	int rc;

	memset(r, 0, sizeof(*r));
	r->raw = p->buf;
	r->raw_len = p->len;
	if (!p->len || at_eol(&c))
		return fail(p, MB_EPROTO, "empty response line");
	if (c.b[0] == '+') {
		r->kind = MB_IMAP_CONTINUE;
		c.i = 1;
		r->name = "+";
		r->text = rest_text(&c);
		return 0;
	}
	if (c.b[0] == '*') {
		r->kind = MB_IMAP_UNTAGGED;
		c.i = 1;
	} else {
		size_t k = 0;
		r->kind = MB_IMAP_TAGGED;
		while (c.i < c.n && atom_char((unsigned char)c.b[c.i]) && c.b[c.i] != '+' &&
		       c.b[c.i] != '*') {
			if (k + 1 >= sizeof(p->tag))
				return fail(p, MB_EPROTO, "tag too long in '%.40s'", p->buf);
			p->tag[k++] = c.b[c.i++];
		}
		if (!k)
			return fail(p, MB_EPROTO, "response without a tag: '%.40s'", p->buf);
		p->tag[k] = 0;
		r->tag = p->tag;
	}
	if (c.i >= c.n || c.b[c.i] != ' ')
		return fail(p, MB_EPROTO, "no space after the tag in '%.40s'", p->buf);
	c.i++;
	if (r->kind == MB_IMAP_UNTAGGED && c.i < c.n && isdigit((unsigned char)c.b[c.i])) {
		uint64_t v = 0;
		int digits = 0;
		while (c.i < c.n && isdigit((unsigned char)c.b[c.i])) {
			if (++digits > 19)
				return fail(p, MB_EPROTO, "number too large in '%.40s'", p->buf);
			v = v * 10 + (uint64_t)(c.b[c.i++] - '0');
		}
		if (c.i >= c.n || c.b[c.i] != ' ')
			return fail(p, MB_EPROTO, "no name after the number in '%.40s'", p->buf);
		c.i++;
		r->has_number = 1;
		r->number = v;
	}
	if ((rc = read_word(&c, p->name, sizeof(p->name), "response name")))
		return rc;
	r->name = p->name;
	if (r->kind == MB_IMAP_TAGGED && strcmp(r->name, "OK") && strcmp(r->name, "NO") &&
	    strcmp(r->name, "BAD"))
		return fail(p, MB_EPROTO, "tagged response '%s' is not OK, NO or BAD", r->name);
	if (is_status(r->name) && !r->has_number) {
		while (c.i < c.n && c.b[c.i] == ' ')
			c.i++;
		if (c.i < c.n && c.b[c.i] == '[') {
			c.i++;
			if ((rc = read_word(&c, p->code, sizeof(p->code), "code")))
				return rc;
			r->code = p->code;
			if ((rc = read_values(&c, 1, ']', &r->code_args)))
				return rc;
		}
		r->text = rest_text(&c);
		return 0;
	}
	if ((rc = read_values(&c, 0, 0, &r->args)))
		return rc;
	/* anything after the values is only the line end */
	r->text = "";
	return 0;
}

/* ---- helpers ---- */

int mb_imap_node_is(const struct mb_imap_node *n, const char *s)
{
	size_t l = strlen(s);
	return n && (n->type == MB_IMAP_ATOM || n->type == MB_IMAP_STRING) && n->len == l &&
	       !strncasecmp(n->s, s, l);
}

int mb_imap_node_u64(const struct mb_imap_node *n, uint64_t *out)
{
	uint64_t v = 0;
	if (!n || n->type != MB_IMAP_ATOM || !n->len || n->len > 19)
		return MB_EPROTO;
	for (size_t i = 0; i < n->len; i++) {
		if (!isdigit((unsigned char)n->s[i]))
			return MB_EPROTO;
		v = v * 10 + (uint64_t)(n->s[i] - '0');
	}
	*out = v;
	return 0;
}

const struct mb_imap_node *mb_imap_fetch_item(const struct mb_imap_node *list, const char *key)
{
	if (!list || list->type != MB_IMAP_LIST)
		return NULL;
	for (const struct mb_imap_node *n = list->child; n && n->next; n = n->next->next)
		if (mb_imap_node_is(n, key))
			return n->next;
	return NULL;
}

int mb_imap_has_cap(const struct mb_imap_node *caps, const char *cap)
{
	for (; caps; caps = caps->next)
		if (mb_imap_node_is(caps, cap))
			return 1;
	return 0;
}

/* ---- encoding ---- */

static void put(char *buf, size_t cap, size_t *pos, size_t need, const char *s, size_t len)
{
	(void)need;
	memcpy(buf + *pos, s, len);
	*pos += len;
	(void)cap;
}

size_t mb_imap_put_astring(char *buf, size_t cap, size_t *pos, const char *s, size_t len)
{
	int atom = len > 0, quoted = 1;
	size_t esc = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!atom_char(ch) || ch == '%' || ch == '*' || ch == '\\' || ch == '[')
			atom = 0;
		if (ch < ' ' || ch >= 127)
			quoted = 0;
		if (ch == '"' || ch == '\\')
			esc++;
	}
	size_t need;
	char hdr[32];
	int hl = 0;
	if (atom)
		need = len;
	else if (quoted)
		need = len + esc + 2;
	else {
		hl = snprintf(hdr, sizeof(hdr), "{%zu+}\r\n", len);
		need = (size_t)hl + len;
	}
	size_t at = pos ? *pos : 0;
	if (!buf || !pos || cap < at || cap - at < need)
		return need;
	if (atom) {
		put(buf, cap, pos, need, s, len);
	} else if (quoted) {
		buf[(*pos)++] = '"';
		for (size_t i = 0; i < len; i++) {
			if (s[i] == '"' || s[i] == '\\')
				buf[(*pos)++] = '\\';
			buf[(*pos)++] = s[i];
		}
		buf[(*pos)++] = '"';
	} else {
		put(buf, cap, pos, need, hdr, (size_t)hl);
		put(buf, cap, pos, need, s, len);
	}
	return need;
}
