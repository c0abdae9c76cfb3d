/* cmd_store.c: `mailbench store`: serve a data directory over the wire
 * protocol until SIGTERM/SIGINT (then finish in-flight work, checkpoint and
 * exit 0).  Prints "listening on ADDR:PORT" on stdout (flushed) once the
 * socket is bound, so scripts and the supervisor can read the port. */
#include "config.h"

#include "cmd.h"
#include "core/options.h"
#include "core/error.h"
#include "store/store.h"

#include <fcntl.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store_args {
	char data[MB_PATH_MAX];
	const char *listen;
	int stats_fd, compression, compress_min, max_connections, idle_timeout;
	int logon_timeout, frame_timeout, prelogon_frame, partial_budget_mb;
	int held_session_mb, held_store_mb, min_free_mb;
	double cache_mb;
	int write_max_kb;
	const char *dump_payloads;
};

/* --listen ADDR:PORT into host (brackets of an IPv6 address removed). */
static int parse_listen(const char *arg, char *host, size_t hlen, int *port)
{
	const char *colon = strrchr(arg, ':');
	char *end;
	if (!colon || colon == arg || (size_t)(colon - arg) >= hlen) {
		fprintf(stderr, "mailbench store: --listen: '%s' is not ADDR:PORT\n", arg);
		return MB_EXIT_USAGE;
	}
	errno = 0;
	long v = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || v < 0 || v > 65535) {
		fprintf(stderr,
			"mailbench store: --listen: '%s' must be an integer from 0 to 65535\n",
			colon + 1);
		return MB_EXIT_USAGE;
	}
	memcpy(host, arg, (size_t)(colon - arg));
	host[colon - arg] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	*port = (int)v;
	return 0;
}

/* The checks of the arguments alone (--check-args runs them too). */
static int store_check(void *args)
{
	const struct store_args *a = args;
	char host[256];
	int port;
	return parse_listen(a->listen, host, sizeof(host), &port) ? MB_EXIT_USAGE : 0;
}

static int store_main(void *args, int argc, char **argv)
{
	const struct store_args *a = args;
	struct mb_store_opts o;
	char host[256];
	(void)argc;
	(void)argv;

	mb_store_opts_init(&o);
	o.install_signals = true;
	o.data = a->data;
	if (parse_listen(a->listen, host, sizeof(host), &o.port))
		return MB_EXIT_USAGE;
	if (a->stats_fd >= 0 && fcntl(a->stats_fd, F_GETFD) < 0) {
		fprintf(stderr, "mailbench store: --stats-fd: %d is not open\n", a->stats_fd);
		return MB_EXIT_USAGE;
	}
	o.listen_host = host;
	o.stats_fd = a->stats_fd;
	o.compression = a->compression;
	o.compress_min = (uint32_t)a->compress_min;
	o.cache_mb = a->cache_mb;
	o.write_max_kb = a->write_max_kb;
	o.max_connections = a->max_connections;
	o.idle_timeout_s = a->idle_timeout;
	o.logon_timeout_s = a->logon_timeout;
	o.frame_timeout_s = a->frame_timeout;
	o.prelogon_frame = (uint32_t)a->prelogon_frame;
	o.partial_budget_mb = a->partial_budget_mb;
	o.held_session_mb = a->held_session_mb;
	o.held_store_mb = a->held_store_mb;
	o.min_free_mb = a->min_free_mb;
	o.dump_payloads = a->dump_payloads;
	/* ~25 threads (database owners, write-back, log writers) would each
	 * get a malloc arena holding on to freed memory: 4 are enough */
	mallopt(M_ARENA_MAX, 4);
	struct mb_store *st;
	char err[1024];
	int rc = mb_store_create(&o, &st, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "mailbench store: %s\n", err);
		return rc == MB_ECONFIG || rc == MB_ENOTFOUND || rc == MB_EINVAL ? MB_EXIT_USAGE
										 : MB_EXIT_RUNTIME;
	}
	printf("listening on %s%s%s:%d\n", strchr(o.listen_host, ':') ? "[" : "", o.listen_host,
	       strchr(o.listen_host, ':') ? "]" : "", mb_store_port(st));
	printf("connections: at most %d (descriptor cap; --max-connections %d)\n",
	       mb_store_conn_cap(st), o.max_connections);
	fflush(stdout);
	rc = mb_store_run(st);
	mb_store_destroy(st);
	if (rc) {
		fprintf(stderr, "mailbench store: closing the databases: %s\n", mb_strerror(rc));
		return MB_EXIT_RUNTIME;
	}
	return MB_EXIT_OK;
}

#define SA struct store_args
static const struct mb_opt store_opts[] = {
    MB_OPTION_DATA(SA, data, 'd', MB_OPT_REQ, NULL),
    {.path = "listen",
     .flag = "listen",
     .sflag = 'l',
     .metavar = "ADDR:PORT",
     .type = MB_OT_ARG,
     .off = offsetof(SA, listen),
     .sdef = "127.0.0.1:0",
     .flags = MB_OPT_NONEMPTY,
     .dtext = "127.0.0.1:0",
     .help = "address to listen on (port 0 picks a free port)"},
    MB_OPTION_STATS_FD(SA, stats_fd, 'f'),
    MB_OPTION_COMPRESSION(SA, compression, 'c', 1, "on"),
    {.path = "compress-min",
     .flag = "compress-min",
     .sflag = 'm',
     .metavar = "BYTES",
     .type = MB_OT_INT,
     .off = offsetof(SA, compress_min),
     .def = 256,
     .min = 0,
     .max = MB_COMPRESS_MIN_MAX,
     .dtext = "256",
     .help = "compress payloads of at least BYTES"},
    MB_OPTION_CACHE_MB(SA, cache_mb, 'C', 0, 0, "the scaled size in DIR/topology.json"),
    {.path = "write-max-kb",
     .flag = "write-max-kb",
     .metavar = "KB",
     .type = MB_OT_INT,
     .off = offsetof(SA, write_max_kb),
     .def = 0,
     .min = 0,
     .max = 1024,
     .dtext = "write_max_kb in DIR/topology.json",
     .help = "largest database write: runs of consecutive pages up to KB; below a "
	     "page's size each page by itself (a run passes its scenario's "
	     "topology.write_max_kb)"},
    {.path = "max-connections",
     .flag = "max-connections",
     .sflag = 'n',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(SA, max_connections),
     .def = 20000,
     .min = 1,
     .max = 1000000,
     .dtext = "20000",
     .help = "client connections at most"},
    {.path = "idle-timeout",
     .flag = "idle-timeout",
     .sflag = 'i',
     .metavar = "S",
     .type = MB_OT_INT,
     .off = offsetof(SA, idle_timeout),
     .def = 1800,
     .min = 1,
     .max = MB_DURATION_MAX,
     .dtext = "1800",
     .help = "close connections idle for S seconds"},
    {.path = "logon-timeout",
     .flag = "logon-timeout",
     .sflag = 'L',
     .metavar = "S",
     .type = MB_OT_INT,
     .off = offsetof(SA, logon_timeout),
     .def = 30,
     .min = 1,
     .max = 86400,
     .dtext = "30",
     .help = "close a connection not logged on S seconds after it connected"},
    {.path = "frame-timeout",
     .flag = "frame-timeout",
     .sflag = 'F',
     .metavar = "S",
     .type = MB_OT_INT,
     .off = offsetof(SA, frame_timeout),
     .def = 30,
     .min = 1,
     .max = 86400,
     .dtext = "30",
     .help = "close a connection whose frame, once begun, is not complete within S seconds"},
    {.path = "prelogon-frame",
     .flag = "prelogon-frame",
     .sflag = 'P',
     .metavar = "BYTES",
     .type = MB_OT_INT,
     .off = offsetof(SA, prelogon_frame),
     .def = MB_STORE_PRELOGON_FRAME,
     .min = 256,
     .max = 4 << 20,
     .dtext = "65536",
     .help = "largest frame before logon"},
    {.path = "partial-budget-mb",
     .flag = "partial-budget-mb",
     .sflag = 'B',
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(SA, partial_budget_mb),
     .def = 256,
     .min = 4,
     .max = 1 << 20,
     .dtext = "256",
     .help = "MiB of partial frames of all connections; the connection that passes it is "
	     "closed"},
    {.path = "held-session-mb",
     .flag = "held-session-mb",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(SA, held_session_mb),
     .def = MB_STORE_HELD_SESSION_MB,
     .min = 1,
     .max = 1 << 20,
     .dtext = "64",
     .help = "MiB a logged-on session's handles may hold (drafts, open streams, sync "
	     "states); an operation that would pass it fails (MB_EFULL)"},
    {.path = "held-store-mb",
     .flag = "held-store-mb",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(SA, held_store_mb),
     .def = MB_STORE_HELD_MB,
     .min = 1,
     .max = 1 << 20,
     .dtext = "1024",
     .help = "MiB all sessions' handles may hold together; an operation that would pass it "
	     "fails (MB_EFULL)"},
    {.path = "min-free-mb",
     .flag = "min-free-mb",
     .metavar = "N",
     .type = MB_OT_INT,
     .off = offsetof(SA, min_free_mb),
     .def = MB_STORE_MIN_FREE_MB,
     .min = 0,
     .max = 1 << 24,
     .dtext = "256",
     .help = "MiB that must stay free in the data (and log) directory's file system: below it "
	     "operations that add content (new messages, string edits, submissions, copies, "
	     "imports, moves other than into Deleted Items) fail (MB_ELOWDISK) while reads, "
	     "flags, moves into Deleted Items and deletes go on; 0: off"},
    {.path = "dump-payloads",
     .flag = "dump-payloads",
     .metavar = "FILE",
     .type = MB_OT_ARG,
     .off = offsetof(SA, dump_payloads),
     .sdef = "",
     .dtext = "off",
     .help = "write every payload received and sent, before compression, to FILE (created "
	     "0600): a byte Q, R or N, a 32-bit little-endian length, the bytes; for "
	     "bench/rpc-compression.sh"},
};

const struct mb_cmd_entry mb_cmd_store_entry = {
    .name = "store",
    .usage = "--data DIR [--listen ADDR:PORT] [--stats-fd N] [OPTIONS]",
    .summary = "the mailbox store server",
    .about = "Serve the mailboxes of DIR (made by `mailbench init`) over the mailbench wire\n"
	     "protocol (docs/PROTOCOL.md).  Prints \"listening on ADDR:PORT\" when ready.\n"
	     "A DIR initialised by a mailbench of another content version (init.state's\n"
	     "version) is refused (exit 2): its rows are laid out otherwise.\n"
	     "SIGTERM or SIGINT: finish the requests in flight, checkpoint, exit 0.  After a\n"
	     "crash (SIGKILL) the next start recovers from the logs.\n"
	     "Connections are also capped below the descriptor limit (RLIMIT_NOFILE, raised to\n"
	     "its hard limit) less 32 + 4 per storage group kept for the engine's own files;\n"
	     "at that cap accepting pauses until a connection closes (the cap is printed at\n"
	     "start).  A storage group whose log fails, or whose database file fails a read,\n"
	     "a write (EIO) or an fsync, enters the ERROR state: the store says so on stderr\n"
	     "and in its stats (naming the error, e.g. MB_ENOSPC, MB_EROFS or MB_EIO, and what\n"
	     "failed),\n"
	     "refuses that group's writes and recovers it in place (closes it, replays its\n"
	     "log, reopens it) every 2 s until it is back in service.",
    .epilog = "exit codes: 0 stopped cleanly, 2 usage or input error, 3 runtime failure",
    .opts = store_opts,
    .nopts = (int)(sizeof(store_opts) / sizeof(store_opts[0])),
    .args_size = sizeof(struct store_args),
    .check = store_check,
    .run = store_main,
};
