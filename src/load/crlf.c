/* crlf.c: the line-end scan of the protocol parsers (see crlf.h).
 * Invariant: never reads outside data[0..len) or line[0..n). */
#include "load/crlf.h"

#include "core/error.h"

#include <string.h>

int mb_crlf_scan(const char *data, size_t len, size_t have, size_t max, size_t *take)
{
	const char *lf = len ? memchr(data, '\n', len) : NULL;
	size_t before = lf ? (size_t)(lf - data) : len; /* this part's bytes before the LF */
	*take = lf ? before + 1 : len;
	if (have > max || before > max - have)
		return MB_ETOOBIG;
	return lf ? 1 : 0;
}

size_t mb_crlf_text(const char *line, size_t n)
{
	if (n && line[n - 1] == '\n')
		n--;
	if (n && line[n - 1] == '\r')
		n--;
	return n;
}
