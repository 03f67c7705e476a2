/* test_line.c - adac_line (dac/base/line.c): numbers and addresses as printf would write them, a
 * line that outgrows the caller's buffer moves to the heap with what it held, and a write empties
 * it; JSON strings are escaped as jansson escapes them, whatever bytes surround an escape. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "base/error.h"
#include "base/line.h"
#include "base/output.h"

struct sink {
	char text[8192];
	size_t len;
};

static void sink_write(void *ctx, const char *text, size_t len)
{
	struct sink *s = ctx;
	if (s->len + len < sizeof s->text) {
		memcpy(s->text + s->len, text, len);
		s->len += len;
		s->text[s->len] = 0;
	}
}

int main(void)
{
	struct sink s = {0};
	struct adac_out out = {.write = sink_write, .ctx = &s};
	char buf[16];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	adac_line_put(&b, "#");
	adac_line_u64(&b, 0);
	adac_line_put(&b, " ");
	adac_line_u64(&b, UINT64_MAX);
	adac_line_put(&b, " ");
	adac_line_i64(&b, INT64_MIN);
	adac_line_put(&b, " ");
	adac_line_i64(&b, -7);
	adac_line_put(&b, " ");
	adac_line_addr(&b, 0x7f9a00b69680ull);
	adac_line_put(&b, " ");
	adac_line_addr(&b, 0);
	adac_line_fmt(&b, " [%s %d]", "state", 2);
	CHECK(!b.borrowed && !b.nomem);   /* grown past the 16 bytes of buf */
	adac_line_write(&b, &out);
	CHECK(b.len == 0);
	char want[256];
	snprintf(want, sizeof want, "#0 %llu %lld -7 0x%016llx 0x%016llx [state 2]", (unsigned long long)UINT64_MAX,
	         (long long)INT64_MIN, 0x7f9a00b69680ull, 0ull);
	CHECK_EQ_STR(s.text, want);
	adac_line_free(&b);

	/* A line that fits stays in the caller's buffer. */
	s.len = 0;
	b = adac_line_on(buf, sizeof buf);
	adac_line_put(&b, "  async #");
	adac_line_u64(&b, 12);
	adac_line_put(&b, ": ");
	CHECK(b.borrowed && b.p == buf);
	adac_line_write(&b, &out);
	adac_line_free(&b);
	CHECK_EQ_STR(s.text, "  async #12: ");

	/* JSON strings as jansson writes them; a byte that starts no UTF-8 sequence as U+FFFD. */
	s.len = 0;
	b = (struct adac_line){0};
	adac_line_json_str(&b, "q\"b\\\b\f\n\r\t\x01\x1f\x7f \xc3\xa9 \xff \xe2\x82");
	adac_line_put(&b, " ");
	adac_line_json_str(&b, NULL);
	adac_line_write(&b, &out);
	adac_line_free(&b);
	CHECK_EQ_STR(s.text, "\"q\\\"b\\\\\\b\\f\\n\\r\\t\\u0001\\u001F\x7f \xc3\xa9 \xEF\xBF\xBD \xEF\xBF\xBD\xEF\xBF\xBD\" null");
	/* Every byte that needs care (an escape, a quote, UTF-8 whole or cut) at every position of plain
	 * text of every length up to 40, against jansson's json_dumps. */
	static const char *const odd[] = {"\"", "\\", "\n", "\x01", "\x1f", "\xc3\xa9", "\xff", "\xe2\x82", "\x7f", " ", "~"};
	int mismatches = 0;
	for (size_t k = 0; k < sizeof odd / sizeof *odd; k++) {
		for (size_t len = 0; len <= 40; len++) {
			for (size_t at = 0; at <= len; at++) {
				char text[64];
				size_t n = 0;
				for (size_t i = 0; i < len; i++) {
					if (i == at)
						for (const char *o = odd[k]; *o; o++)
							text[n++] = *o;
					text[n++] = (char)('a' + i % 26);
				}
				text[n] = 0;
				struct adac_line l = {0};
				adac_line_json_strn(&l, text, n);
				adac_line_put_n(&l, "", 1);
				/* jansson takes only UTF-8: the reference is made from the text adac_line_utf8 makes. */
				struct adac_line u = {0};
				adac_line_utf8(&u, text, n);
				json_t *v = json_stringn(u.p ? u.p : "", u.len);
				char *want = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
				if (!l.p || !want || strcmp(l.p, want)) {
					if (!mismatches++)
						fprintf(stderr, "line: %s at %zu of %zu: %s, jansson: %s\n", odd[k], at, len, l.p ? l.p : "(none)",
						        want ? want : "(none)");
				}
				free(want);
				json_decref(v);
				adac_line_free(&l);
				adac_line_free(&u);
			}
		}
	}
	CHECK_EQ_U64(mismatches, 0);
	CHECK(adac_utf8_seq("\xf0\x9f\x98\x80", 4) == 4 && adac_utf8_seq("\xf0\x9f\x98", 3) == 0 &&
	      adac_utf8_seq("\xe0\x80\xaf", 3) == 0 && adac_utf8_seq("a", 1) == 1 && adac_utf8_seq("", 0) == 0);
	/* An error message is one line of text whatever it quotes: control characters and bytes that
	 * start no UTF-8 sequence (here a stray 0xff and a cut euro sign) become '?'; UTF-8 stays. */
	struct adac_error err = {0};
	adac_fail(&err, ADAC_E_CORRUPT, 0, "%s: bad", "a\nb\xff\xc3\xa9" "c\x7f\xe2\x82");
	CHECK_EQ_STR(err.msg, "a?b?\xc3\xa9" "c???: bad");
	adac_error_wrap(&err, "%s: ", "x\tz\xc0");
	CHECK_EQ_STR(err.msg, "x?z?: a?b?\xc3\xa9" "c???: bad");
	return check_report("line");
}
