/* chain_view.c - async frames, chains and what they await, as text and JSON. */
#include "view/chain_view.h"

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async/task.h"
#include "base/json.h"
#include "base/line.h"
#include "base/output.h"
#include "view/locals_view.h"

/* The address shown for a frame: where it will resume. */
static uint64_t frame_ip(const struct adac_async_frame *f)
{
	return f->cont.diagnostic_ip ? f->cont.diagnostic_ip : f->cont.resume;
}

/* What follows "<indent>async #N: " on a frame's lines, into buf: its length, or -1 when it does
 * not fit. */
static int frame_tail(const struct adac_async_frame *f, const char *indent, char *buf, size_t size)
{
	size_t n = 0;
	int k;
#define TAIL(...)                                                   \
	do {                                                            \
		k = snprintf(buf + n, size - n, __VA_ARGS__);               \
		if (k < 0 || (size_t)k >= size - n)                         \
			return -1;                                              \
		n += (size_t)k;                                             \
	} while (0)
	TAIL("0x%016llx", (unsigned long long)frame_ip(f));
	if (f->method) {
		TAIL(" %s`%s", f->module ? f->module : "?", f->method);
		if (f->has_code)
			TAIL(" + 0x%llx", (unsigned long long)f->code.offset);
	} else {
		TAIL(" <unknown method>");
	}
	char where[ADAC_FRAME_WHERE_MAX];
	TAIL("%s [state %d]\n", adac_frame_where(f->has_source, f->file, f->line, f->has_il, f->il_offset, where,
	                                         sizeof where),
	     f->cont.state);
	if (f->note[0])
		TAIL("%s    note: %s\n", indent, f->note);
#undef TAIL
	return (int)n;
}

void adac_async_frame_print(const struct adac_async_frame *f, size_t index, const char *indent, struct adac_out *out)
{
	char buf[4096];
	int n = frame_tail(f, indent, buf, sizeof buf);
	if (n >= 0) {
		adac_print(out, "%sasync #%zu: ", indent, index);
		out->write(out->ctx, buf, (size_t)n);
		return;
	}
	adac_print(out, "%sasync #%zu: 0x%016llx", indent, index, (unsigned long long)frame_ip(f));
	if (f->method) {
		adac_print(out, " %s`%s", f->module ? f->module : "?", f->method);
		if (f->has_code)
			adac_print(out, " + 0x%llx", (unsigned long long)f->code.offset);
	} else {
		adac_print(out, " <unknown method>");
	}
	char where[ADAC_FRAME_WHERE_MAX];
	adac_print(out, "%s [state %d]\n", adac_frame_where(f->has_source, f->file, f->line, f->has_il, f->il_offset, where,
	                                                    sizeof where),
	           f->cont.state);
	if (f->note[0])
		adac_print(out, "%s    note: %s\n", indent, f->note);
}

/* ---- frame texts per suspension point ---- */

struct text_slot {
	uint64_t dip, resume, method;
	int32_t state;
	bool ri, used;
	char *text;
	size_t len;
};

struct adac_frame_texts {
	struct text_slot *slots;
	size_t cap, used;
};

struct adac_frame_texts *adac_frame_texts_new(void) { return calloc(1, sizeof(struct adac_frame_texts)); }

void adac_frame_texts_free(struct adac_frame_texts *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].text);
	free(m->slots);
	free(m);
}

static size_t text_hash(uint64_t dip, uint64_t resume, int32_t state, uint64_t method)
{
	uint64_t h = dip * 0x9E3779B97F4A7C15ull ^ (resume + 0x632BE59BD9B4E019ull) * 0xC2B2AE3D27D4EB4Full;
	h ^= ((uint64_t)(uint32_t)state + method) * 0x165667B19E3779F9ull;
	return (size_t)(h ^ h >> 29);
}

/* The slot of a frame's key: its text (used) or where it goes; NULL when the table cannot grow. */
static struct text_slot *text_slot(struct adac_frame_texts *m, const struct adac_async_frame *f)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct text_slot *t = calloc(cap, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			struct text_slot *o = &m->slots[i];
			if (!o->used)
				continue;
			size_t j = text_hash(o->dip, o->resume, o->state, o->method) & (cap - 1);
			while (t[j].used)
				j = (j + 1) & (cap - 1);
			t[j] = *o;
		}
		free(m->slots);
		m->slots = t;
		m->cap = cap;
	}
	const struct adac_continuation *c = &f->cont;
	uint64_t method = (uintptr_t)f->method;
	bool ri = c->resume_info != 0;
	size_t j = text_hash(c->diagnostic_ip, c->resume, c->state, method) & (m->cap - 1);
	for (; m->slots[j].used; j = (j + 1) & (m->cap - 1)) {
		struct text_slot *e = &m->slots[j];
		if (e->dip == c->diagnostic_ip && e->resume == c->resume && e->state == c->state && e->ri == ri &&
		    e->method == method)
			break;
	}
	return &m->slots[j];
}

/* Prints a frame through texts: its text is what the frame cache's key (DiagnosticIP, Resume,
 * State, ResumeInfo) resolves to, with the method's name (an instantiation of shared code differs
 * per continuation: those, and names the frame holds itself, are not remembered). */
/* "  async #<index>: " (without printf: every frame of a listing starts with it). */
static void print_index(size_t index, struct adac_out *out)
{
	char buf[48];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	adac_line_put(&b, "  async #");
	adac_line_u64(&b, index);
	adac_line_put(&b, ": ");
	adac_line_write(&b, out);
	adac_line_free(&b);
}

static void print_frame(const struct adac_async_frame *f, size_t index, struct adac_out *out,
                        struct adac_frame_texts *texts)
{
	struct text_slot *e = NULL;
	if (texts && !f->shared_code && f->method != f->name_buf && (e = text_slot(texts, f)) && e->used) {
		print_index(index, out);
		out->write(out->ctx, e->text, e->len);
		return;
	}
	char buf[4096];
	int n = e ? frame_tail(f, "  ", buf, sizeof buf) : -1;
	if (n < 0 || !(e->text = malloc((size_t)n))) {
		adac_async_frame_print(f, index, "  ", out);
		return;
	}
	memcpy(e->text, buf, (size_t)n);
	e->len = (size_t)n;
	e->dip = f->cont.diagnostic_ip;
	e->resume = f->cont.resume;
	e->state = f->cont.state;
	e->ri = f->cont.resume_info != 0;
	e->method = (uintptr_t)f->method;
	e->used = true;
	texts->used++;
	print_index(index, out);
	out->write(out->ctx, buf, (size_t)n);
}

/* "<address> <type> [(token <n>)] [<task status>] [(<leaf>)]" onto b. */
static void awaiting_put(const struct adac_awaiting *a, struct adac_line *b)
{
	adac_line_addr(b, a->object);
	adac_line_put(b, " ");
	adac_line_put(b, a->type ? a->type : "?");
	if (a->has_token) {
		adac_line_put(b, " (token ");
		adac_line_i64(b, a->token);
		adac_line_put(b, ")");
	}
	if (a->has_state_flags) {
		adac_line_put(b, " [");
		adac_line_put(b, adac_task_status(a->state_flags));
		adac_line_put(b, "]");
	}
	if (a->leaf[0]) {
		adac_line_put(b, " (");
		adac_line_put(b, a->leaf);
		adac_line_put(b, ")");
	}
}

void adac_awaiting_print(const struct adac_awaiting *a, struct adac_out *out)
{
	char buf[512];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	adac_line_put(&b, "  awaiting: ");
	awaiting_put(a, &b);
	adac_line_put(&b, "\n");
	adac_line_write(&b, out);
	adac_line_free(&b);
}

void adac_awaiting_fprint(const struct adac_awaiting *a, FILE *f)
{
	char buf[512];
	struct adac_line b = adac_line_on(buf, sizeof buf);
	awaiting_put(a, &b);
	if (!b.nomem)
		fwrite(b.p, 1, b.len, f);
	adac_line_free(&b);
}

json_t *adac_awaiting_json(const struct adac_awaiting *a)
{
	json_t *j = json_object();
	json_object_set_new(j, "object", adac_json_addr(a->object));
	json_object_set_new(j, "type", a->type ? adac_json_text(a->type) : json_null());
	json_object_set_new(j, "field", a->via ? adac_json_text(a->via) : json_null());
	if (a->has_token)
		json_object_set_new(j, "token", json_integer(a->token));
	if (a->has_state_flags) {
		json_object_set_new(j, "status", adac_json_text(adac_task_status(a->state_flags)));
		json_object_set_new(j, "state_flags", json_integer(a->state_flags));
	}
	if (a->leaf[0])
		json_object_set_new(j, "what", adac_json_text(a->leaf));
	return j;
}

size_t adac_chain_view_print(struct adac_runtime *rt, const struct adac_resolved_chain *v, struct adac_out *out,
                             size_t first_index, size_t limit, unsigned flags)
{
	return adac_chain_view_print_ex(rt, v, out, first_index, limit, flags, NULL);
}

size_t adac_chain_view_print_ex(struct adac_runtime *rt, const struct adac_resolved_chain *v, struct adac_out *out,
                                size_t first_index, size_t limit, unsigned flags, struct adac_frame_texts *texts)
{
	if (v->has_awaiting)
		adac_awaiting_print(&v->awaiting, out);
	size_t printed = 0;
	for (size_t i = 0; i < v->chain.count; i++) {
		if (!adac_async_frame_shown(&v->frames[i]))
			continue;
		if (limit && printed >= limit) {
			adac_print(out, "  (shown max number of frames (%zu), use -c 0 for all)\n", limit);
			return printed;
		}
		print_frame(&v->frames[i], first_index + printed, out, texts);
		if (flags & ADAC_VIEW_LOCALS) {
			struct adac_error err = {0};
			if (adac_frame_locals_print(rt, &v->frames[i], NULL, "      ", flags & ADAC_VIEW_INTERNALS, out, &err))
				adac_print(out, "      error: %s\n", err.msg);
		}
		printed++;
	}
	switch (v->chain.end) {
	case ADAC_CHAIN_COMPLETE:
		break;
	case ADAC_CHAIN_TRUNCATED:
		adac_print(out, "  (stopped at the chain depth limit; Continuation 0x%016llx follows)\n",
		           (unsigned long long)v->chain.end_addr);
		break;
	case ADAC_CHAIN_BROKEN:
	case ADAC_CHAIN_CYCLE:
		adac_print(out, "  async #%zu: error: %s\n", first_index + printed, v->chain.end_err.msg);
		break;
	}
	return printed;
}

static const char *end_name(enum adac_chain_end e)
{
	switch (e) {
	case ADAC_CHAIN_COMPLETE: return "complete";
	case ADAC_CHAIN_TRUNCATED: return "truncated";
	case ADAC_CHAIN_BROKEN: return "broken";
	case ADAC_CHAIN_CYCLE: return "cycle";
	}
	return "?";
}

json_t *adac_async_frame_json(const struct adac_async_frame *f, size_t index)
{
	json_t *j = json_object();
	json_object_set_new(j, "index", json_integer((json_int_t)index));
	json_object_set_new(j, "kind", json_string("async"));
	json_object_set_new(j, "continuation", adac_json_addr(f->cont.addr));
	json_object_set_new(j, "method_table", adac_json_addr(f->cont.mt));
	json_object_set_new(j, "ip", adac_json_addr(frame_ip(f)));
	json_object_set_new(j, "diagnostic_ip", f->cont.diagnostic_ip ? adac_json_addr(f->cont.diagnostic_ip) : json_null());
	json_object_set_new(j, "resume", f->cont.resume ? adac_json_addr(f->cont.resume) : json_null());
	json_object_set_new(j, "state", json_integer(f->cont.state));
	json_object_set_new(j, "method_desc", f->method_desc ? adac_json_addr(f->method_desc) : json_null());
	json_object_set_new(j, "method", f->method ? adac_json_text(f->method) : json_null());
	json_object_set_new(j, "canonical_method", f->canonical_method ? adac_json_text(f->canonical_method) : json_null());
	json_object_set_new(j, "module", f->module ? adac_json_text(f->module) : json_null());
	json_object_set_new(j, "token", f->token ? json_integer(f->token) : json_null());
	json_object_set_new(j, "code_start", f->has_code ? adac_json_addr(f->code.code_start) : json_null());
	json_object_set_new(j, "offset", f->has_code ? json_integer((json_int_t)f->code.offset) : json_null());
	json_object_set_new(j, "il_offset", f->has_il ? json_integer(f->il_offset) : json_null());
	json_object_set_new(j, "file", f->has_source ? adac_json_text(f->file) : json_null());
	json_object_set_new(j, "line", f->has_source ? json_integer(f->line) : json_null());
	json_object_set_new(j, "resume_method_desc", f->resume_md ? adac_json_addr(f->resume_md) : json_null());
	json_object_set_new(j, "note", f->note[0] ? adac_json_text(f->note) : json_null());
	return j;
}

size_t adac_chain_frames_json(struct adac_runtime *rt, const struct adac_resolved_chain *v, size_t limit, unsigned flags,
                              size_t first, json_t *frames, json_t *ips)
{
	size_t printed = 0;
	for (size_t i = 0; i < v->chain.count; i++) {
		const struct adac_async_frame *f = &v->frames[i];
		if (!adac_async_frame_shown(f) || (limit && printed >= limit))
			continue;
		if (ips)
			json_array_append_new(ips, adac_json_addr(frame_ip(f)));
		json_t *j = adac_async_frame_json(f, first + printed);
		if (flags & ADAC_VIEW_LOCALS) {
			struct adac_error err = {0};
			json_t *locals = adac_frame_locals_json(rt, f, &err);
			json_object_set_new(j, "locals", locals ? locals : json_null());
			if (!locals)
				json_object_set_new(j, "locals_error", adac_json_text(err.msg));
		}
		json_array_append_new(frames, j);
		printed++;
	}
	return printed;
}

uint64_t adac_chain_view_head(const struct adac_resolved_chain *v)
{
	return v->chain.count ? v->chain.links[0].addr : v->chain.end_addr;
}

void adac_chain_end_json(const struct adac_resolved_chain *v, json_t *j)
{
	json_object_set_new(j, "end", adac_json_text(end_name(v->chain.end)));
	json_object_set_new(j, "error", v->chain.end_err.code ? adac_json_text(v->chain.end_err.msg) : json_null());
}

json_t *adac_chain_view_json(struct adac_runtime *rt, const struct adac_resolved_chain *v, size_t limit, unsigned flags)
{
	json_t *c = json_object();
	json_object_set_new(c, "head", adac_json_addr(adac_chain_view_head(v)));
	json_object_set_new(c, "task", v->task ? adac_json_addr(v->task) : json_null());
	json_object_set_new(c, "awaiting", v->has_awaiting ? adac_awaiting_json(&v->awaiting) : json_null());
	json_t *ips = json_array(), *frames = json_array();
	adac_chain_frames_json(rt, v, limit, flags, 0, frames, ips);
	json_object_set_new(c, "ips", ips);
	json_object_set_new(c, "frames", frames);
	adac_chain_end_json(v, c);
	return c;
}

const char *adac_frame_where(bool has_source, const char *file, uint32_t line, bool has_il, uint32_t il_offset,
                             char *buf, size_t size)
{
	if (has_source) {
		const char *slash = strrchr(file, '/');
		snprintf(buf, size, " at %s:%u", slash ? slash + 1 : file, line);
	} else if (has_il) {
		snprintf(buf, size, " [IL_%04x]", il_offset);
	} else if (size) {
		buf[0] = '\0';
	}
	return buf;
}

const char *adac_frame_label(const char *module, const char *method, bool has_source, const char *file, uint32_t line,
                             bool has_il, uint32_t il_offset, const char *tag, char *buf, size_t size)
{
	char where[ADAC_FRAME_WHERE_MAX];
	adac_frame_where(has_source, file, line, has_il, il_offset, where, sizeof where);
	if (method)
		snprintf(buf, size, "%s`%s%s [%s]", module ? module : "?", method, where, tag);
	else
		snprintf(buf, size, "<unknown method>%s [%s]", where, tag);
	return buf;
}

const char *adac_async_frame_label(const struct adac_async_frame *f, char *buf, size_t size)
{
	char tag[32];
	snprintf(tag, sizeof tag, "state %d", f->cont.state);
	return adac_frame_label(f->module, f->method, f->has_source, f->file, f->line, f->has_il, f->il_offset, tag, buf,
	                        size);
}
