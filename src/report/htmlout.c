/* report/htmlout.c: the report page's output primitives: formatted and
 * HTML-escaped text, table cells, a table model (report/table.h) as an
 * HTML table, the inline script's text (never "</script"), and lookups
 * of numbers and text in the run documents by dotted path.
 * Invariant: every text that came from a document goes out escaped.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "report/compare.h"
#include "report/html_int.h"

void mb__html_out(struct rep *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(r->f, fmt, ap);
	va_end(ap);
}

void mb__html_esc(struct rep *r, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", r->f);
			break;
		case '>':
			fputs("&gt;", r->f);
			break;
		case '&':
			fputs("&amp;", r->f);
			break;
		case '"':
			fputs("&quot;", r->f);
			break;
		default:
			fputc(*s, r->f);
		}
	}
}

/* Text inside <script> or <style>: never "</" (so never "</script>"). */
void mb__html_raw_script(struct rep *r, const char *s)
{
	for (; *s; s++) {
		if (s[0] == '<' && s[1] == '/') {
			fputs("<\\/", r->f);
			s++;
		} else {
			fputc(*s, r->f);
		}
	}
}

void mb__html_td_num(struct rep *r, bool has, double v, int dec)
{
	char buf[64];
	if (has)
		mb_format_number(v, dec, buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "n/a");
	mb__html_out(r, "<td class=\"n\">%s</td>", buf);
}

void mb__html_td_text(struct rep *r, const char *s)
{
	mb__html_out(r, "<td>");
	mb__html_esc(r, s && *s ? s : "n/a");
	mb__html_out(r, "</td>");
}

/* A JSON member as text: string, number, boolean; NULL when absent/null. */
const char *mb__html_jtext(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		/* four significant digits ("40", "0.04", "30.01"), whole above 100 */
		double x = json_real_value(v);
		snprintf(buf, len, fabs(x) >= 100 ? "%.0f" : "%.4g", x);
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "yes" : "no";
	if (json_is_object(v)) {
		/* e.g. a target {driver, address}: its members joined */
		size_t o = 0;
		const char *k;
		json_t *m;
		buf[0] = '\0';
		json_object_foreach((json_t *)v, k, m)
		{
			char t[128];
			const char *s = mb__html_jtext(m, t, sizeof(t));
			if (s && o < len)
				o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", s);
		}
		return buf[0] ? buf : NULL;
	}
	return NULL;
}

/* The first of several paths ("a.b") that the document has. */
const json_t *mb__html_jpath(const json_t *j, const char *path)
{
	char part[128];
	const json_t *cur = j;
	while (cur && *path) {
		const char *dot = strchr(path, '.');
		size_t n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		cur = json_object_get(cur, part);
		path += n + (dot ? 1 : 0);
	}
	return json_is_null(cur) ? NULL : cur;
}

double mb__html_jnum(const json_t *j, const char *path, bool *has)
{
	const json_t *v = mb__html_jpath(j, path);
	*has = json_is_number(v);
	return *has ? json_number_value(v) : 0;
}

/* An mb_table as an HTML table with its legend. */
void mb__html_table(struct rep *r, const struct mb_table *t, const char *cls)
{
	mb__html_out(r, "<div class=\"scroll\"><table class=\"%s\"><thead><tr><th></th>", cls);
	for (int c = 0; c < mb_table_cols(t); c++) {
		mb__html_out(r, "<th title=\"");
		mb__html_esc(r, mb_table_heading(t, c, true));
		mb__html_out(r, "\">");
		mb__html_esc(r, mb_table_heading(t, c, false));
		mb__html_out(r, "</th>");
	}
	mb__html_out(r, "</tr></thead><tbody>\n");
	for (int row = 0; row < mb_table_rows(t); row++) {
		enum mb_row_style st = mb_table_row_style(t, row);
		if (st == MB_ROW_SEPARATOR) {
			mb__html_out(r, "<tr class=\"sep\"><td colspan=\"%d\"></td></tr>\n",
				     mb_table_cols(t) + 1);
			continue;
		}
		mb__html_out(r, "<tr%s><th>", st == MB_ROW_HEADER ? " class=\"hdr\"" : "");
		mb__html_esc(r, mb_table_row_label(t, row));
		mb__html_out(r, "</th>");
		for (int c = 0; c < mb_table_cols(t); c++) {
			const char *cell = mb_table_cell(t, row, c);
			const char *cl = st == MB_ROW_HEADER ? "" : " class=\"n\"";
			if (st != MB_ROW_HEADER && (cell[0] == '+' || cell[0] == '-'))
				cl = cell[0] == '+' ? " class=\"n up\"" : " class=\"n down\"";
			mb__html_out(r, "<td%s>", cl);
			mb__html_esc(r, cell);
			mb__html_out(r, "</td>");
		}
		mb__html_out(r, "</tr>\n");
	}
	mb__html_out(r, "</tbody></table></div>\n<dl class=\"legend\">");
	for (int c = 0; c < mb_table_cols(t); c++) {
		mb__html_out(r, "<dt>");
		mb__html_esc(r, mb_table_heading(t, c, false));
		mb__html_out(r, "</dt><dd>");
		mb__html_esc(r, mb_table_heading(t, c, true));
		mb__html_out(r, "</dd>");
	}
	mb__html_out(r, "</dl>\n");
}
