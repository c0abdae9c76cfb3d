/* test_compress.c: unit tests of LZ4 payload compression in frames.
 * Compression applies only at or above the threshold and only when it
 * shrinks the payload; compressed frames decode to the same bytes; text
 * like mail bodies (core/content.h) compresses to about half or better. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/content.h"
#include "core/error.h"
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

static void test_threshold_and_switch(void **state)
{
	(void)state;
	char text[4096];
	struct mb_buf *out;
	uint8_t flags;
	mb_content_fill(7, text, sizeof(text));
	mb_buf_create(0, &out);
	struct mb_codec_opts on = {true, 1024, 0}, off = {false, 1024, 0};
	/* below the threshold: never compressed */
	size_t w = frame_of(text, 1000, &on, out, &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(w, MB_FRAME_HDR + 1000);
	check_roundtrip(out, text, 1000);
	/* above: compressed and smaller */
	w = frame_of(text, sizeof(text), &on, out, &flags);
	assert_int_equal(flags, MB_FRAME_F_LZ4);
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
	struct mb_codec_opts on = {true, 64, 0};
	size_t w = frame_of(rnd, sizeof(rnd), &on, out, &flags);
	assert_int_equal(flags, 0);
	assert_int_equal(w, MB_FRAME_HDR + sizeof(rnd));
	check_roundtrip(out, rnd, sizeof(rnd));
	mb_buf_destroy(out);
}

static void test_mail_text_ratio(void **state)
{
	(void)state;
	/* bodies averaging 75 KB: the wire carries about half or less */
	struct mb_buf *out;
	uint8_t flags;
	size_t raw = 0, wire = 0;
	mb_buf_create(0, &out);
	struct mb_codec_opts on = {true, 1024, 0};
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
	print_message("mail text LZ4 ratio %.2f:1 over %zu bytes\n", ratio, raw);
	assert_true(ratio > 1.5);
	mb_buf_destroy(out);
}

static void test_oversize_refused(void **state)
{
	(void)state;
	struct mb_buf *out;
	mb_buf_create(0, &out);
	char small[32] = {0};
	struct mb_codec_opts lim = {false, 0, 16};
	assert_int_equal(mb_frame_append(out, MB_FRAME_REPLY, 1, small, sizeof(small), &lim, NULL),
			 MB_ETOOBIG);
	assert_int_equal(mb_buf_len(out), 0);
	mb_buf_destroy(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threshold_and_switch),
	    cmocka_unit_test(test_incompressible_stays_raw),
	    cmocka_unit_test(test_mail_text_ratio),
	    cmocka_unit_test(test_oversize_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
