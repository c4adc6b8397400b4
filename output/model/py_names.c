// SPDX-License-Identifier: MIT
#include <stdio.h>
#include <string.h>
#include "output/model/py_names.h"

struct py_func_key py_frame_func(const struct py_model *pm, const struct py_frame *f)
{
	const struct py_code *c = py_frame_code(pm, f);

	/* names are interned, so equal ids are equal strings: one function however many
	 * processes (forked workers) or code objects (reloads) ran it */
	if (!c)
		return (struct py_func_key){UINT64_MAX, 0};
	return (struct py_func_key){(uint64_t)c->qualname << 32 | c->filename,
				    (uint64_t)(uint32_t)c->firstlineno};
}

/* The end of "lib/pythonX.Y/" in path, or NULL. */
static const char *after_stdlib_dir(const char *path)
{
	const char *p = path, *hit = NULL;

	while ((p = strstr(p, "/lib/python"))) {
		const char *slash = strchr(p + 11, '/');

		p += 11;
		if (slash && *p >= '0' && *p <= '9')
			hit = slash + 1;
	}
	return hit;
}

/* A program's own file, as py-spy shows it relative to the script's directory: its name, and
 * its directory's too for a package's __init__.py or __main__.py, which say nothing alone. */
static const char *script_name(const char *path)
{
	const char *base = strrchr(path, '/'), *dir;

	if (!base)
		return path;
	if (strcmp(base, "/__init__.py") && strcmp(base, "/__main__.py"))
		return base + 1;
	for (dir = base; dir > path && dir[-1] != '/'; dir--)
		;
	return dir;
}

const char *py_short_path(const char *path)
{
	static const char *const roots[] = {"site-packages/", "dist-packages/"};
	const char *best = NULL;

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		const char *p = path, *q;

		/* the last one: a virtualenv inside another tree has several */
		while ((q = strstr(p, roots[i]))) {
			p = q + strlen(roots[i]);
			if (!best || p > best)
				best = p;
		}
	}
	if (!best)
		best = after_stdlib_dir(path);
	if (!best)
		best = script_name(path);
	return best && *best ? best : path;
}

const char *py_frame_label(const struct py_model *pm, const struct py_frame *f, char *buf,
			   size_t len)
{
	const char *qualname, *filename;
	int line;

	py_frame_symbol(pm, f, &qualname, &filename, &line);
	if (line > 0)
		snprintf(buf, len, "%s (%s:%d)", qualname, py_short_path(filename), line);
	else
		snprintf(buf, len, "%s (%s)", qualname, py_short_path(filename));
	return buf;
}
