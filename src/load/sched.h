/* sched.h: the per-user action schedule of the load engine.
 *
 * Each action of MB_ACTION_TABLE arrives per user as a Poisson process at
 * the scenario's rate per 8-hour day times the acceleration factor.  The
 * superposition of these processes is one Poisson process of the summed
 * rate whose arrivals are labelled action i with probability rate_i / sum,
 * so a user needs only one timer: mb_sched_next() draws the gap to the next
 * arrival and its action.
 *
 * The per-action parameters (recipients per message, share of messages
 * that include distribution lists, replies/forwards per inbox pass, meeting
 * attendees) are derived in mb_sched_params_init() from the scenario so that
 * a simulated day yields the scenario's messages sent and received per
 * user-day:
 *   sent     = send_mail + request_meeting + process_inbox * replies_per_pass
 *   received = sum over sent messages of their recipients after list
 *              expansion (every simulated user receives what the others send).
 * The store delivers once per mailbox: a list member who is also a direct
 * recipient of the same message receives one copy.  With a small
 * population this overlap is a few percent of the deliveries, so the
 * lists per message are solved with it (direct_in_list below).
 * Invariants: every rate is >= 0; a parameter set from init is internally
 * consistent (expected sent/received equal the targets whenever they are
 * reachable with at least one recipient per message).  Pure computation:
 * no I/O, no clock, no allocation; the random state is the caller's.
 */
#ifndef MB_LOAD_SCHED_H
#define MB_LOAD_SCHED_H

#include <stdint.h>

#include "core/rng.h"
#include "core/scenario.h"

/* The published profiles describe an 8-hour working day. */
#define MB_SCHED_DAY_S (8.0 * 3600.0)

/* Kinds of message a user sends. */
enum mb_msg_kind {
	MB_MSG_NEW = 0, /* send mail: a new message */
	MB_MSG_REPLY,	/* process inbox: reply to the sender */
	MB_MSG_FORWARD, /* process inbox: forward to others */
	MB_MSG_MEETING, /* request meeting: a meeting request to attendees */
	MB_MSG_KIND_COUNT
};

/* What one message is addressed to. */
struct mb_msg_plan {
	enum mb_msg_kind kind;
	int direct; /* individual recipients (other users) */
	int lists;  /* distribution lists (expanded by the store) */
};

struct mb_sched_params {
	double accel;
	double rate_per_s[MB_ACTION_COUNT]; /* per user, wall-clock, accelerated */
	double total_rate_per_s;	    /* sum of rate_per_s */
	double cum[MB_ACTION_COUNT];	    /* cumulative share, for picking */

	/* targets, per user-day */
	double target_sent;
	double target_received;

	/* message parameters */
	double replies_per_pass;	    /* mean replies + forwards per process-inbox pass */
	double reply_share;		    /* share of those that are replies (rest: forwards) */
	int new_direct_min, new_direct_max; /* send mail: individual recipients */
	int fwd_direct_min, fwd_direct_max; /* forward: individual recipients */
	int attendees_min, attendees_max;   /* meeting request: attendees */
	double lists_per_msg;		    /* mean lists on a new mail or forward */
	double list_members;		    /* mean members of a list (from the topology) */
	double direct_in_list;		    /* chance that a direct recipient is also a member
					     * of a list on the same message (0: no overlap) */

	/* browse / other action sizes (means; drawn per action) */
	int browse_folders;	 /* folders opened by browse mail */
	int browse_reads;	 /* messages read per browse mail */
	int calendar_reads;	 /* appointments opened by browse calendar */
	int contacts_reads;	 /* contacts opened by browse contacts */
	double inbox_move_share; /* processed messages moved to a folder (rest deleted) */
	double logoff_mean_s;	 /* mean simulated time logged off (wall = / accel) */
};

/* Derive the parameters from a scenario, an acceleration factor (> 0) and
 * the mean number of members of a distribution list in the topology (> 0;
 * pass the scenario's dl_avg_members when no topology is at hand). */
int mb_sched_params_init(const struct mb_scenario *sc, double accel, double list_members,
			 struct mb_sched_params *out);
/* The same for a concrete population: direct_in_list (in [0, 1)) is the
 * chance that one direct recipient (a simulated user other than the
 * sender, uniform) is a member of one list (uniform over the lists), i.e.
 * the mean over lists of (simulated members / simulated users); see
 * mb_sched_direct_in_list().  mb_sched_params_init() assumes 0. */
int mb_sched_params_init_pop(const struct mb_scenario *sc, double accel, double list_members,
			     double direct_in_list, struct mb_sched_params *out);
/* direct_in_list of a topology: nlists lists whose i-th list has
 * sim_members[i] members among the nusers simulated users. */
double mb_sched_direct_in_list(const int *sim_members, int nlists, int nusers);

/* Expected messages sent and received per user-day for these parameters
 * (what the schedule should produce; the unit test measures it). */
void mb_sched_expected(const struct mb_sched_params *p, double *sent, double *received);

/* Random numbers: core/rng.h (the user's 8-byte splitmix64 state). */

/* ---- the schedule ---- */
/* Seconds (wall clock) to the next action arrival of one user, and which
 * action it is.  MB_ENOTFOUND when the scenario has no actions at all. */
int mb_sched_next(const struct mb_sched_params *p, uint64_t *rng, double *gap_s,
		  enum mb_action_id *action);

/* How many replies and forwards one process-inbox pass sends. */
int mb_sched_inbox_replies(const struct mb_sched_params *p, uint64_t *rng);
/* Address one message of the given kind. */
void mb_sched_plan_msg(const struct mb_sched_params *p, uint64_t *rng, enum mb_msg_kind kind,
		       struct mb_msg_plan *out);
/* Choose concrete recipients for a plan: plan->direct distinct users other
 * than self out of nusers (fewer when there are not enough), and
 * plan->lists distinct lists out of nlists.  Returns the counts through
 * *nu and *nl (arrays sized by the plan's counts). */
void mb_sched_pick_recipients(uint64_t *rng, const struct mb_msg_plan *plan, uint32_t self,
			      uint32_t nusers, uint32_t nlists, uint32_t *users, int *nu,
			      uint32_t *lists, int *nl);
/* For process inbox: whether reply i of the pass is a reply or a forward. */
enum mb_msg_kind mb_sched_reply_kind(const struct mb_sched_params *p, uint64_t *rng);

#endif
