/* mb-rpccodec.c: how much the RPC payloads of a run would shrink under
 * MS-OXCRPC's own compression, LZ77 with DIRECT2 encoding (MS-OXCRPC
 * 3.1.4.1.1.2; the format is MS-XCA 2.3-2.4 "Plain LZ77"), against the LZ4
 * the wire protocol uses, on the same payloads.  Reads the dumps that
 * `mailbench store --dump-payloads FILE` writes (records: a byte Q, R or N,
 * a 32-bit little-endian length, the payload before compression) and
 * prints, per kind and in total, the bytes on the wire (16-byte frame header
 * plus the payload, compressed when it is at least --min bytes and the
 * result is smaller, as the wire protocol does) without compression, with
 * LZ4 (LZ4_compress_default, as src/proto) and with LZ77+DIRECT2, and each
 * one's cut.
 *
 * The specification fixes LZ77+DIRECT2's format, not how hard its encoder
 * looks for matches: two encoders are measured, "fast" (the last position
 * with the same 3 bytes, as LZ4's single probe) and "chain 16" (the best of
 * the last 16 such positions).  Both are greedy with the format's 8 KB
 * window.  Every payload is decoded again and compared (exit 1 on a
 * mismatch), and the encoder reproduces the two examples of MS-XCA
 * 2.3.2 and 2.4.4 byte for byte before anything is measured.
 *
 * Usage: mb-rpccodec [--min BYTES] DUMP...   (exit 0 measured, 1 a check
 * failed, 2 bad input)
 * A measurement tool of bench/, not part of the product: the store and the
 * load engine compress with LZ4 (docs/PROTOCOL.md).
 */
#include "config.h"

#include <lz4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 8192
#define HASH_BITS 15
#define FRAME_HDR 16
#define MAX_PAYLOAD (4u << 20)

struct enc {
	int32_t head[1 << HASH_BITS];
	int32_t *prev; /* per input position: the previous one with its hash */
	size_t cap;
	int depth; /* candidates tried per position */
};

static uint32_t hash3(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
	return (v * 2654435761u) >> (32 - HASH_BITS);
}

static void put16(uint8_t *o, uint32_t v)
{
	o[0] = (uint8_t)v;
	o[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *o, uint32_t v)
{
	put16(o, v);
	put16(o + 2, v >> 16);
}

static uint32_t get16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

/* MS-XCA 2.3.4's encoder over a greedy match finder; out holds at least
 * n + n / 8 + 8 bytes.  Returns the compressed size, or 0 (out of memory). */
static size_t lz77_encode(struct enc *e, const uint8_t *in, size_t n, uint8_t *out)
{
	if (e->cap < n) {
		int32_t *p = realloc(e->prev, n * sizeof(*p));
		if (!p)
			return 0;
		e->prev = p;
		e->cap = n;
	}
	for (size_t i = 0; i < (size_t)1 << HASH_BITS; i++)
		e->head[i] = -1;
	uint32_t flags = 0;
	int nflags = 0;
	size_t fpos = 0, op = 4, half = 0, ip = 0;
	while (ip < n) {
		size_t best = 0, boff = 0;
		if (ip + 3 <= n) {
			int32_t c = e->head[hash3(in + ip)];
			for (int d = 0; c >= 0 && ip - (size_t)c <= WINDOW && d < e->depth; d++) {
				size_t l = 0;
				while (ip + l < n && in[(size_t)c + l] == in[ip + l])
					l++;
				if (l > best) {
					best = l;
					boff = ip - (size_t)c;
				}
				c = e->prev[c];
			}
		}
		size_t adv = 1;
		if (best >= 3) {
			size_t len = best - 3;
			uint32_t off = (uint32_t)(boff - 1) << 3;
			put16(out + op, off | (uint32_t)(len < 7 ? len : 7));
			op += 2;
			if (len >= 7) {
				len -= 7;
				uint8_t nib = (uint8_t)(len < 15 ? len : 15);
				if (!half) { /* a new shared byte: its low half */
					half = op;
					out[op++] = nib;
				} else { /* the high half of the last one */
					out[half] |= (uint8_t)(nib << 4);
					half = 0;
				}
				if (len >= 15) {
					len -= 15;
					if (len < 255) {
						out[op++] = (uint8_t)len;
					} else {
						out[op++] = 255;
						len += 7 + 15;
						if (len < 65536) {
							put16(out + op, (uint32_t)len);
							op += 2;
						} else {
							put16(out + op, 0);
							put32(out + op + 2, (uint32_t)len);
							op += 6;
						}
					}
				}
			}
			flags = flags << 1 | 1;
			adv = best;
		} else {
			out[op++] = in[ip];
			flags <<= 1;
		}
		for (size_t k = 0; k < adv; k++, ip++)
			if (ip + 3 <= n) {
				uint32_t h = hash3(in + ip);
				e->prev[ip] = e->head[h];
				e->head[h] = (int32_t)ip;
			}
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
	return op;
}

/* MS-XCA 2.4.4: the decoded size, or -1 when the input is malformed or
 * would decode past cap. */
static long lz77_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
	size_t ip = 0, op = 0, half = 0;
	uint32_t flags = 0;
	int nflags = 0;
	for (;;) {
		if (nflags == 0) {
			if (ip + 4 > n)
				return -1;
			flags = get16(in + ip) | get16(in + ip + 2) << 16;
			ip += 4;
			nflags = 32;
		}
		nflags--;
		if (!(flags >> nflags & 1)) {
			if (ip == n)
				return (long)op;
			if (op == cap)
				return -1;
			out[op++] = in[ip++];
			continue;
		}
		if (ip == n)
			return (long)op;
		if (ip + 2 > n)
			return -1;
		uint32_t v = get16(in + ip);
		ip += 2;
		size_t off = (v >> 3) + 1, len = v & 7;
		if (len == 7) {
			if (!half) {
				if (ip == n)
					return -1;
				half = ip;
				len = in[ip++] & 15;
			} else {
				len = in[half] >> 4;
				half = 0;
			}
			if (len == 15) {
				if (ip == n)
					return -1;
				len = in[ip++];
				if (len == 255) {
					if (ip + 2 > n)
						return -1;
					len = get16(in + ip);
					ip += 2;
					if (len == 0) {
						if (ip + 4 > n)
							return -1;
						len = get16(in + ip) | (size_t)get16(in + ip + 2)
									   << 16;
						ip += 4;
					}
					if (len < 15 + 7)
						return -1;
					len -= 15 + 7;
				}
				len += 15;
			}
			len += 7;
		}
		len += 3;
		if (off > op || len > cap - op)
			return -1;
		for (size_t k = 0; k < len; k++, op++)
			out[op] = out[op - off];
	}
}

/* MS-XCA's two examples, byte for byte */
static int self_test(struct enc *e, uint8_t *out, uint8_t *back)
{
	static const uint8_t want1_head[4] = {0x3f, 0, 0, 0};
	static const uint8_t want2[] = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63,
					0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
	uint8_t in[300];
	for (int i = 0; i < 26; i++)
		in[i] = (uint8_t)('a' + i);
	size_t n = lz77_encode(e, in, 26, out);
	if (n != 30 || memcmp(out, want1_head, 4) || memcmp(out + 4, in, 26))
		return -1;
	for (int i = 0; i < 300; i++)
		in[i] = (uint8_t)("abc"[i % 3]);
	n = lz77_encode(e, in, 300, out);
	if (n != sizeof(want2) || memcmp(out, want2, n))
		return -1;
	if (lz77_decode(out, n, back, 300) != 300 || memcmp(back, in, 300))
		return -1;
	return 0;
}

enum { K_Q, K_R, K_N, K_ALL, NK };
enum { C_OFF, C_LZ4, C_FAST, C_CHAIN, NC };
static const char *const kind_names[NK] = {"requests", "replies", "notifications", "total"};
static const char *const codec_names[NC] = {"off", "LZ4", "LZ77+DIRECT2 fast",
					    "LZ77+DIRECT2 chain 16"};

int main(int argc, char **argv)
{
	size_t min = 256;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "--min") == 0) {
		char *end;
		unsigned long v = strtoul(argv[2], &end, 10);
		if (*argv[2] == '\0' || *end || v > MAX_PAYLOAD) {
			fprintf(stderr, "mb-rpccodec: --min: '%s' is not a byte count\n", argv[2]);
			return 2;
		}
		min = v;
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: mb-rpccodec [--min BYTES] DUMP...\n");
		return 2;
	}
	struct enc *fast = calloc(1, sizeof(*fast)), *chain = calloc(1, sizeof(*chain));
	/* room for either: LZ77+DIRECT2's worst case is 4 bytes per 32 literals */
	uint8_t *buf = malloc(MAX_PAYLOAD), *z = malloc(MAX_PAYLOAD + MAX_PAYLOAD / 8 + 64);
	uint8_t *back = malloc(MAX_PAYLOAD);
	if (!fast || !chain || !buf || !z || !back) {
		fprintf(stderr, "mb-rpccodec: out of memory\n");
		return 1;
	}
	fast->depth = 1;
	chain->depth = 16;
	if (self_test(fast, z, back)) {
		fprintf(stderr, "mb-rpccodec: the encoder does not reproduce MS-XCA's examples\n");
		return 1;
	}
	uint64_t bytes[NK][NC] = {{0}}, count[NK] = {0};
	for (int a = first; a < argc; a++) {
		FILE *f = fopen(argv[a], "rb");
		if (!f) {
			perror(argv[a]);
			return 2;
		}
		uint8_t h[5];
		while (fread(h, 1, 5, f) == 5) {
			size_t len = get16(h + 1) | (size_t)get16(h + 3) << 16;
			int k = h[0] == 'Q' ? K_Q : h[0] == 'R' ? K_R : h[0] == 'N' ? K_N : -1;
			if (k < 0 || len > MAX_PAYLOAD) {
				fprintf(stderr, "mb-rpccodec: %s: not a payload dump\n", argv[a]);
				return 2;
			}
			if (fread(buf, 1, len, f) != len) {
				/* a store killed mid-write leaves its last record short */
				fprintf(
				    stderr,
				    "mb-rpccodec: %s: the last record is incomplete: left out\n",
				    argv[a]);
				break;
			}
			size_t wire[NC];
			wire[C_OFF] = len;
			wire[C_LZ4] = wire[C_FAST] = wire[C_CHAIN] = len;
			if (len >= min && len > 0) {
				int c = LZ4_compress_default((const char *)buf, (char *)z, (int)len,
							     LZ4_compressBound((int)len));
				if (c > 0 && (size_t)c < len)
					wire[C_LZ4] = (size_t)c;
				struct enc *encs[2] = {fast, chain};
				for (int i = 0; i < 2; i++) {
					size_t c2 = lz77_encode(encs[i], buf, len, z);
					if (!c2 || lz77_decode(z, c2, back, len) != (long)len ||
					    memcmp(back, buf, len)) {
						fprintf(
						    stderr,
						    "mb-rpccodec: a payload of %zu bytes does not "
						    "decode back\n",
						    len);
						return 1;
					}
					if (c2 < len)
						wire[C_FAST + i] = c2;
				}
			}
			for (int c = 0; c < NC; c++) {
				bytes[k][c] += wire[c] + FRAME_HDR;
				bytes[K_ALL][c] += wire[c] + FRAME_HDR;
			}
			count[k]++;
			count[K_ALL]++;
		}
		fclose(f);
	}
	printf("bytes on the wire (payloads of at least %zu bytes compressed when smaller; "
	       "16-byte frame headers)\n",
	       min);
	printf("%-14s %10s %14s", "", "payloads", codec_names[C_OFF]);
	for (int c = 1; c < NC; c++)
		printf("  %28s", codec_names[c]);
	printf("\n");
	for (int k = 0; k < NK; k++) {
		printf("%-14s %10llu %14llu", kind_names[k], (unsigned long long)count[k],
		       (unsigned long long)bytes[k][C_OFF]);
		for (int c = 1; c < NC; c++) {
			double cut =
			    bytes[k][C_OFF]
				? 100.0 * (1.0 - (double)bytes[k][c] / (double)bytes[k][C_OFF])
				: 0.0;
			printf("  %14llu (cut %5.1f%%)", (unsigned long long)bytes[k][c], cut);
		}
		printf("\n");
	}
	double lz4 = (double)bytes[K_ALL][C_LZ4], off = (double)bytes[K_ALL][C_OFF];
	for (int c = C_FAST; c < NC; c++)
		printf("%s / LZ4 bytes with compression: %.3f (cut %.1f%% against LZ4's %.1f%%)\n",
		       codec_names[c], lz4 > 0 ? (double)bytes[K_ALL][c] / lz4 : 0.0,
		       off > 0 ? 100.0 * (1.0 - (double)bytes[K_ALL][c] / off) : 0.0,
		       off > 0 ? 100.0 * (1.0 - lz4 / off) : 0.0);
	free(fast->prev);
	free(chain->prev);
	free(fast);
	free(chain);
	free(buf);
	free(z);
	free(back);
	return 0;
}
