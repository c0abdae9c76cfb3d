/* supervisor.c: spawning, reading and stopping child processes (see
 * supervisor.h).  Invariants: a child object is freed only once its
 * process handle, its three pipes and its two timers are closed and the
 * owner released it (or the supervisor is destroyed); every live child's
 * pid is in the emergency table until its exit is reaped. */
#include "report/supervisor.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.h"

#define TAIL_LINES 20
#define LINE_MAX_LEN 1024
#define DRAIN_MS 300
#define EMERGENCY_MAX 64

static volatile pid_t emergency_pids[EMERGENCY_MAX];

static void emergency_add(pid_t pid)
{
	for (int i = 0; i < EMERGENCY_MAX; i++) {
		if (emergency_pids[i] == 0) {
			emergency_pids[i] = pid;
			return;
		}
	}
}

static void emergency_del(pid_t pid)
{
	for (int i = 0; i < EMERGENCY_MAX; i++)
		if (emergency_pids[i] == pid)
			emergency_pids[i] = 0;
}

void mb_sup_emergency_kill(void)
{
	for (int i = 0; i < EMERGENCY_MAX; i++) {
		pid_t p = emergency_pids[i];
		if (p > 0) {
			kill(-p, SIGTERM);
			kill(p, SIGTERM);
		}
	}
}

struct linebuf {
	char buf[LINE_MAX_LEN];
	size_t len;
};

struct mb_child {
	struct mb_sup *sup;
	struct mb_child *next;
	char name[32];
	uv_process_t proc;
	uv_pipe_t out, err, stats;
	uv_timer_t kill_timer, drain_timer;
	int open_handles;
	bool out_eof, err_eof, stats_eof;
	bool exited, reported, released, stop_requested, spawned;
	bool stats_on_stdout;
	int stop_signal;
	pid_t pid;
	int64_t exit_status;
	int term_signal;
	int port;
	struct linebuf lb_out, lb_err;
	char tail[TAIL_LINES][LINE_MAX_LEN];
	int tail_next, tail_count;
	struct mb_stats_reader *reader;
	uint64_t stats_lines;
	void *data;
};

struct mb_sup {
	uv_loop_t *loop;
	struct mb_sup_ops ops;
	void *arg;
	char program[4096];
	bool pdeathsig;
	struct mb_child *children;
	int live;
};

int mb_sup_create(uv_loop_t *loop, const struct mb_sup_ops *ops, void *arg, struct mb_sup **out)
{
	struct mb_sup *s = calloc(1, sizeof(*s));
	if (!s)
		return MB_ENOMEM;
	s->loop = loop;
	if (ops)
		s->ops = *ops;
	s->arg = arg;
	s->pdeathsig = true;
	ssize_t n = readlink("/proc/self/exe", s->program, sizeof(s->program) - 1);
	if (n <= 0) {
		free(s);
		return MB_ESYS;
	}
	s->program[n] = '\0';
	*out = s;
	return 0;
}

int mb_sup_set_program(struct mb_sup *s, const char *path)
{
	if (!path)
		return 0;
	if (strlen(path) >= sizeof(s->program))
		return MB_ETOOBIG;
	strcpy(s->program, path);
	return 0;
}

void mb_sup_set_pdeathsig(struct mb_sup *s, bool on) { s->pdeathsig = on; }

const char *mb_sup_program(const struct mb_sup *s) { return s->program; }

static void child_free_if_done(struct mb_child *c)
{
	if (c->open_handles > 0 || !c->released)
		return;
	struct mb_sup *s = c->sup;
	for (struct mb_child **pp = s ? &s->children : NULL; pp && *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	mb_stats_reader_destroy(c->reader);
	free(c);
}

static void on_handle_closed(uv_handle_t *h)
{
	struct mb_child *c = h->data;
	c->open_handles--;
	child_free_if_done(c);
}

static void close_handle(struct mb_child *c, uv_handle_t *h)
{
	(void)c;
	if (!uv_is_closing(h))
		uv_close(h, on_handle_closed);
}

/* Close every handle of a child (it frees itself when the last one closes). */
static void close_all(struct mb_child *c)
{
	close_handle(c, (uv_handle_t *)&c->out);
	close_handle(c, (uv_handle_t *)&c->err);
	close_handle(c, (uv_handle_t *)&c->stats);
	close_handle(c, (uv_handle_t *)&c->kill_timer);
	close_handle(c, (uv_handle_t *)&c->drain_timer);
	close_handle(c, (uv_handle_t *)&c->proc);
}

static void tail_push(struct mb_child *c, const char *line)
{
	snprintf(c->tail[c->tail_next], LINE_MAX_LEN, "%s", line);
	c->tail_next = (c->tail_next + 1) % TAIL_LINES;
	if (c->tail_count < TAIL_LINES)
		c->tail_count++;
}

static void parse_listening(struct mb_child *c, const char *line)
{
	const char *p = strstr(line, "listening on ");
	if (!p)
		return;
	p += strlen("listening on ");
	char addr[256];
	size_t n = strcspn(p, " \t\r\n");
	if (n == 0 || n >= sizeof(addr))
		return;
	memcpy(addr, p, n);
	addr[n] = '\0';
	char *colon = strrchr(addr, ':');
	if (!colon)
		return;
	*colon = '\0';
	char *end;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return;
	c->port = (int)port;
	if (c->sup->ops.on_listening)
		c->sup->ops.on_listening(c->sup->arg, c, addr, (int)port);
}

static void line_done(struct mb_child *c, enum mb_child_stream st, const char *line)
{
	if (!line[0])
		return;
	if (st == MB_CHILD_STDERR)
		tail_push(c, line);
	else if (c->port < 0)
		parse_listening(c, line);
	if (c->sup->ops.on_line)
		c->sup->ops.on_line(c->sup->arg, c, st, line);
}

static void lines_feed(struct mb_child *c, enum mb_child_stream st, const char *buf, size_t n)
{
	struct linebuf *lb = st == MB_CHILD_STDOUT ? &c->lb_out : &c->lb_err;
	for (size_t i = 0; i < n; i++) {
		char ch = buf[i];
		if (ch == '\n' || ch == '\r') {
			lb->buf[lb->len] = '\0';
			line_done(c, st, lb->buf);
			lb->len = 0;
		} else if (lb->len < LINE_MAX_LEN - 1) {
			lb->buf[lb->len++] = ch;
		}
	}
}

static void lines_flush(struct mb_child *c, enum mb_child_stream st)
{
	struct linebuf *lb = st == MB_CHILD_STDOUT ? &c->lb_out : &c->lb_err;
	if (lb->len) {
		lb->buf[lb->len] = '\0';
		line_done(c, st, lb->buf);
		lb->len = 0;
	}
}

static void maybe_report_exit(struct mb_child *c)
{
	if (c->reported || !c->exited)
		return;
	if (!(c->out_eof && c->err_eof && c->stats_eof) &&
	    uv_is_active((uv_handle_t *)&c->drain_timer))
		return;
	c->reported = true;
	uv_timer_stop(&c->drain_timer);
	uv_timer_stop(&c->kill_timer);
	lines_flush(c, MB_CHILD_STDOUT);
	lines_flush(c, MB_CHILD_STDERR);
	if (!c->stats_eof) {
		mb_stats_reader_eof(c->reader);
		c->stats_eof = true;
	}
	close_all(c);
	c->sup->live--;
	struct mb_sup *s = c->sup;
	if (s->ops.on_exit)
		s->ops.on_exit(s->arg, c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	buf->base = malloc(65536);
	buf->len = buf->base ? 65536 : 0;
}

static void on_read_common(uv_stream_t *st, ssize_t n, const uv_buf_t *buf,
			   enum mb_child_stream which)
{
	struct mb_child *c = st->data;
	if (n > 0 && which == MB_CHILD_STDOUT && c->stats_on_stdout)
		mb_stats_reader_feed(c->reader, buf->base, (size_t)n);
	else if (n > 0)
		lines_feed(c, which, buf->base, (size_t)n);
	free(buf->base);
	if (n < 0) {
		uv_read_stop(st);
		if (which == MB_CHILD_STDOUT)
			c->out_eof = true;
		else
			c->err_eof = true;
		maybe_report_exit(c);
	}
}

static void on_read_out(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	on_read_common(st, n, buf, MB_CHILD_STDOUT);
}

static void on_read_err(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	on_read_common(st, n, buf, MB_CHILD_STDERR);
}

static void on_read_stats(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct mb_child *c = st->data;
	if (n > 0)
		mb_stats_reader_feed(c->reader, buf->base, (size_t)n);
	free(buf->base);
	if (n < 0) {
		uv_read_stop(st);
		mb_stats_reader_eof(c->reader);
		c->stats_eof = true;
		maybe_report_exit(c);
	}
}

static void on_stats_msg(void *arg, const struct mb_stats_msg *m)
{
	struct mb_child *c = arg;
	c->stats_lines++;
	if (c->sup->ops.on_stats)
		c->sup->ops.on_stats(c->sup->arg, c, m);
}

static void on_drain_timeout(uv_timer_t *t)
{
	struct mb_child *c = t->data;
	maybe_report_exit(c);
}

static void on_proc_exit(uv_process_t *p, int64_t status, int sig)
{
	struct mb_child *c = p->data;
	c->exited = true;
	c->exit_status = status;
	c->term_signal = sig;
	emergency_del(c->pid);
	/* Anything left in the child's group goes with it. */
	kill(-c->pid, SIGKILL);
	uv_timer_stop(&c->kill_timer);
	uv_timer_start(&c->drain_timer, on_drain_timeout, DRAIN_MS, 0);
	maybe_report_exit(c);
}

static void on_kill_timeout(uv_timer_t *t)
{
	struct mb_child *c = t->data;
	if (!c->exited) {
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
	}
}

int mb_sup_spawn(struct mb_sup *s, const char *name, const char *const *args, struct mb_child **out)
{
	return mb_sup_spawn_ex(s, name, args, NULL, out);
}

int mb_sup_spawn_ex(struct mb_sup *s, const char *name, const char *const *args,
		    const struct mb_spawn_opts *o, struct mb_child **out)
{
	const char *program = o && o->program ? o->program : s->program;
	struct mb_child *c = calloc(1, sizeof(*c));
	if (!c)
		return MB_ENOMEM;
	c->sup = s;
	c->port = -1;
	c->exit_status = -1;
	c->stats_on_stdout = o && o->stats_on_stdout;
	c->stop_signal = o ? o->stop_signal : 0;
	snprintf(c->name, sizeof(c->name), "%s", name);
	int rc = mb_stats_reader_create(on_stats_msg, c, &c->reader);
	if (rc) {
		free(c);
		return rc;
	}

	size_t nargs = 0;
	while (args && args[nargs])
		nargs++;
	const char **argv = calloc(nargs + 8, sizeof(*argv));
	if (!argv) {
		mb_stats_reader_destroy(c->reader);
		free(c);
		return MB_ENOMEM;
	}
	size_t k = 0;
	const char *file = program;
	if (s->pdeathsig && access("/usr/bin/setpriv", X_OK) == 0) {
		file = "/usr/bin/setpriv";
		argv[k++] = "setpriv";
		argv[k++] = "--pdeathsig";
		argv[k++] = "TERM";
		argv[k++] = "--";
		argv[k++] = program;
	} else {
		argv[k++] = program;
	}
	for (size_t i = 0; i < nargs; i++)
		argv[k++] = args[i];
	argv[k] = NULL;

	uv_pipe_init(s->loop, &c->out, 0);
	uv_pipe_init(s->loop, &c->err, 0);
	uv_pipe_init(s->loop, &c->stats, 0);
	uv_timer_init(s->loop, &c->kill_timer);
	uv_timer_init(s->loop, &c->drain_timer);
	c->out.data = c->err.data = c->stats.data = c;
	c->kill_timer.data = c->drain_timer.data = c;
	c->proc.data = c;
	c->open_handles = 5;

	uv_stdio_container_t stdio[4];
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&c->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&c->err;
	/* a socket pair: the child writes its stats, and may read control
	 * lines (mb_child_send) */
	stdio[3].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE | UV_READABLE_PIPE;
	stdio[3].data.stream = (uv_stream_t *)&c->stats;

	uv_process_options_t opt;
	memset(&opt, 0, sizeof(opt));
	opt.file = file;
	opt.args = (char **)argv;
	opt.exit_cb = on_proc_exit;
	opt.flags = UV_PROCESS_DETACHED;
	opt.stdio = stdio;
	opt.stdio_count = 4;

	c->next = s->children;
	s->children = c;
	rc = uv_spawn(s->loop, &c->proc, &opt);
	free(argv);
	if (rc) {
		/* Nothing started: close what was opened and free. */
		c->released = true;
		c->reported = true;
		c->open_handles++;
		close_handle(c, (uv_handle_t *)&c->proc);
		close_handle(c, (uv_handle_t *)&c->out);
		close_handle(c, (uv_handle_t *)&c->err);
		close_handle(c, (uv_handle_t *)&c->stats);
		close_handle(c, (uv_handle_t *)&c->kill_timer);
		close_handle(c, (uv_handle_t *)&c->drain_timer);
		return rc == UV_ENOENT ? MB_ENOTFOUND : MB_ECHILD;
	}
	c->open_handles++; /* the process handle */
	c->spawned = true;
	c->pid = c->proc.pid;
	emergency_add(c->pid);
	s->live++;
	uv_read_start((uv_stream_t *)&c->out, on_alloc, on_read_out);
	uv_read_start((uv_stream_t *)&c->err, on_alloc, on_read_err);
	uv_read_start((uv_stream_t *)&c->stats, on_alloc, on_read_stats);
	*out = c;
	return 0;
}

struct send_req {
	uv_write_t w;
	char data[];
};

static void on_sent(uv_write_t *w, int status)
{
	(void)status;
	free(w);
}

int mb_child_send(struct mb_child *c, const char *line)
{
	if (!c || c->exited || c->stats_eof || !c->spawned)
		return MB_ECLOSED;
	size_t n = strlen(line);
	struct send_req *r = malloc(sizeof(*r) + n + 1);
	if (!r)
		return MB_ENOMEM;
	memcpy(r->data, line, n);
	r->data[n] = '\n';
	uv_buf_t b = uv_buf_init(r->data, (unsigned)(n + 1));
	if (uv_write(&r->w, (uv_stream_t *)&c->stats, &b, 1, on_sent)) {
		free(r);
		return MB_ECLOSED;
	}
	return 0;
}

int mb_child_kill(struct mb_child *c)
{
	if (!c || c->exited || !c->spawned)
		return MB_ESTATE;
	kill(c->pid, SIGKILL);
	return 0;
}

int mb_child_stop(struct mb_child *c, unsigned grace_ms)
{
	if (c->exited)
		return 0;
	if (c->stop_requested)
		return 0;
	c->stop_requested = true;
	if (c->stop_signal) {
		kill(c->pid, c->stop_signal);
	} else {
		kill(-c->pid, SIGTERM);
		kill(c->pid, SIGTERM);
	}
	uv_timer_start(&c->kill_timer, on_kill_timeout, grace_ms, 0);
	return 0;
}

void mb_sup_stop_all(struct mb_sup *s, unsigned grace_ms)
{
	for (struct mb_child *c = s->children; c; c = c->next)
		if (c->spawned && !c->exited)
			mb_child_stop(c, grace_ms);
}

int mb_sup_live(const struct mb_sup *s) { return s->live; }

void mb_child_release(struct mb_child *c)
{
	if (!c)
		return;
	c->released = true;
	if (c->reported)
		child_free_if_done(c);
}

void mb_sup_destroy(struct mb_sup *s)
{
	if (!s)
		return;
	struct mb_child *c = s->children;
	while (c) {
		struct mb_child *next = c->next;
		if (c->spawned && !c->exited) {
			kill(-c->pid, SIGKILL);
			kill(c->pid, SIGKILL);
			emergency_del(c->pid);
			/* Reap it now: the process handle is closed below. */
			waitpid(c->pid, NULL, 0);
			c->exited = true;
		}
		if (!c->reported) {
			c->reported = true;
			close_all(c);
		}
		c = next;
	}
	/* Detach: children free themselves as their handles close. */
	c = s->children;
	while (c) {
		struct mb_child *next = c->next;
		c->next = NULL;
		c->released = true;
		c->sup = NULL;
		if (c->open_handles == 0) {
			mb_stats_reader_destroy(c->reader);
			free(c);
		}
		c = next;
	}
	s->children = NULL;
	free(s);
}

pid_t mb_child_pid(const struct mb_child *c) { return c->pid; }

bool mb_child_exited(const struct mb_child *c) { return c->exited; }

bool mb_child_stop_requested(const struct mb_child *c) { return c->stop_requested; }

int64_t mb_child_exit_status(const struct mb_child *c) { return c->exit_status; }

int mb_child_term_signal(const struct mb_child *c) { return c->term_signal; }

int mb_child_port(const struct mb_child *c) { return c->port; }

uint64_t mb_child_stats_lines(const struct mb_child *c) { return c->stats_lines; }

uint64_t mb_child_bad_lines(const struct mb_child *c)
{
	return mb_stats_reader_bad_lines(c->reader);
}

void mb_child_stderr_tail(const struct mb_child *c, char *buf, size_t len)
{
	size_t used = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	int start = (c->tail_next - c->tail_count + TAIL_LINES) % TAIL_LINES;
	for (int i = 0; i < c->tail_count; i++) {
		const char *line = c->tail[(start + i) % TAIL_LINES];
		int n = snprintf(buf + used, len - used, "%s%s", used ? "\n" : "", line);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

void mb_child_describe_exit(const struct mb_child *c, char *buf, size_t len)
{
	/* the first of the last (up to) three stderr lines: usually the error,
	 * before any usage text */
	char last[3 * LINE_MAX_LEN + 8] = "";
	int n = c->tail_count < 3 ? c->tail_count : 3;
	for (int i = n; i > 0; i--) {
		const char *l = c->tail[(c->tail_next - i + TAIL_LINES) % TAIL_LINES];
		size_t used = strlen(last);
		snprintf(last + used, sizeof(last) - used, "%s%s", used ? " | " : "", l);
	}
	if (!c->exited)
		snprintf(buf, len, "%s is running (pid %ld)", c->name, (long)c->pid);
	else if (c->term_signal)
		snprintf(buf, len, "%s killed by signal %d (%s)%s%s", c->name, c->term_signal,
			 strsignal(c->term_signal), *last ? ": " : "", last);
	else
		snprintf(buf, len, "%s exited with status %lld%s%s", c->name,
			 (long long)c->exit_status, *last ? ": " : "", last);
}

void mb_child_set_data(struct mb_child *c, void *data) { c->data = data; }

void *mb_child_data(const struct mb_child *c) { return c->data; }
