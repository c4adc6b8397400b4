// SPDX-License-Identifier: MIT
/*
 * Tests of loader/live/prom_text.c: exact text of families with tricky label values and numbers,
 * value formatting, name validation, buffer reuse and the sticky out-of-memory flag. Exits 1 on
 * any mismatch. `prom_text_test --emit` writes the families to stdout for tests/prometheus.bats,
 * which lints them with promtool and has a real Prometheus scrape them; `--emit-bad-names`
 * the escaped process names, for tests/names.bats.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "loader/live/prom_text.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Families that follow Prometheus's naming conventions, so promtool's linter is quiet. */
static void build_families(struct prom_buf *b)
{
	static const struct prom_label launches[][2] = {
	    {{"container", "docker:0123456789ab"}, {"note", "say \"hi\""}},
	    {{"container", "pod:8f0e4a1c-3b2d-4c5e-9f6a-7b8c9d0e1f2a/0123456789ab"},
	     {"note", "C:\\path\\"}},
	    {{"container", "systemd:nginx.service"}, {"note", "two\nlines"}},
	    {{"container", "/"},
	     {"note", "\xcf\x80\xe2\x89\x88"
		      "3.14 \xe2\x9c\x93 \xf0\x9f\x98\x80"}},
	    {{"container", ""}, {"note", ""}},
	};
	static const struct prom_label gpu[] = {{"gpu", "0"}};

	prom_family(b, "gpuspy_kernel_launches_total", "counter",
		    "CUDA kernel launches seen, by container.\nA second line, and a \\ backslash.");
	for (size_t i = 0; i < ARRAY_SIZE(launches); i++)
		prom_sample(b, "gpuspy_kernel_launches_total", launches[i], 2,
			    i ? (double)i : 12345678901.0);
	prom_family(b, "gpuspy_gpu_busy_seconds_total", "counter", "Time a GPU ran kernels.");
	prom_sample(b, "gpuspy_gpu_busy_seconds_total", gpu, 1, 0.1 + 0.2);
	prom_sample(b, "gpuspy_gpu_busy_seconds_total", NULL, 0, 1.5e-7);
	prom_family(b, "gpuspy_gpu_memory_used_bytes", "gauge", "GPU memory in use.");
	prom_sample(b, "gpuspy_gpu_memory_used_bytes", gpu, 1, 9007199254740992.0);
	prom_sample(b, "gpuspy_gpu_memory_used_bytes", NULL, 0, 1e20);
	prom_family(b, "gpuspy_clock_skew_seconds", "gauge", "Offset of the GPU clock.");
	prom_sample(b, "gpuspy_clock_skew_seconds", (struct prom_label[]){{"gpu", "0"}}, 1, -3);
	prom_sample(b, "gpuspy_clock_skew_seconds", (struct prom_label[]){{"gpu", "1"}}, 1, NAN);
	prom_sample(b, "gpuspy_clock_skew_seconds", (struct prom_label[]){{"gpu", "2"}}, 1,
		    INFINITY);
	prom_sample(b, "gpuspy_clock_skew_seconds", (struct prom_label[]){{"gpu", "3"}}, 1,
		    -INFINITY);
}

static const char expected_families[] =
    "# HELP gpuspy_kernel_launches_total CUDA kernel launches seen, by container.\\n"
    "A second line, and a \\\\ backslash.\n"
    "# TYPE gpuspy_kernel_launches_total counter\n"
    "gpuspy_kernel_launches_total{container=\"docker:0123456789ab\",note=\"say \\\"hi\\\"\"} "
    "12345678901\n"
    "gpuspy_kernel_launches_total{container=\"pod:8f0e4a1c-3b2d-4c5e-9f6a-7b8c9d0e1f2a/"
    "0123456789ab\",note=\"C:\\\\path\\\\\"} 1\n"
    "gpuspy_kernel_launches_total{container=\"systemd:nginx.service\",note=\"two\\nlines\"} 2\n"
    "gpuspy_kernel_launches_total{container=\"/\",note=\"\xcf\x80\xe2\x89\x88"
    "3.14 \xe2\x9c\x93 \xf0\x9f\x98\x80\"} 3\n"
    "gpuspy_kernel_launches_total{container=\"\",note=\"\"} 4\n"
    "# HELP gpuspy_gpu_busy_seconds_total Time a GPU ran kernels.\n"
    "# TYPE gpuspy_gpu_busy_seconds_total counter\n"
    "gpuspy_gpu_busy_seconds_total{gpu=\"0\"} 0.30000000000000004\n"
    "gpuspy_gpu_busy_seconds_total 1.5e-07\n"
    "# HELP gpuspy_gpu_memory_used_bytes GPU memory in use.\n"
    "# TYPE gpuspy_gpu_memory_used_bytes gauge\n"
    "gpuspy_gpu_memory_used_bytes{gpu=\"0\"} 9007199254740992\n"
    "gpuspy_gpu_memory_used_bytes 1e+20\n"
    "# HELP gpuspy_clock_skew_seconds Offset of the GPU clock.\n"
    "# TYPE gpuspy_clock_skew_seconds gauge\n"
    "gpuspy_clock_skew_seconds{gpu=\"0\"} -3\n"
    "gpuspy_clock_skew_seconds{gpu=\"1\"} NaN\n"
    "gpuspy_clock_skew_seconds{gpu=\"2\"} +Inf\n"
    "gpuspy_clock_skew_seconds{gpu=\"3\"} -Inf\n";

static int failed;

static void expect_text(const char *what, const struct prom_buf *b, const char *want)
{
	if (!b->oom && b->data && b->len == strlen(want) && !strcmp(b->data, want))
		return;
	fprintf(stderr, "FAIL %s\n--- got (oom %d, len %zu)\n%s--- want (len %zu)\n%s---\n", what,
		b->oom, b->len, b->data ? b->data : "(null)\n", strlen(want), want);
	failed++;
}

static void check(const char *what, int ok)
{
	if (ok)
		return;
	fprintf(stderr, "FAIL %s\n", what);
	failed++;
}

static void test_families(void)
{
	struct prom_buf b = {0};
	char *data;

	build_families(&b);
	expect_text("families", &b, expected_families);
	/* a second scrape reuses the memory and writes the same text */
	data = b.data;
	prom_buf_reset(&b);
	check("reset: len 0", b.len == 0 && b.data && b.data[0] == '\0');
	build_families(&b);
	expect_text("families after reset", &b, expected_families);
	check("reset: memory kept", b.data == data);
	prom_buf_free(&b);
	check("free: zeroed", !b.data && !b.len && !b.cap && !b.oom);
	prom_buf_free(&b);
}

/*
 * Process names as a traced process can make them (prctl(PR_SET_NAME), or the kernel cutting a
 * longer name at 15 bytes inside a character): each label value comes out valid UTF-8 with no
 * control character but the escaped newline, the offending bytes as the text \xNN.
 */
static const struct {
	const char *comm, *label;
} bad_names[] = {
    /* "ééééééé" and half of an eighth é: the 15 bytes the kernel keeps of "éééééééé" */
    {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3",
     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\\\\xc3"},
    /* a CJK character cut after its first byte, and after two */
    {"ab\xe6", "ab\\\\xe6"},
    {"\xe6\x97", "\\\\xe6\\\\x97"},
    /* a terminal escape sequence, BEL, tab, DEL, carriage return */
    {"\x1b[31mred\x07", "\\\\x1b[31mred\\\\x07"},
    {"a\tb\x7f\r", "a\\\\x09b\\\\x7f\\\\x0d"},
    /* C1 control CSI in its UTF-8 form; U+00A0 right after is printable */
    {"\xc2\x9b\xc2\xa0", "\\\\xc2\\\\x9b\xc2\xa0"},
    /* overlong '/', a UTF-16 surrogate, a code point above U+10FFFF, a lone continuation */
    {"\xc0\xaf", "\\\\xc0\\\\xaf"},
    {"\xed\xa0\x80", "\\\\xed\\\\xa0\\\\x80"},
    {"\xf4\x90\x80\x80", "\\\\xf4\\\\x90\\\\x80\\\\x80"},
    {"\x80z", "\\\\x80z"},
    /* the format's own escapes are unchanged; a literal \x stays distinguishable */
    {"q\"\\x41\n", "q\\\"\\\\x41\\n"},
    /* the largest code point and a 4-byte emoji go out as they are */
    {"\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf\xf0\x9f\x98\x80"},
};

static void build_bad_names(struct prom_buf *b)
{
	prom_family(b, "gpuspy_test_process_info", "gauge", "Names a process can give itself.");
	for (size_t i = 0; i < ARRAY_SIZE(bad_names); i++) {
		char pid[16];
		struct prom_label l[2] = {{"pid", pid}, {"comm", bad_names[i].comm}};

		snprintf(pid, sizeof(pid), "%zu", i);
		prom_sample(b, "gpuspy_test_process_info", l, 2, 1);
	}
}

static void test_bad_names(void)
{
	struct prom_buf b = {0};

	for (size_t i = 0; i < ARRAY_SIZE(bad_names); i++) {
		char what[32], want[256];

		prom_buf_reset(&b);
		prom_sample(&b, "m", (struct prom_label[]){{"comm", bad_names[i].comm}}, 1, 1);
		snprintf(want, sizeof(want), "m{comm=\"%s\"} 1\n", bad_names[i].label);
		snprintf(what, sizeof(what), "bad name %zu", i);
		expect_text(what, &b, want);
	}
	/* HELP text is escaped the same way, quotes aside */
	prom_buf_reset(&b);
	prom_family(&b, "m", "gauge", "\x1b\xc3\"");
	expect_text("bad help", &b, "# HELP m \\\\x1b\\\\xc3\"\n# TYPE m gauge\n");
	prom_buf_free(&b);
}

static void test_values(void)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
	    {0, "m 0\n"},
	    {-0.0, "m 0\n"},
	    {1, "m 1\n"},
	    {-3, "m -3\n"},
	    {12345678901.0, "m 12345678901\n"},
	    {9007199254740992.0, "m 9007199254740992\n"},
	    {0x1p63 - 1024, "m 9223372036854774784\n"},
	    {-0x1p63 + 1024, "m -9223372036854774784\n"},
	    {0x1p63, "m 9.223372036854776e+18\n"},
	    {-0x1p63, "m -9.223372036854776e+18\n"},
	    {1e20, "m 1e+20\n"},
	    {1e300, "m 1e+300\n"},
	    {0.1, "m 0.1\n"},
	    {0.1 + 0.2, "m 0.30000000000000004\n"},
	    {1.0 / 3, "m 0.3333333333333333\n"},
	    {123.456, "m 123.456\n"},
	    {-2.5, "m -2.5\n"},
	    {1.5e-7, "m 1.5e-07\n"},
	    {NAN, "m NaN\n"},
	    {INFINITY, "m +Inf\n"},
	    {-INFINITY, "m -Inf\n"},
	};
	struct prom_buf b = {0};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char what[64];

		prom_buf_reset(&b);
		prom_sample(&b, "m", NULL, 0, cases[i].v);
		snprintf(what, sizeof(what), "value %.17g", cases[i].v);
		expect_text(what, &b, cases[i].text);
	}
	prom_buf_free(&b);
}

static void test_labels(void)
{
	static const struct prom_label labels[] = {{"a", NULL}, {"b", "x\\\"\n"}};
	struct prom_buf b = {0};

	prom_sample(&b, "m", labels, 2, 7);
	expect_text("NULL value, all escapes in one value", &b, "m{a=\"\",b=\"x\\\\\\\"\\n\"} 7\n");
	prom_buf_reset(&b);
	prom_family(&b, "m", "gauge", NULL);
	expect_text("family without help", &b, "# TYPE m gauge\n");
	prom_buf_reset(&b);
	prom_family(&b, "m", "gauge", "quotes \"stay\"");
	expect_text("help keeps quotes", &b, "# HELP m quotes \"stay\"\n# TYPE m gauge\n");
	prom_buf_free(&b);
}

/* Many samples: the buffer grows past its first allocation and keeps every line. */
static void test_growth(void)
{
	struct prom_buf b = {0};
	char want[64];
	size_t lines = 0;

	for (int i = 0; i < 20000; i++)
		prom_sample(&b, "gpuspy_test_total", (struct prom_label[]){{"i", "x"}}, 1, i);
	for (size_t i = 0; i < b.len; i++)
		lines += b.data[i] == '\n';
	snprintf(want, sizeof(want), "gpuspy_test_total{i=\"x\"} 19999\n");
	check("growth: 20000 lines", !b.oom && lines == 20000 && b.len < b.cap);
	check("growth: last line",
	      b.len > strlen(want) && !strcmp(b.data + b.len - strlen(want), want));
	prom_buf_free(&b);
}

static void test_oom_sticky(void)
{
	struct prom_buf b = {0};
	size_t len;

	prom_sample(&b, "m", NULL, 0, 1);
	len = b.len;
	b.oom = true; /* as a failed realloc leaves it */
	prom_family(&b, "n", "gauge", "h");
	prom_sample(&b, "n", NULL, 0, 2);
	check("oom: later calls do nothing", b.len == len && !strcmp(b.data, "m 1\n"));
	prom_buf_reset(&b);
	prom_sample(&b, "m", NULL, 0, 3);
	expect_text("oom: reset clears it", &b, "m 3\n");
	prom_buf_free(&b);
}

static void test_names(void)
{
	static const char *const valid[] = {"a", "_", ":", "a:b_c9", "gpuspy_x_total", "A_Z"};
	static const char *const invalid[] = {"", "9a", "a-b", "a b", "a.b", "\xc3\xa9", "a\n"};

	for (size_t i = 0; i < ARRAY_SIZE(valid); i++)
		check(valid[i], prom_valid_name(valid[i]));
	for (size_t i = 0; i < ARRAY_SIZE(invalid); i++)
		check(invalid[i], !prom_valid_name(invalid[i]));
	check("NULL name", !prom_valid_name(NULL));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--emit")) {
		struct prom_buf b = {0};
		int rc;

		build_families(&b);
		rc = b.oom || fwrite(b.data, 1, b.len, stdout) != b.len;
		prom_buf_free(&b);
		return rc;
	}
	/* tests/names.bats has promtool check what bad names become */
	if (argc == 2 && !strcmp(argv[1], "--emit-bad-names")) {
		struct prom_buf b = {0};
		int rc;

		build_bad_names(&b);
		rc = b.oom || fwrite(b.data, 1, b.len, stdout) != b.len;
		prom_buf_free(&b);
		return rc;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: prom_text_test [--emit|--emit-bad-names]\n");
		return 2;
	}
	test_families();
	test_values();
	test_labels();
	test_growth();
	test_oom_sticky();
	test_names();
	test_bad_names();
	printf("prom_text: %d failed\n", failed);
	return failed ? 1 : 0;
}
