/* runopts.h: the options `mailbench run` and `mailbench console` share
 * (-s, --users, --scale, --accel, --compression, --data, --log-dir,
 * --storage-size, --target, --seed, --cache-mb, --reuse, --load-hosts,
 * --load-procs, --listen, --ack-log): rows of their option tables,
 * declared once.  The args
 * struct T of either command starts with `struct mb_session_params p`, so
 * the console's scenario editor edits a struct mb_session_params with the
 * same entries (the ones marked MB_OPT_CONSOLE). */
#ifndef MB_REPORT_RUNOPTS_H
#define MB_REPORT_RUNOPTS_H

#include "core/options.h"
#include "report/session.h"

#define MB_RUNOPTS(T)                                                                              \
	MB_OPTION_SCENARIO(T, p.scenario, "online", 0, "online"),                                  \
	    MB_OPTION_USERS(T, p.users, "the scenario's run.users"),                               \
	    MB_OPTION_SCALE(T, p.scale, 0), MB_OPTION_ACCEL(T, p.accel, 0),                        \
	    MB_OPTION_COMPRESSION(T, p.compression, 0, -1, "the scenario's run.compression"),      \
	    MB_OPTION_DATA(T, p.data_dir, 0, 0, MB_DEFAULT_DATA_DIR),                              \
	    MB_OPTION_LOG_DIR(T, p.log_dir, 0, "inside the data directory"),                       \
	    {.path = "target",                                                                     \
	     .flag = "target",                                                                     \
	     .metavar = "T",                                                                       \
	     .type = MB_OT_STRING,                                                                 \
	     .off = offsetof(T, p.target),                                                         \
	     .size = MB_FIELD_SIZE(T, p.target),                                                   \
	     .sdef = "",                                                                           \
	     .flags = MB_OPT_CONSOLE,                                                              \
	     .dtext = "the scenario's target (mbstore: the store the run starts)",                 \
	     .help =                                                                               \
		 "the target: mbstore (the embedded store the run starts), lab:dovecot (a "        \
		 "throwaway Dovecot + Postfix the run starts, provisions, checks and "             \
		 "stops), imap[s]://HOST:PORT (a server started elsewhere, with --submit), or "    \
		 "DRIVER[:ADDR:PORT]"},                                                            \
	    {.path = "submit",                                                                     \
	     .flag = "submit",                                                                     \
	     .metavar = "smtp://HOST:PORT",                                                        \
	     .type = MB_OT_STRING,                                                                 \
	     .off = offsetof(T, p.submit),                                                         \
	     .size = MB_FIELD_SIZE(T, p.submit),                                                   \
	     .sdef = "",                                                                           \
	     .flags = MB_OPT_CONSOLE,                                                              \
	     .dtext = "the scenario's target.submission",                                          \
	     .help = "the SMTP submission server of an --target imap:// server (smtps://: TLS)"},  \
	    MB_OPTION_TLS(T, p.tls), MB_OPTION_TLS_CA(T, p.tls_ca),                                \
	    MB_OPTION_TLS_INSECURE(T, p.tls_insecure),                                             \
	    {.path = "server-pids",                                                                \
	     .flag = "server-pids",                                                                \
	     .metavar = "PID[,PID]",                                                               \
	     .type = MB_OT_STRING,                                                                 \
	     .off = offsetof(T, p.server_pids),                                                    \
	     .size = MB_FIELD_SIZE(T, p.server_pids),                                              \
	     .sdef = "",                                                                           \
	     .dtext = "none (the lab's own with lab:dovecot)",                                     \
	     .help = "a server started elsewhere: its master processes, whose process trees "      \
		     "give the server counters (CPU, context switches, virtual bytes, disk)"},     \
	    {.path = "server-cgroup",                                                              \
	     .flag = "server-cgroup",                                                              \
	     .metavar = "PATH",                                                                    \
	     .type = MB_OT_STRING,                                                                 \
	     .off = offsetof(T, p.server_cgroup),                                                  \
	     .size = MB_FIELD_SIZE(T, p.server_cgroup),                                            \
	     .sdef = "",                                                                           \
	     .dtext = "none",                                                                      \
	     .help = "a server started elsewhere: the cgroup (v2) of its processes, for the "      \
		     "server counters"},                                                           \
	    {.path = "storage-size",                                                               \
	     .flag = "storage-size",                                                               \
	     .metavar = "GB",                                                                      \
	     .type = MB_OT_DOUBLE,                                                                 \
	     .off = offsetof(T, p.stress_size_gb),                                                 \
	     .def = 0,                                                                             \
	     .min = MB_STRESS_SIZE_MIN,                                                            \
	     .max = MB_STRESS_SIZE_MAX,                                                            \
	     .dtext = "storage.cfg's database.size_gb",                                            \
	     .help = "size of the storage test's databases, GB"},                                  \
	    MB_OPTION_CACHE_MB(T, p.cache_mb, 0, 0, MB_OPT_CONSOLE,                                \
			       "run.cache_mb, else the published cache-to-data ratio"),            \
	    MB_OPTION_SEED(T, p.seed, 0, -1, MB_OPT_CONSOLE, "the scenario's run.seed"),           \
	    {.path = "reuse",                                                                      \
	     .flag = "reuse",                                                                      \
	     .type = MB_OT_FLAG,                                                                   \
	     .off = offsetof(T, p.reuse),                                                          \
	     .flags = MB_OPT_CONSOLE,                                                              \
	     .help = "run on the data directory as the last run left it (default: restore "        \
		     "the pristine copy init saved)"},                                             \
	    {.path = "load-hosts",                                                                 \
	     .flag = "load-hosts",                                                                 \
	     .metavar = "FILE",                                                                    \
	     .type = MB_OT_STRING,                                                                 \
	     .off = offsetof(T, p.load_hosts),                                                     \
	     .size = MB_FIELD_SIZE(T, p.load_hosts),                                               \
	     .sdef = "",                                                                           \
	     .flags = MB_OPT_CONSOLE,                                                              \
	     .dtext = "none: this machine (one process; more past its open-file limit)",           \
	     .help = "run the load engine through mpirun on the hosts of this Open MPI "           \
		     "hostfile (HOST [slots=N] a line)"},                                          \
	    {.path = "load-procs",                                                                 \
	     .flag = "load-procs",                                                                 \
	     .metavar = "K",                                                                       \
	     .type = MB_OT_INT,                                                                    \
	     .off = offsetof(T, p.load_procs),                                                     \
	     .def = 0,                                                                             \
	     .min = 1,                                                                             \
	     .max = MB_LOAD_PROCS_MAX,                                                             \
	     .flags = MB_OPT_CONSOLE,                                                              \
	     .dtext = "the hostfile's slots; without it, as many as "                              \
		      "the users need at one process's open-file limit",                           \
	     .help = "load engine processes (Open MPI ranks: on the hostfile's hosts, else "       \
		     "on this machine)"},                                                          \
	    {.path = "listen",                                                                     \
	     .flag = "listen",                                                                     \
	     .metavar = "ADDR:PORT",                                                               \
	     .type = MB_OT_STRING,                                                                 \
	     .off = offsetof(T, p.listen),                                                         \
	     .size = MB_FIELD_SIZE(T, p.listen),                                                   \
	     .sdef = "",                                                                           \
	     .flags = MB_OPT_CONSOLE,                                                              \
	     .dtext = "127.0.0.1, a free port",                                                    \
	     .help = "the store's address; one the load hosts reach when they are other "          \
		     "machines (never a wildcard)"},                                               \
	{                                                                                          \
		.path = "ack-log", .flag = "ack-log", .metavar = "FILE", .type = MB_OT_STRING,     \
		.off = offsetof(T, p.ack_log), .size = MB_FIELD_SIZE(T, p.ack_log), .sdef = "",    \
		.dtext = "none",                                                                   \
		.help = "the load engine's acknowledgement log, for mailbench check --ack-log "    \
			"(with --load-hosts: every rank's lines, written here)"                    \
	}

/* Ranks of a load job at most. */
#define MB_LOAD_PROCS_MAX 4096

struct mb_argv;
struct mb_target_cfg;
/* The children's TLS flags (--tls starttls, --tls-ca, --tls-insecure) of
 * a run against target tc, and its URLs: "imap://ADDR" or "imaps://ADDR"
 * (submission: smtp, smtps) by tc's TLS mode of connection conn. */
void mb_runopts_tls_argv(const struct mb_target_cfg *tc, struct mb_argv *av);
void mb_runopts_url(const struct mb_target_cfg *tc, int conn, char *buf, size_t cap);

/* The row's init of either command: the session's defaults (p first). */
void mb_runopts_init(void *args);

#endif
