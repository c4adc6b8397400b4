// SPDX-License-Identifier: MIT
/* The user's frame of a Python stack (py_where.h). */
#include <string.h>
#include "output/analysis/py_where.h"
#include "output/analysis/wait_kinds.h"
#include "output/model/py_names.h"

bool py_where_is_library(const char *filename)
{
	const char *lib = strstr(filename, "/lib/python3");

	if (!strncmp(filename, "<frozen ", 8) || strstr(filename, "-packages/"))
		return true;
	return lib != NULL;
}

const struct py_frame *py_where_frame(const struct py_model *pm, const struct py_stack *s)
{
	if (!s || !s->nframes)
		return NULL;
	for (size_t j = 0; j < s->nframes; j++) {
		const struct py_frame *f = py_stack_frame(pm, s, j);
		const char *filename;

		/* a frame without its code record has no name: the user cannot act on it */
		if (!py_frame_symbol(pm, f, NULL, &filename, NULL) &&
		    !py_where_is_library(filename))
			return f;
	}
	return py_stack_frame(pm, s, 0);
}

const char *py_where_label(const struct py_model *pm, const struct py_stack *s, char *buf,
			   size_t len)
{
	const struct py_frame *f = py_where_frame(pm, s);

	if (!f) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	return py_frame_label(pm, f, buf, len);
}

bool py_where_in_data_loader(const struct py_model *pm, const struct py_stack *s)
{
	for (size_t j = 0; s && j < s->nframes; j++) {
		const char *filename;

		if (!py_frame_symbol(pm, py_stack_frame(pm, s, j), NULL, &filename, NULL) &&
		    wait_file_is_data_loader(filename))
			return true;
	}
	return false;
}
