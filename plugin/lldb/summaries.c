/* summaries.c - the text of LLDB summaries for managed values (shim_symbols.cpp reads the values). */
#include "summaries.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *adac_lldb_utf16_literal(const uint16_t *units, size_t n, int truncated)
{
	/* At most 6 bytes per unit ("\\u" + 4 hex digits, or 3 UTF-8 bytes; a pair gives 4), quotes,
	 * "...", NUL. */
	char *s = malloc(n * 6 + 8);
	if (!s)
		return NULL;
	size_t o = 0;
	s[o++] = '"';
	for (size_t i = 0; i < n; i++) {
		uint32_t c = units[i];
		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && units[i + 1] >= 0xdc00 && units[i + 1] < 0xe000)
			c = 0x10000 + ((c - 0xd800) << 10) + (units[++i] - 0xdc00);
		if (c == '"' || c == '\\') {
			s[o++] = '\\';
			s[o++] = (char)c;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			s[o++] = '\\';
			s[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		} else if (c < 0x20 || (c >= 0xd800 && c < 0xe000)) {
			o += (size_t)sprintf(s + o, "\\u%04x", c); /* control characters, lone surrogates */
		} else if (c < 0x80) {
			s[o++] = (char)c;
		} else if (c < 0x800) {
			s[o++] = (char)(0xc0 | c >> 6);
			s[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			s[o++] = (char)(0xe0 | c >> 12);
			s[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			s[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			s[o++] = (char)(0xf0 | c >> 18);
			s[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
			s[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			s[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	s[o++] = '"';
	if (truncated) {
		memcpy(s + o, "...", 3);
		o += 3;
	}
	s[o] = '\0';
	return s;
}
