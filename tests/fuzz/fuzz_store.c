/* fuzz_store.c: libFuzzer harness of the store's operations, what a
 * logged-on client can make the store do.  fuzz_frame covers the bytes up
 * to a decoded request; this covers what comes after: every request the
 * input decodes to (frames, as a client sends them; seeds in corpus/req-*)
 * is sent by a client logged on to a real store (the real `init` of 4
 * users, the real server in a thread of this process, on loopback), with
 * whatever handles, folder and message ids, other mailboxes' ids (a
 * folder id of mailbox 0 is made one of the user's own: own()), counts,
 * properties and sync states the fuzzer makes of it.  Each must get a
 * reply (each operation's status) or an ERROR frame, or have its
 * connection closed (after either, and after a request with a logon or
 * logoff in it, the harness connects and logs on again); a
 * request that is not answered in 10 s is a hang and aborts, a crash or a
 * sanitizer report of the store's threads ends the run as any.
 * The store's state lives on between inputs (its mailbox grows as the
 * fuzzer writes), so a reproducer is the sequence, not one input: run.sh
 * keeps the log.  Files: a directory under $TMPDIR, removed at exit.
 * Seeds: corpus/req-* are single operations with handle 0 (made for the
 * decoder); with MB_FUZZ_SEEDS=DIR the harness also writes into DIR, before
 * the fuzzing starts, the batches a client sends (a view of the Inbox, a
 * sort, a read with its body stream, a save, a submit to another user, an
 * attachment, a move and a delete, a sync download and an upload
 * context), so that the fuzzer starts from requests the store carries out.
 * Build and run: tests/fuzz/run.sh SECONDS '' fuzz_store. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/opbatch.h"
#include "tests/unit/storetest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static struct storetest T;
static struct mb_client *C;
static struct mb_buf *scratch;
static struct mb_arena *arena;

static void stop(void) { storetest_stop(&T); }

/* A folder id names its mailbox (proto.h): a mailbox part of 0 (as in the
 * seeds) is made the logged-on user's own, and a local number of 0 in it
 * its Inbox, so that requests reach its folders whatever mailbox id init
 * gave it; the others go as they are (another user's mailbox, or none;
 * a folder that is not there), for the store to refuse. */
static void own(uint64_t *fid)
{
	if (MB_FID_MAILBOX(*fid) == 0)
		*fid = MB_FID(mb_client_mailbox(C),
			      MB_FID_LOCAL(*fid) ? MB_FID_LOCAL(*fid) : MB_FID_INBOX);
}

static void own_fids(struct mb_op *o)
{
	switch (o->code) {
	case MB_OP_OPEN_FOLDER:
		own(&o->u.open_folder.fid);
		break;
	case MB_OP_GET_HIERARCHY_TABLE:
	case MB_OP_GET_CONTENTS_TABLE:
	case MB_OP_REGISTER_NOTIFY:
		own(&o->u.get_table.fid);
		break;
	case MB_OP_OPEN_MESSAGE:
		own(&o->u.open_message.fid);
		break;
	case MB_OP_CREATE_MESSAGE:
		own(&o->u.create_message.fid);
		break;
	case MB_OP_DELETE_MESSAGES:
		own(&o->u.del.fid);
		break;
	case MB_OP_MOVE_COPY:
		own(&o->u.move_copy.src_fid);
		own(&o->u.move_copy.dst_fid);
		break;
	case MB_OP_SYNC_DOWNLOAD:
		own(&o->u.sync_down.fid);
		break;
	case MB_OP_SYNC_CONFIGURE:
	case MB_OP_SYNC_OPEN_COLLECTOR:
		own(&o->u.sync_cfg.fid);
		break;
	case MB_OP_SYNC_UPLOAD:
		own(&o->u.sync_up.fid);
		break;
	default:
		break;
	}
}

static void setup(void)
{
	/* the store's files are private to their user; init prints progress */
	if (!freopen("/dev/null", "w", stdout) || storetest_start(&T, 4))
		abort();
	atexit(stop);
	if (mb_buf_create(0, &scratch) || mb_arena_create(8u << 20, &arena))
		abort();
}

static void logon(void)
{
	if (C)
		mb_client_destroy(C);
	C = storetest_client(&T, 0, 0);
	if (!C)
		abort(); /* the store no longer takes a logon: it is gone or hung */
}

/* Write the request ops[0..n) as a frame to DIR/NAME. */
static void seed(const char *dir, const char *name, const struct mb_op *ops, uint16_t n)
{
	struct mb_request rq = {.seq = 1, .nops = n, .ops = (struct mb_op *)ops};
	struct mb_buf *out, *tmp;
	char path[1024];
	if (mb_buf_create(0, &out) || mb_buf_create(0, &tmp) ||
	    mb_request_encode(out, tmp, &rq, NULL, NULL))
		abort();
	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(mb_buf_data(out), 1, mb_buf_len(out), f) != mb_buf_len(out) || fclose(f))
		abort();
	mb_buf_destroy(out);
	mb_buf_destroy(tmp);
}

/* The batches of a client, on folders of mailbox 0 (own()). */
static void write_seeds(const char *dir)
{
	struct mb_op o[8];
	uint32_t cols[] = {MB_PR_SUBJECT, MB_PR_MESSAGE_FLAGS, MB_PR_MESSAGE_SIZE, MB_PR_HASATTACH};
	const uint64_t inbox = MB_FID(0, MB_FID_INBOX), sent = MB_FID(0, MB_FID_SENT);
	struct mb_bytes to = {.p = (const uint8_t *)mb_topology_user(T.topo, 1)->name,
			      .len = (uint32_t)strlen(mb_topology_user(T.topo, 1)->name)};
	struct mb_prop props[3];
	opbatch_mail_props(props, "fuzz", "a body", &to, 1);
	uint16_t n;

	memset(o, 0, sizeof(o));
	n = opbatch_browse(o, inbox, 1, cols, 4, 0, 25);
	seed(dir, "view", o, n);

	memset(o, 0, sizeof(o));
	o[0].code = MB_OP_SORT_TABLE;
	o[0].u.sort_table.handle = 1;
	o[0].u.sort_table.n = 1;
	o[0].u.sort_table.keys[0].tag = MB_PR_DELIVERY_TIME;
	o[0].u.sort_table.keys[0].order = MB_SORT_DESC;
	o[1].code = MB_OP_QUERY_ROWS;
	o[1].u.query_rows.handle = 1;
	o[1].u.query_rows.max_rows = 25;
	seed(dir, "sort", o, 2);

	memset(o, 0, sizeof(o));
	n = opbatch_read(o, inbox, 1, 2, cols, 4);
	o[n++] = opbatch_open_stream(2, MB_PR_BODY, 3);
	o[n++] = opbatch_read_stream(3, 28672);
	o[n].code = MB_OP_GET_ATTACH_TABLE;
	o[n].u.attach.msg = 2;
	o[n++].u.attach.handle = 4;
	seed(dir, "read", o, n);

	memset(o, 0, sizeof(o));
	n = opbatch_compose(o, sent, 5, props, 2, MB_OP_SAVE_CHANGES);
	seed(dir, "save", o, n);

	memset(o, 0, sizeof(o));
	n = opbatch_compose(o, sent, 6, props, 3, MB_OP_SUBMIT);
	seed(dir, "submit", o, n);

	memset(o, 0, sizeof(o));
	struct mb_prop ap[2] = {mb_prop_str(MB_PR_ATTACH_FILENAME, "a.txt"),
				mb_prop_str(MB_PR_ATTACH_DATA_BIN, "attached")};
	o[0].code = MB_OP_CREATE_MESSAGE;
	o[0].u.create_message.fid = sent;
	o[0].u.create_message.handle = 7;
	o[1].code = MB_OP_CREATE_ATTACH;
	o[1].u.attach.msg = 7;
	o[1].u.attach.handle = 8;
	o[2].code = MB_OP_SET_PROPS;
	o[2].u.set_props.handle = 8;
	o[2].u.set_props.n = 2;
	o[2].u.set_props.props = ap;
	o[3].code = MB_OP_SAVE_ATTACH;
	o[3].u.save.handle = 8;
	o[4].code = MB_OP_SAVE_CHANGES;
	o[4].u.save.handle = 7;
	seed(dir, "attach", o, 5);

	uint64_t mid = 1;
	memset(o, 0, sizeof(o));
	o[0].code = MB_OP_MOVE_COPY;
	o[0].u.move_copy.src_fid = inbox;
	o[0].u.move_copy.dst_fid = MB_FID(0, MB_FID_DELETED);
	o[0].u.move_copy.n = 1;
	o[0].u.move_copy.mids = &mid;
	o[1].code = MB_OP_DELETE_MESSAGES;
	o[1].u.del.fid = MB_FID(0, MB_FID_DELETED);
	o[1].u.del.n = 1;
	o[1].u.del.mids = &mid;
	seed(dir, "move-delete", o, 2);

	memset(o, 0, sizeof(o));
	o[0].code = MB_OP_SYNC_CONFIGURE;
	o[0].u.sync_cfg.fid = inbox;
	o[0].u.sync_cfg.handle = 9;
	o[1].code = MB_OP_SYNC_DOWNLOAD;
	o[1].u.sync_down.handle = 9;
	o[1].u.sync_down.max = 50;
	o[2].code = MB_OP_SYNC_OPEN_COLLECTOR;
	o[2].u.sync_cfg.fid = sent;
	o[2].u.sync_cfg.handle = 10;
	o[3] = opbatch_release(9);
	seed(dir, "sync", o, 4);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setup();
	const char *dir = getenv("MB_FUZZ_SEEDS");
	if (dir && *dir)
		write_seeds(dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!C)
		logon();
	size_t off = 0;
	while (off < size) {
		struct mb_frame_hdr h;
		size_t total;
		if (mb_frame_check(data + off, size - off, 1u << 20, &h, &total))
			break;
		const uint8_t *p;
		size_t len;
		struct mb_request rq;
		mb_arena_reset(arena);
		if (mb_frame_payload(&h, data + off, scratch, &p, &len) == 0 &&
		    mb_request_decode(p, len, h.seq, arena, &rq) == 0 && rq.nops > 0) {
			struct mb_reply rep;
			for (uint16_t i = 0; i < rq.nops; i++)
				own_fids(&rq.ops[i]);
			int rc = mb_client_call(C, rq.ops, rq.nops, &rep);
			if (rc == MB_ETIMEDOUT) {
				fprintf(stderr,
					"fuzz_store: a request of %u ops was not answered\n",
					(unsigned)rq.nops);
				abort();
			}
			if (rc == 0 && rep.nops > rq.nops)
				abort(); /* more answers than operations */
			/* after an ERROR frame or a closed connection, and after a
			 * request that logged off or on again (as whom it
			 * may), the next one starts from a fresh logon */
			int again = rc != 0;
			for (uint16_t i = 0; i < rq.nops; i++)
				again |= rq.ops[i].code == MB_OP_LOGON ||
					 rq.ops[i].code == MB_OP_LOGOFF ||
					 rq.ops[i].code == MB_OP_LOGON_CHALLENGE;
			if (again)
				logon();
		}
		off += total;
	}
	return 0;
}
