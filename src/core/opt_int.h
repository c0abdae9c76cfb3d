/* opt_int.h: what the option-table engine's files (opt.c, optout.c,
 * optcmd.c) share and nothing else includes: a table's instances (its
 * families expanded into one entry per member), the defaults and the
 * choice-list helpers.
 */
#ifndef MB_CORE_OPT_INT_H
#define MB_CORE_OPT_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/opt.h"

struct inst {
	char path[128];
	const struct mb_opt *o;
	size_t off, aux;
	const char *label;
	bool set;
	int file, line;	  /* where it was set (file: index in ld->files) */
	int gfile, gline; /* where its group was last seen */
};

struct insts {
	int n;
	struct inst *v;
};

/* Expand t's families into out->v (free it); 0 or MB_ENOMEM. */
int mb__opt_insts_build(const struct mb_opt_table *t, struct insts *out);
/* Every entry's default into obj. */
void mb__opt_defaults(const struct mb_opt_table *t, void *obj);
/* The index of v in a NULL-ended choice list, or -1. */
int mb__opt_choice_index(const char *const *choices, const char *v);
/* "\"a\", \"b\"": a choice list for messages. */
void mb__opt_choices_text(const char *const *choices, char *buf, size_t len);

#endif
