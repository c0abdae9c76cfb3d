/* sgstate.h: the console's lines about storage groups out of service or
 * recovered in place (which group, which error and cause, since when, back
 * after how long), from the store's stats stream (report/faults.h,
 * mb_session_sg_groups). */
#ifndef MB_UI_SGSTATE_H
#define MB_UI_SGSTATE_H

#include <stdbool.h>
#include <stddef.h>

struct mb_session;

#define MB_SG_LINE_W 200
/* A recovery stays on the screen this long after it. */
#define MB_SG_RECENT_S 30.0

/* Fills out[0] with a heading and out[1..] with one line per group; returns
 * the lines (0: nothing to say).  *bad: a group is out of service now. */
int mb_sg_state_lines(const struct mb_session *s, char (*out)[MB_SG_LINE_W], int max, bool *bad);
/* The same joined into one line of at most len bytes ("HEADING: sg1 ...; sg2 ..."). */
bool mb_sg_state_line(const struct mb_session *s, char *line, size_t len, bool *bad);

#endif
