/* test_sequences.c: Outlook's operation sequences per action, through the
 * behaviour model (src/load/behave.c) and the mbstore driver
 * (src/load/drivers/mbstore.c) against a real store (storetest.h), with
 * the load engine running one action at a time for its users:
 *  - per action, the RPC requests and operations it sent (the engine's
 *    per-task counts) fall within the bounds of the sequence documented
 *    in docs/workload.md (printed as a table: the numbers of that page);
 *  - online: new mail and forwards resolve their recipients (ResolveNames),
 *    reads stream the body (OpenStream, ReadStream), views register for
 *    notifications, the send mix's attachments go out with the mail
 *    (CreateAttachment, SaveChangesAttachment);
 *  - online: pushed new-mail notifications are fetched, one request each
 *    (the Inbox view's new rows);
 *  - cached: no name resolution and no reads over the wire (the offline
 *    address book and the local copy serve them), a sent message goes up
 *    twice (submitted, then as a new Sent Items item), the uploads go
 *    into one ICS upload context per folder and upload pass, each pass
 *    ended with its checkpoints (SyncGetTransferState), and the sync
 *    downloads new items as streams; the first logon's download brings headers only
 *    and is counted once per user.
 *  - with every attachment opened, attachments stream in pieces;
 * Counts only (no times): the per-action figures are means over the
 * actions that completed; an action cut by the stop adds at most a few
 * operations, within the bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <uv.h>

#include "core/scenario.h"
#include "load/behave.h"
#include "load/engine.h"
#include "load/loadstats.h"
#include "proto/proto.h"
#include "storetest.h"

#define NUSERS 6

static struct storetest T;

static int setup(void **state)
{
	(void)state;
	return storetest_start(&T, NUSERS);
}

static int teardown(void **state)
{
	(void)state;
	storetest_stop(&T);
	return 0;
}

struct measured {
	double done;
	double cut;		/* queued or running at the stop: a running one's requests
				 * are in the counts, so "per action done" may be high */
	double rpcs, ops;	/* per action done */
	double op[MB_OP_COUNT]; /* per action done, by op (mixed with the tasks' ops) */
	double sync_ops;    /* the sync's operations, in all (online: the notification fetches) */
	double sync_rpcs;   /* its requests, in all */
	double first_syncs; /* cached: users whose first download is done */
	double fetches;	    /* online: notification fetches done */
	double notifications;
	uint64_t failed;
};

/* Run action a alone (12 per user-day; no action when a < 0) for
 * `seconds` in mode `scenario`; the engine's counts per action and per op
 * (in all when a < 0). */
static void run_action_pct(const char *scenario, int a, double seconds, double attach_pct,
			   struct measured *m)
{
	struct mb_cfg_error err;
	static struct mb_scenario sc;
	assert_int_equal(mb_scenario_load(scenario, &sc, &err), 0);
	if (attach_pct >= 0)
		sc.open_attachment_pct = attach_pct;
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		sc.actions_per_day[i] = 0;
	if (a >= 0)
		sc.actions_per_day[a] = 12;
	struct mb_target_cfg cfg;
	mb_target_cfg_default(&cfg);
	char addr[64];
	snprintf(addr, sizeof(addr), "mbstore:127.0.0.1:%d", T.port);
	assert_int_equal(mb_target_cfg_parse(&cfg, addr), 0);
	/* 12 per 8-hour day x 2,400: an action per user about every second */
	struct mb_engine_opts o = {.sc = &sc,
				   .topo = T.topo,
				   .target = &cfg,
				   .users = NUSERS,
				   .accel = 2400,
				   .ramp_s = 0,
				   .threads = 1,
				   .seed = 11,
				   .ack_fd = -1,
				   .compression = true,
				   .notify = true};
	struct mb_engine *e;
	struct mb_load_stats *st;
	assert_int_equal(mb_load_stats_create(&st), 0);
	assert_int_equal(mb_engine_create(&o, &e), 0);
	assert_int_equal(mb_engine_start(e), 0);
	uv_sleep((unsigned)(seconds * 1000));
	mb_engine_stop(e);
	mb_engine_collect(e, st);
	memset(m, 0, sizeof(*m));
	double d = 1;
	if (a >= 0) {
		m->done = (double)st->done[a];
		m->cut = (double)st->cut[a];
		m->failed = st->failed[a];
		d = m->done > 0 ? m->done : 1;
		m->rpcs = (double)st->task_rpcs[a] / d;
		m->ops = (double)st->task_ops[a] / d;
	}
	for (int i = 0; i < MB_OP_COUNT && i < st->nops; i++)
		m->op[i] = (double)st->op_count[i] / d;
	m->sync_ops = (double)st->task_ops[MB_TASK_SYNC];
	m->sync_rpcs = (double)st->task_rpcs[MB_TASK_SYNC];
	m->fetches = (double)st->n.notify_fetches;
	m->notifications = (double)st->n.notifications;
	m->first_syncs = (double)st->n.first_syncs;
	if (m->fetches > 0)
		print_message("%-8s notification fetch      done %4.0f  requests/fetch  %5.1f  "
			      "operations/fetch  %5.1f  (notifications %.0f)\n",
			      scenario, m->fetches, m->sync_rpcs / m->fetches,
			      m->sync_ops / m->fetches, m->notifications);
	print_message("%-8s %-22s done %4.0f  requests/action %5.1f  operations/action %5.1f\n",
		      scenario, a >= 0 ? mb_actions[a].key : "(no action)", m->done, m->rpcs,
		      m->ops);
	/* operations by name per action done (the logons' and syncs' too) */
	char line[1024];
	size_t n = 0;
	line[0] = 0;
	for (int i = 0; i < MB_OP_COUNT && i < st->nops && n < sizeof(line) - 64; i++)
		if (st->op_count[i])
			n += (size_t)snprintf(line + n, sizeof(line) - n, " %s %.1f",
					      st->op_names[i], m->op[i]);
	print_message("    ops:%s\n", line);
	mb_engine_destroy(e);
	mb_load_stats_destroy(st);
}

/* The same, longer while fewer than 3 actions completed (with no action:
 * while not every user's first download is done) on a slow machine or
 * under valgrind: up to about 40 s. */
static void run_enough(const char *scenario, int a, double seconds, double attach_pct,
		       struct measured *m)
{
	for (;;) {
		run_action_pct(scenario, a, seconds, attach_pct, m);
		if ((a >= 0 ? m->done >= 3 : m->first_syncs >= NUSERS) || seconds > 20)
			return;
		seconds *= 2;
	}
}

#define OP(m, id) ((m)->op[MB_OPI_##id])

/* Whether a count per action done, v, can be in (lo, hi): the actions cut
 * at the stop sent some of their requests, so the exact figure per action
 * lies between v x done / (done + cut) and v (a slow machine, valgrind,
 * cuts more of them). */
static bool per_action(const struct measured *m, double v, double lo, double hi)
{
	double low = v * m->done / (m->done + m->cut);
	if (v <= lo || low >= hi)
		print_message("per action %.2f (%.2f with the %.0f cut): not in (%.2f, %.2f)\n", v,
			      low, m->cut, lo, hi);
	return v > lo && low < hi;
}

static void test_online(void **state)
{
	(void)state;
	struct measured m;
	double verbs;

	run_enough("online", MB_A_SEND_MAIL, 2.5, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	/* ResolveNames, then CreateMessage, SetProperties, [attachments],
	 * SubmitMessage: 2 requests, 4 operations or more */
	assert_true(per_action(&m, m.rpcs, 1.9, 2.2));
	assert_true(m.ops >= 4 && m.ops < 8);
	assert_true(per_action(&m, OP(&m, RESOLVE_NAMES), 0.9, 1.2));
	assert_true(per_action(&m, OP(&m, SUBMIT), 0.9, 1.2));
	/* the mail others sent: each new-mail notification fetched (one
	 * request: QueryRows of the Inbox view's new rows, the view opened
	 * by the first fetch: GetContentsTable, SetColumns, SortTable);
	 * notifications
	 * that come while the user is busy share a fetch */
	assert_true(m.notifications > 0);
	assert_true(m.fetches > 0 && m.fetches <= m.notifications);
	/* (a fetch counts when its reply is in, its request when sent: at
	 * the stop each user may have one in flight) */
	assert_true(m.sync_rpcs >= m.fetches && m.sync_rpcs <= m.fetches + NUSERS);
	assert_true(m.sync_ops >= m.fetches && m.sync_ops <= 4 * m.fetches + 2);

	run_enough("online", MB_A_PROCESS_INBOX, 3, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	/* the view (7 ops: OpenFolder x2, GetContentsTable, SetColumns,
	 * SortTable, QueryRows, RegisterNotification), the reads (6+ each),
	 * replies, the dispose; every contents table sorted, received newest
	 * first, as Outlook's view */
	assert_true(m.ops >= 7);
	assert_true(OP(&m, REGISTER_NOTIFY) >= 1);
	assert_true(OP(&m, GET_CONTENTS_TABLE) >= 1);
	assert_true(OP(&m, SORT_TABLE) == OP(&m, GET_CONTENTS_TABLE));
	/* each read opens an unread message and marks it read (OpenMessage,
	 * GetPropertiesSpecific, ..., SaveChangesMessage, one request); each
	 * reply or forward opens its original and, once its submission is
	 * acknowledged, saves the verb on it in a second request
	 * (PidTagLastVerbExecuted, its time, PidTagIconIndex): at most one
	 * verb per submission, and most submissions have theirs (a reply
	 * with no original, or cut at the stop between its two requests,
	 * has none).  Counts per action: compared with a margin. */
	assert_true(OP(&m, SUBMIT) > 0);
	assert_true(OP(&m, OPEN_MESSAGE) > OP(&m, GET_PROPS) + OP(&m, SUBMIT) - 1e-9);
	verbs = OP(&m, SAVE_CHANGES) - OP(&m, GET_PROPS);
	assert_true(verbs > 0.5 * OP(&m, SUBMIT) && verbs < OP(&m, SUBMIT) + 1e-9);

	run_enough("online", MB_A_BROWSE_MAIL, 2.5, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	/* per folder: the view (6 ops + RegisterNotification), reads of
	 * OpenMessage, GetPropertiesSpecific, OpenStream, ReadStream,
	 * released later; the view's release */
	assert_true(m.ops > 10 && m.ops < 120);
	assert_true(OP(&m, SORT_TABLE) >= 1);
	assert_true(OP(&m, SORT_TABLE) == OP(&m, GET_CONTENTS_TABLE));
	assert_true(OP(&m, OPEN_STREAM) >= 1);
	assert_true(OP(&m, READ_STREAM) >= OP(&m, OPEN_STREAM));
	assert_true(OP(&m, OPEN_MESSAGE) >= 1);
	assert_true(OP(&m, REGISTER_NOTIFY) >= 1);
	assert_true(OP(&m, RESOLVE_NAMES) == 0);

	/* every reader opens an attachment: OpenAttachment and its stream in
	 * ReadStream pieces of at most 32 KB (the initialised mix's
	 * attachments are larger) */
	run_enough("online", MB_A_BROWSE_MAIL, 2.5, 100, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	assert_true(OP(&m, OPEN_ATTACH) > 0);
	assert_true(OP(&m, READ_STREAM) > OP(&m, OPEN_STREAM));

	run_enough("online", MB_A_REQUEST_MEETING, 2.5, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	/* ResolveNames, FreeBusy per attendee, the appointment (Create, Set,
	 * Save, Release), the request (Create, Set, Submit) */
	assert_true(per_action(&m, m.rpcs, 3.9, 4.2));
	assert_true(per_action(&m, OP(&m, RESOLVE_NAMES), 0.9, 1.2));
	assert_true(OP(&m, FREEBUSY) >= 1);

	run_enough("online", MB_A_BROWSE_CALENDAR, 2.5, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	assert_true(OP(&m, CALENDAR_RANGE) > 0.9 && OP(&m, CALENDAR_RANGE) < 1.2);
}

static void test_cached(void **state)
{
	(void)state;
	struct measured m;
	double verbs;

	run_enough("cached", MB_A_SEND_MAIL, 2.5, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	/* the offline address book resolves names: one request, Create,
	 * SetProperties, [attachments], Submit; then the local Sent Items
	 * copy uploaded again as a new item (a server below version 8:
	 * MS-OXCFXICS 3.3.4.3.3.2.1.2) in an ICS upload of Sent Items
	 * (3.3.4.3.3): SyncOpenCollector, the three state properties
	 * (Begin, Continue, End each), Create, SetProperties,
	 * [attachments], SaveChanges, Release; the upload pass ends 15
	 * simulated s later in a request of the sync task:
	 * SyncGetTransferState, FastTransferGetBuffer, Release x 2 */
	assert_true(per_action(&m, m.rpcs, 0.9, 1.2));
	assert_true(OP(&m, RESOLVE_NAMES) == 0);
	assert_true(per_action(&m, OP(&m, SUBMIT), 0.9, 1.2));
	assert_true(per_action(&m, OP(&m, CREATE_MESSAGE), 1.9, 2.3));
	assert_true(per_action(&m, OP(&m, SAVE_CHANGES), 0.9, 1.2));
	assert_true(per_action(&m, OP(&m, SYNC_OPEN_COLLECTOR), 0.9, 1.2));
	assert_true(OP(&m, SYNC_GET_STATE) >= OP(&m, SYNC_OPEN_COLLECTOR) - NUSERS);
	assert_true(m.ops >= 19 && m.ops < 30);
	/* the sync downloads the mail others sent, whole: each new item's
	 * body and attachments in its download context's FastTransfer
	 * stream (FastTransferGetBuffer rounds beyond the checkpoints'
	 * one each), no message or stream opened for it */
	assert_true(m.sync_ops > 0);
	assert_true(OP(&m, FT_GET_BUFFER) > OP(&m, SYNC_GET_STATE));
	assert_true(OP(&m, OPEN_MESSAGE) == 0);
	assert_true(OP(&m, OPEN_STREAM) == 0);
	assert_true(OP(&m, READ_STREAM) == 0);

	run_enough("cached", MB_A_PROCESS_INBOX, 3, -1, &m);
	assert_true(m.done >= 3);
	assert_int_equal(m.failed, 0);
	/* views and reads are local: nothing but the uploads of the
	 * changes, replies and disposal */
	assert_true(OP(&m, GET_CONTENTS_TABLE) == 0);
	assert_true(OP(&m, SORT_TABLE) == 0);
	assert_true(OP(&m, RESOLVE_NAMES) == 0);
	/* one upload context per folder and upload pass, not per upload:
	 * the replies' second uploads (Sent Items) and the read flags
	 * (Inbox) within one pass share theirs */
	assert_true(per_action(&m, OP(&m, SYNC_OPEN_COLLECTOR), 0.9, 3.1));
	assert_true(OP(&m, SYNC_OPEN_COLLECTOR) < OP(&m, SUBMIT));
	assert_true(OP(&m, SYNC_GET_STATE) >= OP(&m, SYNC_OPEN_COLLECTOR) - NUSERS);
	/* each reply or forward: its Sent Items copy saved with the
	 * submission, then the local original's verb uploaded (OpenMessage
	 * for the import of an existing message, SetProperties,
	 * SaveChangesMessage, Release), as online at most one per submission */
	assert_true(OP(&m, SUBMIT) > 0);
	verbs = OP(&m, SAVE_CHANGES) - OP(&m, SUBMIT);
	assert_true(verbs > 0.5 * OP(&m, SUBMIT) && verbs < OP(&m, SUBMIT) + 1e-9);
	assert_true(m.ops < 90);
}

/* Cached mode's first logon downloads the headers of every folder (the
 * replica stands for an OST primed at initialisation: replica.h), and the
 * periodic hierarchy syncs after it find nothing changed: no message and
 * no stream is opened when no action runs, and every user's first
 * download is counted once, when it is done (the measured window of a
 * cached run starts after it). */
static void test_cached_first_download(void **state)
{
	(void)state;
	struct measured m;
	/* 3 s at x2,400: two hours of the day, twelve periodic syncs */
	run_enough("cached", -1, 3, -1, &m);
	assert_true(m.first_syncs == NUSERS);
	assert_true(OP(&m, SYNC_DOWNLOAD) >= NUSERS * 5); /* Inbox .. Contacts at least */
	assert_true(OP(&m, OPEN_MESSAGE) == 0);
	assert_true(OP(&m, READ_STREAM) == 0);
	/* and no content stream: nothing comes whole */
	assert_true(OP(&m, FT_GET_BUFFER) == OP(&m, SYNC_GET_STATE));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_online),
	    cmocka_unit_test(test_cached),
	    cmocka_unit_test(test_cached_first_download),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
