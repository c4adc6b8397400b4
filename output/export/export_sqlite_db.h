/* SPDX-License-Identifier: MIT */
/*
 * The database under `--format sqlite` (export_sqlite_db.c): one connection, one transaction
 * for the whole export, prepared statements reused row after row, and nsys's StringIds table
 * filled as names are first met (each name stored once, its id the pool's).
 */
#ifndef GPUSPY_EXPORT_SQLITE_DB_H
#define GPUSPY_EXPORT_SQLITE_DB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/string_pool.h"

struct sqlite_db {
	sqlite3 *db;
	sqlite3_stmt *string_stmt; /* INSERT INTO StringIds */
	struct string_pool strings;
	char *err;
	size_t errlen;
};

/* nsys's thread and process keys: the pid in bits 24..47, the tid in the low 24 bits. */
static inline int64_t sqlite_global_tid(uint32_t pid, uint32_t tid)
{
	return (int64_t)((uint64_t)pid << 24 | (tid & 0xffffffu));
}

/* Opens `path` (a new, empty file) and begins the transaction. 0, or -1 with err set. */
int sqlite_db_open(struct sqlite_db *d, const char *path, char *err, size_t errlen);
/* Commits and closes: 0, or -1 with the message in the err given to open. */
int sqlite_db_commit(struct sqlite_db *d);
/* Closes without committing (after a failure); the caller removes the file. */
void sqlite_db_abandon(struct sqlite_db *d);
/* Runs SQL without results (schema statements); 0, or -1 with err set. */
int sqlite_db_exec(struct sqlite_db *d, const char *sql);
int sqlite_db_prepare(struct sqlite_db *d, const char *sql, sqlite3_stmt **st);
/* Runs a bound insert and resets it for the next row; 0, or -1 with err set. */
int sqlite_db_insert(struct sqlite_db *d, sqlite3_stmt *st);
/* The StringIds id of `s`, added if new; 0, or -1 with err set. */
int sqlite_db_string(struct sqlite_db *d, const char *s, int64_t *id);
/* Sets err from the connection's last error, prefixed; returns -1. */
int sqlite_db_fail(struct sqlite_db *d, const char *what);

#endif /* GPUSPY_EXPORT_SQLITE_DB_H */
