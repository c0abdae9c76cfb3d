/* sched.c: derivation of the per-action parameters and the Poisson
 * schedule of one user (see sched.h for the model and its invariants). */
#include "load/sched.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

/* Fixed shape of the message mix; the free parameters (replies per pass,
 * lists per message) are solved from the scenario's targets. */
#define NEW_DIRECT_MIN 1
#define NEW_DIRECT_MAX 5 /* mean 3 individual recipients on a new mail */
#define FWD_DIRECT_MIN 1
#define FWD_DIRECT_MAX 3 /* mean 2 on a forward */
#define ATTENDEES_MIN 2
#define ATTENDEES_MAX 6 /* mean 4 attendees on a meeting request */
#define REPLY_SHARE 0.7 /* of inbox responses: replies; the rest forwards */

static double mean_range(int lo, int hi) { return (lo + hi) / 2.0; }

int mb_sched_params_init(const struct mb_scenario *sc, double accel, double list_members,
			 struct mb_sched_params *out)
{
	return mb_sched_params_init_pop(sc, accel, list_members, 0.0, out);
}

double mb_sched_direct_in_list(const int *sim_members, int nlists, int nusers)
{
	if (!sim_members || nlists <= 0 || nusers <= 1)
		return 0;
	double sum = 0;
	for (int i = 0; i < nlists; i++)
		sum += sim_members[i];
	double q = sum / nlists / nusers;
	return q < 0 ? 0 : q > 0.99 ? 0.99 : q;
}

/* Deliveries a list adds to a message with `direct` individual recipients
 * (on average): its members less those already addressed directly. */
static double list_adds(const struct mb_sched_params *p, double direct)
{
	double v = p->list_members - direct * p->direct_in_list;
	return v > 0 ? v : 0;
}

int mb_sched_params_init_pop(const struct mb_scenario *sc, double accel, double list_members,
			     double direct_in_list, struct mb_sched_params *out)
{
	if (!sc || !out || !(accel > 0) || !(list_members > 0) || !(direct_in_list >= 0) ||
	    !(direct_in_list < 1))
		return MB_EINVAL;
	memset(out, 0, sizeof(*out));
	out->accel = accel;
	double total = 0;
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		double r = sc->actions_per_day[i];
		if (r < 0)
			return MB_EINVAL;
		out->rate_per_s[i] = r * accel / MB_SCHED_DAY_S;
		total += out->rate_per_s[i];
	}
	out->total_rate_per_s = total;
	double acc = 0;
	for (int i = 0; i < MB_ACTION_COUNT; i++) {
		acc += out->rate_per_s[i];
		out->cum[i] = total > 0 ? acc / total : 0;
	}
	if (total > 0)
		out->cum[MB_ACTION_COUNT - 1] = 1.0;

	out->new_direct_min = NEW_DIRECT_MIN;
	out->new_direct_max = NEW_DIRECT_MAX;
	out->fwd_direct_min = FWD_DIRECT_MIN;
	out->fwd_direct_max = FWD_DIRECT_MAX;
	out->attendees_min = ATTENDEES_MIN;
	out->attendees_max = ATTENDEES_MAX;
	out->reply_share = REPLY_SHARE;
	out->list_members = list_members;
	out->direct_in_list = direct_in_list;
	out->target_sent = sc->messages_sent_per_day;
	out->target_received = sc->messages_received_per_day;

	/* sent = new mails + meeting requests + inbox passes x responses. */
	double n_new = sc->actions_per_day[MB_A_SEND_MAIL];
	double n_meet = sc->actions_per_day[MB_A_REQUEST_MEETING];
	double n_pass = sc->actions_per_day[MB_A_PROCESS_INBOX];
	double responses = out->target_sent - n_new - n_meet;
	if (responses < 0 || n_pass <= 0)
		responses = 0;
	out->replies_per_pass = n_pass > 0 ? responses / n_pass : 0;

	/* received = deliveries of everything sent (closed population):
	 * individual recipients plus lists x (members not addressed
	 * directly), solved for lists. */
	double n_reply = responses * REPLY_SHARE;
	double n_fwd = responses - n_reply;
	double direct = n_new * mean_range(NEW_DIRECT_MIN, NEW_DIRECT_MAX) + n_reply * 1.0 +
			n_fwd * mean_range(FWD_DIRECT_MIN, FWD_DIRECT_MAX) +
			n_meet * mean_range(ATTENDEES_MIN, ATTENDEES_MAX);
	double per_list = n_new * list_adds(out, mean_range(NEW_DIRECT_MIN, NEW_DIRECT_MAX)) +
			  n_fwd * list_adds(out, mean_range(FWD_DIRECT_MIN, FWD_DIRECT_MAX));
	double missing = out->target_received - direct;
	out->lists_per_msg = (missing > 0 && per_list > 0) ? missing / per_list : 0;

	out->browse_folders = 2;
	out->browse_reads = 5;
	out->calendar_reads = 3;
	out->contacts_reads = 3;
	out->inbox_move_share = 0.3;
	out->logoff_mean_s = 120.0; /* closed and reopened a couple of minutes later */
	return 0;
}

void mb_sched_expected(const struct mb_sched_params *p, double *sent, double *received)
{
	double day = MB_SCHED_DAY_S / p->accel;
	double n_new = p->rate_per_s[MB_A_SEND_MAIL] * day;
	double n_meet = p->rate_per_s[MB_A_REQUEST_MEETING] * day;
	double resp = p->rate_per_s[MB_A_PROCESS_INBOX] * day * p->replies_per_pass;
	double n_reply = resp * p->reply_share, n_fwd = resp - n_reply;
	double d_new = mean_range(p->new_direct_min, p->new_direct_max);
	double d_fwd = mean_range(p->fwd_direct_min, p->fwd_direct_max);
	if (sent)
		*sent = n_new + n_meet + resp;
	if (received)
		*received = n_new * (d_new + p->lists_per_msg * list_adds(p, d_new)) + n_reply +
			    n_fwd * (d_fwd + p->lists_per_msg * list_adds(p, d_fwd)) +
			    n_meet * mean_range(p->attendees_min, p->attendees_max);
}

int mb_sched_next(const struct mb_sched_params *p, uint64_t *rng, double *gap_s,
		  enum mb_action_id *action)
{
	if (!(p->total_rate_per_s > 0))
		return MB_ENOTFOUND;
	*gap_s = mb_rng_exp(rng, 1.0 / p->total_rate_per_s);
	double u = mb_rng_unit(rng);
	int i = 0;
	while (i < MB_ACTION_COUNT - 1 && (u >= p->cum[i] || p->rate_per_s[i] <= 0))
		i++;
	*action = (enum mb_action_id)i;
	return 0;
}

int mb_sched_inbox_replies(const struct mb_sched_params *p, uint64_t *rng)
{
	return mb_rng_poisson(rng, p->replies_per_pass);
}

enum mb_msg_kind mb_sched_reply_kind(const struct mb_sched_params *p, uint64_t *rng)
{
	return mb_rng_unit(rng) < p->reply_share ? MB_MSG_REPLY : MB_MSG_FORWARD;
}

void mb_sched_plan_msg(const struct mb_sched_params *p, uint64_t *rng, enum mb_msg_kind kind,
		       struct mb_msg_plan *out)
{
	out->kind = kind;
	out->lists = 0;
	switch (kind) {
	case MB_MSG_NEW:
		out->direct = mb_rng_range(rng, p->new_direct_min, p->new_direct_max);
		out->lists = mb_rng_round(rng, p->lists_per_msg);
		break;
	case MB_MSG_REPLY:
		out->direct = 1;
		break;
	case MB_MSG_FORWARD:
		out->direct = mb_rng_range(rng, p->fwd_direct_min, p->fwd_direct_max);
		out->lists = mb_rng_round(rng, p->lists_per_msg);
		break;
	case MB_MSG_MEETING:
	default:
		out->kind = MB_MSG_MEETING;
		out->direct = mb_rng_range(rng, p->attendees_min, p->attendees_max);
		break;
	}
}

/* Draw k distinct values in [0, n) other than skip (skip >= n: none). */
static int pick_distinct(uint64_t *rng, int k, uint32_t n, uint32_t skip, uint32_t *out)
{
	uint32_t avail = n - (skip < n ? 1 : 0);
	if ((uint32_t)k > avail)
		k = (int)avail;
	int got = 0, tries = 0;
	while (got < k && tries < 64 * k + 64) {
		tries++;
		uint32_t v = (uint32_t)(mb_rng_unit(rng) * n);
		if (v == skip)
			continue;
		int dup = 0;
		for (int j = 0; j < got; j++)
			dup |= out[j] == v;
		if (!dup)
			out[got++] = v;
	}
	return got;
}

void mb_sched_pick_recipients(uint64_t *rng, const struct mb_msg_plan *plan, uint32_t self,
			      uint32_t nusers, uint32_t nlists, uint32_t *users, int *nu,
			      uint32_t *lists, int *nl)
{
	*nu = nusers ? pick_distinct(rng, plan->direct, nusers, self, users) : 0;
	*nl = nlists ? pick_distinct(rng, plan->lists, nlists, UINT32_MAX, lists) : 0;
}
