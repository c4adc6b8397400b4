// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "lib/messages.h"
#include "loader/python/py_code.h"
#include "output/trace/trace_writer.h"

#define STR_HEADER 40	     /* PyASCIIObject up to and including `state` */
#define CODE_READ  (136 + 8) /* the largest PyCodeObject field read: co_linetable on 3.11+ */

/* Appends code point `c` as UTF-8 if it fits (keeping room for the NUL); false when full. */
static bool put_utf8(char *buf, size_t len, size_t *at, uint32_t c)
{
	char tmp[4];
	size_t n;

	if (c < 0x80) {
		tmp[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		tmp[0] = (char)(0xc0 | c >> 6);
		tmp[1] = (char)(0x80 | (c & 63));
		n = 2;
	} else if (c < 0x10000) {
		tmp[0] = (char)(0xe0 | c >> 12);
		tmp[1] = (char)(0x80 | (c >> 6 & 63));
		tmp[2] = (char)(0x80 | (c & 63));
		n = 3;
	} else {
		tmp[0] = (char)(0xf0 | (c >> 18 & 7));
		tmp[1] = (char)(0x80 | (c >> 12 & 63));
		tmp[2] = (char)(0x80 | (c >> 6 & 63));
		tmp[3] = (char)(0x80 | (c & 63));
		n = 4;
	}
	if (*at + n >= len)
		return false;
	memcpy(buf + *at, tmp, n);
	*at += n;
	return true;
}

/* A compact string's characters (1, 2 or 4 bytes each) to UTF-8. */
static void to_utf8(const unsigned char *data, size_t count, unsigned kind, char *buf, size_t len)
{
	size_t at = 0;

	for (size_t i = 0; i < count; i++) {
		uint32_t c = 0;

		memcpy(&c, data + i * kind, kind); /* little-endian: the low bytes */
		if (!put_utf8(buf, len, &at, c))
			break;
	}
	buf[at] = '\0';
}

int py_read_str(pid_t pid, const struct py_runtime *rt, uint64_t obj, char *buf, size_t len)
{
	unsigned char hdr[STR_HEADER], data[PY_CODE_FILENAME_MAX * 4];
	uint64_t type, length;
	uint32_t state, kind;
	size_t count;
	int err;

	buf[0] = '\0';
	if (!obj)
		return -EINVAL;
	err = py_mem_read(pid, obj, hdr, sizeof(hdr));
	if (err)
		return err;
	memcpy(&type, hdr + PY_OB_TYPE, sizeof(type));
	memcpy(&length, hdr + PY_STR_LENGTH, sizeof(length));
	memcpy(&state, hdr + PY_STR_STATE, sizeof(state));
	kind = state >> 2 & 7;
	/* bit 5: compact (data follows the header); bit 6: ASCII (the shorter header) */
	if (type != rt->unicode_type || !(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL;
	count = length < len - 1 ? (size_t)length : len - 1;
	if (count * kind > sizeof(data))
		count = sizeof(data) / kind;
	err = py_mem_read(pid,
			  obj + (uint64_t)((state >> 6 & 1) ? rt->layout->str_ascii_data
							    : rt->layout->str_compact_data),
			  data, count * kind);
	if (err)
		return err;
	to_utf8(data, count, kind, buf, len);
	return 0;
}

/* The line table: co_lnotab or co_linetable, a bytes object; cut beyond PY_CODE_TABLE_MAX. */
static int read_table(pid_t pid, uint64_t obj, unsigned char *buf, size_t *len, bool *cut)
{
	uint64_t size;
	int err = py_mem_read(pid, obj + PY_BYTES_SIZE, &size, sizeof(size));

	if (err)
		return err;
	*cut = size > PY_CODE_TABLE_MAX;
	*len = *cut ? PY_CODE_TABLE_MAX : (size_t)size;
	return *len ? py_mem_read(pid, obj + PY_BYTES_DATA, buf, *len) : 0;
}

struct code_text {
	char qualname[PY_CODE_NAME_MAX];
	char filename[PY_CODE_FILENAME_MAX];
	unsigned char table[PY_CODE_TABLE_MAX];
	size_t table_len;
	int32_t firstlineno;
	bool cut;
};

/* 0 and the object's text; 1 when it is not the object the stack saw; -errno. */
static int read_code(pid_t pid, const struct py_runtime *rt, uint64_t code, uint32_t stamp,
		     struct code_text *t)
{
	const struct py_layout *l = rt->layout;
	unsigned char hdr[CODE_READ];
	uint64_t type, filename, name, qualname, lines;
	int err = py_mem_read(pid, code, hdr, (size_t)l->co_lines + 8);

	if (err)
		return err == -ENOENT ? err : 1;
	memcpy(&type, hdr + PY_OB_TYPE, 8);
	memcpy(&filename, hdr + l->co_filename, 8);
	memcpy(&name, hdr + l->co_name, 8);
	memcpy(&lines, hdr + l->co_lines, 8);
	memcpy(&t->firstlineno, hdr + l->co_firstlineno, 4);
	if (type != rt->code_type || gs_py_code_stamp(filename, name) != stamp)
		return 1;
	qualname = name;
	if (l->co_qualname >= 0)
		memcpy(&qualname, hdr + l->co_qualname, 8);
	err = py_read_str(pid, rt, qualname, t->qualname, sizeof(t->qualname));
	err = err ?: py_read_str(pid, rt, filename, t->filename, sizeof(t->filename));
	err = err ?: read_table(pid, lines, t->table, &t->table_len, &t->cut);
	if (err)
		return err == -ENOENT ? err : 1;
	return 0;
}

static int write_record(struct trace_writer *w, pid_t pid, uint64_t code, uint32_t stamp,
			uint64_t ts, unsigned minor, const struct code_text *t, uint32_t flags)
{
	static uint64_t buf[(sizeof(struct gs_py_code) + sizeof(struct code_text) + 16) / 8];
	struct gs_py_code *c = (struct gs_py_code *)buf;
	size_t qlen = strlen(t->qualname), flen = strlen(t->filename), size;

	size = sizeof(*c) + qlen + 1 + flen + 1 + t->table_len;
	size = (size + 7) & ~(size_t)7;
	memset(buf, 0, size);
	c->hdr.type = GS_REC_PY_CODE;
	c->hdr.size = (uint16_t)size;
	c->hdr.pid = (uint32_t)pid;
	c->hdr.flags = flags | (t->cut ? GS_PY_CODE_CUT : 0);
	c->hdr.ts = ts;
	c->code = code;
	c->stamp = stamp;
	c->firstlineno = t->firstlineno;
	c->minor = (uint16_t)minor;
	c->qualname_len = (uint16_t)qlen;
	c->filename_len = (uint16_t)flen;
	c->linetable_len = (uint16_t)t->table_len;
	memcpy(c->data, t->qualname, qlen);
	memcpy(c->data + qlen + 1, t->filename, flen);
	memcpy(c->data + qlen + 1 + flen + 1, t->table, t->table_len);
	return trace_writer_append(w, &c->hdr);
}

int py_code_write(struct trace_writer *w, const struct py_runtime *rt, pid_t pid, const pid_t *from,
		  size_t nfrom, uint64_t code, uint32_t stamp, uint64_t ts)
{
	static struct code_text t;
	int ret = -ENOENT;

	for (size_t i = 0; i < nfrom && ret == -ENOENT; i++)
		ret = read_code(from[i], rt, code, stamp, &t);
	if (ret < 0)
		return 0; /* the process is gone: nothing to say about its code */
	if (ret > 0) {
		gs_debug("code object %#llx of pid %d is gone (stamp %#x)",
			 (unsigned long long)code, pid, stamp);
		memset(&t, 0, sizeof(t));
		return write_record(w, pid, code, stamp, ts, rt->layout->minor, &t,
				    GS_PY_CODE_STALE);
	}
	return write_record(w, pid, code, stamp, ts, rt->layout->minor, &t, 0);
}
