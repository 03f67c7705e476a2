/* json.c - JSON addresses and printing. */
#include "base/json.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"

json_t *adac_json_addr(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)v);
	return json_string(buf);
}

int adac_json_print(struct adac_out *out, json_t *value, struct adac_error *err)
{
	char *text = value ? json_dumps(value, JSON_INDENT(2)) : NULL;
	json_decref(value);
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	adac_print(out, "%s\n", text);
	free(text);
	return 0;
}

int adac_json_print_document(struct adac_out *out, const char *command, json_t *payload, struct adac_error *err)
{
	json_t *doc = payload ? json_object() : NULL;
	if (doc) {
		json_object_set_new(doc, "schema", json_integer(ADAC_JSON_SCHEMA));
		json_object_set_new(doc, command, payload);
	} else {
		json_decref(payload);
	}
	return adac_json_print(out, doc, err);
}

void adac_json_document_open(struct adac_out *out, const char *command)
{
	adac_print(out, "{\n  \"schema\": %d,\n  \"%s\": ", ADAC_JSON_SCHEMA, command);
}

int adac_json_print_indented(struct adac_out *out, const char *before, json_t *value, unsigned indent,
                             const char *after, struct adac_error *err)
{
	char *text = json_dumps(value, JSON_INDENT(2));
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	size_t len = strlen(text), lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	size_t nb = strlen(before), na = strlen(after);
	char *buf = malloc(nb + len + lines * indent + na + 1);
	if (!buf) {
		free(text);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	}
	char *w = buf;
	memcpy(w, before, nb);
	w += nb;
	memset(w, ' ', indent);
	w += indent;
	for (size_t i = 0; i < len; i++) {
		*w++ = text[i];
		if (text[i] == '\n') {
			memset(w, ' ', indent);
			w += indent;
		}
	}
	memcpy(w, after, na);
	w += na;
	out->write(out->ctx, buf, (size_t)(w - buf));
	free(buf);
	free(text);
	return 0;
}

int adac_json_print_members(struct adac_out *out, json_t *value, unsigned indent, struct adac_error *err)
{
	char *text = json_dumps(value, JSON_INDENT(2));
	if (!text)
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	/* "{\n  a,\n  b\n}": the lines between the first and the last. */
	char *first = strchr(text, '\n'), *last = strrchr(text, '\n');
	const char *end = first && last > first ? last : first;
	size_t lines = 0;
	for (const char *p = first; p && (p = memchr(p, '\n', (size_t)(end - p))); p++)
		lines++;
	char *buf = malloc((size_t)(end - first) + lines * indent + 1);
	if (!buf) {
		free(text);
		return adac_fail(err, ADAC_E_NOMEM, 0, "out of memory formatting JSON");
	}
	/* Line by line (a stack's JSON is thousands of bytes: ps --json prints a million of them). */
	char *w = buf;
	for (const char *p = first; p && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		memcpy(w, p, n);
		w += n;
		p += n;
		if (nl) {
			memset(w, ' ', indent);
			w += indent;
		}
	}
	out->write(out->ctx, buf, (size_t)(w - buf));
	free(buf);
	free(text);
	return 0;
}
