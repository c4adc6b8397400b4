// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "lib/json_writer.h"
#include "lib/table.h"
#include "lib/text_escape.h"

void table_init(struct table *t, const struct table_col *cols, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].s);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

struct table_cell *table_add_row(struct table *t)
{
	struct table_cell *row;

	if (t->nrows == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct table_cell *grown = realloc(t->cells, cap * t->ncols * sizeof(*grown));

		if (!grown)
			return NULL;
		t->cells = grown;
		t->cap = cap;
	}
	row = &t->cells[t->nrows++ * t->ncols];
	memset(row, 0, t->ncols * sizeof(*row));
	return row;
}

int table_set_str(struct table_cell *cell, const char *s)
{
	free(cell->s);
	cell->s = strdup(s ? s : "");
	return cell->s ? 0 : -1;
}

int table_column(const struct table *t, const char *key)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c].json_key, key))
			return (int)c;
	return -1;
}

static double cell_number(const struct table_col *col, const struct table_cell *cell)
{
	if (cell->empty)
		return -1.0; /* below every value: blanks sort last */
	return col->kind == COL_INT || col->kind == COL_ID ? (double)cell->u : cell->d;
}

/* Whether row a goes before row b: numbers descending, text ascending. */
static bool row_before(const struct table *t, int col, size_t a, size_t b)
{
	const struct table_col *c = &t->cols[col];
	const struct table_cell *x = &t->cells[a * t->ncols + (size_t)col];
	const struct table_cell *y = &t->cells[b * t->ncols + (size_t)col];

	if (c->kind == COL_STR)
		return strcmp(x->s ? x->s : "", y->s ? y->s : "") < 0;
	return cell_number(c, x) > cell_number(c, y);
}

/* Stable: on a tie the earlier row stays first. */
static void merge_sort(const struct table *t, int col, size_t *v, size_t *tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	merge_sort(t, col, v, tmp, h);
	merge_sort(t, col, v + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = row_before(t, col, v[j], v[i]) ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

/* A merge sort of row indices, then the rows moved once: O(n log n), for host-wide traces'
 * hundreds of thousands of rows. Out of memory, the rows keep their order. */
void table_sort(struct table *t, int col)
{
	size_t n = t->nrows, w = t->ncols, *idx, *tmp;
	struct table_cell *cells;

	if (col < 0 || (size_t)col >= w || n < 2)
		return;
	idx = malloc(n * sizeof(*idx));
	tmp = malloc(n * sizeof(*tmp));
	cells = malloc(n * w * sizeof(*cells));
	if (idx && tmp && cells) {
		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		merge_sort(t, col, idx, tmp, n);
		for (size_t i = 0; i < n; i++)
			memcpy(&cells[i * w], &t->cells[idx[i] * w], w * sizeof(*cells));
		free(t->cells);
		t->cells = cells;
		t->cap = n;
		cells = NULL;
	}
	free(cells);
	free(tmp);
	free(idx);
}

void table_limit(struct table *t, size_t n)
{
	for (size_t i = n * t->ncols; i < t->nrows * t->ncols; i++)
		free(t->cells[i].s);
	if (n < t->nrows)
		t->nrows = n;
}

/* 1234567.8 -> "1,234,567.8" */
static void format_grouped(char *buf, size_t len, double v, int decimals)
{
	char raw[64], *dot, *out = buf;
	size_t int_len, i;

	snprintf(raw, sizeof(raw), "%.*f", decimals, v);
	dot = strchr(raw, '.');
	int_len = dot ? (size_t)(dot - raw) : strlen(raw);
	for (i = 0; i < int_len && (size_t)(out - buf) < len - 2; i++) {
		*out++ = raw[i];
		if (raw[i] != '-' && (int_len - i - 1) % 3 == 0 && i + 1 < int_len)
			*out++ = ',';
	}
	snprintf(out, len - (size_t)(out - buf), "%s", dot ? dot : "");
}

static void format_cell(char *buf, size_t len, const struct table_col *c,
			const struct table_cell *v, enum table_format fmt)
{
	bool text = fmt == TABLE_TEXT;

	switch (c->kind) {
	case COL_STR:
		snprintf(buf, len, "%s", v->s ? v->s : "");
		break;
	case COL_ID:
		snprintf(buf, len, "%llu", (unsigned long long)v->u);
		break;
	case COL_INT:
		if (text)
			format_grouped(buf, len, (double)v->u, 0);
		else
			snprintf(buf, len, "%llu", (unsigned long long)v->u);
		break;
	case COL_FLOAT1:
	case COL_FLOAT3: {
		int decimals = c->kind == COL_FLOAT1 ? 1 : 3;

		if (text)
			format_grouped(buf, len, v->d, decimals);
		else
			snprintf(buf, len, "%.*f", decimals, v->d);
		break;
	}
	case COL_PCT:
		/* machine formats keep precision so shares add up to 100 */
		snprintf(buf, len, text ? "%.1f" : "%.4f", v->d);
		break;
	}
}

/* A cell as printed: text cells as they are, whatever their length (long C++ kernel names),
 * numbers formatted into buf. */
static const char *cell_text(char *buf, size_t len, const struct table_col *c,
			     const struct table_cell *v, enum table_format fmt)
{
	if (c->kind == COL_STR)
		return v->s ? v->s : "";
	if (v->empty)
		return "";
	format_cell(buf, len, c, v, fmt);
	return buf;
}

/* Text escaped (text_escape.h: a traced process names itself), padded to `width`; a last
 * column gets 0: no trailing blanks. */
static void print_left(FILE *out, const char *s, size_t width)
{
	text_print(out, s);
	for (size_t n = text_printed_len(s); n < width; n++)
		fputc(' ', out);
}

static void print_text(const struct table *t, FILE *out)
{
	size_t *width = calloc(t->ncols, sizeof(*width));
	char buf[512];

	if (!width)
		return;
	for (size_t c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->cols[c].title);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t n =
			    text_printed_len(cell_text(buf, sizeof(buf), &t->cols[c],
						       &t->cells[r * t->ncols + c], TABLE_TEXT));

			if (n > width[c])
				width[c] = n;
		}
	}
	for (int line = 0; line < 2; line++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *title = t->cols[c].title;
			bool left = t->cols[c].kind == COL_STR;

			size_t n = left && c + 1 == t->ncols ? strlen(title) : width[c];

			fputs(c ? "  " : " ", out);
			if (line == 0)
				fprintf(out, left ? "%-*s" : "%*s", (int)n, title);
			else
				for (size_t i = 0; i < n; i++)
					fputc(i < strlen(title) || !left ? '-' : ' ', out);
		}
		fputc('\n', out);
	}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			bool left = t->cols[c].kind == COL_STR;
			const char *s = cell_text(buf, sizeof(buf), &t->cols[c],
						  &t->cells[r * t->ncols + c], TABLE_TEXT);

			fputs(c ? "  " : " ", out);
			if (left)
				print_left(out, s, c + 1 == t->ncols ? 0 : width[c]);
			else
				fprintf(out, "%*s", (int)width[c], s);
		}
		fputc('\n', out);
	}
	free(width);
}

static void print_csv_field(FILE *out, const char *s, bool quote)
{
	if (!quote) {
		fputs(s, out);
		return;
	}
	/* CSV has no escapes of its own: control bytes and invalid UTF-8 as in text */
	fputc('"', out);
	while (*s) {
		size_t n = text_char_len(s, NULL);

		if (*s == '"')
			fputc('"', out);
		if (n) {
			fwrite(s, 1, n, out);
			s += n;
		} else {
			fprintf(out, "\\x%02x", (unsigned char)*s++);
		}
	}
	fputc('"', out);
}

static void print_csv(const struct table *t, FILE *out)
{
	char buf[512];

	for (size_t c = 0; c < t->ncols; c++) {
		fputs(c ? "," : "", out);
		print_csv_field(out, t->cols[c].title, true);
	}
	fputc('\n', out);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = cell_text(buf, sizeof(buf), &t->cols[c],
						  &t->cells[r * t->ncols + c], TABLE_CSV);

			fputs(c ? "," : "", out);
			print_csv_field(out, s, t->cols[c].kind == COL_STR);
		}
		fputc('\n', out);
	}
}

static void print_json(const struct table *t, FILE *out)
{
	char buf[512];

	fputc('[', out);
	for (size_t r = 0; r < t->nrows; r++) {
		fputs(r ? ",\n {" : "\n {", out);
		for (size_t c = 0; c < t->ncols; c++) {
			const struct table_cell *v = &t->cells[r * t->ncols + c];

			fprintf(out, "%s\"%s\": ", c ? ", " : "", t->cols[c].json_key);
			if (t->cols[c].kind == COL_STR) {
				json_print_string(out, v->s ? v->s : "");
				continue;
			}
			if (v->empty) {
				fputs("null", out);
				continue;
			}
			format_cell(buf, sizeof(buf), &t->cols[c], v, TABLE_JSON);
			fputs(buf, out);
		}
		fputc('}', out);
	}
	fputs(t->nrows ? "\n]" : "]", out);
}

void table_print(const struct table *t, enum table_format fmt, FILE *out)
{
	if (fmt == TABLE_TEXT)
		print_text(t, out);
	else if (fmt == TABLE_CSV)
		print_csv(t, out);
	else
		print_json(t, out);
}
