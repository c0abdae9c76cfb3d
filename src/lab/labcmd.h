/* labcmd.h: what the lab part's commands share: the accounts of a data
 * directory (DIR/accounts.json: users, passwords, distribution lists, in
 * the topology file format), read when present, else generated for the
 * scenario and written there. */
#ifndef MB_LAB_LABCMD_H
#define MB_LAB_LABCMD_H

#include <stddef.h>

#include "core/topology.h"

/* 0 and *out (created: 1 when generated now), or an MB_E* code with err. */
int mb_lab_accounts(const char *data, const char *scenario, int users, struct mb_topology **out,
		    int *created, char *err, size_t errlen);

#endif
