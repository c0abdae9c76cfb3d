/* sgstate.c: see sgstate.h.  A group out of service reads
 *   sg2 MB_EIO (input/output error: database read failed: db05.mdb page 17)
 *       since 01:52:07, 4 s, recovering every 2 s
 * and one recovered in place within MB_SG_RECENT_S
 *   sg2 back in service at 01:52:10: recovered in place after 3.1 s out
 *       (MB_EIO: database read failed: db05.mdb page 17)
 * Times of day are local, from the monotonic stamps and the clock now. */
#include "config.h"

#include "ui/sgstate.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/sampler.h"
#include "report/faults.h"
#include "report/session.h"

static void clock_of(double mono, char *buf, size_t len)
{
	time_t t = time(NULL) - (time_t)(mb_now_s() - mono + 0.5);
	struct tm tm;
	if (localtime_r(&t, &tm))
		strftime(buf, len, "%H:%M:%S", &tm);
	else
		snprintf(buf, len, "?");
}

int mb_sg_state_lines(const struct mb_session *s, char (*out)[MB_SG_LINE_W], int max, bool *bad)
{
	struct mb_sg_view v[64];
	int n = mb_session_sg_groups(s, v, 64);
	double now = mb_now_s();
	int nbad = 0, nrec = 0, k = 1;
	*bad = false;
	if (max < 2)
		return 0;
	for (int i = 0; i < n && k < max; i++) {
		char at[16];
		const char *cause = v[i].cause[0] ? ": " : "";
		if (!v[i].in_service) {
			clock_of(v[i].since, at, sizeof(at));
			snprintf(out[k++], MB_SG_LINE_W, "sg%d %s (%s%s%s) since %s, %.0f s, %s",
				 v[i].sg, v[i].error, v[i].message, cause, v[i].cause, at,
				 now - v[i].since,
				 v[i].offline ? "cannot be reopened yet, retried every 2 s"
					      : "recovering in place");
			nbad++;
		} else if (now - v[i].recovered_at <= MB_SG_RECENT_S) {
			clock_of(v[i].recovered_at, at, sizeof(at));
			snprintf(out[k++], MB_SG_LINE_W,
				 "sg%d back in service at %s: recovered in place after %.1f s out "
				 "(%s%s%s)",
				 v[i].sg, at, v[i].out_s, v[i].error, cause, v[i].cause);
			nrec++;
		}
	}
	if (!nbad && !nrec)
		return 0;
	*bad = nbad > 0;
	if (nbad)
		snprintf(out[0], MB_SG_LINE_W, "STORAGE GROUP ERROR: %d group%s refusing writes",
			 nbad, nbad == 1 ? "" : "s");
	else
		snprintf(out[0], MB_SG_LINE_W, "storage group%s recovered in place",
			 nrec == 1 ? "" : "s");
	return k;
}

bool mb_sg_state_line(const struct mb_session *s, char *line, size_t len, bool *bad)
{
	char l[9][MB_SG_LINE_W];
	int n = mb_sg_state_lines(s, l, 9, bad);
	if (!n)
		return false;
	size_t used = (size_t)snprintf(line, len, "%s", l[0]);
	for (int i = 1; i < n && used < len; i++)
		used +=
		    (size_t)snprintf(line + used, len - used, "%s%s", i == 1 ? ": " : "; ", l[i]);
	return true;
}
