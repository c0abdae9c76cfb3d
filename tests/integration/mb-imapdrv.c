/* mb-imapdrv.c: drives the imap target driver (src/load/drivers/imap.c)
 * against a real server, one simulated user, step by step, with the
 * engine's services to drivers (target.h) provided here over blocking
 * sockets: the same ops table the load engine calls, without the engine's
 * scheduler.  Used by tests/integration/imap_driver.sh with the lab.
 *
 *   mb-imapdrv ACCOUNTS IMAPADDR SMTPADDR USERINDEX ACKLOG online|cached
 *
 * Runs the steps of every supported action (logon, listings, read and
 * mark read, send with a list recipient, a reply (its original then
 * flagged \Answered), appointments and contacts,
 * move, delete, keepalive, logoff; in cached mode a full sync first and
 * local listings after), prints one line per step and per operation name
 * (count, mean round trip), exits 0 when every step did what it should.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sampler.h"
#include "core/topology.h"
#include "load/loadstats.h"
#include "load/target.h"

extern const struct mb_target_ops mb_target_imap;
static const struct mb_target_ops *ops = &mb_target_imap;

static struct mb_target_cfg cfg;
static struct mb_target_env env;
static struct mb_topology *acc;
static FILE *ackf;
static int fds[2] = {-1, -1};
static char rbuf[2][1 << 22];
static size_t rlen[2];
static int done, woke, lost, loggedoff;
static struct mb_step_result last;
static uint64_t ids_copy[256];
static uint32_t flags_copy[256];
static double t_req[2];
static int op_out[2];
static uint64_t op_n[64];
static double op_s[64];

static int dial(const char *addr)
{
	char host[256];
	const char *c = strrchr(addr, ':');
	if (!c)
		return -1;
	snprintf(host, sizeof(host), "%.*s", (int)(c - addr), addr);
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)atoi(c + 1));
	inet_pton(AF_INET, host, &sa.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* ---- the engine's services (target.h) ---- */

int mb_target_write(struct mb_tuser *u, int conn, const void *p, size_t len)
{
	(void)u;
	const char *b = p;
	while (len) {
		ssize_t n = send(fds[conn], b, len, MSG_NOSIGNAL);
		if (n <= 0)
			return MB_ECLOSED;
		b += n;
		len -= (size_t)n;
	}
	return 0;
}

int mb_target_connect(struct mb_tuser *u, int conn)
{
	fds[conn] = dial(cfg.address[conn]);
	rlen[conn] = 0;
	if (fds[conn] >= 0)
		u->conn_open |= (uint16_t)(1u << conn);
	ops->connected(u, conn, fds[conn] >= 0 ? 0 : MB_ECLOSED);
	return 0;
}

/* plain connections only here (TLS is the engine's: tests/integration/lab_tls.sh) */
int mb_target_tls_mode(const struct mb_tuser *u, int conn)
{
	(void)u;
	(void)conn;
	return MB_TLS_NONE;
}

int mb_target_starttls(struct mb_tuser *u, int conn)
{
	(void)u;
	(void)conn;
	return MB_EUNSUPPORTED;
}

void mb_target_close(struct mb_tuser *u, int conn)
{
	if (fds[conn] >= 0)
		close(fds[conn]);
	fds[conn] = -1;
	u->conn_open &= (uint16_t) ~(1u << conn);
	ops->disconnected(u, conn);
}

void mb_target_request(struct mb_tuser *u, int conn, int op, int nops)
{
	(void)u;
	(void)nops;
	t_req[conn] = mb_now_s();
	op_out[conn] = op;
}

void mb_target_count_op(struct mb_tuser *u, int op)
{
	(void)u;
	op_n[op]++;
}

void mb_target_reply(struct mb_tuser *u, int conn)
{
	(void)u;
	op_n[op_out[conn]]++;
	op_s[op_out[conn]] += mb_now_s() - t_req[conn];
}

void mb_target_step_done(struct mb_tuser *u, const struct mb_step_result *res)
{
	(void)u;
	last = *res;
	for (int i = 0; i < res->n && i < 256; i++) {
		ids_copy[i] = res->ids[i];
		flags_copy[i] = res->flags ? res->flags[i] : 0;
	}
	last.ids = ids_copy;
	last.flags = flags_copy;
	done = 1;
}

void mb_target_wake(struct mb_tuser *u)
{
	(void)u;
	woke++;
}

void mb_target_lost(struct mb_tuser *u)
{
	(void)u;
	lost = 1;
}

void mb_target_logged_off(struct mb_tuser *u)
{
	(void)u;
	loggedoff = 1;
}

void mb_target_ack(struct mb_tuser *u, char kind, uint32_t mailbox, const uint64_t *ids, int n)
{
	(void)u;
	for (int i = 0; i < n; i++)
		fprintf(ackf, "%c %u %llu\n", kind, mailbox, (unsigned long long)ids[i]);
	fflush(ackf);
}

int32_t mb_target_find_user(const struct mb_tuser *u, const char *name, size_t len)
{
	(void)u;
	int idx;
	return mb_topology_find_user(acc, name, len, &idx) ? -1 : idx;
}

const struct mb_topo_user *mb_target_account(const struct mb_tuser *u)
{
	return mb_topology_user(acc, (int)u->idx);
}

/* ---- a loop for one step ---- */

static int pump(struct mb_tuser *u, double secs)
{
	double until = mb_now_s() + secs;
	while (!done && !lost && mb_now_s() < until) {
		struct pollfd pf[2];
		int n = 0, map[2];
		for (int c = 0; c < 2; c++)
			if (fds[c] >= 0) {
				pf[n].fd = fds[c];
				pf[n].events = POLLIN;
				map[n++] = c;
			}
		if (poll(pf, (nfds_t)n, 100) <= 0)
			continue;
		for (int k = 0; k < n; k++) {
			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int c = map[k];
			ssize_t r = recv(fds[c], rbuf[c] + rlen[c], sizeof(rbuf[c]) - rlen[c], 0);
			if (r <= 0) {
				if (c == 0)
					return MB_ECLOSED;
				mb_target_close(u, c);
				continue;
			}
			rlen[c] += (size_t)r;
			for (;;) {
				long fl = ops->frame(u, c, (const uint8_t *)rbuf[c], rlen[c]);
				if (fl < 0)
					return (int)fl;
				if (fl == 0)
					break;
				int rc =
				    ops->on_message(u, c, (const uint8_t *)rbuf[c], (size_t)fl);
				memmove(rbuf[c], rbuf[c] + fl, rlen[c] - (size_t)fl);
				rlen[c] -= (size_t)fl;
				if (rc < 0)
					return rc;
				if (fds[c] < 0)
					break;
			}
		}
	}
	return lost ? MB_EPROTO : done ? 0 : MB_ETIMEDOUT;
}

/* A SEND step to users to[0..n) (no list), body seed and size. */
static void send_step(struct mb_step *s, uint32_t *to, int n, uint32_t seed, uint32_t size)
{
	memset(s, 0, sizeof(*s));
	s->kind = MB_STEP_SEND;
	s->users = to;
	s->nusers = n;
	s->seed = seed;
	s->size = size;
}

static int run_step(struct mb_tuser *u, struct mb_step *s, const char *what)
{
	struct mb_step_result res;
	memset(&res, 0, sizeof(res));
	memset(&last, 0, sizeof(last));
	done = 0;
	double t0 = mb_now_s();
	int rc = ops->step(u, s, &res);
	if (rc == 0) {
		last = res;
		for (int i = 0; i < res.n && i < 256; i++) {
			ids_copy[i] = res.ids[i];
			flags_copy[i] = res.flags ? res.flags[i] : 0;
		}
		last.ids = ids_copy;
		last.flags = flags_copy;
	} else if (rc == 1) {
		rc = pump(u, 15);
		if (!rc)
			rc = last.status;
	}
	printf("step %-20s %s rows %d count %u count2 %u local %d (%.1f ms)\n", what,
	       rc ? mb_errname(rc) : "ok", last.n, last.count, last.count2, (int)last.local,
	       (mb_now_s() - t0) * 1000);
	fflush(stdout);
	return rc;
}

int main(int argc, char **argv)
{
	char err[512];
	if (argc < 7) {
		fprintf(stderr, "usage: mb-imapdrv ACCOUNTS IMAPADDR SMTPADDR USERINDEX ACKLOG "
				"online|cached\n");
		return 2;
	}
	if (mb_topology_read(argv[1], &acc, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	snprintf(cfg.driver, sizeof(cfg.driver), "imap");
	snprintf(cfg.address[0], sizeof(cfg.address[0]), "%s", argv[2]);
	snprintf(cfg.address[1], sizeof(cfg.address[1]), "%s", argv[3]);
	ackf = fopen(argv[5], "a");
	if (!ackf)
		return 2;
	int cached = !strcmp(argv[6], "cached");
	env.cfg = &cfg;
	env.accounts = acc;
	env.nusers = mb_topology_user_count(acc);
	env.nlists = mb_topology_list_count(acc);
	env.cached = cached;
	env.avg_body = 4096;
	struct mb_load_stats *st = calloc(1, sizeof(*st));
	struct mb_tuser u;
	memset(&u, 0, sizeof(u));
	u.idx = (uint32_t)atoi(argv[4]);
	u.rng = 0x1234567 + u.idx;
	u.env = &env;
	u.st = st;
	u.priv = calloc(1, ops->user_size);
	if (!st || !u.priv || ops->user_init(&u))
		return 3;
	int bad = 0;
	struct mb_step s;

	mb_target_connect(&u, 0);
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_LOGON;
	if (run_step(&u, &s, "logon") || last.count < 1) {
		fprintf(stderr, "logon failed or no user folders\n");
		return 1;
	}
	if (cached) {
		memset(&s, 0, sizeof(s));
		s.kind = MB_STEP_SYNC;
		bad |= !ops->sync_due(&u, false);
		bad |= run_step(&u, &s, "sync (full)") != 0;
		bad |= ops->sync_due(&u, false); /* nothing dirty right after */
		ops->tick(&u);
		bad |= !ops->sync_due(&u, false); /* the timer marks the inbox */
		bad |= run_step(&u, &s, "sync (incremental)") != 0;
	}
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_LIST_FOLDER;
	s.folder = MB_FOLDER_INBOX;
	s.max_rows = 20;
	s.flags = MB_STEP_F_DELETED_COUNT;
	bad |= run_step(&u, &s, "list inbox") != 0;
	bad |= last.n < 1 || last.count < 1 || (cached && !last.local);
	uint64_t first = last.n ? last.ids[0] : 0, second = last.n > 1 ? last.ids[1] : 0;
	uint64_t third = last.n > 2 ? last.ids[2] : 0;

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_READ;
	s.item = first;
	s.flags = MB_STEP_F_MARK_READ;
	bad |= run_step(&u, &s, "read + mark read") != 0;

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_MARK_READ;
	s.item = second;
	bad |= run_step(&u, &s, "mark read") != 0;

	/* a send to the next user and to list 1 */
	uint32_t to[1] = {(u.idx + 1) % (uint32_t)env.nusers}, lists[1] = {0};
	send_step(&s, to, 1, 77, 3000);
	s.lists = lists;
	s.nlists = 1;
	bad |= run_step(&u, &s, "send") != 0;
	bad |= st->n.msgs_sent != 1;
	send_step(&s, to, 1, 78, 1000);
	bad |= run_step(&u, &s, "send (kept session)") != 0;

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_LIST_FOLDER;
	s.folder = MB_FOLDER_SENT;
	s.max_rows = 10;
	bad |= run_step(&u, &s, "list sent items") != 0;
	bad |= last.count < 2 && !cached;

	/* a reply to the first message with Sent Items selected: sent, then
	 * INBOX selected again and the original flagged \Answered */
	send_step(&s, to, 1, 79, 1000);
	s.msg_kind = MB_MSG_REPLY;
	s.item = first;
	bad |= run_step(&u, &s, "reply") != 0;
	/* the original, for imap_driver.sh's look at its Maildir file */
	printf("original %s INBOX uid %u\n", mb_topology_user(acc, (int)u.idx)->name,
	       (unsigned)(uint32_t)first); /* an item id's low half is its UID */

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_CREATE_APPOINTMENT;
	s.start_ms = 1800000000000LL;
	s.end_ms = 1800003600000LL;
	s.seed = 5;
	bad |= run_step(&u, &s, "create appointment") != 0;
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_CALENDAR_RANGE;
	s.max_rows = 30;
	bad |= run_step(&u, &s, "calendar range") != 0;
	bad |= last.n < 1;

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_CREATE_CONTACT;
	s.seed = 6;
	bad |= run_step(&u, &s, "create contact") != 0;
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_LIST_CONTACTS;
	s.max_rows = 50;
	bad |= run_step(&u, &s, "list contacts") != 0;
	bad |= last.n < 1;

	/* move one to Deleted Items, another to the first user folder */
	uint64_t mv[1] = {second}, mv2[1] = {third};
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_MOVE;
	s.folder = MB_FOLDER_INBOX;
	s.ids = mv;
	s.nids = second ? 1 : 0;
	s.more = mv2;
	s.nmore = third ? 1 : 0;
	s.dst = MB_FOLDER_USER;
	bad |= run_step(&u, &s, "move") != 0;

	/* hard-delete what Deleted Items holds (listed first: ids are its UIDs) */
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_LIST_FOLDER;
	s.folder = MB_FOLDER_DELETED;
	s.max_rows = 5;
	bad |= run_step(&u, &s, "list deleted items") != 0;
	uint64_t del[8];
	int nd = last.n < 8 ? last.n : 8;
	for (int i = 0; i < nd; i++)
		del[i] = last.ids[i];
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_DELETE;
	s.folder = MB_FOLDER_DELETED;
	s.ids = del;
	s.nids = nd;
	bad |= run_step(&u, &s, "delete") != 0;

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_FREEBUSY;
	bad |= run_step(&u, &s, "free/busy (n/a)") != MB_EUNSUPPORTED;

	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_KEEPALIVE;
	bad |= run_step(&u, &s, "keepalive") != 0;
	memset(&s, 0, sizeof(s));
	s.kind = MB_STEP_LOGOFF;
	bad |= run_step(&u, &s, "logoff") != 0;
	bad |= !loggedoff;

	for (int i = 0; i < ops->nops; i++)
		if (op_n[i])
			printf("op %-18s %6llu  mean %.2f ms\n", ops->op_names[i],
			       (unsigned long long)op_n[i], op_s[i] / (double)op_n[i] * 1000);
	printf("sent %llu, deliveries %llu, notifications %llu\n",
	       (unsigned long long)st->n.msgs_sent, (unsigned long long)st->n.deliveries,
	       (unsigned long long)st->n.notifications);
	for (int c = 0; c < 2; c++)
		if (fds[c] >= 0)
			close(fds[c]);
	ops->user_fini(&u);
	free(u.priv);
	free(st);
	fclose(ackf);
	mb_topology_destroy(acc);
	printf("%s\n", bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}
