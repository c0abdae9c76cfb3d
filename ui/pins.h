/* pins.h: pinned saved runs and their comparison (the runs screen). */
#ifndef MB_UI_PINS_H
#define MB_UI_PINS_H

#include "ui/console.h"

/* Index of the pinned run saved at path, -1 if not pinned. */
int mb_pins_find(const struct mb_console *c, const char *path);
/* Pin (a copy of s) or unpin the run saved at path. */
void mb_pins_toggle(struct mb_console *c, const char *path, const struct mb_run_summary *s);
void mb_pins_free(struct mb_console *c);
/* The comparison of the pinned runs with the live run in h lines at top;
 * returns the lines used (0: nothing pinned). */
int mb_pins_draw(struct mb_console *c, int top, int h);

#endif
