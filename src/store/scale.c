/* scale.c: the scaling rules of a data directory built at a fraction of
 * its scenario (init --scale): mailbox contents scale with the fraction
 * (mb_mailbox_profile_scale, core/mailbox.h: a non-zero count never drops
 * below one, the folder structure and the message size do not); the
 * database cache keeps the published
 * cache-to-data ratio for the users at the fraction, never below
 * MB_STORE_MIN_CACHE_MB.  init and the store both use these (store.h).
 */
#include "config.h"

#include "store/store.h"

double mb_store_scaled_cache_mb(const struct mb_scenario *sc, int users, double scale)
{
	double mb = (double)sc->db_cache_mb * scale * (double)users /
		    (double)(sc->users > 0 ? sc->users : users);
	return mb < MB_STORE_MIN_CACHE_MB ? MB_STORE_MIN_CACHE_MB : mb;
}
