/* mb-client.c: a small command-line client of the store, built on the
 * blocking client (src/proto/client.h), for the integration tests and for
 * poking a running store by hand.
 *
 *   mb-client ADDR:PORT DATA smoke       drive every operation end to end
 *   mb-client ADDR:PORT DATA logon USER  log on (password from the topology)
 *   mb-client ADDR:PORT DATA badpass USER  a wrong password must be refused
 *   mb-client ADDR:PORT DATA garbage     malformed frames must get errors
 *   mb-client ADDR:PORT DATA send USER N send N messages to the next user,
 *                                        print "delivered MAILBOX MID" lines
 *   mb-client - DATA probe FILE          with the store stopped: every
 *                                        "delivered M MID" line of FILE exists
 *   mb-client ADDR:PORT DATA exhaust USER N  log on, open N idle raw
 *                                        connections, deliver (crossing log
 *                                        segments), close them, log on again
 *   mb-client ADDR:PORT DATA flood N BYTES  N connections not logged on, each
 *                                        sending a frame header of BYTES and
 *                                        as much of its body as the store takes
 *   mb-client ADDR:PORT DATA slowloris prelogon|frame S  one byte every 0.2 s:
 *                                        the store must close within S seconds
 *   mb-client ADDR:PORT DATA hold USER N S  N sessions of USER each fill
 *                                        drafts with 1 MiB property values
 *                                        until the store refuses (MB_EFULL,
 *                                        the connection still answering),
 *                                        print "held MIB MiB in N sessions,
 *                                        REFUSED refused", keep them S seconds
 *   mb-client ADDR:PORT DATA fill USER MIB  save messages of 1 MiB bodies
 *                                        (hardly compressible) in USER's
 *                                        Inbox until the store refuses
 *                                        (MB_ELOWDISK, its free-space
 *                                        reserve) or MIB MiB are saved; then
 *                                        a flag change must pass, a submit be
 *                                        refused and the delete of what was
 *                                        saved pass; prints "filled N MiB"
 *                                        and "refused" when it was
 *
 * Exit 0 when every check held, 1 otherwise (the failing check is printed).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/topology.h"
#include "proto/client.h"
#include "proto/proto.h"
#include "store/store.h"
#include "tests/opbatch.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

static struct mb_topology *topo;
static const char *addr;

static int connect_as(int idx, uint32_t flags, struct mb_client **out)
{
	const struct mb_topo_user *u = mb_topology_user(topo, idx);
	int rc = mb_client_connect_addr(addr, 10000, out);
	CHECK(rc == 0, "connect %s: %s", addr, mb_strerror(rc));
	rc = mb_client_logon(*out, u->name, u->password, flags, NULL);
	if (rc) {
		mb_client_destroy(*out);
		*out = NULL;
	}
	CHECK(rc == 0, "logon %s: %s", u->name, mb_strerror(rc));
	return 0;
}

static int one(struct mb_client *c, struct mb_op *op, struct mb_op_reply *res)
{
	struct mb_reply rep;
	int rc = mb_client_call(c, op, 1, &rep);
	if (rc)
		return rc;
	*res = rep.ops[0];
	return res->status;
}

static int smoke(void)
{
	struct mb_client *a, *b;
	struct mb_op ops[8];
	struct mb_reply rep;
	struct mb_op_reply r;
	int rc;

	if (connect_as(0, MB_LOGON_F_LZ77 | MB_LOGON_F_NOTIFY, &a))
		return 1;
	if (connect_as(1, MB_LOGON_F_LZ77 | MB_LOGON_F_NOTIFY, &b)) {
		mb_client_destroy(a);
		return 1;
	}
	uint32_t ma = mb_client_mailbox(a), mbx_b = mb_client_mailbox(b);
	printf("logon ok: mailboxes %u and %u, compression %d\n", ma, mbx_b,
	       mb_client_compressing(a));

	/* one batch: open Inbox, contents table, columns, first page */
	static uint32_t cols[] = {MB_PR_MID, MB_PR_SUBJECT, MB_PR_MESSAGE_SIZE};
	memset(ops, 0, sizeof(ops));
	rc = mb_client_call(a, ops, opbatch_browse(ops, MB_FID(ma, MB_FID_INBOX), 1, cols, 3, 0, 2),
			    &rep);
	CHECK(rc == 0, "browse batch: %s", mb_strerror(rc));
	for (int i = 0; i < 4; i++)
		CHECK(rep.ops[i].status == 0, "browse op %d: %s", i,
		      mb_strerror(rep.ops[i].status));
	uint32_t inbox_count = rep.ops[0].u.folder.count;
	CHECK(inbox_count > 0 && rep.ops[1].u.table.rows == inbox_count, "inbox count %u",
	      inbox_count);
	CHECK(rep.ops[3].u.rows.ncols == 3 && rep.ops[3].u.rows.nrows >= 1, "query rows");
	uint64_t first_mid = (uint64_t)rep.ops[3].u.rows.vals[0].v.i;
	printf("inbox: %u messages, first page %u rows\n", inbox_count, rep.ops[3].u.rows.nrows);

	/* open the newest message and read its body */
	static uint32_t want[] = {MB_PR_SUBJECT, MB_PR_BODY};
	memset(ops, 0, sizeof(ops));
	rc = mb_client_call(
	    a, ops, opbatch_read(ops, MB_FID(ma, MB_FID_INBOX), first_mid, 2, want, 2), &rep);
	CHECK(rc == 0 && rep.ops[0].status == 0 && rep.ops[1].status == 0, "open/read: %s %d %d",
	      mb_strerror(rc), rep.ops[0].status, rep.ops[1].status);
	CHECK(rep.ops[1].u.props.props[1].tag == MB_PR_BODY &&
		  rep.ops[1].u.props.props[1].v.b.len > 0,
	      "body missing");
	printf("read message %llu: body %u bytes\n", (unsigned long long)first_mid,
	       rep.ops[1].u.props.props[1].v.b.len);

	/* send to user 2 and to a list, in one batch */
	const struct mb_topo_user *ub = mb_topology_user(topo, 1);
	const struct mb_topo_list *l0 = mb_topology_list(topo, 0);
	struct mb_bytes names[2] = {mb_str(ub->name), mb_str(l0->name)};
	struct mb_prop props[3];
	opbatch_mail_props(props, "integration test",
			   "Hello, this is a test message body. Hello again.", names, 2);
	memset(ops, 0, sizeof(ops));
	rc = mb_client_call(
	    a, ops, opbatch_compose(ops, MB_FID(ma, MB_FID_SENT), 3, props, 3, MB_OP_SUBMIT), &rep);
	CHECK(rc == 0, "submit batch: %s", mb_strerror(rc));
	CHECK(rep.ops[2].status == 0, "submit: %s", mb_strerror(rep.ops[2].status));
	uint32_t ndl = rep.ops[2].u.submit.n;
	CHECK(ndl >= 1, "no deliveries");
	bool to_b = false;
	uint64_t b_mid = 0;
	for (uint32_t i = 0; i < ndl; i++) {
		if (rep.ops[2].u.submit.dl[i].mailbox == mbx_b) {
			to_b = true;
			b_mid = rep.ops[2].u.submit.dl[i].mid;
		}
	}
	CHECK(to_b, "user 2 not among the deliveries");
	printf("submitted: %u deliveries in %u databases (list %s has %d members)\n", ndl,
	       rep.ops[2].u.submit.databases, l0->name, l0->nmembers);

	/* user 2 is notified and can read it */
	struct mb_event ev;
	rc = mb_client_next_event(b, 5000, &ev);
	CHECK(rc == 0, "no notification: %s", mb_strerror(rc));
	CHECK(ev.mid == b_mid && ev.fid == MB_FID(mbx_b, MB_FID_INBOX), "wrong event");
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_OPEN_MESSAGE;
	ops[0].u.open_message.fid = MB_FID(mbx_b, MB_FID_INBOX);
	ops[0].u.open_message.mid = b_mid;
	ops[0].u.open_message.handle = 1;
	rc = one(b, ops, &r);
	CHECK(rc == 0, "recipient open: %s", mb_strerror(rc));
	printf("notification received; recipient opened message %llu\n", (unsigned long long)b_mid);

	/* cross-mailbox access is refused */
	ops[0].u.open_message.fid = MB_FID(ma, MB_FID_INBOX);
	ops[0].u.open_message.mid = first_mid;
	rc = one(b, ops, &r);
	CHECK(rc == MB_EACCES, "cross-mailbox read allowed: %s", mb_strerror(rc));
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_DELETE_MESSAGES;
	ops[0].u.del.fid = MB_FID(ma, MB_FID_INBOX);
	ops[0].u.del.n = 1;
	ops[0].u.del.mids = &first_mid;
	rc = one(b, ops, &r);
	CHECK(rc == MB_EACCES, "cross-mailbox delete allowed: %s", mb_strerror(rc));
	printf("cross-mailbox read and delete refused\n");

	/* free/busy of another user is readable */
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_FREEBUSY;
	ops[0].u.freebusy.user = mb_str(mb_topology_user(topo, 0)->name);
	ops[0].u.freebusy.start = mb_wall_ms() - 30LL * 86400000;
	ops[0].u.freebusy.end = mb_wall_ms() + 30LL * 86400000;
	rc = one(b, ops, &r);
	CHECK(rc == 0, "freebusy: %s", mb_strerror(rc));
	printf("free/busy of %s: %u blocks\n", mb_topology_user(topo, 0)->name, r.u.freebusy.n);

	/* move to Deleted Items, then delete */
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_MOVE_COPY;
	ops[0].u.move_copy.src_fid = MB_FID(mbx_b, MB_FID_INBOX);
	ops[0].u.move_copy.dst_fid = MB_FID(mbx_b, MB_FID_DELETED);
	ops[0].u.move_copy.n = 1;
	ops[0].u.move_copy.mids = &b_mid;
	rc = one(b, ops, &r);
	CHECK(rc == 0 && r.u.moved.n == 1 && r.u.moved.mids[0] == b_mid, "move: %s",
	      mb_strerror(rc));
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_DELETE_MESSAGES;
	ops[0].u.del.fid = MB_FID(mbx_b, MB_FID_DELETED);
	ops[0].u.del.n = 1;
	ops[0].u.del.mids = &b_mid;
	rc = one(b, ops, &r);
	CHECK(rc == 0 && r.u.count.n == 1, "delete: %s", mb_strerror(rc));
	printf("moved to Deleted Items and deleted\n");

	/* calendar, contacts, sync */
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_CALENDAR_RANGE;
	ops[0].u.calendar.start = mb_wall_ms() - 30LL * 86400000;
	ops[0].u.calendar.end = mb_wall_ms() + 30LL * 86400000;
	ops[0].u.calendar.max_rows = 100;
	ops[1].code = MB_OP_CREATE_CONTACT;
	struct mb_prop cp[2] = {mb_prop_str(MB_PR_DISPLAY_NAME, "Ada Lovelace"),
				mb_prop_str(MB_PR_EMAIL_ADDRESS, "ada@example.org")};
	ops[1].u.create_contact.n = 2;
	ops[1].u.create_contact.props = cp;
	ops[2].code = MB_OP_LIST_CONTACTS;
	ops[2].u.list_contacts.max_rows = 500;
	ops[3].code = MB_OP_SYNC_DOWNLOAD;
	ops[3].u.sync_down.fid = MB_FID(ma, MB_FID_INBOX);
	ops[3].u.sync_down.max = 1000;
	ops[4].code = MB_OP_OPEN_FOLDER; /* the Inbox may have grown: a list can hold A */
	ops[4].u.open_folder.fid = MB_FID(ma, MB_FID_INBOX);
	rc = mb_client_call(a, ops, 5, &rep);
	CHECK(rc == 0, "calendar/contacts/sync: %s", mb_strerror(rc));
	for (int i = 0; i < 5; i++)
		CHECK(rep.ops[i].status == 0, "op %d: %s", i, mb_strerror(rep.ops[i].status));
	uint32_t live = 0;
	for (uint32_t i = 0; i < rep.ops[3].u.sync_down.n; i++)
		live += !rep.ops[3].u.sync_down.items[i].deleted;
	CHECK(live == rep.ops[4].u.folder.count && live >= inbox_count, "sync saw %u of %u", live,
	      rep.ops[4].u.folder.count);
	uint64_t wm = rep.ops[3].u.sync_down.watermark;
	printf("calendar %u appointments, contacts %u, sync %u items (watermark %llu)\n",
	       rep.ops[0].u.rows.nrows, rep.ops[2].u.rows.nrows, rep.ops[3].u.sync_down.n,
	       (unsigned long long)wm);
	/* upload a read flag, then download only that change */
	struct mb_sync_change ch;
	memset(&ch, 0, sizeof(ch));
	ch.kind = MB_SYNC_SET_FLAGS;
	ch.mid = first_mid;
	ch.flags = MB_MSGFLAG_READ;
	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_SYNC_UPLOAD;
	ops[0].u.sync_up.fid = MB_FID(ma, MB_FID_INBOX);
	ops[0].u.sync_up.n = 1;
	ops[0].u.sync_up.changes = &ch;
	ops[1].code = MB_OP_SYNC_DOWNLOAD;
	ops[1].u.sync_down.fid = MB_FID(ma, MB_FID_INBOX);
	ops[1].u.sync_down.since_cn = wm;
	ops[1].u.sync_down.max = 100;
	rc = mb_client_call(a, ops, 2, &rep);
	CHECK(rc == 0 && rep.ops[0].status == 0 && rep.ops[1].status == 0, "sync up/down");
	CHECK(rep.ops[1].u.sync_down.n == 1 && rep.ops[1].u.sync_down.items[0].mid == first_mid,
	      "incremental sync saw %u changes", rep.ops[1].u.sync_down.n);
	printf("incremental sync: 1 change since the watermark\n");

	memset(ops, 0, sizeof(ops));
	ops[0].code = MB_OP_LOGOFF;
	rc = one(a, ops, &r);
	CHECK(rc == 0, "logoff");
	ops[0].code = MB_OP_OPEN_FOLDER;
	ops[0].u.open_folder.fid = MB_FID(ma, MB_FID_INBOX);
	rc = one(a, ops, &r);
	CHECK(rc == MB_ESTATE, "op after logoff: %s", mb_strerror(rc));
	printf("network: client A sent %llu and received %llu bytes\n",
	       (unsigned long long)mb_client_bytes_sent(a),
	       (unsigned long long)mb_client_bytes_received(a));
	mb_client_destroy(a);
	mb_client_destroy(b);
	printf("smoke: OK\n");
	return 0;
}

static int badpass(const char *user)
{
	struct mb_client *c;
	int rc = mb_client_connect_addr(addr, 10000, &c);
	CHECK(rc == 0, "connect: %s", mb_strerror(rc));
	rc = mb_client_logon(c, user, "not-the-password", 0, NULL);
	CHECK(rc == MB_EAUTH, "wrong password: %s", mb_strerror(rc));
	rc = mb_client_logon(c, "no-such-user", "x", 0, NULL);
	CHECK(rc == MB_EAUTH, "unknown user: %s", mb_strerror(rc));
	mb_client_destroy(c);
	printf("badpass: refused\n");
	return 0;
}

static int garbage(void)
{
	struct mb_client *c;
	struct mb_frame_hdr h;
	const uint8_t *p;
	size_t len;
	int rc = mb_client_connect_addr(addr, 10000, &c);
	CHECK(rc == 0, "connect");
	/* a well-framed request whose payload is nonsense: error, stays open */
	uint8_t f[MB_FRAME_HDR + 6] = {6,
				       0,
				       0,
				       0,
				       MB_PROTO_MAGIC,
				       MB_PROTO_VERSION,
				       MB_FRAME_REQUEST,
				       0,
				       9,
				       0,
				       0,
				       0,
				       6,
				       0,
				       0,
				       0,
				       1,
				       0,
				       0,
				       0,
				       0xEE,
				       0};
	CHECK(mb_client_send_raw(c, f, sizeof(f)) == 0, "send");
	rc = mb_client_recv_frame(c, &h, &p, &len);
	CHECK(rc == 0 && h.kind == MB_FRAME_ERROR && h.seq == 9, "no error frame: %s",
	      mb_strerror(rc));
	/* still usable */
	rc = mb_client_logon(c, mb_topology_user(topo, 0)->name,
			     mb_topology_user(topo, 0)->password, 0, NULL);
	CHECK(rc == 0, "logon after a bad payload: %s", mb_strerror(rc));
	/* an oversize header: error, then the connection is closed */
	uint8_t big[MB_FRAME_HDR] = {0xFF,
				     0xFF,
				     0xFF,
				     0x7F,
				     MB_PROTO_MAGIC,
				     MB_PROTO_VERSION,
				     MB_FRAME_REQUEST,
				     0,
				     1,
				     0,
				     0,
				     0,
				     0xFF,
				     0xFF,
				     0xFF,
				     0x7F};
	CHECK(mb_client_send_raw(c, big, sizeof(big)) == 0, "send");
	rc = mb_client_recv_frame(c, &h, &p, &len);
	CHECK(rc == 0 && h.kind == MB_FRAME_ERROR, "no error for oversize");
	struct mb_frame_error e;
	CHECK(mb_error_decode(p, len, &e) == 0 && e.code == MB_ETOOBIG, "oversize code");
	rc = mb_client_recv_frame(c, &h, &p, &len);
	CHECK(rc == MB_ECLOSED, "connection not closed: %s", mb_strerror(rc));
	mb_client_destroy(c);
	printf("garbage: errors and close as documented\n");
	return 0;
}

static int send_n(int idx, int n)
{
	struct mb_client *a;
	if (connect_as(idx, MB_LOGON_F_LZ77, &a))
		return 1;
	int to = (idx + 1) % mb_topology_user_count(topo);
	struct mb_bytes name = mb_str(mb_topology_user(topo, to)->name);
	for (int i = 0; i < n; i++) {
		struct mb_op ops[3];
		struct mb_reply rep;
		struct mb_prop props[3];
		opbatch_mail_props(props, "ack-log message", "body of an acknowledged message",
				   &name, 1);
		memset(ops, 0, sizeof(ops));
		opbatch_compose(ops, MB_FID(mb_client_mailbox(a), MB_FID_SENT), 1, props, 3,
				MB_OP_SUBMIT);
		int rc = mb_client_call(a, ops, 3, &rep);
		CHECK(rc == 0 && rep.ops[2].status == 0, "submit %d: %s", i, mb_strerror(rc));
		for (uint32_t k = 0; k < rep.ops[2].u.submit.n; k++)
			printf("delivered %u %llu\n", rep.ops[2].u.submit.dl[k].mailbox,
			       (unsigned long long)rep.ops[2].u.submit.dl[k].mid);
		fflush(stdout);
	}
	mb_client_destroy(a);
	return 0;
}

/* A raw TCP connection to addr (IPv4 ADDR:PORT), blocking; -1 on failure. */
static int raw_connect(void)
{
	char host[64];
	const char *colon = strrchr(addr, ':');
	if (!colon || (size_t)(colon - addr) >= sizeof(host))
		return -1;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static void frame_header(uint8_t h[MB_FRAME_HDR], uint32_t len)
{
	memset(h, 0, MB_FRAME_HDR);
	h[0] = (uint8_t)len;
	h[1] = (uint8_t)(len >> 8);
	h[2] = (uint8_t)(len >> 16);
	h[3] = (uint8_t)(len >> 24);
	h[4] = MB_PROTO_MAGIC;
	h[5] = MB_PROTO_VERSION;
	h[6] = MB_FRAME_REQUEST;
	h[8] = 1;
	memcpy(h + 12, h, 4); /* raw_len = len: not compressed */
}

static int deliver(struct mb_client *a, int n, size_t body_len)
{
	int to = 2;
	struct mb_bytes name = mb_str(mb_topology_user(topo, to)->name);
	char *body = malloc(body_len + 1);
	CHECK(body, "out of memory");
	for (size_t i = 0; i < body_len; i++)
		body[i] = (char)('a' + (i * 7 + i / 13) % 26);
	body[body_len] = '\0';
	for (int i = 0; i < n; i++) {
		struct mb_op ops[3];
		struct mb_reply rep;
		struct mb_prop props[3];
		opbatch_mail_props(props, "exhaustion test", body, &name, 1);
		memset(ops, 0, sizeof(ops));
		opbatch_compose(ops, MB_FID(mb_client_mailbox(a), MB_FID_SENT), 1, props, 3,
				MB_OP_SUBMIT);
		int rc = mb_client_call(a, ops, 3, &rep);
		if (rc == 0)
			rc = rep.ops[2].status;
		if (rc) {
			free(body);
			CHECK(rc == 0, "submit %d of %d: %s (%s)", i, n, mb_strerror(rc),
			      mb_errname(rc));
		}
	}
	free(body);
	return 0;
}

/* hold: what N sessions can make the store hold in drafts before it
 * refuses (the store's held-bytes limits, docs/PROTOCOL.md). */
static int hold(int idx, int n, int secs)
{
	enum { VALUE = 1 << 20, DRAFTS = 8, PROPS = 60 };
	struct mb_client **c = calloc((size_t)n, sizeof(*c));
	uint8_t *value = malloc(VALUE);
	CHECK(c && value, "out of memory");
	memset(value, 'h', VALUE);
	long held = 0, refused = 0;
	for (int k = 0; k < n; k++) {
		if (connect_as(idx, 0, &c[k]))
			return 1;
		uint64_t fid = MB_FID(mb_client_mailbox(c[k]), MB_FID_SENT);
		bool full = false;
		for (uint32_t d = 1; d <= DRAFTS && !full; d++) {
			struct mb_op op;
			struct mb_op_reply res;
			memset(&op, 0, sizeof(op));
			op.code = MB_OP_CREATE_MESSAGE;
			op.u.create_message.fid = fid;
			op.u.create_message.handle = d;
			int rc = one(c[k], &op, &res);
			CHECK(rc == 0, "create a draft: %s", mb_strerror(rc));
			for (int p = 0; p < PROPS && !full; p++) {
				struct mb_prop pr;
				memset(&pr, 0, sizeof(pr));
				pr.tag = MB_PTAG(0x8000 + p, MB_PT_BINARY);
				pr.v.b.p = value;
				pr.v.b.len = VALUE;
				memset(&op, 0, sizeof(op));
				op.code = MB_OP_SET_PROPS;
				op.u.set_props.handle = d;
				op.u.set_props.n = 1;
				op.u.set_props.props = &pr;
				rc = one(c[k], &op, &res);
				CHECK(rc == 0 || rc == MB_EFULL, "set a property: %s",
				      mb_strerror(rc));
				if (rc == MB_EFULL) {
					refused++;
					full = true;
				} else {
					held += VALUE >> 20;
				}
			}
		}
		/* refused, yet the session goes on */
		struct mb_op op;
		struct mb_op_reply res;
		memset(&op, 0, sizeof(op));
		op.code = MB_OP_OPEN_FOLDER;
		op.u.open_folder.fid = MB_FID(mb_client_mailbox(c[k]), MB_FID_INBOX);
		int rc = one(c[k], &op, &res);
		CHECK(rc == 0, "open the Inbox after a refusal: %s", mb_strerror(rc));
	}
	printf("held %ld MiB in %d sessions, %ld refused\n", held, n, refused);
	sleep((unsigned)secs);
	for (int k = 0; k < n; k++)
		mb_client_destroy(c[k]);
	free(c);
	free(value);
	return 0;
}

/* fill: what a client can add before the free-space reserve refuses it,
 * and what still works then (docs/PROTOCOL.md, limits). */
static int fill(int idx, long max_mib)
{
	enum { BODY = 1 << 20, MAXMSG = 1 << 16 };
	struct mb_client *c;
	if (connect_as(idx, 0, &c))
		return 1;
	uint64_t inbox = MB_FID(mb_client_mailbox(c), MB_FID_INBOX);
	char *body = malloc(BODY + 1);
	uint64_t *mids = malloc(MAXMSG * sizeof(*mids));
	CHECK(body && mids, "out of memory");
	uint64_t x = 88172645463325252ull; /* xorshift: letters a compressor cannot fold */
	for (size_t i = 0; i < BODY; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		body[i] = (char)('a' + x % 26);
	}
	body[BODY] = '\0';
	long n = 0;
	int rc = 0;
	while (n < max_mib && n < MAXMSG) {
		struct mb_op ops[3];
		struct mb_reply rep;
		struct mb_prop props[3];
		body[0] = (char)('a' + n % 26);
		opbatch_mail_props(props, "fill", body, NULL, 0);
		memset(ops, 0, sizeof(ops));
		opbatch_compose(ops, inbox, 1, props, 2, MB_OP_SAVE_CHANGES);
		rc = mb_client_call(c, ops, 3, &rep);
		CHECK(rc == 0, "save %ld: %s", n, mb_strerror(rc));
		rc = rep.ops[2].status;
		if (rc)
			break;
		mids[n++] = rep.ops[2].u.saved.mid;
	}
	printf("filled %ld MiB in %ld saves\n", n, n);
	if (rc) {
		CHECK(rc == MB_ELOWDISK, "save %ld refused with %s, not MB_ELOWDISK", n,
		      mb_errname(rc));
		printf("refused (%s) after %ld MiB\n", mb_errname(rc), n);
		/* a flag change of a stored message goes on */
		CHECK(n > 0, "nothing saved before the refusal");
		struct mb_op ops[3];
		struct mb_reply rep;
		struct mb_prop flag;
		memset(&flag, 0, sizeof(flag));
		flag.tag = MB_PR_MESSAGE_FLAGS;
		flag.v.i = MB_MSGFLAG_READ;
		memset(ops, 0, sizeof(ops));
		ops[0].code = MB_OP_OPEN_MESSAGE;
		ops[0].u.open_message.fid = inbox;
		ops[0].u.open_message.mid = mids[0];
		ops[0].u.open_message.handle = 2;
		ops[1].code = MB_OP_SET_PROPS;
		ops[1].u.set_props.handle = 2;
		ops[1].u.set_props.n = 1;
		ops[1].u.set_props.props = &flag;
		ops[2].code = MB_OP_SAVE_CHANGES;
		ops[2].u.save.handle = 2;
		rc = mb_client_call(c, ops, 3, &rep);
		CHECK(rc == 0 && rep.ops[0].status == 0 && rep.ops[1].status == 0 &&
			  rep.ops[2].status == 0,
		      "flag change under the reserve: %s, open %s, set %s, save %s",
		      mb_strerror(rc), mb_errname(rep.ops[0].status), mb_errname(rep.ops[1].status),
		      mb_errname(rep.ops[2].status));
		/* a submission is new content */
		struct mb_bytes to = mb_str(mb_topology_user(topo, idx)->name);
		struct mb_prop sp[3];
		opbatch_mail_props(sp, "refused", "a short note", &to, 1);
		memset(ops, 0, sizeof(ops));
		opbatch_compose(ops, MB_FID(mb_client_mailbox(c), MB_FID_SENT), 3, sp, 3,
				MB_OP_SUBMIT);
		rc = mb_client_call(c, ops, 3, &rep);
		CHECK(rc == 0 && rep.ops[2].status == MB_ELOWDISK,
		      "submit under the reserve: %s %s", mb_strerror(rc),
		      mb_errname(rep.ops[2].status));
		printf("under the reserve: flag change ok, submit refused\n");
	}
	/* and what was saved can be deleted, in one operation (freed pages
	 * are listed, not dirtied: it fits in a small cache) */
	struct mb_op op = opbatch_op(MB_OP_DELETE_MESSAGES);
	struct mb_op_reply res;
	op.u.del.fid = inbox;
	op.u.del.n = (uint32_t)n;
	op.u.del.mids = mids;
	rc = n ? one(c, &op, &res) : 0;
	CHECK(rc == 0, "delete what was saved: %s", mb_errname(rc));
	printf("deleted %ld\n", n);
	mb_client_destroy(c);
	free(body);
	free(mids);
	return 0;
}

/* Hold n idle connections (more than the store's cap) while a logged-on
 * client keeps delivering; then close them and log on anew. */
static int exhaust(int idx, int n)
{
	struct mb_client *a, *b;
	if (connect_as(idx, 0, &a))
		return 1;
	int *fds = malloc((size_t)n * sizeof(int)), held = 0;
	CHECK(fds, "out of memory");
	for (int i = 0; i < n; i++) {
		int fd = raw_connect();
		if (fd < 0)
			break; /* the listen backlog is full: the store is paused */
		fds[held++] = fd;
	}
	printf("exhaust: %d idle connections open\n", held);
	CHECK(held > 0, "no idle connection");
	sleep(1);
	/* 40 messages of 96 KB: several MiB of log, so new segments are opened */
	int rc = deliver(a, 40, 96 << 10);
	for (int i = 0; i < held; i++)
		close(fds[i]);
	free(fds);
	if (rc) {
		mb_client_destroy(a);
		return 1;
	}
	printf("exhaust: 40 deliveries while the descriptors ran out\n");
	/* accepting resumes: a new client logs on and delivers */
	if (connect_as((idx + 1) % mb_topology_user_count(topo), 0, &b)) {
		mb_client_destroy(a);
		return 1;
	}
	rc = deliver(b, 5, 1 << 10) || deliver(a, 5, 1 << 10);
	mb_client_destroy(b);
	mb_client_destroy(a);
	CHECK(rc == 0, "deliveries after the idle connections closed");
	printf("exhaust: new logon and deliveries after the idle connections closed\n");
	return 0;
}

/* n connections that never log on, each announcing a frame of `bytes`
 * and sending its body without blocking until the store stops taking it
 * (or all of it is sent); then everything is closed. */
static int flood(int n, uint32_t bytes)
{
	int *fds = calloc((size_t)n, sizeof(int));
	size_t *sent = calloc((size_t)n, sizeof(size_t));
	static uint8_t chunk[64 << 10];
	CHECK(fds && sent, "out of memory");
	memset(chunk, 'x', sizeof(chunk));
	int open_n = 0;
	for (int i = 0; i < n; i++) {
		fds[i] = raw_connect();
		if (fds[i] < 0)
			continue;
		open_n++;
		uint8_t h[MB_FRAME_HDR];
		frame_header(h, bytes);
		if (write(fds[i], h, sizeof(h)) != (ssize_t)sizeof(h)) {
			close(fds[i]);
			fds[i] = -1;
			continue;
		}
		fcntl(fds[i], F_SETFL, fcntl(fds[i], F_GETFL) | O_NONBLOCK);
	}
	/* push bodies until no connection makes progress for a second */
	time_t idle_since = time(NULL);
	uint64_t total = 0;
	while (time(NULL) - idle_since < 2) {
		bool progress = false;
		for (int i = 0; i < n; i++) {
			if (fds[i] < 0 || sent[i] >= bytes)
				continue;
			size_t k =
			    bytes - sent[i] < sizeof(chunk) ? bytes - sent[i] : sizeof(chunk);
			ssize_t w = write(fds[i], chunk, k);
			if (w > 0) {
				sent[i] += (size_t)w;
				total += (uint64_t)w;
				progress = true;
			} else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
		if (progress)
			idle_since = time(NULL);
		else
			usleep(20000);
	}
	int closed = 0;
	for (int i = 0; i < n; i++) {
		if (fds[i] < 0) {
			closed++;
			continue;
		}
		char buf[256];
		struct pollfd pf = {fds[i], POLLIN, 0};
		if (poll(&pf, 1, 0) > 0 && read(fds[i], buf, sizeof(buf)) >= 0)
			closed++; /* an error frame or EOF: refused */
	}
	printf("flood: %d connections opened, %llu body bytes taken, %d refused\n", open_n,
	       (unsigned long long)total, closed);
	fflush(stdout);
	/* keep them open a moment so the store's peak is measured with them */
	sleep(1);
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(sent);
	return 0;
}

/* Slowloris: one byte every 0.2 s, before logon or (mode "frame") inside
 * a frame after logon; the store must close the connection within s. */
static int slowloris(const char *mode, int s)
{
	int fd = -1;
	struct mb_client *c = NULL;
	uint8_t h[MB_FRAME_HDR];
	frame_header(h, 64);
	if (!strcmp(mode, "frame")) {
		if (connect_as(0, 0, &c))
			return 1;
		fd = mb_client_fd(c);
	} else {
		fd = raw_connect();
	}
	CHECK(fd >= 0, "connect");
	time_t t0 = time(NULL);
	size_t i = 0;
	bool closed = false;
	while (time(NULL) - t0 <= s) {
		uint8_t b = i < sizeof(h) ? h[i] : 0;
		if (send(fd, &b, 1, MSG_NOSIGNAL) != 1) {
			closed = true;
			break;
		}
		i++;
		struct pollfd pf = {fd, POLLIN, 0};
		if (poll(&pf, 1, 200) > 0) {
			char buf[512];
			ssize_t r = read(fd, buf, sizeof(buf));
			(void)r; /* an error frame, or EOF: closed either way */
			closed = true;
			break;
		}
	}
	printf("slowloris %s: %s after %ld s and %zu bytes\n", mode,
	       closed ? "closed by the store" : "still open", (long)(time(NULL) - t0), i);
	if (c)
		mb_client_destroy(c);
	else
		close(fd);
	CHECK(closed, "a slow client held its connection for %d s", s);
	return 0;
}

static int probe(const char *data, const char *file)
{
	struct mb_store_probe *p;
	char err[1024], line[256];
	int n = 0, missing = 0;
	int rc = mb_store_probe_open(data, &p, err, sizeof(err));
	CHECK(rc == 0, "probe open: %s", err);
	FILE *f = fopen(file, "r");
	CHECK(f, "cannot read %s", file);
	while (fgets(line, sizeof(line), f)) {
		unsigned mbx;
		unsigned long long mid;
		bool exists = false;
		if (sscanf(line, "delivered %u %llu", &mbx, &mid) != 2)
			continue;
		n++;
		if (mb_store_probe_exists(p, mbx, mid, &exists) || !exists) {
			printf("missing: mailbox %u message %llu\n", mbx, mid);
			missing++;
		}
	}
	fclose(f);
	mb_store_probe_close(p);
	printf("probe: %d acknowledged deliveries, %d missing\n", n, missing);
	CHECK(missing == 0 && n > 0, "acknowledged deliveries lost");
	return 0;
}

int main(int argc, char **argv)
{
	char path[4200], err[1024];
	setvbuf(stdout, NULL, _IOLBF, 0); /* keep output if a sanitizer aborts */
	signal(SIGPIPE, SIG_IGN);	  /* a store that closes is an error, not a kill */
	if (argc < 4) {
		fprintf(stderr, "usage: mb-client ADDR:PORT DATA smoke|logon USER|badpass USER|"
				"garbage|send USER N\n");
		return 2;
	}
	addr = argv[1];
	if (!strcmp(argv[3], "probe") && argc > 4)
		return probe(argv[2], argv[4]) ? 1 : 0;
	snprintf(path, sizeof(path), "%s/topology.json", argv[2]);
	if (mb_topology_read(path, &topo, err, sizeof(err))) {
		fprintf(stderr, "mb-client: %s\n", err);
		return 2;
	}
	const char *cmd = argv[3];
	int rc = 2, idx = 0;
	if (argc > 4 && strcmp(cmd, "flood") && strcmp(cmd, "slowloris") &&
	    mb_topology_find_user(topo, argv[4], strlen(argv[4]), &idx)) {
		fprintf(stderr, "mb-client: no user %s\n", argv[4]);
		return 2;
	}
	if (!strcmp(cmd, "smoke")) {
		rc = smoke();
	} else if (!strcmp(cmd, "logon") && argc > 4) {
		struct mb_client *c;
		rc = connect_as(idx, 0, &c);
		if (!rc) {
			printf("logon %s: mailbox %u\n", argv[4], mb_client_mailbox(c));
			mb_client_destroy(c);
		}
	} else if (!strcmp(cmd, "badpass") && argc > 4) {
		rc = badpass(argv[4]);
	} else if (!strcmp(cmd, "garbage")) {
		rc = garbage();
	} else if (!strcmp(cmd, "send") && argc > 5) {
		rc = send_n(idx, atoi(argv[5]));
	} else if (!strcmp(cmd, "hold") && argc > 6) {
		rc = hold(idx, atoi(argv[5]), atoi(argv[6]));
	} else if (!strcmp(cmd, "fill") && argc > 5) {
		rc = fill(idx, atol(argv[5]));
	} else if (!strcmp(cmd, "exhaust") && argc > 5) {
		rc = exhaust(idx, atoi(argv[5]));
	} else if (!strcmp(argv[3], "flood") && argc > 5) {
		rc = flood(atoi(argv[4]), (uint32_t)strtoul(argv[5], NULL, 10));
	} else if (!strcmp(argv[3], "slowloris") && argc > 5) {
		rc = slowloris(argv[4], atoi(argv[5]));
	}
	mb_topology_destroy(topo);
	return rc ? 1 : 0;
}
