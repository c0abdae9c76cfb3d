/* usersvc.c: the services target.h offers drivers that are bookkeeping,
 * not the user's state machine (user.c): a request's and a reply's
 * measurement (round trips into the shard's histograms, per-task and
 * per-operation counts), the ack log (one write per delivery, lines of
 * "+ mailbox id" etc., see store/ackcheck.c) and user lookup by name.
 * Invariant: nothing here changes a user's state or calls back into user.c.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "load/user.h"

void mb_target_request(struct mb_tuser *t, int conn, int op, int nops)
{
	struct mb_user *u = mb_user_of(t);
	struct mb_conn *c = mb_user_conn(u, conn);
	u->sh->st->n.rpcs++;
	u->sh->st->n.ops += (uint64_t)nops;
	if (u->task < MB_LOAD_TASKS)
		u->sh->st->task_rpcs[u->task]++;
	u->last_rpc_ns = mb_now_ns();
	if (c) {
		c->rpc_start_ns = u->last_rpc_ns;
		c->op = (uint8_t)(op >= 0 && op < MB_TARGET_OPS_MAX ? op : 0);
	}
}

void mb_target_count_op(struct mb_tuser *t, int op)
{
	if (op >= 0 && op < MB_TARGET_OPS_MAX)
		mb_user_of(t)->sh->st->op_count[op]++;
	if (mb_user_of(t)->task < MB_LOAD_TASKS)
		mb_user_of(t)->sh->st->task_ops[mb_user_of(t)->task]++;
}

void mb_target_reply(struct mb_tuser *t, int conn)
{
	struct mb_user *u = mb_user_of(t);
	struct mb_conn *c = mb_user_conn(u, conn);
	if (!c || !c->rpc_start_ns)
		return;
	uint64_t rtt = mb_now_ns() - c->rpc_start_ns;
	mb_hist_record(u->sh->st->rpc, rtt);
	mb_hist_record(u->sh->st->rpc_by_op[c->op], rtt);
	c->rpc_start_ns = 0;
}

/* O_APPEND: each write lands whole; done before the next op */
static void ack_write(int fd, const char *buf, size_t len)
{
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
}

/* One ack line into BUF (a zero id is never logged); flushes when nearly full. */
static void ack_add(int fd, char *buf, size_t cap, size_t *len, char kind, uint32_t mailbox,
		    uint64_t mid)
{
	if (!mid)
		return;
	*len += (size_t)snprintf(buf + *len, cap - *len, "%c %u %llu\n", kind, mailbox,
				 (unsigned long long)mid);
	if (*len > cap - 64) {
		ack_write(fd, buf, *len);
		*len = 0;
	}
}

static void ack_count(struct mb_user *u, char kind, int n)
{
	if (kind == '+')
		u->sh->st->n.acks_create += (uint64_t)n;
	else if (kind == '-')
		u->sh->st->n.acks_delete += (uint64_t)n;
}

void mb_target_ack(struct mb_tuser *t, char kind, uint32_t mailbox, const uint64_t *ids, int n)
{
	struct mb_user *u = mb_user_of(t);
	int fd = u->sh->es->ack_fd;
	if (n <= 0)
		return;
	ack_count(u, kind, n);
	if (fd < 0)
		return;
	char buf[4096];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		ack_add(fd, buf, sizeof(buf), &len, kind, mailbox, ids[i]);
	ack_write(fd, buf, len);
}

void mb_target_ack_many(struct mb_tuser *t, char kind, const uint32_t *mailboxes,
			const uint64_t *ids, int n)
{
	struct mb_user *u = mb_user_of(t);
	int fd = u->sh->es->ack_fd;
	if (n <= 0)
		return;
	ack_count(u, kind, n);
	if (fd < 0)
		return;
	char buf[4096];
	size_t len = 0;
	for (int i = 0; i < n; i++)
		ack_add(fd, buf, sizeof(buf), &len, kind, mailboxes[i], ids[i]);
	ack_write(fd, buf, len);
}

static uint32_t name_hash(const char *p, size_t len)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 16777619u;
	return h;
}

int32_t mb_target_find_user(const struct mb_tuser *t, const char *name, size_t len)
{
	const struct mb_engine_shared *es = ((const struct mb_user *)t)->sh->es;
	uint32_t k = name_hash(name, len) & (es->name_cap - 1);
	for (;;) {
		int32_t i = es->name_index[k];
		if (i < 0)
			return -1;
		const char *s = mb_topology_user(es->topo, i)->name;
		if (strlen(s) == len && memcmp(s, name, len) == 0)
			return i < es->nusers ? i : -1;
		k = (k + 1) & (es->name_cap - 1);
	}
}

int mb_user_name_index(struct mb_engine_shared *es)
{
	int n = mb_topology_user_count(es->topo);
	uint32_t cap = 16;
	while (cap < (uint32_t)n * 2)
		cap <<= 1;
	es->name_index = malloc(cap * sizeof(int32_t));
	if (!es->name_index)
		return MB_ENOMEM;
	memset(es->name_index, 0xff, cap * sizeof(int32_t));
	es->name_cap = cap;
	for (int i = 0; i < n; i++) {
		const char *name = mb_topology_user(es->topo, i)->name;
		uint32_t k = name_hash(name, strlen(name)) & (cap - 1);
		while (es->name_index[k] >= 0)
			k = (k + 1) & (cap - 1);
		es->name_index[k] = i;
	}
	return 0;
}

const struct mb_topo_user *mb_target_account(const struct mb_tuser *t)
{
	return mb_topology_user(((const struct mb_user *)t)->sh->es->topo, (int)t->idx);
}
