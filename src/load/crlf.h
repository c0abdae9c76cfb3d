/* crlf.h: finding the end of a text line (CR LF, or a bare LF) in bytes
 * that arrive in any split, for the line-based protocol parsers (IMAP
 * responses in imapparse.c, SMTP replies in smtpparse.c): one scan, one
 * line-length rule and one line-end rule, used both by the incremental
 * parsers (which copy a line across reads) and by their framing functions
 * (which look at the engine's receive buffer without copying).
 *
 * Pure: no I/O, no allocation, no state of its own (the caller says how
 * many bytes of the line it already holds).  The limit counts the bytes
 * before a line's LF (its text and the CR of a CR LF), so a line over the
 * limit is known as soon as that many bytes have come without an LF.
 */
#ifndef MB_LOAD_CRLF_H
#define MB_LOAD_CRLF_H

#include <stddef.h>

/* The current line already has `have` bytes (not its LF); the next bytes
 * are data[0..len).  Returns 1 when the line ends in them (*take = bytes up
 * to and including the LF), 0 when all len bytes belong to the line and
 * more are needed (*take = len), or MB_ETOOBIG when more than max bytes
 * precede the line's LF (*take as for 0 or 1). */
int mb_crlf_scan(const char *data, size_t len, size_t have, size_t max, size_t *take);

/* The length without its line end (the LF and a CR just before it) of a
 * line of n bytes. */
size_t mb_crlf_text(const char *line, size_t n);

#endif
