/* mb-peerbench.c: the store's side of bench/dovecot-vs-store.sh.
 *
 * CONNS threads, each one blocking connection (proto/client.h) logged on as
 * a different user of DATA/topology.json, for SECONDS:
 *   deliver  each thread submits messages with a BODY_KB body to the first
 *            RCPTS users (the same durable delivery as LMTP to RCPTS
 *            recipients: the reply comes once every copy is committed);
 *            the recipients' (mailbox, id) pairs go to FILE
 *   read     each thread logs on as one of the recipients and reads the
 *            bodies of its delivered messages listed in FILE (OpenMessage +
 *            GetProps body, one request each), round robin
 * The store's CPU time (/proc/PID/stat, all threads) over the window is
 * measured here; one line on stdout:
 *   ops N seconds S store_cpu_s C ops_per_cpu_s R
 *
 * usage: mb-peerbench deliver ADDR:PORT DATA STORE_PID CONNS SECONDS BODY_KB RCPTS FILE
 *        mb-peerbench read    ADDR:PORT DATA STORE_PID CONNS SECONDS FILE
 * Compression is off (the peer's IMAP and LMTP have none).
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/content.h"
#include "core/error.h"
#include "core/topology.h"
#include "proto/client.h"
#include "proto/proto.h"
#include "tests/opbatch.h"

static struct mb_topology *topo;
static const char *addr;
static double seconds;
static int body_kb = 75, nrcpt = 4;
static atomic_uint_fast64_t ops;
static atomic_int failed;
static FILE *mids;
static pthread_mutex_t mids_lock = PTHREAD_MUTEX_INITIALIZER;

struct rd {
	uint32_t mailbox;
	uint64_t mid;
};
static struct rd *rds;
static size_t nrd;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double proc_cpu_s(int pid)
{
	char p[64], buf[2048];
	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *s = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
	 * stime */
	if (!s ||
	    sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int logon(int idx, struct mb_client **c)
{
	const struct mb_topo_user *u = mb_topology_user(topo, idx);
	int rc = mb_client_connect_addr(addr, 30000, c);
	if (rc)
		return rc;
	rc = mb_client_logon(*c, u->name, u->password, 0, NULL);
	if (rc)
		mb_client_destroy(*c);
	return rc;
}

static void *deliver_main(void *arg)
{
	int idx = (int)(intptr_t)arg;
	struct mb_client *c;
	if (logon(idx, &c)) {
		atomic_fetch_add(&failed, 1);
		return NULL;
	}
	size_t blen = (size_t)body_kb * 1024;
	char *body = malloc(blen + 1);
	mb_content_fill((uint64_t)idx + 77, body, blen);
	body[blen] = 0;
	struct mb_bytes names[16];
	for (int i = 0; i < nrcpt; i++)
		names[i] = mb_str(mb_topology_user(topo, i)->name);
	double end = now_s() + seconds;
	while (now_s() < end) {
		struct mb_op o[3];
		struct mb_prop props[3];
		struct mb_reply rep;
		opbatch_mail_props(props, "peer benchmark", body, names, (uint16_t)nrcpt);
		memset(o, 0, sizeof(o));
		opbatch_compose(o, MB_FID(mb_client_mailbox(c), MB_FID_SENT), 1, props, 3,
				MB_OP_SUBMIT);
		int rc = mb_client_call(c, o, 3, &rep);
		if (rc || rep.ops[2].status) {
			atomic_fetch_add(&failed, 1);
			break;
		}
		atomic_fetch_add(&ops, 1);
		pthread_mutex_lock(&mids_lock);
		for (uint32_t k = 0; k < rep.ops[2].u.submit.n; k++)
			fprintf(mids, "%u %llu\n", rep.ops[2].u.submit.dl[k].mailbox,
				(unsigned long long)rep.ops[2].u.submit.dl[k].mid);
		pthread_mutex_unlock(&mids_lock);
	}
	free(body);
	mb_client_destroy(c);
	return NULL;
}

static void *read_main(void *arg)
{
	int idx = (int)(intptr_t)arg % nrcpt;
	struct mb_client *c;
	if (logon(idx, &c)) {
		atomic_fetch_add(&failed, 1);
		return NULL;
	}
	uint32_t mbx = mb_client_mailbox(c);
	size_t i = (size_t)arg;
	static uint32_t want[] = {MB_PR_BODY};
	double end = now_s() + seconds;
	while (now_s() < end) {
		size_t tries = 0;
		while (rds[i % nrd].mailbox != mbx && tries++ < nrd)
			i++;
		if (tries > nrd)
			break;
		struct mb_op o[2];
		struct mb_reply rep;
		memset(o, 0, sizeof(o));
		opbatch_read(o, MB_FID(mbx, MB_FID_INBOX), rds[i % nrd].mid, 2, want, 1);
		int rc = mb_client_call(c, o, 2, &rep);
		if (rc || rep.ops[0].status || rep.ops[1].status) {
			atomic_fetch_add(&failed, 1);
			break;
		}
		atomic_fetch_add(&ops, 1);
		i++;
	}
	mb_client_destroy(c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 8) {
		fprintf(stderr,
			"usage: mb-peerbench deliver|read ADDR:PORT DATA STORE_PID CONNS SECONDS "
			"[BODY_KB RCPTS] FILE\n");
		return 2;
	}
	const char *mode = argv[1];
	addr = argv[2];
	int pid = atoi(argv[4]), conns = atoi(argv[5]);
	seconds = atof(argv[6]);
	const char *file;
	bool deliver = !strcmp(mode, "deliver");
	if (deliver) {
		if (argc < 10)
			return 2;
		body_kb = atoi(argv[7]);
		nrcpt = atoi(argv[8]);
		file = argv[9];
	} else {
		file = argv[7];
	}
	char path[4200], err[1024];
	snprintf(path, sizeof(path), "%s/topology.json", argv[3]);
	if (mb_topology_read(path, &topo, err, sizeof(err))) {
		fprintf(stderr, "mb-peerbench: %s\n", err);
		return 2;
	}
	if (nrcpt < 1 || nrcpt > 16 || nrcpt > mb_topology_user_count(topo) || conns < 1 ||
	    conns > 256)
		return 2;
	if (deliver) {
		mids = fopen(file, "w");
		if (!mids)
			return 3;
	} else {
		FILE *f = fopen(file, "r");
		unsigned m;
		unsigned long long id;
		size_t cap = 0;
		while (f && fscanf(f, "%u %llu", &m, &id) == 2) {
			if (nrd == cap) {
				cap = cap ? 2 * cap : 1024;
				rds = realloc(rds, cap * sizeof(*rds));
			}
			rds[nrd++] = (struct rd){m, id};
		}
		if (f)
			fclose(f);
		if (!nrd) {
			fprintf(stderr, "mb-peerbench: no messages in %s\n", file);
			return 2;
		}
	}
	pthread_t *th = calloc((size_t)conns, sizeof(*th));
	double c0 = proc_cpu_s(pid), t0 = now_s();
	for (int i = 0; i < conns; i++)
		pthread_create(&th[i], NULL, deliver ? deliver_main : read_main,
			       (void *)(intptr_t)(deliver ? nrcpt + i : i));
	for (int i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	double c1 = proc_cpu_s(pid), t1 = now_s();
	if (mids)
		fclose(mids);
	uint64_t n = atomic_load(&ops);
	double cpu = c1 - c0;
	printf("ops %llu seconds %.2f store_cpu_s %.2f ops_per_cpu_s %.1f failed %d\n",
	       (unsigned long long)n, t1 - t0, cpu, cpu > 0 ? (double)n / cpu : 0,
	       atomic_load(&failed));
	free(th);
	free(rds);
	mb_topology_destroy(topo);
	return atomic_load(&failed) ? 3 : 0;
}
