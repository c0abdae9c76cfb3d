/* target.c: the built-in drivers and the target configuration helpers
 * (see target.h).  Adding a driver: one file under src/load/drivers/
 * defining a const struct mb_target_ops, one line in mb_targets[]. */
#include "load/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/tls.h"

extern const struct mb_target_ops mb_target_mbstore;
extern const struct mb_target_ops mb_target_null;
extern const struct mb_target_ops mb_target_imap;

const struct mb_target_ops *const mb_targets[] = {
    &mb_target_mbstore,
    &mb_target_null,
    &mb_target_imap,
    NULL,
};

const struct mb_target_ops *mb_target_find(const char *name)
{
	for (int i = 0; name && mb_targets[i]; i++)
		if (!strcmp(mb_targets[i]->name, name))
			return mb_targets[i];
	return NULL;
}

const char *mb_target_opt(const struct mb_target_env *env, const struct mb_target_ops *ops,
			  const char *name)
{
	const struct mb_target_cfg *cfg = env ? env->cfg : NULL;
	for (int i = 0; cfg && i < cfg->nopts; i++)
		if (!strcmp(cfg->opts[i].key, name))
			return cfg->opts[i].value;
	for (int i = 0; ops && ops->opts && ops->opts[i].name; i++)
		if (!strcmp(ops->opts[i].name, name))
			return ops->opts[i].def;
	return NULL;
}

int mb_target_scenario_check(const struct mb_scenario *sc, uint32_t *unsupported)
{
	const struct mb_target_ops *ops =
	    mb_target_find(sc->target_driver[0] ? sc->target_driver : "mbstore");
	*unsupported = 0;
	if (!ops)
		return MB_ENOTFOUND;
	for (int a = 0; a < MB_ACTION_COUNT; a++)
		if (!mb_target_supports(ops, a) && sc->actions_per_day[a] > 0)
			*unsupported |= 1u << a;
	return 0;
}

void mb_target_cfg_default(struct mb_target_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->driver, sizeof(cfg->driver), "mbstore");
}

/* An address is "HOST:PORT" with a port 1..65535 (HOST may be [v6]). */
static bool is_address(const char *s)
{
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s || !colon[1])
		return false;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	long port = strtol(colon + 1, NULL, 10);
	return port >= 1 && port <= 65535 &&
	       strlen(s) < sizeof(((struct mb_target_cfg *)0)->address[0]);
}

int mb_target_cfg_parse(struct mb_target_cfg *cfg, const char *arg)
{
	if (!arg || !*arg)
		return MB_EINVAL;
	if (!strncmp(arg, "imaps://", 8)) {
		if (!is_address(arg + 8))
			return MB_EINVAL;
		snprintf(cfg->driver, sizeof(cfg->driver), "imap");
		snprintf(cfg->address[0], sizeof(cfg->address[0]), "%s", arg + 8);
		cfg->tls[0] = MB_TLS_IMPLICIT;
		return 0;
	}
	const char *colon = strchr(arg, ':');
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
	char name[sizeof(cfg->driver)];
	if (n < sizeof(name)) {
		memcpy(name, arg, n);
		name[n] = '\0';
		if (mb_target_find(name)) {
			snprintf(cfg->driver, sizeof(cfg->driver), "%s", name);
			if (!colon)
				return 0;
			arg = colon + 1;
			if (!strncmp(arg, "//", 2)) /* URL form: imap://HOST:PORT */
				arg += 2;
		}
	}
	if (!is_address(arg))
		return MB_EINVAL;
	snprintf(cfg->address[0], sizeof(cfg->address[0]), "%s", arg);
	if (cfg->tls[0] == MB_TLS_IMPLICIT)
		cfg->tls[0] = MB_TLS_NONE;
	return 0;
}

int mb_target_cfg_submit(struct mb_target_cfg *cfg, const char *arg)
{
	uint8_t mode = MB_TLS_NONE;
	if (!strncmp(arg, "smtp://", 7)) {
		arg += 7;
	} else if (!strncmp(arg, "smtps://", 8)) {
		arg += 8;
		mode = MB_TLS_IMPLICIT;
	}
	if (!is_address(arg))
		return MB_EINVAL;
	snprintf(cfg->address[1], sizeof(cfg->address[1]), "%s", arg);
	cfg->tls[1] = mode;
	return 0;
}

int mb_target_cfg_tls(struct mb_target_cfg *cfg, int opt)
{
	if (opt == 0)
		return 0;
	const struct mb_target_ops *ops = mb_target_find(cfg->driver);
	if (opt == 2 && (!ops || !ops->secured)) /* implicit: only a driver that speaks TLS */
		return MB_EINVAL;
	for (int i = 0; i < MB_TARGET_CONNS_MAX; i++)
		if (cfg->tls[i] == MB_TLS_NONE)
			cfg->tls[i] = opt == 1 ? MB_TLS_STARTTLS : MB_TLS_IMPLICIT;
	return 0;
}
