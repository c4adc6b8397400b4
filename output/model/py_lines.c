// SPDX-License-Identifier: MIT
#include "output/model/py_lines.h"

#define NO_LINE (-128) /* 3.10: a range of instructions without a line */

/* 3.8, 3.9 co_lnotab: (address increment in bytes, signed line increment) pairs; the line of
 * an address is the one reached after the last increment at or before it. */
static int lnotab_line(const uint8_t *t, size_t len, bool cut, int line, uint32_t addr)
{
	uint32_t at = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		at += t[i];
		if (at > addr)
			return line;
		line += (int8_t)t[i + 1];
	}
	/* past the table's end the last line holds, unless the table was cut short */
	return cut ? 0 : line;
}

/* 3.10 co_linetable: (bytes covered, signed line delta) pairs, each an address range. */
static int linetable310_line(const uint8_t *t, size_t len, int line, uint32_t addr)
{
	uint32_t start = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint32_t end = start + t[i];
		int delta = (int8_t)t[i + 1];

		if (delta != NO_LINE)
			line += delta;
		if (addr >= start && addr < end)
			return delta == NO_LINE ? 0 : line;
		start = end;
	}
	return 0;
}

/* 3.11+ varints: 6 bits per byte, least significant first, 0x40 = more follows. */
static int read_varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0;
	unsigned shift = 0;

	for (;;) {
		if (*i >= len || shift > 30)
			return -1;
		uint8_t b = t[(*i)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	*out = v;
	return 0;
}

static int read_svarint(const uint8_t *t, size_t len, size_t *i, int *out)
{
	uint32_t v;

	if (read_varint(t, len, i, &v))
		return -1;
	*out = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
	return 0;
}

/* One location entry's line delta; -1 on a corrupt or cut entry. Skips its column data. */
static int location_delta(const uint8_t *t, size_t len, size_t *i, unsigned code, int *delta,
			  int *has_line)
{
	uint32_t skip;

	*delta = 0;
	*has_line = 1;
	switch (code) {
	case 15: /* no location */
		*has_line = 0;
		return 0;
	case 14: /* long form: line delta, end line delta, column, end column */
		if (read_svarint(t, len, i, delta))
			return -1;
		for (int k = 0; k < 3; k++)
			if (read_varint(t, len, i, &skip))
				return -1;
		return 0;
	case 13: /* no columns */
		return read_svarint(t, len, i, delta);
	case 10:
	case 11:
	case 12: /* one-line form: two column bytes */
		*delta = (int)code - 10;
		*i += 2;
		return *i <= len ? 0 : -1;
	default: /* short form: one column byte */
		*i += 1;
		return *i <= len ? 0 : -1;
	}
}

/* 3.11+ location table: entries of 1 CCCC LLL (code, length - 1 in code units) and data. */
static int locations_line(const uint8_t *t, size_t len, int line, uint32_t unit)
{
	uint32_t start = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t b = t[i++];
		int delta, has_line;

		if (!(b & 0x80))
			return 0; /* not at an entry's first byte: corrupt */
		if (location_delta(t, len, &i, (b >> 3) & 15, &delta, &has_line))
			return 0;
		line += delta;
		uint32_t end = start + (b & 7) + 1;

		if (unit >= start && unit < end)
			return has_line ? line : 0;
		start = end;
	}
	return 0;
}

int py_line_at(unsigned minor, const uint8_t *table, size_t len, bool cut, int firstlineno,
	       int32_t lasti)
{
	if (lasti < 0 || !table)
		return 0;
	if (minor <= 9)
		return lnotab_line(table, len, cut, firstlineno, (uint32_t)lasti * 2);
	if (minor == 10)
		return linetable310_line(table, len, firstlineno, (uint32_t)lasti * 2);
	return locations_line(table, len, firstlineno, (uint32_t)lasti);
}
