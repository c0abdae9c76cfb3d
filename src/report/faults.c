/* faults.c: fault injection during a run and the recovery it measures (see
 * faults.h for the spec grammar, the timeline and the states).
 * Invariants: at most one fill file exists at a time and it is removed when
 * its fault ends, when the run stops and on destroy; a control line that
 * arms a store fault is always followed by a "clear" (at the end of its
 * duration or at the stop); times are monotonic seconds (core/sampler.h),
 * the clock the load engine stamps its first successful action with. */
#include "config.h"

#include "report/faults.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/error.h"
#include "core/sampler.h"
#include "store/ackcheck.h"

#define FILL_NAME ".mailbench-fault-fill"
#define FILL_UNTIL_FULL_MAX (4ull << 30) /* "until full" only on a small file system */

enum fstate { F_SCHEDULED, F_ACTIVE, F_ENDED, F_RECOVERED };

struct fault {
	struct mb_fault_spec sp;
	enum fstate st;
	double at, end;	  /* monotonic */
	double recovered; /* monotonic time of the first ok action after end */
	double failed_during;
	char note[160];
	bool planned; /* from --fault (re-armed at each start), not a key */
	uv_timer_t start_timer, end_timer;
	bool timers;
	struct mb_faults *owner;
};

struct fill_work {
	uv_work_t w;
	struct mb_faults *f;
	char path[4200];
	uint64_t size;
	uint64_t written;
	int err;
};

struct mb_faults {
	uv_loop_t *loop;
	struct mb_fault_ops ops;
	struct fault *v[MB_RUN_MAX_FAULTS];
	int n;
	double t0;
	bool started;
	int expect_store_exit;
	double kill_t;
	char fill_path[4200];
	bool filling;
	/* storage groups seen in the ERROR state outside any fault */
	char sg_errors[256];
	int sg_error_groups;
	bool sg_seen[64];
	/* the store's latest report: a group out of service now, or since when
	 * all are in service (a fault recovers only once they are) */
	bool groups_bad;
	double groups_ok_since;
	/* per group, as last reported (mb_faults_groups) */
	struct mb_sg_view gv[64];
	int ngv;
};

/* ---- parsing ---- */

static int parse_seconds(const char *p, char **end, double *out)
{
	double v = strtod(p, end);
	if (*end == p || !(v >= 0) || !isfinite(v))
		return MB_EINVAL;
	if (**end == 's') {
		(*end)++;
	} else if (**end == 'm' && (*end)[1] != 's') {
		v *= 60;
		(*end)++;
	}
	*out = v;
	return 0;
}

static int parse_size(const char *p, char **end, uint64_t *out)
{
	double v = strtod(p, end);
	if (*end == p || !(v > 0) || !isfinite(v))
		return MB_EINVAL;
	double mul = 1;
	switch (**end) {
	case 'K':
	case 'k':
		mul = 1024.0;
		break;
	case 'M':
	case 'm':
		mul = 1048576.0;
		break;
	case 'G':
	case 'g':
		mul = 1073741824.0;
		break;
	default:
		break;
	}
	if (mul > 1)
		(*end)++;
	*out = (uint64_t)(v * mul);
	return 0;
}

int mb_fault_parse(const char *text, struct mb_fault_spec *out, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum mb_fault_kind kind;
		double dur;
	} kinds[] = {{"kill-store", MB_FK_KILL_STORE, 0}, {"disk-full", MB_FK_DISK_FULL, 20},
		     {"io-error", MB_FK_IO_ERROR, 10},	  {"slow-disk", MB_FK_SLOW_DISK, 10},
		     {"net-drop", MB_FK_NET_DROP, 5},	  {"low-disk", MB_FK_LOW_DISK, 10}};
	memset(out, 0, sizeof(*out));
	snprintf(out->text, sizeof(out->text), "%s", text);
	const char *at = strchr(text, '@');
	size_t nl = at ? (size_t)(at - text) : strlen(text);
	int k = -1;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i].name) == nl && !strncmp(text, kinds[i].name, nl))
			k = (int)i;
	if (k < 0) {
		snprintf(
		    err, errlen,
		    "'%s': unknown fault (kill-store, disk-full, io-error, slow-disk, net-drop, "
		    "low-disk)",
		    text);
		return MB_EINVAL;
	}
	out->kind = kinds[k].kind;
	out->dur_s = kinds[k].dur;
	out->ms = 20;
	snprintf(out->mode, sizeof(out->mode), "eio");
	snprintf(out->files, sizeof(out->files), "log");
	if (!at) {
		snprintf(err, errlen, "'%s': missing @TIME (e.g. %s@30s)", text, kinds[k].name);
		return MB_EINVAL;
	}
	char *p;
	if (parse_seconds(at + 1, &p, &out->at_s)) {
		snprintf(err, errlen, "'%s': @TIME is not a number of seconds", text);
		return MB_EINVAL;
	}
	if (*p == ':') {
		p++;
		char *q = p;
		switch (out->kind) {
		case MB_FK_DISK_FULL:
			if (parse_size(p, &q, &out->size)) {
				snprintf(err, errlen, "'%s': SIZE is not a size (e.g. 64M)", text);
				return MB_EINVAL;
			}
			break;
		case MB_FK_IO_ERROR: {
			/* MODE[:FILES] or FILES[:MODE]: eio|enospc|fsync, log|db|all
			 * (a comma separates faults in --fault) */
			size_t l = strcspn(p, "+");
			bool mode = false, files = false;
			q = p;
			while (q < p + l) {
				size_t w = strcspn(q, ":+");
				bool m = (w == 3 && !strncmp(q, "eio", 3)) ||
					 (w == 6 && !strncmp(q, "enospc", 6)) ||
					 (w == 5 && !strncmp(q, "fsync", 5));
				bool fl = (w == 3 && !strncmp(q, "log", 3)) ||
					  (w == 2 && !strncmp(q, "db", 2)) ||
					  (w == 3 && !strncmp(q, "all", 3));
				if ((!m && !fl) || (m && mode) || (fl && files)) {
					snprintf(err, errlen,
						 "'%s': io-error takes MODE[:FILES]: MODE is eio, "
						 "enospc or fsync; FILES is log, db or all",
						 text);
					return MB_EINVAL;
				}
				memcpy(m ? out->mode : out->files, q, w);
				(m ? out->mode : out->files)[w] = '\0';
				mode |= m;
				files |= fl;
				q += w;
				if (*q == ':' && q + 1 < p + l)
					q++;
				else
					break;
			}
			break;
		}
		case MB_FK_SLOW_DISK: {
			double ms = strtod(p, &q);
			if (q == p || !(ms > 0) || ms > 10000) {
				snprintf(err, errlen, "'%s': slow-disk:MS is 1 .. 10000", text);
				return MB_EINVAL;
			}
			if (!strncmp(q, "ms", 2))
				q += 2;
			out->ms = (uint32_t)ms;
			break;
		}
		case MB_FK_NET_DROP:
			if (parse_seconds(p, &q, &out->dur_s) || out->dur_s <= 0 ||
			    out->dur_s > 3600) {
				snprintf(err, errlen, "'%s': net-drop:S is 0 .. 3600 seconds",
					 text);
				return MB_EINVAL;
			}
			break;
		case MB_FK_LOW_DISK: {
			unsigned long v = strtoul(p, &q, 10);
			if (q == p || v > 1u << 24) {
				snprintf(err, errlen, "'%s': low-disk:MB is 0 .. 16777216 MiB free",
					 text);
				return MB_EINVAL;
			}
			out->free_mb = (uint32_t)v;
			break;
		}
		case MB_FK_KILL_STORE:
			snprintf(err, errlen, "'%s': kill-store takes no argument", text);
			return MB_EINVAL;
		}
		p = q;
	}
	if (*p == '+') {
		if (out->kind == MB_FK_KILL_STORE || parse_seconds(p + 1, &p, &out->dur_s) ||
		    out->dur_s <= 0 || out->dur_s > 3600) {
			snprintf(err, errlen, "'%s': +DURATION is 0 .. 3600 seconds%s", text,
				 out->kind == MB_FK_KILL_STORE ? " (and not for kill-store)" : "");
			return MB_EINVAL;
		}
	}
	if (*p) {
		snprintf(err, errlen, "'%s': unexpected '%s'", text, p);
		return MB_EINVAL;
	}
	return 0;
}

/* ---- the injector ---- */

int mb_faults_create(uv_loop_t *loop, const struct mb_fault_ops *ops, struct mb_faults **out)
{
	struct mb_faults *f = calloc(1, sizeof(*f));
	if (!f)
		return MB_ENOMEM;
	f->loop = loop;
	f->ops = *ops;
	*out = f;
	return 0;
}

static void remove_fill(struct mb_faults *f)
{
	if (f->fill_path[0] && !f->filling) {
		unlink(f->fill_path);
		f->fill_path[0] = '\0';
	}
}

static void on_timer_closed(uv_handle_t *h)
{
	struct fault *x = h->data;
	if (h == (uv_handle_t *)&x->end_timer)
		free(x);
}

static void fault_free(struct fault *x)
{
	if (!x->timers) {
		free(x);
		return;
	}
	uv_close((uv_handle_t *)&x->start_timer, NULL);
	uv_close((uv_handle_t *)&x->end_timer, on_timer_closed);
}

void mb_faults_destroy(struct mb_faults *f)
{
	if (!f)
		return;
	mb_faults_stop(f);
	f->filling = false; /* a fill still running removes its own file */
	remove_fill(f);
	for (int i = 0; i < f->n; i++)
		fault_free(f->v[i]);
	free(f);
}

int mb_faults_count(const struct mb_faults *f)
{
	int n = 0;
	for (int i = 0; i < f->n; i++)
		n += f->v[i]->st != F_SCHEDULED;
	return n;
}

static struct fault *fault_new(struct mb_faults *f, const struct mb_fault_spec *sp)
{
	if (f->n >= MB_RUN_MAX_FAULTS)
		return NULL;
	struct fault *x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->sp = *sp;
	x->owner = f;
	uv_timer_init(f->loop, &x->start_timer);
	uv_timer_init(f->loop, &x->end_timer);
	x->start_timer.data = x->end_timer.data = x;
	x->timers = true;
	f->v[f->n++] = x;
	return x;
}

int mb_faults_add(struct mb_faults *f, const struct mb_fault_spec *sp)
{
	struct fault *x = fault_new(f, sp);
	if (!x)
		return MB_EFULL;
	x->planned = true;
	return 0;
}

static void end_fault(struct fault *x);

static void on_end_timer(uv_timer_t *t) { end_fault(t->data); }

static void fill_run(uv_work_t *w)
{
	struct fill_work *fw = w->data;
	int fd = open(fw->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fw->err = errno;
		return;
	}
	static const uint64_t steps[] = {64u << 20, 1u << 20, 4096};
	uint64_t off = 0;
	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		for (;;) {
			uint64_t len = steps[s];
			if (fw->size && off + len > fw->size)
				len = fw->size - off;
			if (len == 0)
				break;
			int e = posix_fallocate(fd, (off_t)off, (off_t)len);
			if (e) {
				if (e != ENOSPC && e != EFBIG)
					fw->err = e;
				break;
			}
			off += len;
		}
		if (fw->err || (fw->size && off >= fw->size))
			break;
	}
	fsync(fd);
	close(fd);
	fw->written = off;
}

static void fill_done(uv_work_t *w, int status)
{
	struct fill_work *fw = w->data;
	struct mb_faults *f = fw->f;
	(void)status;
	f->filling = false;
	for (int i = 0; i < f->n; i++) {
		struct fault *x = f->v[i];
		if (x->sp.kind == MB_FK_DISK_FULL && x->st == F_ACTIVE && !x->note[0])
			snprintf(x->note, sizeof(x->note), "%s: %.1f MiB written%s%s", FILL_NAME,
				 (double)fw->written / 1048576.0, fw->err ? ": " : "",
				 fw->err ? strerror(fw->err) : "");
	}
	/* ended meanwhile: remove it now */
	bool active = false;
	for (int i = 0; i < f->n; i++)
		active |= f->v[i]->sp.kind == MB_FK_DISK_FULL && f->v[i]->st == F_ACTIVE;
	if (!active)
		remove_fill(f);
	free(fw);
}

static int begin_fault(struct fault *x)
{
	struct mb_faults *f = x->owner;
	char line[256];
	int rc = 0;
	x->at = mb_now_s();
	x->st = F_ACTIVE;
	switch (x->sp.kind) {
	case MB_FK_KILL_STORE:
		f->expect_store_exit++;
		f->kill_t = x->at;
		rc = f->ops.kill_store(f->ops.arg, x->note, sizeof(x->note));
		if (rc)
			f->expect_store_exit--;
		break;
	case MB_FK_DISK_FULL: {
		if (f->fill_path[0] || f->filling) {
			snprintf(x->note, sizeof(x->note), "a fill file exists already");
			rc = MB_EBUSY;
			break;
		}
		const char *dir = f->ops.data_dir(f->ops.arg);
		struct statvfs vs;
		if (!x->sp.size && statvfs(dir, &vs) == 0 &&
		    (uint64_t)vs.f_bavail * vs.f_frsize > FILL_UNTIL_FULL_MAX) {
			snprintf(
			    x->note, sizeof(x->note),
			    "not filled: %.1f GiB free (give a SIZE on a file system this big)",
			    (double)vs.f_bavail * (double)vs.f_frsize / 1073741824.0);
			rc = MB_EINVAL;
			break;
		}
		struct fill_work *fw = calloc(1, sizeof(*fw));
		if (!fw) {
			rc = MB_ENOMEM;
			break;
		}
		fw->f = f;
		fw->size = x->sp.size;
		fw->w.data = fw;
		snprintf(fw->path, sizeof(fw->path), "%s/%s", dir, FILL_NAME);
		snprintf(f->fill_path, sizeof(f->fill_path), "%s", fw->path);
		f->filling = true;
		if (uv_queue_work(f->loop, &fw->w, fill_run, fill_done)) {
			f->filling = false;
			f->fill_path[0] = '\0';
			free(fw);
			rc = MB_ESYS;
		}
		break;
	}
	case MB_FK_IO_ERROR:
		snprintf(line, sizeof(line),
			 "{\"fault\":\"io-error\",\"mode\":\"%s\",\"files\":\"%s\"}", x->sp.mode,
			 x->sp.files);
		rc = f->ops.store_control(f->ops.arg, line);
		snprintf(x->note, sizeof(x->note), "store %s I/O fails (%s)",
			 !strcmp(x->sp.files, "db")    ? "database"
			 : !strcmp(x->sp.files, "all") ? "database and log"
						       : "log",
			 x->sp.mode);
		break;
	case MB_FK_SLOW_DISK:
		snprintf(line, sizeof(line), "{\"fault\":\"slow-disk\",\"ms\":%u}", x->sp.ms);
		rc = f->ops.store_control(f->ops.arg, line);
		snprintf(x->note, sizeof(x->note), "store I/O +%u ms", x->sp.ms);
		break;
	case MB_FK_LOW_DISK:
		snprintf(line, sizeof(line), "{\"fault\":\"low-disk\",\"mb\":%u}", x->sp.free_mb);
		rc = f->ops.store_control(f->ops.arg, line);
		snprintf(x->note, sizeof(x->note),
			 "store sees %u MiB free: its reserve refuses new content", x->sp.free_mb);
		break;
	case MB_FK_NET_DROP:
		snprintf(line, sizeof(line), "{\"fault\":\"net-drop\",\"s\":%g}", x->sp.dur_s);
		rc = f->ops.store_control(f->ops.arg, line);
		snprintf(x->note, sizeof(x->note), "store stops reading for %g s", x->sp.dur_s);
		break;
	}
	if (rc) {
		if (!x->note[0])
			snprintf(x->note, sizeof(x->note), "not injected: %s", mb_strerror(rc));
		x->end = x->at;
		x->st = F_ENDED;
		return rc;
	}
	if (x->sp.dur_s > 0 && x->sp.kind != MB_FK_KILL_STORE)
		uv_timer_start(&x->end_timer, on_end_timer, (uint64_t)(x->sp.dur_s * 1000.0), 0);
	else
		end_fault(x);
	return 0;
}

static void end_fault(struct fault *x)
{
	struct mb_faults *f = x->owner;
	if (x->st != F_ACTIVE)
		return;
	uv_timer_stop(&x->end_timer);
	x->end = mb_now_s();
	x->st = F_ENDED;
	switch (x->sp.kind) {
	case MB_FK_DISK_FULL:
		remove_fill(f); /* a fill still running removes it when done */
		break;
	case MB_FK_IO_ERROR:
	case MB_FK_SLOW_DISK:
	case MB_FK_LOW_DISK:
		f->ops.store_control(f->ops.arg, "{\"fault\":\"clear\"}");
		break;
	default:
		break;
	}
}

static void on_start_timer(uv_timer_t *t) { begin_fault(t->data); }

void mb_faults_start(struct mb_faults *f, double t0)
{
	f->t0 = t0;
	f->started = true;
	f->sg_error_groups = 0;
	f->sg_errors[0] = '\0';
	f->ngv = 0;
	memset(f->sg_seen, 0, sizeof(f->sg_seen));
	/* drop the last run's injected faults, keep the planned ones */
	int k = 0;
	for (int i = 0; i < f->n; i++) {
		struct fault *x = f->v[i];
		if (x->planned) {
			x->st = F_SCHEDULED;
			x->note[0] = '\0';
			x->failed_during = 0;
			f->v[k++] = x;
			uv_timer_start(&x->start_timer, on_start_timer,
				       (uint64_t)(x->sp.at_s * 1000.0), 0);
		} else {
			fault_free(x);
		}
	}
	f->n = k;
}

int mb_faults_inject(struct mb_faults *f, const struct mb_fault_spec *sp)
{
	if (!f->started)
		return MB_ESTATE;
	struct mb_fault_spec now = *sp;
	now.at_s = 0;
	struct fault *x = fault_new(f, &now);
	if (!x)
		return MB_EFULL;
	/* the spec as it happened: TYPE@NOWs (the rest of the text kept) */
	const char *at = strchr(sp->text, '@');
	size_t tl = at ? (size_t)(at - sp->text) : strlen(sp->text);
	const char *rest = at ? at + 1 + strspn(at + 1, "0123456789.sm") : "";
	int el = (int)(mb_now_s() - f->t0);
	snprintf(x->sp.text, sizeof(x->sp.text), "%.*s@%ds%.20s", (int)(tl > 30 ? 30 : tl),
		 sp->text, el < 0 ? 0 : el % 1000000, rest);
	return begin_fault(x);
}

void mb_faults_stop(struct mb_faults *f)
{
	for (int i = 0; i < f->n; i++) {
		struct fault *x = f->v[i];
		uv_timer_stop(&x->start_timer);
		if (x->st == F_ACTIVE)
			end_fault(x);
	}
	f->started = false;
}

bool mb_faults_store_exit_expected(struct mb_faults *f)
{
	if (f->expect_store_exit <= 0)
		return false;
	f->expect_store_exit--;
	return true;
}

void mb_faults_store_back(struct mb_faults *f, double t)
{
	for (int i = f->n - 1; i >= 0; i--) {
		struct fault *x = f->v[i];
		if (x->sp.kind != MB_FK_KILL_STORE || x->st == F_SCHEDULED)
			continue;
		size_t l = strlen(x->note);
		if (!strstr(x->note, "restarted") && l < sizeof(x->note))
			snprintf(x->note + l, sizeof(x->note) - l,
				 "; restarted, listening again %.2f s after the kill", t - x->at);
		break;
	}
}

/* a fault is "open" from its injection until the first ok action after its end */
static bool any_open(const struct mb_faults *f)
{
	for (int i = 0; i < f->n; i++)
		if (f->v[i]->st == F_ACTIVE || f->v[i]->st == F_ENDED)
			return true;
	return false;
}

static void update_views(struct mb_faults *f, json_t *groups)
{
	double now = mb_now_s();
	size_t i;
	json_t *g;
	f->ngv = 0;
	json_array_foreach(groups, i, g)
	{
		int sg = (int)json_integer_value(json_object_get(g, "sg"));
		const char *state = json_string_value(json_object_get(g, "state"));
		if (sg <= 0 || !state || f->ngv == 64)
			continue;
		struct mb_sg_view *v = &f->gv[f->ngv++];
		memset(v, 0, sizeof(*v));
		v->sg = sg;
		v->in_service = !strcmp(state, "ok");
		v->offline = !strcmp(state, "offline");
		const char *e = json_string_value(json_object_get(g, "error"));
		const char *m = json_string_value(json_object_get(g, "message"));
		const char *c = json_string_value(json_object_get(g, "cause"));
		snprintf(v->error, sizeof(v->error), "%s", e ? e : "?");
		snprintf(v->message, sizeof(v->message), "%s", m ? m : "");
		snprintf(v->cause, sizeof(v->cause), "%s", c ? c : "");
		v->recoveries = (uint64_t)json_integer_value(json_object_get(g, "recoveries"));
		if (v->in_service) {
			v->out_s = json_number_value(json_object_get(g, "out_s"));
			v->recovered_at =
			    now - json_number_value(json_object_get(g, "recovered_s"));
		} else {
			v->since = now - json_number_value(json_object_get(g, "since_s"));
		}
	}
}

int mb_faults_groups(const struct mb_faults *f, struct mb_sg_view *out, int max)
{
	int n = 0;
	for (int i = 0; i < f->ngv && n < max; i++)
		out[n++] = f->gv[i];
	return n;
}

void mb_faults_store_x(struct mb_faults *f, json_t *sx)
{
	json_t *groups = json_object_get(sx, "groups");
	size_t i;
	json_t *g;
	bool bad = false;
	json_array_foreach(groups, i, g)
	{
		const char *state = json_string_value(json_object_get(g, "state"));
		bad |= state && strcmp(state, "ok");
	}
	if (bad)
		f->groups_bad = true;
	else if (f->groups_bad) {
		f->groups_bad = false;
		f->groups_ok_since = mb_now_s();
	}
	update_views(f, groups);
	json_array_foreach(groups, i, g)
	{
		const char *state = json_string_value(json_object_get(g, "state"));
		int sg = (int)json_integer_value(json_object_get(g, "sg"));
		if (!state || !strcmp(state, "ok") || sg <= 0 || sg >= 64)
			continue;
		const char *name = json_string_value(json_object_get(g, "error"));
		const char *msg = json_string_value(json_object_get(g, "message"));
		char what[128];
		snprintf(what, sizeof(what), "sg%d %s (%s)", sg, name ? name : "?",
			 msg ? msg : "?");
		if (any_open(f)) {
			/* caused by the fault: noted there, not a verdict of its own */
			for (int k = f->n - 1; k >= 0; k--) {
				struct fault *x = f->v[k];
				if (x->st == F_SCHEDULED)
					continue;
				if (!strstr(x->note, what)) {
					size_t l = strlen(x->note);
					if (l + 20 < sizeof(x->note))
						snprintf(x->note + l, sizeof(x->note) - l, "%s%s",
							 l ? "; " : "", what);
				}
				break;
			}
			continue;
		}
		if (f->sg_seen[sg])
			continue;
		f->sg_seen[sg] = true;
		f->sg_error_groups++;
		size_t l = strlen(f->sg_errors);
		if (l + 4 < sizeof(f->sg_errors))
			snprintf(f->sg_errors + l, sizeof(f->sg_errors) - l, "%s%s", l ? ", " : "",
				 what);
	}
}

void mb_faults_load_x(struct mb_faults *f, double at, double dt, json_t *x)
{
	(void)at;
	(void)dt;
	double failed = 0;
	json_t *acts = json_object_get(x, "actions");
	const char *key;
	json_t *a;
	json_object_foreach(acts, key, a)
	{
		json_t *v = json_object_get(a, "failed");
		if (json_is_number(v))
			failed += json_number_value(v);
	}
	json_t *ok = json_object_get(x, "first_ok_t");
	double first_ok = json_is_number(ok) ? json_number_value(ok) : 0;
	for (int i = 0; i < f->n; i++) {
		struct fault *q = f->v[i];
		if (q->st == F_ACTIVE || q->st == F_ENDED)
			q->failed_during += failed;
		double from = q->end > f->groups_ok_since ? q->end : f->groups_ok_since;
		if (q->st == F_ENDED && first_ok > 0 && first_ok >= from && !f->groups_bad) {
			q->recovered = first_ok;
			q->st = F_RECOVERED;
		}
	}
}

void mb_faults_fill(const struct mb_faults *f, struct mb_run_health *out)
{
	out->sg_error_groups = f->sg_error_groups;
	snprintf(out->sg_errors, sizeof(out->sg_errors), "%s", f->sg_errors);
	out->nfaults = 0;
	for (int i = 0; i < f->n && out->nfaults < MB_RUN_MAX_FAULTS; i++) {
		const struct fault *x = f->v[i];
		if (x->st == F_SCHEDULED)
			continue;
		struct mb_fault_figures *o = &out->faults[out->nfaults++];
		memset(o, 0, sizeof(*o));
		snprintf(o->spec, sizeof(o->spec), "%s", x->sp.text);
		o->at_s = x->at - f->t0;
		o->end_s = (x->st == F_ACTIVE ? mb_now_s() : x->end) - f->t0;
		o->has_recovery = x->st == F_RECOVERED;
		o->recovery_s = o->has_recovery ? x->recovered - x->end : 0;
		o->failed_during = x->failed_during;
		snprintf(o->note, sizeof(o->note), "%s", x->note);
	}
}

static void ack_problem(void *arg, const char *msg)
{
	unsigned *n = arg;
	(void)msg; /* counted; the console's screen is no place for the list */
	(*n)++;
}

void mb_faults_ack_check(const char *data, const char *ack_log, struct mb_run_health *h)
{
	struct mb_ackcheck_report rep;
	char err[1024] = "";
	unsigned shown = 0;
	h->ack_checked = false;
	if (!ack_log || !ack_log[0]) {
		snprintf(h->ack_note, sizeof(h->ack_note), "no ack log");
		return;
	}
	int rc = mb_ackcheck_run(data, ack_log, ack_problem, &shown, &rep, err, sizeof(err));
	if (rc) {
		snprintf(h->ack_note, sizeof(h->ack_note), "the check could not run: %.200s",
			 err[0] ? err : mb_strerror(rc));
		return;
	}
	h->ack_checked = true;
	h->acks_checked = (double)(rep.must_exist + rep.must_be_gone);
	h->acks_lost = (double)(rep.missing + rep.resurrected);
	snprintf(h->ack_note, sizeof(h->ack_note),
		 "%llu creates present, %llu deletes absent, %llu in flight (%s)",
		 (unsigned long long)(rep.must_exist - rep.missing),
		 (unsigned long long)(rep.must_be_gone - rep.resurrected),
		 (unsigned long long)rep.in_flight, ack_log);
}
