/* lab.c: the throwaway Dovecot + Postfix lab (see lab.h for its states).
 *
 * Layout under DATA/lab:
 *   dovecot.conf  passwd  virtual  vmailbox  postfix/{main.cf,master.cf}
 *   run/ (Dovecot base_dir)  state/  mail/USER/  pf-spool/  pf-data/
 *   dovecot.log  postfix.log  dovecot.out  postfix.out
 *   tls-cert.pem  tls-key.pem (0600)   with --tls: a self-signed certificate
 *                                      for localhost/127.0.0.1 (core/tls.c)
 * Postfix's queue lives outside its config directory (its check wants
 * every file under the config directory owned by root).  Ports are free
 * loopback ports below the ephemeral range, chosen just before the configs
 * are written; a server that exits at start gets new ports and configs
 * (LAB_START_ATTEMPTS starts in all).  The configuration files and the account maps are written by
 * labconf.c; this file runs the servers (spawn, probe, restart, stop).
 */
#include "config.h"

#include "lab/lab.h"
#include "lab/lab_int.h"

#include "core/error.h"
#include "core/rng.h"
#include "core/sampler.h"
#include "core/tls.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* The low end of the kernel's ephemeral port range (32768 unless set). */
static int ephemeral_low(void)
{
	int lo = 32768, hi;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (f) {
		if (fscanf(f, "%d %d", &lo, &hi) != 2)
			lo = 32768;
		fclose(f);
	}
	return lo;
}

/* A socket bound to 127.0.0.1:port (0: the kernel picks); -1 if taken. */
static int bind_loopback(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa;
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* n distinct free loopback ports for the servers.  They are taken below
 * the ephemeral range where it leaves room: a port the kernel hands out
 * from that range can be taken, between this check and the server's own
 * bind, as the local port of any client's connect (a loaded machine's
 * tests make thousands), after which the server cannot bind it and exits
 * at start.  Each port is held by a bound socket until all are chosen, so
 * they differ. */
#define LAB_PORT_LOW 10000 /* the lowest port the lab takes */
#define LAB_PORT_ROOM 1024 /* ports below the ephemeral range it wants */
static int free_ports(int *const ports[], int n)
{
	int fds[8], lo = ephemeral_low(), rc = 0;
	uint64_t rs;
	mb_rng_seed(&rs, (uint64_t)getpid() << 32 ^ (uint64_t)(mb_now_s() * 1e6));
	for (int i = 0; i < n; i++) {
		fds[i] = -1;
		for (int t = 0; t < 64 && fds[i] < 0 && lo > LAB_PORT_LOW + LAB_PORT_ROOM; t++) {
			int port = mb_rng_range(&rs, LAB_PORT_LOW, lo - 1);
			if ((fds[i] = bind_loopback(port)) >= 0)
				*ports[i] = port;
		}
		if (fds[i] < 0) { /* no room below the range: the kernel's pick */
			struct sockaddr_in sa;
			socklen_t sl = sizeof(sa);
			if ((fds[i] = bind_loopback(0)) < 0 ||
			    getsockname(fds[i], (struct sockaddr *)&sa, &sl)) {
				rc = MB_ESYS;
				n = i + 1;
				break;
			}
			*ports[i] = ntohs(sa.sin_port);
		}
	}
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

static int mkdir_p1(const char *path, mode_t mode)
{
	if (mkdir(path, mode) && errno != EEXIST)
		return mb_from_errno(errno);
	return chmod(path, mode) ? mb_from_errno(errno) : 0;
}

/* Every ancestor of path must be searchable by others (the servers'
 * unprivileged users reach their sockets and mail under it). */
static int check_traversable(const char *path, char *err, size_t errlen)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = buf + strlen(buf); s > buf; s--) {
		if (*s != '/')
			continue;
		*s = 0;
		struct stat st;
		if (buf[0] && stat(buf, &st) == 0 && !(st.st_mode & S_IXOTH)) {
			seterr(err, errlen,
			       "lab: %s is not searchable by other users (mode %o); the servers' "
			       "own users must reach DATA/lab: choose a --data under /tmp or chmod "
			       "o+x it",
			       buf, (unsigned)(st.st_mode & 07777));
			return MB_EACCES;
		}
	}
	return 0;
}

static const char *find_prog(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[8192];
	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/usr/local/sbin:/sbin",
		 path ? path : "/usr/bin");
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return buf;
	}
	return NULL;
}

static int spawn(char *const argv[], const char *logpath, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETSIGDEF);
	sigset_t def;
	sigemptyset(&def);
	sigaddset(&def, SIGTERM);
	sigaddset(&def, SIGINT);
	sigaddset(&def, SIGHUP);
	sigaddset(&def, SIGCHLD);
	sigaddset(&def, SIGPIPE);
	posix_spawnattr_setsigdefault(&at, &def);
	rc = posix_spawn(pid, argv[0], &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc ? mb_from_errno(rc) : 0;
}

/* How long run_prog waits for a program's output and exit. */
#define RUN_PROG_MS 10000

/* Run the program NAME (found as find_prog finds it) with args (args[0]
 * is set here), with no signal blocked and for RUN_PROG_MS at most (then
 * SIGKILLed: MB_ETIMEDOUT); its standard output's lines are counted into
 * *lines and its first line kept in first (cap bytes, without the newline)
 * when they are not NULL.  0 when it exited 0. */
static int run_prog(const char *name, char *args[], int *lines, char *first, size_t cap)
{
	char prog[4200];
	if (!find_prog(name, prog, sizeof(prog)))
		return MB_ENOTFOUND;
	args[0] = prog;
	int fds[2];
	if (pipe(fds))
		return MB_ESYS;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	posix_spawnattr_t at;
	sigset_t none;
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK);
	pid_t pid;
	int rc = posix_spawn(&pid, prog, &fa, &at, args, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return mb_from_errno(rc);
	}
	int n = 0, bol = 1;
	size_t k = 0;
	bool in_first = first && cap; /* until the first newline */
	double end = mb_now_s() + RUN_PROG_MS / 1000.0;
	bool timed_out = false;
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		int left = (int)((end - mb_now_s()) * 1000);
		if (left <= 0 || poll(&p, 1, left) == 0) {
			timed_out = true;
			break;
		}
		char buf[512];
		ssize_t got = read(fds[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			char ch = buf[i];
			in_first = in_first && ch != '\n';
			if (in_first && k + 1 < cap)
				first[k++] = ch;
			n += bol && ch != '\n';
			bol = ch == '\n';
		}
	}
	if (first && cap)
		first[k] = '\0';
	close(fds[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int st = 0;
	pid_t w;
	while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (lines)
		*lines = n;
	if (timed_out)
		return MB_ETIMEDOUT;
	return w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : MB_EIO;
}

/* Run postqueue ARG on the lab's Postfix; with lines, its output's lines
 * are counted into *lines.  0 when it exited 0. */
static int postqueue(const char *labdir, const char *arg, int *lines)
{
	char conf[4200];
	snprintf(conf, sizeof(conf), "%s/postfix", labdir);
	char *argv[] = {NULL, "-c", conf, (char *)arg, NULL};
	return run_prog("postqueue", argv, lines, NULL, 0);
}

/* The servers' versions, as their own commands print them ("Dovecot
 * 2.3.19.1, Postfix 3.7.11"); "n/a" for one whose command failed. */
static void lab_versions(struct mb_lab *l)
{
	char dv[64] = "", pf[64] = "";
	char *dargs[] = {NULL, "--version", NULL};
	char *pargs[] = {NULL, "-c", l->pfconf, "-h", "mail_version", NULL};
	if (run_prog("dovecot", dargs, NULL, dv, sizeof(dv)) || !dv[0])
		snprintf(dv, sizeof(dv), "n/a");
	dv[strcspn(dv, " ")] = '\0'; /* "2.3.19.1 (9b53102964)" */
	if (run_prog("postconf", pargs, NULL, pf, sizeof(pf)) || !pf[0])
		snprintf(pf, sizeof(pf), "n/a");
	snprintf(l->info.versions, sizeof(l->info.versions), "Dovecot %s, Postfix %s", dv, pf);
}

int mb_lab_queued(const char *labdir, int flush)
{
	int n = 0;
	if (flush)
		(void)postqueue(labdir, "-f", NULL);
	int rc = postqueue(labdir, "-j", &n);
	return rc ? rc : n;
}

/* Connect to 127.0.0.1:port and read a greeting starting with want. */
static int probe(int port, const char *want)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa;
	char buf[256];
	if (fd < 0)
		return MB_ESYS;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int rc = MB_EAGAIN;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		struct pollfd pf = {fd, POLLIN, 0};
		size_t got = 0;
		while (got < strlen(want) && poll(&pf, 1, 2000) == 1) {
			ssize_t n = read(fd, buf + got, sizeof(buf) - 1 - got);
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (got >= strlen(want) && !memcmp(buf, want, strlen(want)))
			rc = 0;
	}
	close(fd);
	return rc;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The last line of a log file, for error messages. */
static void log_tail(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];
	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "atal") || strstr(line, "rror") || !buf[0])
			snprintf(buf, len, "%s", line);
	fclose(f);
	size_t n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
}

static int start_dovecot(struct mb_lab *l)
{
	char prog[4200], out[4300];
	if (!find_prog("dovecot", prog, sizeof(prog)))
		return MB_ENOTFOUND;
	snprintf(out, sizeof(out), "%s/dovecot.out", l->info.dir);
	char *argv[] = {prog, "-F", "-c", l->conf, NULL};
	int rc = spawn(argv, out, &l->dv_child);
	if (!rc)
		l->info.dovecot_pid = l->dv_child;
	return rc;
}

static int start_postfix(struct mb_lab *l)
{
	char prog[4200], out[4300];
	if (!find_prog("postfix", prog, sizeof(prog)))
		return MB_ENOTFOUND;
	snprintf(out, sizeof(out), "%s/postfix.out", l->info.dir);
	char *argv[] = {prog, "-c", l->pfconf, "start-fg", NULL};
	/* the clock file times come from, so a file written later is not older */
	clock_gettime(CLOCK_REALTIME_COARSE, &l->pf_started);
	return spawn(argv, out, &l->pf_child);
}

/* The pid in Postfix's master.pid, 0 when there is none or when the file
 * is older than the last start: Postfix leaves the file behind when its
 * master exits, and a pid from an earlier run may be another process's
 * by now. */
static pid_t read_pidfile(const struct mb_lab *l)
{
	struct stat st;
	if (stat(l->pfpid, &st) || st.st_mtim.tv_sec < l->pf_started.tv_sec ||
	    (st.st_mtim.tv_sec == l->pf_started.tv_sec &&
	     st.st_mtim.tv_nsec < l->pf_started.tv_nsec))
		return 0;
	FILE *f = fopen(l->pfpid, "r");
	long v = 0;
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1)
		v = 0;
	fclose(f);
	return (pid_t)v;
}

/* Wait until both answer (or a child died, or the timeout). */
static int wait_up(struct mb_lab *l, int want_dv, int want_pf, char *err, size_t errlen)
{
	double until = mb_now_s() + l->o.start_timeout_ms / 1000.0;
	int dv = !want_dv, pf = !want_pf;
	while (mb_now_s() < until) {
		int st;
		if (want_dv && waitpid(l->dv_child, &st, WNOHANG) == l->dv_child) {
			char tail[512], p[4300];
			l->dv_child = 0;
			snprintf(p, sizeof(p), "%s/dovecot.log", l->info.dir);
			log_tail(p, tail, sizeof(tail));
			if (!tail[0]) {
				snprintf(p, sizeof(p), "%s/dovecot.out", l->info.dir);
				log_tail(p, tail, sizeof(tail));
			}
			seterr(err, errlen, "lab: dovecot exited at start: %s", tail);
			return MB_ECHILD;
		}
		if (want_pf && waitpid(l->pf_child, &st, WNOHANG) == l->pf_child) {
			char tail[512], p[4300];
			l->pf_child = 0;
			snprintf(p, sizeof(p), "%s/postfix.log", l->info.dir);
			log_tail(p, tail, sizeof(tail));
			if (!tail[0]) {
				snprintf(p, sizeof(p), "%s/postfix.out", l->info.dir);
				log_tail(p, tail, sizeof(tail));
			}
			seterr(err, errlen, "lab: postfix exited at start: %s", tail);
			return MB_ECHILD;
		}
		if (!dv && probe(l->info.imap_port, "* OK") == 0)
			dv = 1;
		if (!pf && probe(l->info.smtp_port, "220") == 0)
			pf = 1;
		if (dv && pf) {
			if (want_pf)
				l->info.postfix_pid = read_pidfile(l);
			return 0;
		}
		sleep_ms(50);
	}
	seterr(err, errlen, "lab: %s did not answer within %d ms (see %s/*.log)",
	       !dv ? "dovecot (IMAP)" : "postfix (SMTP)", l->o.start_timeout_ms, l->info.dir);
	return MB_ETIMEDOUT;
}

static int stop_servers(struct mb_lab *l);

/* Starts of the servers tried on fresh ports before the lab gives up. */
#define LAB_START_ATTEMPTS 3

/* Free ports, the configurations that name them, both servers, and the
 * wait until both answer.  On an error the caller stops what started. */
static int start_servers(struct mb_lab *l, unsigned uid, const char *uname, int ncpu, char *err,
			 size_t errlen)
{
	int *ports[] = {&l->info.imap_port, &l->info.lmtp_port,	 &l->info.auth_port,
			&l->info.smtp_port, &l->info.imaps_port, &l->info.smtps_port};
	int rc = free_ports(ports, l->o.tls ? 6 : 4);
	if (rc) {
		seterr(err, errlen, "lab: no free loopback port");
		return rc;
	}
	snprintf(l->info.imap_url, sizeof(l->info.imap_url), "imap://127.0.0.1:%d",
		 l->info.imap_port);
	snprintf(l->info.smtp_url, sizeof(l->info.smtp_url), "smtp://127.0.0.1:%d",
		 l->info.smtp_port);
	if (l->o.tls) {
		snprintf(l->info.imaps_url, sizeof(l->info.imaps_url), "imaps://127.0.0.1:%d",
			 l->info.imaps_port);
		snprintf(l->info.smtps_url, sizeof(l->info.smtps_url), "smtps://127.0.0.1:%d",
			 l->info.smtps_port);
	}
	rc = mb__lab_write_dovecot_conf(l, uid, uname, ncpu);
	if (!rc)
		rc = mb__lab_write_postfix_conf(l);
	if (rc) {
		seterr(err, errlen, "lab: cannot write the configs under %s: %s", l->info.dir,
		       mb_strerror(rc));
		return rc;
	}
	if ((rc = start_dovecot(l))) {
		seterr(err, errlen, "lab: cannot start dovecot: %s", mb_strerror(rc));
		return rc;
	}
	if ((rc = start_postfix(l))) {
		seterr(err, errlen, "lab: cannot start postfix: %s", mb_strerror(rc));
		return rc;
	}
	return wait_up(l, 1, 1, err, errlen);
}

int mb_lab_start(const struct mb_lab_opts *o, struct mb_lab **out, char *err, size_t errlen)
{
	struct mb_lab *l = calloc(1, sizeof(*l));
	char path[4300], prog[4200];
	int rc, ncpu = 1;

	if (!l)
		return MB_ENOMEM;
	l->o = *o;
	if (!l->o.start_timeout_ms)
		l->o.start_timeout_ms = 20000;
	if (!l->o.accounts || !mb_topology_user_count(l->o.accounts)) {
		seterr(err, errlen, "lab: no accounts");
		free(l);
		return MB_EINVAL;
	}
	if (!find_prog("dovecot", prog, sizeof(prog)) ||
	    !find_prog("postfix", prog, sizeof(prog))) {
		seterr(err, errlen,
		       "lab: dovecot and postfix must be installed (Debian: apt-get install "
		       "dovecot-imapd dovecot-lmtpd postfix)");
		free(l);
		return MB_ENOTFOUND;
	}
	if (getuid() != 0) {
		seterr(err, errlen,
		       "lab: Postfix runs only when started by root (its master "
		       "drops privileges itself): run the lab as root");
		free(l);
		return MB_EACCES;
	}
	mb_online_cpus(&ncpu);
	/* the account the mail processes run as */
	struct passwd *pw = getpwnam("mail");
	unsigned uid = pw ? (unsigned)pw->pw_uid : 8, gid = pw ? (unsigned)pw->pw_gid : 8;
	const char *uname = pw ? pw->pw_name : "mail";

	snprintf(l->info.mail_format, sizeof(l->info.mail_format), "%s",
		 o->mail_format && !strcmp(o->mail_format, "mdbox") ? "mdbox" : "maildir");
	if ((rc = mkdir_p1(o->data, 0755))) {
		seterr(err, errlen, "lab: --data: cannot create %s: %s", o->data, mb_strerror(rc));
		free(l);
		return rc;
	}
	char *real = realpath(o->data, NULL);
	if (!real) {
		free(l);
		return MB_ESYS;
	}
	snprintf(l->info.dir, sizeof(l->info.dir), "%s/lab", real);
	free(real);
	if ((rc = check_traversable(l->info.dir, err, errlen))) {
		free(l);
		return rc;
	}
	snprintf(l->conf, sizeof(l->conf), "%s/dovecot.conf", l->info.dir);
	snprintf(l->pfconf, sizeof(l->pfconf), "%s/postfix", l->info.dir);
	snprintf(l->pfpid, sizeof(l->pfpid), "%s/pf-spool/pid/master.pid", l->info.dir);
	static const char *const dirs[] = {"",		"/run",	    "/state", "/postfix",
					   "/pf-spool", "/pf-data", "/mail"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !rc; i++) {
		snprintf(path, sizeof(path), "%s%s", l->info.dir, dirs[i]);
		rc = mkdir_p1(path, 0755);
	}
	snprintf(path, sizeof(path), "%s/pf-data", l->info.dir);
	if (!rc) {
		struct passwd *pp = getpwnam("postfix");
		if (!pp || chown(path, pp->pw_uid, pp->pw_gid))
			rc = MB_EACCES;
	}
	snprintf(path, sizeof(path), "%s/mail", l->info.dir);
	if (!rc && chown(path, uid, gid))
		rc = mb_from_errno(errno);
	if (rc) {
		seterr(err, errlen, "lab: cannot prepare %s: %s", l->info.dir, mb_strerror(rc));
		free(l);
		return rc;
	}
	if (o->tls) {
		snprintf(l->info.tls_cert, sizeof(l->info.tls_cert), "%s/tls-cert.pem",
			 l->info.dir);
		snprintf(l->info.tls_key, sizeof(l->info.tls_key), "%s/tls-key.pem", l->info.dir);
		char terr[400];
		rc = mb_tls_selfsigned("localhost", l->info.tls_cert, l->info.tls_key, terr,
				       sizeof(terr));
		if (rc) {
			seterr(err, errlen, "lab: %s", terr);
			free(l);
			return rc;
		}
	}
	if (o->login == MB_LAB_LOGIN_PERFORMANCE)
		snprintf(l->info.login_mode, sizeof(l->info.login_mode),
			 "performance (service_count = 0, process_min_avail = %d)", ncpu);
	else
		snprintf(l->info.login_mode, sizeof(l->info.login_mode),
			 "secure (service_count = 1: one login process per connection)");

	char home[4300];
	snprintf(home, sizeof(home), "%s/mail", l->info.dir);
	snprintf(path, sizeof(path), "%s/passwd", l->info.dir);
	rc = mb_lab_write_passwd(o->accounts, path, uid, gid, home);
	if (!rc) {
		/* Dovecot's auth worker reads it as the dovecot user: root:dovecot 0640 */
		struct group *gr = getgrnam("dovecot");
		if (gr && (chown(path, 0, gr->gr_gid) || chmod(path, 0640)))
			rc = mb_from_errno(errno);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/virtual", l->info.dir);
		rc = mb_lab_write_virtual(o->accounts, MB_LAB_DOMAIN, path);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s/vmailbox", l->info.dir);
		rc = mb_lab_write_vmailbox(o->accounts, MB_LAB_DOMAIN, path);
	}
	if (rc) {
		seterr(err, errlen, "lab: cannot write the account maps under %s: %s", l->info.dir,
		       mb_strerror(rc));
		free(l);
		return rc;
	}
	/* A server that exits at start most often lost a port to another
	 * process between free_ports and its bind: new ports, again. */
	for (int attempt = 1;; attempt++) {
		if ((rc = start_servers(l, uid, uname, ncpu, err, errlen)) == 0)
			break;
		stop_servers(l);
		if (rc != MB_ECHILD || attempt == LAB_START_ATTEMPTS) {
			free(l);
			return rc;
		}
		if (!l->o.quiet)
			fprintf(stderr, "%s; starting again on other ports\n", err);
	}
	l->dv_backoff_ms = 100;
	lab_versions(l);
	*out = l;
	return 0;
}

const struct mb_lab_info *mb_lab_info(const struct mb_lab *l) { return &l->info; }

int mb_lab_poll(struct mb_lab *l)
{
	int st, restarts = 0;
	if (l->dv_child && waitpid(l->dv_child, &st, WNOHANG) == l->dv_child) {
		l->dv_child = 0;
		l->info.dovecot_pid = 0;
		l->dv_next_restart = mb_now_s() + l->dv_backoff_ms / 1000.0;
		if (!l->o.quiet)
			fprintf(stderr, "lab: dovecot exited (%s %d); restarting\n",
				WIFSIGNALED(st) ? "signal" : "status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	}
	if (!l->dv_child && mb_now_s() >= l->dv_next_restart) {
		/* the old master's children may still hold the ports a moment */
		if (start_dovecot(l) == 0 && wait_up(l, 1, 0, NULL, 0) == 0) {
			l->info.dovecot_restarts++;
			l->dv_backoff_ms = 100;
			restarts++;
		} else {
			if (l->dv_child) {
				kill(l->dv_child, SIGKILL);
				waitpid(l->dv_child, &st, 0);
				l->dv_child = 0;
			}
			l->dv_backoff_ms =
			    l->dv_backoff_ms * 2 > 5000 ? 5000 : l->dv_backoff_ms * 2;
			l->dv_next_restart = mb_now_s() + l->dv_backoff_ms / 1000.0;
			return MB_ECHILD;
		}
	}
	if (l->pf_child && waitpid(l->pf_child, &st, WNOHANG) == l->pf_child) {
		l->pf_child = 0;
		if (!l->o.quiet)
			fprintf(stderr, "lab: postfix exited; restarting\n");
		if (start_postfix(l) || wait_up(l, 0, 1, NULL, 0))
			return MB_ECHILD;
		restarts++;
	}
	return restarts;
}

int mb_proc_tree(const pid_t *roots, int nroots, pid_t *out, int max)
{
	int n = 0;
	for (int i = 0; i < nroots && n < max; i++)
		if (roots[i] > 0 && kill(roots[i], 0) == 0)
			out[n++] = roots[i];
	/* repeat until no new descendant is found (a child may be listed
	 * before its parent) */
	for (int changed = 1; changed && n < max;) {
		changed = 0;
		DIR *d = opendir("/proc");
		if (!d)
			return n;
		struct dirent *e;
		while ((e = readdir(d)) && n < max) {
			char path[300], buf[512];
			if (e->d_name[0] < '0' || e->d_name[0] > '9')
				continue;
			pid_t pid = (pid_t)atol(e->d_name);
			int have = 0;
			for (int k = 0; k < n && !have; k++)
				have = out[k] == pid;
			if (have)
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			size_t got = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
			buf[got] = 0;
			char *rp = strrchr(buf, ')');
			char state;
			long ppid;
			if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2 || state == 'Z')
				continue;
			for (int k = 0; k < n; k++)
				if (out[k] == (pid_t)ppid) {
					out[n++] = pid;
					changed = 1;
					break;
				}
		}
		closedir(d);
	}
	return n;
}

int mb_lab_pids(const struct mb_lab *l, pid_t *pids, int max)
{
	pid_t roots[2] = {l->dv_child, l->info.postfix_pid};
	return mb_proc_tree(roots, 2, pids, max);
}

/* Wait for pid (our child) up to ms; 1 reaped, 0 not. */
static int reap(pid_t pid, int ms)
{
	int st;
	for (int t = 0; t <= ms; t += 20) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			return 1;
		sleep_ms(20);
	}
	return 0;
}

/* Is any process of process group pg alive? */
static int group_alive(pid_t pg) { return pg > 0 && kill(-pg, 0) == 0; }

/* Stops both servers and every process of theirs; 1 when one had to be
 * killed.  The lab's children are 0 after it. */
static int stop_servers(struct mb_lab *l)
{
	int forced = 0;
	pid_t dv_pg = l->dv_child, pf_pg = l->pf_child;
	pid_t pf_master = read_pidfile(l);
	if (l->dv_child)
		kill(l->dv_child, SIGTERM);
	if (pf_master > 0)
		kill(pf_master, SIGTERM); /* master stops its children */
	else if (l->pf_child)
		kill(l->pf_child, SIGTERM);
	if (l->dv_child && !reap(l->dv_child, 10000)) {
		kill(-l->dv_child, SIGKILL);
		reap(l->dv_child, 2000);
		forced = 1;
	}
	if (l->pf_child && !reap(l->pf_child, 10000)) {
		kill(-l->pf_child, SIGKILL);
		reap(l->pf_child, 2000);
		forced = 1;
	}
	/* the masters' children: Postfix's master runs in a session of its own */
	pid_t groups[3] = {dv_pg, pf_pg, pf_master};
	for (int g = 0; g < 3; g++) {
		for (int t = 0; t < 100 && group_alive(groups[g]); t++)
			sleep_ms(50);
		if (group_alive(groups[g])) {
			kill(-groups[g], SIGKILL);
			forced = 1;
		}
	}
	l->dv_child = l->pf_child = 0;
	l->info.dovecot_pid = l->info.postfix_pid = 0;
	return forced;
}

int mb_lab_stop(struct mb_lab *l)
{
	if (!l)
		return 0;
	int forced = stop_servers(l);
	free(l);
	return forced ? MB_EBUSY : 0;
}
