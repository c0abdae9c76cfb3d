/* test_server.c: connection handling of the store (src/store/net.c),
 * against a real store in a thread: an idle connection is closed after the
 * idle timeout; a well-framed but malformed payload gets an ERROR frame
 * and the connection stays usable; a compressed request is decompressed
 * only on a session granted compression (else an ERROR frame, and the
 * connection stays usable); a frame header above the size limit
 * gets an ERROR frame (MB_ETOOBIG) and the connection is closed; a
 * response to a pipelined second request waits for the first; a client
 * that goes away is never the process's death (SIGPIPE ignored by the
 * store library: a reply written to a closed connection killed the
 * process that embedded the store, silently), nor leaves a freed
 * connection on a notification list when it goes away mid-request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "storetest.h"
#include "tests/opbatch.h"
#include "proto/lz77.h"

static struct storetest T;

static int setup(void **state)
{
	(void)state;
	signal(SIGPIPE, SIG_DFL); /* as a process that never thought of it */
	return storetest_start_idle(&T, 12, 3);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void test_idle_closed(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 0, 0);
	struct mb_frame_hdr h;
	const uint8_t *p;
	size_t len;
	assert_non_null(c);
	/* nothing to do: the store closes it (idle 3 s, swept every 5 s); the
	 * client's own wait is bounded by its 10 s timeout at most twice */
	int rc = mb_client_recv_frame(c, &h, &p, &len);
	if (rc == MB_ETIMEDOUT)
		rc = mb_client_recv_frame(c, &h, &p, &len);
	assert_int_equal(rc, MB_ECLOSED);
	mb_client_destroy(c);
}

static void test_sigpipe_ignored(void **state)
{
	(void)state;
	struct sigaction sa;
	assert_int_equal(sigaction(SIGPIPE, NULL, &sa), 0);
	assert_true(sa.sa_handler == SIG_IGN);
	/* clients that log on and close at once leave a store that still
	 * serves the next one */
	for (int i = 0; i < 20; i++) {
		struct mb_client *c = storetest_client(&T, i % 12, 0);
		assert_non_null(c);
		mb_client_destroy(c);
	}
	struct mb_client *c = storetest_client(&T, 1, 0);
	assert_non_null(c);
	mb_client_destroy(c);
}

static void test_bad_payload_then_ok(void **state)
{
	(void)state;
	struct mb_client *c;
	struct mb_frame_hdr h;
	const uint8_t *p;
	size_t len;
	assert_int_equal(mb_client_connect("127.0.0.1", T.port, 10000, &c), 0);
	/* one op with a body length past the end of the payload */
	uint8_t f[MB_FRAME_HDR + 9];
	memset(f, 0, sizeof(f));
	put32(f, 9);
	f[4] = MB_PROTO_MAGIC;
	f[5] = MB_PROTO_VERSION;
	f[6] = MB_FRAME_REQUEST;
	put32(f + 8, 77);
	put32(f + 12, 9);
	uint8_t body[9] = {1, 0, 0, 0, MB_OP_RELEASE, 200, 0, 0, 0};
	memcpy(f + MB_FRAME_HDR, body, 9);
	assert_int_equal(mb_client_send_raw(c, f, sizeof(f)), 0);
	assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
	assert_int_equal(h.kind, MB_FRAME_ERROR);
	assert_int_equal(h.seq, 77);
	struct mb_frame_error e;
	assert_int_equal(mb_error_decode(p, len, &e), 0);
	assert_int_equal(e.code, MB_EPROTO);
	/* a REPLY frame sent to the store is refused the same way */
	f[6] = MB_FRAME_REPLY;
	assert_int_equal(mb_client_send_raw(c, f, sizeof(f)), 0);
	assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
	assert_int_equal(h.kind, MB_FRAME_ERROR);
	/* the connection still works */
	const struct mb_topo_user *u = mb_topology_user(T.topo, 2);
	assert_int_equal(mb_client_logon(c, u->name, u->password, 0, NULL), 0);
	mb_client_destroy(c);
}

/* Compressed requests: decompressed only on a session granted compression. */
static void test_compression_needs_grant(void **state)
{
	(void)state;
	struct mb_lz77 *z;
	struct mb_buf *out, *tmp;
	struct mb_frame_hdr h;
	const uint8_t *p;
	size_t len;
	assert_int_equal(mb_lz77_create(MB_LZ77_DEPTH, &z), 0);
	mb_buf_create(0, &out);
	mb_buf_create(0, &tmp);
	for (int granted = 0; granted <= 1; granted++) {
		struct mb_client *c = storetest_client(&T, 4, granted ? MB_LOGON_F_LZ77 : 0);
		assert_non_null(c);
		assert_int_equal(mb_client_compressing(c), granted);
		/* a batch of the same OpenFolder: it compresses */
		struct mb_op ops[16];
		memset(ops, 0, sizeof(ops));
		for (int i = 0; i < 16; i++) {
			ops[i].code = MB_OP_OPEN_FOLDER;
			ops[i].u.open_folder.fid = MB_FID(mb_client_mailbox(c), MB_FID_INBOX);
		}
		struct mb_request rq = {55, 16, ops};
		struct mb_codec_opts o = {z, 0, 0};
		mb_buf_reset(out);
		assert_int_equal(mb_request_encode(out, tmp, &rq, &o, NULL), 0);
		assert_int_equal(mb_buf_data(out)[7], MB_FRAME_F_LZ77);
		assert_int_equal(mb_client_send_raw(c, mb_buf_data(out), mb_buf_len(out)), 0);
		assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
		assert_int_equal(h.seq, 55);
		if (granted) {
			assert_int_equal(h.kind, MB_FRAME_REPLY);
		} else {
			assert_int_equal(h.kind, MB_FRAME_ERROR);
			struct mb_frame_error e;
			assert_int_equal(mb_error_decode(p, len, &e), 0);
			assert_int_equal(e.code, MB_EPROTO);
			/* the connection still works, uncompressed */
			mb_buf_reset(out);
			assert_int_equal(mb_request_encode(out, tmp, &rq, NULL, NULL), 0);
			assert_int_equal(mb_client_send_raw(c, mb_buf_data(out), mb_buf_len(out)),
					 0);
			assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
			assert_int_equal(h.kind, MB_FRAME_REPLY);
		}
		mb_client_destroy(c);
	}
	mb_buf_destroy(out);
	mb_buf_destroy(tmp);
	mb_lz77_destroy(z);
}

static void test_oversize_closes(void **state)
{
	(void)state;
	struct mb_client *c;
	struct mb_frame_hdr h;
	const uint8_t *p;
	size_t len;
	assert_int_equal(mb_client_connect("127.0.0.1", T.port, 10000, &c), 0);
	uint8_t f[MB_FRAME_HDR];
	memset(f, 0, sizeof(f));
	put32(f, MB_PROTO_MAX_FRAME + 1);
	f[4] = MB_PROTO_MAGIC;
	f[5] = MB_PROTO_VERSION;
	f[6] = MB_FRAME_REQUEST;
	put32(f + 12, MB_PROTO_MAX_FRAME + 1);
	assert_int_equal(mb_client_send_raw(c, f, sizeof(f)), 0);
	assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
	assert_int_equal(h.kind, MB_FRAME_ERROR);
	struct mb_frame_error e;
	assert_int_equal(mb_error_decode(p, len, &e), 0);
	assert_int_equal(e.code, MB_ETOOBIG);
	assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), MB_ECLOSED);
	mb_client_destroy(c);
}

static void test_pipelined_in_order(void **state)
{
	(void)state;
	struct mb_client *c = storetest_client(&T, 3, 0);
	assert_non_null(c);
	uint32_t m = mb_client_mailbox(c);
	/* two requests written back to back: two replies, in order */
	struct mb_op op;
	memset(&op, 0, sizeof(op));
	op.code = MB_OP_OPEN_FOLDER;
	op.u.open_folder.fid = MB_FID(m, MB_FID_INBOX);
	struct mb_request r1 = {101, 1, &op}, r2 = {102, 1, &op};
	struct mb_buf *out, *tmp;
	mb_buf_create(0, &out);
	mb_buf_create(0, &tmp);
	assert_int_equal(mb_request_encode(out, tmp, &r1, NULL, NULL), 0);
	assert_int_equal(mb_request_encode(out, tmp, &r2, NULL, NULL), 0);
	assert_int_equal(mb_client_send_raw(c, mb_buf_data(out), mb_buf_len(out)), 0);
	struct mb_frame_hdr h;
	const uint8_t *p;
	size_t len;
	assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
	assert_int_equal(h.kind, MB_FRAME_REPLY);
	assert_int_equal(h.seq, 101);
	assert_int_equal(mb_client_recv_frame(c, &h, &p, &len), 0);
	assert_int_equal(h.seq, 102);
	mb_buf_destroy(out);
	mb_buf_destroy(tmp);
	mb_client_destroy(c);
}

/* A client that goes away while its request runs: the reply's write
 * fails inside finish_req, which closes the connection there; it must not
 * go back on its mailbox's notification list (it did: the next client of
 * that mailbox to register wrote into the freed connection, as ASan and
 * valgrind showed).  Rounds of: A (notifications on) sends a request of
 * submits to itself and a second request behind it, and resets its
 * connection while the store runs the first; B, same mailbox,
 * notifications on, logs on and is served. */
static void test_gone_mid_request(void **state)
{
	(void)state;
	const struct mb_topo_user *u = mb_topology_user(T.topo, 5);
	struct mb_bytes to = mb_str(u->name);
	struct mb_prop props[3];
	opbatch_mail_props(props, "gone", "a body for a client that leaves", &to, 1);
	struct mb_buf *out, *tmp;
	assert_int_equal(mb_buf_create(0, &out), 0);
	assert_int_equal(mb_buf_create(0, &tmp), 0);
	for (int round = 0; round < 20; round++) {
		struct mb_client *a = storetest_client(&T, 5, MB_LOGON_F_NOTIFY);
		assert_non_null(a);
		uint32_t m = mb_client_mailbox(a);
		struct mb_op ops[15];
		memset(ops, 0, sizeof(ops));
		uint16_t n = 0;
		for (uint32_t k = 0; k < 5; k++)
			n += opbatch_compose(ops + n, MB_FID(m, MB_FID_SENT), 7 + k, props, 3,
					     MB_OP_SUBMIT);
		/* and a second request behind it: the store stops reading while
		 * the first runs, so it does not see the reset until it writes */
		struct mb_op open;
		memset(&open, 0, sizeof(open));
		open.code = MB_OP_OPEN_FOLDER;
		open.u.open_folder.fid = MB_FID(m, MB_FID_INBOX);
		struct mb_request rq = {200 + (uint32_t)round, n, ops}, rq2 = {1, 1, &open};
		mb_buf_reset(out);
		assert_int_equal(mb_request_encode(out, tmp, &rq, NULL, NULL), 0);
		assert_int_equal(mb_request_encode(out, tmp, &rq2, NULL, NULL), 0);
		assert_int_equal(mb_client_send_raw(a, mb_buf_data(out), mb_buf_len(out)), 0);
		/* let the store read both, then reset: the reply's write fails */
		usleep((useconds_t)(500 + 300 * (round % 8)));
		struct linger lg = {1, 0};
		setsockopt(mb_client_fd(a), SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		mb_client_destroy(a);
		struct mb_client *b = storetest_client(&T, 5, MB_LOGON_F_NOTIFY);
		assert_non_null(b);
		struct mb_op op;
		struct mb_op_reply r;
		memset(&op, 0, sizeof(op));
		op.code = MB_OP_OPEN_FOLDER;
		op.u.open_folder.fid = MB_FID(m, MB_FID_INBOX);
		assert_int_equal(storetest_one(b, &op, &r), 0);
		mb_client_destroy(b);
	}
	mb_buf_destroy(out);
	mb_buf_destroy(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sigpipe_ignored),
	    cmocka_unit_test(test_bad_payload_then_ok),
	    cmocka_unit_test(test_compression_needs_grant),
	    cmocka_unit_test(test_oversize_closes),
	    cmocka_unit_test(test_pipelined_in_order),
	    cmocka_unit_test(test_gone_mid_request),
	    cmocka_unit_test(test_idle_closed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
