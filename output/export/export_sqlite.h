/* SPDX-License-Identifier: MIT */
/* `--format sqlite`: a database with the tables and columns of nsys's SQLite export where the
 * data is the same, and gpuspy's own (export_sqlite_gpuspy.c); docs/SQLITE.md. */
#ifndef GPUSPY_EXPORT_SQLITE_H
#define GPUSPY_EXPORT_SQLITE_H

#include <stddef.h>
#include "output/export/export_chrome.h"

/* Writes the database of trace `path` into `db_path`, an existing empty file. 0; -1 when the
 * trace cannot be read, -2 when the database cannot be written, with a message in err; the
 * caller removes db_path on failure. */
int export_sqlite(const char *path, const struct export_opts *opts, const char *db_path, char *err,
		  size_t errlen);

#endif /* GPUSPY_EXPORT_SQLITE_H */
