/* counters.c: the counters table materialised from MB_COUNTER_TABLE. */
#include "core/counters.h"
#include "core/error.h"

#include <string.h>

const struct mb_counter_def mb_counters[MB_COUNTER_COUNT] = {
#define MB_X_DEF(id, key, label, unit, kind, src, dec, def)                                        \
	[MB_C_##id] = {MB_C_##id, key, label, unit, kind, src, dec, def},
    MB_COUNTER_TABLE(MB_X_DEF)
#undef MB_X_DEF
};

int mb_counter_find(const char *key, enum mb_counter_id *out)
{
	for (int i = 0; i < MB_COUNTER_COUNT; i++) {
		if (strcmp(mb_counters[i].key, key) == 0) {
			*out = (enum mb_counter_id)i;
			return 0;
		}
	}
	return MB_ENOTFOUND;
}
