/* lab_int.h: the lab's state, shared by lab.c (its servers' processes)
 * and labconf.c (their configuration files); nothing outside src/lab. */
#ifndef MB_LAB_INT_H
#define MB_LAB_INT_H

#include <sys/types.h>
#include <time.h>

#include "lab/lab.h"

struct mb_lab {
	struct mb_lab_opts o;
	struct mb_lab_info info;
	char conf[4200], pfconf[4200], pfpid[4200];
	pid_t dv_child;		    /* dovecot -F (the master itself) */
	pid_t pf_child;		    /* postfix start-fg (postfix-script, parent of master) */
	struct timespec pf_started; /* when pf_child was spawned (CLOCK_REALTIME_COARSE) */
	double dv_next_restart;
	int dv_backoff_ms;
};

/* labconf.c: DATA/lab/dovecot.conf for a master run as uid/user with
 * ncpu processes per service; Postfix's main.cf and master.cf (0 or a
 * negative error code). */
int mb__lab_write_dovecot_conf(struct mb_lab *l, unsigned uid, const char *user, int ncpu);
int mb__lab_write_postfix_conf(struct mb_lab *l);

#endif
