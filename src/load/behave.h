/* behave.h: the Outlook behaviour model apart from the wire.
 *
 * What a simulated user does in each action of the 8-hour day: which
 * folders it opens, which mails it reads, replies to, forwards, deletes or
 * moves, whom it invites, how many items it opens per view, and in cached
 * mode which views are local.  The model emits protocol-neutral steps
 * (target.h: list folder, read message, send, move, ...) one at a time and
 * consumes each step's result; a driver maps the steps to its protocol.
 *
 * An action runs as a phase machine over one struct mb_behave:
 *
 *   mb_behave_begin(b, action)
 *   rc = mb_behave_next(b, env, self, NULL, &step)      first step
 *   while rc == 1: run step; rc = mb_behave_next(b, env, self, &res, &step)
 *   rc == 0: the action is complete; rc < 0: it failed (a step's status)
 *
 * Pure: no I/O, no clock (env->now_ms is the caller's), no allocation; the
 * random stream is the user's (self->rng).  The arrays a step points to
 * live in b and stay valid until the next call.  Local work (cached-mode
 * views) is counted in b->local_reads, which the caller drains.
 */
#ifndef MB_LOAD_BEHAVE_H
#define MB_LOAD_BEHAVE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/scenario.h"
#include "load/sched.h"
#include "load/target.h"

/* internal tasks beside the scenario actions (engine-started) */
enum {
	MB_TASK_LOGON = MB_ACTION_COUNT, /* log on, first view */
	MB_TASK_SYNC,			 /* cached mode: download changes */
	MB_TASK_KEEPALIVE,		 /* keep an idle connection open */
	MB_TASK_NONE = 255,
};
_Static_assert(MB_TASK_KEEPALIVE < MB_LOAD_TASKS, "loadstats counts the tasks too");

#define MB_BEHAVE_ITEMS 512    /* items remembered from one listing */
#define MB_BEHAVE_REPLIES 16   /* replies/forwards per inbox pass, at most */
#define MB_BEHAVE_RCPTS 32     /* direct recipients of one message, at most */
#define MB_BEHAVE_LISTS 8      /* lists on one message, at most */
#define MB_BEHAVE_PAGE 50      /* rows of the Inbox view that process inbox looks at */
#define MB_BEHAVE_VIEW_ROWS 25 /* rows per QueryRows of a view (one screen) */

/* What the model needs to know of the run (read-only). */
struct mb_behave_env {
	const struct mb_sched_params *sp;
	uint32_t nusers; /* simulated users (recipients are drawn among them) */
	uint32_t nlists;
	bool cached;			    /* cached mode: views are local */
	int inbox_messages;		    /* the Inbox's configured size */
	int deleted_items_messages;	    /* Deleted Items' configured size */
	int contacts;			    /* contacts per mailbox */
	uint32_t avg_body;		    /* bytes (a message without a send mix) */
	const struct mb_mix_kind *send_mix; /* the scenario's message_mix.send, or NULL */
	int nsend_mix;
	double open_attach_pct; /* chance that a read message's attachment is opened */
	uint32_t steps;		/* optional step kinds the target runs (MB_STEPS_OPTIONAL) */
	int64_t now_ms;		/* wall clock, ms since the epoch */
};

/* The user the model acts for. */
struct mb_behave_self {
	uint32_t idx;	   /* user index */
	uint16_t nfolders; /* user folders */
	uint64_t *rng;
};

struct mb_behave {
	uint8_t action; /* enum mb_action_id or MB_TASK_* */
	uint8_t phase;
	int n, i;	       /* items and cursor */
	int folders;	       /* browse: folders left */
	int reads;	       /* reads left in this view */
	int16_t folder;	       /* the view's folder */
	int nreplies, replies; /* process inbox: planned, sent */
	uint32_t inbox_count, deleted_count;
	int nattendees;
	int64_t start_ms;     /* request meeting: the appointment's start */
	uint64_t local_reads; /* local views since the caller last drained */
	uint64_t reading;     /* the message just read (its attachments may be opened) */
	int16_t reading_folder;
	uint8_t last;	  /* kind of the step in flight */
	bool has_pending; /* pending holds the step after a RESOLVE_NAMES */
	struct mb_step pending;
	int nl;			      /* process inbox: rows of the Inbox view so far */
	uint8_t lfl[MB_BEHAVE_PAGE];  /*   their item flags */
	int32_t lwho[MB_BEHAVE_PAGE]; /*   their senders */
	uint64_t lids[MB_BEHAVE_PAGE];
	uint32_t att[MB_MIX_MAX_ATTACH]; /* SEND: attachment sizes */
	uint8_t iflags[MB_BEHAVE_ITEMS]; /* item flags of ids[] (MB_ITEM_*) */
	uint64_t ids[MB_BEHAVE_ITEMS];
	uint64_t rmid[MB_BEHAVE_REPLIES];
	int32_t rwho[MB_BEHAVE_REPLIES];
	uint64_t del[MB_BEHAVE_PAGE], mov[MB_BEHAVE_PAGE]; /* process inbox: dispose */
	uint32_t users[MB_BEHAVE_RCPTS], lists[MB_BEHAVE_LISTS];
	uint32_t attendees[8];
};

void mb_behave_begin(struct mb_behave *b, int action);
/* 1: *out is the next step; 0: the action is complete; < 0: failed. */
int mb_behave_next(struct mb_behave *b, const struct mb_behave_env *env,
		   struct mb_behave_self *self, const struct mb_step_result *res,
		   struct mb_step *out);

/* The steps an action may emit (bit per enum mb_step_kind), in online and
 * in cached mode: a target that lacks one cannot run the action. */
uint32_t mb_behave_action_steps(int action, bool cached);

#endif
