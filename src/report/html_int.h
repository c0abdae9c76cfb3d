/* report/html_int.h: what the report's files share (html.c: the page and
 * its entry points; htmlsec.c: the sections; htmlout.c: HTML output and
 * JSON lookups): the documents being reported and the page being written.
 * Nothing outside src/report/html*.c includes it.
 */
#ifndef MB_REPORT_HTML_INT_H
#define MB_REPORT_HTML_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/scenario.h"
#include "report/report.h"
#include "report/runcmp.h"
#include "core/table.h"

enum doc_kind { DOC_RUN, DOC_CAPACITY, DOC_STORAGE };

struct doc {
	json_t *j;
	const char *name;
	enum doc_kind kind;
	struct mb_run_summary *sum; /* DOC_RUN */
	int run_no;		    /* 1-based among runs */
};

struct rep {
	FILE *f;
	struct doc *d;
	size_t n;
	const struct mb_run_summary *runs[MB_RUNCMP_MAX_RUNS];
	const char *targets[MB_RUNCMP_MAX_RUNS];
	char target_buf[MB_RUNCMP_MAX_RUNS][128];
	size_t nruns;
	json_t *charts; /* array of chart objects for the script */
	int chart_no;
};

/* htmlout.c: output and lookups. */
void mb__html_out(struct rep *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mb__html_esc(struct rep *r, const char *s);
void mb__html_raw_script(struct rep *r, const char *s);
void mb__html_td_num(struct rep *r, bool has, double v, int dec);
void mb__html_td_text(struct rep *r, const char *s);
const char *mb__html_jtext(const json_t *v, char *buf, size_t len);
const json_t *mb__html_jpath(const json_t *j, const char *path);
double mb__html_jnum(const json_t *j, const char *path, bool *has);
/* htmlsec.c: the sections, and a run's target as the header names it. */
const char *mb__html_run_target(const json_t *j, char *buf, size_t len);
void mb__html_sec_facts(struct rep *r);
void mb__html_table(struct rep *r, const struct mb_table *t, const char *cls);
void mb__html_sec_compare(struct rep *r, const struct mb_scenario *sc);
void mb__html_sec_charts(struct rep *r);
void mb__html_sec_actions(struct rep *r);
void mb__html_sec_storage(struct rep *r);
void mb__html_sec_capacity(struct rep *r);
void mb__html_sec_findings(struct rep *r);

#endif
