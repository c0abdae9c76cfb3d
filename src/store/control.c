/* control.c: control lines from the supervisor, which arrive on the stats
 * channel (a socket pair) and are read by a control thread: faults injected
 * into the engine's I/O layer (the fault wrapper of db/io.h, armed and
 * cleared there) and "net-drop" (the loop stops reading every connection
 * for S seconds; handed to the loop thread through ctl_async).
 *
 * Lines (JSON, one per line): {"fault":"io-error","mode":"eio|enospc|fsync"},
 * {"fault":"slow-disk","ms":N}, {"fault":"low-disk","mb":N} (the file
 * systems' free space reads N MiB: the reserve of reserve.c, without
 * filling a disk), {"fault":"clear"}, {"fault":"net-drop","s":S}.
 * Anything else is ignored; an over-long line is dropped.
 */
#include "config.h"

#include "store/control.h"
#include "store/loop.h"
#include "store/net.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void ctl_line(struct mb_store *st, const char *line)
{
	struct loop_state *ls = st->loop_state;
	json_error_t je;
	json_t *j = json_loads(line, 0, &je);
	const char *fault = json_string_value(json_object_get(j, "fault"));
	if (!fault) {
		json_decref(j);
		return;
	}
	struct mb_fault_rule r;
	memset(&r, 0, sizeof(r));
	r.nth = 1;
	r.sticky = true;
	r.kind = MB_FILE_LOG;
	if (!strcmp(fault, "io-error")) {
		const char *mode = json_string_value(json_object_get(j, "mode"));
		const char *files = json_string_value(json_object_get(j, "files"));
		bool db = files && !strcmp(files, "db"), all = files && !strcmp(files, "all");
		r.kind = db ? MB_FILE_DB : all ? -1 : MB_FILE_LOG;
		if (mode && !strcmp(mode, "enospc")) {
			r.type = MB_FAULT_ENOSPC;
			r.op = MB_FAULT_ON_WRITE;
		} else if (mode && !strcmp(mode, "fsync")) {
			r.type = MB_FAULT_SYNC;
			r.op = MB_FAULT_ON_SYNC;
		} else {
			/* database files: reads and writes; the log: its writes */
			r.type = MB_FAULT_EIO;
			r.op = db || all ? MB_FAULT_ON_ANY : MB_FAULT_ON_WRITE;
		}
		mb_fault_arm(st->fault, &r);
		fprintf(stderr, "mailbench store: injected fault: %s %s fails\n",
			db    ? "database"
			: all ? "every"
			      : "log",
			mode ? mode : "eio");
	} else if (!strcmp(fault, "slow-disk")) {
		r.type = MB_FAULT_DELAY;
		r.op = MB_FAULT_ON_ANY;
		r.kind = -1;
		r.delay_us = (uint32_t)json_integer_value(json_object_get(j, "ms")) * 1000u;
		mb_fault_arm(st->fault, &r);
		fprintf(stderr, "mailbench store: injected fault: every I/O +%u ms\n",
			r.delay_us / 1000);
	} else if (!strcmp(fault, "low-disk")) {
		r.type = MB_FAULT_LOW_DISK;
		r.op = MB_FAULT_ON_ANY;
		r.kind = -1;
		json_int_t mb = json_integer_value(json_object_get(j, "mb"));
		r.free_bytes = (uint64_t)(mb > 0 ? mb : 0) << 20;
		mb_fault_arm(st->fault, &r);
		fprintf(stderr, "mailbench store: injected fault: %lld MiB free\n", (long long)mb);
		mb__reserve_look(st);
	} else if (!strcmp(fault, "clear")) {
		mb_fault_disarm(st->fault);
		mb__reserve_look(st);
		fprintf(stderr, "mailbench store: injected fault cleared\n");
	} else if (!strcmp(fault, "net-drop")) {
		pthread_mutex_lock(&ls->ctl_mu);
		ls->drop_pending_s = json_number_value(json_object_get(j, "s"));
		pthread_mutex_unlock(&ls->ctl_mu);
		uv_async_send(&ls->ctl_async);
	}
	json_decref(j);
}

static void *ctl_main(void *arg)
{
	struct mb_store *st = arg;
	struct loop_state *ls = st->loop_state;
	char buf[4096];
	size_t len = 0;
	while (!atomic_load(&ls->ctl_stop)) {
		struct pollfd pf = {st->o.stats_fd, POLLIN, 0};
		int n = poll(&pf, 1, 200);
		if (n <= 0)
			continue;
		ssize_t r = read(st->o.stats_fd, buf + len, sizeof(buf) - 1 - len);
		if (r <= 0) {
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			break; /* the supervisor closed its end (or it is a plain pipe) */
		}
		len += (size_t)r;
		buf[len] = '\0';
		char *nl;
		while ((nl = strchr(buf, '\n'))) {
			*nl = '\0';
			ctl_line(st, buf);
			len -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, len + 1);
		}
		if (len == sizeof(buf) - 1)
			len = 0; /* an over-long line: dropped */
	}
	return NULL;
}

static void on_drop_end(uv_timer_t *t)
{
	struct mb_store *st = t->data;
	struct loop_state *ls = st->loop_state;
	ls->dropping = false;
	for (struct conn *c = ls->conns; c; c = c->next)
		if (!c->busy && c->out_bytes < MAX_OUT_BYTES)
			mb__net_start_reading(c);
	fprintf(stderr, "mailbench store: reading the connections again\n");
}

static void on_ctl_async(uv_async_t *a)
{
	struct mb_store *st = a->data;
	struct loop_state *ls = st->loop_state;
	pthread_mutex_lock(&ls->ctl_mu);
	double s = ls->drop_pending_s;
	ls->drop_pending_s = 0;
	pthread_mutex_unlock(&ls->ctl_mu);
	if (s <= 0 || ls->stopping)
		return;
	ls->dropping = true;
	for (struct conn *c = ls->conns; c; c = c->next)
		if (c->reading) {
			uv_read_stop((uv_stream_t *)&c->tcp);
			c->reading = false;
		}
	uv_timer_start(&ls->drop_timer, on_drop_end, (uint64_t)(s * 1000.0), 0);
	fprintf(stderr, "mailbench store: injected fault: not reading for %g s\n", s);
}

void mb__ctl_init(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	uv_timer_init(&ls->loop, &ls->drop_timer);
	ls->drop_timer.data = st;
	uv_async_init(&ls->loop, &ls->ctl_async, on_ctl_async);
	ls->ctl_async.data = st;
	pthread_mutex_init(&ls->ctl_mu, NULL);
	ls->ctl_mu_init = true;
}

void mb__ctl_start(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	ls->ctl_started = pthread_create(&ls->ctl_th, NULL, ctl_main, st) == 0;
}

void mb__ctl_stop(struct mb_store *st)
{
	struct loop_state *ls = st->loop_state;
	if (ls->ctl_started) {
		atomic_store(&ls->ctl_stop, true);
		pthread_join(ls->ctl_th, NULL);
		ls->ctl_started = false;
	}
}
