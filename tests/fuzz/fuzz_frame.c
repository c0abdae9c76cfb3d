/* fuzz_frame.c: libFuzzer harness of the frame decoder and payload codecs.
 * Input: a byte stream as a store or client would receive it.  Every frame
 * found is checked, decompressed and decoded as every kind; a decoded
 * request or reply is re-encoded (must succeed) and decoded again.  The
 * whole input is also compressed with the wire's LZ77+DIRECT2 and must
 * decode back to itself.  Must never crash, leak or read out of bounds
 * (built with ASan).
 * Build and run: tests/fuzz/run.sh SECONDS. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "proto/lz77.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mb_buf *scratch, *enc;
	static struct mb_arena *arena, *arena2;
	static struct mb_lz77 *lz77;
	static uint8_t z[1 << 20], back[1 << 20];
	if (size <= sizeof(back) && mb_lz77_bound(size) <= sizeof(z)) {
		size_t n = 0;
		if (!lz77 && mb_lz77_create(MB_LZ77_DEPTH, &lz77))
			abort();
		size_t c = mb_lz77_encode(lz77, data, size, z);
		if (c > 0 &&
		    (mb_lz77_decode(z, c, back, size, &n) || n != size || memcmp(back, data, size)))
			abort();
	}
	if (!scratch) {
		mb_buf_create(0, &scratch);
		mb_buf_create(0, &enc);
		mb_arena_create(8u << 20, &arena);
		mb_arena_create(8u << 20, &arena2);
	}
	size_t off = 0;
	while (off < size) {
		struct mb_frame_hdr h;
		size_t total;
		int rc = mb_frame_check(data + off, size - off, 1u << 20, &h, &total);
		if (rc)
			break;
		const uint8_t *p;
		size_t len;
		if (mb_frame_payload(&h, data + off, scratch, &p, &len) == 0) {
			struct mb_request rq;
			struct mb_reply rp;
			struct mb_notify nt;
			struct mb_frame_error er;
			mb_arena_reset(arena);
			if (mb_request_decode(p, len, h.seq, arena, &rq) == 0) {
				mb_buf_reset(enc);
				if (mb_request_encode_payload(enc, &rq) == 0) {
					mb_arena_reset(arena2);
					(void)mb_request_decode(mb_buf_data(enc), mb_buf_len(enc),
								0, arena2, &rq);
				}
			}
			mb_arena_reset(arena);
			if (mb_reply_decode(p, len, h.seq, arena, &rp) == 0) {
				mb_buf_reset(enc);
				(void)mb_reply_encode_payload(enc, &rp);
			}
			mb_arena_reset(arena);
			(void)mb_notify_decode(p, len, arena, &nt);
			(void)mb_error_decode(p, len, &er);
			mb_arena_reset(arena);
			struct mb_prop *props;
			uint16_t n;
			(void)mb_props_decode(p, len, arena, &props, &n);
		}
		off += total;
	}
	return 0;
}
