/* runopts.c: shared options of `run` and `console` (see runopts.h). */
#include "report/runopts.h"

#include <stdio.h>

#include "core/opt.h"
#include "core/tls.h"
#include "load/target.h"

void mb_runopts_init(void *args) { mb_session_params_default(args); }

void mb_runopts_tls_argv(const struct mb_target_cfg *tc, struct mb_argv *av)
{
	if (tc->tls[0] == MB_TLS_STARTTLS || tc->tls[1] == MB_TLS_STARTTLS)
		mb_argv_add(av, "tls", "starttls");
	if (tc->tls_ca[0])
		mb_argv_add(av, "tls-ca", tc->tls_ca);
	if (tc->tls_insecure)
		mb_argv_add(av, "tls-insecure", NULL);
}

void mb_runopts_url(const struct mb_target_cfg *tc, int conn, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s://%s", conn ? "smtp" : "imap",
		 tc->tls[conn] == MB_TLS_IMPLICIT ? "s" : "", tc->address[conn]);
}
