/* sig.c: see sig.h. */
#include "config.h"

#include "core/sig.h"

#include <signal.h>

void mb_signals_absorb(void)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
}
