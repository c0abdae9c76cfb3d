/* mb-rpccodec.c: what the wire protocol's compression, MS-OXCRPC's LZ77
 * with DIRECT2 encoding (MS-OXCRPC 3.1.4.1.1.2, MS-XCA's "Plain LZ77";
 * src/proto/lz77.h, match search depth 16), does to real payloads and
 * files, against LZ4 (LZ4_compress_default) and against the same format
 * with a one-probe match search (depth 1).
 *
 * mb-rpccodec [--min BYTES] DUMP...
 *   reads the dumps that `mailbench store --dump-payloads FILE` writes
 *   (records: a byte Q, R or N, a 32-bit little-endian length, the payload
 *   before compression) and prints, per kind and in total, the bytes on the
 *   wire (16-byte frame header plus the payload, compressed when it is at
 *   least --min bytes and the result is smaller, as the wire protocol
 *   does) without compression and under each codec, and each one's cut.
 * mb-rpccodec --chunks BYTES FILE...
 *   compresses each file chunk by chunk (each chunk on its own, kept as it
 *   is when that is smaller, as the protocol sends each ReadStream chunk)
 *   and prints a line per file: "FILE BYTES lz4 R lz77 R" (R the ratio,
 *   raw bytes to compressed bytes).
 *
 * With dumps it also prints each encoder's speed on the payloads (one
 * core) and the wire's encoding time against LZ4's.  Every LZ77+DIRECT2
 * output is decoded again and compared (exit 1 on a mismatch).
 * Exit 0 measured, 1 a check failed, 2 bad input.  A measurement tool of
 * bench/ (bench/rpc-compression.sh, bench/kind-ratio.py), not part of the
 * product.
 */
#include "config.h"

#include <lz4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "proto/lz77.h"
#include "proto/proto_int.h" /* get32 */

#define FRAME_HDR 16
#define MAX_PAYLOAD (4u << 20)

struct codecs {
	struct mb_lz77 *lz77[2]; /* depth 1, depth MB_LZ77_DEPTH */
	uint8_t *z, *back;
	uint64_t ns[3], bytes; /* encoding time per codec, bytes encoded */
};

/* Sizes of in[0..n) under LZ4, LZ77 depth 1 and LZ77 at the wire's depth,
 * each at most n (sent as it is when not smaller): 0, or -1 when a
 * payload does not decode back. */
static int sizes(struct codecs *k, const uint8_t *in, size_t n, size_t out[3])
{
	out[0] = out[1] = out[2] = n;
	if (n == 0)
		return 0;
	uint64_t t = mb_now_ns();
	int c =
	    LZ4_compress_default((const char *)in, (char *)k->z, (int)n, LZ4_compressBound((int)n));
	k->ns[0] += mb_now_ns() - t;
	k->bytes += n;
	if (c > 0 && (size_t)c < n)
		out[0] = (size_t)c;
	for (int i = 0; i < 2; i++) {
		t = mb_now_ns();
		size_t c2 = mb_lz77_encode(k->lz77[i], in, n, k->z), back = 0;
		k->ns[1 + i] += mb_now_ns() - t;
		if (c2 == 0) /* not smaller */
			continue;
		if (mb_lz77_decode(k->z, c2, k->back, n, &back) != 0 || back != n ||
		    memcmp(k->back, in, n)) {
			fprintf(stderr, "mb-rpccodec: %zu bytes do not decode back\n", n);
			return -1;
		}
		out[1 + i] = c2;
	}
	return 0;
}

/* --chunks: a line per file. */
static int chunks(struct codecs *k, size_t chunk, char **files, int nfiles)
{
	uint8_t *buf = malloc(chunk);
	if (!buf)
		return 1;
	for (int a = 0; a < nfiles; a++) {
		FILE *f = fopen(files[a], "rb");
		if (!f) {
			perror(files[a]);
			free(buf);
			return 2;
		}
		uint64_t raw = 0, lz4 = 0, lz77 = 0;
		size_t n, s[3];
		while ((n = fread(buf, 1, chunk, f)) > 0) {
			if (sizes(k, buf, n, s)) {
				fclose(f);
				free(buf);
				return 1;
			}
			raw += n;
			lz4 += s[0];
			lz77 += s[2];
		}
		fclose(f);
		printf("%s %llu lz4 %.3f lz77 %.3f\n", files[a], (unsigned long long)raw,
		       lz4 ? (double)raw / (double)lz4 : 1.0,
		       lz77 ? (double)raw / (double)lz77 : 1.0);
	}
	free(buf);
	return 0;
}

enum { K_Q, K_R, K_N, K_ALL, NK };
enum { C_OFF, C_LZ4, C_FAST, C_WIRE, NC };
static const char *const kind_names[NK] = {"requests", "replies", "notifications", "total"};
static const char *const codec_names[NC] = {"off", "LZ4", "LZ77+DIRECT2 depth 1",
					    "LZ77+DIRECT2 depth 16 (wire)"};

/* Dumps: the table of bytes on the wire. */
static int dumps(struct codecs *k, size_t min, char **files, int nfiles)
{
	uint8_t *buf = malloc(MAX_PAYLOAD);
	uint64_t bytes[NK][NC] = {{0}}, count[NK] = {0};
	int rc = 0;
	if (!buf)
		return 1;
	for (int a = 0; a < nfiles && rc == 0; a++) {
		FILE *f = fopen(files[a], "rb");
		if (!f) {
			perror(files[a]);
			rc = 2;
			break;
		}
		uint8_t h[5];
		while (rc == 0 && fread(h, 1, 5, f) == 5) {
			size_t len = get32(h + 1), s[3];
			int kd = h[0] == 'Q' ? K_Q : h[0] == 'R' ? K_R : h[0] == 'N' ? K_N : -1;
			if (kd < 0 || len > MAX_PAYLOAD) {
				fprintf(stderr, "mb-rpccodec: %s: not a payload dump\n", files[a]);
				rc = 2;
				break;
			}
			if (fread(buf, 1, len, f) != len) {
				/* a store killed mid-write leaves its last record short */
				fprintf(
				    stderr,
				    "mb-rpccodec: %s: the last record is incomplete: left out\n",
				    files[a]);
				break;
			}
			size_t wire[NC] = {len, len, len, len};
			if (len >= min && len > 0) {
				if (sizes(k, buf, len, s)) {
					rc = 1;
					break;
				}
				memcpy(wire + C_LZ4, s, sizeof(s));
			}
			for (int c = 0; c < NC; c++) {
				bytes[kd][c] += wire[c] + FRAME_HDR;
				bytes[K_ALL][c] += wire[c] + FRAME_HDR;
			}
			count[kd]++;
			count[K_ALL]++;
		}
		fclose(f);
	}
	free(buf);
	if (rc)
		return rc;
	printf("bytes on the wire (payloads of at least %zu bytes compressed when smaller; "
	       "16-byte frame headers)\n",
	       min);
	printf("%-14s %10s %14s", "", "payloads", codec_names[C_OFF]);
	for (int c = 1; c < NC; c++)
		printf("  %30s", codec_names[c]);
	printf("\n");
	for (int kd = 0; kd < NK; kd++) {
		printf("%-14s %10llu %14llu", kind_names[kd], (unsigned long long)count[kd],
		       (unsigned long long)bytes[kd][C_OFF]);
		for (int c = 1; c < NC; c++) {
			double off = (double)bytes[kd][C_OFF];
			double cut = off > 0 ? 100.0 * (1.0 - (double)bytes[kd][c] / off) : 0.0;
			printf("  %16llu (cut %5.1f%%)", (unsigned long long)bytes[kd][c], cut);
		}
		printf("\n");
	}
	double lz4 = (double)bytes[K_ALL][C_LZ4], off = (double)bytes[K_ALL][C_OFF];
	for (int c = C_FAST; c < NC; c++)
		printf("%s / LZ4 bytes with compression: %.3f (cut %.1f%% against LZ4's %.1f%%)\n",
		       codec_names[c], lz4 > 0 ? (double)bytes[K_ALL][c] / lz4 : 0.0,
		       off > 0 ? 100.0 * (1.0 - (double)bytes[K_ALL][c] / off) : 0.0,
		       off > 0 ? 100.0 * (1.0 - lz4 / off) : 0.0);
	/* speed: one core, this machine, the payloads above */
	for (int c = C_LZ4; c < NC; c++)
		printf("%s encodes %.0f MB/s\n", codec_names[c],
		       k->ns[c - 1] ? (double)k->bytes * 1e3 / (double)k->ns[c - 1] : 0.0);
	printf("encoding time, wire / LZ4: %.2f\n",
	       k->ns[0] ? (double)k->ns[2] / (double)k->ns[0] : 0.0);
	return 0;
}

static int byte_count(const char *flag, const char *v, size_t lo, size_t *out)
{
	char *end;
	unsigned long long n = strtoull(v, &end, 10);
	if (*v == '\0' || *v == '-' || *end || n < lo || n > MAX_PAYLOAD) {
		fprintf(stderr, "mb-rpccodec: %s: '%s' is not a byte count in %zu..%u\n", flag, v,
			lo, MAX_PAYLOAD);
		return 2;
	}
	*out = (size_t)n;
	return 0;
}

int main(int argc, char **argv)
{
	size_t min = 256, chunk = 0;
	int first = 1;
	if (argc > 2 && strcmp(argv[1], "--min") == 0) {
		if (byte_count("--min", argv[2], 0, &min))
			return 2;
		first = 3;
	} else if (argc > 2 && strcmp(argv[1], "--chunks") == 0) {
		if (byte_count("--chunks", argv[2], 1, &chunk))
			return 2;
		first = 3;
	}
	if (first >= argc) {
		fprintf(stderr, "usage: mb-rpccodec [--min BYTES] DUMP...\n"
				"       mb-rpccodec --chunks BYTES FILE...\n");
		return 2;
	}
	struct codecs k = {
	    {NULL, NULL}, malloc(mb_lz77_bound(MAX_PAYLOAD)), malloc(MAX_PAYLOAD), {0, 0, 0}, 0};
	int rc = 1;
	if (k.z && k.back && mb_lz77_create(1, &k.lz77[0]) == 0 &&
	    mb_lz77_create(MB_LZ77_DEPTH, &k.lz77[1]) == 0)
		rc = chunk ? chunks(&k, chunk, argv + first, argc - first)
			   : dumps(&k, min, argv + first, argc - first);
	else
		fprintf(stderr, "mb-rpccodec: out of memory\n");
	mb_lz77_destroy(k.lz77[0]);
	mb_lz77_destroy(k.lz77[1]);
	free(k.z);
	free(k.back);
	return rc;
}
