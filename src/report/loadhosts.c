/* loadhosts.c: hostfiles, the job's ranks and mpirun's failure reports
 * (see loadhosts.h).  Invariant: rank entries are kept in rank order and
 * only ever filled from what the ranks reported. */
#include "config.h"

#include "report/loadhosts.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"

static bool is_local(const char *h)
{
	char me[256] = "";
	if (!strcmp(h, "localhost") || !strncmp(h, "127.", 4) || !strcmp(h, "::1") ||
	    !strcmp(h, "localhost.localdomain"))
		return true;
	if (gethostname(me, sizeof(me) - 1) != 0)
		return false;
	if (!strcmp(h, me))
		return true;
	size_t n = strcspn(me, ".");
	return strlen(h) == n && !strncmp(h, me, n);
}

int mb_hostfile_read(const char *path, struct mb_hostfile *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return MB_EIO;
	}
	char line[1024];
	int ln = 0, rc = 0;
	out->local_only = true;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		ln++;
		line[strcspn(line, "#\r\n")] = '\0';
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			continue;
		size_t n = strcspn(p, " \t");
		if (n >= MB_LOAD_HOST_LEN) {
			snprintf(err, errlen, "%s:%d: host name longer than %d characters", path,
				 ln, MB_LOAD_HOST_LEN - 1);
			rc = MB_ECONFIG;
			break;
		}
		if (out->count == MB_LOAD_HOSTS_MAX) {
			snprintf(err, errlen, "%s:%d: more than %d hosts", path, ln,
				 MB_LOAD_HOSTS_MAX);
			rc = MB_ECONFIG;
			break;
		}
		int k = out->count++;
		memcpy(out->host[k], p, n);
		out->host[k][n] = '\0';
		out->local_only &= is_local(out->host[k]);
		for (char *q = p + n; *q;) {
			while (isspace((unsigned char)*q))
				q++;
			if (!*q)
				break;
			size_t w = strcspn(q, " \t");
			char *end;
			if (!strncmp(q, "slots=", 6)) {
				long v = strtol(q + 6, &end, 10);
				if (end != q + w || v < 1 || v > 100000) {
					snprintf(err, errlen,
						 "%s:%d: slots: expected a count >= 1, got '%.*s'",
						 path, ln, (int)w, q);
					rc = MB_ECONFIG;
					break;
				}
				out->slots[k] = (int)v;
			} else if (strncmp(q, "max_slots=", 10) && strncmp(q, "max-slots=", 10)) {
				snprintf(err, errlen,
					 "%s:%d: unknown field '%.*s' (expected slots=N)", path, ln,
					 (int)w, q);
				rc = MB_ECONFIG;
				break;
			}
			q += w;
		}
		out->total_slots += out->slots[k] > 0 ? out->slots[k] : 1;
	}
	fclose(f);
	if (rc == 0 && out->count == 0) {
		snprintf(err, errlen, "%s: no hosts", path);
		rc = MB_ECONFIG;
	}
	return rc;
}

static int get_int(json_t *o, const char *k)
{
	return (int)json_integer_value(json_object_get(o, k));
}

void mb_load_ranks_update(struct mb_load_ranks *r, json_t *x_ranks, bool counted)
{
	if (!json_is_array(x_ranks))
		return;
	size_t i;
	json_t *o;
	json_array_foreach(x_ranks, i, o)
	{
		int n = get_int(o, "rank");
		if (n < 0 || n >= MB_LOAD_RANKS_MAX)
			continue;
		struct mb_load_rank *e = &r->rank[n];
		e->rank = n;
		const char *h = json_string_value(json_object_get(o, "host"));
		snprintf(e->host, sizeof(e->host), "%s", h ? h : "?");
		e->pid = (long)json_integer_value(json_object_get(o, "pid"));
		e->first = get_int(o, "first");
		e->last = get_int(o, "last");
		if (counted && json_is_true(json_object_get(o, "saturated")))
			e->saturated_s++;
		if (n + 1 > r->listed)
			r->listed = n + 1;
	}
}

void mb_load_ranks_desc(const struct mb_load_ranks *r, char *buf, size_t len)
{
	if (r->ranks <= 0)
		snprintf(buf, len, "%s", "");
	else
		snprintf(buf, len, "%d rank%s on %s", r->ranks, r->ranks == 1 ? "" : "s", r->hosts);
}

void mb_load_ranks_name(const struct mb_load_ranks *r, int n, char *buf, size_t len)
{
	if (n >= 0 && n < r->listed && r->rank[n].host[0])
		snprintf(buf, len, "rank %d (%s, pid %ld, users %d-%d)", n, r->rank[n].host,
			 r->rank[n].pid, r->rank[n].first, r->rank[n].last);
	else
		snprintf(buf, len, "rank %d", n);
}

void mb_load_ranks_saturated(const struct mb_load_ranks *r, char *buf, size_t len)
{
	size_t o = 0;
	if (len)
		buf[0] = '\0';
	for (int i = 0; i < r->listed && o < len; i++) {
		if (r->rank[i].saturated_s <= 0)
			continue;
		char name[200];
		mb_load_ranks_name(r, i, name, sizeof(name));
		int w = snprintf(buf + o, len - o, "%s%s saturated %d s", o ? "; " : "", name,
				 r->rank[i].saturated_s);
		o = w < 0 ? o : o + (size_t)w;
	}
}

bool mb_mpirun_parse_failure(const char *line, int *rank, char *how, size_t howlen)
{
	const char *p = strstr(line, "process rank ");
	if (p) { /* "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9
		    (Killed)." */
		*rank = atoi(p + strlen("process rank "));
		const char *e = strstr(p, " exited ");
		snprintf(how, howlen, "%s", e ? e + 1 : "failed");
		size_t n = strlen(how);
		if (n && how[n - 1] == '.')
			how[n - 1] = '\0';
		return true;
	}
	p = strstr(line, "MPI_ABORT was invoked on rank ");
	if (p) {
		*rank = atoi(p + strlen("MPI_ABORT was invoked on rank "));
		snprintf(how, howlen, "aborted the job (MPI_Abort)");
		return true;
	}
	return false;
}

json_t *mb_load_ranks_json(const struct mb_load_ranks *r)
{
	if (r->ranks <= 0)
		return NULL;
	json_t *a = json_array();
	for (int i = 0; a && i < r->listed; i++) {
		const struct mb_load_rank *e = &r->rank[i];
		json_array_append_new(
		    a, json_pack("{sisssIsisisisi}", "rank", e->rank, "host", e->host, "pid",
				 (json_int_t)e->pid, "first", e->first, "last", e->last, "users",
				 e->last - e->first + 1, "saturated_s", e->saturated_s));
	}
	return json_pack("{sissso}", "ranks", r->ranks, "hosts", r->hosts, "slices",
			 a ? a : json_array());
}

void mb_load_ranks_from_json(const json_t *j, struct mb_load_ranks *r)
{
	memset(r, 0, sizeof(*r));
	if (!json_is_object(j))
		return;
	r->ranks = (int)json_integer_value(json_object_get(j, "ranks"));
	const char *h = json_string_value(json_object_get(j, "hosts"));
	snprintf(r->hosts, sizeof(r->hosts), "%s", h ? h : "");
	json_t *a = json_object_get(j, "slices");
	size_t i;
	json_t *o;
	json_array_foreach(a, i, o)
	{
		int n = get_int(o, "rank");
		if (n < 0 || n >= MB_LOAD_RANKS_MAX)
			continue;
		struct mb_load_rank *e = &r->rank[n];
		e->rank = n;
		const char *hh = json_string_value(json_object_get(o, "host"));
		snprintf(e->host, sizeof(e->host), "%s", hh ? hh : "");
		e->pid = (long)json_integer_value(json_object_get(o, "pid"));
		e->first = get_int(o, "first");
		e->last = get_int(o, "last");
		e->saturated_s = get_int(o, "saturated_s");
		if (n + 1 > r->listed)
			r->listed = n + 1;
	}
}

const char *mb_mpirun_program(void)
{
	const char *e = getenv("MAILBENCH_MPIRUN");
	if (e && *e)
		return e;
#ifdef MB_MPIRUN
	return MB_MPIRUN;
#else
	return "mpirun";
#endif
}
