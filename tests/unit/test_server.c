/* test_server.c: connection handling of the store (src/store/net.c),
 * against a real store in a thread: an idle connection is closed after the
 * idle timeout; a well-framed but malformed payload gets an ERROR frame
 * and the connection stays usable; a frame header above the size limit
 * gets an ERROR frame (MB_ETOOBIG) and the connection is closed; a
 * response to a pipelined second request waits for the first; a client
 * that goes away is never the process's death (SIGPIPE ignored by the
 * store library: a reply written to a closed connection killed the
 * process that embedded the store, silently). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>

#include "storetest.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sigpipe_ignored), cmocka_unit_test(test_bad_payload_then_ok),
	    cmocka_unit_test(test_oversize_closes), cmocka_unit_test(test_pipelined_in_order),
	    cmocka_unit_test(test_idle_closed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
