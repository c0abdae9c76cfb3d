/* options.h: the options that more than one command (or a command and a
 * scenario file) share, declared once.
 *
 * Each MB_OPTION_X(T, field, ...) is THE declaration of option X: its
 * key, flag, type, range and help line; a command puts it in its own
 * table with the offset of the field in its own args struct (and, where
 * commands differ, its short flag, its default and the default's wording).
 * The ranges are the MB_*_MIN / MB_*_MAX below, which the scenario tables
 * (core/scenario.c) use too: a value a scenario file accepts is a value
 * every flag accepts, and the other way round.
 *
 * One range per option (docs/ARCHITECTURE.md, "Options and commands"):
 *   users 1..1,000,000; scale [0.0001, 1]; accel [0.001, 100000];
 *   durations up to 30 days; warm-up and ramp-up up to 1 day;
 *   storage test threads 1..64; storage test size [0.001, 100000] GB;
 *   latency limits (0, 1e12] ms; stats fd 0..65535;
 *   database cache [2, 1,048,576] MiB (decimals allowed); compression
 *   threshold 0..16 MiB; random seed 0..2,147,483,647.
 */
#ifndef MB_CORE_OPTIONS_H
#define MB_CORE_OPTIONS_H

#include <stddef.h>

#include "core/opt.h"
#include "core/scenario.h"

#define MB_USERS_MIN 1
#define MB_USERS_MAX 1000000
#define MB_SCALE_MIN 0.0001
#define MB_SCALE_MAX 1.0
#define MB_ACCEL_MIN 0.001
#define MB_ACCEL_MAX 100000.0
#define MB_DURATION_MAX (30.0 * 86400)
#define MB_WARMUP_MAX 86400.0
#define MB_RAMP_MAX 86400.0
#define MB_STRESS_THREADS_MAX 64
#define MB_STRESS_SIZE_MIN 0.001
#define MB_STRESS_SIZE_MAX 100000.0
#define MB_LATENCY_LIMIT_MIN 0.0 /* excluded: (0, 1e12] */
#define MB_LATENCY_LIMIT_MAX 1e12
#define MB_STATS_FD_MAX 65535
#define MB_CACHE_MB_MIN 2
#define MB_CACHE_MB_MAX 1048576
#define MB_COMPRESS_MIN_MAX (1 << 24)
#define MB_SEED_MAX 2147483647

#define MB_FIELD_SIZE(T, f) sizeof(((T *)0)->f)

/* A scenario: a name under scenarios/ or a .cfg path (help: what it may
 * name; MB_OPTION_SCENARIO: a mailbox scenario). */
#define MB_OPTION_SCENARIO_H(T, f, def, fl, dt, h)                                                 \
	{                                                                                          \
		.path = "scenario", .flag = "scenario", .sflag = 's', .metavar = "SCENARIO",       \
		.type = MB_OT_STRING, .off = offsetof(T, f), .size = MB_FIELD_SIZE(T, f),          \
		.sdef = def, .flags = MB_OPT_NONEMPTY | MB_OPT_CONSOLE | (fl), .dtext = dt,        \
		.help = h                                                                          \
	}
#define MB_OPTION_SCENARIO(T, f, def, fl, dt)                                                      \
	MB_OPTION_SCENARIO_H(T, f, def, fl, dt,                                                    \
			     "scenario: online (1), cached (2), or a .cfg path of kind "           \
			     "\"mailbox\" (the storage test: mailbench storage-test)")

#define MB_OPTION_USERS(T, f, dt)                                                                  \
	{                                                                                          \
		.path = "users", .flag = "users", .sflag = 'u', .metavar = "N", .type = MB_OT_INT, \
		.off = offsetof(T, f), .def = 0, .min = MB_USERS_MIN, .max = MB_USERS_MAX,         \
		.flags = MB_OPT_CONSOLE, .dtext = dt, .help = "simulated users"                    \
	}

#define MB_OPTION_SCALE(T, f, sf)                                                                  \
	{                                                                                          \
		.path = "scale", .flag = "scale", .sflag = sf, .metavar = "F",                     \
		.type = MB_OT_DOUBLE, .off = offsetof(T, f), .def = 0, .min = MB_SCALE_MIN,        \
		.max = MB_SCALE_MAX, .flags = MB_OPT_CONSOLE, .dtext = "the scenario's run.scale", \
		.help = "scale of mailbox contents and database cache (1 = the published profile)" \
	}

#define MB_OPTION_ACCEL(T, f, sf)                                                                  \
	{                                                                                          \
		.path = "accel", .flag = "accel", .sflag = sf, .metavar = "X",                     \
		.type = MB_OT_DOUBLE, .off = offsetof(T, f), .def = 0, .min = MB_ACCEL_MIN,        \
		.max = MB_ACCEL_MAX, .flags = MB_OPT_CONSOLE, .dtext = "the scenario's run.accel", \
		.help = "compress the 8-hour day X times"                                          \
	}

extern const char *const mb_onoff[]; /* "off", "on": index = value */
#define MB_OPTION_COMPRESSION(T, f, sf, d, dt)                                                     \
	{                                                                                          \
		.path = "compression", .flag = "compression", .sflag = sf, .type = MB_OT_ENUM,     \
		.off = offsetof(T, f), .def = d, .choices = mb_onoff, .flags = MB_OPT_CONSOLE,     \
		.dtext = dt, .help = "LZ77+DIRECT2 compression of RPC payloads"                    \
	}

#define MB_OPTION_DATA(T, f, sf, fl, dt)                                                           \
	{                                                                                          \
		.path = "data", .flag = "data", .sflag = sf, .metavar = "DIR",                     \
		.type = MB_OT_STRING, .off = offsetof(T, f), .size = MB_FIELD_SIZE(T, f),          \
		.sdef = MB_DEFAULT_DATA_DIR, .flags = MB_OPT_NONEMPTY | MB_OPT_CONSOLE | (fl),     \
		.dtext = dt, .help = "data directory"                                              \
	}

#define MB_OPTION_LOG_DIR(T, f, sf, dt)                                                            \
	{                                                                                          \
		.path = "log-dir", .flag = "log-dir", .sflag = sf, .metavar = "DIR",               \
		.type = MB_OT_STRING, .off = offsetof(T, f), .size = MB_FIELD_SIZE(T, f),          \
		.sdef = "", .flags = MB_OPT_CONSOLE, .dtext = dt,                                  \
		.help = "transaction logs under DIR/sgN (another device)"                          \
	}

#define MB_OPTION_STATS_FD(T, f, sf)                                                               \
	{                                                                                          \
		.path = "stats-fd", .flag = "stats-fd", .sflag = sf, .metavar = "N",               \
		.type = MB_OT_INT, .off = offsetof(T, f), .def = -1, .min = 0,                     \
		.max = MB_STATS_FD_MAX, .help = "one stats line per second on file descriptor N"   \
	}

#define MB_OPTION_WARMUP(T, f, sf, d, dt)                                                          \
	{                                                                                          \
		.path = "warmup", .flag = "warmup", .sflag = sf, .metavar = "S",                   \
		.type = MB_OT_DOUBLE, .off = offsetof(T, f), .def = d, .min = 0,                   \
		.max = MB_WARMUP_MAX, .dtext = dt,                                                 \
		.help = "seconds left out of the averages (warm-up)"                               \
	}

/* The database cache, MiB (a double: the published cache-to-data ratio
 * gives fractions at small sizes). */
#define MB_OPTION_CACHE_MB(T, f, sf, d, fl, dt)                                                    \
	{                                                                                          \
		.path = "cache-mb", .flag = "cache-mb", .sflag = sf, .metavar = "MB",              \
		.type = MB_OT_DOUBLE, .off = offsetof(T, f), .def = d, .min = MB_CACHE_MB_MIN,     \
		.max = MB_CACHE_MB_MAX, .flags = (fl), .dtext = dt, .help = "database cache, MiB"  \
	}

/* The load engine's random seed: one seed, the same schedule. */
#define MB_OPTION_SEED(T, f, sf, d, fl, dt)                                                        \
	{                                                                                          \
		.path = "seed", .flag = "seed", .sflag = sf, .metavar = "N", .type = MB_OT_INT,    \
		.off = offsetof(T, f), .def = d, .min = 0, .max = MB_SEED_MAX, .flags = (fl),      \
		.dtext = dt, .help = "random seed of the load engine's schedule and content"       \
	}

#define MB_OPTION_ACK_LOG(T, f, sf, h)                                                             \
	{                                                                                          \
		.path = "ack-log", .flag = "ack-log", .sflag = sf, .metavar = "FILE",              \
		.type = MB_OT_ARG, .off = offsetof(T, f), .flags = MB_OPT_NONEMPTY, .help = h      \
	}

/* The load engine's target (src/load/target.h checks the syntax). */
#define MB_OPTION_TARGET(T, f, sf, dt)                                                             \
	{                                                                                          \
		.path = "target", .flag = "target", .sflag = sf, .metavar = "T",                   \
		.type = MB_OT_STRING, .off = offsetof(T, f), .size = MB_FIELD_SIZE(T, f),          \
		.sdef = "", .dtext = dt,                                                           \
		.help = "the load engine's target: DRIVER, DRIVER:ADDR:PORT or ADDR:PORT "         \
			"(drivers: mbstore, "                                                      \
			"mailbench's own store; null, no I/O)"                                     \
	}

/* TLS to a real mail server (load/target.h, "TLS"): --tls starttls
 * upgrades the plain imap:// and smtp:// connections with STARTTLS,
 * --tls implicit makes them TLS from the first byte (imaps:// and smtps://
 * are TLS from the first byte whatever it says); with --target
 * lab:dovecot either starts the lab with TLS (its imaps/smtps ports for
 * implicit, STARTTLS on its plain ports) and trusts its certificate;
 * --tls-ca trusts FILE instead of the system's CA store; --tls-insecure
 * skips certificate verification (the run header says so). */
extern const char *const mb_tls_modes[]; /* "off", "starttls", "implicit": index = value */
#define MB_OPTION_TLS(T, f)                                                                        \
	{                                                                                          \
		.path = "tls", .flag = "tls", .type = MB_OT_ENUM, .off = offsetof(T, f), .def = 0, \
		.choices = mb_tls_modes, .flags = MB_OPT_CONSOLE,                                  \
		.dtext = "off (imaps:// and smtps:// are TLS all the same)",                       \
		.help = "starttls: STARTTLS on the imap:// and smtp:// connections; implicit: "    \
			"TLS from the first byte (as imaps://, smtps://); with lab:dovecot: the "  \
			"lab with TLS, its certificate trusted"                                    \
	}
#define MB_OPTION_TLS_CA(T, f)                                                                     \
	{                                                                                          \
		.path = "tls-ca", .flag = "tls-ca", .metavar = "FILE", .type = MB_OT_STRING,       \
		.off = offsetof(T, f), .size = MB_FIELD_SIZE(T, f), .sdef = "",                    \
		.flags = MB_OPT_CONSOLE, .dtext = "the system's CA store",                         \
		.help = "trust this PEM CA or server certificate for TLS"                          \
	}
#define MB_OPTION_TLS_INSECURE(T, f)                                                               \
	{                                                                                          \
		.path = "tls-insecure", .flag = "tls-insecure", .type = MB_OT_FLAG,                \
		.off = offsetof(T, f), .flags = MB_OPT_CONSOLE,                                    \
		.help = "TLS without certificate verification (said in the run header)"            \
	}

#define MB_OPTION_JSON(T, f, h)                                                                    \
	{                                                                                          \
		.path = "json", .flag = "json", .metavar = "FILE", .type = MB_OT_ARG,              \
		.off = offsetof(T, f), .flags = MB_OPT_NONEMPTY, .help = h                         \
	}

#define MB_OPTION_QUIET(T, f, sf, h)                                                               \
	{                                                                                          \
		.path = "quiet", .flag = "quiet", .sflag = sf, .type = MB_OT_FLAG,                 \
		.off = offsetof(T, f), .help = h                                                   \
	}

#endif
