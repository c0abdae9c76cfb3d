/* screens/capacity.h: the capacity screen's search (report/capacity.h),
 * which the console stops when it quits (ui/screens/capacity.c). */
#ifndef MB_UI_SCREENS_CAPACITY_H
#define MB_UI_SCREENS_CAPACITY_H

#include <stdbool.h>

#include "ui/console.h"

void mb_capscreen_draw(struct mb_console *c, int top, int h);
/* A key on the capacity screen: true when it was the screen's. */
bool mb_capscreen_key(struct mb_console *c, int key);
/* Stop the search (quit); true while its children still run. */
bool mb_capscreen_stop(struct mb_console *c);
void mb_capscreen_free(struct mb_console *c);

#endif
