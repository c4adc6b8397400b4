// SPDX-License-Identifier: MIT
/*
 * The database under `--format sqlite`. The file is written once and renamed into place by
 * export_cmd.c, so nothing needs protecting against a crash midway: no rollback journal and no
 * fsync per commit (a half-written temporary file is removed either way), which keeps a
 * millions-of-rows export fast; one transaction, since SQLite commits per statement otherwise.
 */
#include <stdio.h>
#include <string.h>
#include "output/export/export_sqlite_db.h"

int sqlite_db_fail(struct sqlite_db *d, const char *what)
{
	snprintf(d->err, d->errlen, "%s: %s", what,
		 d->db ? sqlite3_errmsg(d->db) : "out of memory");
	return -1;
}

int sqlite_db_exec(struct sqlite_db *d, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(d->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(d->err, d->errlen, "sqlite: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int sqlite_db_prepare(struct sqlite_db *d, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(d->db, sql, -1, st, NULL) != SQLITE_OK)
		return sqlite_db_fail(d, "sqlite");
	return 0;
}

int sqlite_db_insert(struct sqlite_db *d, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : sqlite_db_fail(d, "cannot write");
}

int sqlite_db_string(struct sqlite_db *d, const char *s, int64_t *id)
{
	size_t before = d->strings.n;
	uint32_t i;

	if (string_pool_intern(&d->strings, s, &i)) {
		snprintf(d->err, d->errlen, "out of memory");
		return -1;
	}
	*id = i;
	if (d->strings.n == before)
		return 0;
	sqlite3_bind_int64(d->string_stmt, 1, i);
	sqlite3_bind_text(d->string_stmt, 2, s, -1, SQLITE_STATIC);
	return sqlite_db_insert(d, d->string_stmt);
}

int sqlite_db_open(struct sqlite_db *d, const char *path, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->err = err;
	d->errlen = errlen;
	if (sqlite3_open_v2(path, &d->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite_db_fail(d, "cannot open database");
		sqlite_db_abandon(d);
		return -1;
	}
	if (sqlite_db_exec(d, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
			      "BEGIN; CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, "
			      "value TEXT NOT NULL);") ||
	    sqlite_db_prepare(d, "INSERT INTO StringIds VALUES (?, ?)", &d->string_stmt)) {
		sqlite_db_abandon(d);
		return -1;
	}
	return 0;
}

int sqlite_db_commit(struct sqlite_db *d)
{
	int ret = sqlite_db_exec(d, "COMMIT");

	sqlite3_finalize(d->string_stmt);
	d->string_stmt = NULL;
	if (sqlite3_close(d->db) != SQLITE_OK && !ret)
		ret = sqlite_db_fail(d, "cannot close database");
	d->db = NULL;
	string_pool_free(&d->strings);
	return ret;
}

void sqlite_db_abandon(struct sqlite_db *d)
{
	sqlite3_finalize(d->string_stmt);
	d->string_stmt = NULL;
	sqlite3_close_v2(d->db); /* NULL is harmless; _v2: never leaks on a statement left open */
	d->db = NULL;
	string_pool_free(&d->strings);
}
