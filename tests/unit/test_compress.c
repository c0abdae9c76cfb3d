/* test_compress.c: unit tests of the wire's payload compression,
 * LZ77+DIRECT2 (proto/lz77.h), on its own and in frames.  The encoder
 * reproduces MS-XCA's examples byte for byte and its output decodes back
 * for every length and kind of input, long matches included; the decoder
 * refuses malformed, truncated and oversized input without reading or
 * writing out of bounds.  In frames, compression applies only at or above
 * the threshold and only when it shrinks the payload; text like mail
 * bodies (core/content.h) compresses to well under half. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/content.h"
#include "core/error.h"
#include "proto/lz77.h"
#include "proto/proto.h"

static size_t frame_of(const void *payload, size_t len, const struct mb_codec_opts *o,
		       struct mb_buf *out, uint8_t *flags)
{
	size_t wire = 0;
	mb_buf_reset(out);
	assert_int_equal(mb_frame_append(out, MB_FRAME_REPLY, 1, payload, len, o, &wire), 0);
	assert_int_equal(wire, mb_buf_len(out));
	*flags = mb_buf_data(out)[7];
	return wire;
}

static void check_roundtrip(struct mb_buf *out, const void *payload, size_t len)
{
	struct mb_frame_hdr h;
	size_t total, plen;
	const uint8_t *p;
	struct mb_buf *scratch;
	mb_buf_create(0, &scratch);
	assert_int_equal(mb_frame_check(mb_buf_data(out), mb_buf_len(out), 0, &h, &total), 0);
	assert_int_equal(h.raw_len, len);
	assert_int_equal(mb_frame_payload(&h, mb_buf_data(out), scratch, &p, &plen), 0);
	assert_int_equal(plen, len);
	assert_memory_equal(p, payload, len);
	mb_buf_destroy(scratch);
}

static struct mb_lz77 *enc;

/* MS-XCA 2.4.4's example: a, b, c, ..., z (literals only) */
static void test_xca_examples(void **state)
{
	(void)state;
	static const uint8_t want2[] = {0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63,
					0x17, 0x00, 0x0f, 0xff, 0x26, 0x01};
	uint8_t in[300], out[400], back[300];
	size_t n;
	for (int depth = 1; depth <= MB_LZ77_DEPTH; depth += MB_LZ77_DEPTH - 1) {
		struct mb_lz77 *e;
		assert_int_equal(mb_lz77_create(depth, &e), 0);
		/* 26 literal bits, 6 padding bits set, the letters: not smaller */
		for (int i = 0; i < 26; i++)
			in[i] = (uint8_t)('a' + i);
		assert_int_equal(mb_lz77_encode(e, in, 26, out), 0);
		memset(out, 0, 4);
		out[0] = 0x3f;
		memcpy(out + 4, in, 26);
		assert_int_equal(mb_lz77_decode(out, 30, back, sizeof(back), &n), 0);
		assert_int_equal(n, 26);
		assert_memory_equal(back, in, 26);
		size_t c;
		/* "abc" x 100: three literals, one match of 297 bytes */
		for (int i = 0; i < 300; i++)
			in[i] = (uint8_t)("abc"[i % 3]);
		c = mb_lz77_encode(e, in, 300, out);
		assert_int_equal(c, sizeof(want2));
		assert_memory_equal(out, want2, c);
		assert_int_equal(mb_lz77_decode(want2, sizeof(want2), back, 300, &n), 0);
		assert_int_equal(n, 300);
		assert_memory_equal(back, in, 300);
		mb_lz77_destroy(e);
	}
	struct mb_lz77 *e = NULL;
	assert_int_equal(mb_lz77_create(0, &e), MB_EINVAL);
	assert_null(e);
	assert_int_equal(mb_lz77_create(MB_LZ77_DEPTH_MAX + 1, &e), MB_EINVAL);
}

/* Encode, decode, compare; returns the compressed size (0: not smaller). */
static size_t roundtrip(const uint8_t *in, size_t len)
{
	uint8_t *z = malloc(mb_lz77_bound(len)), *back = malloc(len + 1);
	assert_non_null(z);
	assert_non_null(back);
	size_t c = mb_lz77_encode(enc, in, len, z), n = 0;
	assert_true(c < len || c == 0);
	if (c > 0) {
		assert_int_equal(mb_lz77_decode(z, c, back, len, &n), 0);
		assert_int_equal(n, len);
		assert_memory_equal(back, in, len);
		/* one byte too little room: refused */
		assert_int_equal(mb_lz77_decode(z, c, back, len - 1, &n), MB_EPROTO);
	}
	free(z);
	free(back);
	return c;
}

static void test_roundtrips(void **state)
{
	(void)state;
	enum { BIG = (1 << 20) + 12345 };
	uint8_t *buf = malloc(BIG);
	assert_non_null(buf);
	/* every short length of text: nothing to gain in a few bytes (a flag
	 * word costs 4), smaller from a few sentences on */
	mb_content_fill(3, (char *)buf, 4096);
	for (size_t len = 0; len <= 300; len++) {
		size_t c = roundtrip(buf, len);
		if (len <= 4)
			assert_int_equal(c, 0);
		if (len >= 200)
			assert_true(c > 0);
	}
	/* random bytes never shrink; past 4 KB the encoder stops early, but a
	 * random start shorter than that still lets what follows compress */
	assert_int_equal(mb_auth_random(buf, 1 << 16), 0);
	for (size_t len = 0; len <= 300; len += 7)
		assert_int_equal(roundtrip(buf, len), 0);
	assert_int_equal(roundtrip(buf, 1 << 16), 0);
	memset(buf + 4000, 0, 24000);
	assert_true(roundtrip(buf, 28000) < 5000);
	assert_int_equal(mb_auth_random(buf, 8192), 0);
	memset(buf + 8192, 0, 20000);
	assert_int_equal(roundtrip(buf, 28192), 0);
	/* match lengths in every encoding: 3-9 (3 bits), 10-24 (a half byte),
	 * 25-279 (a byte), up to 65,557 (16 bits) and beyond (32 bits) */
	for (size_t run = 3; run < 300; run++) {
		memset(buf, 'x', run);
		buf[run] = 'y';
		memset(buf + run + 1, 'x', run);
		roundtrip(buf, 2 * run + 1);
	}
	memset(buf, 0, BIG);
	assert_true(roundtrip(buf, 70000) < 32);
	assert_true(roundtrip(buf, BIG) < 32);
	/* text as long as a large body, and the 8 KB window's edge */
	mb_content_fill(4, (char *)buf, BIG);
	memcpy(buf + 20000, buf + 20000 - MB_LZ77_WINDOW, 100);
	memcpy(buf + 30000, buf + 30000 - MB_LZ77_WINDOW - 1, 100);
	assert_true(roundtrip(buf, BIG) < BIG / 2);
	free(buf);
}

static void test_malformed(void **state)
{
	(void)state;
	uint8_t out[64] = {0};
	size_t n;
	/* no flag word, or part of one */
	assert_int_equal(mb_lz77_decode(out, 0, out, sizeof(out), &n), MB_EPROTO);
	static const uint8_t short_flags[3] = {0};
	assert_int_equal(mb_lz77_decode(short_flags, 3, out, sizeof(out), &n), MB_EPROTO);
	/* a match before the start of the output */
	static const uint8_t before[] = {0, 0, 0, 0x80, 0x08, 0x00};
	assert_int_equal(mb_lz77_decode(before, sizeof(before), out, sizeof(out), &n), MB_EPROTO);
	/* a literal, then a match reaching two back */
	static const uint8_t back2[] = {0, 0, 0, 0x40, 'a', 0x08, 0x00};
	assert_int_equal(mb_lz77_decode(back2, sizeof(back2), out, sizeof(out), &n), MB_EPROTO);
	/* a literal, then a match of 3 one back: "aaaa" */
	static const uint8_t ok[] = {0, 0, 0, 0x40, 'a', 0x00, 0x00};
	assert_int_equal(mb_lz77_decode(ok, sizeof(ok), out, sizeof(out), &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(out, "aaaa", 4);
	/* ... into too little room */
	assert_int_equal(mb_lz77_decode(ok, sizeof(ok), out, 3, &n), MB_EPROTO);
	/* a 32-bit length that claims 4 GB: refused by the room, not written */
	static const uint8_t huge[] = {0,    0,	   0,	 0x40, 'a',  0x07, 0x00, 0x0f,
				       0xff, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff};
	assert_int_equal(mb_lz77_decode(huge, sizeof(huge), out, sizeof(out), &n), MB_EPROTO);
	/* a 16-bit length below its minimum (22) */
	static const uint8_t low[] = {0, 0, 0, 0x40, 'a', 0x07, 0x00, 0x0f, 0xff, 0x05, 0x00};
	assert_int_equal(mb_lz77_decode(low, sizeof(low), out, sizeof(out), &n), MB_EPROTO);
	/* every truncation of a real stream: an error or a shorter output */
	uint8_t text[2048], z[2400], big[2048];
	mb_content_fill(9, (char *)text, sizeof(text));
	memset(text + 1000, 0, 600);
	size_t c = mb_lz77_encode(enc, text, sizeof(text), z);
	for (size_t cut = 0; cut < c; cut++) {
		size_t m = 0;
		int rc = mb_lz77_decode(z, cut, big, sizeof(big), &m);
		assert_true(rc == MB_EPROTO || (rc == 0 && m < sizeof(text)));
		if (rc == 0)
			assert_memory_equal(big, text, m);
	}
}

static void test_threshold_and_switch(void **state)
{
	(void)state;
	char text[4096];
	struct mb_buf *out;
	uint8_t flags;
	mb_content_fill(7, text, sizeof(text));
	mb_buf_create(0, &out);
	struct mb_codec_opts on = {enc, 1024, 0}, off = {NULL, 1024, 0};
	/* below the threshold: never compressed */
	size_t w = frame_of(text, 1000, &on, out, &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(w, MB_FRAME_HDR + 1000);
	check_roundtrip(out, text, 1000);
	/* above: compressed and smaller */
	w = frame_of(text, sizeof(text), &on, out, &flags);
	assert_int_equal(flags, MB_FRAME_F_LZ77);
	assert_true(w < MB_FRAME_HDR + sizeof(text));
	check_roundtrip(out, text, sizeof(text));
	/* switched off */
	w = frame_of(text, sizeof(text), &off, out, &flags);
	assert_int_equal(flags, 0);
	check_roundtrip(out, text, sizeof(text));
	/* NULL opts: off */
	w = frame_of(text, sizeof(text), NULL, out, &flags);
	assert_int_equal(flags, 0);
	mb_buf_destroy(out);
}

static void test_incompressible_stays_raw(void **state)
{
	(void)state;
	uint8_t rnd[8192];
	struct mb_buf *out;
	uint8_t flags;
	assert_int_equal(mb_auth_random(rnd, sizeof(rnd)), 0);
	mb_buf_create(0, &out);
	struct mb_codec_opts on = {enc, 64, 0};
	size_t w = frame_of(rnd, sizeof(rnd), &on, out, &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(w, MB_FRAME_HDR + sizeof(rnd));
	check_roundtrip(out, rnd, sizeof(rnd));
	mb_buf_destroy(out);
}

static void test_mail_text_ratio(void **state)
{
	(void)state;
	/* bodies averaging 75 KB: the wire carries well under half */
	struct mb_buf *out;
	uint8_t flags;
	size_t raw = 0, wire = 0;
	mb_buf_create(0, &out);
	struct mb_codec_opts on = {enc, 1024, 0};
	for (uint64_t seed = 1; seed <= 20; seed++) {
		char *body;
		size_t len;
		assert_int_equal(mb_content_body(seed, 75 * 1024, &body, &len), 0);
		wire += frame_of(body, len, &on, out, &flags);
		check_roundtrip(out, body, len);
		raw += len + MB_FRAME_HDR;
		free(body);
	}
	double ratio = (double)raw / (double)wire;
	print_message("mail text LZ77+DIRECT2 ratio %.2f:1 over %zu bytes\n", ratio, raw);
	assert_true(ratio > 2.0);
	mb_buf_destroy(out);
}

static void test_oversize_refused(void **state)
{
	(void)state;
	struct mb_buf *out;
	mb_buf_create(0, &out);
	char small[32] = {0};
	struct mb_codec_opts lim = {NULL, 0, 16};
	assert_int_equal(mb_frame_append(out, MB_FRAME_REPLY, 1, small, sizeof(small), &lim, NULL),
			 MB_ETOOBIG);
	assert_int_equal(mb_buf_len(out), 0);
	mb_buf_destroy(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_xca_examples),
	    cmocka_unit_test(test_roundtrips),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_threshold_and_switch),
	    cmocka_unit_test(test_incompressible_stays_raw),
	    cmocka_unit_test(test_mail_text_ratio),
	    cmocka_unit_test(test_oversize_refused),
	};
	if (mb_lz77_create(MB_LZ77_DEPTH, &enc))
		return 1;
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	mb_lz77_destroy(enc);
	return rc;
}
