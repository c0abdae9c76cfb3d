/* test_sched.c: the load engine's scheduler (src/load/sched.h), run over
 * many simulated user-days without a server, for both published scenarios:
 *  - each action arrives at the scenario's rate per 8-hour day x accel;
 *  - arrivals are Poisson: exponential inter-arrival times (mean 1/rate,
 *    coefficient of variation ~1, memoryless tail);
 *  - the messages sent and received per user-day (after distribution-list
 *    expansion over a topology of 100 lists of 2..20 members, average 10)
 *    match the scenario's figures within 5%;
 *  - in a small population (40 users, lists drawn from them) the store's
 *    one-copy-per-mailbox rule (a direct recipient also in a list on the
 *    message) costs about 3% of the deliveries: the parameters solved with
 *    the population's overlap hit the received target within 1%, those
 *    solved without it fall measurably short. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/scenario.h"
#include "load/sched.h"

#define NLISTS 100
#define NUSERS 2000

struct lists {
	int n[NLISTS];
	uint32_t *m[NLISTS];
	double mean;
};

/* 100 lists, 2..20 members, mean 10: 2 + Binomial(18, 8/18), drawn from
 * a population of nusers users. */
static void make_lists(struct lists *l, uint64_t seed, uint32_t nusers)
{
	double sum = 0;
	for (int i = 0; i < NLISTS; i++) {
		int k = 2;
		for (int j = 0; j < 18; j++)
			k += mb_rng_unit(&seed) < 8.0 / 18.0;
		l->n[i] = k;
		l->m[i] = calloc((size_t)k, sizeof(uint32_t));
		assert_non_null(l->m[i]);
		struct mb_msg_plan p = {MB_MSG_NEW, k, 0};
		int nu, nl;
		mb_sched_pick_recipients(&seed, &p, UINT32_MAX, nusers, 0, l->m[i], &nu, NULL, &nl);
		assert_int_equal(nu, k);
		sum += k;
	}
	l->mean = sum / NLISTS;
}

static void free_lists(struct lists *l)
{
	for (int i = 0; i < NLISTS; i++)
		free(l->m[i]);
}

static void load(const char *name, struct mb_scenario *sc)
{
	struct mb_cfg_error err;
	int rc = mb_scenario_load(name, sc, &err);
	if (rc != 0) {
		char buf[1024];
		mb_cfg_error_format(&err, buf, sizeof(buf));
		fail_msg("loading scenario %s: %s", name, buf);
	}
}

/* Rates and Poisson spacing, per action. */
static void check_rates(const char *name, double accel)
{
	struct mb_scenario sc;
	load(name, &sc);
	struct mb_sched_params p;
	assert_int_equal(mb_sched_params_init(&sc, accel, 10.0, &p), 0);
	const int users = 500;
	const double days = 200;
	const double horizon = days * MB_SCHED_DAY_S / accel;
	long count[MB_ACTION_COUNT] = {0};
	double sum[MB_ACTION_COUNT] = {0}, sum2[MB_ACTION_COUNT] = {0};
	long gaps[MB_ACTION_COUNT] = {0}, tail[MB_ACTION_COUNT] = {0};
	for (int u = 0; u < users; u++) {
		uint64_t rng = 0x1234 + (uint64_t)u * 7777;
		double t = 0, last[MB_ACTION_COUNT];
		for (int i = 0; i < MB_ACTION_COUNT; i++)
			last[i] = -1;
		for (;;) {
			double gap;
			enum mb_action_id a;
			assert_int_equal(mb_sched_next(&p, &rng, &gap, &a), 0);
			assert_true(gap >= 0);
			t += gap;
			if (t > horizon)
				break;
			assert_true(sc.actions_per_day[a] > 0);
			count[a]++;
			if (last[a] >= 0) {
				double g = t - last[a];
				sum[a] += g;
				sum2[a] += g * g;
				gaps[a]++;
				/* memoryless: P(gap > 2 x mean) = e^-2 */
				if (g > 2.0 * MB_SCHED_DAY_S / accel / sc.actions_per_day[a])
					tail[a]++;
			}
			last[a] = t;
		}
	}
	for (int a = 0; a < MB_ACTION_COUNT; a++) {
		double rate = sc.actions_per_day[a];
		double per_day = count[a] / (users * days);
		if (rate <= 0) {
			assert_int_equal(count[a], 0);
			continue;
		}
		double mean = sum[a] / gaps[a];
		double sd = sqrt(sum2[a] / gaps[a] - mean * mean);
		double want_mean = MB_SCHED_DAY_S / accel / rate;
		double frac_tail = (double)tail[a] / gaps[a];
		print_message(
		    "%s accel %g %-22s %6.2f/day (want %6.2f) gap mean %.1f s (want %.1f) "
		    "CV %.3f tail %.3f (want %.3f)\n",
		    name, accel, mb_actions[a].label, per_day, rate, mean, want_mean, sd / mean,
		    frac_tail, exp(-2.0));
		assert_true(fabs(per_day - rate) < 0.03 * rate);
		assert_true(fabs(mean - want_mean) < 0.04 * want_mean);
		assert_true(fabs(sd / mean - 1.0) < 0.05);
		assert_true(fabs(frac_tail - exp(-2.0)) < 0.02);
	}
}

static void test_rates_online(void **state)
{
	(void)state;
	check_rates("online", 1.0);
	check_rates("online", 30.0);
}

static void test_rates_cached(void **state)
{
	(void)state;
	check_rates("cached", 1.0);
	check_rates("cached", 30.0);
}

/* Simulate nusers users for days with parameters p over lists l: messages
 * sent and deliveries (the store's expansion: one copy per mailbox), the
 * kinds sent and the share of composed messages with a list. */
struct msg_result {
	double sent, received, with_list, composed;
	long kinds[MB_MSG_KIND_COUNT];
};

static void simulate(const struct mb_sched_params *pp, const struct lists *lp, uint32_t nusers,
		     double days, struct msg_result *res)
{
	const struct mb_sched_params p = *pp;
	const struct lists l = *lp;
	const double horizon = days * MB_SCHED_DAY_S / p.accel;
	double sent = 0, received = 0, with_list = 0, composed = 0;
	long kinds[MB_MSG_KIND_COUNT] = {0};
	uint8_t *seen = calloc(nusers, 1);
	assert_non_null(seen);
	for (uint32_t u = 0; u < nusers; u++) {
		uint64_t rng = 0xabcdef + u;
		double t = 0;
		for (;;) {
			double gap;
			enum mb_action_id a;
			assert_int_equal(mb_sched_next(&p, &rng, &gap, &a), 0);
			t += gap;
			if (t > horizon)
				break;
			enum mb_msg_kind k[64];
			int nk = 0;
			if (a == MB_A_SEND_MAIL)
				k[nk++] = MB_MSG_NEW;
			else if (a == MB_A_REQUEST_MEETING)
				k[nk++] = MB_MSG_MEETING;
			else if (a == MB_A_PROCESS_INBOX) {
				int r = mb_sched_inbox_replies(&p, &rng);
				for (int i = 0; i < r && nk < 64; i++)
					k[nk++] = mb_sched_reply_kind(&p, &rng);
			}
			for (int i = 0; i < nk; i++) {
				struct mb_msg_plan plan;
				mb_sched_plan_msg(&p, &rng, k[i], &plan);
				assert_true(plan.direct >= 1 && plan.direct <= 32);
				assert_true(plan.lists >= 0 && plan.lists <= 8);
				uint32_t users[32], lists[8];
				int nu, nl;
				mb_sched_pick_recipients(&rng, &plan, u, nusers, NLISTS, users, &nu,
							 lists, &nl);
				assert_int_equal(nu, plan.direct);
				assert_int_equal(nl, plan.lists);
				/* the store's expansion: unique mailboxes */
				memset(seen, 0, nusers);
				int n = 0;
				for (int j = 0; j < nu; j++) {
					assert_true(users[j] != u && users[j] < nusers);
					n += !seen[users[j]];
					seen[users[j]] = 1;
				}
				for (int j = 0; j < nl; j++)
					for (int m = 0; m < l.n[lists[j]]; m++) {
						uint32_t r = l.m[lists[j]][m];
						n += !seen[r];
						seen[r] = 1;
					}
				sent += 1;
				received += n;
				kinds[k[i]]++;
				if (k[i] == MB_MSG_NEW || k[i] == MB_MSG_FORWARD) {
					composed++;
					with_list += nl > 0;
				}
			}
		}
	}
	free(seen);
	res->sent = sent;
	res->received = received;
	res->with_list = with_list;
	res->composed = composed;
	for (int k = 0; k < MB_MSG_KIND_COUNT; k++)
		res->kinds[k] = kinds[k];
}

/* NUSERS users over 100 lists drawn from them: the published figures. */
static void check_messages(const char *name)
{
	struct mb_scenario sc;
	load(name, &sc);
	assert_int_equal(sc.dl_per_site, NLISTS);
	struct lists l;
	make_lists(&l, 99, NUSERS);
	assert_true(l.mean > 8 && l.mean < 12);
	struct mb_sched_params p;
	assert_int_equal(mb_sched_params_init(&sc, 10.0, l.mean, &p), 0);
	double exp_sent, exp_recv;
	mb_sched_expected(&p, &exp_sent, &exp_recv);
	assert_true(fabs(exp_sent - sc.messages_sent_per_day) < 1e-6 * sc.messages_sent_per_day);
	assert_true(fabs(exp_recv - sc.messages_received_per_day) <
		    1e-6 * sc.messages_received_per_day);

	const double days = 5;
	struct msg_result res;
	simulate(&p, &l, NUSERS, days, &res);
	double sent = res.sent, received = res.received;
	double with_list = res.with_list, composed = res.composed;
	const long *kinds = res.kinds;
	double ud = NUSERS * days;
	print_message("%s: sent %.2f/user-day (want %.2f), received %.2f (want %.2f); "
		      "per day: new %.2f replies %.2f forwards %.2f meetings %.2f; "
		      "replies+forwards per pass %.2f; composed messages with a list %.0f%%\n",
		      name, sent / ud, sc.messages_sent_per_day, received / ud,
		      sc.messages_received_per_day, kinds[MB_MSG_NEW] / ud,
		      kinds[MB_MSG_REPLY] / ud, kinds[MB_MSG_FORWARD] / ud,
		      kinds[MB_MSG_MEETING] / ud, p.replies_per_pass, 100.0 * with_list / composed);
	assert_true(fabs(sent / ud - sc.messages_sent_per_day) < 0.05 * sc.messages_sent_per_day);
	assert_true(fabs(received / ud - sc.messages_received_per_day) <
		    0.05 * sc.messages_received_per_day);
	/* some, not all, messages go to lists */
	assert_true(with_list > 0.1 * composed && with_list < 0.9 * composed);
	free_lists(&l);
}

/* A small population: a direct recipient is often also in a list on the
 * same message, and the store delivers one copy.  Solved with the
 * population's overlap, received hits the target within 1% (the run's
 * standard error is ~0.2%); solved without it, it falls >1.5% short. */
#define SMALL_POP 40
static void check_small_population(const char *name)
{
	struct mb_scenario sc;
	load(name, &sc);
	struct lists l;
	make_lists(&l, 7, SMALL_POP);
	int sim[NLISTS];
	for (int i = 0; i < NLISTS; i++)
		sim[i] = l.n[i]; /* every member is a simulated user */
	double q = mb_sched_direct_in_list(sim, NLISTS, SMALL_POP);
	assert_true(fabs(q - l.mean / SMALL_POP) < 1e-9);
	struct mb_sched_params naive, pop;
	assert_int_equal(mb_sched_params_init(&sc, 10.0, l.mean, &naive), 0);
	assert_int_equal(mb_sched_params_init_pop(&sc, 10.0, l.mean, q, &pop), 0);
	assert_true(pop.lists_per_msg > naive.lists_per_msg);
	double exp_sent, exp_recv;
	mb_sched_expected(&pop, &exp_sent, &exp_recv);
	assert_true(fabs(exp_recv - sc.messages_received_per_day) <
		    1e-6 * sc.messages_received_per_day);
	const double days = 300;
	struct msg_result rn, rp;
	simulate(&naive, &l, SMALL_POP, days, &rn);
	simulate(&pop, &l, SMALL_POP, days, &rp);
	rn.received /= SMALL_POP * days;
	rp.received /= SMALL_POP * days;
	rp.sent /= SMALL_POP * days;
	double want = sc.messages_received_per_day;
	print_message("%s, %d users: received %.2f/user-day without the overlap, %.2f with it "
		      "(want %.2f); sent %.2f (want %.2f)\n",
		      name, SMALL_POP, rn.received, rp.received, want, rp.sent,
		      sc.messages_sent_per_day);
	assert_true(fabs(rp.received - want) < 0.01 * want);
	assert_true(fabs(rp.sent - sc.messages_sent_per_day) < 0.02 * sc.messages_sent_per_day);
	assert_true(rn.received < want * (1 - 0.015));
	free_lists(&l);
}

static void test_small_population(void **state)
{
	(void)state;
	check_small_population("online");
	check_small_population("cached");
}

static void test_messages_online(void **state)
{
	(void)state;
	check_messages("online");
}

static void test_messages_cached(void **state)
{
	(void)state;
	check_messages("cached");
}

static void test_helpers(void **state)
{
	(void)state;
	uint64_t s = 5;
	double sum = 0;
	long n = 200000;
	for (long i = 0; i < n; i++)
		sum += mb_rng_poisson(&s, 3.2);
	assert_true(fabs(sum / n - 3.2) < 0.05);
	sum = 0;
	for (long i = 0; i < n; i++)
		sum += mb_rng_round(&s, 0.45);
	assert_true(fabs(sum / n - 0.45) < 0.01);
	assert_int_equal(mb_rng_poisson(&s, 0), 0);
	for (int i = 0; i < 1000; i++) {
		int v = mb_rng_range(&s, 2, 6);
		assert_true(v >= 2 && v <= 6);
	}
	/* fewer users than asked: as many as there are, never self */
	struct mb_msg_plan p = {MB_MSG_NEW, 5, 3};
	uint32_t users[5], lists[3];
	int nu, nl;
	mb_sched_pick_recipients(&s, &p, 1, 3, 2, users, &nu, lists, &nl);
	assert_int_equal(nu, 2);
	assert_int_equal(nl, 2);
	assert_true(users[0] != 1 && users[1] != 1 && users[0] != users[1]);
	/* bad arguments */
	struct mb_scenario sc;
	memset(&sc, 0, sizeof(sc));
	struct mb_sched_params sp;
	assert_int_equal(mb_sched_params_init(&sc, 0, 10, &sp), -1);
	assert_int_equal(mb_sched_params_init(&sc, 1, 10, &sp), 0);
	assert_int_equal(mb_sched_params_init_pop(&sc, 1, 10, -0.1, &sp), -1);
	assert_int_equal(mb_sched_params_init_pop(&sc, 1, 10, 1.0, &sp), -1);
	assert_true(mb_sched_direct_in_list(NULL, 0, 10) == 0);
	double gap;
	enum mb_action_id a;
	assert_true(mb_sched_next(&sp, &s, &gap, &a) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_helpers),	    cmocka_unit_test(test_rates_online),
	    cmocka_unit_test(test_rates_cached),    cmocka_unit_test(test_messages_online),
	    cmocka_unit_test(test_messages_cached), cmocka_unit_test(test_small_population),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
