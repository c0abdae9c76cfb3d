/* engine.h: the load engine: simulated users on libuv loops.
 *
 * One loop per thread (one per core by default); users are sharded over
 * the loops (user i on loop i % threads) and never get a thread of their
 * own.  Each user logs on during the ramp-up, then runs the scenario's
 * actions as they arrive (sched.h) against the target: a driver
 * (target.h) speaks its protocol; actions the driver cannot run are not
 * scheduled (mb_engine_unsupported).  An engine may run a slice of the
 * simulated population (first .. first + count - 1): recipients are drawn
 * from the whole population, and what it measures (acks, user-days) is
 * exactly its slice's.  Each
 * loop records into its own measurement set and publishes it to the engine
 * under a mutex a few times a second; mb_engine_collect() moves everything
 * published so far into the caller's set, so windows add up exactly.
 * Lifecycle: create -> start -> (collect ...) -> stop -> destroy.
 */
#ifndef MB_LOAD_ENGINE_H
#define MB_LOAD_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/scenario.h"
#include "core/topology.h"
#include "load/loadstats.h"
#include "load/target.h"

struct mb_engine_opts {
	const struct mb_scenario *sc;	    /* borrowed, outlives the engine */
	const struct mb_topology *topo;	    /* borrowed, outlives the engine */
	const struct mb_target_cfg *target; /* driver, numeric ADDR:PORT per connection, options */
	const struct mb_target_ops *ops;    /* NULL: the built-in driver target->driver names */
	int users;			    /* simulated population: the first N topology users */
	int first;			    /* the slice this engine runs: users first .. */
	int count;			    /*   first + count - 1 (count 0: all N) */
	double accel;			    /* > 0 */
	double ramp_s;			    /* logons spread over this many seconds */
	int threads;			    /* loops, >= 1 */
	uint64_t seed;
	int ack_fd;	  /* ack log (O_APPEND), or -1 */
	bool compression; /* ask for compression (LZ77+DIRECT2) at logon */
	bool notify;	  /* ask for new-mail notifications */
};

struct mb_engine;

int mb_engine_create(const struct mb_engine_opts *o, struct mb_engine **out);
/* Start the loop threads (logons begin, spread over the ramp). */
int mb_engine_start(struct mb_engine *e);
/* Add everything the loops measured since the last collect into dst. */
void mb_engine_collect(struct mb_engine *e, struct mb_load_stats *dst);
/* Users logged on now. */
int mb_engine_users_on(struct mb_engine *e);
/* Simulated user-days so far (sum over started users of their time since
 * their first logon attempt, x accel / 8 hours); once stopped, up to the
 * moment mb_engine_stop() was called. */
double mb_engine_user_days(struct mb_engine *e);
/* Ask every loop to stop, close its connections and join the threads. */
void mb_engine_stop(struct mb_engine *e);
void mb_engine_destroy(struct mb_engine *e);

/* The driver and the actions it cannot run (bit per enum mb_action_id). */
const struct mb_target_ops *mb_engine_target(const struct mb_engine *e);
uint32_t mb_engine_unsupported(const struct mb_engine *e);
/* The run's first TLS failure ("127.0.0.1:993: TLS handshake: certificate
 * verify failed: self-signed certificate"), or NULL. */
const char *mb_engine_tls_error(const struct mb_engine *e);

/* Bytes of process memory per simulated user that the engine itself
 * allocated for its user structures (not the kernel's socket buffers). */
size_t mb_engine_user_struct_bytes(const struct mb_engine *e);

#endif
