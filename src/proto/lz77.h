/* lz77.h: the payload compression of the wire protocol, MS-OXCRPC's own:
 * LZ77 with DIRECT2 encoding (MS-OXCRPC 3.1.4.1.1.2), whose format is
 * MS-XCA's "Plain LZ77" (2.3-2.4): 32-bit flag words (a 1 bit per match, a
 * 0 bit per literal byte, first item in the high bit), matches of 3 bytes
 * or more as a 16-bit (offset - 1) << 3 | length field, longer lengths in
 * a shared half byte, then a byte, a 16-bit or a 32-bit count.  Offsets
 * reach back at most 8 KB.
 *
 * The specification fixes the format, not how hard the encoder looks for
 * a match.  This one is greedy and tries the last `depth` earlier
 * positions that start with the same three bytes, keeping the longest
 * match; the wire uses MB_LZ77_DEPTH (docs/PROTOCOL.md, "Compression",
 * gives the cut at depth 1 and 16).  It is deterministic: the output
 * depends on the input and the depth alone.
 *
 * Invariants: the decoder is a network input path; it reads nothing past
 * its input, writes nothing past its capacity, refuses a match that
 * reaches before the start of the output, and never aborts.  An encoder
 * is one thread's at a time (its tables are scratch state).
 */
#ifndef MB_PROTO_LZ77_H
#define MB_PROTO_LZ77_H

#include <stddef.h>
#include <stdint.h>

#define MB_LZ77_WINDOW 8192 /* the format's longest offset */
#define MB_LZ77_DEPTH 16    /* the wire's candidates tried per position */
#define MB_LZ77_DEPTH_MAX 256

struct mb_lz77;

/* The largest output for n input bytes: the literals, a flag word per 32
 * items, the last flag word. */
static inline size_t mb_lz77_bound(size_t n) { return n + 4 * (n / 32) + 8; }

/* An encoder trying depth candidates per position (its hash tables, about
 * 160 KB).  0, MB_EINVAL (depth not in 1..MB_LZ77_DEPTH_MAX) or MB_ENOMEM. */
int mb_lz77_create(int depth, struct mb_lz77 **out);
void mb_lz77_destroy(struct mb_lz77 *e);
/* Compress in[0..n) into out, which holds mb_lz77_bound(n) bytes: the
 * compressed size when it is smaller than n, else 0 (send the bytes as
 * they are).  The encoder stops early, with 0, when the first 4 KB came
 * out no smaller than they went in (data that is already compressed). */
size_t mb_lz77_encode(struct mb_lz77 *e, const uint8_t *in, size_t n, uint8_t *out);
/* Decompress in[0..n) into out[0..cap): 0 and *outlen set, or MB_EPROTO
 * when the input is malformed or decodes to more than cap bytes. */
int mb_lz77_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *outlen);

#endif
