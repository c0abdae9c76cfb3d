/* loadstats.c: the load engine's mergeable measurement set (see
 * loadstats.h).  Invariant: every histogram pointer of a created set is
 * valid; merge and reset touch every field, so nothing is lost between
 * windows. */
#include "load/loadstats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/score.h"

#define FOR_EACH_HIST(s, X)                                                                        \
	do {                                                                                       \
		X((s)->rpc);                                                                       \
		for (int i_ = 0; i_ < (s)->nops; i_++)                                             \
			X((s)->rpc_by_op[i_]);                                                     \
		for (int i_ = 0; i_ < MB_ACTION_COUNT; i_++)                                       \
			X((s)->action[i_]);                                                        \
		X((s)->loop_lag);                                                                  \
		X((s)->timer_late);                                                                \
	} while (0)

int mb_load_stats_create(struct mb_load_stats **out)
{
	struct mb_load_stats *s = calloc(1, sizeof(*s));
	if (!s)
		return MB_ENOMEM;
	int rc = 0;
#define MK(h)                                                                                      \
	if (rc == 0)                                                                               \
	rc = mb_hist_create(&(h))
	FOR_EACH_HIST(s, MK);
#undef MK
	if (rc != 0) {
		mb_load_stats_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

void mb_load_stats_destroy(struct mb_load_stats *s)
{
	if (!s)
		return;
#define DEL(h) mb_hist_destroy(h)
	FOR_EACH_HIST(s, DEL);
#undef DEL
	free(s);
}

int mb_load_stats_set_ops(struct mb_load_stats *s, const char *const *names, int n)
{
	if (n < 0 || n > MB_LOAD_OPS_MAX)
		return MB_EINVAL;
	for (int i = s->nops; i < n; i++) {
		int rc = mb_hist_create(&s->rpc_by_op[i]);
		if (rc != 0)
			return rc;
		s->nops = i + 1;
	}
	s->op_names = names;
	return 0;
}

void mb_load_stats_reset(struct mb_load_stats *s)
{
#define RST(h) mb_hist_reset(h)
	FOR_EACH_HIST(s, RST);
#undef RST
	memset(s->scheduled, 0, sizeof(s->scheduled));
	memset(s->done, 0, sizeof(s->done));
	memset(s->failed, 0, sizeof(s->failed));
	memset(s->failed_by, 0, sizeof(s->failed_by));
	memset(s->late, 0, sizeof(s->late));
	memset(s->cut, 0, sizeof(s->cut));
	s->first_ok_t = 0;
	memset(s->op_count, 0, sizeof(s->op_count));
	memset(s->task_rpcs, 0, sizeof(s->task_rpcs));
	memset(s->task_ops, 0, sizeof(s->task_ops));
	memset(&s->n, 0, sizeof(s->n));
}

void mb_load_stats_merge(struct mb_load_stats *dst, const struct mb_load_stats *src)
{
	mb_hist_merge(dst->rpc, src->rpc);
	if (src->nops > dst->nops || (!dst->op_names && src->op_names))
		mb_load_stats_set_ops(dst, src->op_names,
				      src->nops > dst->nops ? src->nops : dst->nops);
	for (int i = 0; i < src->nops && i < dst->nops; i++) {
		mb_hist_merge(dst->rpc_by_op[i], src->rpc_by_op[i]);
		dst->op_count[i] += src->op_count[i];
	}
	for (int i = 0; i < MB_LOAD_TASKS; i++) {
		dst->task_rpcs[i] += src->task_rpcs[i];
		dst->task_ops[i] += src->task_ops[i];
	}
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		mb_hist_merge(dst->action[i], src->action[i]);
		dst->scheduled[i] += src->scheduled[i];
		dst->done[i] += src->done[i];
		dst->failed[i] += src->failed[i];
		dst->late[i] += src->late[i];
		dst->cut[i] += src->cut[i];
	}
	for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++)
		dst->failed_by[i] += src->failed_by[i];
	if (src->first_ok_t > 0 && (dst->first_ok_t <= 0 || src->first_ok_t < dst->first_ok_t))
		dst->first_ok_t = src->first_ok_t;
	mb_hist_merge(dst->loop_lag, src->loop_lag);
	mb_hist_merge(dst->timer_late, src->timer_late);
#define MB_X_ADD(f, k) dst->n.f += src->n.f;
	MB_LOAD_COUNT_TABLE(MB_X_ADD)
#undef MB_X_ADD
}

bool mb_load_stats_saturated(const struct mb_load_stats *win)
{
	return (mb_hist_count(win->loop_lag) > 0 &&
		mb_hist_percentile_ns(win->loop_lag, 99) > MB_LOAD_LAG_SATURATED_NS) ||
	       (mb_hist_count(win->timer_late) > 0 &&
		mb_hist_percentile_ns(win->timer_late, 99) > MB_LOAD_LATE_SATURATED_NS);
}

uint64_t mb_load_stats_done(const struct mb_load_stats *s)
{
	uint64_t n = 0;
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		n += s->done[i];
	return n;
}

int mb_load_fail_cause(int rc) { return rc < 0 && rc > -MB_ERROR_COUNT ? -rc : MB_ERROR_COUNT; }

const char *mb_load_fail_cause_name(int cause)
{
	return cause == MB_LOAD_FAIL_OVERRUN ? "overrun" : mb_errname(-cause);
}

const char *mb_load_fail_cause_text(int cause)
{
	return cause == MB_LOAD_FAIL_OVERRUN
		   ? "due while MB_PEND_MAX actions of its user still waited"
		   : mb_strerror(-cause);
}

uint64_t mb_load_stats_failed(const struct mb_load_stats *s)
{
	uint64_t n = 0;
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		n += s->failed[i];
	return n;
}

int mb_load_stats_score_ns(const struct mb_load_stats *s, const double *weights, double *out_ns)
{
	const struct mb_hist *h[MB_ACTION_COUNT];
	for (int i = 0; i < MB_ACTION_COUNT; i++)
		h[i] = s->action[i];
	uint64_t ns;
	int rc = mb_score_ns(h, weights, &ns);
	if (rc == 0)
		*out_ns = (double)ns;
	return rc;
}

static int put_hist(json_t *o, const char *key, const struct mb_hist *h)
{
	if (mb_hist_count(h) == 0)
		return 0;
	char *text = NULL;
	int rc = mb_hist_encode(h, &text);
	if (rc != 0)
		return rc;
	rc = json_object_set_new(o, key, json_string(text)) == 0 ? 0 : MB_ENOMEM;
	free(text);
	return rc;
}

static const char *op_name(const struct mb_load_stats *s, int i)
{
	return s->op_names && s->op_names[i] ? s->op_names[i] : "?";
}

static void op_key(const struct mb_load_stats *s, int i, char *buf, size_t len)
{
	snprintf(buf, len, "rpc.%s", op_name(s, i));
}

int mb_load_stats_hists_json(const struct mb_load_stats *s, json_t **out)
{
	json_t *o = json_object();
	if (!o)
		return MB_ENOMEM;
	char key[96];
	int rc = put_hist(o, "rpc", s->rpc);
	for (int i = 0; rc == 0 && i < s->nops; i++) {
		op_key(s, i, key, sizeof(key));
		rc = put_hist(o, key, s->rpc_by_op[i]);
	}
	for (int i = 0; rc == 0 && i < MB_ACTION_COUNT; i++) {
		snprintf(key, sizeof(key), "action.%s", mb_actions[i].key);
		rc = put_hist(o, key, s->action[i]);
	}
	if (rc == 0)
		rc = put_hist(o, "loop_lag", s->loop_lag);
	if (rc == 0)
		rc = put_hist(o, "timer_late", s->timer_late);
	if (rc != 0) {
		json_decref(o);
		return rc;
	}
	*out = o;
	return 0;
}

int mb_load_stats_counts_json(const struct mb_load_stats *s, json_t **out)
{
	json_t *o = json_object(), *acts = json_object(), *ops = json_object();
	if (!o || !acts || !ops) {
		json_decref(o);
		json_decref(acts);
		json_decref(ops);
		return MB_ENOMEM;
	}
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		if (!s->scheduled[i] && !s->done[i] && !s->failed[i] && !s->cut[i])
			continue;
		json_t *a = json_pack("{sIsIsIsI}", "scheduled", (json_int_t)s->scheduled[i],
				      "done", (json_int_t)s->done[i], "failed",
				      (json_int_t)s->failed[i], "late", (json_int_t)s->late[i]);
		if (a && s->cut[i])
			json_object_set_new(a, "cut", json_integer((json_int_t)s->cut[i]));
		json_object_set_new(acts, mb_actions[i].key, a);
	}
	for (int i = 0; i < s->nops; i++) {
		if (!s->op_count[i])
			continue;
		json_object_set_new(ops, op_name(s, i), json_integer((json_int_t)s->op_count[i]));
	}
	json_object_set_new(o, "actions", acts);
	json_object_set_new(o, "op_counts", ops);
	json_t *fb = NULL;
	for (int i = 0; i < MB_LOAD_FAIL_CAUSES; i++) {
		if (!s->failed_by[i])
			continue;
		if (!fb)
			fb = json_object();
		json_object_set_new(fb, mb_load_fail_cause_name(i),
				    json_integer((json_int_t)s->failed_by[i]));
	}
	if (fb)
		json_object_set_new(o, "failed_by", fb);
	if (s->first_ok_t > 0)
		json_object_set_new(o, "first_ok_t", json_real(s->first_ok_t));
#define MB_X_JS(f, k) json_object_set_new(o, k, json_integer((json_int_t)s->n.f));
	MB_LOAD_COUNT_TABLE(MB_X_JS)
#undef MB_X_JS
	*out = o;
	return 0;
}

static uint64_t get_u64(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

int mb_load_stats_merge_json(struct mb_load_stats *s, json_t *hists, json_t *counts)
{
	if (hists) {
		if (!json_is_object(hists))
			return MB_EPROTO;
		const char *key;
		json_t *val;
		json_object_foreach(hists, key, val)
		{
			if (!json_is_string(val))
				return MB_EPROTO;
			struct mb_hist *h = NULL;
			char k[96];
			if (!strcmp(key, "rpc"))
				h = s->rpc;
			else if (!strcmp(key, "loop_lag"))
				h = s->loop_lag;
			else if (!strcmp(key, "timer_late"))
				h = s->timer_late;
			for (int i = 0; !h && i < s->nops; i++) {
				op_key(s, i, k, sizeof(k));
				if (!strcmp(key, k))
					h = s->rpc_by_op[i];
			}
			for (int i = 0; !h && i < MB_ACTION_COUNT; i++) {
				snprintf(k, sizeof(k), "action.%s", mb_actions[i].key);
				if (!strcmp(key, k))
					h = s->action[i];
			}
			if (!h)
				continue; /* a newer sender's extra histogram */
			int rc = mb_hist_decode_merge(h, json_string_value(val));
			if (rc != 0)
				return rc;
		}
	}
	if (counts) {
		if (!json_is_object(counts))
			return MB_EPROTO;
		json_t *acts = json_object_get(counts, "actions");
		for (int i = 0; json_is_object(acts) && i < MB_ACTION_COUNT; i++) {
			json_t *a = json_object_get(acts, mb_actions[i].key);
			if (!json_is_object(a))
				continue;
			s->scheduled[i] += get_u64(a, "scheduled");
			s->done[i] += get_u64(a, "done");
			s->failed[i] += get_u64(a, "failed");
			s->late[i] += get_u64(a, "late");
			s->cut[i] += get_u64(a, "cut");
		}
		json_t *ops = json_object_get(counts, "op_counts");
		for (int i = 0; json_is_object(ops) && i < s->nops; i++)
			if (s->op_names && s->op_names[i])
				s->op_count[i] += get_u64(ops, s->op_names[i]);
		json_t *fb = json_object_get(counts, "failed_by");
		for (int i = 0; json_is_object(fb) && i < MB_LOAD_FAIL_CAUSES; i++)
			s->failed_by[i] += get_u64(fb, mb_load_fail_cause_name(i));
#define MB_X_GET(f, k) s->n.f += get_u64(counts, k);
		MB_LOAD_COUNT_TABLE(MB_X_GET)
#undef MB_X_GET
	}
	return 0;
}
