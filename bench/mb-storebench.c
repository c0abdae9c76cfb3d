/* mb-storebench.c: load driver of bench/store-ops.sh.
 *
 * Opens N connections to a running store (libuv, one thread), logs each on
 * as a different user of DATA/topology.json, measures the store's resident
 * memory per idle connection (/proc/PID/status before and after), then runs
 * the scenario-1 action mix (actions per 8-hour day from the scenario:
 * send mail, process inbox, browse mail, free/busy, request meeting, make
 * appointment, browse calendar), each action a fixed sequence of request
 * batches modelled on Outlook online, started as a Poisson process at
 * RATE actions/s over random idle connections (RATE 0: every connection
 * busy all the time, for the maximum).  Reports RPCs, operations, bytes,
 * latency and the store's CPU seconds (/proc/PID/stat, all threads) over
 * the measured window, as one JSON line on stdout.
 *
 * usage: mb-storebench ADDR:PORT DATA STORE_PID CONNS RATE SECONDS [lz4 0|1]
 * RATE: actions/s, 0 for the maximum, or uN for the rate of N users.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "core/content.h"
#include "core/error.h"
#include "core/hist.h"
#include "core/sampler.h"
#include "core/scenario.h"
#include "core/topology.h"
#include "proto/proto.h"
#include "tests/opbatch.h"

enum act { A_SEND, A_PROCESS, A_BROWSE, A_FREEBUSY, A_MEETING, A_APPT, A_CALENDAR, A_COUNT };
static const char *act_names[A_COUNT] = {"send mail",       "process inbox", "browse mail",
					 "check free/busy", "request meeting", "make appointment",
					 "browse calendar"};

struct cl {
	uv_tcp_t tcp;
	uv_connect_t creq;
	int idx;                 /* user index */
	uint32_t mailbox;
	int state;               /* 0 connecting, 1 challenge, 2 logon, 3 idle, 4 busy */
	struct mb_buf *rx;
	uint32_t seq;
	bool lz4;
	uint32_t zmin;
	int act, step;
	uint64_t mids[4];
	int nmids;
	uint64_t t_send;
};

static uv_loop_t *loop;
static struct mb_topology *topo;
static struct cl *cls;
static int nconn, logged_on, store_pid;
static double rate, seconds;
static bool want_lz4 = true, measuring, running = true;
static uint64_t rpcs, ops, errors, bytes_out, bytes_in, actions;
static uint64_t act_count[A_COUNT];
static struct mb_hist *rtt;
static struct mb_buf *enc, *tmpb, *zb;
static struct mb_arena *arena;
static double weights[A_COUNT], wsum;
static int *idle_list, nidle;
static char *body_pool;
static size_t body_pool_len;
static int64_t now_wall_ms;

static double proc_cpu_s(int pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	unsigned long ut = 0, st = 0;
	/* fields after ")": state(3) ... utime(14) stime(15) */
	int field = 2;
	for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
		field++;
		if (field == 14)
			ut = strtoul(tok, NULL, 10);
		if (field == 15) {
			st = strtoul(tok, NULL, 10);
			break;
		}
	}
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static long proc_rss_kb(int pid)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}
static double urand(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

struct wr {
	uv_write_t w;
	uint8_t data[];
};

static void on_write(uv_write_t *w, int status)
{
	(void)status;
	free(w);
}

static void send_ops(struct cl *c, struct mb_op *o, uint16_t n)
{
	struct mb_request rq = {++c->seq, n, o};
	struct mb_codec_opts opts = {c->lz4, c->zmin, 0};
	size_t wire;
	mb_buf_reset(enc);
	if (mb_request_encode(enc, tmpb, &rq, &opts, &wire)) {
		fprintf(stderr, "encode failed\n");
		exit(3);
	}
	struct wr *w = malloc(sizeof(*w) + wire);
	memcpy(w->data, mb_buf_data(enc), wire);
	uv_buf_t b = uv_buf_init((char *)w->data, (unsigned)wire);
	c->t_send = mb_now_ns();
	if (measuring)
		bytes_out += wire;
	uv_write(&w->w, (uv_stream_t *)&c->tcp, &b, 1, on_write);
}

static void go_idle(struct cl *c)
{
	c->state = 3;
	idle_list[nidle++] = (int)(c - cls);
}

static struct mb_bytes rcpt_names[8];

/* Send the next batch of c's action, or finish it (returns false). */
static bool action_step(struct cl *c, const struct mb_reply *prev)
{
	struct mb_op o[4];
	memset(o, 0, sizeof(o));
	uint32_t m = c->mailbox;
	static uint32_t cols[] = {MB_PR_MID, MB_PR_SUBJECT, MB_PR_SENDER_NAME, MB_PR_DELIVERY_TIME,
				  MB_PR_MESSAGE_SIZE, MB_PR_MESSAGE_FLAGS};
	static uint32_t read_tags[] = {MB_PR_SUBJECT, MB_PR_BODY, MB_PR_DISPLAY_TO};
	static struct mb_prop props[8];
	int s = c->step++;
	int nusers = mb_topology_user_count(topo);

	/* remember message ids from the last QueryRows/CalendarRange */
	if (prev) {
		for (uint16_t i = 0; i < prev->nops; i++) {
			const struct mb_op_reply *r = &prev->ops[i];
			if (r->status == 0 && (r->code == MB_OP_QUERY_ROWS || r->code == MB_OP_CALENDAR_RANGE)) {
				c->nmids = 0;
				for (uint32_t k = 0; k < r->u.rows.nrows && c->nmids < 4; k++)
					c->mids[c->nmids++] = (uint64_t)r->u.rows.vals[k * r->u.rows.ncols].v.i;
			}
		}
	}
	switch (c->act) {
	case A_SEND:
	case A_MEETING: {
		if (s > 0)
			return false;
		int n = c->act == A_SEND ? 1 + (int)(rnd() % 3) : 3;
		for (int i = 0; i < n; i++)
			rcpt_names[i] = mb_str(mb_topology_user(topo, (int)(rnd() % (uint64_t)nusers))->name);
		if (c->act == A_SEND && rnd() % 10 == 0) {
			/* now and then to a distribution list */
			rcpt_names[n++] = mb_str(mb_topology_list(topo, (int)(rnd() % (uint64_t)mb_topology_list_count(topo)))->name);
		}
		/* bodies as the scenario says: 75 KB average, log-normal spread */
		size_t blen = mb_content_size(rnd(), (size_t)mb_topology_info(topo)->avg_message_kb * 1024);
		if (blen > body_pool_len / 2)
			blen = body_pool_len / 2;
		size_t off = rnd() % (body_pool_len - blen);
		uint16_t np = 0;
		props[np++] = mb_prop_str(MB_PR_SUBJECT, c->act == A_SEND ? "status report" : "meeting request");
		props[np++] = mb_prop_bytes(MB_PR_BODY, body_pool + off, (uint32_t)blen);
		memset(&props[np], 0, sizeof(props[np]));
		props[np].tag = MB_PR_RECIPIENTS;
		props[np].v.mv.n = (uint16_t)n;
		props[np++].v.mv.v = rcpt_names;
		if (c->act == A_MEETING) {
			props[np++] = mb_prop_i64(MB_PR_START_DATE, now_wall_ms + 86400000);
			props[np++] = mb_prop_i64(MB_PR_END_DATE, now_wall_ms + 86400000 + 3600000);
			props[np++] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Schedule.Meeting.Request");
		}
		send_ops(c, o, opbatch_compose(o, MB_FID(m, MB_FID_SENT), 5, props, np, MB_OP_SUBMIT));
		return true;
	}
	case A_APPT:
		if (s > 0)
			return false;
		props[0] = mb_prop_str(MB_PR_SUBJECT, "appointment");
		props[1] = mb_prop_i64(MB_PR_START_DATE, now_wall_ms + (int64_t)(rnd() % 14) * 86400000);
		props[2] = mb_prop_i64(MB_PR_END_DATE, props[1].v.i + 1800000);
		props[3] = mb_prop_i64(MB_PR_BUSY_STATUS, 2);
		props[4] = mb_prop_str(MB_PR_MESSAGE_CLASS, "IPM.Appointment");
		opbatch_compose(o, MB_FID(m, MB_FID_CALENDAR), 6, props, 5, MB_OP_SAVE_CHANGES);
		o[3].code = MB_OP_RELEASE;
		o[3].u.release.handle = 6;
		send_ops(c, o, 4);
		return true;
	case A_FREEBUSY:
		if (s > 0)
			return false;
		o[0].code = MB_OP_FREEBUSY;
		o[0].u.freebusy.user = mb_str(mb_topology_user(topo, (int)(rnd() % (uint64_t)nusers))->name);
		o[0].u.freebusy.start = now_wall_ms;
		o[0].u.freebusy.end = now_wall_ms + 7 * 86400000LL;
		send_ops(c, o, 1);
		return true;
	case A_CALENDAR:
		if (s == 0) {
			o[0].code = MB_OP_CALENDAR_RANGE;
			o[0].u.calendar.start = now_wall_ms - 7 * 86400000LL;
			o[0].u.calendar.end = now_wall_ms + 7 * 86400000LL;
			o[0].u.calendar.max_rows = 50;
			send_ops(c, o, 1);
			return true;
		}
		if (s == 1 && c->nmids > 0) {
			send_ops(c, o,
				 opbatch_read(o, MB_FID(m, MB_FID_CALENDAR), c->mids[0], 2, read_tags, 2));
			return true;
		}
		return false;
	case A_BROWSE:
	case A_PROCESS:
		if (s == 0) {
			send_ops(c, o,
				 opbatch_browse(o, MB_FID(m, MB_FID_INBOX), 1, cols, 6, MB_QR_F_RESTART, 20));
			return true;
		}
		if (s == 1 || s == 2) {
			if (c->nmids < s)
				return false;
			send_ops(c, o,
				 opbatch_read(o, MB_FID(m, MB_FID_INBOX), c->mids[s - 1], 2, read_tags, 3));
			return true;
		}
		if (s == 3 && c->act == A_BROWSE) {
			o[0].code = MB_OP_GET_HIERARCHY_TABLE;
			o[0].u.get_table.fid = MB_FID(m, MB_FID_ROOT);
			o[0].u.get_table.handle = 3;
			o[1].code = MB_OP_QUERY_ROWS;
			o[1].u.query_rows.handle = 3;
			o[1].u.query_rows.max_rows = 50;
			send_ops(c, o, 2);
			return true;
		}
		if (s == 3 && c->act == A_PROCESS && c->nmids >= 2) {
			/* file the newest in Deleted Items, delete the next */
			o[0].code = MB_OP_MOVE_COPY;
			o[0].u.move_copy.src_fid = MB_FID(m, MB_FID_INBOX);
			o[0].u.move_copy.dst_fid = MB_FID(m, MB_FID_DELETED);
			o[0].u.move_copy.n = 1;
			o[0].u.move_copy.mids = &c->mids[0];
			o[1].code = MB_OP_DELETE_MESSAGES;
			o[1].u.del.fid = MB_FID(m, MB_FID_INBOX);
			o[1].u.del.n = 1;
			o[1].u.del.mids = &c->mids[1];
			send_ops(c, o, 2);
			return true;
		}
		return false;
	}
	return false;
}

static void start_action(struct cl *c)
{
	double x = urand() * wsum;
	int a = 0;
	while (a < A_COUNT - 1 && x >= weights[a]) {
		x -= weights[a];
		a++;
	}
	c->act = a;
	c->step = 0;
	c->nmids = 0;
	c->state = 4;
	if (!action_step(c, NULL)) {
		go_idle(c);
		return;
	}
}

static void logon_step(struct cl *c, const struct mb_reply *rep);

static void on_frame(struct cl *c, const struct mb_frame_hdr *h, const uint8_t *p, size_t len)
{
	struct mb_reply rep;
	if (h->kind == MB_FRAME_NOTIFY)
		return;
	if (h->kind != MB_FRAME_REPLY) {
		errors++;
		fprintf(stderr, "error frame on connection %d\n", c->idx);
		exit(3);
	}
	mb_arena_reset(arena);
	if (mb_reply_decode(p, len, h->seq, arena, &rep)) {
		fprintf(stderr, "bad reply\n");
		exit(3);
	}
	if (c->state < 3) {
		logon_step(c, &rep);
		return;
	}
	if (measuring) {
		rpcs++;
		ops += rep.nops;
		mb_hist_record(rtt, mb_now_ns() - c->t_send);
		for (uint16_t i = 0; i < rep.nops; i++) {
			if (rep.ops[i].status) {
				errors++;
				if (errors <= 10)
					fprintf(stderr, "op %s of action %s failed: %s\n",
						mb_op_name(rep.ops[i].code), act_names[c->act],
						mb_strerror(rep.ops[i].status));
			}
		}
	}
	if (!action_step(c, &rep)) {
		if (measuring) {
			actions++;
			act_count[c->act]++;
		}
		if (rate > 0 || !running)
			go_idle(c);
		else
			start_action(c);
	}
}

static void on_alloc(uv_handle_t *h, size_t sug, uv_buf_t *b)
{
	struct cl *c = h->data;
	uint8_t *p;
	(void)sug;
	mb_buf_reserve(c->rx, 65536, &p);
	b->base = (char *)p;
	b->len = 65536;
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
	struct cl *c = s->data;
	(void)b;
	if (n < 0) {
		fprintf(stderr, "connection %d closed: %s\n", c->idx, uv_strerror((int)n));
		exit(3);
	}
	mb_buf_commit(c->rx, (size_t)n);
	if (measuring)
		bytes_in += (uint64_t)n;
	for (;;) {
		struct mb_frame_hdr h;
		size_t total;
		int rc = mb_frame_check(mb_buf_data(c->rx), mb_buf_len(c->rx), 0, &h, &total);
		if (rc == MB_EAGAIN)
			break;
		if (rc) {
			fprintf(stderr, "bad frame\n");
			exit(3);
		}
		const uint8_t *p;
		size_t len;
		if (mb_frame_payload(&h, mb_buf_data(c->rx), zb, &p, &len)) {
			fprintf(stderr, "bad payload\n");
			exit(3);
		}
		on_frame(c, &h, p, len);
		mb_buf_consume(c->rx, total);
	}
	if (mb_buf_len(c->rx) == 0)
		mb_buf_shrink(c->rx, 0);
}

static void logon_step(struct cl *c, const struct mb_reply *rep)
{
	const struct mb_topo_user *u = mb_topology_user(topo, c->idx);
	struct mb_op o;
	memset(&o, 0, sizeof(o));
	if (c->state == 0) {
		o.code = MB_OP_LOGON_CHALLENGE;
		o.u.challenge.user = mb_str(u->name);
		c->state = 1;
		send_ops(c, &o, 1);
		return;
	}
	if (rep->nops != 1 || rep->ops[0].status) {
		fprintf(stderr, "logon of %s failed: %s\n", u->name, mb_strerror(rep->ops[0].status));
		exit(3);
	}
	if (c->state == 1) {
		o.code = MB_OP_LOGON;
		o.u.logon.user = mb_str(u->name);
		o.u.logon.flags = want_lz4 ? MB_LOGON_F_LZ4 : 0;
		/* the topology's derived key: no PBKDF2 per connection here */
		mb_auth_proof(u->key, rep->ops[0].u.challenge.nonce, u->name, strlen(u->name),
			      o.u.logon.proof);
		c->state = 2;
		send_ops(c, &o, 1);
		return;
	}
	c->mailbox = rep->ops[0].u.logon.mailbox;
	c->lz4 = (rep->ops[0].u.logon.flags & MB_LOGON_F_LZ4) != 0;
	c->zmin = rep->ops[0].u.logon.compress_min;
	logged_on++;
	go_idle(c);
}

static void on_connect(uv_connect_t *r, int status)
{
	struct cl *c = r->data;
	if (status < 0) {
		fprintf(stderr, "connect: %s\n", uv_strerror(status));
		exit(3);
	}
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
	logon_step(c, NULL);
}

static double next_arrival;
static double t_start;

static void on_tick(uv_timer_t *t)
{
	double now = mb_now_s() - t_start;
	(void)t;
	if (!running)
		return;
	if (rate > 0) {
		while (next_arrival <= now) {
			next_arrival += -log(1.0 - urand()) / rate;
			if (nidle == 0)
				continue; /* every connection busy: the action is skipped */
			int k = (int)(rnd() % (uint64_t)nidle);
			int ci = idle_list[k];
			idle_list[k] = idle_list[--nidle];
			start_action(&cls[ci]);
		}
	}
}

static void on_stop(uv_timer_t *t)
{
	(void)t;
	running = false;
	uv_stop(loop);
}

static void run_for(double secs)
{
	uv_timer_t stop;
	uv_timer_init(loop, &stop);
	uv_timer_start(&stop, on_stop, (uint64_t)(secs * 1000), 0);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&stop, NULL);
	uv_run(loop, UV_RUN_NOWAIT);
}

int main(int argc, char **argv)
{
	char path[4200], err[1024];
	if (argc < 7) {
		fprintf(stderr, "usage: mb-storebench ADDR:PORT DATA STORE_PID CONNS RATE SECONDS [lz4]\n");
		return 2;
	}
	const char *addr = argv[1];
	store_pid = atoi(argv[3]);
	nconn = atoi(argv[4]);
	/* RATE: actions per second, or uN: the action rate of N scenario users
	 * (their actions per 8-hour day / 28,800 s) */
	const char *rate_arg = argv[5];
	seconds = atof(argv[6]);
	if (argc > 7)
		want_lz4 = atoi(argv[7]) != 0;
	snprintf(path, sizeof(path), "%s/topology.json", argv[2]);
	if (mb_topology_read(path, &topo, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (nconn > mb_topology_user_count(topo))
		nconn = mb_topology_user_count(topo);
	struct mb_scenario sc;
	struct mb_cfg_error ce;
	if (mb_scenario_load(mb_topology_info(topo)->scenario, &sc, &ce)) {
		fprintf(stderr, "scenario %s: %s\n", mb_topology_info(topo)->scenario, ce.message);
		return 2;
	}
	weights[A_SEND] = sc.actions_per_day[MB_A_SEND_MAIL];
	weights[A_PROCESS] = sc.actions_per_day[MB_A_PROCESS_INBOX];
	weights[A_BROWSE] = sc.actions_per_day[MB_A_BROWSE_MAIL];
	weights[A_FREEBUSY] = sc.actions_per_day[MB_A_CHECK_FREEBUSY];
	weights[A_MEETING] = sc.actions_per_day[MB_A_REQUEST_MEETING];
	weights[A_APPT] = sc.actions_per_day[MB_A_MAKE_APPOINTMENT];
	weights[A_CALENDAR] = sc.actions_per_day[MB_A_BROWSE_CALENDAR];
	for (int i = 0; i < A_COUNT; i++)
		wsum += weights[i];
	if (rate_arg[0] == 'u')
		rate = atof(rate_arg + 1) * wsum / 28800.0;
	else
		rate = atof(rate_arg);
	body_pool_len = 4u << 20;
	body_pool = malloc(body_pool_len);
	mb_content_fill(12345, body_pool, body_pool_len);
	now_wall_ms = (int64_t)time(NULL) * 1000;
	mb_hist_create(&rtt);
	mb_buf_create(1 << 16, &enc);
	mb_buf_create(1 << 16, &tmpb);
	mb_buf_create(0, &zb);
	mb_arena_create(64u << 20, &arena);

	char host[256];
	const char *colon = strrchr(addr, ':');
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = 0;
	struct sockaddr_in sa;
	uv_ip4_addr(host, atoi(colon + 1), &sa);
	loop = uv_default_loop();
	cls = calloc((size_t)nconn, sizeof(*cls));
	idle_list = calloc((size_t)nconn, sizeof(int));

	long rss0 = proc_rss_kb(store_pid);
	double cpu0 = proc_cpu_s(store_pid);
	/* log on in small waves, so that the store's transient memory stays
	 * small and the RSS difference is what idle connections keep */
	double tl = mb_now_s();
	for (int i = 0; i < nconn; i++) {
		struct cl *c = &cls[i];
		c->idx = i;
		mb_buf_create(0, &c->rx);
		uv_tcp_init(loop, &c->tcp);
		c->tcp.data = c;
		c->creq.data = c;
		uv_tcp_connect(&c->creq, &c->tcp, (struct sockaddr *)&sa, on_connect);
		while (i + 1 - logged_on >= 20 && mb_now_s() - tl < 120)
			uv_run(loop, UV_RUN_ONCE);
	}
	while (logged_on < nconn && mb_now_s() - tl < 120)
		uv_run(loop, UV_RUN_ONCE);
	if (logged_on < nconn) {
		fprintf(stderr, "only %d of %d logged on\n", logged_on, nconn);
		return 3;
	}
	double logon_s = mb_now_s() - tl;
	double logon_cpu = proc_cpu_s(store_pid) - cpu0;
	usleep(300000);
	long rss1 = proc_rss_kb(store_pid);

	/* warm-up, then the measured window */
	uv_timer_t tick;
	uv_timer_init(loop, &tick);
	uv_timer_start(&tick, on_tick, 1, 1);
	t_start = mb_now_s();
	next_arrival = 0;
	if (rate <= 0) {
		while (nidle) {
			int ci = idle_list[--nidle];
			start_action(&cls[ci]);
		}
	}
	run_for(2.0);
	running = true;
	measuring = true;
	double c0 = proc_cpu_s(store_pid), w0 = mb_now_s();
	run_for(seconds);
	double c1 = proc_cpu_s(store_pid), w1 = mb_now_s();
	measuring = false;
	/* drain: let in-flight actions finish, then measure idle memory again */
	running = false;
	uv_timer_stop(&tick);
	double td = mb_now_s();
	while (nidle < nconn && mb_now_s() - td < 30)
		uv_run(loop, UV_RUN_ONCE);
	usleep(300000);
	long rss2 = proc_rss_kb(store_pid);

	double wall = w1 - w0, cpu = c1 - c0;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	printf("{\"connections\":%d,\"rate\":%.1f,\"seconds\":%.2f,\"lz4\":%d,"
	       "\"rpcs\":%llu,\"ops\":%llu,\"actions\":%llu,\"actions_per_s\":%.2f,\"errors\":%llu,"
	       "\"rpcs_per_s\":%.1f,\"ops_per_s\":%.1f,"
	       "\"store_cpu_s\":%.3f,\"store_cpu_pct\":%.2f,\"cpu_us_per_op\":%.1f,\"cpu_us_per_action\":%.1f,"
	       "\"cpu_us_per_rpc\":%.1f,\"bytes_per_op\":%.1f,\"net_kbit_s\":%.1f,"
	       "\"rtt_mean_ms\":%.3f,\"rtt_p95_ms\":%.3f,\"rtt_p99_ms\":%.3f,"
	       "\"rss_before_kb\":%ld,\"rss_logged_on_kb\":%ld,\"rss_after_load_kb\":%ld,"
	       "\"bytes_per_idle_conn\":%.0f,\"bytes_per_used_idle_conn\":%.0f,"
	       "\"logon_s\":%.2f,\"logon_cpu_ms_per_conn\":%.3f,\"online_cpus\":%d,\"mix\":{",
	       nconn, rate, wall, want_lz4 ? 1 : 0, (unsigned long long)rpcs,
	       (unsigned long long)ops, (unsigned long long)actions, actions / wall,
	       (unsigned long long)errors,
	       rpcs / wall, ops / wall, cpu, 100.0 * cpu / wall / ncpu, ops ? 1e6 * cpu / ops : 0,
	       actions ? 1e6 * cpu / actions : 0,
	       rpcs ? 1e6 * cpu / rpcs : 0, ops ? (double)(bytes_in + bytes_out) / ops : 0,
	       (double)(bytes_in + bytes_out) * 8 / 1000 / wall, mb_hist_mean_ns(rtt) / 1e6,
	       mb_hist_percentile_ns(rtt, 95) / 1e6, mb_hist_percentile_ns(rtt, 99) / 1e6, rss0,
	       rss1, rss2, (double)(rss1 - rss0) * 1024 / nconn,
	       (double)(rss2 - rss0) * 1024 / nconn, logon_s, 1000 * logon_cpu / nconn, ncpu);
	for (int i = 0; i < A_COUNT; i++)
		printf("%s\"%s\":%llu", i ? "," : "", act_names[i], (unsigned long long)act_count[i]);
	printf("}}\n");
	return errors ? 1 : 0;
}
