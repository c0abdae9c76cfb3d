/* faults.h: fault injection during a run (`mailbench run --fault SPEC`, the
 * console's fault key) and the recovery it measures.
 *
 * A spec is TYPE@T[:ARG][+DUR]: T seconds after the load started (suffix s
 * or m; the console injects at once), for DUR seconds where the fault lasts:
 *   kill-store@T            SIGKILL the store; the session restarts it on
 *                           the same port and it recovers from its logs
 *   disk-full@T[:SIZE][+DUR]  a file of SIZE (K/M/G; default: until the
 *                           file system is full) in the data directory's
 *                           file system, removed after DUR (default 20 s)
 *   io-error@T[:MODE][:FILES][+DUR]  the store's I/O fails through the
 *                           engine's fault-injecting I/O layer, toggled over
 *                           the stats channel: MODE eio (reads and writes;
 *                           default), enospc (writes) or fsync; FILES log
 *                           (default), db (database files) or all; 10 s
 *   slow-disk@T:MS[+DUR]    every engine I/O of the store waits MS ms first
 *                           (default 20 ms, 10 s)
 *   low-disk@T[:MB][+DUR]   the store's I/O layer answers that its file
 *                           systems have MB MiB free (default 0), so its
 *                           free-space reserve refuses new content (10 s)
 *   net-drop@T:S            the store stops reading its connections for S
 *                           seconds (default 5)
 *
 * Timeline and recovery (one record per fault, seconds since the load
 * started): injected at at_s, cause removed at end_s; recovery_s is the
 * time from end_s to the first action the load engine completed
 * successfully after end_s (its own monotonic timestamp, so not limited to
 * the 1 s windows); failed_during the actions that failed in the windows
 * from at_s until then.  Storage groups the store reports in the ERROR
 * state are collected here too (any fails the run).
 *
 * States of one fault:  scheduled --T--> active --DUR--> ended --first ok
 * action--> recovered.  An instant fault (kill-store) goes straight to ended.
 */
#ifndef MB_REPORT_FAULTS_H
#define MB_REPORT_FAULTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "report/report.h"

enum mb_fault_kind {
	MB_FK_KILL_STORE,
	MB_FK_DISK_FULL,
	MB_FK_IO_ERROR,
	MB_FK_SLOW_DISK,
	MB_FK_NET_DROP,
	MB_FK_LOW_DISK,
};

struct mb_fault_spec {
	enum mb_fault_kind kind;
	double at_s;	  /* after the load started (ignored when injected now) */
	double dur_s;	  /* how long it lasts (0: instant) */
	uint64_t size;	  /* disk-full: bytes (0: until full) */
	char mode[16];	  /* io-error: eio, enospc, fsync */
	char files[8];	  /* io-error: log, db, all */
	uint32_t ms;	  /* slow-disk */
	uint32_t free_mb; /* low-disk: MiB free */
	char text[64];	  /* the spec as given */
};

/* 0, or MB_EINVAL with err naming the part that is wrong. */
int mb_fault_parse(const char *text, struct mb_fault_spec *out, char *err, size_t errlen);

/* What the injector needs from the session. */
struct mb_fault_ops {
	void *arg;
	/* SIGKILL the store (the session then restarts it); note what was done */
	int (*kill_store)(void *arg, char *note, size_t len);
	/* one JSON control line to the store over its stats channel */
	int (*store_control)(void *arg, const char *line);
	const char *(*data_dir)(void *arg);
};

struct mb_faults;
int mb_faults_create(uv_loop_t *loop, const struct mb_fault_ops *ops, struct mb_faults **out);
/* Undoes what lasts (the fill file) and closes the timers (run the loop
 * once more to finish closing). */
void mb_faults_destroy(struct mb_faults *f);
/* Plan a fault (before the start); MB_EFULL past MB_RUN_MAX_FAULTS. */
int mb_faults_add(struct mb_faults *f, const struct mb_fault_spec *sp);
/* The load started at t0 (monotonic seconds): arm the planned faults and
 * forget the last run's timeline. */
void mb_faults_start(struct mb_faults *f, double t0);
/* Inject now (the console key); MB_ESTATE before the load started. */
int mb_faults_inject(struct mb_faults *f, const struct mb_fault_spec *sp);
/* The run stops: cancel what is scheduled, end what is active. */
void mb_faults_stop(struct mb_faults *f);
/* Whether a store exit now was caused by a kill-store fault (consumed). */
bool mb_faults_store_exit_expected(struct mb_faults *f);
/* The store is listening again after a kill at t (monotonic seconds). */
void mb_faults_store_back(struct mb_faults *f, double t);
/* The store's "x.store" and the load engine's "x" of each window. */
void mb_faults_store_x(struct mb_faults *f, json_t *store_x);
void mb_faults_load_x(struct mb_faults *f, double at, double dt, json_t *load_x);
/* Faults injected so far (this run). */
int mb_faults_count(const struct mb_faults *f);

/* A storage group as the store last reported it (x.store.groups: only
 * groups out of service now or recovered in place this run):
 *   out of service: error, cause, since (monotonic s, this machine);
 *   back in service: error of the last episode, out_s it lasted,
 *   recovered_at (monotonic s). */
struct mb_sg_view {
	int sg;
	bool in_service;
	bool offline;	  /* could not be reopened yet */
	char error[24];	  /* "MB_EIO" */
	char message[64]; /* "input/output error" */
	char cause[96];	  /* "database read failed: db05.mdb page 17" */
	double since;	  /* out of service since */
	double out_s;	  /* the last episode's time out of service */
	double recovered_at;
	uint64_t recoveries;
};
/* Up to max groups, in sg order; returns how many. */
int mb_faults_groups(const struct mb_faults *f, struct mb_sg_view *out, int max);
/* The ack-log check (load/ackcheck.h) of a run with a fault, once the
 * store has stopped: every acknowledged write must be there.  Into h
 * (ack_checked false, ack_note why, when it could not run). */
void mb_faults_ack_check(const char *data, const char *ack_log, struct mb_run_health *h);
/* The timeline and storage-group errors into a summary's health. */
void mb_faults_fill(const struct mb_faults *f, struct mb_run_health *out);

#endif
