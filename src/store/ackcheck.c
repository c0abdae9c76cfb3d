/* ackcheck.c: the store-level checks of a data directory (see
 * ackcheck.h): the ack-log oracle and the content check, both over
 * mb_store_foreach_schema, which opens each storage group once and each
 * database through the store's schema.  The ack log is read into one
 * array, sorted by (mailbox, mid) and folded into one verdict per message;
 * then each database's messages are looked up. */
#include "store/ackcheck.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/topology.h"
#include "db/db.h"
#include "store/schema.h"

enum { K_CREATE = 1, K_DELETE = 2, K_PENDING = 4 };

struct entry {
	uint32_t mailbox;
	uint8_t kinds;
	uint64_t mid;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->mailbox != y->mailbox)
		return x->mailbox < y->mailbox ? -1 : 1;
	if (x->mid != y->mid)
		return x->mid < y->mid ? -1 : 1;
	return 0;
}

static void problem(struct mb_ackcheck_report *rep, void (*cb)(void *, const char *), void *arg,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void problem(struct mb_ackcheck_report *rep, void (*cb)(void *, const char *), void *arg,
		    const char *fmt, ...)
{
	char line[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (!rep->first_problem[0])
		snprintf(rep->first_problem, sizeof(rep->first_problem), "%s", line);
	if (cb)
		cb(arg, line);
}

static int read_log(const char *path, struct entry **out, size_t *n_out, uint64_t *lines, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return MB_EIO;
	}
	size_t n = 0, cap = 1024;
	struct entry *v = malloc(cap * sizeof(*v));
	char buf[256];
	unsigned long lineno = 0;
	int rc = v ? 0 : MB_ENOMEM;
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		lineno++;
		size_t len = strlen(buf);
		if (len == 0 || buf[len - 1] != '\n') {
			/* a torn last line is possible only if the writer died mid-write */
			snprintf(err, errlen, "%s:%lu: line: incomplete or too long", path, lineno);
			rc = MB_ECONFIG;
			break;
		}
		char kind;
		unsigned long mb;
		unsigned long long mid;
		int used = 0;
		if (sscanf(buf, "%c %lu %llu%n", &kind, &mb, &mid, &used) != 3 ||
		    (kind != '+' && kind != '-' && kind != '~') || buf[used] != '\n' || mb == 0 ||
		    mb > UINT32_MAX || mid == 0) {
			snprintf(err, errlen, "%s:%lu: record: expected '+|-|~ MAILBOX MESSAGE_ID'",
				 path, lineno);
			rc = MB_ECONFIG;
			break;
		}
		if (n == cap) {
			struct entry *p = realloc(v, cap * 2 * sizeof(*v));
			if (!p) {
				rc = MB_ENOMEM;
				break;
			}
			v = p;
			cap *= 2;
		}
		v[n++] = (struct entry){(uint32_t)mb,
					kind == '+'   ? K_CREATE
					: kind == '-' ? K_DELETE
						      : K_PENDING,
					(uint64_t)mid};
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = MB_EIO;
	}
	fclose(f);
	if (rc != 0) {
		free(v);
		return rc;
	}
	qsort(v, n, sizeof(*v), cmp_entry);
	size_t m = 0; /* fold duplicates */
	for (size_t i = 0; i < n; i++) {
		if (m > 0 && v[m - 1].mailbox == v[i].mailbox && v[m - 1].mid == v[i].mid)
			v[m - 1].kinds |= v[i].kinds;
		else
			v[m++] = v[i];
	}
	*out = v;
	*n_out = m;
	*lines = lineno;
	return 0;
}

int mb_store_foreach_schema(const char *data_dir, const struct mb_topology *topo,
			    mb_schema_visit fn, void *arg, char *err, size_t errlen)
{
	const struct mb_topo_info *ti = mb_topology_info(topo);
	int rc = 0;
	/* one storage group at a time, each database once */
	for (int sg = 1; rc == 0 && sg <= ti->storage_groups; sg++) {
		char dir[4096], logdir[4096];
		snprintf(dir, sizeof(dir), "%s/sg%d", data_dir, sg);
		mb_topology_log_dir(data_dir, ti->log_dir[0] ? ti->log_dir : NULL, sg, logdir,
				    sizeof(logdir));
		struct mb_sg_options o;
		mb_sg_options_init(&o);
		o.dir = dir;
		o.log_dir = logdir;
		o.cache_mb = 64;
		struct mb_sg *g = NULL;
		rc = mb_sg_open(&o, &g);
		if (rc != 0) {
			snprintf(err, errlen, "%s: cannot open the storage group: %s", dir,
				 mb_strerror(rc));
			break;
		}
		for (int db = 1; rc == 0 && db <= ti->databases; db++) {
			if (mb_topology_db_sg(topo, db) != sg)
				continue;
			char name[32], where[4200];
			snprintf(name, sizeof(name), "db%02d.mdb", db);
			snprintf(where, sizeof(where), "%s/%s", dir, name);
			struct mb_db *d = NULL;
			struct mb_schema *s = NULL;
			rc = mb_db_open(g, name, 0, 0, &d);
			if (rc != 0) {
				char why[512];
				mb_db_open_errmsg(rc, why, sizeof(why));
				snprintf(err, errlen, "cannot open: %s", why);
				break;
			}
			rc = mb_schema_open(d, false, &s);
			if (rc != 0) {
				snprintf(err, errlen, "%s: cannot open: %s", where,
					 mb_strerror(rc));
				if (d)
					mb_db_close(d);
				break;
			}
			rc = fn(arg, where, db, s, err, errlen);
			mb_schema_close(s);
			mb_db_close(d);
		}
		int rc2 = mb_sg_close(g);
		if (rc == 0 && rc2 != 0) {
			rc = rc2;
			snprintf(err, errlen, "%s: close: %s", dir, mb_strerror(rc2));
		}
	}
	return rc;
}

/* The ack log's verdicts against one database's messages. */
struct ack_pass {
	const struct entry *v;
	size_t n;
	const struct mb_topology *topo;
	struct mb_ackcheck_report *rep;
	void (*cb)(void *, const char *);
	void *arg;
	int nusers;
};

static int ack_db(void *p, const char *where, int db, struct mb_schema *s, char *err, size_t errlen)
{
	struct ack_pass *a = p;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < a->n; i++) {
		uint32_t mb = a->v[i].mailbox;
		if (mb == 0 || mb > (uint32_t)a->nusers ||
		    mb_topology_user(a->topo, (int)mb - 1)->db != db)
			continue;
		bool exists = false;
		rc = mb_schema_msg_exists(s, mb, a->v[i].mid, &exists);
		if (rc != 0) {
			snprintf(err, errlen, "%s: lookup of %u/%" PRIu64 ": %s", where, mb,
				 a->v[i].mid, mb_strerror(rc));
			break;
		}
		if ((a->v[i].kinds & K_DELETE) && exists) {
			a->rep->resurrected++;
			problem(a->rep, a->cb, a->arg,
				"mailbox %u message %" PRIu64
				": deletion acknowledged, but the message is present",
				mb, a->v[i].mid);
		} else if (a->v[i].kinds == K_CREATE && !exists) {
			a->rep->missing++;
			problem(a->rep, a->cb, a->arg,
				"mailbox %u message %" PRIu64 ": creation acknowledged, but the "
				"message is missing (lost)",
				mb, a->v[i].mid);
		}
	}
	return rc;
}

/* The content check of one database (mb_schema_check_content). */
struct content_pass {
	struct mb_content_report *rep;
	void (*cb)(void *, const char *);
	void *arg;
};

static int content_db(void *p, const char *where, int db, struct mb_schema *s, char *err,
		      size_t errlen)
{
	struct content_pass *c = p;
	(void)db;
	int rc = mb_schema_check_content(s, where, c->cb, c->arg, c->rep);
	if (rc)
		snprintf(err, errlen, "%s: content check: %s", where, mb_strerror(rc));
	return rc;
}

int mb_store_check_content(const char *data_dir, const struct mb_topology *topo,
			   void (*cb)(void *arg, const char *msg), void *arg,
			   struct mb_content_report *rep, char *err, size_t errlen)
{
	memset(rep, 0, sizeof(*rep));
	err[0] = '\0';
	struct content_pass cp = {rep, cb, arg};
	return mb_store_foreach_schema(data_dir, topo, content_db, &cp, err, errlen);
}

/* The check against topo (NULL: topo_err says why it could not be read,
 * after the ack log's own errors). */
static int ack_run(const char *data_dir, const struct mb_topology *topo, const char *topo_err,
		   const char *ack_log, void (*cb)(void *arg, const char *msg), void *arg,
		   struct mb_ackcheck_report *rep, char *err, size_t errlen)
{
	memset(rep, 0, sizeof(*rep));
	err[0] = '\0';
	struct entry *v = NULL;
	size_t n = 0;
	int rc = read_log(ack_log, &v, &n, &rep->lines, err, errlen);
	if (rc != 0)
		return rc;
	if (!topo) {
		snprintf(err, errlen, "%s", topo_err);
		free(v);
		return MB_ECONFIG;
	}
	int nusers = mb_topology_user_count(topo);
	for (size_t i = 0; i < n; i++) {
		if (v[i].kinds & K_DELETE)
			rep->must_be_gone++;
		else if (v[i].kinds & K_PENDING)
			rep->in_flight++;
		else
			rep->must_exist++;
		if (v[i].mailbox > (uint32_t)nusers) {
			rep->unknown_mailbox++;
			problem(rep, cb, arg, "%s: mailbox %u is not in the topology", ack_log,
				v[i].mailbox);
		}
	}
	struct ack_pass ap = {v, n, topo, rep, cb, arg, nusers};
	rc = mb_store_foreach_schema(data_dir, topo, ack_db, &ap, err, errlen);
	free(v);
	return rc;
}

int mb_ackcheck_run(const char *data_dir, const char *ack_log,
		    void (*cb)(void *arg, const char *msg), void *arg,
		    struct mb_ackcheck_report *rep, char *err, size_t errlen)
{
	char path[4096], terr[512] = "";
	snprintf(path, sizeof(path), "%s/topology.json", data_dir);
	struct mb_topology *topo = NULL;
	if (mb_topology_read(path, &topo, terr, sizeof(terr)) != 0)
		topo = NULL;
	int rc = ack_run(data_dir, topo, terr, ack_log, cb, arg, rep, err, errlen);
	mb_topology_destroy(topo);
	return rc;
}

static void print_problem(void *arg, const char *msg)
{
	unsigned long *n = arg;
	if (++*n <= 100)
		fprintf(stderr, "mailbench check: %s\n", msg);
	else if (*n == 101)
		fprintf(stderr, "mailbench check: ... (more problems not shown)\n");
}

int mb_ackcheck_cmd(const char *data_dir, const struct mb_topology *topo, const char *topo_err,
		    const char *ack_log)
{
	struct mb_ackcheck_report rep;
	char err[1024];
	unsigned long shown = 0;
	int rc = ack_run(data_dir, topo, topo_err, ack_log, print_problem, &shown, &rep, err,
			 sizeof(err));
	if (rc == MB_ECONFIG || (rc != 0 && rep.lines == 0 && err[0])) {
		fprintf(stderr, "mailbench check: %s\n", err[0] ? err : mb_strerror(rc));
		return rc == MB_ECONFIG || rc == MB_EIO ? 2 : 3;
	}
	if (rc != 0) {
		fprintf(stderr, "mailbench check: %s\n", err[0] ? err : mb_strerror(rc));
		return 3;
	}
	bool ok = rep.missing == 0 && rep.resurrected == 0 && rep.unknown_mailbox == 0;
	printf("ack log %s: %" PRIu64 " lines; %" PRIu64
	       " acknowledged creates present as required, "
	       "%" PRIu64 " acknowledged deletes absent as required, %" PRIu64
	       " deletes in flight; %" PRIu64 " lost, %" PRIu64 " resurrected: %s\n",
	       ack_log, rep.lines, rep.must_exist - rep.missing, rep.must_be_gone - rep.resurrected,
	       rep.in_flight, rep.missing, rep.resurrected, ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
