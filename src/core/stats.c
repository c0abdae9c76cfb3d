/* stats.c: the stats stream, JSON lines over an inherited fd (see stats.h).
 *
 * Writer invariants: one json object per line, compact, no embedded
 * newline (jansson escapes them), written whole before returning; a value
 * that is not finite is not sent (n/a).  Reader invariants: bytes may
 * arrive in any split; a line is decoded only when its '\n' arrived; a
 * line longer than MB_STATS_MAX_LINE or not a valid message is skipped and
 * counted, and never stops the stream; after eof nothing more is accepted.
 */
#include "core/stats.h"
#include "core/error.h"
#include "core/sampler.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mb_stats_writer {
	int fd;
	char src[32];
	long pid;
	uint64_t seq;
};

int mb_stats_writer_create(int fd, const char *src, struct mb_stats_writer **out)
{
	if (fd < 0 || !src || strlen(src) >= sizeof(((struct mb_stats_writer *)0)->src))
		return MB_EINVAL;
	struct mb_stats_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return MB_ENOMEM;
	w->fd = fd;
	strcpy(w->src, src);
	w->pid = (long)getpid();
	*out = w;
	return 0;
}

void mb_stats_writer_destroy(struct mb_stats_writer *w) { free(w); }

/* Write all of buf, waiting on a non-blocking fd. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				struct pollfd p = {.fd = fd, .events = POLLOUT};
				if (poll(&p, 1, -1) < 0 && errno != EINTR)
					return mb_from_errno(errno);
				continue;
			}
			if (errno == EPIPE || errno == ECONNRESET)
				return MB_ECLOSED;
			return mb_from_errno(errno);
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static json_t *header(struct mb_stats_writer *w)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	if (json_object_set_new(o, "src", json_string(w->src)) ||
	    json_object_set_new(o, "pid", json_integer(w->pid)) ||
	    json_object_set_new(o, "seq", json_integer((json_int_t)w->seq)) ||
	    json_object_set_new(o, "t", json_real(mb_now_s()))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int emit(struct mb_stats_writer *w, json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);
	if (!text)
		return MB_ENOMEM;
	size_t len = strlen(text);
	if (len + 1 > MB_STATS_MAX_LINE) {
		free(text);
		return MB_ETOOBIG;
	}
	char *line = realloc(text, len + 2);
	if (!line) {
		free(text);
		return MB_ENOMEM;
	}
	line[len] = '\n';
	line[len + 1] = '\0';
	int rc = write_all(w->fd, line, len + 1);
	free(line);
	if (rc == 0)
		w->seq++;
	return rc;
}

int mb_stats_write(struct mb_stats_writer *w, double dt, const double *value, const bool *has,
		   json_t *hists, json_t *extra)
{
	if ((hists && !json_is_object(hists)) || (extra && !json_is_object(extra)))
		return MB_EINVAL;
	json_t *o = header(w), *c = json_object();
	int rc = MB_ENOMEM;
	if (!o || !c)
		goto out;
	if (json_object_set_new(o, "dt", json_real(dt)))
		goto out;
	for (int i = 0; value && has && i < MB_COUNTER_COUNT; i++) {
		if (!has[i] || !isfinite(value[i]))
			continue;
		if (json_object_set_new(c, mb_counters[i].key, json_real(value[i])))
			goto out;
	}
	if (json_object_set(o, "c", c))
		goto out;
	if (hists && json_object_set(o, "h", hists))
		goto out;
	if (extra && json_object_set(o, "x", extra))
		goto out;
	rc = emit(w, o);
out:
	json_decref(c);
	json_decref(o);
	return rc;
}

int mb_stats_write_end(struct mb_stats_writer *w)
{
	json_t *o = header(w);
	int rc = MB_ENOMEM;
	if (o && json_object_set_new(o, "end", json_true()) == 0)
		rc = emit(w, o);
	json_decref(o);
	return rc;
}

/* ---- reader ---- */

struct mb_stats_reader {
	mb_stats_cb cb;
	void *arg;
	char *buf;
	size_t len, cap;
	bool skipping; /* inside an over-long line: drop until '\n' */
	bool ended;
	uint64_t bad;
};

int mb_stats_reader_create(mb_stats_cb cb, void *arg, struct mb_stats_reader **out)
{
	if (!cb)
		return MB_EINVAL;
	struct mb_stats_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return MB_ENOMEM;
	r->cb = cb;
	r->arg = arg;
	*out = r;
	return 0;
}

void mb_stats_reader_destroy(struct mb_stats_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}

static bool get_number(json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

/* Decode one complete line (without '\n'); false when malformed. */
static bool decode_line(struct mb_stats_reader *r, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	struct mb_stats_msg m;
	bool ok = false;

	if (!root)
		return false;
	memset(&m, 0, sizeof(m));
	if (!json_is_object(root))
		goto out;
	json_t *src = json_object_get(root, "src"), *pid = json_object_get(root, "pid");
	json_t *seq = json_object_get(root, "seq");
	if (!json_is_string(src) || json_string_length(src) >= sizeof(m.src) ||
	    !json_is_integer(pid) || !json_is_integer(seq) || json_integer_value(seq) < 0 ||
	    !get_number(root, "t", &m.t))
		goto out;
	strcpy(m.src, json_string_value(src));
	m.pid = (long)json_integer_value(pid);
	m.seq = (uint64_t)json_integer_value(seq);
	json_t *dt = json_object_get(root, "dt");
	if (dt && !get_number(root, "dt", &m.dt))
		goto out;
	json_t *end = json_object_get(root, "end");
	if (end && !json_is_boolean(end))
		goto out;
	m.end = json_is_true(end);
	json_t *c = json_object_get(root, "c");
	if (c && !json_is_object(c))
		goto out;
	const char *key;
	json_t *val;
	json_object_foreach(c, key, val)
	{
		enum mb_counter_id id;
		if (!json_is_number(val))
			goto out;
		if (mb_counter_find(key, &id) != 0)
			continue; /* a newer sender's counter: ignored */
		m.value[id] = json_number_value(val);
		m.has[id] = true;
	}
	json_t *h = json_object_get(root, "h"), *x = json_object_get(root, "x");
	if ((h && !json_is_object(h)) || (x && !json_is_object(x)))
		goto out;
	json_object_foreach(h, key, val)
	{
		if (!json_is_string(val))
			goto out;
	}
	m.root = root;
	r->cb(r->arg, &m);
	ok = true;
out:
	json_decref(root);
	return ok;
}

int mb_stats_reader_feed(struct mb_stats_reader *r, const char *buf, size_t len)
{
	if (r->ended)
		return MB_ESTATE;
	while (len > 0) {
		const char *nl = memchr(buf, '\n', len);
		size_t take = nl ? (size_t)(nl - buf) : len;
		if (r->skipping) {
			if (nl)
				r->skipping = false;
		} else if (r->len + take > MB_STATS_MAX_LINE) {
			/* over-long: count it once, drop until its end */
			r->bad++;
			r->len = 0;
			r->skipping = nl == NULL;
		} else {
			if (r->len + take > r->cap) {
				size_t cap = r->cap ? r->cap : 4096;
				while (cap < r->len + take)
					cap *= 2;
				char *nb = realloc(r->buf, cap);
				if (!nb)
					return MB_ENOMEM;
				r->buf = nb;
				r->cap = cap;
			}
			memcpy(r->buf + r->len, buf, take);
			r->len += take;
			if (nl) {
				if (!decode_line(r, r->buf, r->len))
					r->bad++;
				r->len = 0;
			}
		}
		if (!nl)
			break;
		buf = nl + 1;
		len -= take + 1;
	}
	return 0;
}

void mb_stats_reader_eof(struct mb_stats_reader *r)
{
	if (r->ended)
		return;
	if (r->len > 0)
		r->bad++; /* a line cut short by the sender's death */
	r->len = 0;
	r->skipping = false;
	r->ended = true;
}

uint64_t mb_stats_reader_bad_lines(const struct mb_stats_reader *r) { return r->bad; }

bool mb_stats_reader_ended(const struct mb_stats_reader *r) { return r->ended; }
