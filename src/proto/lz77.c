/* lz77.c: LZ77+DIRECT2 (MS-XCA "Plain LZ77"), the wire protocol's payload
 * compression; the format and the invariants are in lz77.h.
 * The match finder: a hash of three bytes -> the last position with that
 * hash (head), and per position of the last 8 KB the previous one with the
 * same hash (prev, a ring indexed by position mod the window: a slot is
 * overwritten only by a position a whole window later, past any offset
 * the format can express).  head is sized by the input (1 K to 32 K
 * entries) so that small payloads do not pay for clearing a large table. */
#include "proto/lz77.h"
#include "core/error.h"
#include "proto/proto_int.h" /* the little-endian primitives */

#include <stdlib.h>
#include <string.h>

#define HASH_BITS_MIN 10
#define HASH_BITS_MAX 15
/* a match this long ends the search at its position (zlib's nice_match) */
#define MB_LZ77_NICE 64
/* the encoder gives up when the first this many bytes did not shrink */
#define MB_LZ77_PROBE 4096

struct mb_lz77 {
	int32_t head[1 << HASH_BITS_MAX];
	int32_t prev[MB_LZ77_WINDOW];
	int depth;
};

int mb_lz77_create(int depth, struct mb_lz77 **out)
{
	*out = NULL;
	if (depth < 1 || depth > MB_LZ77_DEPTH_MAX)
		return MB_EINVAL;
	*out = malloc(sizeof(**out));
	if (!*out)
		return MB_ENOMEM;
	(*out)->depth = depth;
	return 0;
}

void mb_lz77_destroy(struct mb_lz77 *e) { free(e); }

static uint32_t hash3(const uint8_t *p, int bits)
{
	uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	return (v * 2654435761u) >> (32 - bits);
}

/* The longest match for in[ip..n) among the chain's candidates: its
 * length (0 when none) and *off its offset. */
static size_t longest(const struct mb_lz77 *e, const uint8_t *in, size_t n, size_t ip, int32_t c,
		      size_t *off)
{
	size_t best = 0, max = n - ip;
	const uint8_t *b = in + ip;
	for (int d = 0; c >= 0 && ip - (size_t)c <= MB_LZ77_WINDOW && d < e->depth; d++) {
		const uint8_t *a = in + c;
		size_t l = 0;
		/* only a candidate that also matches at best can beat it */
		if (best == 0 || a[best] == b[best]) {
			while (l + 8 <= max) {
				uint64_t x, y;
				memcpy(&x, a + l, 8);
				memcpy(&y, b + l, 8);
				if (x != y)
					break;
				l += 8;
			}
			while (l < max && a[l] == b[l])
				l++;
		}
		if (l > best) {
			best = l;
			*off = ip - (size_t)c;
			if (l >= MB_LZ77_NICE || l == max)
				break;
		}
		c = e->prev[(size_t)c & (MB_LZ77_WINDOW - 1)];
	}
	return best;
}

/* Append the match (MS-XCA 2.3.4); *half is the byte whose high half the
 * next length nibble takes (0: none). */
static size_t put_match(uint8_t *out, size_t op, size_t *half, size_t len, size_t off)
{
	len -= 3;
	put16(out + op, (uint16_t)((off - 1) << 3 | (len < 7 ? len : 7)));
	op += 2;
	if (len < 7)
		return op;
	len -= 7;
	uint8_t nib = (uint8_t)(len < 15 ? len : 15);
	if (!*half) { /* a new shared byte: its low half */
		*half = op;
		out[op++] = nib;
	} else { /* the high half of the last one */
		out[*half] |= (uint8_t)(nib << 4);
		*half = 0;
	}
	if (len < 15)
		return op;
	len -= 15;
	if (len < 255) {
		out[op++] = (uint8_t)len;
		return op;
	}
	out[op++] = 255;
	len += 7 + 15;
	if (len < 65536) {
		put16(out + op, (uint16_t)len);
		return op + 2;
	}
	put16(out + op, 0);
	put32(out + op + 2, (uint32_t)len);
	return op + 6;
}

size_t mb_lz77_encode(struct mb_lz77 *e, const uint8_t *in, size_t n, uint8_t *out)
{
	int bits = HASH_BITS_MIN;
	while (bits < HASH_BITS_MAX && ((size_t)1 << bits) < n)
		bits++;
	memset(e->head, 0xff, sizeof(e->head[0]) << bits); /* -1: none */
	uint32_t flags = 0;
	int nflags = 0;
	size_t fpos = 0, op = 4, half = 0, ip = 0;
	while (ip < n) {
		size_t best = 0, off = 0;
		if (ip + 3 <= n)
			best = longest(e, in, n, ip, e->head[hash3(in + ip, bits)], &off);
		size_t adv = 1;
		if (best >= 3) {
			op = put_match(out, op, &half, best, off);
			flags = flags << 1 | 1;
			adv = best;
		} else {
			out[op++] = in[ip];
			flags <<= 1;
		}
		for (size_t k = 0; k < adv; k++, ip++)
			if (ip + 3 <= n) {
				uint32_t h = hash3(in + ip, bits);
				e->prev[ip & (MB_LZ77_WINDOW - 1)] = e->head[h];
				e->head[h] = (int32_t)ip;
			}
		/* incompressible so far (a JPEG's data): sent as it is */
		if (ip >= MB_LZ77_PROBE && op >= ip && ip - adv < MB_LZ77_PROBE)
			return 0;
		if (++nflags == 32) {
			put32(out + fpos, flags);
			nflags = 0;
			flags = 0;
			fpos = op;
			op += 4;
		}
	}
	/* the last flag word: the unused bits set */
	put32(out + fpos,
	      nflags ? flags << (32 - nflags) | ((1u << (32 - nflags)) - 1) : 0xffffffffu);
	return op < n ? op : 0;
}

/* A match's length past its 3-bit field (MS-XCA 2.4.4): the length less
 * 3, or (size_t)-1 when the input ends. */
static size_t long_length(const uint8_t *in, size_t n, size_t *ip, size_t *half)
{
	size_t len;
	if (!*half) {
		if (*ip == n)
			return (size_t)-1;
		*half = *ip;
		len = in[(*ip)++] & 15;
	} else {
		len = in[*half] >> 4;
		*half = 0;
	}
	if (len == 15) {
		if (*ip == n)
			return (size_t)-1;
		len = in[(*ip)++];
		if (len == 255) {
			if (n - *ip < 2)
				return (size_t)-1;
			len = get16(in + *ip);
			*ip += 2;
			if (len == 0) {
				if (n - *ip < 4)
					return (size_t)-1;
				len = get32(in + *ip);
				*ip += 4;
			}
			if (len < 15 + 7)
				return (size_t)-1;
			len -= 15 + 7;
		}
		len += 15;
	}
	return len + 7;
}

int mb_lz77_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *outlen)
{
	size_t ip = 0, op = 0, half = 0;
	uint32_t flags = 0;
	int nflags = 0;
	for (;;) {
		if (nflags == 0) {
			if (n - ip < 4)
				return MB_EPROTO;
			flags = get32(in + ip);
			ip += 4;
			nflags = 32;
		}
		nflags--;
		if (ip == n)
			break; /* the end: the rest of the flags are padding */
		if (!(flags >> nflags & 1)) {
			if (op == cap)
				return MB_EPROTO;
			out[op++] = in[ip++];
			continue;
		}
		if (n - ip < 2)
			return MB_EPROTO;
		uint32_t v = get16(in + ip);
		ip += 2;
		size_t off = (v >> 3) + 1, len = v & 7;
		if (len == 7 && (len = long_length(in, n, &ip, &half)) == (size_t)-1)
			return MB_EPROTO;
		len += 3;
		if (off > op || len > cap - op)
			return MB_EPROTO;
		for (size_t k = 0; k < len; k++, op++)
			out[op] = out[op - off];
	}
	*outlen = op;
	return 0;
}
