/* storetest.h: helpers shared by the store's unit tests (test_delivery,
 * test_acl): a tiny initialised data directory under $TMPDIR made by the
 * real `mailbench init` code, a real store serving it from a thread on a
 * random loopback port, and clients logged on as its users.
 * Invariant: everything is removed again by storetest_stop(). */
#ifndef MB_TESTS_STORETEST_H
#define MB_TESTS_STORETEST_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/error.h"
#include "core/topology.h"
#include "proto/client.h"
#include "store/store.h"

struct storetest {
	char dir[256];
	char data[300];
	struct mb_store *st;
	struct mb_topology *topo;
	pthread_t th;
	int port;
};

static void *storetest_thread(void *arg)
{
	struct storetest *t = arg;
	mb_store_run(t->st);
	return NULL;
}

/* users: how many; the store's options are tmpl's (NULL: the defaults,
 * mb_store_opts_init) with this data directory and a refusal delay of
 * 100 ms; returns 0 or -1 */
static inline int storetest_start_opts(struct storetest *t, int users,
				       const struct mb_store_opts *tmpl)
{
	char nusers[16], path[400], err[512];
	const char *tmp = getenv("TMPDIR");
	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "%s/mb-storetest.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(t->dir))
		return -1;
	snprintf(t->data, sizeof(t->data), "%s/data", t->dir);
	snprintf(nusers, sizeof(nusers), "%d", users);
	char *argv[] = {"init",	   "-s",   "online", "--users", nusers,
			"--scale", "0.02", "--data", t->data,	NULL};
	/* init prints progress: keep test output short */
	fflush(stdout);
	if (mb_cmd_exec(&mb_cmd_init_entry, 9, argv) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/topology.json", t->data);
	if (mb_topology_read(path, &t->topo, err, sizeof(err)))
		return -1;
	struct mb_store_opts o;
	if (tmpl)
		o = *tmpl;
	else
		mb_store_opts_init(&o);
	o.data = t->data;
	o.auth_delay_ms = 100;
	if (mb_store_create(&o, &t->st, err, sizeof(err))) {
		fprintf(stderr, "store: %s\n", err);
		return -1;
	}
	t->port = mb_store_port(t->st);
	pthread_create(&t->th, NULL, storetest_thread, t);
	return 0;
}

/* users: how many; idle_s: the store's idle timeout (0: default);
 * held_session_mb, held_store_mb: the store's held-bytes limits (0:
 * default); returns 0 or -1 */
static inline int storetest_start_with(struct storetest *t, int users, int idle_s,
				       int held_session_mb, int held_store_mb)
{
	struct mb_store_opts o;
	mb_store_opts_init(&o);
	if (idle_s > 0)
		o.idle_timeout_s = idle_s;
	if (held_session_mb > 0)
		o.held_session_mb = held_session_mb;
	if (held_store_mb > 0)
		o.held_store_mb = held_store_mb;
	return storetest_start_opts(t, users, &o);
}

static inline int storetest_start_idle(struct storetest *t, int users, int idle_s)
{
	return storetest_start_with(t, users, idle_s, 0, 0);
}

static inline int storetest_start(struct storetest *t, int users)
{
	return storetest_start_idle(t, users, 0);
}

static inline void storetest_stop(struct storetest *t)
{
	char cmd[400];
	if (t->st) {
		mb_store_stop(t->st);
		pthread_join(t->th, NULL);
		mb_store_destroy(t->st);
	}
	mb_topology_destroy(t->topo);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", t->dir);
}

/* Connect and log on as user index idx; NULL on failure. */
static inline struct mb_client *storetest_client(struct storetest *t, int idx, uint32_t flags)
{
	struct mb_client *c;
	const struct mb_topo_user *u = mb_topology_user(t->topo, idx);
	if (mb_client_connect("127.0.0.1", t->port, 10000, &c))
		return NULL;
	if (mb_client_logon(c, u->name, u->password, flags, NULL)) {
		mb_client_destroy(c);
		return NULL;
	}
	return c;
}

/* One op, its status. */
static inline int storetest_one(struct mb_client *c, struct mb_op *op, struct mb_op_reply *res)
{
	struct mb_reply rep;
	int rc = mb_client_call(c, op, 1, &rep);
	if (rc)
		return rc;
	*res = rep.ops[0];
	return res->status;
}

#endif
