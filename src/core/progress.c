/* progress.c: the one progress line (see progress.h).
 *
 * State: created -> (updates) -> destroyed.  base_t/base_done hold the rate
 * baseline once taken (have_base); last_t/last_tenth the last non-terminal
 * line; drawn says a terminal line is open and needs a newline at the end.
 */
#include "core/progress.h"

#include <stdlib.h>

#include "core/error.h"

#define BAR_WIDTH 30

struct mb_progress {
	struct mb_progress_opts o;
	double t0, base_t, last_t;
	uint64_t base_done;
	bool have_base, drawn;
	int last_tenth;
};

void mb_progress_fmt_dur(double s, char *buf, size_t len)
{
	if (s < 0 || s > 360000)
		snprintf(buf, len, "--:--");
	else if (s >= 3600)
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
	else
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
}

int mb_progress_create(const struct mb_progress_opts *o, double now_s, struct mb_progress **out)
{
	if (!o || !o->out || !out)
		return MB_EINVAL;
	struct mb_progress *p = calloc(1, sizeof(*p));
	if (!p)
		return MB_ENOMEM;
	p->o = *o;
	if (!p->o.label)
		p->o.label = "progress";
	if (!p->o.noun)
		p->o.noun = "items";
	p->t0 = now_s;
	p->last_t = now_s;
	p->last_tenth = -1;
	*out = p;
	return 0;
}

void mb_progress_update(struct mb_progress *p, double now_s, uint64_t done, uint64_t total,
			const char *extra, bool final)
{
	if (!p)
		return;
	if (!p->have_base && now_s - p->t0 >= p->o.warmup_s) {
		p->have_base = true;
		p->base_t = now_s;
		p->base_done = done;
	}
	double rate = 0;
	if (p->have_base && now_s > p->base_t && done > p->base_done)
		rate = (double)(done - p->base_done) / (now_s - p->base_t);
	char eta[32];
	mb_progress_fmt_dur(rate > 0 && total >= done ? (double)(total - done) / rate : -1, eta,
			    sizeof(eta));
	double frac = total ? (double)(done > total ? total : done) / (double)total : 1;
	const char *sep = extra && *extra ? " " : "";
	if (!extra)
		extra = "";
	if (p->o.tty) {
		int fill = (int)(frac * BAR_WIDTH);
		fprintf(p->o.out, "\r[%.*s%*s] %5.1f%% %llu/%llu %s %.0f/s%s%s ETA %s ", fill,
			"##############################", BAR_WIDTH - fill, "", frac * 100,
			(unsigned long long)done, (unsigned long long)total, p->o.noun, rate, sep,
			extra, eta);
		p->drawn = true;
	} else {
		int tenth = (int)(frac * 10);
		bool due = final || tenth != p->last_tenth ||
			   (p->o.every_s > 0 && now_s - p->last_t >= p->o.every_s);
		if (!due)
			return;
		fprintf(p->o.out, "%s: %5.1f%% %llu/%llu %s %.0f/s%s%s ETA %s\n", p->o.label,
			frac * 100, (unsigned long long)done, (unsigned long long)total, p->o.noun,
			rate, sep, extra, eta);
		p->last_tenth = tenth;
		p->last_t = now_s;
	}
	fflush(p->o.out);
}

void mb_progress_destroy(struct mb_progress *p)
{
	if (!p)
		return;
	if (p->drawn)
		fprintf(p->o.out, "\n");
	free(p);
}
