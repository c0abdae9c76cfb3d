/* behave.c: the Outlook behaviour model as protocol-neutral steps (see
 * behave.h).
 *
 * Each action is a phase machine: the result of the step in flight moves
 * it to its next phase, which emits the next step or ends the action.
 * Process inbox, the longest, runs
 *
 *   LIST --> READ* --> REPLY* --> DISPOSE --> EMPTY_LIST --> EMPTY_DEL --> END
 *              |          |          |   \______________________________/|
 *      (cached: no reads; |   (no unread mail: straight to the Deleted   |
 *       the list is local) |    Items check)                             |
 *
 * (LIST: the Inbox view's first screen, then NEXT_ROWS page by page up to
 * MB_BEHAVE_PAGE rows when the target runs it.)
 * Online users do every view as steps; cached-mode users (env->cached)
 * find their views local (the driver answers list steps from its replica,
 * res->local) and count local reads instead of read steps.
 *
 * Around every action, mb_behave_next adds Outlook's finer steps for a
 * target that runs them (env->steps): RESOLVE_NAMES before a new mail, a
 * forward or a free/busy look-up (online only: cached mode resolves names
 * in the offline address book), and after a READ of a message with
 * attachments (res->count) an OPEN_ATTACHMENT with chance
 * env->open_attach_pct.  Sent mail draws its body format and size and its
 * attachments from the send mix (env->send_mix).  docs/workload.md lists
 * what each action becomes on the mbstore wire.
 * Invariant: every step's arrays point into b; a failed step's status ends
 * the action with that status.
 */
#include "load/behave.h"

#include <string.h>

#include "core/content.h"
#include "core/error.h"
#include "core/mix.h"

#define BROWSE_ROWS 30
#define EMPTY_ROWS 200
#define CAL_ROWS 100
#define CONTACT_ROWS 30
#define MEETING_BODY 4096
#define APPT_BODY 2048
#define DAY_MS (24LL * 3600 * 1000)
#define INBOX_STAY_SHARE 0.4 /* of processed mail: stays while the Inbox is not full */
#define INBOX_MOVE_SHARE 0.1 /* of what leaves: moved to a folder, the rest deleted */

enum { PI_LIST = 1, PI_MORE, PI_READ, PI_REPLY, PI_DISPOSE, PI_EMPTY_LIST, PI_EMPTY_DEL, PI_END };

void mb_behave_begin(struct mb_behave *b, int action)
{
	memset(b, 0, offsetof(struct mb_behave, ids));
	b->action = (uint8_t)action;
}

static void step_init(struct mb_step *s, int kind, int folder)
{
	memset(s, 0, sizeof(*s));
	s->kind = (uint8_t)kind;
	s->folder = (int16_t)folder;
}

static int pick_folder(struct mb_behave_self *me)
{
	if (me->nfolders == 0)
		return MB_FOLDER_INBOX;
	return MB_FOLDER_USER + mb_rng_range(me->rng, 0, me->nfolders - 1);
}

/* Address and size a message of this kind into out (a SEND step). */
static void plan_send(struct mb_behave *b, const struct mb_behave_env *env,
		      struct mb_behave_self *me, enum mb_msg_kind kind, int32_t reply_to,
		      uint64_t quoted, struct mb_step *out)
{
	step_init(out, MB_STEP_SEND, MB_FOLDER_SENT);
	int nu = 0, nl = 0;
	if (kind == MB_MSG_MEETING) {
		/* addressed to the attendees whose free/busy was checked */
		memcpy(b->users, b->attendees, sizeof(uint32_t) * (size_t)b->nattendees);
		nu = b->nattendees;
		out->start_ms = b->start_ms;
		out->end_ms = b->start_ms + 3600 * 1000;
	} else {
		struct mb_msg_plan plan;
		mb_sched_plan_msg(env->sp, me->rng, kind, &plan);
		if (plan.direct > MB_BEHAVE_RCPTS)
			plan.direct = MB_BEHAVE_RCPTS;
		if (plan.lists > MB_BEHAVE_LISTS)
			plan.lists = MB_BEHAVE_LISTS;
		if (kind == MB_MSG_REPLY && reply_to >= 0 && (uint32_t)reply_to != me->idx)
			b->users[nu++] = (uint32_t)reply_to;
		else
			mb_sched_pick_recipients(me->rng, &plan, me->idx, env->nusers, env->nlists,
						 b->users, &nu, b->lists, &nl);
	}
	if (nu + nl == 0) /* a single simulated user: write to oneself */
		b->users[nu++] = me->idx;
	out->msg_kind = (uint8_t)kind;
	out->item = quoted;
	out->users = b->users;
	out->nusers = nu;
	out->lists = b->lists;
	out->nlists = nl;
	out->seed = mb_rng_next(me->rng);
	if (kind != MB_MSG_MEETING && env->nsend_mix > 0) {
		/* LoadSim's send mix: body format and size, attachments */
		struct mb_mix_msg m;
		mb_mix_draw(env->send_mix, env->nsend_mix, out->seed, &m);
		out->size = (uint32_t)m.body_len;
		out->body_kind = (uint8_t)m.body;
		out->attach_kind = (uint8_t)m.attach_kind;
		out->nattach = (uint8_t)m.nattach;
		for (int i = 0; i < m.nattach; i++)
			b->att[i] = (uint32_t)m.attach_len[i];
		out->attach_size = b->att;
		return;
	}
	out->size = (uint32_t)mb_content_size(out->seed, kind == MB_MSG_MEETING ? MEETING_BODY
										: env->avg_body);
}

/* A new appointment (or journal entry) in folder, within the next 5 days. */
static void plan_appointment(const struct mb_behave_env *env, struct mb_behave_self *me, int folder,
			     bool activity, struct mb_step *out)
{
	step_init(out, MB_STEP_CREATE_APPOINTMENT, folder);
	out->flags = activity ? MB_STEP_F_ACTIVITY : 0;
	out->seed = mb_rng_next(me->rng);
	out->start_ms = env->now_ms + (int64_t)mb_rng_range(me->rng, 1, 5 * 24) * 3600 * 1000;
	out->end_ms = out->start_ms + (int64_t)mb_rng_range(me->rng, 1, 4) * 30 * 60 * 1000;
	out->size = (uint32_t)mb_content_size(out->seed, APPT_BODY);
	out->aux = (uint32_t)mb_rng_range(me->rng, 1, 40);
}

static void plan_calendar(const struct mb_behave_env *env, int64_t from, int64_t to, uint16_t flags,
			  struct mb_step *out)
{
	step_init(out, MB_STEP_CALENDAR_RANGE, MB_FOLDER_CALENDAR);
	out->flags = flags;
	out->start_ms = env->now_ms + from;
	out->end_ms = env->now_ms + to;
	out->max_rows = CAL_ROWS;
}

/* The listed ids into b->ids[0..n). */
static void take_ids(struct mb_behave *b, const struct mb_step_result *res)
{
	b->n = 0;
	for (int i = 0; i < res->n && b->n < MB_BEHAVE_ITEMS; i++)
		if (res->ids[i]) {
			b->iflags[b->n] = (uint8_t)(res->flags ? res->flags[i] : MB_ITEM_READ);
			b->ids[b->n++] = res->ids[i];
		}
}

/* A READ step of item k of b->ids (attachments as the listing said). */
static void plan_read(struct mb_behave *b, int k, int folder, struct mb_step *out)
{
	step_init(out, MB_STEP_READ, folder);
	out->item = b->ids[k];
	if (b->iflags[k] & MB_ITEM_ATTACH)
		out->flags = MB_STEP_F_ATTACH;
}

/* Replies and forwards of one inbox pass: to messages of mids/who. */
static void choose_replies(struct mb_behave *b, const struct mb_behave_env *env,
			   struct mb_behave_self *me, int n, const uint64_t *mids,
			   const int32_t *who)
{
	int want = mb_sched_inbox_replies(env->sp, me->rng);
	if (want > MB_BEHAVE_REPLIES)
		want = MB_BEHAVE_REPLIES;
	b->nreplies = want;
	for (int j = 0; j < want; j++) {
		if (n > 0) {
			int k = mb_rng_range(me->rng, 0, n - 1);
			b->rmid[j] = mids[k];
			b->rwho[j] = who[k];
		} else {
			b->rmid[j] = 0;
			b->rwho[j] = -1;
		}
	}
	b->replies = 0;
}

static int dispose_threshold(const struct mb_behave_env *env)
{
	/* Deleted Items stays small (the profile holds 1 message): emptied
	 * when it holds a few more than twice its configured size */
	int d = env->deleted_items_messages * 2 + 2;
	return d < 4 ? 4 : d;
}

/* ---- process inbox ------------------------------------------------------------ */

/* Rows of a listing: from one step result, or gathered over pages. */
struct rows {
	int n;
	const uint64_t *ids;
	const uint32_t *f32; /* MB_ITEM_* per row, or NULL */
	const uint8_t *f8;   /* the same, gathered */
	const int32_t *who;  /* or NULL */
};

static uint32_t row_flags(const struct rows *r, int i)
{
	return r->f8 ? r->f8[i] : r->f32 ? r->f32[i] : MB_ITEM_READ;
}

static void inbox_listed(struct mb_behave *b, const struct mb_behave_env *env,
			 struct mb_behave_self *me, const struct rows *res)
{
	uint64_t any[MB_BEHAVE_PAGE];
	int32_t who[MB_BEHAVE_PAGE], w[MB_BEHAVE_PAGE];
	int nany = 0;
	b->n = 0;
	for (int i = 0; i < res->n; i++) {
		if (!res->ids[i])
			continue;
		int32_t s = res->who ? res->who[i] : -1;
		if (nany < MB_BEHAVE_PAGE) {
			any[nany] = res->ids[i];
			who[nany++] = s;
		}
		uint32_t fl = row_flags(res, i);
		bool unread = (res->f8 || res->f32) && !(fl & MB_ITEM_READ);
		if (unread && b->n < MB_BEHAVE_PAGE) {
			w[b->n] = s;
			b->iflags[b->n] = (uint8_t)fl;
			b->ids[b->n++] = res->ids[i];
		}
		if (nany >= MB_BEHAVE_PAGE && !env->cached)
			break;
	}
	/* reply to or forward what is new, else older mail */
	if (b->n > 0)
		choose_replies(b, env, me, b->n, b->ids, w);
	else
		choose_replies(b, env, me, nany, any, who);
	b->i = 0;
	if (env->cached) {
		/* cached: the Inbox and its messages are local */
		b->local_reads += (uint64_t)(1 + b->n);
		b->phase = PI_REPLY;
	} else {
		b->phase = PI_READ;
	}
}

/* Online: gather the Inbox view's rows page by page (QueryRows of one
 * screen at a time) up to MB_BEHAVE_PAGE; 1: *out asks the next page. */
static int inbox_page(struct mb_behave *b, const struct mb_behave_env *env,
		      const struct mb_step_result *res, struct mb_step *out)
{
	if (b->phase == PI_LIST) {
		b->inbox_count = res->count;
		b->deleted_count = res->count2;
	}
	for (int i = 0; i < res->n && b->nl < MB_BEHAVE_PAGE; i++) {
		b->lids[b->nl] = res->ids[i];
		b->lfl[b->nl] = (uint8_t)(res->flags ? res->flags[i] : MB_ITEM_READ);
		b->lwho[b->nl] = res->who ? res->who[i] : -1;
		b->nl++;
	}
	if (res->more && res->n > 0 && b->nl < MB_BEHAVE_PAGE &&
	    (env->steps & (1u << MB_STEP_NEXT_ROWS))) {
		step_init(out, MB_STEP_NEXT_ROWS, MB_FOLDER_INBOX);
		int left = MB_BEHAVE_PAGE - b->nl;
		out->max_rows = (uint32_t)(left < MB_BEHAVE_VIEW_ROWS ? left : MB_BEHAVE_VIEW_ROWS);
		return 1;
	}
	return 0;
}

/* Dispose of the processed mail: most leaves the Inbox (Deleted Items or
 * a folder) while the Inbox is above its configured size. */
static void plan_dispose(struct mb_behave *b, const struct mb_behave_env *env,
			 struct mb_behave_self *me, struct mb_step *out)
{
	bool full = b->inbox_count > (uint32_t)env->inbox_messages;
	int ndel = 0, nmov = 0;
	for (int i = 0; i < b->n; i++) {
		double x = mb_rng_unit(me->rng);
		if (!full && x < INBOX_STAY_SHARE)
			continue; /* stays, read */
		if (mb_rng_unit(me->rng) < INBOX_MOVE_SHARE && me->nfolders > 0)
			b->mov[nmov++] = b->ids[i];
		else
			b->del[ndel++] = b->ids[i];
	}
	step_init(out, MB_STEP_MOVE, MB_FOLDER_INBOX);
	out->dst = (int16_t)pick_folder(me);
	out->ids = b->del;
	out->nids = ndel;
	out->more = b->mov;
	out->nmore = nmov;
	if (env->cached) {
		/* what was read locally is marked read in the same upload */
		out->read = b->ids;
		out->nread = b->n;
	} else {
		out->flags = MB_STEP_F_CLOSE_VIEW;
	}
	b->deleted_count += (uint32_t)ndel;
}

static int act_process_inbox(struct mb_behave *b, const struct mb_behave_env *env,
			     struct mb_behave_self *me, const struct mb_step_result *res,
			     struct mb_step *out)
{
	if (res) {
		switch (b->phase) {
		case PI_LIST:
		case PI_MORE:
			if (env->cached) {
				b->inbox_count = res->count;
				b->deleted_count = res->count2;
				struct rows r = {res->n, res->ids, res->flags, NULL, res->who};
				inbox_listed(b, env, me, &r);
				break;
			}
			if (inbox_page(b, env, res, out)) {
				b->phase = PI_MORE;
				return 1;
			}
			{
				struct rows r = {b->nl, b->lids, NULL, b->lfl, b->lwho};
				inbox_listed(b, env, me, &r);
			}
			break;
		case PI_READ:
			b->i++;
			break;
		case PI_REPLY:
			b->replies++;
			break;
		case PI_DISPOSE:
			b->phase =
			    b->deleted_count + (uint32_t)b->n > (uint32_t)dispose_threshold(env)
				? PI_EMPTY_LIST
				: PI_END;
			break;
		case PI_EMPTY_LIST:
			take_ids(b, res);
			b->i = 1; /* listed */
			b->phase = PI_EMPTY_DEL;
			break;
		case PI_EMPTY_DEL:
		default:
			b->phase = PI_END;
			break;
		}
	}
	for (;;) {
		switch (b->phase) {
		case 0:
			step_init(out, MB_STEP_LIST_FOLDER, MB_FOLDER_INBOX);
			out->flags = MB_STEP_F_DELETED_COUNT;
			/* a local view sees the whole folder; online, the view's
			 * first screen (more rows page by page), notifications on */
			if (env->cached) {
				out->max_rows = MB_BEHAVE_ITEMS;
			} else {
				out->flags |= MB_STEP_F_NOTIFY;
				out->max_rows = (env->steps & (1u << MB_STEP_NEXT_ROWS))
						    ? MB_BEHAVE_VIEW_ROWS
						    : MB_BEHAVE_PAGE;
			}
			b->phase = PI_LIST;
			return 1;
		case PI_READ:
			if (b->i < b->n) {
				plan_read(b, b->i, MB_FOLDER_INBOX, out);
				out->flags |= MB_STEP_F_MARK_READ;
				return 1;
			}
			b->phase = PI_REPLY;
			continue;
		case PI_REPLY:
			if (b->replies < b->nreplies) {
				/* a reply to an unknown sender is addressed by the plan;
				 * the original (cached: local) gets the reply's verb */
				enum mb_msg_kind k = mb_sched_reply_kind(env->sp, me->rng);
				plan_send(b, env, me, k, b->rwho[b->replies], b->rmid[b->replies],
					  out);
				return 1;
			}
			if (b->n == 0) {
				b->phase = b->deleted_count > (uint32_t)dispose_threshold(env)
					       ? PI_EMPTY_LIST
					       : PI_END;
				continue;
			}
			plan_dispose(b, env, me, out);
			b->phase = PI_DISPOSE;
			return 1;
		case PI_EMPTY_LIST:
			/* cached: the replica lists Deleted Items (not counted as a view) */
			step_init(out, MB_STEP_LIST_FOLDER, MB_FOLDER_DELETED);
			out->max_rows = env->cached ? MB_BEHAVE_ITEMS : EMPTY_ROWS;
			b->i = 0;
			return 1;
		case PI_EMPTY_DEL:
			if (b->n == 0) {
				b->phase = PI_END;
				if (env->cached)
					continue;
				step_init(out, MB_STEP_CLOSE_VIEW, MB_FOLDER_DELETED);
				return 1;
			}
			step_init(out, MB_STEP_DELETE, MB_FOLDER_DELETED);
			out->ids = b->ids;
			out->nids = b->n;
			out->flags = env->cached ? 0 : MB_STEP_F_CLOSE_VIEW;
			return 1;
		case PI_END:
		default:
			return 0;
		}
	}
}

/* ---- views: browse mail, calendar, contacts -------------------------------------- */

/* After a listing step: take its ids and pick how many to open (mean_reads
 * on average); then open one of them, at random, per step; 0 when done. */
static int read_some(struct mb_behave *b, struct mb_behave_self *me,
		     const struct mb_step_result *res, int mean_reads, int folder,
		     struct mb_step *out)
{
	if (b->phase == 1) {
		take_ids(b, res);
		b->reads = b->n ? mb_rng_range(me->rng, 1, 2 * mean_reads - 1) : 0;
		b->phase = 2;
	} else {
		b->reads--;
	}
	if (b->reads <= 0)
		return 0;
	plan_read(b, mb_rng_range(me->rng, 0, b->n - 1), folder, out);
	return 1;
}

static int act_browse_mail(struct mb_behave *b, const struct mb_behave_env *env,
			   struct mb_behave_self *me, const struct mb_step_result *res,
			   struct mb_step *out)
{
	const struct mb_sched_params *sp = env->sp;
	if (env->cached) {
		/* folders and messages are read from the replica */
		int folders = mb_rng_range(me->rng, 1, 2 * sp->browse_folders - 1);
		for (int i = 0; i < folders; i++)
			b->local_reads +=
			    1 + (uint64_t)mb_rng_range(me->rng, 1, 2 * sp->browse_reads - 1);
		return 0;
	}
	if (!res) {
		b->folders = mb_rng_range(me->rng, 1, 2 * sp->browse_folders - 1);
		b->phase = 1;
	} else if (b->phase == 2) {
		take_ids(b, res);
		b->reads = b->n ? mb_rng_range(me->rng, 1, 2 * sp->browse_reads - 1) : 0;
		b->phase = 3;
	} else if (b->phase == 3) {
		b->reads--;
	} else if (b->phase == 4) {
		b->phase = 1;
	}
	if (b->phase == 1) {
		if (b->folders-- <= 0)
			return 0;
		b->folder =
		    (int16_t)(mb_rng_unit(me->rng) < 0.5 ? MB_FOLDER_INBOX : pick_folder(me));
		step_init(out, MB_STEP_LIST_FOLDER, b->folder);
		out->flags = MB_STEP_F_NOTIFY;
		out->max_rows = BROWSE_ROWS;
		b->phase = 2;
		return 1;
	}
	if (b->reads > 0) {
		plan_read(b, mb_rng_range(me->rng, 0, b->n - 1), b->folder, out);
		return 1;
	}
	step_init(out, MB_STEP_CLOSE_VIEW, b->folder);
	b->phase = 4;
	return 1;
}

static int act_browse_calendar(struct mb_behave *b, const struct mb_behave_env *env,
			       struct mb_behave_self *me, const struct mb_step_result *res,
			       struct mb_step *out)
{
	if (env->cached) {
		b->local_reads += 1 + (uint64_t)env->sp->calendar_reads;
		return 0;
	}
	if (!res) {
		plan_calendar(env, -DAY_MS, 30 * DAY_MS, MB_STEP_F_OPEN_FOLDER, out);
		b->phase = 1;
		return 1;
	}
	return read_some(b, me, res, env->sp->calendar_reads, MB_FOLDER_CALENDAR, out);
}

static int act_browse_contacts(struct mb_behave *b, const struct mb_behave_env *env,
			       struct mb_behave_self *me, const struct mb_step_result *res,
			       struct mb_step *out)
{
	if (env->cached) {
		b->local_reads += 1 + (uint64_t)env->sp->contacts_reads;
		return 0;
	}
	if (!res) {
		step_init(out, MB_STEP_LIST_CONTACTS, MB_FOLDER_CONTACTS);
		int total = env->contacts;
		out->start_row = (uint32_t)mb_rng_range(
		    me->rng, 0, total > CONTACT_ROWS ? total - CONTACT_ROWS : 0);
		out->max_rows = CONTACT_ROWS;
		b->phase = 1;
		return 1;
	}
	return read_some(b, me, res, env->sp->contacts_reads, MB_FOLDER_CONTACTS, out);
}

/* ---- calendar: free/busy, meetings, appointments, journal --------------------------- */

static int act_check_freebusy(struct mb_behave *b, const struct mb_behave_env *env,
			      struct mb_behave_self *me, const struct mb_step_result *res,
			      struct mb_step *out)
{
	if (res)
		return 0;
	struct mb_msg_plan plan = {MB_MSG_MEETING, mb_rng_range(me->rng, 1, 5), 0};
	int nu, nl;
	mb_sched_pick_recipients(me->rng, &plan, me->idx, env->nusers, 0, b->users, &nu, NULL, &nl);
	if (nu == 0)
		b->users[nu++] = me->idx;
	step_init(out, MB_STEP_FREEBUSY, MB_FOLDER_CALENDAR);
	out->users = b->users;
	out->nusers = nu;
	out->start_ms = env->now_ms;
	out->end_ms = env->now_ms + 7 * DAY_MS;
	if (env->cached)
		b->local_reads++; /* the own calendar is local */
	else
		out->flags = MB_STEP_F_WITH_CALENDAR;
	return 1;
}

static int act_request_meeting(struct mb_behave *b, const struct mb_behave_env *env,
			       struct mb_behave_self *me, const struct mb_step_result *res,
			       struct mb_step *out)
{
	if (!res) {
		/* attendees first: their free/busy */
		struct mb_msg_plan plan;
		mb_sched_plan_msg(env->sp, me->rng, MB_MSG_MEETING, &plan);
		if (plan.direct > 8)
			plan.direct = 8;
		int nu, nl;
		mb_sched_pick_recipients(me->rng, &plan, me->idx, env->nusers, 0, b->attendees, &nu,
					 NULL, &nl);
		if (nu == 0)
			b->attendees[nu++] = me->idx;
		b->nattendees = nu;
		step_init(out, MB_STEP_FREEBUSY, MB_FOLDER_CALENDAR);
		out->users = b->attendees;
		out->nusers = nu;
		out->start_ms = env->now_ms;
		out->end_ms = env->now_ms + 7 * DAY_MS;
		b->phase = 1;
		return 1;
	}
	if (b->phase == 1) {
		plan_appointment(env, me, MB_FOLDER_CALENDAR, false, out);
		b->start_ms = out->start_ms;
		b->phase = 2;
		return 1;
	}
	if (b->phase == 2) {
		plan_send(b, env, me, MB_MSG_MEETING, -1, 0, out);
		b->phase = 3;
		return 1;
	}
	return 0;
}

static int act_make_appointment(struct mb_behave *b, const struct mb_behave_env *env,
				struct mb_behave_self *me, const struct mb_step_result *res,
				struct mb_step *out)
{
	if (res && b->phase == 2)
		return 0;
	if (!res && !env->cached) {
		/* online: look at the week first */
		plan_calendar(env, 0, 7 * DAY_MS, 0, out);
		b->phase = 1;
		return 1;
	}
	if (!res)
		b->local_reads++; /* cached: the week is local */
	plan_appointment(env, me, MB_FOLDER_CALENDAR, false, out);
	b->phase = 2;
	return 1;
}

static int act_journal(struct mb_behave *b, const struct mb_behave_env *env,
		       struct mb_behave_self *me, const struct mb_step_result *res,
		       struct mb_step *out)
{
	(void)b;
	if (res)
		return 0;
	/* journal applications: an activity entry logged to the journal
	 * (the first user folder; the Inbox when there is none) */
	plan_appointment(env, me, me->nfolders ? MB_FOLDER_USER : MB_FOLDER_INBOX, true, out);
	return 1;
}

/* ---- mail, contacts, session --------------------------------------------------------- */

static int act_send_mail(struct mb_behave *b, const struct mb_behave_env *env,
			 struct mb_behave_self *me, const struct mb_step_result *res,
			 struct mb_step *out)
{
	if (res)
		return 0;
	plan_send(b, env, me, MB_MSG_NEW, -1, 0, out);
	return 1;
}

static int act_create_contact(struct mb_behave *b, const struct mb_behave_env *env,
			      struct mb_behave_self *me, const struct mb_step_result *res,
			      struct mb_step *out)
{
	(void)b;
	(void)env;
	if (res)
		return 0;
	step_init(out, MB_STEP_CREATE_CONTACT, MB_FOLDER_CONTACTS);
	out->seed = mb_rng_next(me->rng);
	return 1;
}

/* One step, then done: logoff and the engine's tasks. */
static int one_step(struct mb_behave *b, const struct mb_step_result *res, int kind,
		    struct mb_step *out)
{
	(void)b;
	if (res)
		return 0;
	step_init(out, kind, MB_FOLDER_INBOX);
	return 1;
}

/* ---- dispatch ------------------------------------------------------------------------- */

typedef int (*act_fn)(struct mb_behave *b, const struct mb_behave_env *env,
		      struct mb_behave_self *me, const struct mb_step_result *res,
		      struct mb_step *out);

static const act_fn acts[MB_ACTION_COUNT] = {
    [MB_A_SEND_MAIL] = act_send_mail,
    [MB_A_PROCESS_INBOX] = act_process_inbox,
    [MB_A_BROWSE_MAIL] = act_browse_mail,
    [MB_A_CHECK_FREEBUSY] = act_check_freebusy,
    [MB_A_REQUEST_MEETING] = act_request_meeting,
    [MB_A_MAKE_APPOINTMENT] = act_make_appointment,
    [MB_A_BROWSE_CALENDAR] = act_browse_calendar,
    [MB_A_JOURNAL_APPS] = act_journal,
    [MB_A_LOGOFF] = NULL, /* one step */
    [MB_A_BROWSE_CONTACTS] = act_browse_contacts,
    [MB_A_CREATE_CONTACT] = act_create_contact,
};

static int next_step(struct mb_behave *b, const struct mb_behave_env *env,
		     struct mb_behave_self *me, const struct mb_step_result *res,
		     struct mb_step *out)
{
	switch (b->action) {
	case MB_TASK_LOGON:
		return one_step(b, res, MB_STEP_LOGON, out);
	case MB_TASK_SYNC:
		return one_step(b, res, MB_STEP_SYNC, out);
	case MB_TASK_KEEPALIVE:
		return one_step(b, res, MB_STEP_KEEPALIVE, out);
	case MB_A_LOGOFF:
		return one_step(b, res, MB_STEP_LOGOFF, out);
	default:
		if (b->action < MB_ACTION_COUNT && acts[b->action])
			return acts[b->action](b, env, me, res, out);
		return MB_EINVAL;
	}
}

/* Whether a step's recipients are resolved first (ResolveNames against
 * the global address list, as Outlook checks names): new mail, forwards
 * and the attendees of a free/busy look-up (a meeting request's attendees
 * were resolved for its free/busy); a reply goes to a known sender.
 * Cached mode resolves against the offline address book (local). */
static bool resolves(const struct mb_behave_env *env, const struct mb_step *s)
{
	if (env->cached || !(env->steps & (1u << MB_STEP_RESOLVE_NAMES)))
		return false;
	if (s->kind == MB_STEP_FREEBUSY)
		return s->nusers > 0;
	return s->kind == MB_STEP_SEND &&
	       (s->msg_kind == MB_MSG_NEW || s->msg_kind == MB_MSG_FORWARD) &&
	       s->nusers + s->nlists > 0;
}

int mb_behave_next(struct mb_behave *b, const struct mb_behave_env *env, struct mb_behave_self *me,
		   const struct mb_step_result *res, struct mb_step *out)
{
	if (res && res->status != 0)
		return res->status < 0 ? res->status : MB_EPROTO;
	if (res && b->has_pending) {
		/* names resolved: the step that needed them */
		*out = b->pending;
		b->has_pending = false;
		b->last = out->kind;
		return 1;
	}
	if (res && b->last == MB_STEP_READ && res->count > 0 && !env->cached &&
	    (env->steps & (1u << MB_STEP_OPEN_ATTACHMENT)) &&
	    mb_rng_unit(me->rng) * 100.0 < env->open_attach_pct) {
		/* the reader opens one of the message's attachments */
		step_init(out, MB_STEP_OPEN_ATTACHMENT, b->reading_folder);
		out->item = b->reading;
		out->aux = (uint32_t)mb_rng_range(me->rng, 1, (int)res->count);
		b->last = out->kind;
		return 1;
	}
	int rc = next_step(b, env, me, res, out);
	if (rc != 1)
		return rc;
	if (out->kind == MB_STEP_READ) {
		b->reading = out->item;
		b->reading_folder = out->folder;
	}
	if (resolves(env, out)) {
		b->pending = *out;
		b->has_pending = true;
		struct mb_step *r = out;
		step_init(r, MB_STEP_RESOLVE_NAMES, b->pending.folder);
		r->users = b->pending.users;
		r->nusers = b->pending.nusers;
		r->lists = b->pending.lists;
		r->nlists = b->pending.nlists;
	}
	b->last = out->kind;
	return 1;
}

#define S(k) (1u << MB_STEP_##k)

uint32_t mb_behave_action_steps(int action, bool cached)
{
	/* the optional steps: paged views, names resolved, attachments opened */
	uint32_t names = cached ? 0 : S(RESOLVE_NAMES), att = cached ? 0 : S(OPEN_ATTACHMENT);
	switch (action) {
	case MB_A_SEND_MAIL:
		return S(SEND) | names;
	case MB_A_PROCESS_INBOX:
		return S(LIST_FOLDER) | S(SEND) | S(MOVE) | S(DELETE) |
		       (cached ? 0 : S(READ) | S(CLOSE_VIEW) | S(NEXT_ROWS) | names | att);
	case MB_A_BROWSE_MAIL:
		return cached ? 0 : S(LIST_FOLDER) | S(READ) | S(CLOSE_VIEW) | att;
	case MB_A_CHECK_FREEBUSY:
		return S(FREEBUSY) | names;
	case MB_A_REQUEST_MEETING:
		return S(FREEBUSY) | S(CREATE_APPOINTMENT) | S(SEND) | names;
	case MB_A_MAKE_APPOINTMENT:
		return S(CREATE_APPOINTMENT) | (cached ? 0 : S(CALENDAR_RANGE));
	case MB_A_BROWSE_CALENDAR:
		return cached ? 0 : S(CALENDAR_RANGE) | S(READ) | att;
	case MB_A_JOURNAL_APPS:
		return S(CREATE_APPOINTMENT);
	case MB_A_LOGOFF:
		return S(LOGOFF);
	case MB_A_BROWSE_CONTACTS:
		return cached ? 0 : S(LIST_CONTACTS) | S(READ) | att;
	case MB_A_CREATE_CONTACT:
		return S(CREATE_CONTACT);
	case MB_TASK_LOGON:
		return S(LOGON);
	case MB_TASK_SYNC:
		return S(SYNC);
	case MB_TASK_KEEPALIVE:
		return S(KEEPALIVE);
	default:
		return 0;
	}
}
