/* score.c: the one LoadSim score (definition and source in score.h). */
#include "core/score.h"

#include <stddef.h>

#include "core/error.h"

int mb_score_ns(const struct mb_hist *const hists[MB_ACTION_COUNT], const double *weights,
		uint64_t *out_ns)
{
	struct mb_hist *all = NULL;
	int rc = mb_hist_create(&all);
	if (rc != 0)
		return rc;
	for (int a = 0; a < MB_ACTION_COUNT; a++)
		if (hists[a] && weights[a] > 0)
			mb_hist_merge(all, hists[a]);
	rc = MB_ENOTFOUND;
	if (mb_hist_count(all) > 0) {
		*out_ns = mb_hist_percentile_ns(all, MB_SCORE_PERCENTILE);
		rc = 0;
	}
	mb_hist_destroy(all);
	return rc;
}
