/* cmd_store.c: `mailbench store`: serve a data directory over the wire
 * protocol until SIGTERM/SIGINT (then finish in-flight work, checkpoint and
 * exit 0).  Prints "listening on ADDR:PORT" on stdout (flushed) once the
 * socket is bound, so scripts and the supervisor can read the port. */
#include "config.h"

#include "cmd.h"
#include "core/cli.h"
#include "core/error.h"
#include "store/store.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mailbench store --data DIR [--listen ADDR:PORT] [--stats-fd N]\n"
		"                       [--compression on|off] [--compress-min BYTES]\n"
		"                       [--cache-mb N] [--max-connections N] [--idle-timeout S]\n"
		"\n"
		"Serve the mailboxes of DIR (made by `mailbench init`) over the mailbench\n"
		"wire protocol (docs/PROTOCOL.md).  Prints \"listening on ADDR:PORT\" when\n"
		"ready.  SIGTERM or SIGINT: finish the requests in flight, checkpoint, exit 0.\n"
		"After a crash (SIGKILL) the next start recovers from the logs.\n"
		"\n"
		"options:\n"
		"  -d, --data DIR          data directory (required)\n"
		"  -l, --listen ADDR:PORT  address to listen on (default 127.0.0.1:0; port 0\n"
		"                          picks a free port)\n"
		"  -f, --stats-fd N        write one stats line per second to fd N\n"
		"  -c, --compression on|off  grant LZ4 payload compression (default on)\n"
		"  -m, --compress-min BYTES  compress payloads of at least BYTES (default 256)\n"
		"  -C, --cache-mb N        database cache, MiB (default: the scaled size in\n"
		"                          DIR/topology.json)\n"
		"  -n, --max-connections N (default 20000)\n"
		"  -i, --idle-timeout S    close connections idle for S seconds (default 1800)\n"
		"  -h, --help              this help\n"
		"\n"
		"exit codes: 0 stopped cleanly, 2 usage or input error, 3 runtime failure\n");
}

int mb_cmd_store(int argc, char **argv)
{
	static const struct option lo[] = {{"data", required_argument, NULL, 'd'},
					   {"listen", required_argument, NULL, 'l'},
					   {"stats-fd", required_argument, NULL, 'f'},
					   {"compression", required_argument, NULL, 'c'},
					   {"compress-min", required_argument, NULL, 'm'},
					   {"cache-mb", required_argument, NULL, 'C'},
					   {"max-connections", required_argument, NULL, 'n'},
					   {"idle-timeout", required_argument, NULL, 'i'},
					   {"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct mb_store_opts o;
	char host[256];
	int opt;
	long v;

	mb_store_opts_init(&o);
	o.install_signals = true;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:l:f:c:m:C:n:i:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			o.data = optarg;
			break;
		case 'l': {
			const char *colon = strrchr(optarg, ':');
			if (!colon || colon == optarg || (size_t)(colon - optarg) >= sizeof(host) ||
			    mb_cli_long("store", "--listen", colon + 1, 0, 65535, &v)) {
				if (!colon || colon == optarg)
					fprintf(stderr,
						"mailbench store: --listen: '%s' is not ADDR:PORT\n",
						optarg);
				return MB_EXIT_USAGE;
			}
			memcpy(host, optarg, (size_t)(colon - optarg));
			host[colon - optarg] = '\0';
			if (host[0] == '[' && host[strlen(host) - 1] == ']') {
				memmove(host, host + 1, strlen(host));
				host[strlen(host) - 1] = '\0';
			}
			o.listen_host = host;
			o.port = (int)v;
			break;
		}
		case 'f':
			if (mb_cli_long("store", "--stats-fd", optarg, 0, 65535, &v))
				return MB_EXIT_USAGE;
			if (fcntl((int)v, F_GETFD) < 0) {
				fprintf(stderr, "mailbench store: --stats-fd: %ld is not open\n", v);
				return MB_EXIT_USAGE;
			}
			o.stats_fd = (int)v;
			break;
		case 'c':
			if (!strcmp(optarg, "on"))
				o.compression = 1;
			else if (!strcmp(optarg, "off"))
				o.compression = 0;
			else {
				fprintf(stderr, "mailbench store: --compression: '%s' is not on or off\n",
					optarg);
				return MB_EXIT_USAGE;
			}
			break;
		case 'm':
			if (mb_cli_long("store", "--compress-min", optarg, 0, 1 << 24, &v))
				return MB_EXIT_USAGE;
			o.compress_min = (uint32_t)v;
			break;
		case 'C':
			if (mb_cli_long("store", "--cache-mb", optarg, 2, 1 << 20, &v))
				return MB_EXIT_USAGE;
			o.cache_mb = (int)v;
			break;
		case 'n':
			if (mb_cli_long("store", "--max-connections", optarg, 1, 1000000, &v))
				return MB_EXIT_USAGE;
			o.max_connections = (int)v;
			break;
		case 'i':
			if (mb_cli_long("store", "--idle-timeout", optarg, 1, 86400 * 30, &v))
				return MB_EXIT_USAGE;
			o.idle_timeout_s = (int)v;
			break;
		case 'h':
			usage(stdout);
			return MB_EXIT_OK;
		default:
			usage(stderr);
			return MB_EXIT_USAGE;
		}
	}
	if (mb_cli_no_operands("store", argc, argv))
		return MB_EXIT_USAGE;
	if (!o.data) {
		fprintf(stderr, "mailbench store: --data DIR is required\n");
		usage(stderr);
		return MB_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
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
	fflush(stdout);
	rc = mb_store_run(st);
	mb_store_destroy(st);
	if (rc) {
		fprintf(stderr, "mailbench store: closing the databases: %s\n", mb_strerror(rc));
		return MB_EXIT_RUNTIME;
	}
	return MB_EXIT_OK;
}
